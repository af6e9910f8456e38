"""Chat messages -> :class:`~ek.agents.base.Trajectory`, and usage -> :class:`~ek.agents.base.Cost`.

Duck-typed: every reader takes attributes *or* mapping keys, so live objects (Inspect
``ChatMessage``, LangChain messages, Anthropic SDK blocks) and their JSON dumps read the same.

- :func:`trajectory_from_messages` turns a chat transcript into a :class:`Trajectory`. It reads
  the **OpenAI** chat format (assistant ``tool_calls`` with JSON-string ``arguments``; ``tool``
  messages answering by ``tool_call_id``; the legacy ``function_call`` / ``function`` pair),
  **Anthropic** content blocks (``tool_use`` / ``tool_result`` with ``is_error``), **Inspect**
  ``ChatMessage`` objects or dicts (``ToolCall.arguments`` already a dict; ``ChatMessageTool.error``)
  and **LangChain** messages (``AIMessage.tool_calls`` / ``invalid_tool_calls``,
  ``ToolMessage.status``). Calls are paired with results by id, by position where no id exists.
  Every call is read by the one call-shape normaliser (:func:`~ek.agents.toolcalls.normalize_call`).
  A malformed call (no tool name, arguments that are not a JSON object) is model output: it
  becomes a step of tool :data:`~ek.agents.toolcalls.MALFORMED_TOOL` whose ``error`` says why,
  which the metrics score as a wrong call; never a crash.
- :func:`cost_from_usage` reads one usage record (Inspect's ``ModelUsage`` field names) as a
  :class:`Cost` in ek's token kinds.

Example:
    >>> msgs = [
    ...     {"role": "user", "content": "refund order A1"},
    ...     {"role": "assistant", "content": None, "tool_calls": [
    ...         {"id": "c1", "type": "function",
    ...          "function": {"name": "lookup", "arguments": '{"order_id": "A1"}'}},
    ...         {"id": "c2", "type": "function",
    ...          "function": {"name": "refund", "arguments": '{"order_id": '}}]},
    ...     {"role": "tool", "tool_call_id": "c2", "content": "bad arguments"},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "paid"},
    ... ]
    >>> t = trajectory_from_messages(msgs)
    >>> [(s.tool, dict(s.args), s.observation) for s in t]
    [('lookup', {'order_id': 'A1'}, 'paid'), ('<malformed call>', {}, 'bad arguments')]
    >>> t[1].error.startswith("call 'refund': arguments string is not JSON")
    True
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ek._validate import is_number, short_repr
from ek.agents._episode import Cost, Step, Trajectory
from ek.agents.bridge._duck import content_text, field_of, token_count
from ek.agents.toolcalls._parse import malformed_step, normalize_call

__all__ = ["cost_from_usage", "trajectory_from_messages"]

_MAX_DOLLARS = sys.float_info.max  # a reported cost beyond a float (e.g. 10**400) is not used


def _role(msg: Any) -> str | None:
    r = field_of(msg, "role")
    if r is None:  # LangChain messages have .type ("ai", "human", "tool", "system")
        r = field_of(msg, "type")
    return {"ai": "assistant", "human": "user", "model": "assistant"}.get(r, r)


def _unwrap(msg: Any) -> Any:
    # LangChain's messages_to_dict(): {"type": "ai", "data": {...}}
    if (
        isinstance(msg, Mapping)
        and set(msg) == {"type", "data"}
        and isinstance(msg["data"], Mapping)
    ):
        return {**msg["data"], "type": msg["type"]}
    return msg


def _id(value: Any) -> str | None:
    """A call id as text: a non-empty str, or an int; anything else (model output) is no id,
    never turned into text by its ``repr``."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() <= 64:
        return str(value)
    return None


def _text(value: Any) -> str:
    """A message from model output: a str as it is, anything else cut short."""
    return value if isinstance(value, str) else short_repr(value)


