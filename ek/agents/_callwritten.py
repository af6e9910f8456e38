"""Scoring tool calls on the calls as written: :class:`~ek.agents.toolcalls.ToolCallMetric`'s hot
path for a plain (uncached) gold, preparing only what the episode needs.

1. :func:`_claim`: exact pairs are claimed on the raw calls, argument by argument. For values
   of the types in :data:`_ATOMS` (and flat lists or tuples of them), canonical equality is
   decided on the values as written: ``==`` for two values of one type (strings through the
   canonicaliser's memo, NaN equal to NaN), a bool never equal to a number, an int equal to the
   float of the same value. So a predicted call claims the gold call canonical-key claiming
   would pick without either being prepared. Whenever that cannot be decided (a tool with a
   schema, a call that is not a Step, a value of another type) it gives up and the metric
   prepares everything.
2. :func:`_count_left`: when at most one gold and one predicted call per tool are left, they are
   counted argument by argument from the raw values, the way :func:`~ek.agents._compare._compare`
   counts them; their verdicts are computed (by ``_compare``) only when the explanation is read.
3. Otherwise the leftovers are prepared and assigned by :func:`ek.agents._callscore._rows`.

The Score is the one of preparing everything (``score_calls(pred, _prepare_gold(gold, ctx),
ctx)``), value, detail and errors: ``tests/test_toolcalls_written.py`` checks that
differentially and ``tests/test_toolcalls_golden.py`` pins the outputs.

Example:
    >>> from ek.agents._callargs import _Ctx
    >>> from ek.canon import resolve_canonicalizer
    >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
    >>> s = _claim([Step("f", {"q": "Paris "})], [Step("f", {"q": "paris"})], ctx)
    >>> s.value, s.detail["matched"]
    (1.0, [{'gold': 0, 'pred': 0, 'tool': 'f', 'exact': True}])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ek.agents._calls import _gold_call, _pcall, _pred_args
from ek.agents._callscore import (
    _explain,
    _explain_perfect,
    _perfect,
    _rows,
    tool_score,
)
from ek.agents._compare import _compare
from ek.agents._gold import GoldCall
from ek.agents.base import Step
from ek.agents.callshape import MALFORMED_TOOL

if TYPE_CHECKING:
    from ek.agents._callargs import _Ctx, _Tool
    from ek.agents._callreport import CallRow
    from ek.agents._compare import _Pair
    from ek.base import Score

__all__ = ["_claim"]


#: Leaf types whose canonical equality :func:`_equal` decides on the values as written, under
#: the built-in canonicalisers (strings through the memo; a bool is never a number).
_ATOMS = frozenset({str, int, float, bool, type(None)})
_NUMBERS = frozenset({int, float})
_SEQS = frozenset({list, tuple})
_NO = object()  # "no such argument"


def _equal(v: Any, w: Any, ctx: _Ctx) -> bool | None:
    """Are ``v`` and ``w`` canonically equal? ``None`` when that is not decided here (values
    other than atoms and flat lists or tuples of atoms, which only the full path judges)."""
    tv = type(v)
    tw = type(w)
    if tv is tw:
        if tv is list and len(v) == len(w):  # the common case first: equal lists of str/int
            for x, y in zip(v, w):
                tx = type(x)
                if tx is not type(y) or (tx is not str and tx is not int) or x != y:
                    break
            else:
                return True
        if tv is str:
            if v == w:
                return True
            memo = ctx.memo  # ctx.cs inline: this runs for every unequal pair of strings
            cv = memo.get(v)
            if cv is None:
                cv = ctx.new_cs(v)
            cw = memo.get(w)
            if cw is None:
                cw = ctx.new_cs(w)
            return bool(cv == cw)
        if tv is float:
            return v == w or (v != v and w != w)  # NaN is NaN
        if tv in _ATOMS:
            return bool(v == w)
    elif tv in _NUMBERS and tw in _NUMBERS:
        return bool(v == w)
    elif tv in _ATOMS and tw in _ATOMS:
        return False  # a bool is not a number; a string is neither
    if not (_flat(v) and _flat(w)):
        return None
    if len(v) != len(w):
        return False
    for x, y in zip(v, w):
        if type(x) is type(y) and x == y:
            continue  # atoms of one type: == is canonical equality (NaN is not == itself)
        if not _equal(x, y, ctx):
            return False
    return True


def _flat(v: Any) -> bool:
    """Is ``v`` a list or tuple of atoms?"""
    if type(v) not in _SEQS:
        return False
    for x in v:  # noqa: SIM110 (a loop: all() of a generator costs several times more here)
        if type(x) not in _ATOMS:
            return False
    return True


def _claim(pl: list[Any], gl: list[Any], ctx: _Ctx) -> Score | None:
    """Exact claiming on the calls as written, or ``None`` when that needs the full preparation.

    A predicted call claims the first unclaimed gold call of its tool that is canonically equal
    to it, as canonical-key claiming does, without preparing either. A call that
    is not a Step (a GoldCall on the gold side), a tool with a schema, an undecidable value or
    a malformed call returns ``None``: the caller prepares everything, and raises the usual
    errors in the usual order. Only the calls left unclaimed are prepared, or counted.
    """
    tools = ctx._tools
    by_tool: dict[str, list[int]] = {}
    for j, x in enumerate(gl):
        tx = type(x)
        if tx is not Step and tx is not GoldCall:
            return None
        t = x.tool
        b = by_tool.get(t)
        if b is None:
            by_tool[t] = [j]
        else:
            b.append(j)
    if MALFORMED_TOOL in by_tool:  # a reserved name in the gold: the full path raises
        return None
    claimed: list[int | None] = [None] * len(gl)  # gold index -> the predicted call claiming it
    left: list[tuple[int, str, Mapping[str, Any], _Tool]] = []
    r: bool | None
    tp = 0.0  # the claimed masses, in predicted order (used when that order gives the same sum)
    try:
        for i, x in enumerate(pl):
            if type(x) is not Step:
                return None
            t = x.tool
            a = x.args
            info = tools.get(t)
            if info is None:
                info = ctx.tool(t)
            if info.fields is not None:
                return None
            cands = by_tool.get(t)
            if cands:
                n = len(a)
                for j in cands:
                    ga = gl[j].args
                    if len(ga) != n:
                        continue
                    # Canonically equal? One canonically different argument settles it (not
                    # this gold call), whatever the others hold; an undecidable one gives up.
                    try:
                        for k, v in a.items():
                            w = ga[k]
                            tv = type(v)
                            if tv is type(w) and (tv is str or tv is int) and v == w:
                                continue  # the common case, decided inline
                            r = _equal(v, w, ctx)
                            if not r:
                                break
                        else:
                            r = True
                    except KeyError:  # other argument names: not this gold call
                        r = False
                    if r:
                        cands.remove(j)
                        claimed[j] = i
                        tp += info.nmass[n]
                        break
                    if r is None:
                        return None
                else:
                    left.append((i, t, a, info))
                continue
            if t == MALFORMED_TOOL:  # a malformed call (its reason is read on the full path)
                return None
            left.append((i, t, a, info))
    except Exception:  # an odd value (a strange ==): the full path
        return None
    calls = tuple(gl)
    if not left and None not in claimed:
        if ctx.integral:  # (_perfect without its summing loop)
            return tool_score(tp, 0.0, 0.0, True, _explain_claimed, (calls, claimed, tp))
        return _perfect(calls, _with_masses(calls, claimed, ctx))
    counted = _count_left(calls, by_tool, claimed, left, ctx, tp)
    if counted is not None:
        return counted
    g_tools = [x.tool for x in calls]
    rest_g = []
    for j, c in enumerate(claimed):
        if c is None:
            t = g_tools[j]
            info = tools.get(t)
            rest_g.append(_gold_call(j, t, calls[j].args, info or ctx.tool(t), ctx))
    left_p = []
    for i, t, a, info in left:
        fa, mass = _pred_args(i, t, a, info, ctx)
        left_p.append(_pcall(i, t, a, info, fa, None, mass))  # (no key: claiming is done)
    return _rows(g_tools, _with_masses(calls, claimed, ctx), rest_g, left_p, ctx)


def _with_masses(
    calls: tuple[Any, ...], claimed: list[int | None], ctx: _Ctx
) -> list[tuple[int, float] | None]:
    """``claimed`` as the (predicted index, mass) pairs the shared scoring code reads: a claimed
    pair has the gold call's argument names, so its mass is the gold call's."""
    tools = ctx._tools
    return [
        None if i is None else (i, tools[x.tool].nmass[len(x.args)]) for x, i in zip(calls, claimed)
    ]


def _explain_claimed(
    calls: tuple[Any, ...], claimed: list[int | None], tp: float, f1: float
) -> dict[str, Any]:
    """:func:`~ek.agents._callscore._explain_perfect` of :func:`_claim`'s claimed indices."""
    pairs = [None if i is None else (i, 0.0) for i in claimed]  # (the masses are not read)
    return _explain_perfect(calls, pairs, tp, f1)


