"""The DeepEval metric shells: :class:`EkMetric` and :class:`EkConversationalMetric`.

DeepEval facts these shells are built around (deepeval 4.3.1, see the project notes):

- the default async ``evaluate()`` re-instantiates every metric per test case from
  ``vars(metric)`` restricted to the ``__init__`` parameters, so **every argument is stored
  under its own name** and ``__init__`` is cheap and side-effect free;
- copies are shallow: the wrapped ek metric is shared by concurrent copies (ek metrics are
  stateless), and each shell writes its results only at the end of ``measure``;
- ``evaluate()`` always calls ``is_successful()``: it is overridden so a lower-is-better metric
  (Cost-of-Pass) passes when cheap and fails when costly;
- a ``TypeError`` escaping ``measure`` makes DeepEval call it again, so ek errors are re-raised
  as :class:`~ek.adapters._shell.EkAdapterError` (a ``RuntimeError``); the one ``TypeError``
  is a test case of the wrong kind (an ``LLMTestCase`` given to :class:`EkConversationalMetric`
  or a ``ConversationalTestCase`` to :class:`EkMetric`), refused before anything runs;
- every tool call (``tools_called``, ``expected_tools``, a conversational case's
  ``metadata["expected_tools"]``, the trace's ``tools_called``) is read by the core bridge
  through :func:`ek.agents.toolcalls.normalize_call`, so any host's call shape means the same
  call (``{"name", "arguments"}``, ``{"function", "arguments"}``, ``{"name",
  "input_parameters"}``...); an unknown shape is refused with the list of accepted ones.

**Per-test-case scores are ek's own** (equal to calling the ek metric directly). **The corpus
number is not what DeepEval shows**: its console summary (and Confident AI) report, per metric
*name*, the plain mean of the per-case scores and the pass rate, whereas ek's corpus aggregate is
a ratio of sums (micro-F1 over all cases for tool calls, total dollars over total successes for
Cost-of-Pass). Take the ek aggregate from ek (``metric.ek_metric.aggregate(scores)``, e.g. over
``run_suite``) rather than from DeepEval's summary. Two metrics given the same ``name`` are merged
in that summary: the default names are distinct per configuration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from deepeval.metrics import BaseConversationalMetric, BaseMetric
from ek._validate import short_repr
from ek.adapters._shell import (
    EkAdapterError,
    detail_json,
    metric_label,
    passes,
    resolve_metric,
    run_metric,
    unit_weights_note,
)
from ek.agents.bridge import from_deepeval_test_case
from ek.base import Score

__all__ = ["EkConversationalMetric", "EkMetric"]

_MODEL = "ek-agents (deterministic, no LLM)"


class _EkShell:
    """The behaviour both DeepEval shells share (the host base class comes second in the MRO)."""

    threshold: float | None
    score: float | None
    reason: str | None
    success: bool | None
    error: str | None
    verbose_logs: str | None
    evaluation_model: str | None
    evaluation_cost: float | None

    def __init__(
        self,
        metric: Any,
        *,
        threshold: float,
        check: Any = None,
        grammar: Any = None,
        price: Any = None,
        prices: Any = None,
        name: str | None = None,
        strict_mode: bool = False,
        include_reason: bool = True,
        verbose_mode: bool = False,
        use_trace: bool | None = None,
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise TypeError(
                f"threshold must be a number, got {type(threshold).__name__}: {short_repr(threshold)}"
            )
        if not math.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {short_repr(threshold)}")
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"name must be a non-empty str or None, got {short_repr(name)}")
        if use_trace not in (None, True, False):
            raise TypeError(f"use_trace must be True, False or None, got {short_repr(use_trace)}")
        ek = resolve_metric(metric, check=check, grammar=grammar, price=price, prices=prices)
        higher = bool(getattr(ek, "higher_is_better", True))
        if strict_mode and not higher:
            raise ValueError(
                f"strict_mode means 'score 1 or fail'; {type(ek).__name__} is lower-is-better "
                "(a dollar amount): set a threshold instead"
            )
        # Every __init__ argument under its own name: DeepEval rebuilds metrics from vars().
        self.metric = metric
        self.threshold = 1.0 if strict_mode else float(threshold)
        self.check = check
        self.grammar = grammar
        self.price = price
        self.prices = prices
        self.name = name
        self.strict_mode = strict_mode
        self.include_reason = include_reason
        self.verbose_mode = verbose_mode
        self.use_trace = use_trace
        self.requires_trace = bool(use_trace)
        self.evaluation_model = _MODEL
        self.evaluation_cost = 0.0
        self.higher_is_better = higher
        self.ek_score: Score | None = None
        self._ek = ek

    @property
    def ek_metric(self) -> Any:
        """The wrapped ek metric instance."""
        return self._ek

    @property
    def __name__(self) -> str:
        """``name``, else ``"ek:<configuration label>"`` (unique per ek metric configuration)."""
        return self.name or f"ek:{metric_label(self._ek)}"

    #: ``True`` for the shell of ``ConversationalTestCase`` (cases with ``turns``).
    _conversational = False

    def _check_kind(self, test_case: Any) -> None:
        """Refuse a test case of the other kind, naming it and the shell to use instead."""
        turns = (
            test_case.get("turns")
            if isinstance(test_case, Mapping)
            else getattr(test_case, "turns", None)
        )
        if (turns is not None) == self._conversational:
            return
        if self._conversational:
            want, other = "a ConversationalTestCase", "EkMetric"
        else:
            want, other = "an LLMTestCase", "EkConversationalMetric"
        msg = (
            f"{type(self).__name__} scores {want}, got {type(test_case).__name__}: "
            f"use {other}({metric_label(self._ek)}, threshold=...) for it"
        )
        self.error, self.success, self.score, self.ek_score = msg, False, None, None
        raise TypeError(msg)

    def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Score one test case; sets ``score``, ``success``, ``reason`` and ``verbose_logs``.

        Raises:
            TypeError: a test case of the other kind (see the class docstrings).
            EkAdapterError: the test case cannot be read, or the ek metric failed.
        """
        self._check_kind(test_case)
        try:
            try:
                episode, gold = from_deepeval_test_case(test_case, use_trace=self.use_trace)
            except (TypeError, ValueError) as e:
                raise EkAdapterError(
                    f"{self.__name__}: cannot read the DeepEval test case: {e}"
                ) from e
            score = run_metric(self._ek, episode, gold)
        except EkAdapterError as e:
            self.error, self.success, self.score, self.ek_score = str(e), False, None, None
            raise
        ok = passes(score, float(self.threshold or 0.0), higher_is_better=self.higher_is_better)
        value = score.value
        if self.strict_mode and not ok:
            value = 0.0
        note = unit_weights_note(self._ek, gold, "metadata['tools']")
        reason = score.reason if note is None else f"{score.reason}; {note}"
        # Assign together at the end: a copy is never seen half-written.
        self.ek_score = score
        self.score = value
        self.reason = reason if self.include_reason else None
        self.verbose_logs = detail_json(score)
        self.error = None
        self.success = ok
        return value

    async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Async twin of :meth:`measure` (ek metrics are CPU-only and never await)."""
        return self.measure(test_case)

    def is_successful(self) -> bool:
        """ek's pass rule (see :func:`ek.adapters._shell.passes`); errors and NaN fail."""
        if self.error is not None or self.ek_score is None:
            self.success = False
        else:
            self.success = passes(
                self.ek_score, float(self.threshold or 0.0), higher_is_better=self.higher_is_better
            )
        return self.success

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__name__!r}, threshold={self.threshold})"


