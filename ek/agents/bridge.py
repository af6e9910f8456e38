"""Duck-typed bridges: chat messages and Inspect AI samples -> :class:`~ek.agents.base.Episode`.

ek never imports a host framework here: every converter reads attributes *or* mapping keys, so
the same code handles live objects (an Inspect ``TaskState``, LangChain messages, Anthropic SDK
blocks) and their JSON dumps (an Inspect log sample, an OpenAI request body).

- :func:`trajectory_from_messages` turns a chat transcript into a :class:`Trajectory`. It reads
  the **OpenAI** chat format (assistant ``tool_calls`` with JSON-string ``arguments``; ``tool``
  messages answering by ``tool_call_id``; the legacy ``function_call`` / ``function`` pair),
  **Anthropic** content blocks (``tool_use`` / ``tool_result`` with ``is_error``), **Inspect**
  ``ChatMessage`` objects or dicts (``ToolCall.arguments`` already a dict; ``ChatMessageTool.error``)
  and **LangChain** messages (``AIMessage.tool_calls`` / ``invalid_tool_calls``,
  ``ToolMessage.status``). Calls are paired with results by id, by position where no id exists.
  Every call is read by the one call-shape normaliser (:func:`~ek.agents.callshape.normalize_call`).
  A malformed call (no tool name, arguments that are not a JSON object) is model output: it
  becomes a step of tool :data:`~ek.agents.callshape.MALFORMED_TOOL` whose ``error`` says why,
  which the metrics score as a wrong call; never a crash.
- :func:`cost_from_inspect_events` sums the ``usage`` of an Inspect transcript's model events
  into one :class:`Cost` per (model, role). Model calls made inside a scorer's span are the
  ``"judge"`` role, so a grader never inflates the agent's Cost-of-Pass.
- :func:`from_inspect_sample` converts an Inspect ``EvalSample`` (object or log dict) or a live
  ``TaskState`` into an :class:`Episode`.
- :func:`read_inspect_log` streams an ``.eval`` or ``.json`` log into records (the episode, the
  ek metric scores the ek scorers recorded, and why a sample is unscored);
  :func:`episodes_from_inspect_log` gives just the episodes. Reading a log is the one thing here
  that imports ``inspect_ai`` (lazily).

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

import json
import math
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ek.agents._bridge_deepeval import from_deepeval_test_case, from_deepeval_trace
from ek.agents._bridge_ragas import from_ragas_sample
from ek.agents.base import Cost, Episode, RunProvenance, Step, Trajectory
from ek.agents.callshape import malformed_step, normalize_call
from ek.base import Score

__all__ = [
    "DEFAULT_ROLES",
    "EK_METADATA_KEY",
    "INSPECT_EXTRA_HINT",
    "InspectSampleRecord",
    "cost_from_inspect_events",
    "cost_from_usage",
    "ek_scores_from_inspect_scores",
    "episodes_from_inspect_log",
    "from_deepeval_test_case",
    "from_deepeval_trace",
    "from_inspect_sample",
    "from_ragas_sample",
    "inspect_sample_record",
    "inspect_verdict",
    "provenance_from_inspect_header",
    "read_inspect_log",
    "success_from_inspect_scores",
    "trajectory_from_messages",
]

#: Where the ek Inspect scorers put their verdicts in ``Score.metadata`` (read back here).
EK_METADATA_KEY = "ek"

#: The message of the ImportError raised when ``inspect_ai`` is needed and missing.
INSPECT_EXTRA_HINT = "reading Inspect AI logs needs inspect_ai: pip install ek-agents[inspect]"

#: Inspect model role (``ModelEvent.role``; ``None`` = the task's main model) -> ek ``Cost.role``.
#: Roles not listed keep their own name. Calls inside a scorer span are ``"judge"`` regardless.
DEFAULT_ROLES: Mapping[str | None, str] = {
    None: "agent",
    "agent": "agent",
    "grader": "judge",
    "judge": "judge",
    "scorer": "judge",
    "user": "simulator",
    "simulator": "simulator",
}

_SCORING_SPANS = frozenset({"scorers", "scorer"})


# ----------------------------------------------------------------------------- helpers


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` for a mapping, ``obj.key`` otherwise (``default`` when absent or ``None``)."""
    if isinstance(obj, Mapping):
        v = obj.get(key, default)
    else:
        v = getattr(obj, key, default)
    return default if v is None else v


