"""Score the traces you already have: OpenTelemetry spans -> Episodes (stdlib only).

Readers for OTLP JSON (the OpenTelemetry Collector's file exporter: ``{"resourceSpans": ...}``
one per line or one document) and for spans given as dicts (``ReadableSpan.to_json()``) or
objects; two conventions (the OpenTelemetry GenAI semantic conventions with the older names
still emitted, and OpenInference), each mapped in a documented table; one Episode per agent run,
mapped to tasks and trials so k traces of one task feed pass^k. One module a concept:

- :mod:`~ek.agents.traces._span`: :class:`Span` (convention-neutral), :class:`TraceFormatError`
- :mod:`~ek.agents.traces._otlp`: :func:`read_spans` (streamed), :func:`write_otlp_json`
- :mod:`~ek.agents.traces._genai`, :mod:`~ek.agents.traces._openinference`: the conventions
- :mod:`~ek.agents.traces._convention`: which convention a span follows
- :mod:`~ek.agents.traces._records`: a recorded call and usage -> ek's token kinds
- :mod:`~ek.agents.traces._content`: a framework's state or message read down to its content
- :mod:`~ek.agents.traces._tree`: one trace as a tree (parents that cannot be right repaired)
- :mod:`~ek.agents.traces._runs`: which spans are agents (the one that owns the model calls)
- :mod:`~ek.agents.traces._calls`: a requested call and its execution are one call
- :mod:`~ek.agents.traces._assemble`: one run -> calls, cost, output, what was not recorded
- :mod:`~ek.agents.traces._episodes`: :func:`read_traces`, :func:`episodes_from_spans`,
  :func:`read_trace_episodes` (tasks, trials; an unreadable run reported, never the file)
- :mod:`~ek.agents.traces._summary`: :func:`summary_from_traces` (what ``ek-agents report`` and
  ``gate`` read from a trace file)
- :mod:`~ek.agents.traces._evaluation`: ek's scores out as OpenTelemetry
  ``gen_ai.evaluation.result`` events: :func:`write_evaluation_results` (an OTLP JSON logs file,
  dependency-free) and :func:`emit_evaluation_results` (live, extra ``[otel]``)

See ``docs/traces.md`` for the full mapping tables.

Example:
    >>> from ek.agents.toolcalls import ToolCallMetric
    >>> t = "4bf92f3577b34da6a3ce929d0e0e4736"
    >>> spans = [
    ...     Span(t, "a1", None, "invoke_agent bot", 0, 9, {"gen_ai.operation.name": "invoke_agent"}),
    ...     Span(t, "b1", "a1", "execute_tool lookup", 1, 2, {"gen_ai.operation.name": "execute_tool",
    ...          "gen_ai.tool.name": "lookup", "gen_ai.tool.call.arguments": '{"order_id": "A1"}'}),
    ... ]
    >>> [ep] = episodes_from_spans(spans)
    >>> ToolCallMetric()(ep, [{"lookup": {"order_id": "A1"}}]).value
    1.0
"""

from __future__ import annotations

from ek.agents.traces._episodes import (
    SCOPES,
    TraceProblem,
    TraceReading,
    TraceWarning,
    episodes_from_spans,
    read_trace_episodes,
    read_traces,
)
from ek.agents.traces._evaluation import (
    EVALUATION_EVENT_NAME,
    EvaluationEvent,
    emit_evaluation_results,
    evaluation_events,
    otlp_logs_document,
    write_evaluation_results,
)
from ek.agents.traces._otlp import (
    MAX_LINE_BYTES,
    is_trace_document,
    read_spans,
    spans_from_document,
    spans_to_otlp,
    write_otlp_json,
)
from ek.agents.traces._span import Span, SpanEvent, TraceFormatError, span_from_otel
from ek.agents.traces._summary import is_trace_file, summary_from_traces

__all__ = [
    "EVALUATION_EVENT_NAME",
    "MAX_LINE_BYTES",
    "SCOPES",
    "EvaluationEvent",
    "Span",
    "SpanEvent",
    "TraceFormatError",
    "TraceProblem",
    "TraceReading",
    "TraceWarning",
    "emit_evaluation_results",
    "episodes_from_spans",
    "evaluation_events",
    "is_trace_document",
    "is_trace_file",
    "otlp_logs_document",
    "read_spans",
    "read_trace_episodes",
    "read_traces",
    "span_from_otel",
    "spans_from_document",
    "spans_to_otlp",
    "summary_from_traces",
    "write_evaluation_results",
    "write_otlp_json",
]
