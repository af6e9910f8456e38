"""The :class:`~ek.base.Score` of a tool-call assignment, built straight from the assignment.

:func:`ek.agents.toolcalls.tool_call_score` turns a finished
:class:`~ek.agents.toolcalls.MatchResult` into a Score; :class:`~ek.agents.toolcalls.ToolCallMetric`
skips the intermediate objects instead: a pair claimed as exact by its canonical key needs no
per-argument verdicts (its TP is the predicted call's mass, every argument a match), so only the
pairs with argument errors carry verdicts into the detail. The detail is the same, key for key and
value for value (the same sums in the same order, the same words from
:mod:`ek.agents._callreport`), and a characterisation test pins that.

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> from ek.agents._callargs import _Ctx
    >>> from ek.agents._calls import _prepare_gold, _prepare_pred
    >>> from ek.agents._matching import _assign
    >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
    >>> g = _prepare_gold([{"name": "f", "args": {"x": 1}}], ctx)
    >>> s = score_assignment(*_assign(_prepare_pred([{"name": "f", "args": {"x": 1}}], ctx), g, ctx))
    >>> s.value, s.detail["passed"], s.detail["matched"]
    (1.0, True, [{'gold': 0, 'pred': 0, 'tool': 'f', 'exact': True}])
"""

from __future__ import annotations

import math
from dataclasses import fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ek.agents._callreport import _extra_row, _missing_row, _wrong_row, reason_text
from ek.agents._calls import (
    _GCall,
    _iter_calls,
    _PCall,
    _pcall,
    _pred_args,
    _prepare_pred,
)
from ek.agents._lazydetail import LazyDetail
from ek.agents._matching import _assign, _assign_rest
from ek.base import Score
from ek.fields import f1_score

if TYPE_CHECKING:
    from ek.agents._callargs import _Ctx
    from ek.agents._callreport import WrongRow
    from ek.agents._compare import _Pair

__all__ = ["make_score", "score_assignment", "score_calls"]

_INF = math.inf
_new = object.__new__
_set = object.__setattr__
# Score's own constructor copies the detail and re-validates the value; a fresh dict and a float
# need neither. Used only while Score is exactly (value, detail) with a per-instance __dict__.
_DIRECT = [f.name for f in fields(Score)] == ["value", "detail"] and hasattr(Score, "__dict__")


def make_score(value: float, detail: dict[str, Any]) -> Score:
    """``Score(value, detail)`` for a float ``value`` and a fresh ``detail`` dict (not copied).

    Example:
        >>> make_score(0.5, {"tp": 1.0}).detail["tp"]
        1.0
    """
    if not _DIRECT or type(value) is not float:
        return Score(value, detail)
    s = _new(Score)
    _set(s, "value", value)
    _set(s, "detail", MappingProxyType(detail))
    return s


def score_calls(pred: Any, golds: list[_GCall], ctx: _Ctx) -> Score:
    """Score the predicted calls of ``pred`` against prepared ``golds`` (the metric's hot path).

    The exact claiming of :func:`ek.agents._matching._assign`, done while the predicted calls
    are prepared: each predicted call claims the first unclaimed literal gold call with its key
    (the same pairs as claiming in gold order), so a claimed call needs no further object. What
    is left goes through :func:`ek.agents._matching._assign_rest`. Same Score as
    ``score_assignment(*_assign(_prepare_pred(pred, ctx), golds, ctx))``.
    """
    gk: dict[Any, list[_GCall]] = {}
    for gc in golds:
        key = gc.key
        if key is not None and gc.info.fields is None:
            b = gk.get(key)
            if b is None:
                gk[key] = [gc]
            else:
                b.append(gc)
    if not gk:
        return score_assignment(*_assign(_prepare_pred(pred, ctx), golds, ctx))
    claimed: list[tuple[int, float] | None] = [None] * len(golds)
    left_p: list[_PCall] = []
    for i, tool, args, info in _iter_calls(pred, ctx, "predicted"):
        fa, mass = _pred_args(i, tool, args, info, ctx)
        key = (tool, frozenset(fa.items()))
        b = gk.get(key)
        if b:
            claimed[b.pop(0).index] = (i, mass)
        else:
            left_p.append(_pcall(i, tool, args, info, fa, key, mass))
    rest_g = [gc for gc in golds if claimed[gc.index] is None]
    if not rest_g and not left_p:  # every call claimed exactly: the common case
        return _perfect(golds, claimed)
    group: dict[int, tuple[_PCall, _Pair]] = {}
    if rest_g and left_p:
        out, missing, extra = _assign_rest(left_p, rest_g, ctx)
        for gc, pc, pr in out:
            group[gc.index] = (pc, pr)
    else:
        missing, extra = rest_g, left_p
    rows: list[_Row] = []
    for gc in golds:
        gi = gc.index
        c = claimed[gi]
        if c is not None:
            rows.append((gi, gc.tool, c[0], c[1]))
        else:
            g = group.get(gi)
            if g is not None:
                rows.append((gi, gc.tool, g[0].index, g[1]))
    return _tally(rows, missing, extra)


