"""What the matcher returns: :class:`MatchResult` (the assigned pairs, the missing and extra
calls as :class:`UnmatchedCall`, the weighted counts), its views (:attr:`MatchResult.matched`:
every pair as a :class:`~ek.agents.toolcalls.CallMatch` with its per-argument
verdicts), its written explanation and JSON-ready rows, and :func:`tool_call_score`, the Score
made of it.

Example:
    >>> r = MatchResult((), (), (), 0.0, 0.0, 0.0)
    >>> r.valid, r.value, r.reason, r.to_dict()["matched"]
    (True, 1.0, 'valid: 0 of 0 gold call(s) matched exactly; weighted TP 0, FP 0, FN 0, F1 1.0000', [])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ek._validate import short_repr
from ek.agents.toolcalls._compare import ArgVerdict, CallMatch, identical
from ek.agents.toolcalls._gold import show
from ek.agents.toolcalls._parse import MALFORMED_TOOL, ExpectedCall, PredictedCall
from ek.base import ReadOnlyDict, Score
from ek.fields import FieldCounts, f1_score

__all__ = ["MatchResult", "Pair", "UnmatchedCall", "build_result", "tool_call_score"]

_LIST_MAX = 5  # items named in a reason before "and N more"


@dataclass(frozen=True)
class UnmatchedCall:
    """A gold call nothing was assigned to (missing) or a predicted call left over (extra).

    ``args`` are the call's arguments as given (held, not copied); ``cost`` is the call's mass.
    """

    index: int
    tool: str
    args: Mapping[str, Any]
    cost: float


#: One assigned pair: the gold call, the predicted call given to it and their comparison,
#: ``None`` for a pair claimed as identical (every argument a match; spelled out by
#: :func:`~ek.agents.toolcalls._compare.identical` when :attr:`MatchResult.matched` is read).
Pair = tuple[ExpectedCall, PredictedCall, "CallMatch | None"]


@dataclass(frozen=True)
class MatchResult:
    """The assignment of predicted to gold calls and the weighted counts it adds up to.

    :func:`~ek.agents.toolcalls._assign.match` builds it (through :func:`build_result`).

    Attributes:
        pairs: The assigned pairs, in gold order (see :data:`Pair`).
        missing: Gold calls with no predicted call (their ``cost`` is their mass), in index order.
        extra: Predicted calls assigned to no gold call, in index order.
        tp: Weighted true positives over all of it (:attr:`counts` holds the three).
        fp: Weighted false positives.
        fn: Weighted false negatives.
    """

    pairs: tuple[Pair, ...]
    missing: tuple[UnmatchedCall, ...]
    extra: tuple[UnmatchedCall, ...]
    tp: float
    fp: float
    fn: float

    @cached_property
    def matched(self) -> tuple[CallMatch, ...]:
        """The assigned pairs with their per-argument verdicts, in gold order."""
        return tuple(c if c is not None else identical(p, g) for g, p, c in self.pairs)

    @property
    def counts(self) -> FieldCounts:
        """Weighted TP/FP/FN over all of it."""
        return FieldCounts(self.tp, self.fp, self.fn)

    @property
    def n_exact(self) -> int:
        """How many of the pairs are exact (BFCL's verdict for a pair)."""
        return sum(c is None or c.exact for _, _, c in self.pairs)

    @property
    def valid(self) -> bool:
        """BFCL's verdict: every gold call matched exactly and nothing extra."""
        return not self.missing and not self.extra and self.n_exact == len(self.pairs)

    @property
    def value(self) -> float:
        """Weighted F1 of :attr:`counts` (1.0 for empty against empty)."""
        return f1_score(self.tp, self.fp, self.fn)

    @property
    def wrong_args(self) -> tuple[tuple[CallMatch, ArgVerdict], ...]:
        """Every (pair, argument) that was not a match, in gold order."""
        return tuple(
            (c, a) for _, _, c in self.pairs if c is not None and not c.exact for a in c.wrong_args
        )

    @cached_property
    def reason(self) -> str:
        """One paragraph a person can read: what matched, what is missing, extra or wrong."""
        n_exact = self.n_exact
        n_wrong = len(self.pairs) - n_exact
        n_gold = len(self.pairs) + len(self.missing)
        verdict = "valid" if self.valid else "invalid"
        parts = [f"{verdict}: {n_exact} of {n_gold} gold call(s) matched exactly"]
        if n_wrong:
            parts.append(f", {n_wrong} with argument errors")
        if self.missing:
            parts.append("; missing " + _enumerate([_missing_text(u) for u in self.missing]))
        if self.extra:
            parts.append("; extra " + _enumerate([_extra_text(u) for u in self.extra]))
        if n_wrong:
            wrong = [_wrong_text(m, a) for m, a in self.wrong_args]
            parts.append("; wrong arguments: " + _enumerate(wrong))
        parts.append(
            f"; weighted TP {self.tp:g}, FP {self.fp:g}, FN {self.fn:g}, F1 {self.value:.4f}"
        )
        return "".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready breakdown: the ``matched``, ``missing``, ``extra`` and ``wrong_args``
        rows that :func:`tool_call_score` puts in its detail (new lists at each call).

        Example:
            >>> MatchResult((), (), (), 0.0, 0.0, 0.0).to_dict()
            {'matched': [], 'missing': [], 'extra': [], 'wrong_args': []}
        """
        return {
            "matched": [
                {"gold": g.index, "pred": p.index, "tool": g.tool, "exact": c is None or c.exact}
                for g, p, c in self.pairs
            ],
            "missing": [_missing_row(u) for u in self.missing],
            "extra": [_extra_row(u) for u in self.extra],
            "wrong_args": [_wrong_row(m, a) for m, a in self.wrong_args],
        }


def build_result(
    pairs: Sequence[Pair], missing: Sequence[ExpectedCall], extra: Sequence[PredictedCall]
) -> MatchResult:
    """The :class:`MatchResult` of an assignment: its pairs (in gold order), the gold calls left
    missing and the predicted calls left extra (in index order). The counts are summed in that
    order: each pair's counts (a pair claimed as identical earns its predicted call's mass,
    what every argument's match charge adds up to), then each missing call's mass as FN and
    each extra call's as FP.
    """
    tp = fp = fn = 0.0
    for _, p, c in pairs:
        if c is None:
            tp += p.mass
        else:
            tp += c.tp
            fp += c.fp
            fn += c.fn
    for g in missing:
        fn += g.mass
    for p in extra:
        fp += p.mass
    return MatchResult(
        tuple(pairs),
        tuple([UnmatchedCall(g.index, g.tool, g.args, g.mass) for g in missing]),
        tuple([UnmatchedCall(p.index, p.tool, p.args, p.mass) for p in extra]),
        tp,
        fp,
        fn,
    )


def tool_call_score(result: MatchResult) -> Score:
    """The :class:`~ek.base.Score` of a :class:`MatchResult` (the pure function behind the metric).

    ``value`` = weighted F1; ``detail`` holds ``tp``/``fp``/``fn`` (weighted), ``passed`` = ``valid``
    (BFCL's verdict), ``higher_is_better``, a ``reason`` and the ``matched`` / ``missing`` /
    ``extra`` / ``wrong_args`` rows of :meth:`MatchResult.to_dict`.

    Example:
        >>> tool_call_score(MatchResult((), (), (), 0.0, 0.0, 0.0)).detail["passed"]
        True
    """
    valid = result.valid
    detail = {
        "tp": result.tp,
        "fp": result.fp,
        "fn": result.fn,
        "passed": valid,
        "valid": valid,
        "higher_is_better": True,
        "reason": result.reason,
        **result.to_dict(),
    }
    return Score(result.value, ReadOnlyDict(detail))


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


def _malformed_reason(u: UnmatchedCall) -> str | None:
    """Why a predicted call could not be read (a :data:`MALFORMED_TOOL` call), else ``None``."""
    if u.tool != MALFORMED_TOOL:
        return None
    reason = getattr(u.args, "reason", None)
    return reason if isinstance(reason, str) else None


def _missing_text(u: UnmatchedCall) -> str:
    return f"{u.tool} (gold #{u.index}, cost {u.cost:g})"


def _extra_text(u: UnmatchedCall) -> str:
    why = _malformed_reason(u)
    return f"{u.tool} (call #{u.index}, cost {u.cost:g}{'' if why is None else ', ' + why})"


def _wrong_text(m: CallMatch, a: ArgVerdict) -> str:
    if a.verdict == "wrong":
        what = f"got {short_repr(a.predicted, 40)}, expected {_brief(a.expected)} ({a.reason})"
    elif a.verdict == "missing":
        what = f"missing ({a.reason})"
    else:
        what = f"unexpected {short_repr(a.predicted, 40)} ({a.reason})"
    where = f"(call #{m.pred_index} vs gold #{m.gold_index})"
    return f"{m.tool}.{a.arg} {where} {what}, cost {a.importance:g}"


def _missing_row(u: UnmatchedCall) -> dict[str, Any]:
    return {"gold": u.index, "tool": u.tool, "args": show(u.args), "cost": u.cost}


def _extra_row(u: UnmatchedCall) -> dict[str, Any]:
    row = {"pred": u.index, "tool": u.tool, "args": dict(u.args), "cost": u.cost}
    why = _malformed_reason(u)
    if why is not None:  # a malformed predicted call: why it could not be read
        row["reason"] = why
    return row


def _wrong_row(m: CallMatch, a: ArgVerdict) -> dict[str, Any]:
    return {
        "gold": m.gold_index,
        "pred": m.pred_index,
        "tool": m.tool,
        "arg": a.arg,
        "verdict": a.verdict,
        "predicted": a.predicted,
        "expected": show(a.expected),
        "importance": a.importance,
        "reason": a.reason,
    }
