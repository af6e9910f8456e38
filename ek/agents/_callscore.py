"""The :class:`~ek.base.Score` of a tool-call assignment, built straight from the assignment.

:func:`ek.agents.toolcalls.tool_call_score` turns a finished
:class:`~ek.agents.toolcalls.MatchResult` into a Score; :class:`~ek.agents.toolcalls.ToolCallMetric`
skips the intermediate objects instead. :func:`score_calls` scores against a prepared (cached)
gold: exact pairs are claimed by canonical key while the predicted calls are prepared, and only
what is left is assigned (:func:`_rows`); :mod:`ek.agents._callwritten` does the same for a plain
gold without preparing what it does not need. Both end in :func:`_tally` (or :func:`_perfect`
when every call was claimed exactly, or ``_callwritten._count_left``), and every path builds its
Score with :func:`tool_score`.

Every Score's detail is built on first read (:func:`ek.base.deferred_score`) with its counts
and verdict (``tp``/``fp``/``fn``/``passed``/``valid``); its ``reason`` and rows are written on
the first read of one of them (a :class:`~ek.agents._lazydetail.LazyDetail`). The gold calls
and the arguments of missing and extra calls are copied at scoring time; argument values are
held by reference (as the rows always held them), so a value mutated in place between scoring
and the first read of the explanation shows up in it. The detail is the same, key for key and
value for value, as the :class:`~ek.agents.toolcalls.MatchResult` route (the same sums, added in
the same order unless whole-number costs make the order irrelevant, the same words from
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
from collections.abc import Callable, Sequence
from dataclasses import fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ek.agents._callreport import _extra_row, _missing_row, _wrong_row, reason_text
from ek.agents._calls import _GCall, _iter_calls, _PCall, _pcall, _pred_args, _prepare_pred
from ek.agents._compare import _compare
from ek.agents._lazydetail import LazyDetail
from ek.agents._matching import _assign, _assign_rest
from ek.agents.callshape import MALFORMED_TOOL
from ek.base import Score, deferred_score
from ek.fields import f1_score

if TYPE_CHECKING:
    from ek.agents._callargs import _Ctx
    from ek.agents._callreport import CallRow, WrongRow
    from ek.agents._compare import _Pair

__all__ = ["make_score", "score_assignment", "score_calls", "tool_score"]

_INF = math.inf
_new = object.__new__
# Score's own constructor copies the detail and re-validates the value; a fresh dict and a float
# need neither. Used only while Score is exactly (value, detail) with a per-instance __dict__.
_DIRECT = [f.name for f in fields(Score)] == ["value", "detail"] and "__slots__" not in vars(Score)


def make_score(value: float, detail: dict[str, Any]) -> Score:
    """``Score(value, detail)`` for a float ``value`` and a fresh ``detail`` dict (not copied).

    Example:
        >>> make_score(0.5, {"tp": 1.0}).detail["tp"]
        1.0
    """
    if not _DIRECT or type(value) is not float:
        return Score(value, detail)
    s = _new(Score)
    d = s.__dict__
    d["value"] = value
    d["detail"] = MappingProxyType(detail)
    return s


def score_calls(pred: Any, golds: list[_GCall], ctx: _Ctx) -> Score:
    """Score the predicted calls of ``pred`` against prepared ``golds``.

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
    return _rows([gc.tool for gc in golds], claimed, rest_g, left_p, ctx)


