"""The result types of the tool-call matcher: :class:`ArgVerdict`, :class:`CallMatch`,
:class:`UnmatchedCall` and :class:`MatchResult` (re-exported by :mod:`ek.agents.toolcalls`).

Example:
    >>> from ek.fields import FieldCounts
    >>> r = MatchResult((), (), (), FieldCounts())
    >>> r.valid, r.value, r.to_dict()["matched"]
    (True, 1.0, [])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ek.agents._callreport import _breakdown, _reason
from ek.fields import FieldCounts

__all__ = ["ArgVerdict", "CallMatch", "MatchResult", "UnmatchedCall"]


class ArgVerdict(NamedTuple):
    """How one argument of a matched call fared.

    ``verdict`` is ``match``, ``wrong`` (present, value or type wrong), ``missing`` (expected,
    absent) or ``extra`` (given but not expected, or not a parameter of the tool).
    """

    arg: str
    verdict: str
    importance: float
    predicted: Any
    expected: Any
    reason: str


class CallMatch(NamedTuple):
    """A predicted call assigned to a gold call, with its per-argument verdicts.

    ``exact`` is BFCL's verdict for the pair; ``tp``/``fp``/``fn`` are the pair's weighted
    counts; ``cost`` is the importance of the arguments that differ (each counted once).
    """

    gold_index: int
    pred_index: int
    tool: str
    args: tuple[ArgVerdict, ...]
    exact: bool
    tp: float
    fp: float
    fn: float
    cost: float

    @property
    def counts(self) -> FieldCounts:
        """The pair's weighted TP/FP/FN."""
        return FieldCounts(self.tp, self.fp, self.fn)

    @property
    def wrong_args(self) -> tuple[ArgVerdict, ...]:
        """The arguments that were not a match."""
        return tuple(a for a in self.args if a.verdict != "match")


@dataclass(frozen=True)
class UnmatchedCall:
    """A gold call nothing was assigned to (missing) or a predicted call left over (extra)."""

    index: int
    tool: str
    args: Mapping[str, Any]
    cost: float


@dataclass(frozen=True)
class MatchResult:
    """The assignment of predicted to gold calls and the weighted counts it adds up to.

    Attributes:
        matched: The assigned pairs, in gold order.
        missing: Gold calls with no predicted call (their ``cost`` is their mass).
        extra: Predicted calls assigned to no gold call.
        counts: Weighted TP/FP/FN over all of it.
    """

    matched: tuple[CallMatch, ...]
    missing: tuple[UnmatchedCall, ...]
    extra: tuple[UnmatchedCall, ...]
    counts: FieldCounts

    @property
    def valid(self) -> bool:
        """BFCL's verdict: every gold call matched exactly and nothing extra."""
        return not self.missing and not self.extra and all(m.exact for m in self.matched)

    @property
    def value(self) -> float:
        """Weighted F1 of :attr:`counts` (1.0 for empty against empty)."""
        return self.counts.f1

    @property
    def wrong_args(self) -> tuple[tuple[CallMatch, ArgVerdict], ...]:
        """Every (pair, argument) that was not a match."""
        return tuple((m, a) for m in self.matched for a in m.args if a.verdict != "match")

    @property
    def reason(self) -> str:
        """One paragraph a person can read: what matched, what is missing, extra or wrong."""
        return _reason(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready breakdown (the lists that :class:`ToolCallMetric` puts in its detail)."""
        return _breakdown(self)


# Documented and pickled under their public home.
for _cls in (ArgVerdict, CallMatch, UnmatchedCall, MatchResult):
    _cls.__module__ = "ek.agents.toolcalls"
