"""Trajectory scoring: :class:`TrajectoryMetric`, a cost-weighted Needleman-Wunsch alignment.

A trajectory is compared with the expected one, **always actual (A) relative to expected (E)**,
under one of four schemes (DESIGN section 4):

============  ==========================================  ====================================
scheme        passes when                                 graded cost
============  ==========================================  ====================================
``exact``     A equals E step by step                     NW: substitution, insertion and
                                                          deletion all cost
``in_order``  E is an ordered subsequence of A            NW; extra A steps are free
(default)     (extra steps allowed)
``any_order`` A and E are equal as multisets              multiset matching; missing and extra
                                                          cost
``superset``  A contains E as a multiset (extras allowed) multiset matching; extra steps free
============  ==========================================  ====================================

Costs come from the grammar (Layer A), shared with :mod:`ek.agents.toolcalls`: deleting an
expected step (it is missing) or inserting an actual one (it is extra) costs the step's *mass*,
its tool's weight (10 for a destructive tool) plus the importance of the arguments it carries; a
same-tool substitution costs the importance of the arguments that differ (wrong, missing or
unexpected; argument comparison is :mod:`ek.agents.toolcalls`' own, with BFCL type rules when
the grammar has schemas); a different-tool substitution is not allowed (it is a delete plus an
insert). So a substitution is always cheaper than deleting and re-inserting the same tool.

Score = 1 - cost / worst-case cost, where the worst case deletes every expected step and (for
``exact`` / ``any_order``) inserts every actual step; empty against empty is 1.0. The corpus
aggregate is 1 - sum(cost) / sum(worst-case), a ratio of sums.

**Alignment.** The order-honouring schemes run a Needleman-Wunsch dynamic programme
(Needleman & Wunsch 1970, J. Mol. Biol. 48:443) with the costs above; the traceback lists
``match`` / ``substitute`` / ``insert`` / ``delete`` operations with step indices, tool names and
the arguments that differed. Ties are broken deterministically: from the last cell backwards,
a diagonal move (match or substitute) is preferred over a delete (an expected step is missing),
and a delete over an insert (an actual step is extra). The order-free schemes use
:func:`ek.agents.toolcalls.match_calls`' maximum bipartite matching (exact pairs claimed by
hashing, large groups of literal calls solved through classes of interchangeable calls: see
:mod:`ek.agents.toolcalls._assign`). No graph edit distance and no networkx (DESIGN rule 2): a
trajectory is a sequence, and order is what this metric checks.

**Banded alignment** (issue 22; the idea of Ukkonen 1985, Inf. Control 64:100, for weighted
costs). The DP runs first on a band of diagonals, 16 either side of the diagonals of the two
ends, and records, for every way of leaving the band, a lower bound on any path that does: the
band's cost of its last cell inside, plus the move out, plus the gaps that returning to the
final diagonal must cost at their cheapest. If every such bound exceeds the band's optimum,
every optimal path of the full table lies in the band, so each cell on it has the full table's
value and each traceback choice the full table's candidates: the cost, the alignment and the
Score are the full table's, ties included (``tests/test_trajectory_banded.py`` checks them
against an independent full table). Otherwise the band is widened at once to the margin where
leaving it must cost more than the band's optimum (gap costs alone), which then proves itself.
For near-identical trajectories that is O(n·d), d the alignment's cost over the cheapest gap;
when the band would cover half the table the full O(n·m) table runs instead.

**Limits.** :data:`MAX_STEPS` = 5,000 steps a side for every scheme (a longer expected
trajectory is a ValueError, a longer actual one scores 0). ``exact`` / ``in_order`` compute at
most :data:`MAX_CELLS` = 4,000,000 cells in banded passes, and run the full table only when it
is no larger than that (2,000 x 2,000 steps, what was accepted before issue 22, still always
aligns); two longer trajectories that differ too much for a band within the budget are refused
the same way, with the reason (5,000-step near-identical trajectories align in under a
second, see bench/README.md). ``any_order`` / ``superset`` let the Hungarian solve at most
:data:`MAX_ASSIGNMENT_CELLS` = 500,000 cells (the tool groups the class reduction cannot take:
tool schemas, AnyOf gold, arguments agreeing across the sides in many different ways), which
is what ToolCallMetric's 500-call limit allows.

**How the schemes map to other libraries** (what "passes" means; their graded scores differ):

==============  ==============================  ==========================  ================================
ek scheme       agentevals                      pydantic-evals              DeepEval ToolCorrectnessMetric
                (trajectory_match_mode)         (TrajectoryMatch order=)
==============  ==============================  ==========================  ================================
``exact``       ``strict`` (but strict also     ``exact`` (its score is an  ``should_exact_match=True``
                compares message roles and      LCS-F1, not 1 - cost)       (all-or-nothing, no grading)
                allows reordering *within* one
                assistant message)
``in_order``    none (no ordered-subsequence    ``in_order`` (LCS-F1)       ``should_consider_ordering=True``
                mode)                                                       (weighted LCS / len(expected):
                                                                            extras free, as here)
``any_order``   ``unordered`` (greedy first-    ``any_order``               none (its default ignores extras)
                fit; argument subset/superset   (multiset-F1)
                modes become key-set equality)
``superset``    ``superset`` (greedy first-     none                        default unordered mode (best
                fit, can false-fail)                                        match per expected call; extras
                                                                            and duplicates not penalised;
                                                                            identical expected calls
                                                                            collapse, issue #3141)
none            ``subset`` (A within E)         none                        none
==============  ==============================  ==========================  ================================

Example:
    >>> from ek.agents.base import Step
    >>> E = [Step("search", {"q": "order 7"}), Step("refund", {"order": 7})]
    >>> A = [Step("search", {"q": "Order 7"}), Step("lookup", {"order": 7}),
    ...      Step("refund", {"order": 7})]
    >>> r = align_trajectory(A, E)                      # in_order: the extra lookup is free
    >>> r.passed, r.value, [op.op for op in r.alignment]
    (True, 1.0, ['match', 'insert', 'match'])
    >>> r = align_trajectory(A, E, scheme="exact")      # cost: insert lookup = 1 + 1 (weight + arg)
    >>> r.passed, r.cost, r.worst_case, round(r.value, 4)   # worst = (2+2) + (2+2+2)
    (False, 2.0, 10.0, 0.8)
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal, NamedTuple

from ek._validate import short_repr
from ek.agents._spec import TaskSpec, ToolSpec
from ek.agents.toolcalls import over_limit_reason
from ek.agents.toolcalls._assign import AssignmentTooLarge, match
from ek.agents.toolcalls._compare import ArgVerdict, compare, pair_cost
from ek.agents.toolcalls._gold import show
from ek.agents.toolcalls._parse import (
    ExpectedCall,
    PredictedCall,
    prepare_gold,
    prepare_predicted,
    resolve_grammar,
    split_gold,
)
from ek.agents.toolcalls._values import Context
from ek.base import Score, check_scores
from ek.canon import Canonicalizer, resolve_canonicalizer
from ek.grammar import GraphGrammar
from ek.registry import register

__all__ = [
    "MAX_ASSIGNMENT_CELLS",
    "MAX_CELLS",
    "MAX_STEPS",
    "SCHEMES",
    "AlignmentOp",
    "TrajectoryMetric",
    "TrajectoryResult",
    "align_trajectory",
    "trajectory_score",
]

Scheme = Literal["exact", "in_order", "any_order", "superset"]
"""How the actual trajectory is compared with the expected one (see the module table)."""

SCHEMES: tuple[str, ...] = ("exact", "in_order", "any_order", "superset")

#: Most steps per side (expected / actual), every scheme. A longer expected trajectory is a
#: ValueError; a longer actual one is scored 0 (not passed) by the metric, before any work.
#: What bounds the work within it is :data:`MAX_CELLS` (``exact`` / ``in_order``) and
#: :data:`MAX_ASSIGNMENT_CELLS` (``any_order`` / ``superset``); see bench/README.md.
MAX_STEPS = 5_000

#: Most Needleman-Wunsch cells computed for one ``exact`` / ``in_order`` alignment: the banded
#: passes together, or the full table (2,000 x 2,000 steps, a few seconds, the limit before
#: issue 22, so every pair of trajectories of at most 2,000 steps still aligns). Two longer
#: trajectories that differ so much that no band within it is proven optimal are refused
#: like an over-long one (ValueError from ``align``; scored 0 with the reason by the metric).
MAX_CELLS = 4_000_000

#: Most cost-matrix cells the Hungarian may solve for one ``any_order`` / ``superset``
#: comparison (summed over tool groups): one group of 500 x 500 calls, what
#: :data:`~ek.agents.toolcalls.MAX_CALLS` lets ToolCallMetric solve. Only groups the class
#: reduction cannot take count (schemas, AnyOf gold, arguments agreeing in many ways); beyond
#: it, refused as above.
MAX_ASSIGNMENT_CELLS = 500_000

_BAND_START = 16  # the first band: 16 diagonals either side of the two ends' diagonals


def _size_reason(n_gold: int, n_pred: int) -> str:
    return over_limit_reason(n_gold, n_pred, MAX_STEPS, "steps")


class AlignmentOp(NamedTuple):
    """One operation of an alignment, actual relative to expected.

    ``op`` is ``match`` (same tool, arguments accepted), ``substitute`` (same tool, some
    arguments differ: ``args`` lists them), ``delete`` (expected step missing from the actual
    trajectory) or ``insert`` (actual step not in the expected one). ``cost`` is what the
    operation added (an insert is free under ``in_order`` and ``superset``).
    """

    op: str
    expected_index: int | None
    actual_index: int | None
    tool: str
    cost: float
    args: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d: dict[str, Any] = {
            "op": self.op,
            "expected": self.expected_index,
            "actual": self.actual_index,
            "tool": self.tool,
            "cost": self.cost,
        }
        if self.args:
            d["args"] = [dict(a) for a in self.args]
        return d


@dataclass(frozen=True)
class TrajectoryResult:
    """The outcome of one comparison: cost, worst case, verdict and the alignment."""

    scheme: str
    cost: float
    worst_case: float
    passed: bool
    alignment: tuple[AlignmentOp, ...]

    @property
    def value(self) -> float:
        """1 - cost / worst case, in [0, 1]; 1.0 when the worst case is 0 (e.g. both empty)."""
        if self.worst_case <= 0.0:
            return 1.0 if self.cost <= 0.0 else 0.0
        return min(1.0, max(0.0, 1.0 - self.cost / self.worst_case))

    @property
    def reason(self) -> str:
        """One line a person can read."""
        return _reason(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "scheme": self.scheme,
            "cost": self.cost,
            "worst_case": self.worst_case,
            "passed": self.passed,
            "value": self.value,
            "alignment": [op.to_dict() for op in self.alignment],
        }


# --------------------------------------------------------------------------- costs


class _SubCosts:
    """Substitution cost and exactness of (expected, actual) pairs, computed once per distinct
    pair of canonical calls (repeated steps share one comparison)."""

    __slots__ = ("_a_by_tool", "_cache", "a_rep", "a_uid", "ctx", "e_rep", "e_uid")

    def __init__(self, golds: list[ExpectedCall], preds: list[PredictedCall], ctx: Context) -> None:
        self.ctx = ctx
        e_ids: dict[Any, int] = {}
        self.e_rep: list[ExpectedCall] = []
        self.e_uid: list[int] = []
        for g in golds:
            key = g.key if g.key is not None else ("\x00gold", g.index)
            if key not in e_ids:
                e_ids[key] = len(self.e_rep)
                self.e_rep.append(g)
            self.e_uid.append(e_ids[key])
        a_ids: dict[Any, int] = {}
        self.a_rep: list[PredictedCall] = []
        self.a_uid: list[int] = []
        self._a_by_tool: dict[str, list[int]] = {}
        for p in preds:
            if p.key not in a_ids:
                a_ids[p.key] = len(self.a_rep)
                self.a_rep.append(p)
                self._a_by_tool.setdefault(p.tool, []).append(a_ids[p.key])
            self.a_uid.append(a_ids[p.key])
        self._cache: dict[tuple[int, int], tuple[float, bool]] = {}

    def pair(self, eu: int, au: int) -> tuple[float, bool]:
        """(edit cost, exact) of unique expected ``eu`` against unique actual ``au`` (kept: a
        band's passes and the traceback ask again)."""
        if (eu, au) not in self._cache:
            self._cache[eu, au] = self._compare(eu, au)
        return self._cache[eu, au]

    def unique_row(self, eu: int) -> list[float]:
        """Substitution costs of unique expected ``eu`` against every unique actual call (a
        row of the full table: not kept pair by pair)."""
        row = [math.inf] * len(self.a_rep)
        for au in self._a_by_tool.get(self.e_rep[eu].tool, ()):
            row[au] = self._compare(eu, au)[0]
        return row

    def _compare(self, eu: int, au: int) -> tuple[float, bool]:
        """The tool-call comparison's edit cost and verdict; infinite for two different tools."""
        g, p = self.e_rep[eu], self.a_rep[au]
        if g.tool != p.tool:
            return (math.inf, False)
        c = compare(p, g, self.ctx)
        return (pair_cost(c, "edit"), c.exact)

    def exact(self, i: int, j: int) -> bool:
        """Is actual step ``j`` an exact match for expected step ``i``?"""
        return self.pair(self.e_uid[i], self.a_uid[j])[1]


def _suffix_min(xs: Sequence[float]) -> list[float]:
    """``out[i]`` = min(xs[i:]), ``out[len(xs)]`` = inf."""
    out = [math.inf] * (len(xs) + 1)
    for i in range(len(xs) - 1, -1, -1):
        out[i] = min(xs[i], out[i + 1])
    return out


class _Band(NamedTuple):
    """One pass of the DP over the diagonals ``lo <= j - i <= hi``."""

    total: float  # the band's cost at (n, m): a path's cost, so >= the optimum
    exit: float  # a lower bound on every path that leaves the band (inf: none can)
    starts: list[int]  # first column of each row
    ptrs: list[bytes]  # traceback codes of each row (0 diagonal, 1 delete, 2 insert)
    cells: int


class _Rows:
    """Substitution costs of one expected step against a run of actual steps."""

    __slots__ = ("at", "counts", "identity", "rows", "sub")

    def __init__(self, sub: _SubCosts, preds: list[PredictedCall]) -> None:
        self.sub = sub
        self.identity = len(sub.a_rep) == len(sub.a_uid)  # unique index = position
        self.counts: dict[int, int] = {}
        for u in sub.e_uid:
            self.counts[u] = self.counts.get(u, 0) + 1
        self.rows: dict[int, list[float]] = {}
        self.at: dict[str, list[int]] = {}  # tool -> the positions of its actual steps
        for j, p in enumerate(preds):
            self.at.setdefault(p.tool, []).append(j)

    def get(self, i: int, j0: int, j1: int) -> list[float]:
        """Costs of expected step ``i`` against actual steps ``j0 .. j1 - 1``."""
        sub = self.sub
        u = sub.e_uid[i]
        srow = self.rows.get(u)
        if srow is None:
            if self.counts[u] == 1 and 4 * (j1 - j0) < len(sub.a_rep):
                return self._narrow(u, j0, j1)
            urow = sub.unique_row(u)
            srow = urow if self.identity else [urow[a] for a in sub.a_uid]
            if self.counts[u] > 1:
                self.rows[u] = srow
        return srow[j0:j1] if j0 or j1 < len(srow) else srow

    def _narrow(self, u: int, j0: int, j1: int) -> list[float]:
        """A narrow band's run, not kept: only the steps of the same tool are compared."""
        sub = self.sub
        out = [math.inf] * (j1 - j0)
        at = self.at.get(sub.e_rep[u].tool, [])
        for x in range(bisect_left(at, j0), bisect_left(at, j1)):
            j = at[x]
            out[j - j0] = sub.pair(u, sub.a_uid[j])[0]
        return out


def _band_pass(rows: _Rows, dels: Sequence[float], ins: Sequence[float], lo: int, hi: int) -> _Band:
    """The DP restricted to the diagonals ``lo <= j - i <= hi`` (``lo <= min(0, m - n)``,
    ``hi >= max(0, m - n)``), cells outside counted as unreachable; with ``lo <= -n`` and
    ``hi >= m`` it is the full table. Each cell's code is the full table's rule: diagonal,
    then delete, then insert, on ties. ``exit`` bounds every path that leaves the band: the
    band's cost of its last cell inside, plus the move out, plus what returning to the final
    diagonal must cost at least (that many deletions, or insertions, at their cheapest)."""
    n, m = len(dels), len(ins)
    k_end = m - n
    min_del, min_ins = _suffix_min(dels), _suffix_min(ins)
    b = min(m, hi)
    prev = [0.0] * (b + 1)
    acc = 0.0
    for j in range(b):
        acc += ins[j]
        prev[j + 1] = acc
    starts, ptrs = [0], [bytes(b + 1)]
    exit_ = _exit_hi(prev, 0, 0, b, hi, k_end, m, ins, min_del)
    cells = b + 1
    pa = 0
    for i in range(1, n + 1):
        a, b = max(0, i + lo), min(m, i + hi)
        cur, codes = _band_row(rows, prev, pa, i, a, b, dels[i - 1], ins)
        starts.append(a)
        ptrs.append(codes)
        cells += b - a + 1
        exit_ = min(exit_, _exit_hi(cur, a, i, b, hi, k_end, m, ins, min_del))
        if a == i + lo and i < n:  # the lo boundary: delete expected step i, then insert back
            back = k_end - lo + 1
            if back <= m - a:
                exit_ = min(exit_, cur[0] + dels[i] + back * min_ins[a])
        prev, pa = cur, a
    return _Band(prev[m - pa], exit_ if lo > -n or hi < m else math.inf, starts, ptrs, cells)


def _exit_hi(
    row: list[float],
    a: int,
    i: int,
    b: int,
    hi: int,
    k_end: int,
    m: int,
    ins: Sequence[float],
    min_del: list[float],
) -> float:
    """The bound for leaving the band by the hi boundary from row ``i``: insert actual step
    ``b``, then delete at least ``hi + 1 - (m - n)`` expected steps."""
    if b != i + hi or b >= m:
        return math.inf
    return row[b - a] + ins[b] + (hi + 1 - k_end) * min_del[i]


def _band_row(
    rows: _Rows,
    prev: list[float],
    pa: int,
    i: int,
    a: int,
    b: int,
    dl: float,
    ins: Sequence[float],
) -> tuple[list[float], bytes]:
    """Row ``i`` over columns ``a .. b`` from row ``i - 1`` (``prev``, from column ``pa``)."""
    if a == 0:
        left = prev[0] + dl
        cur, codes, j0 = [left], [1], 1
    else:
        left = math.inf
        cur, codes, j0 = [], [], a
    if j0 > b:
        return cur, bytes(codes)
    srow = rows.get(i - 1, j0 - 1, b)
    diags = prev[j0 - 1 - pa : b - pa]
    ups = prev[j0 - pa : b - pa + 1]
    if len(ups) < len(diags):
        ups.append(math.inf)
    for s, ic, diag, up in zip(srow, islice(ins, j0 - 1, b), diags, ups):
        d = diag + s
        w = up + dl
        x = left + ic
        if d <= w:
            if d <= x:
                left = d
                codes.append(0)
            else:
                left = x
                codes.append(2)
        elif w <= x:
            left = w
            codes.append(1)
        else:
            left = x
            codes.append(2)
        cur.append(left)
    return cur, bytes(codes)


class _AlignmentTooLarge(ValueError):
    """Two long trajectories that differ too much to align within :data:`MAX_CELLS`."""


def _needleman_wunsch(
    sub: _SubCosts, preds: list[PredictedCall], dels: Sequence[float], ins: Sequence[float]
) -> tuple[float, list[tuple[str, int, int]]]:
    """Minimum-cost global alignment and its traceback (expected rows, actual columns).

    Banded (Ukkonen 1985): the DP runs on a band of diagonals around the two ends' diagonals,
    doubled until no path leaving it can cost as much as the band's own optimum; then every
    optimal path, every cell value on it and every traceback choice is the full table's, so
    the alignment is the full table's, ties included (see the module docstring). O(n·d) for
    near-identical trajectories, the full O(n·m) table (one byte of traceback per cell) when
    the band would cover half of it. Ties: diagonal, then delete, then insert.

    Raises:
        _AlignmentTooLarge: the band needs more than :data:`MAX_CELLS` cells and the full
            table is larger than that too.
    """
    n, m = len(dels), len(ins)
    rows = _Rows(sub, preds)
    k_end = m - n
    spent = 0
    h = _BAND_START
    full = (n + 1) * (m + 1)
    while True:
        lo, hi = min(0, k_end) - h, max(0, k_end) + h
        cells = (n + 1) * min(m + 1, min(m, hi) - max(-n, lo) + 1)  # at most
        if 2 * cells >= full or spent + cells > MAX_CELLS:
            break  # half the table or more, or over the budget: the full table
        band = _band_pass(rows, dels, ins, lo, hi)
        spent += band.cells
        if band.exit > band.total:
            return band.total, _traceback(band, n, m)
        h = max(2 * h, _band_needed(band.total, dels, ins, k_end))
    if n * m > MAX_CELLS:
        raise _AlignmentTooLarge(
            f"expected {n} and actual {m} steps differ too much to align within "
            f"{MAX_CELLS:,} cells (MAX_CELLS): no band that fits is proven optimal and the "
            f"full table has {n * m:,}"
        )
    band = _band_pass(rows, dels, ins, -n, m)
    return band.total, _traceback(band, n, m)


def _band_needed(cost: float, dels: Sequence[float], ins: Sequence[float], k_end: int) -> int:
    """The smallest band margin ``h`` past which leaving the band must cost more than
    ``cost`` (a path's cost, so at least the optimum): reaching diagonal ``hi + 1`` takes
    ``hi + 1`` insertions more than deletions and coming back ``hi + 1 - (m - n)`` deletions;
    symmetrically below. The next band then proves itself optimal."""
    min_ins = min(ins, default=0.0)
    min_del = min(dels, default=0.0)
    if min_ins + min_del <= 0.0:
        return len(dels) + len(ins) + 1  # no gap is sure to cost: the full table
    h = int(cost // (min_ins + min_del)) + 1  # (both sides pay at least h gaps each way)
    return min(h, len(dels) + len(ins) + 1)


def _traceback(band: _Band, n: int, m: int) -> list[tuple[str, int, int]]:
    """The operations from (0, 0) to (n, m), read back from the codes."""
    starts, ptrs = band.starts, band.ptrs
    ops: list[tuple[str, int, int]] = []  # (kind, expected index, actual index); -1 = none
    i, j = n, m
    while i > 0 or j > 0:
        if i == 0:
            code = 2
        elif j == 0:
            code = 1
        else:
            code = ptrs[i][j - starts[i]]
        if code == 0:
            ops.append(("diag", i - 1, j - 1))
            i -= 1
            j -= 1
        elif code == 1:
            ops.append(("delete", i - 1, -1))
            i -= 1
        else:
            ops.append(("insert", -1, j - 1))
            j -= 1
    ops.reverse()
    return ops


def _arg_rows(verdicts: Sequence[ArgVerdict]) -> tuple[Mapping[str, Any], ...]:
    """The arguments of a substitution that differ, as rows of its :class:`AlignmentOp`."""
    return tuple(
        {
            "arg": a.arg,
            "verdict": a.verdict,
            "predicted": a.predicted,
            "expected": show(a.expected),
            "importance": a.importance,
        }
        for a in verdicts
        if a.verdict != "match"
    )


def _ordered(
    preds: list[PredictedCall], golds: list[ExpectedCall], ctx: Context, scheme: str
) -> TrajectoryResult:
    sub = _SubCosts(golds, preds, ctx)
    dels = [g.mass for g in golds]
    ins = [p.mass for p in preds] if scheme == "exact" else [0.0] * len(preds)
    total, raw = _needleman_wunsch(sub, preds, dels, ins)
    ops = []
    for kind, i, j in raw:
        if kind == "diag":
            c, ex = sub.pair(sub.e_uid[i], sub.a_uid[j])
            if ex:
                ops.append(AlignmentOp("match", i, j, golds[i].tool, c))
            else:
                args = _arg_rows(compare(preds[j], golds[i], ctx).args)
                ops.append(AlignmentOp("substitute", i, j, golds[i].tool, c, args))
        elif kind == "delete":
            ops.append(AlignmentOp("delete", i, None, golds[i].tool, dels[i]))
        else:
            ops.append(AlignmentOp("insert", None, j, preds[j].tool, ins[j]))
    worst = sum(dels) + sum(ins)
    passed = _passed_in_order(sub, len(golds), len(preds), scheme)
    return TrajectoryResult(scheme, min(total, worst), worst, passed, tuple(ops))


def _passed_in_order(sub: _SubCosts, n: int, m: int, scheme: str) -> bool:
    """The verdict of ``exact`` (the same steps, one for one) or ``in_order`` (the expected
    steps an ordered subsequence of the actual ones, decided exactly by greedy leftmost
    matching) on ``n`` expected and ``m`` actual steps."""
    if scheme == "exact":
        return n == m and all(sub.exact(i, i) for i in range(n))
    j = 0
    for i in range(n):
        while j < m and not sub.exact(i, j):
            j += 1
        if j == m:
            return False
        j += 1
    return True


def _unordered(
    preds: list[PredictedCall], golds: list[ExpectedCall], ctx: Context, scheme: str
) -> TrajectoryResult:
    extra_cost = scheme == "any_order"
    r = match(
        preds, golds, ctx, objective="edit", extra_cost=extra_cost, max_cells=MAX_ASSIGNMENT_CELLS
    )
    ops = []
    cost = 0.0
    for mt in r.matched:
        cost += mt.cost
        if mt.exact:
            ops.append(AlignmentOp("match", mt.gold_index, mt.pred_index, mt.tool, mt.cost))
        else:
            args = _arg_rows(mt.args)
            ops.append(
                AlignmentOp("substitute", mt.gold_index, mt.pred_index, mt.tool, mt.cost, args)
            )
    for c in r.missing:
        cost += c.cost
        ops.append(AlignmentOp("delete", c.index, None, c.tool, c.cost))
    ops.sort(key=lambda o: o.expected_index if o.expected_index is not None else -1)
    for c in r.extra:
        ec = c.cost if extra_cost else 0.0
        cost += ec
        ops.append(AlignmentOp("insert", None, c.index, c.tool, ec))
    worst = sum(g.mass for g in golds) + (sum(p.mass for p in preds) if extra_cost else 0.0)
    passed = not r.missing and all(mt.exact for mt in r.matched) and (not extra_cost or not r.extra)
    return TrajectoryResult(scheme, min(cost, worst), worst, passed, tuple(ops))


def _check_scheme(scheme: Any) -> str:
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {list(SCHEMES)}, got {short_repr(scheme, 80)}")
    return str(scheme)


def _run(
    actual: Any, expected: Any, ctx: Context, golds: list[ExpectedCall], scheme: str
) -> TrajectoryResult:
    preds = prepare_predicted(actual, ctx)
    reason = _size_reason(len(golds), len(preds))
    if reason:
        raise ValueError(reason)
    return _align(preds, golds, ctx, scheme)


def _align(
    preds: list[PredictedCall], golds: list[ExpectedCall], ctx: Context, scheme: str
) -> TrajectoryResult:
    if scheme in ("exact", "in_order"):
        return _ordered(preds, golds, ctx, scheme)
    return _unordered(preds, golds, ctx, scheme)


def align_trajectory(
    actual: Any,
    expected: Any,
    *,
    scheme: Scheme = "in_order",
    grammar: GraphGrammar | None = None,
    canonicalizer: str | Canonicalizer | None = None,
) -> TrajectoryResult:
    """Compare an actual trajectory with the expected one under ``scheme`` (the pure function).

    Args:
        actual: An Episode, a Trajectory or a list of calls (Steps or call dicts).
        expected: A list of calls / Trajectory (argument values may be
            :class:`~ek.agents.toolcalls.AnyOf`), or a TaskSpec (its ``gold_calls`` and, when
            ``grammar`` is ``None``, its grammar).
        scheme: ``"exact"``, ``"in_order"`` (default), ``"any_order"`` or ``"superset"``.
        grammar: Weights and importances (and schemas) of the tools.
        canonicalizer: How values are normalised before comparison (default: ``"default"``).

    Returns:
        A frozen :class:`TrajectoryResult`.

    Raises:
        ValueError: a bad scheme, a side longer than :data:`MAX_STEPS` (5,000 steps), or
            two trajectories whose alignment needs more than :data:`MAX_CELLS` DP cells
            (``exact`` / ``in_order``) or :data:`MAX_ASSIGNMENT_CELLS` assignment cells
            (``any_order`` / ``superset``).

    Example:
        >>> from ek.agents.base import Step
        >>> E = [Step("a"), Step("b")]
        >>> align_trajectory([Step("b"), Step("a")], E, scheme="any_order").passed
        True
        >>> r = align_trajectory([Step("b"), Step("a")], E, scheme="in_order")
        >>> r.passed, r.cost, [(o.op, o.expected_index, o.actual_index) for o in r.alignment]
        (False, 1.0, [('insert', None, 0), ('match', 0, 1), ('delete', 1, None)])
    """
    scheme_s = _check_scheme(scheme)
    calls, g_grammar = split_gold(expected)
    gram = resolve_grammar(grammar) if grammar is not None else g_grammar
    ctx = Context(gram, resolve_canonicalizer(canonicalizer))
    return _run(actual, expected, ctx, prepare_gold(calls, ctx), scheme_s)


# --------------------------------------------------------------------------- explanation

_SHOW = 4


def _reason(r: TrajectoryResult) -> str:
    errs = [o for o in r.alignment if o.op != "match" and (o.cost > 0 or o.op == "substitute")]
    free = sum(1 for o in r.alignment if o.op == "insert" and o.cost == 0)
    head = (
        f"{r.scheme}: {'passed' if r.passed else 'failed'}, cost {r.cost:g} of worst case "
        f"{r.worst_case:g} (score {r.value:.3f})"
    )
    bits = [_op_text(o) for o in errs[:_SHOW]]
    if len(errs) > _SHOW:
        bits.append(f"and {len(errs) - _SHOW} more")
    if free:
        bits.append(f"{free} extra step(s) allowed free")
    return head + (": " + "; ".join(bits) if bits else "")


def _op_text(o: AlignmentOp) -> str:
    if o.op == "delete":
        return f"expected step {o.expected_index} {o.tool} missing (cost {o.cost:g})"
    if o.op == "insert":
        return f"extra step {o.actual_index} {o.tool} (cost {o.cost:g})"
    names = ", ".join(str(a["arg"]) for a in o.args) or "arguments"
    return (
        f"step {o.actual_index} {o.tool} for expected {o.expected_index}: "
        f"{names} differ (cost {o.cost:g})"
    )


# --------------------------------------------------------------------------- metric


def trajectory_score(result: TrajectoryResult) -> Score:
    """The :class:`~ek.base.Score` of a :class:`TrajectoryResult`.

    ``detail``: ``cost``, ``worst_case`` (what :meth:`TrajectoryMetric.aggregate` sums),
    ``passed``, ``scheme``, ``alignment`` (list of dicts), ``reason``, ``higher_is_better``.

    Example:
        >>> trajectory_score(align_trajectory([], [])).value
        1.0
    """
    return Score(
        result.value,
        {
            "cost": result.cost,
            "worst_case": result.worst_case,
            "passed": result.passed,
            "scheme": result.scheme,
            "higher_is_better": True,
            "reason": result.reason,
            "alignment": [op.to_dict() for op in result.alignment],
        },
    )


class TrajectoryMetric:
    """Cost-weighted trajectory score (Needleman-Wunsch or multiset matching) with a verdict.

    See the module docstring for the schemes, the costs and the mapping to agentevals,
    pydantic-evals and DeepEval. Registered as ``"trajectory"`` in the ``"metrics"`` namespace
    (a default ``in_order`` instance: ``resolve("metrics", "trajectory")(pred, gold)`` scores).

    Args:
        scheme: ``"exact"``, ``"in_order"`` (default), ``"any_order"`` or ``"superset"``.
        grammar: A GraphGrammar (or TaskSpec / list of ToolSpec) giving weights and importances;
            when ``None``, a TaskSpec gold brings its own grammar, else unit costs; so inside
            :func:`~ek.agents.harness.run_suite` (which passes each task's TaskSpec as the gold)
            every task is scored with its own tools' weights, exactly as when the metric is
            called directly. :meth:`with_grammar` builds the metric for another grammar.
        canonicalizer: Value normalisation before comparison (``"default"``, ``"bfcl"``, ``"raw"``
            or a callable on leaf values).

    Example:
        >>> from ek.agents.base import Step, ToolSpec, TaskSpec
        >>> task = TaskSpec("t", tools=[ToolSpec("refund", destructive=True)],
        ...                 gold_calls=[Step("search"), Step("refund")])
        >>> m = TrajectoryMetric()
        >>> s = m([Step("search")], task)       # the destructive refund is missing: 10 of 11
        >>> round(s.value, 4), s.passed, s.detail["cost"], s.detail["worst_case"]
        (0.0909, False, 10.0, 11.0)
        >>> m.aggregate([s, m([Step("search"), Step("refund")], task)])   # 1 - 10/22
        0.5454545454545454
    """

    name = "trajectory"
    higher_is_better = True
    #: The detail fields :meth:`aggregate` sums (its sufficient statistics, :mod:`ek.agents._run.sums`).
    sums = ("cost", "worst_case")

    def __init__(
        self,
        scheme: Scheme = "in_order",
        grammar: GraphGrammar | TaskSpec | Sequence[ToolSpec] | None = None,
        canonicalizer: str | Canonicalizer | None = None,
    ) -> None:
        self.scheme = _check_scheme(scheme)
        self.grammar = resolve_grammar(grammar)
        self.canonicalizer = canonicalizer
        self._canon = resolve_canonicalizer(canonicalizer)
        self._ctx = Context(self.grammar, self._canon)

    def __repr__(self) -> str:
        return (
            f"TrajectoryMetric(scheme={self.scheme!r}, grammar={self.grammar!r}, "
            f"canonicalizer={self.canonicalizer!r})"
        )

    def with_grammar(
        self, grammar: GraphGrammar | TaskSpec | Sequence[ToolSpec] | None
    ) -> TrajectoryMetric:
        """The same metric with another grammar: a new metric with its own cost context
        (``self`` is not changed).

        Example:
            >>> from ek.agents.base import Step, ToolSpec
            >>> m = TrajectoryMetric().with_grammar([ToolSpec("drop", destructive=True)])
            >>> m([], [Step("drop")]).detail["cost"]         # a destructive step: weight 10
            10.0
        """
        return TrajectoryMetric(self.scheme, grammar, self.canonicalizer)  # type: ignore[arg-type]

    def _inputs(
        self, pred: Any, gold: Any
    ) -> tuple[Context, list[ExpectedCall], list[PredictedCall], str]:
        """The context, prepared gold and predicted calls, and the over-limit reason (or "")."""
        calls, g_grammar = split_gold(gold)
        ctx = self._ctx
        if self.grammar is None and g_grammar is not None:
            ctx = ctx.for_grammar(g_grammar)
        golds = prepare_gold(calls, ctx)
        preds = prepare_predicted(pred, ctx)
        return ctx, golds, preds, _size_reason(len(golds), len(preds))

    def align(self, pred: Any, gold: Any) -> TrajectoryResult:
        """The :class:`TrajectoryResult` behind :meth:`__call__`.

        Raises:
            ValueError: a side longer than the limit (see :data:`MAX_STEPS`).
        """
        ctx, golds, preds, reason = self._inputs(pred, gold)
        if reason:
            raise ValueError(reason)
        return _align(preds, golds, ctx, self.scheme)

    def __call__(self, pred: Any, gold: Any) -> Score:
        """Score an actual trajectory (Episode, Trajectory or list of calls) against the gold.

        An actual trajectory over the limit (:data:`MAX_STEPS`) scores 0 (not passed, cost =
        worst case) with a reason, without being aligned; an expected one is a ValueError. So
        does one whose alignment would need more than :data:`MAX_CELLS` cells
        (``exact`` / ``in_order``) or :data:`MAX_ASSIGNMENT_CELLS` (``any_order`` /
        ``superset``), found out within that much work.
        """
        ctx, golds, preds, reason = self._inputs(pred, gold)
        if not reason:
            try:
                return trajectory_score(_align(preds, golds, ctx, self.scheme))
            except (_AlignmentTooLarge, AssignmentTooLarge) as e:  # the work would be unbounded
                reason = str(e)
        worst = math.fsum(g.mass for g in golds) + math.fsum(p.mass for p in preds)
        detail = {"cost": worst, "worst_case": worst, "passed": False, "scheme": self.scheme}
        return Score(0.0, {**detail, "higher_is_better": True, "reason": reason, "alignment": []})

    def aggregate(self, scores: Sequence[Score]) -> float:
        """1 - sum(cost) / sum(worst_case) over the corpus; NaN for no scores.

        Raises:
            TypeError: ``scores`` is not a sequence of Scores.
            ValueError: a Score without ``cost`` / ``worst_case`` in its detail.
        """
        check_scores(scores, "TrajectoryMetric", ("cost", "worst_case"))
        if not scores:
            return math.nan
        cost = math.fsum(float(s.detail["cost"]) for s in scores)
        worst = math.fsum(float(s.detail["worst_case"]) for s in scores)
        if worst <= 0.0:
            return 1.0 if cost <= 0.0 else 0.0
        return min(1.0, max(0.0, 1.0 - cost / worst))


register("metrics", "trajectory", TrajectoryMetric())