def _countable(args: Mapping[str, Any]) -> bool:
    """Are all values atoms or flat lists/tuples of atoms (what :func:`_equal` decides)?"""
    for v in args.values():  # noqa: SIM110 (as in _flat)
        if type(v) not in _ATOMS and not _flat(v):
            return False
    return True


def _compared(
    i: int, t: str, a: Mapping[str, Any], j: int, ga: Mapping[str, Any], info: _Tool, ctx: _Ctx
) -> _Pair:
    """Predicted call ``i`` and gold call ``j`` prepared and compared (their verdicts, for an
    explanation: :func:`_count_left` counted them without)."""
    fa, mass = _pred_args(i, t, a, info, ctx)
    return _compare(_pcall(i, t, a, info, fa, None, mass), _gold_call(j, t, ga, info, ctx), ctx)


def _count_left(
    calls: tuple[Any, ...],
    by_tool: dict[str, list[int]],
    claimed: list[int | None],
    left: list[tuple[int, str, Mapping[str, Any], _Tool]],
    ctx: _Ctx,
    tp_claimed: float,
) -> Score | None:
    """Score what exact claiming left without preparing it, when that is simple: no tool with
    a predicted call left and more than one gold call left, or two predicted calls for its one
    (``by_tool`` holds the unclaimed gold calls), all of countable values, no schema. A pair
    is then counted argument by argument as
    :func:`_compare` counts it and kept by ``_assign_group``'s 1x1 rule, and the counts are
    summed as :func:`~ek.agents._callscore._tally` sums them (in any order when that gives the
    same floats, ``ctx.integral``: ``tp_claimed`` is then the claimed masses' sum); ``None``
    otherwise."""
    missing: list[CallRow] = []
    extra: list[CallRow] = []
    # gold index -> (predicted index, tp, fp, fn, exact, tool, predicted args, gold args, info)
    pairs: dict[int, tuple[Any, ...]] = {}
    paired: set[str] | None = None  # tools whose one unclaimed gold call was taken by a pair
    for i, t, a, info in left:
        rem = by_tool.get(t)
        if not rem:  # no gold call of its tool left: extra (unless another one took it)
            if (paired is not None and t in paired) or not _countable(a):
                return None
            extra.append((i, t, dict(a), info.nmass[len(a)]))
            continue
        if len(rem) > 1:
            return None
        j = rem.pop()
        if paired is None:
            paired = {t}
        else:
            paired.add(t)
        ga = calls[j].args
        dimp = info.dimp
        tp = info.weight
        fp = fn = 0.0
        n_match = 0
        n_out = len(ga)
        for k, gv in ga.items():  # every value is checked countable on the way
            pv = a.get(k, _NO)
            if pv is _NO:
                if type(gv) not in _ATOMS and not _flat(gv):
                    return None
                fn += dimp
                continue
            tv = type(pv)
            if tv is type(gv) and (tv is str or tv is int) and pv == gv:
                r: bool | None = True
            else:
                r = _equal(pv, gv, ctx)
                if r is None:
                    return None
            if r:
                tp += dimp
                n_match += 1
            else:
                fp += dimp
                fn += dimp
        for k, pv in a.items():
            if k not in ga:
                if type(pv) not in _ATOMS and not _flat(pv):
                    return None
                fp += dimp
                n_out += 1
        exact = fp == 0.0 and fn == 0.0 and n_match == n_out
        gmass = info.nmass[len(ga)]
        pmass = info.nmass[len(a)]
        if exact or fp + fn <= gmass + pmass:
            pairs[j] = (i, tp, fp, fn, exact, t, a, ga, info)
        else:
            missing.append((j, t, dict(ga), gmass))
            extra.append((i, t, dict(a), pmass))
    if claimed.count(None) > len(pairs) + len(missing):  # gold calls no predicted call wanted
        tools = ctx._tools
        for t, rem in by_tool.items():
            if rem:
                info = tools.get(t) or ctx.tool(t)
                if info.fields is not None:
                    return None
                for j in rem:
                    ga = calls[j].args
                    if not _countable(ga):
                        return None
                    missing.append((j, t, dict(ga), info.nmass[len(ga)]))
    tp = fp = fn = 0.0
    valid = True
    if ctx.integral:  # whole numbers: the sums are exact in any order
        tp = tp_claimed
        for pr in pairs.values():
            tp += pr[1]
            fp += pr[2]
            fn += pr[3]
            if not pr[4]:
                valid = False
    else:
        for j, c in enumerate(_with_masses(calls, claimed, ctx)):  # in gold order, as _tally
            if c is not None:
                tp += c[1]
            else:
                got = pairs.get(j)
                if got is not None:
                    tp += got[1]
                    fp += got[2]
                    fn += got[3]
                    if not got[4]:
                        valid = False
    if missing:
        valid = False
        fn = _add(fn, missing)
    if extra:
        valid = False
        fp = _add(fp, extra)
    return tool_score(
        tp, fp, fn, valid, _explain_left, (calls, claimed, pairs, missing, extra, tp, fp, fn, ctx)
    )


