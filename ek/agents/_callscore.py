"""The :class:`~ek.base.Score` of a tool-call assignment, built straight from the assignment.

:func:`ek.agents.toolcalls.tool_call_score` turns a finished
:class:`~ek.agents.toolcalls.MatchResult` into a Score; :class:`~ek.agents.toolcalls.ToolCallMetric`
skips the intermediate objects instead, and does as little as the episode needs:

1. :func:`score_raw` / :func:`_claim_written`: exact pairs are claimed on the calls as written.
   For plain calls (values str/int/float/None or flat lists of them) ``==`` is canonical
   equality except for strings (compared through the canonicaliser's memo) and NaN, so a
   predicted call can claim the gold call canonical-key claiming would pick without either being
   prepared. Whenever that could differ (a non-plain call with the same argument names, a tool
   with a schema, a malformed call, an odd value) it gives up and everything is prepared.
2. :func:`_count_left`: when at most one gold and one predicted call per tool are left, all
   countable and schema-less, they are counted argument by argument from the raw values, the
   way :func:`~ek.agents._compare._compare` counts them; their verdicts are computed (by
   ``_compare``) only when the explanation is read.
3. Otherwise the leftovers are prepared and assigned (:func:`_rows`), as :func:`score_calls` does
   for a prepared (cached) gold.

Every Score's ``reason`` and rows are written on first read (:func:`~ek.agents._lazydetail.lazy_detail`);
``tp``/``fp``/``fn``/``passed``/``valid`` are there at once. The arguments of missing and extra
calls are copied at scoring time; argument values are held by reference (as the rows always
held them), so a value mutated in place between scoring and the first read of the explanation
shows up in it. The detail is the same, key for key and value for value, as preparing everything
(the same sums in the same order, the same words from :mod:`ek.agents._callreport`): a
characterisation test pins it and a differential test checks the fast paths against the full one.

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
from collections.abc import Mapping, Sequence
from dataclasses import fields
from functools import partial as _partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from ek.agents._callreport import _extra_row, _missing_row, _wrong_row, reason_text
from ek.agents._calls import (
    _as_list,
    _call_parts,
    _GCall,
    _gold_call,
    _iter_calls,
    _PCall,
    _pcall,
    _pred_args,
    _prepare_gold,
    _prepare_pred,
)
from ek.agents._compare import _compare
from ek.agents._gold import GoldCall
from ek.agents._lazydetail import LazyDetail, lazy_detail
from ek.agents._matching import _assign, _assign_rest
from ek.agents.base import Step
from ek.base import Score
from ek.fields import f1_score

if TYPE_CHECKING:
    from ek.agents._callargs import _Ctx, _Tool
    from ek.agents._callreport import CallRow, WrongRow
    from ek.agents._compare import _Pair

__all__ = ["make_score", "score_assignment", "score_calls", "score_raw"]

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


def score_raw(pred: Any, gold: Any, ctx: _Ctx) -> Score:
    """Score ``pred`` against unprepared ``gold`` (the metric's hot path for a plain gold).

    Same Score as ``score_calls(pred, _prepare_gold(gold, ctx), ctx)``; :func:`_claim_written`
    settles the common case without canonicalising anything.
    """
    gl = gold if type(gold) is list else _as_list(gold, "gold")
    pl = pred if type(pred) is list else _as_list(pred, "prediction")
    if not ctx.leaf_canon:
        s = _claim_written(pl, gl, ctx)
        if s is not None:
            return s
    return score_calls(pl, _prepare_gold(gl, ctx), ctx)


#: Value types whose equality is their canonical equality under the built-in canonicalisers
#: (bool is not here: ``True == 1``; containers other than a flat list are not: ``[True] == [1]``).
_PLAIN = frozenset({str, int, float, type(None)})
_all_plain = _PLAIN.issuperset


def _plain(args: Mapping[str, Any]) -> bool:
    """Are the values of ``args`` plain: str/int/float/None, or flat lists of those?"""
    for v in args.values():
        if type(v) not in _PLAIN and not (type(v) is list and _all_plain(map(type, v))):
            return False
    return True


def _same_leaf(v: Any, w: Any, ctx: _Ctx) -> bool:
    """Canonical equality of two plain scalars that are not ``==``."""
    if type(v) is str and type(w) is str:
        memo = ctx.memo
        cv = memo.get(v)
        if cv is None:
            cv = ctx.cs(v)
        cw = memo.get(w)
        if cw is None:
            cw = ctx.cs(w)
        return bool(cv == cw)
    return type(v) is float and type(w) is float and v != v and w != w  # NaN is NaN


def _same(a: Mapping[str, Any], ga: Mapping[str, Any], ctx: _Ctx) -> bool:
    """Canonical equality of two plain argument mappings with the same names."""
    for k, v in a.items():
        w = ga[k]
        if v == w:
            continue
        if type(v) is list:
            if type(w) is not list or len(v) != len(w):
                return False
            for x, y in zip(v, w):
                if x != y and not _same_leaf(x, y, ctx):
                    return False
        elif not _same_leaf(v, w, ctx):
            return False
    return True


def _claim_written(pl: list[Any], gl: list[Any], ctx: _Ctx) -> Score | None:
    """Exact claiming on the calls as written, or ``None`` when that needs the full preparation.

    A predicted call claims the first unclaimed gold call of its tool that is canonically equal
    to it, as canonical-key claiming does, but decides that without preparing either call when
    both are plain (values str/int/float/None or flat lists of them, where ``==`` is canonical
    equality except for strings, which are compared through the canonicaliser's memo, and NaN).
    Gold calls with other argument names can never be equal and are passed over. Anything else
    (a non-plain call with the same argument names, a tool with a schema, a malformed call, an
    odd value) returns ``None``: the caller prepares everything, and raises the usual errors in
    the usual order. Only the calls left unclaimed are prepared.
    """
    tools = ctx._tools
    claimed: list[tuple[int, float] | None] = [None] * len(gl)
    left: list[tuple[int, str, Mapping[str, Any], _Tool]] = []
    by_tool: dict[str, list[int]] = {}
    g_tools: list[str] = []
    g_args: list[Mapping[str, Any]] = []
    g_plain: list[bool | None] = [None] * len(gl)
    try:
        for j, x in enumerate(gl):
            tx = type(x)
            if tx is Step or tx is GoldCall:
                t = x.tool
                a = x.args
            else:
                t, a = _call_parts(x, j, "gold")
                g_plain[j] = False  # argument names not checked: only through _prepare_gold
            b = by_tool.get(t)
            if b is None:
                by_tool[t] = [j]
            else:
                b.append(j)
            g_tools.append(t)
            g_args.append(a)
        for i, x in enumerate(pl):
            if type(x) is Step:
                t = x.tool
                a = x.args
                pp = None
            else:
                t, a = _call_parts(x, i, "predicted")
                pp = False
            info = tools.get(t)
            if info is None:
                info = ctx.tool(t)
            if info.fields is not None:
                return None
            cands = by_tool.get(t)
            if cands:
                for pos, j in enumerate(cands):
                    ga = g_args[j]
                    eq = ga == a
                    if not eq and ga.keys() != a.keys():
                        continue
                    if pp is None:
                        vals = a.values()
                        pp = _all_plain(map(type, vals)) or _plain(a)
                    gp = g_plain[j]
                    if gp is None:
                        vals = ga.values()
                        gp = g_plain[j] = _all_plain(map(type, vals)) or _plain(ga)
                    if not (pp and gp):
                        return None
                    if eq or _same(a, ga, ctx):
                        del cands[pos]
                        n = len(a)
                        ms = info.nmass
                        claimed[j] = (i, ms[n] if n < len(ms) else _mass(info, n))
                        break
                else:
                    left.append((i, t, a, info))
                continue
            left.append((i, t, a, info))
    except Exception:  # a malformed call or an odd value (cyclic, strange ==): the full path
        return None
    if not left and None not in claimed:
        return _perfect(g_tools, claimed)
    counted = _count_left(pl, gl, g_tools, g_args, claimed, left, ctx)
    if counted is not None:
        return counted
    rest_g = []
    for j, c in enumerate(claimed):
        if c is None:
            t = g_tools[j]
            info = tools.get(t)
            rest_g.append(_gold_call(j, t, g_args[j], info or ctx.tool(t), ctx))
    left_p = []
    for i, t, a, info in left:
        fa, mass = _pred_args(i, t, a, info, ctx)
        left_p.append(_pcall(i, t, a, info, fa, None, mass))  # (no key: claiming is done)
    return _rows(g_tools, claimed, rest_g, left_p, ctx)


#: Value types the counting path compares itself (bool with its own rule; lists must be flat).
_COUNTABLE = frozenset({str, int, float, type(None), bool})
_all_countable = _COUNTABLE.issuperset


def _countable(args: Mapping[str, Any]) -> bool:
    if _all_countable(map(type, args.values())):
        return True
    for v in args.values():
        if type(v) not in _COUNTABLE and not (type(v) is list and _all_plain(map(type, v))):
            return False
    return True


def _equal(v: Any, w: Any, ctx: _Ctx) -> bool:
    """Canonical equality of two countable values (what ``_match`` says of their frozen forms)."""
    tv = type(v)
    tw = type(w)
    if tv is bool or tw is bool:
        return tv is tw and v == w
    if tv is list or tw is list:
        if tv is not tw or len(v) != len(w):
            return False
        return all(x == y or _same_leaf(x, y, ctx) for x, y in zip(v, w))
    return bool(v == w) or _same_leaf(v, w, ctx)


class _CountedPair(NamedTuple):
    """A pair's weighted counts; its per-argument verdicts are computed by :func:`_compare` when
    read (only an explanation reads them, once)."""

    tp: float
    fp: float
    fn: float
    exact: bool
    call: tuple[Any, ...]

    @property
    def verdicts(self) -> tuple[Any, ...]:
        i, t, a, j, ga, info, ctx = self.call
        fa, mass = _pred_args(i, t, a, info, ctx)
        pc = _pcall(i, t, a, info, fa, None, mass)
        return _compare(pc, _gold_call(j, t, ga, info, ctx), ctx).verdicts


def _count_left(
    pl: list[Any],
    gl: list[Any],
    g_tools: list[str],
    g_args: list[Mapping[str, Any]],
    claimed: list[tuple[int, float] | None],
    left: list[tuple[int, str, Mapping[str, Any], _Tool]],
    ctx: _Ctx,
) -> Score | None:
    """Score what exact claiming left without preparing it, when that is simple: at most one
    gold and one predicted call left per tool, every one a Step/GoldCall of countable values
    (str/int/float/None/bool, flat lists) on a tool without a schema. A pair is then counted
    argument by argument as :func:`_compare` counts it and kept by ``_assign_group``'s 1x1 rule;
    ``None`` otherwise."""
    tools = ctx._tools
    by_tool: dict[str, list[Any]] = {}
    for j, c in enumerate(claimed):
        if c is None:
            t = g_tools[j]
            ga = g_args[j]
            info = tools.get(t) or ctx.tool(t)
            if (
                t in by_tool
                or info.fields is not None
                or (type(gl[j]) is not Step and type(gl[j]) is not GoldCall)
                or not (_all_countable(map(type, ga.values())) or _countable(ga))
            ):
                return None
            by_tool[t] = [j, None]
    for p in left:
        i, t, a, _ = p
        if type(pl[i]) is not Step or not (_all_countable(map(type, a.values())) or _countable(a)):
            return None
        b = by_tool.get(t)
        if b is None:
            by_tool[t] = [None, p]
        elif b[1] is None:
            b[1] = p
        else:
            return None
    missing: list[CallRow] = []
    extra: list[CallRow] = []
    pairs: dict[int, tuple[int, _CountedPair]] = {}
    for t, (j, p) in by_tool.items():
        if p is None:
            info = tools.get(t) or ctx.tool(t)
            ga = g_args[j]
            n = len(ga)
            missing.append((j, t, ga, info.nmass[n] if n < len(info.nmass) else _mass(info, n)))
            continue
        i, _, a, info = p
        n = len(a)
        pmass = info.nmass[n] if n < len(info.nmass) else _mass(info, n)
        if j is None:
            extra.append((i, t, a, pmass))
            continue
        ga = g_args[j]
        dimp = info.dimp
        tp = info.weight
        fp = fn = 0.0
        n_match = 0
        n_out = len(ga)
        for k, gv in ga.items():
            if k in a:
                pv = a[k]
                if (pv == gv and type(pv) is not bool and type(gv) is not bool) or _equal(
                    pv, gv, ctx
                ):
                    tp += dimp
                    n_match += 1
                else:
                    fp += dimp
                    fn += dimp
            else:
                fn += dimp
        for k in a:
            if k not in ga:
                fp += dimp
                n_out += 1
        exact = fp == 0.0 and fn == 0.0 and n_match == n_out
        n = len(ga)
        gmass = info.nmass[n] if n < len(info.nmass) else _mass(info, n)
        if exact or fp + fn <= gmass + pmass:
            pairs[j] = (i, _V(_CountedPair, (tp, fp, fn, exact, (i, t, a, j, ga, info, ctx))))
        else:
            missing.append((j, t, ga, gmass))
            extra.append((i, t, a, pmass))
    rows: list[_Row] = []
    for gi, c in enumerate(claimed):
        if c is not None:
            rows.append((gi, g_tools[gi], c[0], c[1]))
        else:
            pr = pairs.get(gi)
            if pr is not None:
                rows.append((gi, g_tools[gi], pr[0], pr[1]))  # type: ignore[arg-type]
    if len(missing) > 1:
        missing.sort(key=_first)
    if len(extra) > 1:
        extra.sort(key=_first)
    return _tally(rows, missing, extra)


def _first(row: CallRow) -> int:
    return row[0]


def _mass(info: _Tool, n: int) -> float:
    mass = info.weight
    for _ in range(n):
        mass += info.dimp
    return mass


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
        return _perfect([gc.tool for gc in golds], claimed)
    return _rows([gc.tool for gc in golds], claimed, rest_g, left_p, ctx)


def _rows(
    tools: list[str],
    claimed: list[tuple[int, float] | None],
    rest_g: list[_GCall],
    left_p: list[_PCall],
    ctx: _Ctx,
) -> Score:
    """Assign what exact claiming left, then tally every pair in gold order."""
    group: dict[int, tuple[_PCall, _Pair]] = {}
    if len(rest_g) == 1 and len(left_p) == 1 and rest_g[0].tool == left_p[0].tool:
        # One call left on each side, of one tool: _assign_group's 1x1 rule without the grouping.
        gc = rest_g[0]
        pc = left_p[0]
        pr = _compare(pc, gc, ctx)
        if pr.exact or pr.fp + pr.fn <= gc.mass + pc.mass:
            group[gc.index] = (pc, pr)
            missing, extra = [], []
        else:
            missing, extra = rest_g, left_p
    elif rest_g and left_p:
        out, missing, extra = _assign_rest(left_p, rest_g, ctx)
        for gc, pc, pr in out:
            group[gc.index] = (pc, pr)
    else:
        missing, extra = rest_g, left_p
    rows: list[_Row] = []
    for gi, c in enumerate(claimed):
        if c is not None:
            rows.append((gi, tools[gi], c[0], c[1]))
        else:
            g = group.get(gi)
            if g is not None:
                rows.append((gi, tools[gi], g[0].index, g[1]))
    return _tally(rows, _call_rows(missing), _call_rows(extra))


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
        ext.append((pi, tool, dict(args), mass))
    if type(tp) is float and 0.0 <= tp < _INF and 0.0 <= fp < _INF and 0.0 <= fn < _INF:
        denom = 2.0 * tp + fp + fn
        f1 = 1.0 if denom == 0 else 2.0 * tp / denom  # f1_score's formula, inputs known valid
    else:
        f1 = f1_score(tp, fp, fn)
    valid = not miss and not ext and n_exact == len(matched)

    return make_score(
        f1,
        lazy_detail(
            {
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "passed": valid,
                "valid": valid,
                "higher_is_better": True,
            },
            _partial(_explain, valid, matched, n_exact, miss, ext, inexact, tp, fp, fn, f1),
        ),
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


def _perfect(tools: list[str], claimed: list[tuple[int, float] | None]) -> Score:
    """Every gold call claimed exactly, nothing extra: the Score, its explanation written lazily."""
    tp = 0.0
    for c in claimed:
        tp += c[1]  # type: ignore[index]
    if type(tp) is float and 0.0 <= tp < _INF:
        f1 = 1.0 if tp == 0 else 2.0 * tp / (2.0 * tp + 0.0 + 0.0)
    else:
        f1 = f1_score(tp, 0.0, 0.0)

    d = _dict_new(LazyDetail)
    _update(d, _PERFECT)
    d["tp"] = tp
    d._fill = _partial(_explain_perfect, tools, claimed, tp, f1)
    return make_score(f1, d)


def _explain_perfect(
    tools: list[str], claimed: list[tuple[int, float] | None], tp: float, f1: float
) -> dict[str, Any]:
    """The written part of :func:`_perfect`'s detail: reason and rows."""
    n = len(claimed)
    return {
        "reason": (
            f"valid: {n} of {n} gold call(s) matched exactly; "
            f"weighted TP {tp:g}, FP 0, FN 0, F1 {f1:.4f}"
        ),
        "matched": [
            {"gold": gi, "pred": c[0], "tool": tool, "exact": True}  # type: ignore[index]
            for gi, (tool, c) in enumerate(zip(tools, claimed))
        ],
        "missing": [],
        "extra": [],
        "wrong_args": [],
    }


#: The eager keys of a perfect episode's detail, in order (``tp`` is set per episode).
_PERFECT = {
    "tp": 0.0,
    "fp": 0.0,
    "fn": 0.0,
    "passed": True,
    "valid": True,
    "higher_is_better": True,
}
_dict_new = dict.__new__
_update = dict.update
_V = tuple.__new__  # a NamedTuple without its Python-level __new__


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
