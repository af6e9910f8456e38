"""Scoring tool calls on the calls as written: :class:`~ek.agents.toolcalls.ToolCallMetric`'s hot
path for a plain (uncached) gold, preparing only what the episode needs.

1. :func:`_claim_written`: exact pairs are claimed on the raw calls. For plain calls (values
   str/int/float/None or flat lists of them) ``==`` is canonical equality except for strings
   (compared through the canonicaliser's memo) and NaN, so a predicted call can claim the gold
   call canonical-key claiming would pick without either being prepared. Whenever that could
   differ (a non-plain call with the same argument names, a tool with a schema, a malformed
   call, an odd value) it gives up and :func:`score_raw` prepares everything.
2. :func:`_count_left`: when at most one gold and one predicted call per tool are left, all
   countable and schema-less, they are counted argument by argument from the raw values, the way
   :func:`~ek.agents._compare._compare` counts them; their verdicts are computed (by ``_compare``)
   only when the explanation is read.
3. Otherwise the leftovers are prepared and assigned by :func:`ek.agents._callscore._rows`.

The Score is the one of preparing everything (``score_calls(pred, _prepare_gold(gold, ctx),
ctx)``), value, detail and errors: ``tests/test_toolcalls_written.py`` checks that
differentially and ``tests/test_toolcalls_golden.py`` pins the outputs.

Example:
    >>> from ek.agents._callargs import _Ctx
    >>> from ek.agents.base import Step
    >>> from ek.canon import resolve_canonicalizer
    >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
    >>> s = score_raw([Step("f", {"q": "Paris "})], [Step("f", {"q": "paris"})], ctx)
    >>> s.value, s.detail["matched"]
    (1.0, [{'gold': 0, 'pred': 0, 'tool': 'f', 'exact': True}])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ek.agents._calls import _as_list, _call_parts, _gold_call, _pcall, _pred_args, _prepare_gold
from ek.agents._callscore import _gold_order, _perfect, _rows, _tally, score_calls
from ek.agents._compare import _V, _compare
from ek.agents._gold import GoldCall
from ek.agents.base import Step

if TYPE_CHECKING:
    from ek.agents._callargs import _Ctx, _Tool
    from ek.agents._callreport import CallRow
    from ek.base import Score

__all__ = ["score_raw"]


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


def _plain(args: Mapping[str, Any]) -> bool:
    """Are the values of ``args`` plain: str/int/float/None, or flat lists of those?"""
    for v in args.values():
        if type(v) not in _PLAIN and not (type(v) is list and _flat(v)):
            return False
    return True


def _flat(v: list[Any]) -> bool:
    """Is every element of ``v`` plain? (Not ``issuperset(map(type, v))``: that builds a set.)"""
    return all(type(x) in _PLAIN for x in v)


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
        if v != w and not _equal(v, w, ctx):  # plain values: == is canonical equality but for
            return False  # strings and NaN
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
                        pp = _plain(a)
                    gp = g_plain[j]
                    if gp is None:
                        gp = g_plain[j] = _plain(ga)
                    if not (pp and gp):
                        return None
                    if eq or _same(a, ga, ctx):
                        del cands[pos]
                        claimed[j] = (i, info.nmass[len(a)])
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


def _countable(args: Mapping[str, Any]) -> bool:
    for v in args.values():
        if type(v) not in _COUNTABLE and not (type(v) is list and _flat(v)):
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
                or not _countable(ga)
            ):
                return None
            by_tool[t] = [j, None]
    for p in left:
        i, t, a, _ = p
        if type(pl[i]) is not Step or not _countable(a):
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
    pairs: dict[int, tuple[int, Any]] = {}
    for t, (j, p) in by_tool.items():
        if p is None:
            info = tools.get(t) or ctx.tool(t)
            ga = g_args[j]
            missing.append((j, t, ga, info.nmass[len(ga)]))
            continue
        i, _, a, info = p
        pmass = info.nmass[len(a)]
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
                if _equal(pv, gv, ctx):
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
        gmass = info.nmass[len(ga)]
        if exact or fp + fn <= gmass + pmass:
            pairs[j] = (i, _V(_CountedPair, (tp, fp, fn, exact, (i, t, a, j, ga, info, ctx))))
        else:
            missing.append((j, t, ga, gmass))
            extra.append((i, t, a, pmass))
    if len(missing) > 1:
        missing.sort(key=_first)
    if len(extra) > 1:
        extra.sort(key=_first)
    return _tally(_gold_order(g_tools, claimed, pairs), missing, extra)


def _first(row: CallRow) -> int:
    return row[0]
