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
import weakref
from collections.abc import Sequence
from typing import Any

from ek.agents._bfcl import BfclCase, from_bfcl
from ek.agents._callargs import _Ctx as _Ctx
from ek.agents._callreport import _breakdown, _reason
from ek.agents._callresults import ArgVerdict, CallMatch, MatchResult, UnmatchedCall
from ek.agents._calls import (
    _as_list,
    _prepare_gold,
    _prepare_pred,
    _resolve_grammar,
    _split_gold,
)
from ek.agents._calls import _GCall as _GCall
from ek.agents._calls import _PCall as _PCall
from ek.agents._callscore import make_score, score_calls
from ek.agents._callwritten import _claim
from ek.agents._compare import _compare as _compare
from ek.agents._gold import AnyOf, GoldCall
from ek.agents._gold import _show as _show
from ek.agents._matching import _match_prepared as _match_prepared
from ek.agents.base import TaskSpec, ToolSpec
from ek.agents.callshape import (
    ACCEPTED_CALL_SHAPES,
    MALFORMED_TOOL,
    CallShapeError,
    normalize_call,
    normalize_calls,
)
from ek.base import Score
from ek.canon import Canonicalizer, resolve_canonicalizer
from ek.fields import micro_f1
from ek.grammar import GraphGrammar
from ek.registry import register

