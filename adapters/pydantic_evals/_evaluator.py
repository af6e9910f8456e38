"""The pydantic-evals evaluator: :class:`EkEvaluator`, and the names of the results it returns.

pydantic-evals facts this is built around (pydantic-evals 2.62):

- an evaluator is a **dataclass** subclassing ``Evaluator``; its fields are its spec (what a
  report records as the result's ``source``), so they are plain arguments;
- ``evaluate(ctx)`` may return a mapping ``{name: value | EvaluationReason}``; a ``bool`` is an
  *assertion*, an ``int``/``float`` a *score* (finite only), a ``str`` a *label*;
- ``Dataset.evaluate(task, repeat=k)`` runs every case k times, names the runs
  ``"<case> [i/k]"`` and keeps the case's name in ``ReportCase.source_case_name``
  (:func:`~ek.adapters.pydantic_evals.summary_from_report` reads it back).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ek._validate import is_number
from ek.adapters._shell import resolve_metric, run_metric
from ek.base import Score
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext

from ._convert import episode_from_context, gold_from_context

__all__ = ["EkEvaluator", "score_results"]

#: How a value pydantic-evals cannot hold as a score (not finite) is written, as a label.
NON_FINITE_LABELS = {"undefined": math.nan, "inf": math.inf, "-inf": -math.inf}
_SCOPES = ("top", "all")


def _scalar(value: float) -> float | str:
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "undefined"
    return "inf" if value > 0 else "-inf"


def score_results(
    name: str, score: Score, *, figures: bool = True
) -> dict[str, bool | int | float | str | EvaluationReason]:
    """An ek Score as pydantic-evals results.

    ========================  ===================================================================
    ``<name>``                the value with ek's reason (``EvaluationReason``); a value that
                              is not finite is a label: ``"undefined"`` (NaN), ``"inf"``,
                              ``"-inf"``
    ``<name>.passed``         the verdict, an assertion (when the metric has one)
    ``<name>.<figure>``       each finite number of the detail (``tp``, ``fp``, ``fn``;
                              ``cost``, ``worst_case``; ``successes``, ``n``; ``dollars``...):
                              the sums the corpus aggregate is a ratio of (``figures=True``)
    ========================  ===================================================================

    Example:
        >>> s = Score(0.75, {"tp": 3.0, "fp": 1.0, "fn": 1.0, "passed": False, "reason": "r"})
        >>> score_results("tool_calls", s)
        {'tool_calls': EvaluationReason(value=0.75, reason='r'), 'tool_calls.passed': False, 'tool_calls.tp': 3.0, 'tool_calls.fp': 1.0, 'tool_calls.fn': 1.0}
    """
    out: dict[str, bool | int | float | str | EvaluationReason] = {
        name: EvaluationReason(_scalar(score.value), score.reason or None)
    }
    if score.passed is not None:
        out[f"{name}.passed"] = score.passed
    if figures:
        for key, v in score.detail.items():
            if is_number(v) and math.isfinite(v):
                out[f"{name}.{key}"] = v
    return out


@dataclass(repr=False)
class EkEvaluator(Evaluator[Any, Any, Any]):
    """An ek metric as a pydantic-evals evaluator.

    Each case's run becomes an ek :class:`~ek.agents.base.Episode`: the tool calls and the
    usage from ``ctx.span_tree`` (through ek's span reader), the output from ``ctx.output``; its
    gold a :class:`~ek.agents.base.TaskSpec` from ``Case.metadata`` / ``expected_output`` (see
    :mod:`ek.adapters.pydantic_evals`). The metric scores them exactly as when called directly,
    and the result is ek's value with ek's reason, the verdict as an assertion, and the figures
    the corpus aggregate needs (:func:`score_results`).

    Args:
        metric: An ek metric instance, class, or registered name (``"tool_calls"``,
            ``"trajectory"``, ``"task_success"``, ``"cost_per_success"``).
        name: The evaluation's name in the report (default: the metric's ``name``).
        scope: Whose calls are scored: ``"top"`` (the top agent's own, default) or ``"all"``.
        use_spans: Read calls and usage from the span tree (default). ``False``: score the
            output alone (no OpenTelemetry needed; for output and state checks).
        figures: Also return the detail's numbers as ``<name>.<key>`` scores (default; needed
            by :func:`~ek.adapters.pydantic_evals.summary_from_report` for the ratio-of-sums
            aggregate).

    A run whose span tree holds no agent run (a tracer provider set, the agent not
    instrumented) is refused with :class:`~ek.adapters.pydantic_evals.NoAgentRunError`, which
    pydantic-evals records as the run's evaluator failure (``ReportCase.evaluator_failures``),
    never a score: its calls are unknown, and a 0.0 would pull every aggregate down.

    Two ``EkEvaluator`` s of one metric in a dataset need distinct ``name`` s (pydantic-evals
    would suffix the second's results, and the report could not be read back unambiguously).

    Raises:
        ValueError: an unknown ``scope`` or an empty ``name``.
        TypeError: ``metric`` is not an ek metric, or ``use_spans`` / ``figures`` is not a
            bool.
    """

    metric: Any
    name: str | None = None
    scope: str = "top"
    use_spans: bool = True
    figures: bool = True

    def __post_init__(self) -> None:
        self.metric = resolve_metric(self.metric)
        if self.scope not in _SCOPES:
            raise ValueError(f"scope must be one of {_SCOPES}, got {self.scope!r}")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(f"name must be a non-empty str or None, got {self.name!r}")
        for flag in ("use_spans", "figures"):  # "yes" or 0 would be read by its truthiness
            value = getattr(self, flag)
            if not isinstance(value, bool):
                raise TypeError(f"{flag} must be a bool, got {type(value).__name__}: {value!r:.50}")

    def get_default_evaluation_name(self) -> str:
        """The evaluation's name: ``name``, else the metric's ``name``."""
        return self.name or str(getattr(self.metric, "name", type(self.metric).__name__))

    def build_serialization_arguments(self) -> dict[str, Any]:
        """The spec's arguments: the metric by its registered name, not its object (a metric
        configured beyond its defaults is not rebuilt from a saved spec: construct it in code)."""
        args = super().build_serialization_arguments()
        args["metric"] = getattr(self.metric, "name", type(self.metric).__name__)
        return args

    def evaluate(
        self, ctx: EvaluatorContext[Any, Any, Any]
    ) -> dict[str, bool | int | float | str | EvaluationReason]:
        """Score one case's run (see the class docstring)."""
        episode = episode_from_context(ctx, scope=self.scope, use_spans=self.use_spans)
        score = run_metric(self.metric, episode, gold_from_context(ctx))
        return score_results(self.get_default_evaluation_name(), score, figures=self.figures)
