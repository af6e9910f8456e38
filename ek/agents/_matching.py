"""The multiset matcher: assign predicted calls to gold calls before anything is counted.

Exact-argument matches are claimed first (by canonical key, a multiset intersection); the rest,
inside each tool-name group, by a min-cost assignment (:func:`ek.agents._assignment.hungarian`)
that first maximises the number of exact pairs and then minimises the weighted argument errors,
"leave both unmatched" always being an option. Never greedy first-fit (DESIGN rule 3).

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> from ek.agents._calls import _prepare_gold, _prepare_pred
    >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
    >>> preds = _prepare_pred([{"name": "f", "args": {"x": 2}}, {"name": "f", "args": {"x": 1}}], ctx)
    >>> golds = _prepare_gold([{"name": "f", "args": {"x": 1}}, {"name": "f", "args": {"x": 3}}], ctx)
    >>> pairs, missing, extra = _assign(preds, golds, ctx)
    >>> [(gi, pc.index, pr is None) for gi, _, pc, pr in pairs], missing, extra
    ([(0, 1, True), (1, 0, False)], [], [])
"""

from __future__ import annotations

import math
from typing import Any

from ek.agents._assignment import hungarian
from ek.agents._callargs import _Ctx
from ek.agents._callresults import CallMatch, MatchResult, UnmatchedCall
from ek.agents._calls import _GCall, _PCall
from ek.agents._compare import _compare, _exact_pair, _Pair
from ek.fields import FieldCounts

__all__ = ["_Objective", "_assign", "_assign_group", "_assign_rest", "_match_prepared"]

#: Pair cost for the assignment: "f1" = the pair's FP + FN (what ToolCallMetric counts), "edit" =
#: the importance of the differing arguments (what TrajectoryMetric counts).
_Objective = str


def _assign_group(
    preds: list[_PCall],
    golds: list[_GCall],
    ctx: _Ctx,
    *,
    objective: _Objective,
    extra_cost: bool,
    pairs_out: list[tuple[_GCall, _PCall, _Pair]],
    cache: dict[tuple[int, int], _Pair] | None = None,
) -> tuple[list[_GCall], list[_PCall]]:
    """Assign within one tool-name group by a min-cost assignment; returns what is left."""
    # (Exact matches of literal gold calls were claimed before, in _match_prepared.)
    if not golds or not preds:
        return golds, preds
    # 2. the rest by a maximum bipartite matching: exact pairs first (a bonus larger than any
    #    total cost), then the lowest total cost, with "leave both unmatched" always allowed.
    n, m = len(golds), len(preds)
    cmp: list[list[_Pair]] = []
    for gc in golds:
        prow: list[_Pair] = []
        for pc in preds:
            if cache is not None:
                key = (gc.index, pc.index)
                pr = cache.get(key)
                if pr is None:
                    pr = cache[key] = _compare(pc, gc, ctx)
            else:
                pr = _compare(pc, gc, ctx)
            prow.append(pr)
        cmp.append(prow)
    if n == 1 and m == 1:
        pr = cmp[0][0]
        pair_c = pr.fp + pr.fn if objective == "f1" else pr.cost
        alone = golds[0].mass + (preds[0].mass if extra_cost else 0.0)
        if pr.exact or pair_c <= alone:
            pairs_out.append((golds[0], preds[0], pr))
            return [], []
        return golds, preds
    ec = [pc.mass if extra_cost else 0.0 for pc in preds]
    pc_mat = [[(pr.fp + pr.fn if objective == "f1" else pr.cost) for pr in row] for row in cmp]
    big = 1.0 + sum(g.mass for g in golds) + sum(ec) + sum(max(r) for r in pc_mat)
    inf = math.inf
    mat: list[list[float]] = []
    for i in range(n):
        costs = [pc_mat[i][j] - ec[j] - (big if cmp[i][j].exact else 0.0) for j in range(m)]
        dummy = [inf] * n
        dummy[i] = golds[i].mass
        mat.append(costs + dummy)
    cols = hungarian(mat)
    left_g = []
    taken = set()
    for i, j in enumerate(cols):
        if j < m:
            pairs_out.append((golds[i], preds[j], cmp[i][j]))
            taken.add(j)
        else:
            left_g.append(golds[i])
    return left_g, [pc for j, pc in enumerate(preds) if j not in taken]


def _index(c: _PCall | _GCall) -> int:
    return c.index


def _first(t: tuple[int, Any, Any, Any]) -> int:
    return t[0]