def _text(content: Any) -> Any:
    """The text of a message/tool-result content (str, a list of blocks, or a JSON value)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif _get(block, "type", "text") == "text":
                t = _get(block, "text")
                if isinstance(t, str):
                    parts.append(t)
        return "".join(parts)
    if isinstance(content, Mapping):
        return dict(content)
    if isinstance(content, (int, float, bool)):
        return content
    t = _get(content, "text")
    return t if isinstance(t, str) else str(content)


def _role(msg: Any) -> str | None:
    r = _get(msg, "role")
    if r is None:  # LangChain messages have .type ("ai", "human", "tool", "system")
        r = _get(msg, "type")
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


class _Pairing:
    """Calls in order, each waiting for its result (by id, else by position)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.by_id: dict[str, int] = {}

    def add_call(self, call: Any, call_id: Any, error: str | None = None) -> None:
        """Record one call, read by the one call-shape normaliser (model output: a malformed
        call becomes a :data:`~ek.agents.callshape.MALFORMED_TOOL` step saying why)."""
        step = normalize_call(call, strict=False)
        cid = None if call_id is None or call_id == "" else str(call_id)
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

    def add_result(self, call_id: Any, content: Any, error: str | None, name: Any = None) -> None:
        idx: int | None = None
        if call_id is not None and str(call_id) in self.by_id:
            i = self.by_id[str(call_id)]
            if not self.calls[i]["done"]:
                idx = i
        if idx is None:  # no id (or an unknown one): the first open call, same name preferred
            open_ = [i for i, c in enumerate(self.calls) if not c["done"]]
            same = [i for i in open_ if name and self.calls[i]["tool"] == str(name)]
            cands = same or open_
            idx = cands[0] if cands else None
        if idx is None:
            return  # a result nobody asked for: not a step
        c = self.calls[idx]
        c["done"] = True
        obs = _text(content)
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
    msg = _get(err, "message")
    if msg:
        return str(msg)
    typ = _get(err, "type")
    return f"tool error ({typ})" if typ else "tool error"


def _unparsed(call: Any, why: str) -> Step:
    """The step of a call whose arguments the host could not parse (it says so itself)."""
    name = _get(call, "name", _get(call, "function"))
    if not isinstance(name, str):
        name = _get(name, "name")
    return malformed_step(f"call {name!r:.80}: malformed arguments: {why}")


def _assistant_calls(msg: Any, pairing: _Pairing) -> None:
    seen: set[str] = set()
    calls = _get(msg, "tool_calls") or []
    if not calls:  # LangChain keeps raw OpenAI calls in additional_kwargs
        calls = _get(_get(msg, "additional_kwargs", {}), "tool_calls") or []
    # Every shape (OpenAI, Inspect ToolCall, LangChain) is read by the one normaliser.
    for c in calls:
        cid = _get(c, "id")
        perr = _get(c, "parse_error")  # Inspect: the arguments did not parse
        pairing.add_call(_unparsed(c, str(perr)) if perr else c, cid)
        if cid is not None:
            seen.add(str(cid))
    for c in _get(msg, "invalid_tool_calls") or []:  # LangChain: arguments that did not parse
        err = _get(c, "error") or "could not parse the arguments"
        pairing.add_call(_unparsed(c, f"{err}: {_get(c, 'args')!r:.200}"), _get(c, "id"))
    fc = _get(msg, "function_call")  # legacy OpenAI
    if fc is not None and not calls:
        pairing.add_call(fc, None)
    content = _get(msg, "content")
    if isinstance(content, (list, tuple)):  # Anthropic tool_use blocks
        for b in content:
            if _get(b, "type") == "tool_use" and str(_get(b, "id")) not in seen:
                pairing.add_call(b, _get(b, "id"))


def _results(msg: Any, role: str | None, pairing: _Pairing) -> None:
    if role == "tool":
        err = _error_text(_get(msg, "error"))
        if err is None and _get(msg, "status") == "error":  # LangChain ToolMessage
            err = str(_text(_get(msg, "content")) or "tool error")
        pairing.add_result(
            _get(msg, "tool_call_id"),
            _get(msg, "content"),
            err,
            _get(msg, "function", _get(msg, "name")),
        )
        return
    if role == "function":  # legacy OpenAI result, matched by position and name
        pairing.add_result(None, _get(msg, "content"), None, _get(msg, "name"))
        return
    content = _get(msg, "content")
    if isinstance(content, (list, tuple)):  # Anthropic tool_result blocks in a user turn
        for b in content:
            if _get(b, "type") == "tool_result":
                body = _get(b, "content")
                err = str(_text(body) or "tool error") if _get(b, "is_error", False) else None
                pairing.add_result(_get(b, "tool_use_id"), body, err)


