"""The OpenTelemetry GenAI semantic conventions (and the older names still emitted).

What a span is (its role), read from ``gen_ai.operation.name``:

==========================================================  =======  =================================
attribute                                                   role     notes
==========================================================  =======  =================================
``gen_ai.operation.name`` = ``invoke_agent``                agent    one agent run (pydantic-ai: ``invoke_agent <name>``)
``gen_ai.operation.name`` = ``chat`` / ``text_completion``  llm      a model call
/ ``generate_content`` / ``embeddings``
``gen_ai.operation.name`` = ``execute_tool``                tool     one tool execution
``gen_ai.operation.name`` = ``handoff``                     tool     a handoff to another agent
                                                                     (OpenLLMetry)
no operation, ``gen_ai.tool.name`` set                      tool     older pydantic-ai ``running tool``
no operation, ``agent_name`` set                            agent    older pydantic-ai ``agent run``
``traceloop.span.kind`` = ``agent`` / ``tool`` /            agent /  OpenLLMetry (Traceloop)
``handoff`` / ``workflow`` / ``task``                       tool /
                                                            chain
``llm.request.type`` = ``chat`` / ``completion``            llm      OpenLLMetry
no operation, ``gen_ai.system`` / ``gen_ai.provider.name``  llm      older instrumentations
with a model or usage attribute
==========================================================  =======  =================================

What is read from each role (first name present wins):

=====================  ====================================================================
field                  attributes
=====================  ====================================================================
tool name              ``gen_ai.tool.name``, ``traceloop.entity.name`` (Traceloop tool spans)
tool arguments         ``gen_ai.tool.call.arguments``, ``tool_arguments`` (older pydantic-ai),
                       framework wrappers taken off by the call normaliser's table
                       (:data:`~ek.agents.toolcalls._parse.ARGUMENT_SHAPES`: pydantic-ai's
                       ``{"INVALID_JSON": "<raw>"}``, OpenLLMetry LangChain's callback payload)
tool result            ``gen_ai.tool.call.result``, ``tool_response`` (older pydantic-ai), read
                       by :func:`~ek.agents.traces._content.tool_result`
tool call id           ``gen_ai.tool.call.id``
handoff                ``gen_ai.operation.name`` = ``handoff``; target ``gen_ai.handoff.to_agent``
results the model saw  ``gen_ai.input.messages`` parts of type ``tool_call_response`` (``id``,
                       ``response``): a call's result when its span records none
tool error             span status ``ERROR`` (status message, else the ``exception`` event)
input tokens           ``gen_ai.usage.input_tokens``, ``gen_ai.usage.prompt_tokens`` (all
                       input, cached included)
output tokens          ``gen_ai.usage.output_tokens``, ``gen_ai.usage.completion_tokens``
                       (reasoning included)
cache read             ``gen_ai.usage.cache_read.input_tokens``,
                       ``gen_ai.usage.cache_read_input_tokens``,
                       ``gen_ai.usage.details.cache_read_tokens`` (pydantic-ai)
cache write            ``gen_ai.usage.cache_creation.input_tokens``,
                       ``gen_ai.usage.cache_creation_input_tokens``,
                       ``gen_ai.usage.details.cache_write_tokens`` (pydantic-ai)
reasoning              ``gen_ai.usage.reasoning.output_tokens``,
                       ``gen_ai.usage.details.reasoning_tokens``, ``gen_ai.usage.reasoning_tokens``,
                       ``llm.usage.reasoning_tokens`` (OpenLLMetry)
total (never split)    ``gen_ai.usage.total_tokens``, ``llm.usage.total_tokens``
agent span usage       the same names under ``gen_ai.aggregated_usage.`` (pydantic-ai), read
                       only when no model-call span in the run reports usage
model                  ``gen_ai.response.model``, ``gen_ai.request.model``, ``model_name``
agent name             ``gen_ai.agent.name``, ``agent_name``, ``traceloop.entity.name``
requested calls        ``gen_ai.output.messages`` parts of type ``tool_call`` (``id``,
                       ``name``, ``arguments``); OpenLLMetry
                       ``gen_ai.completion.<i>.tool_calls.<j>.{name,arguments,id}``
output text            ``gen_ai.output.messages`` text parts; ``gen_ai.completion.<i>.content``;
                       ``gen_ai.completion``
agent output           ``final_result`` (pydantic-ai), ``gen_ai.task.output`` /
                       ``traceloop.entity.output`` (OpenLLMetry), else
                       ``gen_ai.output.messages``; read down to the final answer
                       (:func:`~ek.agents.traces._content.final_answer`)
input                  ``gen_ai.input.messages`` (first user text), ``gen_ai.prompt``
conversation           ``gen_ai.conversation.id`` (kept in the episode's metadata)
=====================  ====================================================================

Example:
    >>> a = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
    ...      "gen_ai.tool.call.arguments": '{"id": "A1"}', "gen_ai.tool.call.id": "c1"}
    >>> role(a), tool_call(a).name, tool_call(a).arguments
    ('tool', 'lookup', '{"id": "A1"}')
    >>> usage({"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
    ...        "gen_ai.usage.cache_read.input_tokens": 20}).to_cost("m").input_tokens
    80
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ek.agents.toolcalls._parse import unwrap_arguments

from ._attrs import count, first, indexed, maybe_json, text_of
from ._content import final_answer, tool_result
from ._records import CallRecord, Usage

__all__ = [
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

OPERATION = "gen_ai.operation.name"
_LLM_OPS = frozenset({"chat", "text_completion", "generate_content", "embeddings", "completion"})
_TRACELOOP = {
    "agent": "agent",
    "tool": "tool",
    "handoff": "tool",
    "workflow": "chain",
    "task": "chain",
}


def role(attrs: Mapping[str, Any]) -> str | None:
    """``"agent"``, ``"llm"``, ``"tool"``, ``"chain"`` or ``None`` (see the module's table)."""
    op = attrs.get(OPERATION)
    if op == "invoke_agent":
        return "agent"
    if op in ("execute_tool", "handoff"):
        return "tool"
    if op in _LLM_OPS:
        return "llm"
    if op is not None:
        return None
    tl = attrs.get("traceloop.span.kind")
    if isinstance(tl, str) and tl in _TRACELOOP:
        return _TRACELOOP[tl]
    if attrs.get("gen_ai.tool.name") is not None:
        return "tool"
    if attrs.get("agent_name") is not None:
        return "agent"
    if attrs.get("llm.request.type") in ("chat", "completion"):
        return "llm"
    if first(attrs, "gen_ai.system", "gen_ai.provider.name") is not None and (
        first(attrs, "gen_ai.request.model", "gen_ai.response.model") is not None
        or usage(attrs).reported
    ):
        return "llm"
    return None


def tool_call(attrs: Mapping[str, Any]) -> CallRecord:
    """The call of a tool span (name, arguments as given, result, id; the error is the span's);
    a handoff span's record names the agent handed to."""
    if attrs.get(OPERATION) == "handoff" or attrs.get("traceloop.span.kind") == "handoff":
        target = attrs.get("gen_ai.handoff.to_agent")
        known = isinstance(target, str) and target not in ("", "unknown")
        return CallRecord(name=None, handoff=True, target=target if known else None)
    name = first(attrs, "gen_ai.tool.name", "traceloop.entity.name")
    args = first(attrs, "gen_ai.tool.call.arguments", "tool_arguments")
    cid = first(attrs, "gen_ai.tool.call.id")
    return CallRecord(
        name=name,
        arguments=unwrap_arguments(args),
        result=tool_result(first(attrs, "gen_ai.tool.call.result", "tool_response")),
        call_id=None if cid is None else str(cid),
    )


def usage(attrs: Mapping[str, Any], prefix: str = "gen_ai.usage.") -> Usage:
    """The token counts of a span (``prefix`` ``"gen_ai.aggregated_usage."`` for pydantic-ai's
    agent spans)."""
    p = prefix
    return Usage(
        input=count(attrs, p + "input_tokens", p + "prompt_tokens"),
        output=count(attrs, p + "output_tokens", p + "completion_tokens"),
        cache_read=count(
            attrs,
            p + "cache_read.input_tokens",
            p + "cache_read_input_tokens",
            p + "details.cache_read_tokens",
        ),
        cache_write=count(
            attrs,
            p + "cache_creation.input_tokens",
            p + "cache_creation_input_tokens",
            p + "details.cache_write_tokens",
        ),
        reasoning=count(
            attrs,
            p + "reasoning.output_tokens",
            p + "details.reasoning_tokens",
            p + "reasoning_tokens",
            "llm.usage.reasoning_tokens",
        ),
        total=count(attrs, p + "total_tokens", "llm.usage.total_tokens"),
    )


def model(attrs: Mapping[str, Any]) -> str | None:
    """The model that answered (response model first), or ``None``."""
    m = first(attrs, "gen_ai.response.model", "gen_ai.request.model", "model_name")
    return m if isinstance(m, str) else None


def agent_name(attrs: Mapping[str, Any]) -> str | None:
    """The agent's name, or ``None``."""
    n = first(attrs, "gen_ai.agent.name", "agent_name", "traceloop.entity.name")
    return n if isinstance(n, str) else None


def _messages(attrs: Mapping[str, Any], key: str) -> list[Any]:
    msgs = maybe_json(attrs.get(key))
    return list(msgs) if isinstance(msgs, (list, tuple)) else []


def _parts(msg: Any) -> list[Any]:
    if not isinstance(msg, Mapping):
        return []
    parts = msg.get("parts")
    return list(parts) if isinstance(parts, (list, tuple)) else []


def requested_calls(attrs: Mapping[str, Any]) -> list[CallRecord]:
    """The tool calls a model span's output asks for (not seen executed)."""
    out: list[CallRecord] = []
    for msg in _messages(attrs, "gen_ai.output.messages"):
        for part in _parts(msg):
            if isinstance(part, Mapping) and part.get("type") == "tool_call":
                arguments = unwrap_arguments(part.get("arguments"))
                out.append(CallRecord.asked(part.get("name"), arguments, part.get("id")))
    if out:
        return out
    rx = r"gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.(name|arguments|id)"
    return [
        CallRecord.asked(item.get("name"), item.get("arguments"), item.get("id"))
        for item in indexed(attrs, rx)
    ]


def output_text(attrs: Mapping[str, Any]) -> str | None:
    """The text a model span answered with, or ``None``."""
    texts = [
        t
        for msg in _messages(attrs, "gen_ai.output.messages")
        for t in (text_of(p) for p in _parts(msg))
        if t
    ]
    if texts:
        return "".join(texts)
    t = first(attrs, "gen_ai.completion.0.content", "gen_ai.completion")
    return t if isinstance(t, str) else None


def agent_output(attrs: Mapping[str, Any]) -> Any:
    """An agent span's final answer (``final_result``, ``gen_ai.task.output`` /
    ``traceloop.entity.output``, else its output messages' text), or ``None``."""
    out = first(attrs, "final_result", "gen_ai.task.output", "traceloop.entity.output")
    if out is not None:
        return final_answer(out)
    return output_text(attrs)


def seen_results(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """``call id -> result`` of the tool results a model span's input messages hold (what the
    model was told each call returned)."""
    out: dict[str, Any] = {}
    for msg in _messages(attrs, "gen_ai.input.messages"):
        for part in _parts(msg):
            if isinstance(part, Mapping) and part.get("type") == "tool_call_response":
                cid = part.get("id")
                if cid is not None:
                    out[str(cid)] = tool_result(part.get("response", part.get("result")))
    return out


def input_text(attrs: Mapping[str, Any]) -> Any:
    """The first user text of the input messages (or ``gen_ai.prompt``), or ``None``."""
    for msg in _messages(attrs, "gen_ai.input.messages"):
        if isinstance(msg, Mapping) and msg.get("role") == "user":
            texts = [t for t in (text_of(p) for p in _parts(msg)) if t]
            if texts:
                return "".join(texts)
    p = attrs.get("gen_ai.prompt")
    return p if isinstance(p, str) else None
