"""Whose fault a failure is: the agent's, the simulator's or the environment's.

The simulated user is a hidden variable of the evaluation. :func:`check_simulator` holds its
turns to the scenario with deterministic checks, one per fault kind (:data:`SIMULATOR_FAULTS`):

==================  ===========================================================================
kind                a user turn ...
==================  ===========================================================================
``disclosed``       says a fact the scenario does not give it (a value of a kind in
                    ``patterns`` that is no known fact: invented), a fact it knows but may not
                    disclose, or ``withheld`` text (the answer the agent must find)
``contradicted``    gives a value of a kind the scenario gives it (a fact named like the
                    pattern), but another value
``stopped_early``   stops the conversation before every goal item was stated
``broke_role``      speaks as the agent (``Assistant:``, ``As an AI``, offers help) or calls tools
``over_limit``      is longer than ``max_chars``, comes past ``max_turns`` or after the user
                    stopped, or keeps talking after the stop marker
==================  ===========================================================================

A value the agent said first is not the user's invention (the user may repeat it). These are
checks of what the text says, not of what it means: a fact paraphrased (``"the one from
March"``) or a goal asked in other words than its phrases is missed; the scenario's phrases
and patterns are the contract (see ``docs/conversations.md``).

:func:`attribute` gives a failed trial's :class:`Attribution`: ``"simulator"`` when a check
found a fault, else ``"environment"`` when the environment failed (an injected tool fault, an
error marked ``environment:``), else the optional ``reviewer`` (an LLM through the judge seam,
``reviewer(messages) -> text`` naming the party), else ``"agent"``.

Example:
    >>> sc = Scenario(facts={"order_id": "#W1001"}, patterns={"order_id": r"#W\\d{4}"},
    ...               goals={"refund": ["refund"]})
    >>> msgs = [{"role": "user", "content": "Refund #W1002 please"}]
    >>> [(f.kind, f.turn) for f in check_simulator(msgs, sc)]
    [('contradicted', 0)]
    >>> check_simulator([{"role": "user", "content": "Hi ###STOP###", "stop": True}], sc)[0].kind
    'stopped_early'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import short_repr
from ek.calling import call

from ._scenario import Scenario

__all__ = [
    "PARTIES",
    "SIMULATOR_FAULTS",
    "Attribution",
    "RunAttribution",
    "SimulatorFault",
    "attribute",
    "attribute_run",
    "check_simulator",
    "conversation_of",
]

#: The kinds of simulator fault the deterministic checks find.
SIMULATOR_FAULTS = ("disclosed", "contradicted", "stopped_early", "broke_role", "over_limit")

#: Who a failure is attributed to.
PARTIES = ("agent", "simulator", "environment")

#: A user turn that speaks as the agent.
_ROLE_BREAK = re.compile(
    r"^\s*(assistant|agent|support)\s*:|\bas an ai\b|\bhow (can|may) i (help|assist) you\b",
    re.IGNORECASE,
)

#: Errors that are the environment's (injected tool faults, explicitly marked ones).
_ENVIRONMENT = ("injected fault", "environment:", "infrastructure")


@dataclass(frozen=True)
class SimulatorFault:
    """One fault of the simulator: its kind, the message index, and why."""

    kind: str
    turn: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"kind": self.kind, "turn": self.turn, "reason": self.reason}


@dataclass(frozen=True)
class Attribution:
    """Whose fault a trial's failure is.

    Attributes:
        party: ``"agent"``, ``"simulator"`` or ``"environment"``; ``None`` for a trial that
            passed (its simulator faults are still listed: a leaked answer inflates a pass).
        reason: Why, in words.
        faults: The simulator's faults the checks found.
        detail: Machine-readable extras (the reviewer's reply, the environment error).
    """

    party: str | None
    reason: str
    faults: tuple[SimulatorFault, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def spoiled(self) -> bool:
        """The simulator spoiled the trial (a fault was found)."""
        return bool(self.faults)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "party": self.party,
            "reason": self.reason,
            "faults": [f.to_dict() for f in self.faults],
            "detail": dict(self.detail),
        }


def _user_turns(
    messages: Sequence[Mapping[str, Any]],
) -> Iterator[tuple[int, Mapping[str, Any], str]]:
    for i, m in enumerate(messages):
        if m.get("role") == "user":
            yield i, m, str(m.get("content", ""))


def _said_by_agent(messages: Sequence[Mapping[str, Any]], upto: int) -> str:
    return "\n".join(
        str(m.get("content", "")) for m in messages[:upto] if m.get("role") == "assistant"
    )


def _value_faults(i: int, text: str, echo: str, sc: Scenario) -> Iterator[SimulatorFault]:
    values = {v: k for k, v in sc.facts.items()}
    for kind, pattern in sc.patterns.items():
        for m in re.finditer(pattern, text):
            v = m.group(0)
            if v in echo or (v in values and sc.may_disclose(values[v])):
                continue
            if v in values:
                yield SimulatorFault(
                    "disclosed", i, f"said {values[v]!r} ({v!r}), which it may not disclose"
                )
            elif kind in sc.facts:
                yield SimulatorFault(
                    "contradicted", i, f"gave {kind} {v!r}; the scenario gives {sc.facts[kind]!r}"
                )
            else:
                yield SimulatorFault(
                    "disclosed", i, f"invented a {kind} {v!r} the scenario does not give it"
                )


def _text_faults(i: int, text: str, echo: str, sc: Scenario) -> Iterator[SimulatorFault]:
    low, echo_low = text.casefold(), echo.casefold()
    for w in sc.withheld:
        if w.casefold() in low and w.casefold() not in echo_low:
            yield SimulatorFault("disclosed", i, f"said withheld text {short_repr(w, 60)}")
    for name, v in sc.facts.items():
        if name in sc.patterns or sc.may_disclose(name):  # a patterned value: _value_faults
            continue
        if v.casefold() in low and v.casefold() not in echo_low:
            yield SimulatorFault("disclosed", i, f"said {name!r}, which it may not disclose")


def _role_faults(i: int, msg: Mapping[str, Any], text: str) -> Iterator[SimulatorFault]:
    if msg.get("attempted_calls") or msg.get("tool_calls"):
        yield SimulatorFault("broke_role", i, "called tools (a user has none)")
    if _ROLE_BREAK.search(text):
        yield SimulatorFault("broke_role", i, f"spoke as the agent: {short_repr(text, 80)}")


def _limit_faults(
    i: int, n: int, text: str, stopped: bool, sc: Scenario
) -> Iterator[SimulatorFault]:
    if len(text) > sc.max_chars:
        yield SimulatorFault(
            "over_limit", i, f"a turn of {len(text)} characters (max_chars {sc.max_chars})"
        )
    if n > sc.max_turns:
        yield SimulatorFault("over_limit", i, f"user turn {n} past max_turns {sc.max_turns}")
    if stopped:
        yield SimulatorFault("over_limit", i, "spoke after it had stopped the conversation")
    elif sc.stop in text and text.split(sc.stop, 1)[1].strip():
        yield SimulatorFault("over_limit", i, "kept talking after the stop marker")


def _goal_fault(messages: Sequence[Mapping[str, Any]], sc: Scenario) -> Iterator[SimulatorFault]:
    stop_at = next((i for i, m, _ in _user_turns(messages) if m.get("stop")), None)
    if stop_at is None:
        return
    said = "\n".join(t for i, _, t in _user_turns(messages) if i <= stop_at).casefold()
    missing = [
        g for g, phrases in sc.goals.items() if not any(p.casefold() in said for p in phrases)
    ]
    if missing:
        yield SimulatorFault(
            "stopped_early", stop_at, f"stopped before stating goal item(s) {missing}"
        )


def check_simulator(
    messages: Sequence[Mapping[str, Any]], scenario: Scenario
) -> tuple[SimulatorFault, ...]:
    """The simulator's faults in a conversation (``{"role", "content"}`` messages; a user turn
    may carry ``"stop": True`` and ``"attempted_calls"``), in message order.

    Raises:
        TypeError: ``messages`` not a list of mappings, ``scenario`` not a Scenario.
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if isinstance(messages, (str, bytes)) or not all(isinstance(m, Mapping) for m in messages):
        raise TypeError(
            f"messages must be a list of {{'role', 'content'}} mappings, got {short_repr(messages)}"
        )
    out: list[SimulatorFault] = []
    stopped = False
    for n, (i, msg, text) in enumerate(_user_turns(messages), 1):
        echo = _said_by_agent(messages, i)
        out += _value_faults(i, text, echo, scenario)
        out += _text_faults(i, text, echo, scenario)
        out += _role_faults(i, msg, text)
        out += _limit_faults(i, n, text, stopped, scenario)
        stopped = stopped or bool(msg.get("stop"))
    out += _goal_fault(messages, scenario)
    out.sort(key=lambda f: f.turn)
    return tuple(out)


