"""The OpenInference conventions (Arize Phoenix; ``openinference-instrumentation-*``).

A span is OpenInference's when it carries ``openinference.span.kind``:

=========================================  =======
``openinference.span.kind``                role
=========================================  =======
``AGENT``                                  agent
``LLM``                                    llm
``TOOL``                                   tool
``CHAIN``                                  chain
others (``RETRIEVER``, ``EMBEDDING``, ...)  none
=========================================  =======

What is read (first name present wins):

=====================  ====================================================================
field                  attributes
=====================  ====================================================================
tool name              ``tool.name``
tool arguments         ``tool.parameters`` when it holds arguments (not a parameter schema:
                       :func:`~ek.agents.toolcalls._parse.is_parameter_schema`), else
                       ``input.value``; framework wrappers taken off by the call normaliser's
                       table (:data:`~ek.agents.toolcalls._parse.ARGUMENT_SHAPES`: smolagents'
                       ``{"args", "kwargs", ...}``)
tool result            ``output.value``, read by :func:`~ek.agents.traces._content.tool_result`
tool call id           ``tool_call.id``, ``tool.id``
handoff                a ``TOOL`` span with no ``tool.name`` named ``handoff to <agent>``
                       (``output.value`` names the agent)
results the model saw  ``llm.input_messages.<i>.message`` with ``role`` ``tool``:
                       ``.tool_call_id``, ``.content`` (a call's result when its span has none)
tool error             span status ``ERROR`` (status message, else the ``exception`` event)
input tokens           ``llm.token_count.prompt`` (all input, cached included)
output tokens          ``llm.token_count.completion`` (reasoning included)
cache read / write     ``llm.token_count.prompt_details.cache_read`` (else ``.cache_input``) /
                       ``.cache_write``
reasoning              ``llm.token_count.completion_details.reasoning``
total (never split)    ``llm.token_count.total``
dollars                ``llm.cost.total`` (a bill the source reported; a price you pass wins)
model                  ``llm.response.model_name``, ``llm.model_name``,
                       ``llm.request.model_name``
agent name             ``agent.name``; smolagents: the span name ``<name>.run`` (an agent span
                       with ``smolagents.*`` attributes)
requested calls        ``llm.output_messages.<i>.message.tool_calls.<j>.tool_call.function.name``
                       / ``.function.arguments`` / ``tool_call.id``
output text            ``llm.output_messages.<i>.message.content``
agent output           ``output.value``, read down to the final answer
                       (:func:`~ek.agents.traces._content.final_answer`)
input                  ``input.value``
=====================  ====================================================================

Example:
    >>> a = {"openinference.span.kind": "LLM", "llm.token_count.prompt": 120,
    ...      "llm.token_count.completion": 30, "llm.token_count.prompt_details.cache_read": 20,
    ...      "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup",
    ...      "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}"}
    >>> role(a), usage(a).to_cost("m").input_tokens, requested_calls(a)[0].name
    ('llm', 100, 'lookup')
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ek.agents.toolcalls._parse import is_parameter_schema, unwrap_arguments

from ._attrs import count, first, indexed, maybe_json
from ._content import final_answer, tool_result
from ._records import CallRecord, Usage

__all__ = [
    "KIND",
    "agent_name",
    "agent_output",
    "input_text",
    "model",
    "output_text",
    "requested_calls",
    "role",
    "seen_results",
    "tool_call",
    "usage",
]

#: The attribute that marks an OpenInference span.
KIND = "openinference.span.kind"
_ROLES = {"AGENT": "agent", "LLM": "llm", "TOOL": "tool", "CHAIN": "chain"}


def role(attrs: Mapping[str, Any]) -> str | None:
    """``"agent"``, ``"llm"``, ``"tool"``, ``"chain"`` or ``None`` (see the module's table)."""
    k = attrs.get(KIND)
    return _ROLES.get(k.upper()) if isinstance(k, str) else None


def _value(attrs: Mapping[str, Any], key: str) -> Any:
    v = attrs.get(key)
    mime = attrs.get(f"{key.split('.')[0]}.mime_type")
    if isinstance(v, str) and mime == "application/json":
        try:
            return json.loads(v)
        except (ValueError, RecursionError):
            return v
    return v


def tool_call(attrs: Mapping[str, Any], span_name: str = "") -> CallRecord:
    """The call of a TOOL span (name, arguments as given, result, id); a handoff span's record
    names the agent handed to."""
    name = attrs.get("tool.name")
    if name is None and span_name.startswith("handoff to "):
        target = attrs.get("output.value")
        if not isinstance(target, str) or not target:
            target = span_name.removeprefix("handoff to ")
        return CallRecord(name=None, handoff=True, target=target)
    params = attrs.get("tool.parameters")
    if (
        params is not None
        and isinstance(maybe_json(params), Mapping)
        and not is_parameter_schema(params)
    ):
        args: Any = params
    else:
        args = attrs.get("input.value")
    cid = first(attrs, "tool_call.id", "tool.id")
    return CallRecord(
        name=name,
        arguments=unwrap_arguments(args),
        result=tool_result(_value(attrs, "output.value")),
        call_id=None if cid is None else str(cid),
    )


def usage(attrs: Mapping[str, Any]) -> Usage:
    """The token counts (and reported dollars) of a span."""
    d = attrs.get("llm.cost.total")
    dollars = (
        float(d)
        if isinstance(d, (int, float)) and not isinstance(d, bool) and 0 <= d < float("inf")
        else None
    )
    return Usage(
        input=count(attrs, "llm.token_count.prompt"),
        output=count(attrs, "llm.token_count.completion"),
        cache_read=count(
            attrs,
            "llm.token_count.prompt_details.cache_read",
            "llm.token_count.prompt_details.cache_input",
        ),
        cache_write=count(attrs, "llm.token_count.prompt_details.cache_write"),
        reasoning=count(attrs, "llm.token_count.completion_details.reasoning"),
        total=count(attrs, "llm.token_count.total"),
        dollars=dollars,
    )


def model(attrs: Mapping[str, Any]) -> str | None:
    """The model that answered, or ``None``."""
    m = first(attrs, "llm.response.model_name", "llm.model_name", "llm.request.model_name")
    return m if isinstance(m, str) else None


def agent_name(attrs: Mapping[str, Any], span_name: str = "") -> str | None:
    """The agent's name (``agent.name``; smolagents names its agent span ``<name>.run``), or
    ``None``."""
    n = attrs.get("agent.name")
    if isinstance(n, str) and n:
        return n
    if span_name.endswith(".run") and len(span_name) > 4 and "smolagents.max_steps" in attrs:
        return span_name[:-4]
    return None


_CALL_RX = (
    r"llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\."
    r"(tool_call\.function\.name|tool_call\.function\.arguments|tool_call\.id)"
)


def requested_calls(attrs: Mapping[str, Any]) -> list[CallRecord]:
    """The tool calls an LLM span's output messages ask for (not seen executed)."""
    return [
        CallRecord.asked(
            item.get("tool_call.function.name"),
            item.get("tool_call.function.arguments"),
            item.get("tool_call.id"),
        )
        for item in indexed(attrs, _CALL_RX)
    ]


def output_text(attrs: Mapping[str, Any]) -> str | None:
    """The text an LLM span answered with, or ``None``."""
    items = indexed(attrs, r"llm\.output_messages\.(\d+)\.(message\.content)")
    texts = [i["message.content"] for i in items if isinstance(i.get("message.content"), str)]
    return "".join(texts) if texts else None


def agent_output(attrs: Mapping[str, Any]) -> Any:
    """An AGENT (or CHAIN) span's final answer: ``output.value`` read down to it, or ``None``."""
    return final_answer(_value(attrs, "output.value"))


_SEEN_RX = r"llm\.input_messages\.(\d+)\.(message\.role|message\.tool_call_id|message\.content)"


def seen_results(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """``call id -> result`` of the tool messages in an LLM span's input (what the model was
    told each call returned)."""
    out: dict[str, Any] = {}
    for item in indexed(attrs, _SEEN_RX):
        cid = item.get("message.tool_call_id")
        if item.get("message.role") == "tool" and cid is not None:
            out[str(cid)] = tool_result(item.get("message.content"))
    return out


def input_text(attrs: Mapping[str, Any]) -> Any:
    """The first user message of an LLM span (``llm.input_messages.<i>.message.content``), else
    ``input.value`` (decoded when it is JSON), or ``None``."""
    rx = r"llm\.input_messages\.(\d+)\.(message\.role|message\.content)"
    for item in indexed(attrs, rx):
        if item.get("message.role") == "user" and isinstance(item.get("message.content"), str):
            return item["message.content"]
    return _value(attrs, "input.value")
