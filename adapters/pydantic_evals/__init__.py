"""ek metrics inside pydantic-evals: :class:`EkEvaluator` and :func:`summary_from_report`.

:class:`EkEvaluator` (a pydantic-evals ``Evaluator``) builds an ek
:class:`~ek.agents.base.Episode` from each case's ``EvaluatorContext``, with the tool calls
and usage found in ``ctx.span_tree`` read by ek's span reader
(:func:`ek.agents.traces.episodes_from_spans`), and its gold from ``Case.metadata`` /
``expected_output``; it returns ek's value with ek's reason, the verdict as an assertion and
the figures ek's corpus aggregate needs. :func:`summary_from_report` reads the report of
``Dataset.evaluate(task, repeat=k)`` back into an ek
:class:`~ek.agents.harness.RunSummary`: pass^k with intervals, Cost-of-Pass, and the input of
``ek-agents gate``.

Needs the extra: ``pip install ek-agents[pydantic-evals]`` (pydantic-evals >=2.4,<3; another
version is refused at import with the ``pip`` command that fixes it). The tool calls come from the span
tree, so set an OpenTelemetry SDK tracer provider before evaluating
(``opentelemetry.trace.set_tracer_provider(TracerProvider())``, or ``logfire.configure()``)
and instrument the agent (``Agent(..., capabilities=[Instrumentation()])`` or
``Agent.instrument_all()``): a run whose span tree holds no agent run is refused
(:class:`NoAgentRunError`, the run's evaluator failure in the report), never scored as if it
made no calls. Nothing is sent anywhere unless you configure an exporter. Reasons are in the
report: ``report.print(include_reasons=True)`` shows them.
"""

from __future__ import annotations

from . import _version  # noqa: F401  (before the host: refuses a version out of range)
from ._convert import (
    NoAgentRunError,
    episode_from_context,
    gold_from_context,
    spans_from_span_tree,
)
from ._evaluator import EkEvaluator, score_results
from ._report import episodes_from_report, summary_from_report

__all__ = [
    "EkEvaluator",
    "NoAgentRunError",
    "episode_from_context",
    "episodes_from_report",
    "gold_from_context",
    "score_results",
    "spans_from_span_tree",
    "summary_from_report",
]
