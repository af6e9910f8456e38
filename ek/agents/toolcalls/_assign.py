"""The multiset matcher: assign predicted calls to gold calls before anything is counted.

:func:`match` first claims exact pairs: each gold call, in gold order, takes the first
unclaimed predicted call of its tool with canonically equal arguments (identical calls are
interchangeable, so this is a maximum matching of the exact pairs). The rest is assigned inside
each tool-name group by a min-cost assignment that first maximises the number of exact pairs
and then minimises the pairs' costs (:func:`~ek.agents.toolcalls._compare.pair_cost`), leaving
a gold call missing (its mass) and a predicted call extra (its mass, when extra calls cost)
always being an option. Never greedy first-fit (DESIGN rule 3).

A group is solved by the Hungarian algorithm (:func:`hungarian`) on every pair's cost, O(n^2 m).
A large group whose gold calls are literal and whose tool has no schema is solved exactly
through classes of interchangeable calls and a min-cost flow between them (section "class
reduction" below): its calls fall into few classes, and a group of 500 calls a side then takes
milliseconds instead of seconds. The Hungarian's work can be capped by the caller
(``max_cells``; TrajectoryMetric does, ToolCallMetric's 500-call limit bounds it).

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> from ek.agents.toolcalls._parse import prepare_gold, prepare_predicted
    >>> ctx = Context(None, resolve_canonicalizer("default"))
    >>> preds = prepare_predicted([{"f": {"x": 2}}, {"f": {"x": 1}}], ctx)
    >>> golds = prepare_gold([{"f": {"x": 1}}, {"f": {"x": 3}}], ctx)
    >>> r = match(preds, golds, ctx)
    >>> [(m.gold_index, m.pred_index, m.exact) for m in r.matched], r.missing, r.extra
    ([(0, 1, True), (1, 0, False)], (), ())
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, NamedTuple

from ek.agents.toolcalls._compare import CallMatch, Objective, charge, compare, pair_cost
from ek.agents.toolcalls._parse import ExpectedCall, PredictedCall
from ek.agents.toolcalls._result import MatchResult, Pair, build_result
from ek.agents.toolcalls._values import Context

__all__ = ["AssignmentTooLarge", "hungarian", "match"]


def match(
    preds: Sequence[PredictedCall],
    golds: Sequence[ExpectedCall],
    ctx: Context,
    *,
    objective: Objective = "f1",
    extra_cost: bool = True,
    max_cells: int | None = None,
) -> MatchResult:
    """Assign prepared predicted calls to prepared gold calls and count the result.

    Args:
        preds: The predicted calls, in index order.
        golds: The gold calls, in index order.
        ctx: The scoring context both were prepared with.
        objective: The pair cost the assignment minimises (see
            :data:`~ek.agents.toolcalls._compare.Objective`).
        extra_cost: Whether leaving a predicted call unmatched costs its mass (``False`` for
            schemes where extra calls are free).
        max_cells: Most cost-matrix cells the Hungarian may be given, summed over the tool
            groups it solves (``None``: no limit; the class flow is not counted).

    Returns:
        The :class:`~ek.agents.toolcalls.MatchResult`: pairs in gold order, missing and
        extra calls in index order.

    Raises:
        AssignmentTooLarge: the groups left to the Hungarian need more than ``max_cells``.
    """
    pairs, rest_p, rest_g = _claim_exact(preds, golds)
    budget = _Budget(max_cells)
    missing: list[ExpectedCall] = []
    extra: list[PredictedCall] = []
    for group_g, group_p in _tool_groups(rest_g, rest_p):
        left_g, left_p = _assign_group(group_p, group_g, ctx, objective, extra_cost, budget, pairs)
        missing += left_g
        extra += left_p
    pairs.sort(key=lambda pair: pair[0].index)
    missing.sort(key=lambda g: g.index)
    extra.sort(key=lambda p: p.index)
    return build_result(pairs, missing, extra)


def _claim_exact(
    preds: Sequence[PredictedCall], golds: Sequence[ExpectedCall]
) -> tuple[list[Pair], list[PredictedCall], list[ExpectedCall]]:
    """The pairs claimed as identical (in gold order) and the calls left on each side.

    A literal gold call of a tool without a schema matches exactly precisely the predicted
    calls of its tool with equal frozen arguments, which is what the calls' keys compare.
    """
    free: dict[Any, deque[PredictedCall]] = {}
    for p in preds:
        free.setdefault(p.key, deque()).append(p)
    pairs: list[Pair] = []
    rest_g: list[ExpectedCall] = []
    for g in golds:
        same = free.get(g.key) if g.info.fields is None else None
        if same:
            p = same.popleft()
            pairs.append((g, p, None))
        else:
            rest_g.append(g)
    claimed = {p.index for _, p, _ in pairs}
    return pairs, [p for p in preds if p.index not in claimed], rest_g


def _tool_groups(
    golds: list[ExpectedCall], preds: list[PredictedCall]
) -> list[tuple[list[ExpectedCall], list[PredictedCall]]]:
    """The calls of each tool name: (gold calls, predicted calls), each in index order."""
    groups: dict[str, tuple[list[ExpectedCall], list[PredictedCall]]] = {}
    for g in golds:
        groups.setdefault(g.tool, ([], []))[0].append(g)
    for p in preds:
        groups.setdefault(p.tool, ([], []))[1].append(p)
    return list(groups.values())


class AssignmentTooLarge(ValueError):
    """The tool groups left to the Hungarian need more cells than the caller allows
    (``match(..., max_cells=...)``). The message names the tool and the sizes."""


class _Budget:
    """The cells the Hungarian may still be given (``None``: no limit)."""

    def __init__(self, cells: int | None) -> None:
        self.left = cells

    def spend(self, tool: str, n: int, m: int) -> None:
        """Take a Hungarian of ``n`` gold and ``m`` predicted calls out of the budget."""
        if self.left is None:
            return
        cells = n * (m + n)
        if cells > self.left:
            raise AssignmentTooLarge(
                f"tool {tool!r}: {n} expected and {m} actual calls need a full assignment of "
                f"{cells:,} cells, over the limit of {self.left:,} cells left (their arguments "
                "agree partly in too many different ways to be assigned by classes)"
            )
        self.left -= cells


def _assign_group(
    preds: list[PredictedCall],
    golds: list[ExpectedCall],
    ctx: Context,
    objective: Objective,
    extra_cost: bool,
    budget: _Budget,
    pairs_out: list[Pair],
) -> tuple[list[ExpectedCall], list[PredictedCall]]:
    """The min-cost assignment inside one tool-name group; adds its pairs to ``pairs_out`` and
    returns the gold and predicted calls it leaves unmatched."""
    if not preds or not golds:
        return golds, preds
    if len(golds) == 1 and len(preds) == 1:
        return _assign_one(preds[0], golds[0], ctx, objective, extra_cost, pairs_out)
    if len(golds) * len(preds) > _SMALL_GROUP and _separable(golds):
        left = _assign_by_class(preds, golds, ctx, objective, extra_cost, pairs_out)
        if left is not None:
            return left
    budget.spend(golds[0].tool, len(golds), len(preds))
    return _assign_hungarian(preds, golds, ctx, objective, extra_cost, pairs_out)


def _assign_one(
    p: PredictedCall,
    g: ExpectedCall,
    ctx: Context,
    objective: Objective,
    extra_cost: bool,
    pairs_out: list[Pair],
) -> tuple[list[ExpectedCall], list[PredictedCall]]:
    """A group of one gold and one predicted call needs no matrix: the two are paired when
    the pair is exact or costs no more than leaving both unmatched (the Hungarian's answer)."""
    c = compare(p, g, ctx)
    alone = g.mass + (p.mass if extra_cost else 0.0)
    if c.exact or pair_cost(c, objective) <= alone:
        pairs_out.append((g, p, c))
        return [], []
    return [g], [p]


def _assign_hungarian(
    preds: list[PredictedCall],
    golds: list[ExpectedCall],
    ctx: Context,
    objective: Objective,
    extra_cost: bool,
    pairs_out: list[Pair],
) -> tuple[list[ExpectedCall], list[PredictedCall]]:
    """The group assigned by the Hungarian on the full cost matrix (:func:`_cost_matrix`)."""
    cmp = [[compare(p, g, ctx) for p in preds] for g in golds]
    matrix = _cost_matrix(cmp, golds, preds, objective, extra_cost)
    m = len(preds)
    taken = set()
    left_g = []
    for i, j in enumerate(hungarian(matrix)):
        if j < m:
            pairs_out.append((golds[i], preds[j], cmp[i][j]))
            taken.add(j)
        else:
            left_g.append(golds[i])
    return left_g, [p for j, p in enumerate(preds) if j not in taken]


def _cost_matrix(
    cmp: list[list[CallMatch]],
    golds: list[ExpectedCall],
    preds: list[PredictedCall],
    objective: Objective,
    extra_cost: bool,
) -> list[list[float]]:
    """The Hungarian's matrix of a group: row i is gold call i; column j < m predicted call
    j (the pair's cost, less what leaving call j extra costs, less a bonus larger than any total
    cost when the pair is exact); column m + i that gold call left missing (its mass)."""
    cost = [[pair_cost(c, objective) for c in row] for row in cmp]
    left_alone = [p.mass if extra_cost else 0.0 for p in preds]
    n, m = len(golds), len(preds)
    big = 1.0 + sum(g.mass for g in golds) + sum(left_alone) + sum(max(r) for r in cost)
    matrix = []
    for i in range(n):
        row = [cost[i][j] - left_alone[j] - (big if cmp[i][j].exact else 0.0) for j in range(m)]
        unmatched = [math.inf] * n
        unmatched[i] = golds[i].mass
        matrix.append(row + unmatched)
    return matrix


# --------------------------------------------------------------------------- class reduction
#
# Why the reduction is exact. In a group whose gold calls are all literal and whose tool has
# no schema, ``compare`` gives each argument name k either call carries a verdict decided by
# equality alone (match, wrong, missing or extra, "absent" counted as a value: ``_verdict``),
# and a pair costs the sum over the names of what charge(verdict, imp(k)) costs. After exact
# claiming no pair of such a group is exact (claiming is a maximum matching of the exact
# pairs), so the Hungarian's exact-pair bonus is zero and the objective is the sum of the
# pairs' costs + the mass of each gold call left missing + (with ``extra_cost``) the mass of
# each predicted call left extra.
#
# (1) On a name k on which no gold and no predicted call of the group agree, every pair is
#     wrong (both carry k), missing (only the gold call does) or extra (only the predicted
#     call does); never both absent (absent would be a value they agree on). With W, M, E the
#     costs of those three verdicts, the pair's term is a gold part (M when the gold call
#     carries k, else E - W + M) plus a predicted part (W - M when it carries k, else 0).
#     Folding those into per-call offsets leaves every pair's cost, so the optimum, unchanged.
# (2) Gold calls with equal values on the other names, equal offset and equal mass have equal
#     rows in the assignment problem; predicted calls likewise equal columns: each such class
#     is interchangeable. The assignment is then a transportation problem between classes (a
#     min-cost flow: a gold class sends its count to predicted classes, whose counts cap what
#     they take, or to "missing"), solved exactly by successive shortest paths (Dijkstra with
#     potentials) in integer arithmetic: every float is a dyadic rational, so scaling by the
#     largest denominator makes each cost an exact integer. Among assignments of equal cost
#     the one with the fewest missing calls is taken, as the Hungarian's matrix does (its
#     predicted columns come first): every cost is multiplied by (number of gold calls + 1)
#     and a missing call costs one more, a tie-break smaller than any difference in cost.
# (3) Back from classes to calls: the gold calls in index order each take the lowest-index
#     predicted call still free in a class their class sends flow to; a gold class's missing
#     quota goes to its last calls. Classes are numbered in order of their first call.
#
# Left to the Hungarian: groups with a schema or with AnyOf gold calls, and groups whose calls
# fall into many classes (more than _CLASS_LIMIT gold x predicted class cells: arguments that
# agree across the two sides on many distinct values).

_ABSENT = object()  # an argument a call does not carry (equal only to itself)
_VERDICTS = ("match", "wrong", "missing", "extra")

#: Groups of at most this many (gold x predicted) cells go to the Hungarian, quick at that size.
#: Both ways give the optimum; where several assignments are equally good they may report
#: different ones, and small groups keep the Hungarian's choice (which
#: ``tests/test_toolcalls_golden.py`` pins: its groups are all far below this size).
_SMALL_GROUP = 1_024

#: Most (gold class x predicted class) cells the flow is solved on; beyond, the Hungarian.
_CLASS_LIMIT = 16_384


def _separable(golds: list[ExpectedCall]) -> bool:
    """Is every gold call of the group literal, its tool without a schema?"""
    return golds[0].info.fields is None and all(g.lit is not None for g in golds)


def _verdict(gold_value: Any, pred_value: Any) -> str:
    """``compare``'s verdict on one argument of a literal gold call of a tool without a
    schema (either value :data:`_ABSENT` when that call does not carry the argument)."""
    if gold_value is pred_value:
        return "match"
    if pred_value is _ABSENT:
        return "missing"
    if gold_value is _ABSENT:
        return "extra"
    return "match" if gold_value == pred_value else "wrong"


class _Classes(NamedTuple):
    """The calls of one side grouped into interchangeable classes (in order of first call)."""

    of: list[int]  # the class of each call
    members: list[list[int]]  # the calls of each class, in index order
    values: list[tuple[Any, ...]]  # each class's values on the relevant names
    offset: list[Fraction]  # each class's separable cost part
    alone: list[Fraction]  # each class's cost when left unmatched


def _assign_by_class(
    preds: list[PredictedCall],
    golds: list[ExpectedCall],
    ctx: Context,
    objective: Objective,
    extra_cost: bool,
    pairs_out: list[Pair],
) -> tuple[list[ExpectedCall], list[PredictedCall]] | None:
    """The exact assignment of a separable group through its classes (see above); ``None``
    when the calls fall into too many classes (the caller runs the Hungarian)."""
    info = golds[0].info
    g_vals = [g.lit for g in golds if g.lit is not None]
    p_vals = [p.fargs for p in preds]
    names = dict.fromkeys(k for d in (*g_vals, *p_vals) for k in d)
    costs = {k: _verdict_costs(info.importance(k), objective) for k in names}
    relevant, g_off, p_off = _split_names(g_vals, p_vals, costs)
    gc = _classes(g_vals, relevant, g_off, [g.mass for g in golds])
    pc = _classes(p_vals, relevant, p_off, [p.mass if extra_cost else 0.0 for p in preds])
    if len(gc.members) * len(pc.members) > _CLASS_LIMIT:
        return None
    cost = _class_costs(gc, pc, [costs[k] for k in relevant])
    flow, missing = _class_flow(gc, pc, cost)
    return _expand(golds, preds, gc, pc, flow, missing, ctx, pairs_out)


def _verdict_costs(importance: float, objective: Objective) -> dict[str, Fraction]:
    """What each verdict on an argument of this importance costs a pair, exactly."""
    return {v: Fraction(pair_cost(charge(v, importance), objective)) for v in _VERDICTS}


def _class_costs(
    gc: _Classes, pc: _Classes, terms: list[dict[str, Fraction]]
) -> list[list[Fraction]]:
    """The cost of pairing a call of gold class a with one of predicted class b, less what
    leaving the predicted call extra costs: the pair's terms on the relevant names (``terms``:
    each name's cost of each verdict) plus both classes' offsets."""
    out = []
    for va, oa in zip(gc.values, gc.offset):
        row = []
        for vb, ob, lb in zip(pc.values, pc.offset, pc.alone):
            pair = sum((t[_verdict(a, b)] for a, b, t in zip(va, vb, terms)), Fraction(0))
            row.append(pair + oa + ob - lb)
        out.append(row)
    return out


def _split_names(
    g_vals: list[dict[str, Any]],
    p_vals: list[dict[str, Any]],
    costs: dict[str, dict[str, Fraction]],
) -> tuple[list[str], list[Fraction], list[Fraction]]:
    """The argument names some gold and predicted call agree on (absent counted as a value),
    and what the other names add to each pair, as a part per gold and per predicted call
    (reduction (1) above)."""
    relevant = []
    g_off = [Fraction(0)] * len(g_vals)
    p_off = [Fraction(0)] * len(p_vals)
    for k, c in costs.items():
        g_seen = {d.get(k, _ABSENT) for d in g_vals}
        if not g_seen.isdisjoint({d.get(k, _ABSENT) for d in p_vals}):
            relevant.append(k)
            continue
        wrong, missing, extra = c["wrong"], c["missing"], c["extra"]
        g_off = [
            o + (missing if k in d else extra - wrong + missing) for o, d in zip(g_off, g_vals)
        ]
        p_off = [o + (wrong - missing if k in d else 0) for o, d in zip(p_off, p_vals)]
    return relevant, g_off, p_off


def _classes(
    vals: list[dict[str, Any]], relevant: list[str], offset: list[Fraction], alone: list[float]
) -> _Classes:
    ids: dict[tuple[Any, ...], int] = {}
    out = _Classes([], [], [], [], [])
    for i, d in enumerate(vals):
        v = tuple(d.get(k, _ABSENT) for k in relevant)
        key = (v, offset[i], alone[i])
        if key not in ids:
            ids[key] = len(out.members)
            out.members.append([])
            out.values.append(v)
            out.offset.append(offset[i])
            out.alone.append(Fraction(alone[i]))
        out.of.append(ids[key])
        out.members[ids[key]].append(i)
    return out


def _class_flow(
    gc: _Classes, pc: _Classes, cost: list[list[Fraction]]
) -> tuple[list[list[int]], list[int]]:
    """The min-cost flow between the classes: (units gold class a sends to predicted class b,
    units of gold class a left missing), successive shortest paths on exact integers."""
    supply = [len(m) for m in gc.members]
    scale = max([f.denominator for row in cost for f in row] + [f.denominator for f in gc.alone])
    tie = sum(supply) + 1  # a missing unit costs one tick more (fewer missing on equal cost)
    c = [[int(f * scale) * tie for f in row] for row in cost]
    miss = [int(f * scale) * tie + 1 for f in gc.alone]
    net = _Network(supply, [len(m) for m in pc.members], c, miss)
    while net.augment():
        pass
    return net.flow, net.missing


class _Network:
    """The residual network of the class flow: source -> gold classes (their counts) ->
    predicted classes (uncapacitated arcs, cost ``c``) -> sink (their counts), and gold class
    -> sink (missing, cost ``miss``). Node numbers: gold classes 0..A-1, predicted classes
    A..A+B-1, the sink A+B (the source is implicit: every gold class with units left)."""

    def __init__(self, supply: list[int], cap: list[int], c: list[list[int]], miss: list[int]):
        self.left = list(supply)
        self.room = list(cap)
        self.c = c
        self.miss = miss
        a, b = len(supply), len(cap)
        self.flow = [[0] * b for _ in range(a)]
        self.missing = [0] * a
        # Potentials making every residual arc's reduced cost >= 0 (the graph is a DAG).
        col_min = [min(row[j] for row in c) for j in range(b)]
        self.pot = [0] * a + col_min + [min(min(miss), min(col_min))]

    def augment(self) -> bool:
        """Push flow along one shortest augmenting path; ``False`` when every unit is routed."""
        a, b = len(self.left), len(self.room)
        sink = a + b
        starts = [i for i in range(a) if self.left[i]]
        if not starts:
            return False
        dist, prev = self._dijkstra(starts, a, b)
        cap = _path_capacity(self, prev, a, sink)
        _push(self, prev, a, sink, cap)
        d_sink = dist[sink]  # finite: "missing" always reaches the sink
        self.pot = [p + int(min(d, d_sink)) for p, d in zip(self.pot, dist)]
        return True

    def _dijkstra(self, starts: list[int], a: int, b: int) -> tuple[list[int | float], list[int]]:
        sink = a + b
        dist: list[int | float] = [math.inf] * (sink + 1)
        prev = [-1] * (sink + 1)
        heap: list[tuple[int | float, int]] = []
        for i in starts:
            dist[i] = 0
            heap.append((0, i))
        heapq.heapify(heap)
        done = [False] * (sink + 1)
        while heap:
            d, u = heapq.heappop(heap)
            if done[u]:
                continue
            done[u] = True
            if u == sink:
                break
            for v, w in self._arcs(u, a, b):
                nd = d + w + self.pot[u] - self.pot[v]
                if nd < dist[v]:
                    dist[v] = nd
                    prev[v] = u
                    heapq.heappush(heap, (nd, v))
        return dist, prev

    def _arcs(self, u: int, a: int, b: int) -> list[tuple[int, int]]:
        """The residual arcs out of node ``u``: (head, cost)."""
        if u < a:  # a gold class: to every predicted class, and to the sink (missing)
            row = self.c[u]
            return [(a + j, row[j]) for j in range(b)] + [(a + b, self.miss[u])]
        j = u - a  # a predicted class: to the sink while it has room, back along its flow
        out = [(a + b, 0)] if self.room[j] else []
        out += [(i, -self.c[i][j]) for i in range(a) if self.flow[i][j]]
        return out


def _path_capacity(net: _Network, prev: list[int], a: int, sink: int) -> int:
    v = sink
    cap = math.inf
    while True:
        u = prev[v]
        if u >= a:  # predicted class u - a: to the sink (room) or back to gold class v
            cap = min(cap, net.room[u - a] if v == sink else net.flow[v][u - a])
        v = u
        if prev[v] == -1:
            return int(min(cap, net.left[v]))


def _push(net: _Network, prev: list[int], a: int, sink: int, cap: int) -> None:
    v = sink
    while True:
        u = prev[v]
        if u >= a:
            if v == sink:
                net.room[u - a] -= cap
            else:
                net.flow[v][u - a] -= cap
        elif v == sink:
            net.missing[u] += cap
        else:
            net.flow[u][v - a] += cap
        v = u
        if prev[v] == -1:
            net.left[v] -= cap
            return


def _expand(
    golds: list[ExpectedCall],
    preds: list[PredictedCall],
    gc: _Classes,
    pc: _Classes,
    flow: list[list[int]],
    missing: list[int],
    ctx: Context,
    pairs_out: list[Pair],
) -> tuple[list[ExpectedCall], list[PredictedCall]]:
    """The calls behind a class flow (rule (3) above): (gold calls left, predicted calls left)."""
    to_match = [len(m) - x for m, x in zip(gc.members, missing)]
    nxt = [0] * len(pc.members)  # the next free call of each predicted class
    taken = [False] * len(preds)
    left_g = []
    for i, g in enumerate(golds):
        a = gc.of[i]
        if not to_match[a]:
            left_g.append(g)
            continue
        to_match[a] -= 1
        row = flow[a]
        b = min((j for j in range(len(row)) if row[j]), key=lambda j: pc.members[j][nxt[j]])
        row[b] -= 1
        j = pc.members[b][nxt[b]]
        nxt[b] += 1
        taken[j] = True
        pairs_out.append((g, preds[j], compare(preds[j], g, ctx)))
    return left_g, [p for j, p in enumerate(preds) if not taken[j]]


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
