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

**Alignment.** The order-honouring schemes run an O(n*m) Needleman-Wunsch dynamic programme
(Needleman & Wunsch 1970, J. Mol. Biol. 48:443) with the costs above; the traceback lists
``match`` / ``substitute`` / ``insert`` / ``delete`` operations with step indices, tool names and
the arguments that differed. Ties are broken deterministically: from the last cell backwards,
a diagonal move (match or substitute) is preferred over a delete (an expected step is missing),
and a delete over an insert (an actual step is extra). The order-free schemes use
:func:`ek.agents.toolcalls.match_calls`' maximum bipartite matching. No graph edit distance and
no networkx (DESIGN rule 2): a trajectory is a sequence, and order is what this metric checks.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal, NamedTuple

from ek.agents.spec import TaskSpec, ToolSpec
from ek.agents.toolcalls import MAX_CALLS, over_limit_reason
from ek.agents.toolcalls.assign import match
from ek.agents.toolcalls.compare import compare
from ek.agents.toolcalls.gold import show
from ek.agents.toolcalls.parse import (
    ExpectedCall,
    PredictedCall,
    prepare_gold,
    prepare_predicted,
    resolve_grammar,
    split_gold,
)
from ek.agents.toolcalls.values import Context
from ek.base import Score
from ek.canon import Canonicalizer, resolve_canonicalizer
from ek.grammar import GraphGrammar
from ek.registry import register

