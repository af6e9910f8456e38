"""The shape every policy rule shares: a frozen, serialisable object that returns violations.

A rule is a frozen dataclass with a ``kind`` (its name in ``to_dict``), its own fields, and two
keyword fields every rule has: ``severity`` (in (0, 1]: how much one violation takes off the
episode's policy value) and ``name`` (what its violations are labelled; by default the rule
describes itself). ``check(record)`` returns a :class:`Violation` for each place the record
breaks the rule, with the step index and a one-line reason.

Example:
    >>> v = Violation("refund needs get_order", 2, "refund_order at step 2 before get_order")
    >>> v.to_dict()
    {'rule': 'refund needs get_order', 'step': 2, 'reason': 'refund_order at step 2 before get_order', 'severity': 1.0}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, MISSING, Field, dataclass, field, fields
from typing import Any

from ek._validate import check_keys, check_mapping, finite, nonempty_str, plain_json, short_repr
from ek.agents.base import Step

from ._record import Record

__all__ = ["Rule", "Violation", "call_matches"]


@dataclass(frozen=True)
class Violation:
    """One place an episode broke a rule.

    Args:
        rule: The rule's name.
        step: The index of the offending call, or ``None`` when no one call is at fault.
        reason: One line saying what happened.
        severity: The rule's severity.
    """

    rule: str
    step: int | None
    reason: str
    severity: float = 1.0

    def __post_init__(self) -> None:
        nonempty_str("Violation.rule", self.rule)
        if self.step is not None and (type(self.step) is not int or self.step < 0):
            raise TypeError(
                f"Violation.step must be an int >= 0 or None, got {short_repr(self.step)}"
            )
        nonempty_str("Violation.reason", self.reason)
        object.__setattr__(self, "severity", _severity("Violation", self.severity))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "rule": self.rule,
            "step": self.step,
            "reason": self.reason,
            "severity": self.severity,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Violation:
        """Inverse of :meth:`to_dict`."""
        check_keys("Violation", data, {"rule", "step", "reason", "severity"}, ("rule", "reason"))
        return cls(**dict(data))


def _severity(owner: str, value: Any) -> float:
    s = finite(f"{owner}.severity", value)
    if not 0.0 < s <= 1.0:
        raise ValueError(f"{owner}.severity must be in (0, 1], got {short_repr(value)}")
    return s


def call_matches(step: Step, tool: str, args: Mapping[str, Any]) -> bool:
    """True when ``step`` calls ``tool`` with (at least) the given argument values.

    Example:
        >>> call_matches(Step("send", {"to": "a", "n": 1}), "send", {"to": "a"})
        True
    """
    return step.tool == tool and all(k in step.args and step.args[k] == v for k, v in args.items())


@dataclass(frozen=True)
class Rule:
    """The base of every rule: ``severity`` and ``name`` (keyword-only), ``check``, ``to_dict``.

    Subclasses are frozen dataclasses that set ``kind`` and implement :meth:`check` and
    :meth:`default_name`; their fields must be JSON data (or tuples of it).
    """

    #: The rule's name in ``to_dict`` (a field, so a host that records a rule as a dataclass
    #: dict, as Inspect records a scorer's arguments, keeps it and the rule reads back).
    kind: str = field(default="", init=False, repr=False)
    _: KW_ONLY
    severity: float = 1.0
    name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", _severity(type(self).__name__, self.severity))
        if self.name is not None:
            nonempty_str(f"{type(self).__name__}.name", self.name)

    def default_name(self) -> str:
        """A short description of the rule (its name unless one is given)."""
        raise NotImplementedError

    def check(self, record: Record) -> tuple[Violation, ...]:
        """The violations of this rule in ``record``, in step order."""
        raise NotImplementedError

    @property
    def label(self) -> str:
        """The rule's name: ``name`` when given, else :meth:`default_name`."""
        return self.name or self.default_name()

    def violation(self, step: int | None, reason: str) -> Violation:
        """A violation of this rule at ``step``."""
        return Violation(self.label, step, reason, self.severity)

    def at_each_call(
        self, record: Record, tool: str, why: Callable[[int, Step], str | None]
    ) -> tuple[Violation, ...]:
        """A violation at every call of ``tool`` for which ``why(index, step)`` gives a reason."""
        out = []
        for i, step in enumerate(record.steps):
            reason = why(i, step) if step.tool == tool else None
            if reason:
                out.append(self.violation(i, reason))
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``kind`` and every field that is not at its default."""
        d: dict[str, Any] = {"kind": self.kind}
        for f in sorted(fields(self), key=lambda f: bool(f.kw_only)):  # severity, name last
            v = getattr(self, f.name)
            if not _is_default(f, v):
                d[f.name] = _plain(v)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rule:
        """Inverse of :meth:`to_dict` (the ``kind`` must be this rule's)."""
        names = {f.name for f in fields(cls)}
        required = tuple(f.name for f in fields(cls) if _is_required(f))
        check_keys(cls.__name__, data, names | {"kind"}, required)
        if data.get("kind", cls.kind) != cls.kind:
            raise ValueError(
                f"{cls.__name__}.from_dict: kind must be {cls.kind!r}, got {short_repr(data.get('kind'))}"
            )
        kw = {k: v for k, v in data.items() if k != "kind"}
        plain_json(f"{cls.__name__}", kw)
        return cls(**kw)


def _is_required(f: Field[Any]) -> bool:
    return f.default is MISSING and f.default_factory is MISSING


def _is_default(f: Field[Any], value: Any) -> bool:
    if f.default is not MISSING:
        return bool(value == f.default)
    if f.default_factory is not MISSING:
        return bool(value == f.default_factory())
    return False


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def json_args(owner: str, value: Any) -> dict[str, Any]:
    """Argument values a rule matches on: a str-keyed mapping of JSON data (copied)."""
    out = check_mapping(owner, value)
    plain_json(owner, out)
    return out


def tool_name(owner: str, value: Any) -> str:
    """A tool name (a non-empty str)."""
    return nonempty_str(owner, value)


def str_tuple(owner: str, value: Any) -> tuple[str, ...]:
    """A tuple of non-empty strs (from a list or tuple; a lone str is refused)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{owner} must be a list of str, got {short_repr(value)}")
    return tuple(nonempty_str(f"{owner}[]", v) for v in value)