def trajectory_from_messages(messages: Iterable[Any]) -> Trajectory:
    """The tool calls of a chat transcript, in order, each with its result or error.

    Accepts OpenAI chat dicts, Anthropic messages (dicts or SDK objects), Inspect
    ``ChatMessage`` objects or their log dicts, and LangChain messages (objects or
    ``messages_to_dict`` dicts), even mixed. A call is paired with the result carrying its id;
    results without an id go to the first unanswered call (of the same tool when named). A
    call never answered has ``observation=None``. A malformed call (no tool name, arguments
    that are not a JSON object, or that the host could not parse) becomes a step of tool
    :data:`~ek.agents.callshape.MALFORMED_TOOL` with empty ``args`` and an ``error`` saying why
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
            f"trajectory_from_messages expects a sequence of messages, got {type(messages).__name__}: {messages!r:.200}"
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


# ----------------------------------------------------------------------------- cost


def _int(x: Any) -> int:
    if x is None or isinstance(x, bool):
        return 0
    try:
        v = int(x)
    except (TypeError, ValueError):
        return 0
    return max(v, 0)


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
    out = _int(_get(usage, "output_tokens"))
    reasoning = _int(_get(usage, "reasoning_tokens"))
    if reasoning > out:
        out += reasoning
    dollars = _get(usage, "total_cost")
    if (
        not isinstance(dollars, (int, float))
        or isinstance(dollars, bool)
        or not math.isfinite(dollars)
        or dollars < 0
    ):
        dollars = None
    return Cost(
        input_tokens=_int(_get(usage, "input_tokens")),
        output_tokens=out,
        cache_read_tokens=_int(_get(usage, "input_tokens_cache_read")),
        cache_write_tokens=_int(_get(usage, "input_tokens_cache_write")),
        reasoning_tokens=reasoning,
        model=str(model) if model else None,
        role=role,
        dollars=None if dollars is None else float(dollars),
    )


def cost_from_inspect_events(
    events: Iterable[Any], *, roles: Mapping[str | None, str] | None = None
) -> tuple[Cost, ...]:
    """Sum the usage of the model events of an Inspect transcript, per (model, role).

    Works on a live transcript (``inspect_ai.log.transcript().events``) and on a logged sample's
    ``events``, so it also holds when re-scoring, where ``TaskState.token_usage`` is 0. Model
    calls inside a ``scorers``/``scorer`` span are counted as ``"judge"``; others map their
    ``ModelEvent.role`` through ``roles`` (default :data:`DEFAULT_ROLES`).

    Example:
        >>> evs = [{"event": "model", "model": "m", "role": None, "span_id": "a",
        ...         "output": {"usage": {"input_tokens": 10, "output_tokens": 2}}},
        ...        {"event": "span_begin", "id": "s", "type": "scorers", "parent_id": None},
        ...        {"event": "model", "model": "g", "role": None, "span_id": "s",
        ...         "output": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
        ...        {"event": "model", "model": "m", "span_id": "a",
        ...         "output": {"usage": {"input_tokens": 10, "output_tokens": 2}}}]
        >>> [(c.model, c.role, c.total_tokens) for c in cost_from_inspect_events(evs)]
        [('m', 'agent', 24), ('g', 'judge', 6)]
    """
    table = DEFAULT_ROLES if roles is None else roles
    scoring: set[str] = set()
    sums: dict[tuple[str | None, str], Cost] = {}
    for e in events:
        kind = _get(e, "event")
        if kind == "span_begin":
            sid = _get(e, "id")
            if _get(e, "type") in _SCORING_SPANS or _get(e, "parent_id") in scoring:
                scoring.add(sid)
            continue
        if kind != "model":
            continue
        usage = _get(_get(e, "output"), "usage")
        if usage is None:
            continue
        model = _get(e, "model")
        r = _get(e, "role")
        role = "judge" if _get(e, "span_id") in scoring else table.get(r, r or "agent")
        c = cost_from_usage(usage, model, role)
        key = (c.model, c.role)
        sums[key] = sums[key] + c if key in sums else c
    return tuple(sums.values())


# ----------------------------------------------------------------------------- Inspect samples


def _float(v: Any) -> float:
    """Inspect's value_to_float: C/I/P/N and yes/no/true/false strings, numbers, bools."""
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip().lower()
        table = {
            "c": 1.0,
            "i": 0.0,
            "p": 0.5,
            "n": 0.0,
            "yes": 1.0,
            "no": 0.0,
            "true": 1.0,
            "false": 0.0,
        }
        if s in table:
            return table[s]
        try:
            return float(s)
        except ValueError:
            return math.nan
    return math.nan


def success_from_inspect_scores(
    scores: Any, success_from: str | None = None, *, threshold: float = 1.0
) -> bool | None:
    """The success verdict of a logged sample's ``scores`` (``{scorer_name: Score}``).

    With ``success_from`` (a scorer name, or ``"scorer:key"`` for a dict value), that scorer's
    value decides: ``value >= threshold`` after Inspect's value-to-float mapping (``"C"`` = 1);
    a dict value uses its ``"success"`` key. Without it, the first ek scorer that recorded a
    verdict (``metadata["ek"]["success"]``) decides. ``None`` when nothing decides (or the value
    is NaN: unscored); :func:`inspect_verdict` also says why.

    Example:
        >>> success_from_inspect_scores({"match": {"value": "C"}}, "match")
        True
        >>> success_from_inspect_scores({"t": {"value": {}, "metadata": {"ek": {"success": False}}}})
        False
        >>> success_from_inspect_scores({"match": {"value": "C"}}) is None
        True
    """
    return inspect_verdict(scores, success_from, threshold=threshold)[0]


def _named_verdict(
    scores: Mapping[str, Any], success_from: str, threshold: float
) -> tuple[bool | None, str | None]:
    name, _, key = success_from.partition(":")
    if name not in scores:
        return None, f"scorer {name!r} did not score it (its scores: {sorted(scores)})"
    s = scores[name]
    value = _get(s, "value")
    if isinstance(value, Mapping):
        if (key or "success") not in value:
            return None, f"scorer {name!r} has no key {key or 'success'!r} in its value"
        value = value[key or "success"]
    f = _float(value)
    if math.isnan(f):
        why = _get(s, "explanation") or _get(s, "reason")
        return None, f"scorer {name!r} left it unscored" + (f" ({why})" if why else "")
    return f >= threshold, None


def inspect_verdict(
    scores: Any, success_from: str | None = None, *, threshold: float = 1.0
) -> tuple[bool | None, str | None]:
    """The success verdict of a logged sample's ``scores`` and, when there is none, why.

    See :func:`success_from_inspect_scores` for how the verdict is decided.

    Example:
        >>> inspect_verdict({"match": {"value": "I"}}, "match")
        (False, None)
        >>> inspect_verdict({"match": {"value": "C"}}, "includes")
        (None, "scorer 'includes' did not score it (its scores: ['match'])")
    """
    if not scores or not isinstance(scores, Mapping):
        return None, "the sample has no score"
    if success_from is not None:
        if not isinstance(success_from, str) or not success_from:
            raise ValueError(
                f"success_from must be a scorer name ('name' or 'name:key'), got {success_from!r}"
            )
        return _named_verdict(scores, success_from, threshold)
    failed = None
    for s in scores.values():
        ek = _get(_get(s, "metadata", {}), EK_METADATA_KEY)
        if isinstance(ek, Mapping) and isinstance(ek.get("success"), bool):
            return bool(ek["success"]), None
        if isinstance(ek, Mapping) and ek.get("error") and failed is None:
            failed = f"ek scoring failed: {ek['error']}"
    return None, failed or (
        f"no ek scorer recorded a verdict (its scores: {sorted(scores)}); name the scorer that "
        "decides success (success_from=..., ek-agents --success-scorer NAME)"
    )


def _with_recorded_dollars(costs: tuple[Cost, ...], scores: Any) -> tuple[Cost, ...]:
    """Stamp the dollars an ek scorer priced onto the single unpriced agent cost, if any.

    Only when exactly one agent :class:`Cost` exists and it carries no dollars of its own (a
    split over several models would be a guess).
    """
    agent = [i for i, c in enumerate(costs) if c.role == "agent"]
    if len(agent) != 1 or costs[agent[0]].dollars is not None or not scores:
        return costs
    for s in scores.values():
        ek = _get(_get(s, "metadata", {}), EK_METADATA_KEY)
        d = ek.get("dollars") if isinstance(ek, Mapping) else None
        if isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d) and d >= 0:
            i = agent[0]
            c = costs[i]
            stamped = Cost(
                **{
                    k: getattr(c, k)
                    for k in (
                        "input_tokens",
                        "output_tokens",
                        "cache_read_tokens",
                        "cache_write_tokens",
                        "reasoning_tokens",
                        "model",
                        "role",
                    )
                },
                dollars=float(d),
            )
            return (*costs[:i], stamped, *costs[i + 1 :])
    return costs