class EkMetric(_EkShell, BaseMetric):
    """An ek metric as a DeepEval ``BaseMetric`` (for ``LLMTestCase``).

    Args:
        metric: An ek metric instance, class or registered name (``"task_success"``,
            ``"cost_per_success"``, ``"tool_calls"``, ``"trajectory"``...).
        threshold: Pass mark. Higher-is-better metrics pass when ``score >= threshold``;
            lower-is-better ones (Cost-of-Pass, in dollars) when ``score <= threshold`` and the
            task succeeded.
        check: Success checker for a metric built from a name or class.
        grammar: Cost grammar for a metric built from a name or class.
        price: A :class:`~ek.agents.cost.ModelPrice` for a metric built from a name or class.
        prices: A ``{model: ModelPrice}`` catalogue, likewise.
        name: The DeepEval metric name (default ``"ek:<configuration label>"``).
        strict_mode: DeepEval's strict mode (threshold 1, score 0 when failing); higher-is-better
            metrics only.
        include_reason: Put ek's reason in ``reason``.
        verbose_mode: Kept for DeepEval (ek prints nothing).
        use_trace: ``True`` reads the episode from DeepEval's trace (sets ``requires_trace``);
            ``False`` ignores it; ``None`` uses it when present.

    A ``ConversationalTestCase`` is refused with a ``TypeError`` naming
    :class:`EkConversationalMetric`.

    Example:
        >>> from deepeval.test_case import LLMTestCase
        >>> from ek.agents.cost import per_million
        >>> from ek.agents.metrics import CostPerSuccessMetric
        >>> m = EkMetric(CostPerSuccessMetric(price=per_million(1.0, 2.0)), threshold=0.01)
        >>> tc = LLMTestCase(input="q", actual_output="a", expected_output="a",
        ...                  metadata={"cost": {"input_tokens": 1000, "output_tokens": 500}})
        >>> m.measure(tc), m.is_successful()
        (0.002, True)

    (From DeepEval 4.0.9 ``input_token_count=1000, output_token_count=500`` say the same; before
    it DeepEval drops those fields, and the cost is NaN with the reason "dollars unknown".)
    """


class EkConversationalMetric(_EkShell, BaseConversationalMetric):
    """An ek metric as a DeepEval ``BaseConversationalMetric`` (for ``ConversationalTestCase``).

    Steps come from the turns' ``tools_called``; the expected calls from
    ``metadata["expected_tools"]`` (conversational cases have no such field), a list of calls in
    any accepted shape (``{"name": ..., "arguments": {...}}``, ``{"function": ..., "arguments":
    {...}}``, DeepEval's ``ToolCall`` or its dict...; see :func:`ek.agents.toolcalls.normalize_call`).
    Arguments as for :class:`EkMetric`. An ``LLMTestCase`` is refused with a ``TypeError``
    naming :class:`EkMetric`.

    Example:
        >>> from deepeval.test_case import ConversationalTestCase, ToolCall, Turn
        >>> from ek.agents.toolcalls import ToolCallMetric
        >>> case = ConversationalTestCase(
        ...     turns=[Turn(role="user", content="refund A1"),
        ...            Turn(role="assistant", content="done", tools_called=[
        ...                ToolCall(name="refund", input_parameters={"order": "A1"})])],
        ...     metadata={"expected_tools": [{"name": "refund", "arguments": {"order": "A1"}}]})
        >>> EkConversationalMetric(ToolCallMetric(), threshold=1.0).measure(case)
        1.0
    """

    _conversational = True
