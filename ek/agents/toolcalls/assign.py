"""The multiset matcher: assign predicted calls to gold calls before anything is counted.

:func:`match` claims exact pairs first, a gold call taking a predicted call of its tool with
canonically equal arguments (identical calls are interchangeable, so this is a maximum matching
of the exact pairs); the rest, inside
each tool-name group, by a min-cost assignment (:func:`hungarian`) that first maximises the
number of exact pairs and then minimises the weighted argument errors, "leave both unmatched"
always being an option. Never greedy first-fit (DESIGN rule 3).

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> from ek.agents.toolcalls.parse import prepare_gold, prepare_predicted
    >>> ctx = Context(None, resolve_canonicalizer("default"))
    >>> preds = prepare_predicted([{"f": {"x": 2}}, {"f": {"x": 1}}], ctx)
    >>> golds = prepare_gold([{"f": {"x": 1}}, {"f": {"x": 3}}], ctx)
    >>> r = match(preds, golds, ctx)
    >>> [(m.gold_index, m.pred_index, m.exact) for m in r.matched], r.missing, r.extra
    ([(0, 1, True), (1, 0, False)], (), ())
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from ek.agents.toolcalls.compare import Comparison, compare
from ek.agents.toolcalls.parse import ExpectedCall, PredictedCall
from ek.agents.toolcalls.result import MatchResult, Pair
from ek.agents.toolcalls.values import Context

__all__ = ["Objective", "hungarian", "match"]

#: What a pair costs in the assignment: ``"f1"`` = the pair's FP + FN (what ToolCallMetric
#: counts), ``"edit"`` = the importance of the differing arguments (what TrajectoryMetric counts).
Objective = Literal["f1", "edit"]


def match(
    preds: Sequence[PredictedCall],
    golds: Sequence[ExpectedCall],
    ctx: Context,
    *,
    objective: Objective = "f1",
    extra_cost: bool = True,
) -> MatchResult:
    """Assign prepared predicted calls to prepared gold calls and count the result.

    Args:
        preds: The predicted calls, in index order.
        golds: The gold calls, in index order.
        ctx: The scoring context both were prepared with.
        objective: The pair cost the assignment minimises (see :data:`Objective`).
        extra_cost: Whether leaving a predicted call unmatched costs its mass (``False`` for
            schemes where extra calls are free).

    Returns:
        The :class:`MatchResult`: pairs in gold order, missing and extra calls in index order,
        and the weighted counts summed in that order.
    """
    pairs, rest_p, rest_g = _claim_exact(preds, golds)
    if rest_p and rest_g:
        assigned, missing, extra = _assign_rest(rest_p, rest_g, ctx, objective, extra_cost)
        if assigned:
            pairs = _in_gold_order(pairs + assigned)
    else:
        missing, extra = rest_g, rest_p
    return _result(pairs, missing, extra)


def _in_gold_order(pairs: list[Pair]) -> list[Pair]:
    by_gold = {g.index: (g, p, c) for g, p, c in pairs}
    return [by_gold[i] for i in sorted(by_gold)]


def _index(call: PredictedCall | ExpectedCall) -> int:
    return call.index


def _claim_exact(
    preds: Sequence[PredictedCall], golds: Sequence[ExpectedCall]
) -> tuple[list[Pair], list[PredictedCall], list[ExpectedCall]]:
    """Pairs claimed as identical (in gold order) and the calls left on each side.

    A literal gold call of a tool without a schema matches exactly precisely the predicted
    calls of its tool with equal frozen arguments; in gold order, each claims the first such
    predicted call not claimed yet (identical calls are interchangeable, so this is a maximum
    matching of the exact pairs). A claimed pair's comparison is ``None``: every argument a
    match, spelled out only when read.
    """
    unclaimed: dict[str, list[PredictedCall]] = {}  # tool -> its predicted calls not claimed
    for p in preds:
        unclaimed.setdefault(p.tool, []).append(p)
    pairs: list[Pair] = []
    rest_g: list[ExpectedCall] = []
    for g in golds:
        lit = g.lit
        same_tool = unclaimed.get(g.tool)
        if same_tool and lit is not None and g.info.fields is None:
            for j, p in enumerate(same_tool):
                if p.fargs == lit:
                    del same_tool[j]
                    pairs.append((g, p, None))
                    break
            else:
                rest_g.append(g)
        else:
            rest_g.append(g)
    if not pairs:
        return pairs, list(preds), rest_g
    if len(pairs) == len(preds):
        return pairs, [], rest_g
    claimed = {p.index for _, p, _ in pairs}
    return pairs, [p for p in preds if p.index not in claimed], rest_g


def _assign_rest(
    preds: list[PredictedCall],
    golds: list[ExpectedCall],
    ctx: Context,
    objective: Objective,
    extra_cost: bool,
) -> tuple[list[Pair], list[ExpectedCall], list[PredictedCall]]:
    """The calls left after exact claiming, assigned per tool-name group: (new pairs, missing
    gold calls, extra predicted calls), the last two in index order."""
    by_tool_p: dict[str, list[PredictedCall]] = {}
    for p in preds:
        by_tool_p.setdefault(p.tool, []).append(p)
    by_tool_g: dict[str, list[ExpectedCall]] = {}
    for g in golds:
        by_tool_g.setdefault(g.tool, []).append(g)
    pairs: list[Pair] = []
    missing: list[ExpectedCall] = []
    extra: list[PredictedCall] = []
    for tool, group_g in by_tool_g.items():
        group_p = by_tool_p.pop(tool, [])
        left_g, left_p = _assign_group(group_p, group_g, ctx, objective, extra_cost, pairs)
        missing.extend(left_g)
        extra.extend(left_p)
    for group_p in by_tool_p.values():  # tools no gold call has
        extra.extend(group_p)
    if len(missing) > 1:
        missing.sort(key=_index)
    if len(extra) > 1:
        extra.sort(key=_index)
    return pairs, missing, extra


def _assign_group(
    preds: list[PredictedCall],
    golds: list[ExpectedCall],
    ctx: Context,
    objective: Objective,
    extra_cost: bool,
    pairs_out: list[Pair],
) -> tuple[list[ExpectedCall], list[PredictedCall]]:
    """A maximum bipartite matching inside one tool-name group; returns what is left.

    Exact pairs first (a bonus larger than any total cost), then the lowest total cost, with
    "leave both unmatched" (the gold call's mass, plus the predicted call's mass when extra
    calls cost) always allowed.
    """
    if not preds:
        return golds, preds
    if len(golds) == 1 and len(preds) == 1:  # the commonest group: no matrix to solve
        g, p = golds[0], preds[0]
        c = compare(p, g, ctx)
        if c.exact or _pair_cost(c, objective) <= g.mass + (p.mass if extra_cost else 0.0):
            pairs_out.append((g, p, c))
            return [], []
        return golds, preds
    cmp = [[compare(p, g, ctx) for p in preds] for g in golds]
    cost = [[_pair_cost(c, objective) for c in row] for row in cmp]
    left_alone = [p.mass if extra_cost else 0.0 for p in preds]
    n, m = len(golds), len(preds)
    big = 1.0 + sum(g.mass for g in golds) + sum(left_alone) + sum(max(r) for r in cost)
    matrix = []
    for i in range(n):
        row = [cost[i][j] - left_alone[j] - (big if cmp[i][j].exact else 0.0) for j in range(m)]
        unmatched = [math.inf] * n  # column m + i: gold call i left missing
        unmatched[i] = golds[i].mass
        matrix.append(row + unmatched)
    taken = set()
    left_g = []
    for i, j in enumerate(hungarian(matrix)):
        if j < m:
            pairs_out.append((golds[i], preds[j], cmp[i][j]))
            taken.add(j)
        else:
            left_g.append(golds[i])
    return left_g, [p for j, p in enumerate(preds) if j not in taken]


def _pair_cost(c: Comparison, objective: Objective) -> float:
    return c.fp + c.fn if objective == "f1" else c.cost


def _result(
    pairs: list[Pair], missing: list[ExpectedCall], extra: list[PredictedCall]
) -> MatchResult:
    """The MatchResult of an assignment; the counts are summed in gold order (a pair claimed
    as identical earns the predicted call's mass), then the missing and the extra calls in
    index order."""
    tp = fp = fn = 0.0
    n_exact = 0
    for _, p, c in pairs:
        if c is None:
            tp += p.mass
            n_exact += 1
            continue
        tp += c.tp
        fp += c.fp
        fn += c.fn
        if c.exact:
            n_exact += 1
    for g in missing:
        fn += g.mass
    for p in extra:
        fp += p.mass
    return MatchResult(pairs, missing, extra, tp, fp, fn, n_exact)


def hungarian(cost: list[list[float]]) -> list[int]:
    """Min-cost assignment of every row to a distinct column (rows <= columns).

    The shortest-augmenting-path form of the Hungarian algorithm with row/column potentials
    (Kuhn 1955; Munkres 1957; O(n^2 m)). Ties are broken by the lowest column index, so equal
    inputs give equal assignments. Returns the column of each row.

    Example:
        >>> hungarian([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0]])   # row 0 -> col 1, row 1 -> col 0
        [1, 0]
    """
    n = len(cost)
    m = len(cost[0]) if n else 0
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    p = [0] * (m + 1)  # p[j] = row (1-based) assigned to column j
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = _augmenting_path(cost, i, u, v, p, way)
        while j0:  # flip the path's edges
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    out = [-1] * n
    for j in range(1, m + 1):
        if p[j]:
            out[p[j] - 1] = j - 1
    return out


def _augmenting_path(
    cost: list[list[float]], i: int, u: list[float], v: list[float], p: list[int], way: list[int]
) -> int:
    """Grow a shortest augmenting path from row ``i`` (Dijkstra on reduced costs), updating
    the potentials ``u``/``v`` and the back-pointers ``way``; returns the free column reached."""
    m = len(v) - 1
    minv = [math.inf] * (m + 1)
    used = [False] * (m + 1)
    j0 = 0
    while True:
        used[j0] = True
        i0 = p[j0]
        row = cost[i0 - 1]
        ui = u[i0]
        delta = math.inf
        j1 = 0
        for j in range(1, m + 1):
            if not used[j]:
                cur = row[j - 1] - ui - v[j]
                if cur < minv[j]:
                    minv[j] = cur
                    way[j] = j0
                if minv[j] < delta:
                    delta = minv[j]
                    j1 = j
        for j in range(m + 1):
            if used[j]:
                u[p[j]] += delta
                v[j] -= delta
            else:
                minv[j] -= delta
        j0 = j1
        if p[j0] == 0:
            return j0