class _Pairing:
    """Calls in order, each waiting for its result (by id, else by position)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.by_id: dict[str, int] = {}

    def add_call(self, call: Any, call_id: Any, error: str | None = None) -> None:
        """Record one call, read by the one call-shape normaliser (model output: a malformed
        call becomes a :data:`~ek.agents.toolcalls.MALFORMED_TOOL` step saying why)."""
        step = normalize_call(call, strict=False)
        cid = _id(call_id)
        self.calls.append(
            {
                "tool": step.tool,
                "args": dict(step.args),
                "error": error or step.error,
                "id": cid,
                "observation": None,
                "done": False,
            }
        )
        if cid is not None:
            self.by_id[cid] = len(self.calls) - 1

    def _waiting(self, call_id: Any, name: Any) -> int | None:
        """The call a result answers: by id, else the first open call (same name preferred)."""
        key = _id(call_id)
        if key is not None and key in self.by_id and not self.calls[self.by_id[key]]["done"]:
            return self.by_id[key]
        open_ = [i for i, c in enumerate(self.calls) if not c["done"]]
        tool = name if isinstance(name, str) else None
        same = [i for i in open_ if tool and self.calls[i]["tool"] == tool]
        cands = same or open_
        return cands[0] if cands else None

    def add_result(self, call_id: Any, content: Any, error: str | None, name: Any = None) -> None:
        idx = self._waiting(call_id, name)
        if idx is None:
            return  # a result nobody asked for: not a step
        c = self.calls[idx]
        c["done"] = True
        obs = content_text(content)
        # an error whose text is the whole result is not also an observation
        c["observation"] = None if error and obs in ("", error) else obs
        if c["error"] is None and error is not None:
            c["error"] = error

    def steps(self) -> list[Step]:
        return [
            Step(c["tool"], c["args"], observation=c["observation"], error=c["error"], id=c["id"])
            for c in self.calls
        ]


def _error_text(err: Any) -> str | None:
    if err is None or err is False:
        return None
    if isinstance(err, str):
        return err or "tool error"
    msg = field_of(err, "message")
    if msg:
        return str(msg)
    typ = field_of(err, "type")
    return f"tool error ({typ})" if typ else "tool error"


def _unparsed(call: Any, why: str) -> Step:
    """The step of a call whose arguments the host could not parse (it says so itself)."""
    name = field_of(call, "name", field_of(call, "function"))
    if not isinstance(name, str):
        name = field_of(name, "name")
    return malformed_step(f"call {short_repr(name, 80)}: malformed arguments: {why}")


def _call_list(calls: Any) -> list[Any]:
    """The message's calls as a list, never invented: one call given as a mapping is that call;
    a string or another non-list is one malformed call with the reason (not a call per item)."""
    if isinstance(calls, Mapping):
        return [calls]
    if isinstance(calls, (list, tuple)):
        return list(calls)
    return [
        malformed_step(
            f"tool_calls must be a list of calls, got {type(calls).__name__}: {short_repr(calls, 80)}"
        )
    ]


def _assistant_calls(msg: Any, pairing: _Pairing) -> None:
    calls = field_of(msg, "tool_calls") or []
    if not calls:  # LangChain keeps raw OpenAI calls in additional_kwargs
        calls = field_of(field_of(msg, "additional_kwargs", {}), "tool_calls") or []
    calls = _call_list(calls)
    seen = _add_listed_calls(calls, pairing)
    for c in field_of(msg, "invalid_tool_calls") or []:  # LangChain: arguments that did not parse
        err = field_of(c, "error") or "could not parse the arguments"
        pairing.add_call(
            _unparsed(c, f"{err}: {short_repr(field_of(c, 'args'))}"), field_of(c, "id")
        )
    fc = field_of(msg, "function_call")  # legacy OpenAI
    if fc is not None and not calls:
        pairing.add_call(fc, None)
    content = field_of(msg, "content")
    if isinstance(content, (list, tuple)):  # Anthropic tool_use blocks
        for b in content:
            if field_of(b, "type") == "tool_use" and _id(field_of(b, "id")) not in seen:
                pairing.add_call(b, field_of(b, "id"))


def _add_listed_calls(calls: Sequence[Any], pairing: _Pairing) -> set[str]:
    """Add a message's listed calls (every shape is read by the one normaliser); their ids."""
    seen: set[str] = set()
    for c in calls:
        cid = field_of(c, "id")
        perr = field_of(c, "parse_error")  # Inspect: the arguments did not parse
        pairing.add_call(_unparsed(c, _text(perr)) if perr else c, cid)
        key = _id(cid)
        if key is not None:
            seen.add(key)
    return seen


