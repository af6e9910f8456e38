"""What the matcher returns: :class:`MatchResult` with its :class:`CallMatch` and
:class:`UnmatchedCall` views, the written explanation (:attr:`MatchResult.reason`) and the
JSON-ready breakdown (:meth:`MatchResult.to_dict`) that a tool-call Score's detail carries.

Example:
    >>> r = MatchResult((), (), (), 0.0, 0.0, 0.0, 0)
    >>> r.valid, r.value, r.reason, r.to_dict()["matched"]
    (True, 1.0, 'valid: 0 of 0 gold call(s) matched exactly; weighted TP 0, FP 0, FN 0, F1 1.0000', [])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ek._validate import short_repr
from ek.agents.toolcalls.compare import ArgVerdict, Comparison, identical
from ek.agents.toolcalls.gold import show
from ek.agents.toolcalls.parse import MALFORMED_TOOL, ExpectedCall, PredictedCall
from ek.fields import FieldCounts, f1_score

__all__ = ["CallMatch", "MatchResult", "Pair", "Rows", "UnmatchedCall"]

_LIST_MAX = 5  # items named in a reason before "and N more"

Rows = list[dict[str, Any]]  # one list of rows of MatchResult.to_dict()

#: One assigned pair: (gold call, predicted call, their comparison), the comparison ``None``
#: for a pair claimed as identical (every argument a match: :func:`identical`).
Pair = tuple[ExpectedCall, PredictedCall, "Comparison | None"]


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
    """A gold call nothing was assigned to (missing) or a predicted call left over (extra).

    ``args`` are the call's arguments as given (held, not copied); ``cost`` is the call's mass.
    """

    index: int
    tool: str
    args: Mapping[str, Any]
    cost: float


@dataclass(frozen=True, init=False, eq=False, repr=False)
class MatchResult:
    """The assignment of predicted to gold calls and the weighted counts it adds up to.

    :func:`~ek.agents.toolcalls.assign.match` builds it from the prepared calls. The
    per-argument views (:attr:`matched`, :attr:`missing`, :attr:`extra`, :attr:`wrong_args`)
    are built from them the first time one is read; the explanation (:attr:`reason`,
    :meth:`to_dict`) needs only the pairs, so a Score never spells out the verdicts of the
    pairs that were claimed as identical. Two results are equal when their views are.

    Attributes:
        pairs: The assigned pairs (gold call, predicted call, comparison), in gold order.
        missing_calls: The gold calls no predicted call was assigned to, in index order.
        extra_calls: The predicted calls assigned to no gold call, in index order.
        tp: Weighted true positives over all of it (:attr:`counts` holds the three).
        fp: Weighted false positives.
        fn: Weighted false negatives.
        n_exact: How many of the pairs are exact.
    """

    pairs: tuple[Pair, ...]
    missing_calls: tuple[ExpectedCall, ...]
    extra_calls: tuple[PredictedCall, ...]
    tp: float
    fp: float
    fn: float
    n_exact: int

    def __init__(
        self,
        pairs: Sequence[Pair],
        missing_calls: Sequence[ExpectedCall],
        extra_calls: Sequence[PredictedCall],
        tp: float,
        fp: float,
        fn: float,
        n_exact: int,
    ) -> None:
        # The fields in one step (the generated __init__ of a frozen dataclass makes one
        # object.__setattr__ call a field: a tenth of the cost of scoring a perfect episode).
        self.__dict__.update(
            pairs=tuple(pairs),
            missing_calls=tuple(missing_calls),
            extra_calls=tuple(extra_calls),
            tp=tp,
            fp=fp,
            fn=fn,
            n_exact=n_exact,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MatchResult):
            return NotImplemented
        return self._views() == other._views()

    def __hash__(self) -> int:
        return hash(self._views())

    def __repr__(self) -> str:
        return (
            f"MatchResult(matched={self.matched!r}, missing={self.missing!r}, "
            f"extra={self.extra!r}, counts={self.counts!r})"
        )

    def _views(self) -> tuple[Any, ...]:
        return (self.matched, self.missing, self.extra, self.counts)

    # -- the per-argument views, built on first read and kept (in the instance dict, as
    #    functools.cached_property keeps them; two threads racing build equal views)

    @property
    def matched(self) -> tuple[CallMatch, ...]:
        """The assigned pairs with their per-argument verdicts, in gold order."""
        got = self.__dict__.get("_matched")
        if got is None:
            got = self.__dict__["_matched"] = tuple([_call_match(*pr) for pr in self.pairs])
        return got

    @property
    def missing(self) -> tuple[UnmatchedCall, ...]:
        """Gold calls with no predicted call (their ``cost`` is their mass)."""
        got = self.__dict__.get("_missing")
        if got is None:
            got = self.__dict__["_missing"] = _unmatched(self.missing_calls)
        return got

    @property
    def extra(self) -> tuple[UnmatchedCall, ...]:
        """Predicted calls assigned to no gold call."""
        got = self.__dict__.get("_extra")
        if got is None:
            got = self.__dict__["_extra"] = _unmatched(self.extra_calls)
        return got

    @property
    def wrong_args(self) -> tuple[tuple[CallMatch, ArgVerdict], ...]:
        """Every (pair, argument) that was not a match, in gold order."""
        return tuple([(m, a) for m in self.matched if not m.exact for a in m.wrong_args])

    # -- the counts, the verdict and the explanation

    @property
    def counts(self) -> FieldCounts:
        """Weighted TP/FP/FN over all of it."""
        return FieldCounts(self.tp, self.fp, self.fn)

    @property
    def valid(self) -> bool:
        """BFCL's verdict: every gold call matched exactly and nothing extra."""
        return not self.missing_calls and not self.extra_calls and self.n_exact == len(self.pairs)

    @property
    def value(self) -> float:
        """Weighted F1 of :attr:`counts` (1.0 for empty against empty)."""
        return f1_score(self.tp, self.fp, self.fn)

    @property
    def reason(self) -> str:
        """One paragraph a person can read: what matched, what is missing, extra or wrong."""
        return self.explain(self.value, self.valid)

    def explain(self, f1: float, valid: bool) -> str:
        """:attr:`reason`, given :attr:`value` and :attr:`valid` (the caller has them)."""
        n_matched = len(self.pairs)
        n_exact = self.n_exact
        # The parts are added to one string (a list of them joined costs ~1k more).
        reason = (
            f"{'valid' if valid else 'invalid'}: {n_exact} of "
            f"{n_matched + len(self.missing_calls)} gold call(s) matched exactly"
        )
        if n_matched != n_exact:
            reason += f", {n_matched - n_exact} with argument errors"
        if self.missing_calls:
            reason += "; missing " + _enumerate([_missing_text(g) for g in self.missing_calls])
        if self.extra_calls:
            reason += "; extra " + _enumerate([_extra_text(p) for p in self.extra_calls])
        if n_matched != n_exact:
            wrong = [_wrong_text(g, p, a) for g, p, a in self._wrong_rows()]
            reason += "; wrong arguments: " + _enumerate(wrong)
        counts = (self.tp, self.fp, self.fn, f1)  # (one % call formats all four: the cheapest)
        return reason + "; weighted TP %g, FP %g, FN %g, F1 %.4f" % counts  # noqa: UP031

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready breakdown: the ``matched``, ``missing``, ``extra`` and ``wrong_args``
        rows that :class:`~ek.agents.toolcalls.ToolCallMetric` puts in its detail."""
        matched, missing, extra, wrong_args = self.breakdown()
        return {"matched": matched, "missing": missing, "extra": extra, "wrong_args": wrong_args}

    def breakdown(self) -> tuple[Rows, Rows, Rows, Rows]:
        """The four lists of :meth:`to_dict`, in its order: ``matched``, ``missing``, ``extra``
        and ``wrong_args`` (new lists of new dicts at each call).

        :func:`~ek.agents.toolcalls.tool_call_score` puts them in its detail's one dict display
        (merging the dict of :meth:`to_dict` into it costs ~1.5k instructions more).

        Example:
            >>> MatchResult((), (), (), 0.0, 0.0, 0.0, 0).breakdown()
            ([], [], [], [])
        """
        matched = [
            {"gold": g.index, "pred": p.index, "tool": g.tool, "exact": c is None or c.exact}
            for g, p, c in self.pairs
        ]
        missing = [_missing_row(g) for g in self.missing_calls] if self.missing_calls else []
        extra = [_extra_row(p) for p in self.extra_calls] if self.extra_calls else []
        wrong_args = (
            [_wrong_row(g, p, a) for g, p, a in self._wrong_rows()]
            if self.n_exact != len(self.pairs)
            else []
        )
        return matched, missing, extra, wrong_args

    def _wrong_rows(self) -> tuple[tuple[ExpectedCall, PredictedCall, ArgVerdict], ...]:
        """(gold call, predicted call, verdict) of every argument that was not a match (built
        once: the reason and the breakdown both list them)."""
        got = self.__dict__.get("_wrong")
        if got is None:
            wrong = []  # (a loop: a nested comprehension is a function call, ~1.5k more)
            for g, p, c in self.pairs:
                if c is not None and not c.exact:
                    for a in c.verdicts:
                        if a.verdict != "match":
                            wrong.append((g, p, a))
            got = self.__dict__["_wrong"] = tuple(wrong)
        return got


def _call_match(g: ExpectedCall, p: PredictedCall, c: Comparison | None) -> CallMatch:
    if c is None:
        c = identical(p, g)
    return CallMatch(g.index, p.index, g.tool, c.verdicts, c.exact, c.tp, c.fp, c.fn, c.cost)


def _unmatched(
    calls: Sequence[ExpectedCall] | Sequence[PredictedCall],
) -> tuple[UnmatchedCall, ...]:
    return tuple([UnmatchedCall(c.index, c.tool, c.args, c.mass) for c in calls])


# --------------------------------------------------------------------------- rendering


def _enumerate(items: list[str]) -> str:
    if len(items) <= _LIST_MAX:
        return "; ".join(items)
    return "; ".join(items[:_LIST_MAX]) + f"; and {len(items) - _LIST_MAX} more"


def _brief(expected: Any) -> str:
    """A short rendering of a gold pattern (of what :func:`show` gives for it)."""
    shown = show(expected)
    if type(shown) is dict and "any_of" in shown:
        s = " or ".join([short_repr(v, 40) for v in shown["any_of"]]) or "nothing"
        return s + (" (optional)" if shown.get("optional") else "")
    return short_repr(shown, 40)


def _malformed_reason(p: PredictedCall) -> str | None:
    """Why a predicted call could not be read (a :data:`MALFORMED_TOOL` call), else ``None``."""
    if p.tool != MALFORMED_TOOL:
        return None
    reason = getattr(p.args, "reason", None)
    return reason if isinstance(reason, str) else None


def _missing_text(g: ExpectedCall) -> str:
    return f"{g.tool} (gold #{g.index}, cost {g.mass:g})"


def _extra_text(p: PredictedCall) -> str:
    why = _malformed_reason(p)
    return f"{p.tool} (call #{p.index}, cost {p.mass:g}{'' if why is None else ', ' + why})"


def _wrong_text(g: ExpectedCall, p: PredictedCall, a: ArgVerdict) -> str:
    verdict = a.verdict
    if verdict == "wrong":
        what = f"got {short_repr(a.predicted, 40)}, expected {_brief(a.expected)} ({a.reason})"
    elif verdict == "missing":
        what = f"missing ({a.reason})"
    else:
        what = f"unexpected {short_repr(a.predicted, 40)} ({a.reason})"
    return f"{g.tool}.{a.arg} (call #{p.index} vs gold #{g.index}) {what}, cost {a.importance:g}"


def _missing_row(g: ExpectedCall) -> dict[str, Any]:
    return {"gold": g.index, "tool": g.tool, "args": show(g.args), "cost": g.mass}


def _extra_row(p: PredictedCall) -> dict[str, Any]:
    row = {"pred": p.index, "tool": p.tool, "args": dict(p.args), "cost": p.mass}
    why = _malformed_reason(p)
    if why is not None:  # a malformed predicted call: why it could not be read
        row["reason"] = why
    return row


def _wrong_row(g: ExpectedCall, p: PredictedCall, a: ArgVerdict) -> dict[str, Any]:
    return {
        "gold": g.index,
        "pred": p.index,
        "tool": g.tool,
        "arg": a.arg,
        "verdict": a.verdict,
        "predicted": a.predicted,
        "expected": show(a.expected),
        "importance": a.importance,
        "reason": a.reason,
    }