def _assign_rest(
    rest_p: list[_PCall],
    rest_g: list[_GCall],
    ctx: _Ctx,
    *,
    objective: _Objective = "f1",
    extra_cost: bool = True,
) -> tuple[list[tuple[_GCall, _PCall, _Pair]], list[_GCall], list[_PCall]]:
    """Step 2 of :func:`_assign`: the calls left after exact claiming, per tool-name group.

    Returns the new pairs and the missing gold and extra predicted calls (in index order).
    """
    missing: list[_GCall] = []
    extra: list[_PCall] = []
    gg: dict[str, list[_GCall]] = {}
    for gc in rest_g:
        gg.setdefault(gc.tool, []).append(gc)
    pg: dict[str, list[_PCall]] = {}
    for pc in rest_p:
        pg.setdefault(pc.tool, []).append(pc)
    out: list[tuple[_GCall, _PCall, _Pair]] = []
    for tool, gl in gg.items():
        pl = pg.get(tool)
        if not pl:
            missing.extend(gl)
            continue
        mg, ep = _assign_group(
            pl, gl, ctx, objective=objective, extra_cost=extra_cost, pairs_out=out
        )
        missing.extend(mg)
        extra.extend(ep)
    for tool, pl in pg.items():
        if tool not in gg:
            extra.extend(pl)
    missing.sort(key=_index)
    extra.sort(key=_index)
    return out, missing, extra


def _assign(
    preds: list[_PCall],
    golds: list[_GCall],
    ctx: _Ctx,
    *,
    objective: _Objective = "f1",
    extra_cost: bool = True,
) -> tuple[list[tuple[int, _GCall, _PCall, _Pair | None]], list[_GCall], list[_PCall]]:
    """Assign predicted to gold calls: ``(pairs in gold order, missing gold, extra predicted)``.

    ``preds`` and ``golds`` are in index order (as :func:`~ek.agents._calls._prepare_pred` and
    :func:`~ek.agents._calls._prepare_gold` return them).

    A pair's comparison is ``None`` when it was claimed as exact by its canonical key (its
    verdicts are all ``match`` and its TP is the predicted call's mass: :func:`_exact_pair`).
    """
    # 1. Exact matches claimed first: a literal gold call on a tool without a schema is matched
    #    exactly by precisely the predicted calls with the same canonical key, so a multiset
    #    intersection by key is a maximum matching of the exact pairs (identical calls are
    #    interchangeable).
    pairs: list[tuple[int, _GCall, _PCall, _Pair | None]] = []
    by_key: dict[Any, list[_PCall]] = {}
    for pc in preds:
        b = by_key.get(pc.key)
        if b is None:
            by_key[pc.key] = [pc]
        else:
            b.append(pc)
    rest_g: list[_GCall] = []
    for gc in golds:
        b = by_key.get(gc.key) if gc.key is not None and gc.info.fields is None else None
        if b:
            pc = b.pop(0)
            pairs.append((gc.index, gc, pc, None))
        else:
            rest_g.append(gc)
    if len(pairs) == len(preds):
        rest_p: list[_PCall] = []
    elif not pairs:
        rest_p = preds
    else:
        rest_p = [pc for b in by_key.values() for pc in b]
        rest_p.sort(key=_index)
    # 2. The rest, per tool name, by a maximum bipartite matching.
    if rest_g and rest_p:
        out, missing, extra = _assign_rest(
            rest_p, rest_g, ctx, objective=objective, extra_cost=extra_cost
        )
        if out:
            pairs.extend((gc.index, gc, pc, pr) for gc, pc, pr in out)
            pairs.sort(key=_first)
    else:
        missing, extra = rest_g, rest_p
    return pairs, missing, extra


def _match_prepared(
    preds: list[_PCall],
    golds: list[_GCall],
    ctx: _Ctx,
    *,
    objective: _Objective = "f1",
    extra_cost: bool = True,
) -> MatchResult:
    """The :class:`MatchResult` of :func:`_assign` (every pair's verdicts spelled out)."""
    pairs, missing, extra = _assign(preds, golds, ctx, objective=objective, extra_cost=extra_cost)
    tp = fp = fn = 0.0
    matched = []
    for _, gc, pc, pr in pairs:
        if pr is None:
            pr = _exact_pair(pc, gc, ctx)
        tp += pr.tp
        fp += pr.fp
        fn += pr.fn
        matched.append(
            CallMatch(
                gc.index, pc.index, gc.tool, pr.verdicts, pr.exact, pr.tp, pr.fp, pr.fn, pr.cost
            )
        )
    miss = []
    for gc in missing:
        fn += gc.mass
        miss.append(UnmatchedCall(gc.index, gc.tool, gc.args, gc.mass))
    ext = []
    for pc in extra:
        fp += pc.mass
        ext.append(UnmatchedCall(pc.index, pc.tool, pc.args, pc.mass))
    return MatchResult(tuple(matched), tuple(miss), tuple(ext), FieldCounts(tp, fp, fn))