def conversation_of(episode: Any) -> list[Mapping[str, Any]]:
    """The conversation an episode records (``metadata["messages"]``, chat messages).

    Raises:
        ValueError: an episode that records no conversation.
    """
    msgs = getattr(episode, "metadata", {}).get("messages")
    if not isinstance(msgs, list):
        raise ValueError(
            f"episode {short_repr(getattr(episode, 'task_id', None))} records no conversation "
            "(metadata['messages']); run it through ek.agents.simulate"
        )
    return msgs


def _environment_error(episode: Any) -> str | None:
    errors = [episode.error] + [s.error for s in episode.trajectory]
    for e in errors:
        if isinstance(e, str) and any(e.lower().startswith(p) for p in _ENVIRONMENT):
            return e
    return None


def _review(reviewer: Callable[..., Any], messages: Sequence[Mapping[str, Any]]) -> str | None:
    reply = call(reviewer, ([dict(m) for m in messages],))
    text = reply if isinstance(reply, str) else getattr(reply, "content", None)
    if not isinstance(text, str):
        return None
    m = re.search(r"\b(agent|simulator|environment)\b", text, re.IGNORECASE)
    return m.group(1).lower() if m else None


def attribute(
    episode: Any, scenario: Scenario, *, reviewer: Callable[..., Any] | None = None
) -> Attribution:
    """Whose fault ``episode``'s failure is (see the module docstring for the order of rules).

    Args:
        episode: An :class:`~ek.agents.base.Episode` recording a conversation.
        scenario: The task's scenario.
        reviewer: Optional ``reviewer(messages) -> text`` (sync or async; an LLM through the
            judge seam) asked when no deterministic rule decides; its text must name
            ``agent``, ``simulator`` or ``environment`` (else the failure stays the agent's,
            with the unread reply in ``detail``).

    Example:
        >>> from ek.agents.base import Episode
        >>> msgs = [{"role": "user", "content": "refund please"},
        ...         {"role": "assistant", "content": "No."}]
        >>> ep = Episode("t", success=False, metadata={"messages": msgs})
        >>> attribute(ep, Scenario(goals={"refund": "refund"})).party
        'agent'
    """
    messages = conversation_of(episode)
    faults = check_simulator(messages, scenario)
    if episode.success:
        return Attribution(None, "passed", faults)
    if faults:
        kinds = sorted({f.kind for f in faults})
        return Attribution("simulator", f"the simulator's fault: {', '.join(kinds)}", faults)
    env = _environment_error(episode)
    if env is not None:
        return Attribution(
            "environment", f"the environment failed: {env[:200]}", (), {"error": env}
        )
    if reviewer is not None:
        verdict = _review(reviewer, messages)
        if verdict is not None:
            return Attribution(verdict, f"the reviewer says: {verdict}", (), {"reviewer": verdict})
        return Attribution(
            "agent", "no rule applies (the reviewer named no party)", (), {"reviewer": None}
        )
    return Attribution("agent", "no simulator or environment fault found", ())


