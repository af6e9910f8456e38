"""Rules on how often a call may be made: :class:`MaxCalls` and :class:`Forbid`.

Example:
    >>> from ek.agents.base import Step
    >>> rec = Record((Step("send_email", {"to": "a"}), Step("send_email", {"to": "a"})))
    >>> [v.reason for v in MaxCalls("send_email", 1).check(rec)]
    ['send_email at step 1: call 2 of send_email, at most 1 allowed']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ek._validate import count, short_repr

from ._record import Record
from ._rule import Rule, Violation, call_matches, json_args, tool_name

__all__ = ["Forbid", "MaxCalls"]


def _with(args: Mapping[str, Any]) -> str:
    if not args:
        return ""
    return " with " + ", ".join(f"{k}={short_repr(v, 40)}" for k, v in args.items())


@dataclass(frozen=True)
class MaxCalls(Rule):
    """At most ``limit`` calls of ``tool`` (with the given argument values, when ``args`` is set).

    Every call past the limit is a violation (a failed call counts: it was attempted).

    Args:
        tool: The tool.
        limit: The most calls allowed (>= 0).
        args: Argument values a call must have to be counted (``{}``: every call).
        severity: See :class:`~ek.agents.policy.Rule`.
        name: See :class:`~ek.agents.policy.Rule`.
    """

    kind: str = field(default="max_calls", init=False, repr=False)
    tool: str
    limit: int
    args: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        tool_name("MaxCalls.tool", self.tool)
        count("MaxCalls.limit", self.limit)
        object.__setattr__(self, "args", json_args("MaxCalls.args", self.args))

    def default_name(self) -> str:
        return f"{self.tool}{_with(self.args)} at most {self.limit}"

    def check(self, record: Record) -> tuple[Violation, ...]:
        out = []
        seen = 0
        for i, step in enumerate(record.steps):
            if call_matches(step, self.tool, self.args):
                seen += 1
                if seen > self.limit:
                    why = f"call {seen} of {self.tool}{_with(self.args)}, at most {self.limit} allowed"
                    out.append(self.violation(i, f"{self.tool} at step {i}: {why}"))
        return tuple(out)


@dataclass(frozen=True)
class Forbid(Rule):
    """No call of ``tool`` (with the given argument values, when ``args`` is set).

    Args:
        tool: The forbidden tool.
        args: Argument values that make the call forbidden (``{}``: every call of the tool).
        severity: See :class:`~ek.agents.policy.Rule`.
        name: See :class:`~ek.agents.policy.Rule`.

    Example:
        >>> from ek.agents.base import Step
        >>> rule = Forbid("transfer", {"currency": "BTC"})
        >>> rec = Record((Step("transfer", {"currency": "EUR"}), Step("transfer", {"currency": "BTC"})))
        >>> [(v.step, v.reason) for v in rule.check(rec)]
        [(1, "transfer at step 1: forbidden (transfer with currency='BTC')")]
    """

    kind: str = field(default="forbid", init=False, repr=False)
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        tool_name("Forbid.tool", self.tool)
        object.__setattr__(self, "args", json_args("Forbid.args", self.args))

    def default_name(self) -> str:
        return f"no {self.tool}{_with(self.args)}"

    def check(self, record: Record) -> tuple[Violation, ...]:
        return tuple(
            self.violation(i, f"{self.tool} at step {i}: forbidden ({self.tool}{_with(self.args)})")
            for i, step in enumerate(record.steps)
            if call_matches(step, self.tool, self.args)
        )
