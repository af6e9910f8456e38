"""The multiset matcher: assign predicted calls to gold calls before anything is counted.

:func:`match` claims exact pairs first, a gold call taking a predicted call of its tool with
canonically equal arguments (identical calls are interchangeable, so this is a maximum matching
of the exact pairs); the rest, inside
each tool-name group, by a min-cost assignment (:func:`hungarian`) that first maximises the
number of exact pairs and then minimises the weighted argument errors, "leave both unmatched"
always being an option. Never greedy first-fit (DESIGN rule 3).

Large groups (issue 22): exact claiming looks calls up by their arguments (hashing) once both
sides have more than 32 calls; a group of more than 1,024 (gold x predicted) cells whose gold
calls are literal and whose tool has no schema is solved exactly through classes of
interchangeable calls and a min-cost flow between them (the proof is in the "class reduction"
section below), so the worst case of the trajectory bench (10 tools, no exact argument match,
groups of 500) takes milliseconds instead of a minute. What is left to the cubic Hungarian
(schemas, AnyOf gold, calls that fall into more than 16,384 class cells) can be capped by
the caller (``max_cells``; TrajectoryMetric does, ToolCallMetric's 500-call limit bounds it).

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

import heapq
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Literal, NamedTuple

from ek.agents.toolcalls.compare import Comparison, compare
from ek.agents.toolcalls.parse import ExpectedCall, PredictedCall
from ek.agents.toolcalls.result import MatchResult, Pair
from ek.agents.toolcalls.values import Context

__all__ = ["AssignmentTooLarge", "Objective", "hungarian", "match"]

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
    max_cells: int | None = None,
) -> MatchResult:
    """Assign prepared predicted calls to prepared gold calls and count the result.

    Args:
        preds: The predicted calls, in index order.
        golds: The gold calls, in index order.
        ctx: The scoring context both were prepared with.
        objective: The pair cost the assignment minimises (see :data:`Objective`).
        extra_cost: Whether leaving a predicted call unmatched costs its mass (``False`` for
            schemes where extra calls are free).
        max_cells: Most cost-matrix cells the Hungarian may be given, summed over the tool
            groups it solves (``None``: no limit; the class flow is not counted).

    Returns:
        The :class:`MatchResult`: pairs in gold order, missing and extra calls in index order,
        and the weighted counts summed in that order.

    Raises:
        AssignmentTooLarge: the groups left to the Hungarian need more than ``max_cells``.
    """
    pairs, rest_p, rest_g = _claim_exact(preds, golds)
    if rest_p and rest_g:
        # The options travel to the groups as arguments (a NamedTuple of them cost a twentieth
        # of matching an episode with a wrong argument); only the budget changes.
        cells_left = [max_cells if max_cells is not None else -1]
        assigned, missing, extra = _assign_rest(
            rest_p, rest_g, ctx, objective, extra_cost, cells_left
        )
        if assigned:
            pairs += assigned
            # (gold indices are distinct: sorting by them is a total order; on a few pairs
            # a keyed sort costs a third of rebuilding them through a dict)
            pairs.sort(key=_gold_index)
    else:
        missing, extra = rest_g, rest_p
    return _result(pairs, missing, extra)


def _gold_index(pair: Pair) -> int:
    g, _, _ = pair
    return g.index


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
    if len(preds) > _SCAN_LIMIT and len(golds) > _SCAN_LIMIT:
        return _claim_exact_hashed(preds, golds)
    free = list(preds)  # the predicted calls not claimed yet, in index order
    pairs: list[Pair] = []
    rest_g: list[ExpectedCall] = []
    for g in golds:
        lit = g.lit
        if lit is not None and g.info.fields is None:
            tool = g.tool
            for p in free:
                if p.tool == tool and p.fargs == lit:
                    free.remove(p)  # (by identity: a prepared call equals only itself)
                    pairs.append((g, p, None))
                    break
            else:
                rest_g.append(g)
        else:
            rest_g.append(g)
    return pairs, free, rest_g


#: Above this many calls a side, exact claiming looks predicted calls up by their arguments
#: instead of scanning the unclaimed calls (which is quadratic when few calls match).
_SCAN_LIMIT = 32


def _claim_exact_hashed(
    preds: Sequence[PredictedCall], golds: Sequence[ExpectedCall]
) -> tuple[list[Pair], list[PredictedCall], list[ExpectedCall]]:
    """:func:`_claim_exact` by hashing: the same pairs (each gold call, in gold order, claims
    the first unclaimed predicted call of its tool with equal frozen arguments; two argument
    dicts are equal exactly when their sets of items are), in O(n + m)."""
    by_key: dict[tuple[str, frozenset[tuple[str, Any]]], list[PredictedCall]] = {}
    for p in reversed(preds):  # each list in reverse index order: pop() gives the first
        by_key.setdefault(p.key, []).append(p)
    pairs: list[Pair] = []
    rest_g: list[ExpectedCall] = []
    for g in golds:
        key = g.key if g.info.fields is None else None
        same = by_key.get(key) if key is not None else None
        if same:
            pairs.append((g, same.pop(), None))
        else:
            rest_g.append(g)
    claimed = {p.index for _, p, _ in pairs}
    return pairs, [p for p in preds if p.index not in claimed], rest_g


class AssignmentTooLarge(ValueError):
    """The tool groups left to the Hungarian need more cells than the caller allows
    (``match(..., max_cells=...)``). The message names the tool and the sizes."""


def _spend(cells_left: list[int], tool: str, n: int, m: int) -> None:
    """Take a Hungarian of ``n`` gold and ``m`` predicted calls out of the budget
    ``cells_left`` (``[cells still allowed]``, ``[-1]``: no limit)."""
    left = cells_left[0]
    if left < 0:
        return
    cells = n * (m + n)
    if cells > left:
        raise AssignmentTooLarge(
            f"tool {tool!r}: {n} expected and {m} actual calls need a full assignment of "
            f"{cells:,} cells, over the limit of {left:,} cells left (their arguments agree "
            "partly in too many different ways to be assigned by classes)"
        )
    cells_left[0] = left - cells


def _assign_rest(
    preds: list[PredictedCall],
    golds: list[ExpectedCall],
    ctx: Context,
    objective: Objective,
    extra_cost: bool,
    cells_left: list[int],
) -> tuple[list[Pair], list[ExpectedCall], list[PredictedCall]]:
    """The calls left after exact claiming, assigned per tool-name group: (new pairs, missing
    gold calls, extra predicted calls), the last two in index order. ``cells_left`` is the
    Hungarian's budget (:func:`_spend`), shared by the groups."""
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
        left_g, left_p = _assign_group(
            group_p, group_g, ctx, objective, extra_cost, cells_left, pairs
        )
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
    cells_left: list[int],
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
    if len(golds) * len(preds) > _SMALL_GROUP and _separable(golds):
        left = _assign_by_class(preds, golds, ctx, objective, extra_cost, pairs_out)
        if left is not None:
            return left
    _spend(cells_left, golds[0].tool, len(golds), len(preds))
    return _assign_hungarian(preds, golds, ctx, objective, extra_cost, pairs_out)


