"""Which convention a span follows, and what it records: one entry point per field.

A span carrying ``openinference.span.kind`` is read by :mod:`~ek.agents.traces._openinference`;
every other span by :mod:`~ek.agents.traces._genai` (the OpenTelemetry GenAI conventions and the
older names still emitted). The two can be mixed in one trace (e.g. a pydantic-ai agent calling
an OpenInference-instrumented client).

Example:
    >>> from ek.agents.traces import Span
    >>> oi = Span("01", "02", None, "lookup", 0, 1, {"openinference.span.kind": "TOOL",
    ...           "tool.name": "lookup", "input.value": '{"id": 1}'})
    >>> role(oi), tool_call(oi).name, tool_call(oi).arguments
    ('tool', 'lookup', '{"id": 1}')
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from . import _genai as genai
from . import _openinference as openinference
from ._content import handoff_command
from ._records import CallRecord, Usage
from ._span import Span

__all__ = [
    "agent_name",
    "agent_output",
    "agent_usage",
    "input_value",
    "model",
    "output_text",
    "requested_calls",
    "role",
    "seen_results",
    "tool_call",
    "usage",
]


def _oi(span: Span) -> bool:
    return openinference.KIND in span.attributes


def role(span: Span) -> str | None:
    """``"agent"``, ``"llm"``, ``"tool"``, ``"chain"``, or ``None`` for any other span."""
    return openinference.role(span.attributes) if _oi(span) else genai.role(span.attributes)


def tool_call(span: Span) -> CallRecord:
    """The call a tool span records, with the span's error when it failed; a call whose result
    hands the conversation to another agent (:func:`~ek.agents.traces._content.handoff_command`)
    is a handoff."""
    a = span.attributes
    rec = openinference.tool_call(a, span.name) if _oi(span) else genai.tool_call(a)
    command = handoff_command(rec.result)
    if command is not None:
        rec = replace(rec, handoff=True, target=command[0], result=command[1])
    return replace(rec, error=span.error_message())


def usage(span: Span) -> Usage:
    """The token counts a model-call span reports."""
    return openinference.usage(span.attributes) if _oi(span) else genai.usage(span.attributes)


def agent_usage(span: Span) -> Usage:
    """What an agent span reports for the whole run (pydantic-ai's ``gen_ai.aggregated_usage.*``,
    else the span's own usage attributes)."""
    if _oi(span):
        return openinference.usage(span.attributes)
    agg = genai.usage(span.attributes, "gen_ai.aggregated_usage.")
    return agg if agg.reported else genai.usage(span.attributes)


def model(span: Span) -> str | None:
    """The model a span names, or ``None``."""
    return openinference.model(span.attributes) if _oi(span) else genai.model(span.attributes)


def agent_name(span: Span) -> str | None:
    """The agent's name, or ``None`` when the span names none."""
    a = span.attributes
    return openinference.agent_name(a, span.name) if _oi(span) else genai.agent_name(a)


def requested_calls(span: Span) -> list[CallRecord]:
    """The tool calls a model-call span's output asks for."""
    a = span.attributes
    return openinference.requested_calls(a) if _oi(span) else genai.requested_calls(a)


def seen_results(span: Span) -> dict[str, Any]:
    """``call id -> result`` of the tool results in a model-call span's input messages."""
    a = span.attributes
    return openinference.seen_results(a) if _oi(span) else genai.seen_results(a)


def output_text(span: Span) -> str | None:
    """The text a model-call span answered with."""
    a = span.attributes
    return openinference.output_text(a) if _oi(span) else genai.output_text(a)


def agent_output(span: Span) -> Any:
    """An agent (or root) span's final output, or ``None``."""
    a = span.attributes
    return openinference.agent_output(a) if _oi(span) else genai.agent_output(a)


def input_value(span: Span) -> Any:
    """The input a span records, or ``None``."""
    a = span.attributes
    return openinference.input_text(a) if _oi(span) else genai.input_text(a)
