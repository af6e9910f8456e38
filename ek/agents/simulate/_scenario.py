"""The scenario a simulated user plays: who they are, what they know, what they must get done.

A :class:`Scenario` is Layer A (what should happen), carried by the task
(``TaskSpec.scenario``). Its parts are plain data so a suite's fingerprint covers them and the
attribution checks (:func:`~ek.agents.simulate.check_simulator`) can hold the simulator to them:

* ``persona`` and ``instructions``: what an LLM-backed simulator is told to be and do;
* ``facts``: what the user knows (``{name: value}``); ``disclose`` names the facts the user may
  say (``None``: all of them);
* ``patterns``: what a value of each kind of fact looks like (``{name: regex}``), so a value the
  simulator says that the scenario did not give it (an invented order id) is found;
* ``withheld``: text the user must never say (the answer the agent must find);
* ``goals``: the goal items the user must state before stopping (``{item: phrases}``; an item
  is stated when a user turn contains one of its phrases, compared casefolded);
* ``script``: the user's turns in order, for :class:`~ek.agents.simulate.ScriptedSimulator`;
* the stop condition: the simulator ends the conversation by saying ``stop`` (or by returning
  a reply marked as stopping), after at most ``max_turns`` user turns of at most ``max_chars``
  characters each.

Example:
    >>> s = Scenario(
    ...     persona="Ana, a customer",
    ...     facts={"order_id": "#W1001", "email": "ana@example.com"},
    ...     patterns={"order_id": r"#W\\d{4}"},
    ...     goals={"refund": ["refund"]},
    ...     disclose=["order_id"],
    ... )
    >>> s.may_disclose("email"), s.max_turns
    (False, 10)
    >>> Scenario.from_dict(s.to_dict()) == s
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from ek._validate import check_keys, check_mapping, positive_int, short_repr

__all__ = ["STOP", "Scenario", "as_scenario"]

#: The default stop marker: a user turn containing it ends the conversation (as in tau-bench).
STOP = "###STOP###"


def _text(owner: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{owner} must be a str, got {type(value).__name__}: {short_repr(value)}")
    return value


def _texts(owner: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{owner} must be a list of str, got {short_repr(value)}")
    return tuple(_text(f"{owner}[{i}]", v) for i, v in enumerate(value))


def _str_map(owner: str, value: Any) -> dict[str, str]:
    m = check_mapping(owner, value)
    return {k: _text(f"{owner}[{k!r}]", v) for k, v in m.items()}


def _goals(value: Any) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for item, phrases in check_mapping("Scenario.goals", value).items():
        said = (
            (phrases,) if isinstance(phrases, str) else _texts(f"Scenario.goals[{item!r}]", phrases)
        )
        if not said or not all(p.strip() for p in said):
            raise ValueError(
                f"Scenario.goals[{item!r}] must list at least one non-empty phrase, got {short_repr(phrases)}"
            )
        out[item] = said
    return out


def _patterns(value: Any) -> dict[str, str]:
    pats = _str_map("Scenario.patterns", value)
    for name, pat in pats.items():
        try:
            re.compile(pat)
        except re.error as e:
            raise ValueError(
                f"Scenario.patterns[{name!r}] is not a regular expression ({e}): {pat!r}"
            ) from None
    return pats


@dataclass(frozen=True)
class Scenario:
    """What a simulated user is, knows, may say and must get done (see the module docstring).

    Args:
        persona: Who the user is.
        instructions: What the user wants, in the user's words (an LLM simulator's brief).
        facts: ``{name: value}``: what the user knows.
        goals: ``{item: phrase or phrases}``: what the user must state before stopping.
        disclose: The names of the facts the user may say (``None``: every fact).
        patterns: ``{fact name: regex}``: what a value of that kind looks like.
        withheld: Text the user must never say (e.g. the answer the agent must find).
        script: The user's turns, in order (for the scripted simulator).
        stop: The stop marker (default :data:`STOP`).
        max_turns: The most user turns (>= 1).
        max_chars: The longest user turn, in characters (>= 1).

    Raises:
        TypeError, ValueError: a field of the wrong shape (named), a fact named in ``disclose``
            that is not in ``facts``, a pattern that is not a regular expression.
    """

    persona: str = ""
    instructions: str = ""
    facts: Mapping[str, str] = field(default_factory=dict)
    goals: Mapping[str, Sequence[str]] = field(default_factory=dict)
    disclose: Sequence[str] | None = None
    patterns: Mapping[str, str] = field(default_factory=dict)
    withheld: Sequence[str] = ()
    script: Sequence[str] = ()
    stop: str = STOP
    max_turns: int = 10
    max_chars: int = 2000

    def __post_init__(self) -> None:
        _set = object.__setattr__
        _text("Scenario.persona", self.persona)
        _text("Scenario.instructions", self.instructions)
        _set(self, "facts", _str_map("Scenario.facts", self.facts))
        _set(self, "goals", _goals(self.goals))
        if self.disclose is not None:
            names = _texts("Scenario.disclose", self.disclose)
            unknown = sorted(set(names) - set(self.facts))
            if unknown:
                raise ValueError(
                    f"Scenario.disclose names facts the scenario does not give: {unknown}"
                )
            _set(self, "disclose", names)
        _set(self, "patterns", _patterns(self.patterns))
        _set(self, "withheld", _texts("Scenario.withheld", self.withheld))
        _set(self, "script", _texts("Scenario.script", self.script))
        if not _text("Scenario.stop", self.stop).strip():
            raise ValueError("Scenario.stop must be a non-empty marker, got ''")
        _set(self, "max_turns", positive_int("Scenario.max_turns", self.max_turns))
        _set(self, "max_chars", positive_int("Scenario.max_chars", self.max_chars))

    def may_disclose(self, name: str) -> bool:
        """The user may say the fact ``name``."""
        return name in self.facts and (self.disclose is None or name in self.disclose)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (defaults omitted)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v == ({} if f.default is MISSING else f.default):
                continue
            if isinstance(v, Mapping):
                v = {k: list(x) if isinstance(x, tuple) else x for k, x in v.items()}
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """Inverse of :meth:`to_dict`; unknown keys raise."""
        check_keys("Scenario", data, {f.name for f in fields(cls)})
        return cls(**dict(data))


def as_scenario(owner: str, value: Any) -> Scenario:
    """``value`` as a :class:`Scenario`: a Scenario as it is, a mapping read by
    :meth:`Scenario.from_dict`; anything else is a ``TypeError`` naming ``owner``.

    Example:
        >>> as_scenario("TaskSpec.scenario", {"goals": {"refund": "refund"}}).goals
        {'refund': ('refund',)}
    """
    if isinstance(value, Scenario):
        return value
    if isinstance(value, Mapping):
        return Scenario.from_dict(value)
    raise TypeError(f"{owner} must be a Scenario or its dict, got {short_repr(value)}")
