"""Tool-call scoring: the multiset matcher :func:`match_calls` and :class:`ToolCallMetric`.

Tool calls are a keyless multiset (DESIGN rule 3): two ``search(q=...)`` calls collide on any
key, and a reordering or a repeat silently miscounts unless the calls are *assigned* first.
:func:`match_calls` therefore assigns predicted calls to gold calls inside each tool-name group:
exact-argument matches are claimed first, then the rest by a **maximum bipartite matching**
(a min-cost assignment solved with the Hungarian algorithm, written here in pure Python) on
weighted argument agreement; never greedy first-fit. Only then are weighted TP/FP/FN counted
(through :mod:`ek.fields`).

Gold calls express what BFCL's ``possible_answer`` expresses (source: ShishirPatil/gorilla,
``berkeley-function-call-leaderboard/bfcl_eval/eval_checker/ast_eval/ast_checker.py`` @ 6ea5797):
several acceptable values per argument (:class:`AnyOf`), optional arguments
(``AnyOf(..., optional=True)``; BFCL writes ``""`` among the values), nested lists (element order
relevant) and dicts (whose values may again be :class:`AnyOf`). When the grammar declares the
tool's arguments (a :class:`~ek.agents.base.ToolSpec` rendered into a
:class:`~ek.grammar.GraphGrammar`), BFCL's rules apply too: required arguments must be present,
arguments the schema does not declare are rejected, and values are type-checked as BFCL does (an
int is accepted for a float, a float is not an int, a bool is not an int; BFCL's "variable" rule;
BFCL's string / list / dict checkers with the canonicaliser standing in for
``standardize_string``).

Costs (Layer A): a wrong, missing or unexpected argument costs its ``FieldSpec.importance``; a
call's *mass* is its tool's weight (:data:`~ek.agents.base.DESTRUCTIVE_WEIGHT` = 10 for a
destructive tool) plus the importance of the arguments it carries, and a missing (extra) call
costs its whole mass as false negatives (false positives). A matched call earns its tool's weight
plus the importance of every argument it got right as true positives. So an absent call always
costs at least as much as a present call with every argument wrong.

The package, one concept a module, in the order a gold call travels through it:
:mod:`~ek.agents.toolcalls._parse` reads every host's call shape and prepares the calls (with
:mod:`~ek.agents.toolcalls._values`: the scoring context, frozen values, gold patterns; gold
written with :mod:`~ek.agents.toolcalls._gold`'s AnyOf and GoldCall, or read from BFCL by
:mod:`~ek.agents.toolcalls._bfcl`); :mod:`~ek.agents.toolcalls._assign` pairs predicted with gold
calls (exact claiming, then the Hungarian solver), comparing each pair with
:mod:`~ek.agents.toolcalls._compare`, where the scoring rule lives (:func:`~ek.agents.toolcalls.
compare.charge`: what an argument's verdict costs); :mod:`~ek.agents.toolcalls._result` holds
the :class:`MatchResult` and turns it into a Score. There is one scoring path:
``ToolCallMetric()(pred, gold)`` is ``tool_call_score(match(prepared pred, prepared gold))``,
what :func:`match_calls` and :func:`tool_call_score` compute.

Example:
    >>> from ek.agents.base import Step
    >>> gold = [Step("search", {"q": "refund policy"}), Step("search", {"q": "shipping"})]
    >>> pred = [Step("search", {"q": "Shipping "}), Step("search", {"q": "refund policy"}),
    ...         Step("lookup", {"id": 7})]
    >>> r = match_calls(pred, gold)
    >>> [(m.pred_index, m.gold_index, m.exact) for m in r.matched]
    [(1, 0, True), (0, 1, True)]
    >>> [(e.index, e.tool) for e in r.extra], r.valid
    ([(2, 'lookup')], False)
    >>> s = ToolCallMetric()(pred, gold)
    >>> round(s.value, 4), s.detail["tp"], s.detail["fp"], s.passed   # 2*4 / (2*4 + 2)
    (0.8, 4.0, 2.0, False)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ek.agents._spec import TaskSpec, ToolSpec
from ek.agents.toolcalls._assign import match
from ek.agents.toolcalls._bfcl import BfclCase, from_bfcl
from ek.agents.toolcalls._compare import ArgVerdict, CallMatch
from ek.agents.toolcalls._gold import AnyOf, GoldCall
from ek.agents.toolcalls._parse import (
    ACCEPTED_CALL_SHAPES,
    MALFORMED_TOOL,
    CallShapeError,
    ExpectedCall,
    PredictedCall,
    normalize_call,
    normalize_calls,
    prepare_gold,
    prepare_predicted,
    resolve_grammar,
    split_gold,
)
from ek.agents.toolcalls._result import MatchResult, UnmatchedCall, tool_call_score
from ek.agents.toolcalls._values import Context
from ek.base import Score, check_scores
from ek.canon import Canonicalizer, resolve_canonicalizer
from ek.fields import micro_f1
from ek.grammar import GraphGrammar
from ek.registry import register

__all__ = [
    "ACCEPTED_CALL_SHAPES",
    "MALFORMED_TOOL",
    "MAX_CALLS",
    "AnyOf",
    "ArgVerdict",
    "BfclCase",
    "CallMatch",
    "CallShapeError",
    "GoldCall",
    "MatchResult",
    "ToolCallMetric",
    "UnmatchedCall",
    "from_bfcl",
    "match_calls",
    "normalize_call",
    "normalize_calls",
    "over_limit_reason",
    "tool_call_score",
]

#: Most calls per side (gold / prediction) of one episode. The min-cost assignment is cubic in
#: the size of a tool group where it cannot be decided by hashing: 500 calls of one tool with
#: partly wrong arguments take about 1.7 s, and with many equally good pairings (a schema tool,
#: AnyOf gold, arguments agreeing in many ways) up to 10-17 s (see bench/README.md, "Remaining
#: worst case"). A longer gold is a ValueError, a longer prediction is scored 0 (not valid) with
#: a reason, before any matching.
MAX_CALLS = 500


def over_limit_reason(n_gold: int, n_pred: int, limit: int, unit: str = "calls") -> str:
    """The size check run before any alignment: raise on a long gold, explain a long prediction.

    Returns ``""`` when both sides are within ``limit``, else the reason the prediction is
    scored as invalid (model output is scored, never raised on).

    Raises:
        ValueError: the gold has more than ``limit`` items (a bad task, the user's input).

    Example:
        >>> over_limit_reason(3, 4, 500), over_limit_reason(3, 501, 500)
        ('', 'prediction has 501 calls, over the limit 500')
        >>> over_limit_reason(501, 0, 500)
        Traceback (most recent call last):
        ...
        ValueError: gold has 501 calls, over the limit 500
    """
    if n_gold > limit:
        raise ValueError(f"gold has {n_gold} {unit}, over the limit {limit}")
    if n_pred > limit:
        return f"prediction has {n_pred} {unit}, over the limit {limit}"
    return ""


def match_calls(
    predicted: Any,
    gold: Any,
    *,
    grammar: GraphGrammar | None = None,
    canonicalizer: str | Canonicalizer | None = None,
) -> MatchResult:
    """Assign predicted calls to gold calls: a maximum bipartite matching per tool name.

    Within each tool-name group, exact matches (BFCL's verdict for the pair) are claimed first;
    the remaining calls are assigned by a min-cost assignment (Hungarian algorithm) that first
    maximises the number of exact pairs and then minimises the weighted argument errors, where
    leaving a gold call missing and a predicted call extra is always an option. This is what
    BFCL's greedy first-fit parallel checker approximates (it can reject a valid reordering).

    Args:
        predicted: An Episode, a Trajectory, or a list of calls (Steps or dicts with
            ``tool``/``name`` and ``args``/``arguments``; BFCL's ``{name: {args}}`` also works).
        gold: A list of calls (Steps, :class:`GoldCall` s or dicts; argument values may be
            :class:`AnyOf`), a Trajectory, a TaskSpec (its ``gold_calls`` and, when ``grammar`` is
            ``None``, its grammar) or a :class:`BfclCase`.
        grammar: Costs and tool schemas (weights, importances, types, required arguments).
        canonicalizer: A registered name (``"default"``, ``"bfcl"``, ``"raw"``) or a callable
            applied to every leaf value before comparison; ``None`` = ``"default"``.

    Returns:
        A frozen :class:`MatchResult`.

    Raises:
        ValueError: a gold call without a tool name, a cyclic value, or more than
            :data:`MAX_CALLS` (500) calls on either side.
        TypeError: non-mapping gold arguments or values that are not JSON-like.

    Example:
        >>> r = match_calls([{"name": "f", "arguments": '{"x": 2}'}],
        ...                 [GoldCall("f", {"x": AnyOf(1, 2)})])
        >>> r.valid, r.counts
        (True, FieldCounts(tp=2.0, fp=0.0, fn=0.0))
    """
    return ToolCallMetric(grammar, canonicalizer).match(predicted, gold)


class ToolCallMetric:
    """Weighted tool-call F1 after a multiset assignment, plus BFCL's binary ``valid`` verdict.

    Per episode: weighted F1 = 2·TP / (2·TP + FP + FN) over the costs described in the module
    docstring; ``detail["passed"]`` is BFCL's ``valid`` (every gold call matched exactly and
    nothing extra). Corpus: micro-F1 from the summed weighted TP/FP/FN (a ratio of sums).
    Registered as ``"tool_calls"`` in the ``"metrics"`` namespace (a default instance:
    ``resolve("metrics", "tool_calls")(pred, gold)`` scores).

    ``metric(pred, gold)`` is ``tool_call_score(metric.match(pred, gold))``: the functions
    :func:`match_calls` and :func:`tool_call_score`. :meth:`match` stops at the
    :class:`MatchResult` (value, verdict, counts and every pair; its reason written when read).
    The metric keeps the canonical form of every string it has seen (the same strings recur
    across a corpus).

    Args:
        grammar: Costs and schemas (a GraphGrammar, a TaskSpec or a list of ToolSpec). When
            ``None``, a TaskSpec / BfclCase gold brings its own grammar, else unit costs; so
            inside :func:`~ek.agents.harness.run_suite` (which passes each task's TaskSpec as the
            gold) every task is scored with its own tools' weights, exactly as when the metric
            is called directly. :meth:`with_grammar` builds the metric for another grammar.
        canonicalizer: ``"default"`` (NFC, casefold, whitespace folded), ``"bfcl"`` (BFCL's
            ``standardize_string``), ``"raw"`` or a callable on leaf values.

    Example:
        >>> from ek.agents.base import Step, ToolSpec, TaskSpec
        >>> refund = ToolSpec("refund", parameters={"type": "object",
        ...     "properties": {"amount": {"type": "number"}}, "required": ["amount"]},
        ...     importance={"amount": 5.0}, destructive=True)
        >>> task = TaskSpec("t", tools=[refund], gold_calls=[Step("refund", {"amount": 20})])
        >>> m = ToolCallMetric()
        >>> s = m([Step("refund", {"amount": 20.0})], task)   # int accepted for a number
        >>> s.value, s.passed
        (1.0, True)
        >>> s = m([], task)                                   # missing destructive call: 10 + 5
        >>> s.value, s.detail["fn"]
        (0.0, 15.0)
    """

    name = "tool_calls"
    higher_is_better = True
    #: The detail fields :meth:`aggregate` sums (its sufficient statistics, :mod:`ek.agents._run.sums`).
    sums = ("tp", "fp", "fn")

    def __init__(
        self,
        grammar: GraphGrammar | TaskSpec | Sequence[ToolSpec] | None = None,
        canonicalizer: str | Canonicalizer | None = None,
    ) -> None:
        self.grammar = resolve_grammar(grammar)
        self.canonicalizer = canonicalizer
        self._canon = resolve_canonicalizer(canonicalizer)
        self._ctx = Context(self.grammar, self._canon)

    def __repr__(self) -> str:
        return f"ToolCallMetric(grammar={self.grammar!r}, canonicalizer={self.canonicalizer!r})"

    def with_grammar(
        self, grammar: GraphGrammar | TaskSpec | Sequence[ToolSpec] | None
    ) -> ToolCallMetric:
        """The same metric with another grammar: a new metric with its own scoring context
        (``self`` is not changed).

        Example:
            >>> from ek.agents.base import Step, ToolSpec
            >>> m = ToolCallMetric().with_grammar([ToolSpec("drop", destructive=True)])
            >>> m([], [Step("drop")]).detail["fn"]          # a destructive call: weight 10
            10.0
        """
        return ToolCallMetric(grammar, self.canonicalizer)

    def match(self, pred: Any, gold: Any) -> MatchResult:
        """The :class:`MatchResult` behind :meth:`__call__` (the gold is read first).

        Its ``value`` and ``valid`` are the Score's ``value`` and ``passed``, its ``reason``
        and :meth:`~MatchResult.to_dict` rows the Score's; the reason is written when read.

        Raises:
            ValueError: more than :data:`MAX_CALLS` calls on either side (the Score of a
                prediction that long is 0 with a reason instead).

        Example:
            >>> from ek.agents.base import Step
            >>> m = ToolCallMetric()
            >>> pred, gold = [Step("f", {"x": 1}), Step("g")], [Step("f", {"x": 1})]
            >>> r = m.match(pred, gold)
            >>> r.value == m(pred, gold).value, r.valid, r.reason == m(pred, gold).reason
            (True, False, True)
        """
        golds, preds, ctx = self._prepare(pred, gold)
        reason = over_limit_reason(len(golds), len(preds), MAX_CALLS)
        if reason:
            raise ValueError(reason)
        return match(preds, golds, ctx)

    def __call__(self, pred: Any, gold: Any) -> Score:
        """Score one prediction (Episode, Trajectory or list of calls) against its gold:
        ``tool_call_score(self.match(pred, gold))``; a prediction of more than :data:`MAX_CALLS`
        calls scores 0 (not valid, everything missing and extra) without being matched, and a
        gold of more than :data:`MAX_CALLS` calls is a ValueError."""
        golds, preds, ctx = self._prepare(pred, gold)
        reason = over_limit_reason(len(golds), len(preds), MAX_CALLS)
        if reason:
            fp = math.fsum(p.mass for p in preds)
            fn = math.fsum(g.mass for g in golds)
            detail = {"tp": 0.0, "fp": fp, "fn": fn, "passed": False, "valid": False}
            return Score(0.0, {**detail, "higher_is_better": True, "reason": reason})
        return tool_call_score(match(preds, golds, ctx))

    def _prepare(
        self, pred: Any, gold: Any
    ) -> tuple[list[ExpectedCall], list[PredictedCall], Context]:
        """The gold calls and the predicted calls, prepared (the gold first), and the scoring
        context: the metric's grammar, else the one a TaskSpec or BfclCase gold brings."""
        calls, gold_grammar = split_gold(gold)
        ctx = self._ctx
        if self.grammar is None and gold_grammar is not None:
            ctx = ctx.for_grammar(gold_grammar)
        golds = prepare_gold(calls, ctx)
        return golds, prepare_predicted(pred, ctx), ctx

    def aggregate(self, scores: Sequence[Score]) -> float:
        """Corpus micro-F1 from the summed weighted TP/FP/FN; NaN for no scores.

        Raises:
            TypeError: ``scores`` is not a sequence of Scores.
            ValueError: a Score without ``tp``/``fp``/``fn`` in its detail.
        """
        check_scores(scores, "ToolCallMetric", ("tp", "fp", "fn"))
        if not scores:
            return math.nan
        return micro_f1(s.detail for s in scores)


register("metrics", "tool_calls", ToolCallMetric())