__all__ = [
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

#: Most steps per side (expected / actual) for ``exact`` and ``in_order``: the O(n*m) alignment
#: of 2,000 x 2,000 steps takes 1-1.5 s (3,000 took 6 s; see bench/README.md). ``any_order``
#: and ``superset`` use the tool-call assignment and its limit,
#: :data:`~ek.agents.toolcalls.MAX_CALLS` (500). A longer expected trajectory is a ValueError;
#: a longer actual one is scored 0 (not passed) by the metric, before any alignment.
MAX_STEPS = 2_000


def _size_reason(n_gold: int, n_pred: int, scheme: str) -> str:
    limit = MAX_STEPS if scheme in ("exact", "in_order") else MAX_CALLS
    return over_limit_reason(n_gold, n_pred, limit, "steps")


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

_MISSING = object()


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
            u = e_ids.get(key)
            if u is None:
                u = e_ids[key] = len(self.e_rep)
                self.e_rep.append(g)
            self.e_uid.append(u)
        a_ids: dict[Any, int] = {}
        self.a_rep: list[PredictedCall] = []
        self.a_uid: list[int] = []
        self._a_by_tool: dict[str, list[int]] = {}
        for p in preds:
            u = a_ids.get(p.key)
            if u is None:
                u = a_ids[p.key] = len(self.a_rep)
                self.a_rep.append(p)
                self._a_by_tool.setdefault(p.tool, []).append(u)
            self.a_uid.append(u)
        self._cache: dict[tuple[int, int], tuple[float, bool]] = {}

    def pair(self, eu: int, au: int) -> tuple[float, bool]:
        """(edit cost, exact) of unique expected ``eu`` against unique actual ``au``."""
        hit = self._cache.get((eu, au))
        if hit is not None:
            return hit
        g = self.e_rep[eu]
        p = self.a_rep[au]
        if g.tool != p.tool:
            res = (math.inf, False)
        else:
            info = self.ctx.tool(g.tool)
            lit = g.lit
            if lit is not None and info.fields is None:
                imps, dimp = info.importances, info.default_importance
                pf = p.fargs
                c = 0.0
                for k, v in lit.items():
                    if pf.get(k, _MISSING) != v:
                        c += imps.get(k, dimp)
                for k in pf:
                    if k not in lit:
                        c += imps.get(k, dimp)
                res = (c, p.key == g.key)
            else:
                pr = compare(p, g, self.ctx)
                res = (pr.cost, pr.exact)
        self._cache[(eu, au)] = res
        return res

    def unique_row(self, eu: int) -> list[float]:
        """Substitution costs of unique expected ``eu`` against every unique actual call."""
        inf = math.inf
        row = [inf] * len(self.a_rep)
        g = self.e_rep[eu]
        same_tool = self._a_by_tool.get(g.tool, ())
        info = self.ctx.tool(g.tool)
        lit = g.lit
        if lit is None or info.fields is not None:
            for au in same_tool:
                row[au] = self.pair(eu, au)[0]
            return row
        # Fast path (literal expected step, no schema): count the differing arguments inline.
        imps, dimp = info.importances, info.default_importance
        a_rep = self.a_rep
        missing = _MISSING
        for au in same_tool:
            pf = a_rep[au].fargs
            c = 0.0
            for k, v in lit.items():
                if pf.get(k, missing) != v:
                    c += imps.get(k, dimp)
            for k in pf:
                if k not in lit:
                    c += imps.get(k, dimp)
            row[au] = c
        return row

    def exact(self, i: int, j: int) -> bool:
        """Is actual step ``j`` an exact match for expected step ``i``?"""
        return self.pair(self.e_uid[i], self.a_uid[j])[1]


def _needleman_wunsch(
    sub: _SubCosts, dels: Sequence[float], ins: Sequence[float]
) -> tuple[float, list[tuple[str, int, int]]]:
    """Minimum-cost global alignment and its traceback (expected rows, actual columns).

    O(n*m) time; one byte of traceback per cell. Ties: diagonal, then delete, then insert.
    """
    n, m = len(dels), len(ins)
    prev = [0.0] * (m + 1)
    acc = 0.0
    for j in range(m):
        acc += ins[j]
        prev[j + 1] = acc
    e_uid, a_uid = sub.e_uid, sub.a_uid
    identity = len(sub.a_rep) == m  # every actual step distinct: unique index = position
    counts: dict[int, int] = {}
    for u in e_uid:
        counts[u] = counts.get(u, 0) + 1
    rows: dict[int, list[float]] = {}
    ptrs: list[bytes] = []
    for i in range(n):
        dl = dels[i]
        u = e_uid[i]
        srow = rows.get(u)
        if srow is None:
            urow = sub.unique_row(u)
            srow = urow if identity else [urow[a] for a in a_uid]
            if counts[u] > 1:
                rows[u] = srow
        left = prev[0] + dl
        cur = [left]
        codes = [1]
        ca = cur.append
        pa = codes.append
        for s, ic, diag, up in zip(srow, ins, prev, islice(prev, 1, None)):
            d = diag + s
            w = up + dl
            x = left + ic
            if d <= w:
                if d <= x:
                    left = d
                    pa(0)
                else:
                    left = x
                    pa(2)
            elif w <= x:
                left = w
                pa(1)
            else:
                left = x
                pa(2)
            ca(left)
        ptrs.append(bytes(codes))
        prev = cur
    total = prev[m]
    ops: list[tuple[str, int, int]] = []  # (kind, expected index, actual index); -1 = none
    i, j = n, m
    while i > 0 or j > 0:
        if i == 0:
            code = 2
        elif j == 0:
            code = 1
        else:
            code = ptrs[i - 1][j]
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
    return total, ops


def _diff_args(p: PredictedCall, g: ExpectedCall, ctx: Context) -> tuple[Mapping[str, Any], ...]:
    pr = compare(p, g, ctx)
    return tuple(
        {
            "arg": a.arg,
            "verdict": a.verdict,
            "predicted": a.predicted,
            "expected": show(a.expected),
            "importance": a.importance,
        }
        for a in pr.verdicts
        if a.verdict != "match"
    )


def _ordered(
    preds: list[PredictedCall], golds: list[ExpectedCall], ctx: Context, scheme: str
) -> TrajectoryResult:
    sub = _SubCosts(golds, preds, ctx)
    dels = [g.mass for g in golds]
    ins = [p.mass for p in preds] if scheme == "exact" else [0.0] * len(preds)
    total, raw = _needleman_wunsch(sub, dels, ins)
    ops = []
    for kind, i, j in raw:
        if kind == "diag":
            c, ex = sub.pair(sub.e_uid[i], sub.a_uid[j])
            if ex:
                ops.append(AlignmentOp("match", i, j, golds[i].tool, c))
            else:
                args = _diff_args(preds[j], golds[i], ctx)
                ops.append(AlignmentOp("substitute", i, j, golds[i].tool, c, args))
        elif kind == "delete":
            ops.append(AlignmentOp("delete", i, None, golds[i].tool, dels[i]))
        else:
            ops.append(AlignmentOp("insert", None, j, preds[j].tool, ins[j]))
    worst = sum(dels) + sum(ins)
    if scheme == "exact":
        passed = len(preds) == len(golds) and all(sub.exact(i, i) for i in range(len(golds)))
    else:
        # Greedy leftmost matching decides "is E an ordered subsequence of A" exactly.
        j = 0
        passed = True
        for i in range(len(golds)):
            while j < len(preds) and not sub.exact(i, j):
                j += 1
            if j == len(preds):
                passed = False
                break
            j += 1
    return TrajectoryResult(scheme, min(total, worst), worst, passed, tuple(ops))


def _unordered(
    preds: list[PredictedCall], golds: list[ExpectedCall], ctx: Context, scheme: str
) -> TrajectoryResult:
    extra_cost = scheme == "any_order"
    r = match(preds, golds, ctx, objective="edit", extra_cost=extra_cost)
    ops = []
    cost = 0.0
    for mt in r.matched:
        cost += mt.cost
        if mt.exact:
            ops.append(AlignmentOp("match", mt.gold_index, mt.pred_index, mt.tool, mt.cost))
        else:
            args = tuple(
                {
                    "arg": a.arg,
                    "verdict": a.verdict,
                    "predicted": a.predicted,
                    "expected": show(a.expected),
                    "importance": a.importance,
                }
                for a in mt.wrong_args
            )
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
        raise ValueError(f"scheme must be one of {list(SCHEMES)}, got {scheme!r}")
    return str(scheme)


def _run(
    actual: Any, expected: Any, ctx: Context, golds: list[ExpectedCall], scheme: str
) -> TrajectoryResult:
    preds = prepare_predicted(actual, ctx)
    reason = _size_reason(len(golds), len(preds), scheme)
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
        ValueError: a bad scheme, or a side longer than the limit (:data:`MAX_STEPS` = 2,000
            steps for ``exact`` / ``in_order``, 500 for ``any_order`` / ``superset``).

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
    ctx = Context(gram, resolve_canonicalizer(canonicalizer), {})
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
    bits = []
    for o in errs[:_SHOW]:
        if o.op == "delete":
            bits.append(f"expected step {o.expected_index} {o.tool} missing (cost {o.cost:g})")
        elif o.op == "insert":
            bits.append(f"extra step {o.actual_index} {o.tool} (cost {o.cost:g})")
        else:
            names = ", ".join(str(a["arg"]) for a in o.args) or "arguments"
            bits.append(
                f"step {o.actual_index} {o.tool} for expected {o.expected_index}: "
                f"{names} differ (cost {o.cost:g})"
            )
    if len(errs) > _SHOW:
        bits.append(f"and {len(errs) - _SHOW} more")
    if free:
        bits.append(f"{free} extra step(s) allowed free")
    return head + (": " + "; ".join(bits) if bits else "")


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
            :func:`~ek.agents.suite.run_suite` (which passes each task's TaskSpec as the gold)
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
        self._memo: dict[str, Any] = {}
        self._ctx = Context(self.grammar, self._canon, self._memo)

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
            ctx = Context(g_grammar, self._canon, self._memo)
        golds = prepare_gold(calls, ctx)
        preds = prepare_predicted(pred, ctx)
        return ctx, golds, preds, _size_reason(len(golds), len(preds), self.scheme)

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
        worst case) with a reason, without being aligned; an expected one is a ValueError.
        """
        ctx, golds, preds, reason = self._inputs(pred, gold)
        if not reason:
            return trajectory_score(_align(preds, golds, ctx, self.scheme))
        worst = math.fsum(g.mass for g in golds) + math.fsum(p.mass for p in preds)
        detail = {"cost": worst, "worst_case": worst, "passed": False, "scheme": self.scheme}
        return Score(0.0, {**detail, "higher_is_better": True, "reason": reason, "alignment": []})

    def aggregate(self, scores: Sequence[Score]) -> float:
        """1 - sum(cost) / sum(worst_case) over the corpus; NaN for no scores."""
        if not scores:
            return math.nan
        cost = math.fsum(float(s.detail["cost"]) for s in scores)
        worst = math.fsum(float(s.detail["worst_case"]) for s in scores)
        if worst <= 0.0:
            return 1.0 if cost <= 0.0 else 0.0
        return min(1.0, max(0.0, 1.0 - cost / worst))


register("metrics", "trajectory", TrajectoryMetric())