#: One assigned pair, in gold order: (gold index, tool, predicted index, the predicted call's
#: mass for a pair claimed exactly by key, else the pair's comparison).
_Row = tuple[int, str, int, "float | _Pair"]


def _tally(rows: list[_Row], missing: list[_GCall], extra: list[_PCall]) -> Score:
    """Sum the weighted TP/FP/FN of an assignment and explain it (both scoring paths)."""
    tp = fp = fn = 0.0
    matched = []
    wrong: list[WrongRow] = []
    n_exact = 0
    for gi, tool, pi, pr in rows:
        if isinstance(
            pr, float
        ):  # claimed by key: TP = the predicted call's mass (costs are floats)
            tp += pr
            n_exact += 1
            matched.append({"gold": gi, "pred": pi, "tool": tool, "exact": True})
            continue
        tp += pr.tp
        fp += pr.fp
        fn += pr.fn
        exact = pr.exact
        if exact:
            n_exact += 1
        matched.append({"gold": gi, "pred": pi, "tool": tool, "exact": exact})
        for a in pr.verdicts:
            if a.verdict != "match":
                wrong.append((tool, gi, pi, a))
    return _finish(tp, fp, fn, matched, n_exact, missing, extra, wrong)


def _perfect(golds: list[_GCall], claimed: list[tuple[int, float] | None]) -> Score:
    """Every gold call claimed exactly, nothing extra: the Score, its explanation written lazily
    (from indices and tool names only, which nobody can change afterwards)."""
    tp = 0.0
    for c in claimed:
        tp += c[1]  # type: ignore[index]
    if type(tp) is float and 0.0 <= tp < _INF:
        f1 = 1.0 if tp == 0 else 2.0 * tp / (2.0 * tp + 0.0 + 0.0)
    else:
        f1 = f1_score(tp, 0.0, 0.0)

    def fill() -> dict[str, Any]:
        n = len(claimed)
        return {
            "reason": (
                f"valid: {n} of {n} gold call(s) matched exactly; "
                f"weighted TP {tp:g}, FP 0, FN 0, F1 {f1:.4f}"
            ),
            "matched": [
                {"gold": gc.index, "pred": c[0], "tool": gc.tool, "exact": True}  # type: ignore[index]
                for gc, c in zip(golds, claimed)
            ],
            "missing": [],
            "extra": [],
            "wrong_args": [],
        }

    eager = {
        "tp": tp,
        "fp": 0.0,
        "fn": 0.0,
        "passed": True,
        "valid": True,
        "higher_is_better": True,
    }
    return make_score(f1, LazyDetail(eager, fill))


def _finish(
    tp: float,
    fp: float,
    fn: float,
    matched: list[dict[str, Any]],
    n_exact: int,
    missing: list[_GCall],
    extra: list[_PCall],
    wrong: list[WrongRow],
) -> Score:
    miss = []
    for gc in missing:
        fn += gc.mass
        miss.append((gc.index, gc.tool, gc.args, gc.mass))
    ext = []
    for pc in extra:
        fp += pc.mass
        ext.append((pc.index, pc.tool, pc.args, pc.mass))
    if type(tp) is float and 0.0 <= tp < _INF and 0.0 <= fp < _INF and 0.0 <= fn < _INF:
        denom = 2.0 * tp + fp + fn
        f1 = 1.0 if denom == 0 else 2.0 * tp / denom  # f1_score's formula, inputs known valid
    else:
        f1 = f1_score(tp, fp, fn)
    valid = not miss and not ext and n_exact == len(matched)
    return make_score(
        f1,
        {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "passed": valid,
            "valid": valid,
            "higher_is_better": True,
            "reason": reason_text(valid, len(matched), n_exact, miss, ext, wrong, tp, fp, fn, f1),
            "matched": matched,
            "missing": [_missing_row(*c) for c in miss],
            "extra": [_extra_row(*c) for c in ext],
            "wrong_args": [_wrong_row(*w) for w in wrong],
        },
    )


def score_assignment(
    pairs: list[tuple[int, _GCall, _PCall, _Pair | None]],
    missing: list[_GCall],
    extra: list[_PCall],
) -> Score:
    """The Score of an assignment from :func:`ek.agents._matching._assign`.

    Same value and detail as ``tool_call_score(_match_prepared(...))``.
    """
    rows: list[_Row] = [
        (gi, gc.tool, pc.index, pc.mass if pr is None else pr) for gi, gc, pc, pr in pairs
    ]
    return _tally(rows, missing, extra)