@dataclass(frozen=True)
class RunAttribution:
    """Whose fault a run's failures are.

    Attributes:
        failed: The failed trials attributed.
        by_party: ``{party: failed trials}`` for every party in :data:`PARTIES`.
        by_fault: ``{fault kind: failed trials with it}`` (a trial may have several kinds).
        trials: ``((task_id, trial), Attribution)`` of every failed trial, in episode order.
    """

    failed: int
    by_party: Mapping[str, int]
    by_fault: Mapping[str, int]
    trials: tuple[tuple[tuple[str, int], Attribution], ...]

    @property
    def reason(self) -> str:
        """One line: the failures by party."""
        parts = ", ".join(f"{p} {self.by_party[p]}" for p in PARTIES)
        return f"{self.failed} failed trial(s): {parts}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "failed": self.failed,
            "by_party": dict(self.by_party),
            "by_fault": dict(self.by_fault),
            "reason": self.reason,
            "trials": [{"task_id": t, "trial": n, **a.to_dict()} for (t, n), a in self.trials],
        }


def attribute_run(
    episodes: Iterable[Any],
    scenarios: Mapping[str, Scenario] | Callable[[Any], Scenario],
    *,
    reviewer: Callable[..., Any] | None = None,
) -> RunAttribution:
    """:func:`attribute` over a run's failed trials (those whose ``success`` is not True).

    Args:
        episodes: The run's episodes (e.g. :func:`~ek.agents.simulate.read_taubench`'s).
        scenarios: ``{task_id: Scenario}``, or a function of the episode giving its scenario.
        reviewer: As for :func:`attribute`.

    Raises:
        ValueError: an episode of a task ``scenarios`` has no scenario for, or one that
            records no conversation.

    Example:
        >>> from ek.agents.base import Episode
        >>> msgs = [{"role": "user", "content": "Refund #W1000002"}]
        >>> sc = Scenario(facts={"order_id": "#W1000001"}, patterns={"order_id": r"#W\\d{7}"})
        >>> eps = [Episode("t", success=False, metadata={"messages": msgs}),
        ...        Episode("t", trial=1, success=True, metadata={"messages": []})]
        >>> attribute_run(eps, {"t": sc}).reason
        '1 failed trial(s): agent 0, simulator 1, environment 0'
    """
    by_party = dict.fromkeys(PARTIES, 0)
    by_fault: dict[str, int] = {}
    trials = []
    for ep in episodes:
        if ep.success is True:
            continue
        a = attribute(ep, _scenario_for(ep, scenarios), reviewer=reviewer)
        party = a.party or "agent"  # a failed trial always has one
        by_party[party] = by_party.get(party, 0) + 1
        for kind in sorted({f.kind for f in a.faults}):
            by_fault[kind] = by_fault.get(kind, 0) + 1
        trials.append(((ep.task_id, ep.trial), a))
    return RunAttribution(len(trials), by_party, by_fault, tuple(trials))


def _scenario_for(
    episode: Any, scenarios: Mapping[str, Scenario] | Callable[[Any], Scenario]
) -> Scenario:
    if callable(scenarios):
        return scenarios(episode)
    sc = scenarios.get(episode.task_id)
    if sc is None:
        raise ValueError(
            f"no scenario for task {episode.task_id!r} (scenarios names {len(scenarios)} task(s))"
        )
    return sc