def _results(msg: Any, role: str | None, pairing: _Pairing) -> None:
    if role == "tool":
        err = _error_text(field_of(msg, "error"))
        if err is None and field_of(msg, "status") == "error":  # LangChain ToolMessage
            err = str(content_text(field_of(msg, "content")) or "tool error")
        pairing.add_result(
            field_of(msg, "tool_call_id"),
            field_of(msg, "content"),
            err,
            field_of(msg, "function", field_of(msg, "name")),
        )
        return
    if role == "function":  # legacy OpenAI result, matched by position and name
        pairing.add_result(None, field_of(msg, "content"), None, field_of(msg, "name"))
        return
    content = field_of(msg, "content")
    if isinstance(content, (list, tuple)):  # Anthropic tool_result blocks in a user turn
        for b in content:
            if field_of(b, "type") == "tool_result":
                body = field_of(b, "content")
                err = (
                    str(content_text(body) or "tool error")
                    if field_of(b, "is_error", False)
                    else None
                )
                pairing.add_result(field_of(b, "tool_use_id"), body, err)


def trajectory_from_messages(messages: Iterable[Any]) -> Trajectory:
    """The tool calls of a chat transcript, in order, each with its result or error.

    Accepts OpenAI chat dicts, Anthropic messages (dicts or SDK objects), Inspect
    ``ChatMessage`` objects or their log dicts, and LangChain messages (objects or
    ``messages_to_dict`` dicts), even mixed. A call is paired with the result carrying its id;
    results without an id go to the first unanswered call (of the same tool when named). A
    call never answered has ``observation=None``. A malformed call (no tool name, arguments
    that are not a JSON object, or that the host could not parse) becomes a step of tool
    :data:`~ek.agents.toolcalls.MALFORMED_TOOL` with empty ``args`` and an ``error`` saying why
    (with the tool name and raw text): scored as a wrong call, never matched.

    Args:
        messages: The transcript, oldest first.

    Returns:
        The :class:`~ek.agents.base.Trajectory`.

    Example:
        >>> t = trajectory_from_messages([
        ...     {"role": "assistant", "content": [
        ...         {"type": "text", "text": "checking"},
        ...         {"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {"city": "Oslo"}}]},
        ...     {"role": "user", "content": [
        ...         {"type": "tool_result", "tool_use_id": "tu1", "is_error": True,
        ...          "content": [{"type": "text", "text": "city not found"}]}]}])
        >>> t[0].tool, dict(t[0].args), t[0].error
        ('get_weather', {'city': 'Oslo'}, 'city not found')
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise TypeError(
            f"trajectory_from_messages expects a sequence of messages, got {type(messages).__name__}: {short_repr(messages)}"
        )
    pairing = _Pairing()
    for raw in messages:
        msg = _unwrap(raw)
        role = _role(msg)
        if role == "assistant":
            _assistant_calls(msg, pairing)
        else:
            _results(msg, role, pairing)
    return Trajectory(pairing.steps())


def cost_from_usage(usage: Any, model: str | None = None, role: str = "agent") -> Cost:
    """One Inspect ``ModelUsage`` (object or dict) as a :class:`Cost`, normalised to ek's kinds.

    Inspect's ``input_tokens`` already exclude cache reads and writes (its docs say so), so they
    map one to one; ``output_tokens`` include reasoning. A source that reports more reasoning
    than output counted them apart, so they are added to the output. ``total_cost`` (dollars,
    set only when Inspect has a price for the model) becomes ``Cost.dollars``.

    Example:
        >>> c = cost_from_usage({"input_tokens": 100, "output_tokens": 10,
        ...                      "input_tokens_cache_read": 20, "reasoning_tokens": 5}, "m")
        >>> c.input_tokens, c.cache_read_tokens, c.output_tokens, c.reasoning_tokens
        (100, 20, 10, 5)
    """
    out = token_count(field_of(usage, "output_tokens"))
    reasoning = token_count(field_of(usage, "reasoning_tokens"))
    if reasoning > out:
        out += reasoning
    dollars = field_of(usage, "total_cost")
    if not is_number(dollars) or not 0 <= dollars <= _MAX_DOLLARS:  # NaN fails too
        dollars = None
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a str or None, got {type(model).__name__}")
    return Cost(
        input_tokens=token_count(field_of(usage, "input_tokens")),
        output_tokens=out,
        cache_read_tokens=token_count(field_of(usage, "input_tokens_cache_read")),
        cache_write_tokens=token_count(field_of(usage, "input_tokens_cache_write")),
        reasoning_tokens=reasoning,
        model=str(model) if model else None,
        role=role,
        dollars=None if dollars is None else float(dollars),
    )