def _rows(
    tools: list[str],
    claimed: list[tuple[int, float] | None],
    rest_g: list[_GCall],
    left_p: list[_PCall],
    ctx: _Ctx,
) -> Score:
    """Assign what exact claiming left, then tally every pair in gold order."""
    group: dict[int, tuple[int, _Pair]] = {}
    if len(rest_g) == 1 and len(left_p) == 1 and rest_g[0].tool == left_p[0].tool:
        # One call left on each side, of one tool: _assign_group's 1x1 rule without the grouping.
        gc = rest_g[0]
        pc = left_p[0]
        pr = _compare(pc, gc, ctx)
        if pr.exact or pr.fp + pr.fn <= gc.mass + pc.mass:
            group[gc.index] = (pc.index, pr)
            missing, extra = [], []
        else:
            missing, extra = rest_g, left_p
    elif rest_g and left_p:
        out, missing, extra = _assign_rest(left_p, rest_g, ctx)
        for gc, pc, pr in out:
            group[gc.index] = (pc.index, pr)
    else:
        missing, extra = rest_g, left_p
    return _tally(_gold_order(tools, claimed, group), _call_rows(missing), _call_rows(extra))


def _gold_order(
    tools: list[str],
    claimed: list[tuple[int, float] | None],
    pairs: dict[int, tuple[int, Any]],
) -> list[_Row]:
    """The assigned pairs as rows in gold order: claimed exactly (the predicted index and mass)
    or paired after claiming (``pairs``: gold index -> predicted index and the comparison)."""
    rows: list[_Row] = []
    for gi, c in enumerate(claimed):
        if c is not None:
            rows.append((gi, tools[gi], c[0], c[1]))
        else:
            g = pairs.get(gi)
            if g is not None:
                rows.append((gi, tools[gi], g[0], g[1]))
    return rows


def _call_rows(calls: list[_GCall] | list[_PCall]) -> list[CallRow]:
    return [(c.index, c.tool, c.args, c.mass) for c in calls]


#: One assigned pair, in gold order: (gold index, tool, predicted index, the predicted call's
#: mass for a pair claimed exactly by key, else the pair's comparison).
_Row = tuple[int, str, int, "float | _Pair"]


def _tally(rows: list[_Row], missing: list[CallRow], extra: list[CallRow]) -> Score:
    """Sum the weighted TP/FP/FN of an assignment and explain it (every scoring path).

    ``missing`` and ``extra`` are ``(index, tool, args, mass)`` rows in index order.
    """
    tp = fp = fn = 0.0
    matched: list[tuple[int, int, str, bool]] = []
    inexact: list[tuple[str, int, int, Any]] = []  # pairs with argument errors, in gold order
    n_exact = 0
    for gi, tool, pi, pr in rows:
        if type(pr) is float:  # claimed by key: TP = the predicted call's mass
            tp += pr
            n_exact += 1
            matched.append((gi, pi, tool, True))
            continue
        tp += pr.tp  # type: ignore[union-attr]
        fp += pr.fp  # type: ignore[union-attr]
        fn += pr.fn  # type: ignore[union-attr]
        if pr.exact:  # type: ignore[union-attr]
            n_exact += 1
            matched.append((gi, pi, tool, True))
        else:
            matched.append((gi, pi, tool, False))
            inexact.append((tool, gi, pi, pr))
    miss = []
    for gi, tool, args, mass in missing:
        fn += mass
        miss.append((gi, tool, dict(args), mass))
    ext = []
    for pi, tool, args, mass in extra:
        fp += mass
        # (a malformed call's arguments are empty and immutable, and carry its reason)
        ext.append((pi, tool, args if tool == MALFORMED_TOOL else dict(args), mass))
    valid = not miss and not ext and n_exact == len(matched)
    return tool_score(
        tp, fp, fn, valid, _explain, (valid, matched, n_exact, miss, ext, inexact, tp, fp, fn)
    )


def _explain(
    valid: bool,
    matched: list[tuple[int, int, str, bool]],
    n_exact: int,
    miss: Sequence[CallRow],
    ext: Sequence[CallRow],
    inexact: list[tuple[str, int, int, Any]],
    tp: float,
    fp: float,
    fn: float,
    f1: float,
) -> dict[str, Any]:
    """The written part of :func:`_tally`'s detail: reason and rows."""
    wrong: list[WrongRow] = [
        (tool, gi, pi, a)
        for tool, gi, pi, pr in inexact
        for a in pr.verdicts
        if a.verdict != "match"
    ]
    return {
        "reason": reason_text(valid, len(matched), n_exact, miss, ext, wrong, tp, fp, fn, f1),
        "matched": [
            {"gold": gi, "pred": pi, "tool": tool, "exact": exact}
            for gi, pi, tool, exact in matched
        ],
        "missing": [_missing_row(*c) for c in miss],
        "extra": [_extra_row(*c) for c in ext],
        "wrong_args": [_wrong_row(*w) for w in wrong],
    }