def _assign_hungarian(
    preds: list[PredictedCall],
    golds: list[ExpectedCall],
    ctx: Context,
    objective: Objective,
    extra_cost: bool,
    pairs_out: list[Pair],
) -> tuple[list[ExpectedCall], list[PredictedCall]]:
    """The group assigned by the Hungarian on the full cost matrix (O(n^2 m))."""
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


# --------------------------------------------------------------------------- class reduction
#
# Why the reduction is exact. In a group whose gold calls are all literal and whose tool has
# no schema, ``compare`` gives a pair a cost that is a sum over the argument names k either
# call carries of a term t_k(gold value, predicted value), a value possibly "absent": 0 when
# the two are equal (absent = absent included), else imp(k) under the edit objective, and
# under the f1 objective 2 imp(k) for a wrong value and imp(k) for a missing or extra one.
# After exact claiming no pair of such a group is exact (claiming is a maximum matching of the
# exact pairs), so the Hungarian's exact-pair bonus is zero and the objective is the sum of
# the pairs' costs + the mass of each gold call left missing + (with ``extra_cost``) the mass
# of each predicted call left extra.
#
# (1) A name k on which no gold and no predicted call of the group agree (absent counted as a
#     value) adds to every pair imp(k) (edit), or imp(k) [gold has k] + imp(k) [predicted has
#     k] (f1; both absent cannot happen): a constant, or a gold part plus a predicted part.
#     Folding it into per-call offsets leaves every pair's cost, so the optimum, unchanged.
# (2) Gold calls with equal values on the other names, equal offset and equal mass have equal
#     rows in the assignment problem; predicted calls likewise equal columns: each such class
#     is interchangeable. The assignment is then a transportation problem between classes (a
#     min-cost flow: a gold class sends its count to predicted classes, whose counts cap what
#     they take, or to "missing"), solved exactly by successive shortest paths (Dijkstra with
#     potentials) in integer arithmetic: every float is a dyadic rational, so scaling by the
#     largest denominator makes each cost an exact integer. Equal costs are broken towards
#     fewer missing calls (the Hungarian's matrix puts the predicted columns first).
# (3) Back from classes to calls: the gold calls in index order each take the lowest-index
#     predicted call still free in a class their class sends flow to; a gold class's missing
#     quota goes to its last calls. Classes are numbered in order of their first call.
#
# The calls of the bench's worst case (ten tools, every argument value distinct but a mode
# drawn from two) fall into two classes a side: a few microseconds of flow per group. Left to
# the Hungarian: groups with a schema or with AnyOf gold calls, and groups whose calls fall
# into many classes (more than _CLASS_LIMIT gold x predicted class cells: arguments that agree
# across the two sides on many distinct values); that is O(n^2 m) in the group, bounded by the
# callers' size limits (MAX_CALLS = 500 calls a side for ToolCallMetric; TrajectoryMetric's
# MAX_ASSIGNMENT for the any_order / superset groups).

