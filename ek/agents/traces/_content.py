"""What a recorded value means: a framework's state or message object read down to its content.

Instrumentations record what the framework hands them, which is often a framework object
serialised, not the value a user means:

==============================================  ==============================================
recorded                                        read as
==============================================  ==============================================
graph state ``{"messages": [...]}``             the last assistant message's text (LangGraph)
a LangChain message (``{"lc": 1, "type":        its ``content`` (an AI message's text, a tool
"constructor", "id": [..., "AIMessage"],        message's result)
"kwargs": {"content": ...}}``), its
``messages_to_dict`` form (``{"type": "ai",
"data": {"content": ...}}``) or a plain dict
(``{"type": "ai", "content": ...}``)
a LangGraph ``Command`` (``{"goto": "billing",  a handoff to ``goto``; its result is the tool
"graph": ..., "update": {"messages": [...]}}``)  message in ``update`` (:func:`handoff_command`)
an agent call's keyword arguments as input      the request (``task``, ``input``, ``prompt``,
(smolagents: ``{"task": ..., "stream": ...}``)  ``query``, ``question``; :func:`first_request`)
a chat message ``{"role": "assistant",          its text
"content": ...}`` / GenAI ``{"role":
"assistant", "parts": [...]}``
a callback payload ``{"outputs": ...,           what it wraps (OpenLLMetry LangChain)
"kwargs": ...}`` / ``{"output": ...,
"kwargs": ...}``
anything else                                   itself
==============================================  ==============================================

JSON object or array text is decoded first. A tool result that is JSON text of an object or a
list is decoded (what the tool returned); other text stays text.

Example:
    >>> final_answer({"messages": [{"role": "user", "content": "hi"},
    ...                            {"role": "assistant", "content": "hello"}]})
    'hello'
    >>> tool_result('{"output": {"lc": 1, "type": "constructor", "id": ["ToolMessage"],'
    ...             ' "kwargs": {"content": "{\\\\"status\\\\": \\\\"paid\\\\"}"}}, "kwargs": {}}')
    {'status': 'paid'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._attrs import maybe_json, text_of

__all__ = ["final_answer", "first_request", "handoff_command", "message_content", "tool_result"]

_ASSISTANT = frozenset({"assistant", "ai", "aimessage", "aimessagechunk", "model"})
#: Callback payloads around a value (OpenLLMetry LangChain), by their keys: the key to read.
_WRAPPERS = {frozenset({"outputs", "kwargs"}): "outputs", frozenset({"output", "kwargs"}): "output"}
_MAX_DEPTH = 8


def _kind(msg: Mapping[str, Any]) -> str | None:
    """The role of a message object (``role``, ``type``, or a LangChain class name)."""
    ids = msg.get("id")
    if msg.get("lc") is not None and isinstance(ids, (list, tuple)) and ids:
        return str(ids[-1]).lower()
    for key in ("role", "type"):
        v = msg.get(key)
        if isinstance(v, str) and v not in ("constructor", "text"):
            return v.lower()
    return None


def message_content(msg: Any) -> Any:
    """The content of one message object (LangChain serialised or plain, chat or GenAI parts),
    or ``None`` when ``msg`` is not a message.

    Example:
        >>> message_content({"type": "ai", "data": {"content": "hi"}})
        'hi'
        >>> message_content({"role": "assistant", "parts": [{"type": "text", "content": "ok"}]})
        'ok'
    """
    if not isinstance(msg, Mapping):
        return None
    if msg.get("lc") is not None and isinstance(msg.get("kwargs"), Mapping):
        msg = msg["kwargs"]
    elif isinstance(msg.get("type"), str) and isinstance(msg.get("data"), Mapping):
        msg = msg["data"]
    if "content" in msg:
        content = msg["content"]
        return text_of(content) if isinstance(content, (list, tuple)) else content
    if isinstance(msg.get("parts"), (list, tuple)):
        return text_of(msg["parts"])
    return None


def _unwrapped(value: Any) -> Any:
    """``value`` decoded, with callback wrappers (``{"outputs": x, "kwargs": ...}``) taken off."""
    for _ in range(_MAX_DEPTH):
        value = maybe_json(value)
        if not isinstance(value, Mapping):
            return value
        inner = _WRAPPERS.get(frozenset(value))
        if inner is None:
            return value
        value = value[inner]
    return value


def _last_assistant(messages: Any) -> Any:
    if not isinstance(messages, (list, tuple)):
        return None
    for msg in reversed(messages):
        if isinstance(msg, Mapping) and _kind(msg) in _ASSISTANT:
            text = message_content(msg)
            if text not in (None, ""):
                return text
    return None


def final_answer(value: Any) -> Any:
    """The final answer a recorded agent output holds (see the module's table); ``None`` stays
    ``None``."""
    value = _unwrapped(value)
    if isinstance(value, Mapping):
        if "messages" in value:
            answer = _last_assistant(value["messages"])
            if answer is not None:
                return answer
        elif _kind(value) in _ASSISTANT or value.get("lc") is not None:
            content = message_content(value)
            if content is not None:
                return content
    elif isinstance(value, (list, tuple)):
        answer = _last_assistant(value)
        if answer is not None:
            return answer
    return value


#: The argument that holds the request when an agent's input is its call's keyword arguments
#: (smolagents' ``run(task=...)``), in the order they are looked for.
_REQUEST_KEYS = ("task", "input", "prompt", "query", "question")


def first_request(value: Any) -> Any:
    """The first user message a recorded input holds (graph state ``{"messages": [...]}`` or a
    list of messages), the request among an agent call's keyword arguments (``task``,
    ``input``, ``prompt``, ``query`` or ``question`` as text), else the input as recorded.

    Example:
        >>> first_request('{"task": "Refund A1", "stream": false, "reset": true}')
        'Refund A1'
    """
    value = _unwrapped(value)
    if isinstance(value, Mapping) and "messages" not in value:
        asked = next((value[k] for k in _REQUEST_KEYS if isinstance(value.get(k), str)), None)
        return value if asked is None else asked
    messages = value.get("messages") if isinstance(value, Mapping) else value
    if isinstance(messages, (list, tuple)):
        for msg in messages:
            if isinstance(msg, Mapping) and _kind(msg) in ("user", "human", "humanmessage"):
                content = message_content(msg)
                if content not in (None, ""):
                    return content
    return value


_COMMAND_KEYS = frozenset({"goto", "graph", "update", "resume"})


def handoff_command(value: Any) -> tuple[str, Any] | None:
    """``(target agent, result)`` when a tool's recorded result is a LangGraph ``Command`` that
    goes to another agent (a handoff), else ``None``.

    Example:
        >>> handoff_command({"graph": "__parent__", "goto": "billing", "update": {"messages": [
        ...     {"type": "tool", "data": {"content": "Transferred to billing."}}]}})
        ('billing', 'Transferred to billing.')
    """
    value = _unwrapped(value)
    if not isinstance(value, Mapping) or "goto" not in value or not set(value) <= _COMMAND_KEYS:
        return None
    goto = value["goto"]
    if isinstance(goto, (list, tuple)) and len(goto) == 1:
        goto = goto[0]
    if not isinstance(goto, str) or not goto:
        return None
    update = value.get("update")
    messages = update.get("messages") if isinstance(update, Mapping) else None
    result = None
    if isinstance(messages, (list, tuple)) and messages:
        result = message_content(messages[-1])
    return goto, maybe_json(result)


def tool_result(value: Any) -> Any:
    """A tool's result as it returned it: a framework's tool message read down to its content
    (JSON object or array text decoded)."""
    value = _unwrapped(value)
    if isinstance(value, Mapping) and (
        value.get("lc") is not None or _kind(value) in ("tool", "toolmessage")
    ):
        content = message_content(value)
        if content is not None:
            return maybe_json(content)
    return value