def _perfect(calls: Sequence[Any], claimed: list[tuple[int, float] | None]) -> Score:
    """Every gold call claimed exactly, nothing extra: the Score, its explanation written lazily.

    ``calls`` are the gold calls (anything with a ``tool``), in order, not to be changed later.
    """
    tp = 0.0
    for c in claimed:
        tp += c[1]  # type: ignore[index]
    return tool_score(tp, 0.0, 0.0, True, _explain_perfect, (calls, claimed, tp))


def _explain_perfect(
    calls: Sequence[Any], claimed: list[tuple[int, float] | None], tp: float, f1: float
) -> dict[str, Any]:
    """The written part of :func:`_perfect`'s detail: reason and rows."""
    n = len(claimed)
    return {
        "reason": (
            f"valid: {n} of {n} gold call(s) matched exactly; "
            f"weighted TP {tp:g}, FP 0, FN 0, F1 {f1:.4f}"
        ),
        "matched": [
            {"gold": gi, "pred": c[0], "tool": x.tool, "exact": True}  # type: ignore[index]
            for gi, (x, c) in enumerate(zip(calls, claimed))
        ],
        "missing": [],
        "extra": [],
        "wrong_args": [],
    }


#: The eager keys of a tool-call Score, in order, for a valid and an invalid episode (``tp``,
#: ``fp`` and ``fn`` are set per episode).
_EAGER = {
    valid: {
        "tp": 0.0,
        "fp": 0.0,
        "fn": 0.0,
        "passed": valid,
        "valid": valid,
        "higher_is_better": True,
    }
    for valid in (True, False)
}


def tool_score(
    tp: float,
    fp: float,
    fn: float,
    valid: bool,
    explain: Callable[..., dict[str, Any]],
    args: tuple[Any, ...],
) -> Score:
    """A tool-call Score: its F1 now; its detail when first read (:func:`~ek.base.deferred_score`),
    and then the counts and verdict at once and ``explain(*args, f1)`` (reason and rows) when
    first read in turn. The one place every scoring path builds its Score.

    Example:
        >>> s = tool_score(2.0, 1.0, 1.0, False, lambda f1: {"reason": f"F1 {f1}"}, ())
        >>> s.value, s.detail["tp"], s.reason, list(s.detail)[-1]
        (0.6666666666666666, 2.0, 'F1 0.6666666666666666', 'reason')
    """
    # The counts are sums of costs the grammar checked finite and >= 0: only an overflow to
    # infinity is left for f1_score to reject. Otherwise this is f1_score's own formula.
    denom = 2.0 * tp + fp + fn
    if denom < _INF:
        f1 = 1.0 if denom == 0 else 2.0 * tp / denom
    else:
        f1 = f1_score(tp, fp, fn)
    return deferred_score(f1, _detail, (tp, fp, fn, valid, explain, args, f1))


def _detail(
    tp: float,
    fp: float,
    fn: float,
    valid: bool,
    explain: Callable[..., dict[str, Any]],
    args: tuple[Any, ...],
    f1: float,
) -> LazyDetail:
    """A tool-call Score's detail: the counts and verdict, ``explain(*args, f1)`` on first use."""
    d = LazyDetail(_EAGER[valid], explain, (*args, f1))
    d["tp"] = tp
    d["fp"] = fp
    d["fn"] = fn
    return d


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
    return _tally(rows, _call_rows(missing), _call_rows(extra))