def _store(obj: Any) -> Any:
    s = _get(obj, "store")
    if s is None:
        return None
    items = s.items() if hasattr(s, "items") else ()
    d = {str(k): v for k, v in items}
    return d or None


def _events_of(obj: Any) -> Any:
    ev = _get(obj, "events")
    if ev is not None:
        return ev
    # A live TaskState has no events: read the current transcript if inspect_ai is loaded
    # (it must be, for a TaskState to exist). Looked up, never imported, from the core.
    mod = sys.modules.get("inspect_ai.log")
    if mod is not None and hasattr(mod, "transcript"):
        try:
            return mod.transcript().events
        except Exception:  # outside a sample: no transcript
            return ()
    return ()


def _limit_error(obj: Any, events: Iterable[Any]) -> str | None:
    lim = _get(obj, "limit")
    if lim is not None:
        return f"{_get(lim, 'type', 'sample')} limit reached ({_get(lim, 'limit')})"
    for e in events:
        if _get(e, "event") == "sample_limit":
            return str(_get(e, "message") or f"{_get(e, 'type', 'sample')} limit reached")
    return None


def _input_text(obj: Any) -> Any:
    t = _get(obj, "input_text")
    if isinstance(t, str):
        return t
    inp = _get(obj, "input")
    if inp is None or isinstance(inp, str):
        return inp
    if isinstance(inp, (list, tuple)):
        return "\n".join(str(_text(_get(m, "content")) or "") for m in inp)
    return str(inp)