_ABSENT = object()  # an argument a call does not carry (equal only to itself)

#: Groups of at most this many (gold x predicted) cells go to the Hungarian directly, cheap at
#: that size. Both ways give the optimum; where several assignments are equally good they
#: may report different ones, and the small groups keep the Hungarian's choice (which
#: ``tests/test_toolcalls_golden.py`` pins: its groups are all far below this size).
_SMALL_GROUP = 1_024


def _separable(golds: list[ExpectedCall]) -> bool:
    """Is every gold call of the group literal, its tool without a schema (reduction (1))?"""
    return golds[0].info.fields is None and all(g.lit is not None for g in golds)


#: Most (gold class x predicted class) cells the flow is solved on; beyond, the Hungarian.
_CLASS_LIMIT = 16_384


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
    relevant, const, g_off, p_off = _split_names(g_vals, p_vals, info.importance, objective)
    gc = _classes(g_vals, relevant, g_off, [g.mass for g in golds])
    pc = _classes(p_vals, relevant, p_off, [p.mass if extra_cost else 0.0 for p in preds])
    if len(gc.members) * len(pc.members) > _CLASS_LIMIT:
        return None
    imps = [Fraction(info.importance(k)) for k in relevant]
    cost = [
        [
            _term_sum(va, vb, imps, objective) + const + oa + ob - lb
            for vb, ob, lb in zip(pc.values, pc.offset, pc.alone)
        ]
        for va, oa in zip(gc.values, gc.offset)
    ]
    flow, missing = _class_flow(gc, pc, cost)
    return _expand(golds, preds, gc, pc, flow, missing, ctx, pairs_out)


def _split_names(
    g_vals: list[dict[str, Any]],
    p_vals: list[dict[str, Any]],
    importance: Callable[[str], float],
    objective: Objective,
) -> tuple[list[str], Fraction, list[Fraction], list[Fraction]]:
    """The argument names some gold and predicted call agree on (absent counted as a value),
    and what the others add: a constant per pair and a part per gold / predicted call."""
    names = list(dict.fromkeys(k for d in (*g_vals, *p_vals) for k in d))
    relevant = []
    const = Fraction(0)
    g_off = [Fraction(0)] * len(g_vals)
    p_off = [Fraction(0)] * len(p_vals)
    for k in names:
        gv = {d.get(k, _ABSENT) for d in g_vals}
        if not gv.isdisjoint({d.get(k, _ABSENT) for d in p_vals}):
            relevant.append(k)
            continue
        w = Fraction(importance(k))
        if objective == "edit":
            const += w
            continue
        g_off = [o + w if k in d else o for o, d in zip(g_off, g_vals)]
        p_off = [o + w if k in d else o for o, d in zip(p_off, p_vals)]
    return relevant, const, g_off, p_off


def _classes(
    vals: list[dict[str, Any]], relevant: list[str], offset: list[Fraction], alone: list[float]
) -> _Classes:
    ids: dict[tuple[Any, ...], int] = {}
    out = _Classes([], [], [], [], [])
    for i, d in enumerate(vals):
        v = tuple([d.get(k, _ABSENT) for k in relevant])
        key = (v, offset[i], alone[i])
        c = ids.get(key)
        if c is None:
            c = ids[key] = len(out.members)
            out.members.append([])
            out.values.append(v)
            out.offset.append(offset[i])
            out.alone.append(Fraction(alone[i]))
        out.of.append(c)
        out.members[c].append(i)
    return out


def _term_sum(
    va: tuple[Any, ...], vb: tuple[Any, ...], imps: list[Fraction], objective: Objective
) -> Fraction:
    """The pair cost on the relevant names (the terms t_k above)."""
    total = Fraction(0)
    for a, b, w in zip(va, vb, imps):
        if a is b or (a is not _ABSENT and b is not _ABSENT and a == b):
            continue
        both = a is not _ABSENT and b is not _ABSENT
        total += 2 * w if objective == "f1" and both else w
    return total


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
        inf = math.inf
        dist: list[int | float] = [inf] * (sink + 1)
        prev = [-1] * (sink + 1)
        pot = self.pot
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
                nd = d + w + pot[u] - pot[v]
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