def _add(total: float, rows: list[CallRow]) -> float:
    """Sort missing or extra call rows by index and add their masses to ``total`` in order."""
    if len(rows) > 1:
        rows.sort(key=_first)
    for row in rows:
        total += row[3]
    return total


def _explain_left(
    calls: tuple[Any, ...],
    claimed: list[int | None],
    pairs: dict[int, tuple[Any, ...]],
    missing: list[CallRow],
    extra: list[CallRow],
    tp: float,
    fp: float,
    fn: float,
    ctx: _Ctx,
    f1: float,
) -> dict[str, Any]:
    """The written part of :func:`_count_left`'s detail: :func:`_explain` of its rows."""
    matched: list[tuple[int, int, str, bool]] = []
    inexact: list[tuple[str, int, int, Any]] = []
    n_exact = 0
    for j, c in enumerate(claimed):
        t = calls[j].tool
        if c is not None:
            matched.append((j, c, t, True))
            n_exact += 1
            continue
        pr = pairs.get(j)
        if pr is not None:
            i, _, _, _, exact, _, a, ga, info = pr
            matched.append((j, i, t, exact))
            if exact:
                n_exact += 1
            else:
                inexact.append((t, j, i, _compared(i, t, a, j, ga, info, ctx)))
    valid = not missing and not extra and n_exact == len(matched)
    return _explain(valid, matched, n_exact, missing, extra, inexact, tp, fp, fn, f1)


def _first(row: CallRow) -> int:
    return row[0]