def _target(obj: Any) -> Any:
    t = _get(obj, "target")
    if t is None or isinstance(t, str):
        return t
    inner = _get(t, "target")
    if isinstance(inner, (list, tuple)):
        return list(inner) if len(inner) != 1 else inner[0]
    if isinstance(t, (list, tuple)):
        return list(t) if len(t) != 1 else t[0]
    return str(t)


def _plain(v: Any) -> Any:
    """Make ``v`` JSON-like (pydantic models and other objects become dicts or text)."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    dump = getattr(v, "model_dump", None)
    if callable(dump):
        try:
            return _plain(dump())
        except Exception:
            return repr(v)
    return repr(v)


def from_inspect_sample(
    sample_or_state: Any,
    *,
    events: Iterable[Any] | None = None,
    run: RunProvenance | None = None,
    success: bool | None = None,
    success_from: str | None = None,
    roles: Mapping[str | None, str] | None = None,
    limit_is_error: bool = True,
) -> Episode:
    """An Inspect ``EvalSample`` (object or log dict) or a live ``TaskState`` as an :class:`Episode`.

    ============  ===========================================================================
    ``task_id``   the sample id, as a str
    ``trial``     ``epoch - 1`` (Inspect's epochs are 1-based)
    trajectory    :func:`trajectory_from_messages` of the sample's messages
    ``output``    ``output.completion``
    final state   the sample's store (``None`` when empty)
    ``cost``      :func:`cost_from_inspect_events` over the sample's (or live transcript's) model
                  events; a sample logged without events falls back to ``model_usage`` (agent)
    ``success``   ``success`` if given, else :func:`success_from_inspect_scores`
    ``error``     the sample's error; with ``limit_is_error``, a hit limit (message, token,
                  time...) too, so a transcript that merely contains the answer is not credited
    ``metadata``  ``{"inspect": {"epoch", "target", "sample_metadata", "uuid"}}``
    ============  ===========================================================================

    Args:
        sample_or_state: The sample or state (duck-typed: attributes or mapping keys).
        events: The transcript events (default: the sample's ``events``, or the live
            transcript for a ``TaskState``).
        run: The provenance to stamp on the episode.
        success: A verdict to record (wins over the scores).
        success_from: Which scorer decides success (see :func:`success_from_inspect_scores`).
        roles: Inspect model role -> ek cost role (default :data:`DEFAULT_ROLES`).
        limit_is_error: Record a hit sample limit as the episode's error.

    Example:
        >>> s = {"id": 7, "epoch": 2, "messages": [], "output": {"completion": "france"},
        ...      "store": {"db": {"A1": "refunded"}}, "events": [
        ...          {"event": "model", "model": "m", "output": {"usage": {"input_tokens": 9}}}]}
        >>> ep = from_inspect_sample(s)
        >>> ep.task_id, ep.trial, ep.output, ep.final_state, ep.agent_cost.input_tokens
        ('7', 1, 'france', {'db': {'A1': 'refunded'}}, 9)
    """
    obj = sample_or_state
    sid = _get(obj, "id", _get(obj, "sample_id"))
    if sid is None:
        raise ValueError(
            f"from_inspect_sample expects an Inspect EvalSample or TaskState (with an id), got {type(obj).__name__}"
        )
    epoch = _int(_get(obj, "epoch", 1))
    evs = list(events) if events is not None else list(_events_of(obj))
    costs = cost_from_inspect_events(evs, roles=roles)
    if not costs:
        mu = _get(obj, "model_usage") or {}
        costs = tuple(cost_from_usage(u, m) for m, u in mu.items())
    if success is None:
        success = success_from_inspect_scores(_get(obj, "scores"), success_from)
    costs = _with_recorded_dollars(costs, _get(obj, "scores"))
    err = _get(obj, "error")
    error = None
    if err is not None:
        error = str(_get(err, "message", err)) if not isinstance(err, str) else err
    if error is None and limit_is_error:
        error = _limit_error(obj, evs)
    meta: dict[str, Any] = {"epoch": epoch}
    for k, v in (
        ("target", _target(obj)),
        ("sample_metadata", _plain(_get(obj, "metadata")) or None),
        ("uuid", _get(obj, "uuid")),
    ):
        if v is not None:
            meta[k] = v
    duration = _get(obj, "total_time")
    return Episode(
        task_id=str(sid),
        trajectory=trajectory_from_messages(_get(obj, "messages", [])),
        output=_get(_get(obj, "output"), "completion"),
        final_state=_plain(_store(obj)),
        cost=costs,
        success=success,
        run=run,
        trial=max(epoch - 1, 0),
        input=_input_text(obj),
        error=error,
        duration=float(duration) if isinstance(duration, (int, float)) and duration >= 0 else None,
        metadata={"inspect": meta},
    )


# ----------------------------------------------------------------------------- Inspect logs


def _solver_name(header: Any) -> str | None:
    ev = _get(header, "eval")
    s = _get(ev, "solver")
    if s:
        return str(s)
    steps = _get(_get(header, "plan"), "steps") or []
    names = [str(_get(st, "solver")) for st in steps if _get(st, "solver")]
    return "+".join(names) or None


def provenance_from_inspect_header(header: Any, *, location: str | None = None) -> RunProvenance:
    """A :class:`RunProvenance` from an Inspect log header (``EvalLog`` object or dict).

    ``agent`` = the solver (``eval.solver``, else the plan's steps joined by ``+``, else the
    task name); ``model`` = ``eval.model``; ``scaffold`` = ``"inspect_ai"`` (the harness);
    ``suite_version`` = ``"<task>@<task_version>"``, so two runs of the same task version are
    comparable whatever the agent or model. ``extra`` keeps the Inspect version, eval and run
    ids, task file, status and the log location.

    Example:
        >>> h = {"eval": {"task": "refunds", "task_version": 2, "model": "openai/gpt-4o",
        ...               "packages": {"inspect_ai": "0.3.285"}}, "plan": {"steps": [{"solver": "react"}]}}
        >>> p = provenance_from_inspect_header(h)
        >>> p.agent, p.model, p.scaffold, p.suite_version
        ('react', 'openai/gpt-4o', 'inspect_ai', 'refunds@2')
    """
    ev = _get(header, "eval")
    task = str(_get(ev, "task", "task"))
    version = _get(ev, "task_version", 0)
    extra: dict[str, Any] = {}
    pk = _get(ev, "packages") or {}
    for k, v in (
        ("inspect_version", pk.get("inspect_ai") if isinstance(pk, Mapping) else None),
        ("eval_id", _get(ev, "eval_id")),
        ("run_id", _get(ev, "run_id")),
        ("task_file", _get(ev, "task_file")),
        ("status", _get(header, "status")),
        ("log", location),
    ):
        if v is not None:
            extra[k] = str(v)
    seed = _get(_get(ev, "config"), "seed")
    return RunProvenance(
        agent=_solver_name(header) or task,
        model=str(_get(ev, "model")) if _get(ev, "model") else None,
        scaffold="inspect_ai",
        suite_version=f"{task}@{version}",
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        extra=extra,
    )


def _require_inspect() -> Any:
    try:
        import inspect_ai.log as ilog  # host framework: only this function needs it
    except ImportError as e:  # pragma: no cover - exercised with inspect_ai absent
        raise ImportError(INSPECT_EXTRA_HINT) from e
    return ilog


_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _unsafe(v: Any) -> Any:
    """Undo the JSON-safe spelling of non-finite floats (``"NaN"`` strings, ``$float`` tags)."""
    if isinstance(v, str):
        return _NONFINITE.get(v, v)
    if isinstance(v, Mapping):
        if set(v) == {"$float"}:
            return float(str(v["$float"]))
        return {str(k): _unsafe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_unsafe(x) for x in v]
    return v


def _ek_score(d: Any) -> Score | None:
    if not isinstance(d, Mapping):
        return None
    v = _unsafe(d.get("value"))
    value = math.nan if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) else v
    detail = _unsafe(d.get("detail"))
    return Score(float(value), detail if isinstance(detail, Mapping) else {})


def ek_scores_from_inspect_scores(
    scores: Any, *, with_success: bool = True
) -> tuple[dict[tuple[str, str], Score], list[str]]:
    """The ek metric scores an ek Inspect scorer recorded in ``metadata["ek"]["scores"]``.

    Args:
        scores: A logged sample's ``scores`` (``{scorer_name: Score}``, objects or dicts).
        with_success: Keep the ``task_success`` scores (drop them when they are the run's
            success verdict, which a report and a gate count separately).

    Returns:
        ``{(scorer, ek metric): Score}`` (the values and details the scorer computed, NaN
        restored) and the reasons of the ek scorers that failed on this sample.

    Example:
        >>> rec = {"ek": {"success": True, "scores": {
        ...     "task_success": {"value": 1.0, "detail": {"successes": 1, "n": 1}},
        ...     "tool_calls": {"value": "NaN", "detail": {"tp": 0.0, "fp": 0.0, "fn": 0.0}}}}}
        >>> got, failed = ek_scores_from_inspect_scores({"ek_scorer": {"metadata": rec}},
        ...                                             with_success=False)
        >>> list(got), got["ek_scorer", "tool_calls"].value, failed
        ([('ek_scorer', 'tool_calls')], nan, [])
    """
    out: dict[tuple[str, str], Score] = {}
    failed: list[str] = []
    items = scores.items() if isinstance(scores, Mapping) else ()
    for scorer, s in items:
        ek = _get(_get(s, "metadata", {}), EK_METADATA_KEY)
        if not isinstance(ek, Mapping):
            continue
        if ek.get("error"):
            failed.append(f"ek scorer {scorer!r} failed: {ek['error']}")
            continue
        recorded = ek.get("scores")
        if not isinstance(recorded, Mapping):
            continue
        for metric, d in recorded.items():
            if metric == "task_success" and not with_success:
                continue
            score = _ek_score(d)
            if score is not None:
                out[(str(scorer), str(metric))] = score
    return out, failed


@dataclass(frozen=True)
class InspectSampleRecord:
    """One logged sample (one epoch) as a report and a gate read it.

    Attributes:
        episode: The sample as an :class:`Episode` (``success`` is ``None`` when undecided).
        scores: The ek metric scores the ek scorers recorded, by ``(scorer, metric)``.
        unscored: Why this sample is not (fully) scored: no success verdict, or an ek scorer
            that failed on it; ``None`` when it is fully scored.
    """

    episode: Episode
    scores: Mapping[tuple[str, str], Score]
    unscored: str | None = None


def inspect_sample_record(
    sample: Any,
    *,
    success_from: str | None = None,
    run: RunProvenance | None = None,
    roles: Mapping[str | None, str] | None = None,
    limit_is_error: bool = True,
) -> InspectSampleRecord:
    """A logged Inspect sample as an :class:`InspectSampleRecord` (episode, ek scores, why unscored).

    The ``task_success`` scores are kept only when ``success_from`` names the deciding scorer
    (otherwise they are the verdict itself).

    Example:
        >>> r = inspect_sample_record({"id": 1, "scores": {"match": {"value": "C"}}})
        >>> r.episode.success, r.unscored[:35]
        (None, 'no ek scorer recorded a verdict (it')
        >>> inspect_sample_record({"id": 1, "scores": {"match": {"value": "C"}}},
        ...                       success_from="match").episode.success
        True
    """
    scores = _get(sample, "scores")
    verdict, why = inspect_verdict(scores, success_from)
    ep = from_inspect_sample(
        sample,
        run=run,
        success=verdict,
        success_from=success_from,
        roles=roles,
        limit_is_error=limit_is_error,
    )
    ek, failed = ek_scores_from_inspect_scores(scores, with_success=success_from is not None)
    if verdict is None:
        err = _get(sample, "error")
        if err is not None and not scores:
            why = f"sample error: {_get(err, 'message', err)}"
    else:
        why = failed[0] if failed else None
    return InspectSampleRecord(ep, MappingProxyType(ek), why)


def _raw_eval_samples(path: str) -> Iterator[Mapping[str, Any]] | None:
    """The samples of an ``.eval`` zip as plain dicts (no pydantic), or None if not readable.

    Inspect writes ``samples/<id>_epoch_<n>.json`` members (zstd-compressed; importing
    ``inspect_ai.log`` teaches :mod:`zipfile` that codec). A member that cannot be read raises
    a ``ValueError`` naming the file and the member.
    """
    import zipfile

    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile):
        return None
    names = [n for n in zf.namelist() if n.startswith("samples/") and n.endswith(".json")]

    def gen() -> Iterator[Mapping[str, Any]]:
        with zf:
            for n in names:
                try:
                    data = zf.read(n)
                    yield json.loads(data)
                except (OSError, EOFError, zipfile.BadZipFile, ValueError) as e:
                    raise ValueError(
                        f"{path}: cannot read sample {n!r} of the Inspect log "
                        f"({type(e).__name__}: {e}); is the file truncated or still being written?"
                    ) from None

    return gen()


def _header(ilog: Any, p: str) -> Any:
    try:
        return ilog.read_eval_log(p, header_only=True)
    except (OSError, ValueError, KeyError, EOFError) as e:
        # e.g. a truncated .eval: Inspect says only "EOCD not found" (no end of the zip)
        raise ValueError(
            f"{p}: not a readable Inspect log ({type(e).__name__}: {e}); is the file truncated "
            "or still being written?"
        ) from None


def read_inspect_log(
    path: str | os.PathLike[str],
    *,
    success_from: str | None = None,
    roles: Mapping[str | None, str] | None = None,
    run: RunProvenance | None = None,
    limit_is_error: bool = True,
) -> Iterator[InspectSampleRecord]:
    """Stream the samples of an Inspect log (``.eval`` or ``.json``) as :class:`InspectSampleRecord` s.

    Each epoch of each sample is one record (its episode's ``trial = epoch - 1``). The header
    gives the :class:`~ek.agents.base.RunProvenance` (see :func:`provenance_from_inspect_header`);
    every sample goes through :func:`inspect_sample_record`. ``.eval`` samples are read one at a
    time straight from the zip as JSON (no pydantic validation, O(1) memory); other layouts go
    through Inspect's own ``read_eval_log_samples``.

    Args:
        path: The log file.
        success_from: The scorer whose value is the success verdict (``"name"`` or
            ``"name:key"``, e.g. Inspect's ``"match"``); default: the ek scorer's verdict.
        roles: Inspect model role -> ek cost role.
        run: Provenance to use instead of the header's.
        limit_is_error: Record a hit sample limit as the episode's error.

    Raises:
        ImportError: ``inspect_ai`` is not installed (``pip install ek-agents[inspect]``).
        FileNotFoundError: no such file.
        ValueError: the file is not a readable Inspect log (truncated, not a log); the message
            names the file.
    """
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"no Inspect log at {p!r}")
    ilog = _require_inspect()
    header = _header(ilog, p)
    prov = run if run is not None else provenance_from_inspect_header(header, location=p)
    samples: Iterable[Any] | None = None
    if p.endswith(".eval") and _get(header, "version") == 2:
        samples = _raw_eval_samples(p)
    elif p.endswith(".json"):
        with open(p, encoding="utf-8") as fh:
            samples = json.load(fh).get("samples") or []
    if samples is None:
        samples = ilog.read_eval_log_samples(p, all_samples_required=False)
    for s in samples:
        yield inspect_sample_record(
            s, success_from=success_from, run=prov, roles=roles, limit_is_error=limit_is_error
        )


def episodes_from_inspect_log(
    path: str | os.PathLike[str],
    *,
    success_from: str | None = None,
    roles: Mapping[str | None, str] | None = None,
    run: RunProvenance | None = None,
    limit_is_error: bool = True,
) -> Iterator[Episode]:
    """Stream the samples of an Inspect log (``.eval`` or ``.json``) as :class:`Episode` s.

    The episodes of :func:`read_inspect_log` (same arguments): each epoch of each sample is one
    episode (``trial = epoch - 1``), so pass^k and Cost-of-Pass over epochs work on the result;
    an episode whose success nothing decided has ``success=None``.

    Raises:
        ImportError: ``inspect_ai`` is not installed (``pip install ek-agents[inspect]``).
        FileNotFoundError: no such file.
        ValueError: the file is not a readable Inspect log.
    """
    for rec in read_inspect_log(
        path, success_from=success_from, roles=roles, run=run, limit_is_error=limit_is_error
    ):
        yield rec.episode