__all__ = [
    "ACCEPTED_CALL_SHAPES",
    "MALFORMED_TOOL",
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
    "tool_call_score",
]


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
        ValueError: a call without a tool name, or a cyclic value.
        TypeError: non-mapping arguments or values that are not JSON-like.

    Example:
        >>> r = match_calls([{"name": "f", "arguments": '{"x": 2}'}],
        ...                 [GoldCall("f", {"x": AnyOf(1, 2)})])
        >>> r.valid, r.counts
        (True, FieldCounts(tp=2.0, fp=0.0, fn=0.0))
    """
    calls, g_grammar = _split_gold(gold)
    gram = _resolve_grammar(grammar) if grammar is not None else g_grammar
    ctx = _Ctx(gram, resolve_canonicalizer(canonicalizer), {})
    return _match_prepared(_prepare_pred(predicted, ctx), _prepare_gold(calls, ctx), ctx)


def tool_call_score(result: MatchResult) -> Score:
    """The :class:`~ek.base.Score` of a :class:`MatchResult` (the pure function behind the metric).

    ``value`` = weighted F1; ``detail`` holds ``tp``/``fp``/``fn`` (weighted), ``passed`` = ``valid``
    (BFCL's verdict), ``higher_is_better``, a ``reason`` and the ``matched`` / ``missing`` /
    ``extra`` / ``wrong_args`` lists.

    Example:
        >>> tool_call_score(match_calls([], [])).detail["passed"]
        True
    """
    c = result.counts
    valid = result.valid
    f1 = c.f1
    wrong = result.wrong_args
    detail: dict[str, Any] = {
        "tp": c.tp,
        "fp": c.fp,
        "fn": c.fn,
        "passed": valid,
        "valid": valid,
        "higher_is_better": True,
        "reason": _reason(result, f1, wrong),
    }
    detail.update(_breakdown(result, wrong))
    return make_score(f1, detail)


class ToolCallMetric:
    """Weighted tool-call F1 after a multiset assignment, plus BFCL's binary ``valid`` verdict.

    Per episode: weighted F1 = 2·TP / (2·TP + FP + FN) over the costs described in the module
    docstring; ``detail["passed"]`` is BFCL's ``valid`` (every gold call matched exactly and
    nothing extra). Corpus: micro-F1 from the summed weighted TP/FP/FN (a ratio of sums).
    Registered as ``"tool_calls"`` in the ``"metrics"`` namespace (a default instance:
    ``resolve("metrics", "tool_calls")(pred, gold)`` scores).

    Args:
        grammar: Costs and schemas (a GraphGrammar, a TaskSpec or a list of ToolSpec). When
            ``None``, a TaskSpec / BfclCase gold brings its own grammar, else unit costs; so
            inside :func:`~ek.agents.suite.run_suite` (which passes each task's TaskSpec as the
            gold) every task is scored with its own tools' weights, exactly as when the metric
            is called directly. :meth:`with_grammar` builds the metric for another grammar.
        canonicalizer: ``"default"`` (NFC, casefold, whitespace folded), ``"bfcl"`` (BFCL's
            ``standardize_string``), ``"raw"`` or a callable on leaf values.

    The value and the counts behind it are computed at once; the detail is built the first time
    it is read (:func:`ek.base.deferred_score`: scoring a corpus reads every value and few
    details), and its ``reason`` and rows (``matched``, ``missing``, ``extra``, ``wrong_args``)
    the first time one of them is read. The gold list and the argument mappings of missing and
    extra calls are copied at scoring time; argument values are held by reference: mutate one in
    place after scoring and the explanation read later shows the new value (the counts do not
    change).

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

    def __init__(
        self,
        grammar: GraphGrammar | TaskSpec | Sequence[ToolSpec] | None = None,
        canonicalizer: str | Canonicalizer | None = None,
    ) -> None:
        self.grammar = _resolve_grammar(grammar)
        self.canonicalizer = canonicalizer
        self._canon = resolve_canonicalizer(canonicalizer)
        self._memo: dict[str, Any] = {}
        self._ctx = _Ctx(self.grammar, self._canon, self._memo)
        # Prepared gold of immutable golds (TaskSpec, BfclCase), keyed by identity.
        self._gold_cache: dict[int, tuple[Any, _Ctx, list[_GCall]]] = {}

    def __repr__(self) -> str:
        return f"ToolCallMetric(grammar={self.grammar!r}, canonicalizer={self.canonicalizer!r})"

    def with_grammar(
        self, grammar: GraphGrammar | TaskSpec | Sequence[ToolSpec] | None
    ) -> ToolCallMetric:
        """The same metric with another grammar: a new metric with its own cost context and
        caches (``self`` is not changed).

        Example:
            >>> from ek.agents.base import Step, ToolSpec
            >>> m = ToolCallMetric().with_grammar([ToolSpec("drop", destructive=True)])
            >>> m([], [Step("drop")]).detail["fn"]          # a destructive call: weight 10
            10.0
        """
        return ToolCallMetric(grammar, self.canonicalizer)

    def match(self, pred: Any, gold: Any) -> MatchResult:
        """The :class:`MatchResult` behind :meth:`__call__`."""
        ctx, golds = self._gold(gold)
        return _match_prepared(_prepare_pred(pred, ctx), golds, ctx)

    def _gold(self, gold: Any) -> tuple[_Ctx, list[_GCall]]:
        if not isinstance(gold, (TaskSpec, BfclCase)):
            return self._ctx, _prepare_gold(gold, self._ctx)
        cache = self._gold_cache
        hit = cache.get(id(gold))
        if hit is not None and hit[0]() is gold:
            return hit[1], hit[2]
        calls, g_grammar = _split_gold(gold)
        ctx = self._ctx
        if self.grammar is None and g_grammar is not None:
            ctx = _Ctx(g_grammar, self._canon, self._memo)
        golds = _prepare_gold(calls, ctx)
        if len(cache) > 4096:
            cache.clear()
        cache[id(gold)] = (weakref.ref(gold), ctx, golds)
        return ctx, golds

    def __call__(self, pred: Any, gold: Any) -> Score:
        """Score one prediction (Episode, Trajectory or list of calls) against its gold."""
        if type(gold) is list:
            gl = gold
        elif isinstance(gold, (TaskSpec, BfclCase)):  # immutable: prepared once, cached
            g_ctx, golds = self._gold(gold)
            return score_calls(pred, golds, g_ctx)
        else:
            gl = _as_list(gold, "gold")
        # An unprepared gold: claim on the calls as written, prepare only what that leaves.
        ctx = self._ctx
        pl = pred if type(pred) is list else _as_list(pred, "prediction")
        if not ctx.leaf_canon:
            s = _claim(pl, gl, ctx)
            if s is not None:
                return s
        return score_calls(pl, _prepare_gold(gl, ctx), ctx)

    def aggregate(self, scores: Sequence[Score]) -> float:
        """Corpus micro-F1 from the summed weighted TP/FP/FN; NaN for no scores."""
        if not scores:
            return math.nan
        return micro_f1(s.detail for s in scores)


register("metrics", "tool_calls", ToolCallMetric())
