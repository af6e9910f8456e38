"""Ragas multi-turn samples -> ``(Episode, TaskSpec)``, duck-typed (``ragas`` is never imported).

:func:`from_ragas_sample` reads a ``MultiTurnSample`` (anything with ``user_input``), a row dict
(``{"user_input": [...], "reference_tool_calls": [...], ...}``) or a bare message list. Messages
may be Ragas objects or the plain dicts Ragas' decorator metrics and datasets turn them into
(``{"type": "ai", "content": ..., "tool_calls": [...], "metadata": {...}}``).

**Pairing.** A Ragas ``ToolMessage`` has no call id and no tool name, so results pair with calls
**by position**: each tool message answers the oldest call that has no result yet (FIFO across
parallel calls). A tool message whose ``metadata["tool_call_id"]`` names a pending call's id
answers that call instead. A tool message with no pending call raises ``ValueError``.

**Conventions** (message ``metadata``; ``ek.adapters.ragas.to_ragas_sample`` writes them):

==========================  ================================================================
``usage`` (AI message)      a :class:`~ek.agents.base.Cost` dict, or a list of them
``raw_tool_calls`` (AI)     the model's calls as it wrote them, one entry per call, **instead
                            of** ``tool_calls`` (whose ``ToolCall`` refuses arguments that are
                            not a mapping): any accepted call shape, arguments as JSON text
                            allowed, or the call's JSON text; a malformed one is scored as a
                            wrong call (:mod:`ek.agents.bridge._model_calls`)
``tool_call_ids`` (AI)      one id (or ``None``) per call (of ``raw_tool_calls`` when given)
``error`` (tool message)    the step's error message
``tool_call_id`` (tool)     pair with the pending call of this id instead of by position
``json`` (any message)      ``True``: ``content`` is JSON-encoded (a non-string observation,
                            input or output; Ragas requires ``str`` content)
``task_id``, ``final_state``,  episode fields, on any message (the last one wins); the episode's
``success``, ``trial``,     error is ``episode_error`` (``error`` is the step error)
``duration``, ``run``,
``episode_error``,
``episode_metadata``
``tools`` (any message)     the task's :class:`~ek.agents.base.ToolSpec` dicts (its cost
                            grammar; the last one wins), as DeepEval's ``metadata["tools"]``;
                            without it a tool-call or trajectory metric built without a
                            grammar weighs every tool and argument 1
==========================  ================================================================

The episode's input is the first human message; its output is the last AI message without tool
calls. The gold is a :class:`~ek.agents.base.TaskSpec` with ``gold`` = ``reference``,
``gold_calls`` = ``reference_tool_calls`` and ``tools`` from the messages' ``metadata["tools"]``,
so the tool weights and argument importances reach the metrics as they do on every other path.

Example:
    >>> msgs = [
    ...     {"type": "human", "content": "weather in Paris?"},
    ...     {"type": "ai", "content": "", "tool_calls": [{"name": "weather", "args": {"city": "Paris"}}],
    ...      "metadata": {"usage": {"input_tokens": 100, "output_tokens": 10}}},
    ...     {"type": "tool", "content": '{"c": 20}', "metadata": {"json": True}},
    ...     {"type": "ai", "content": "20C", "metadata": {"task_id": "w1"}},
    ... ]
    >>> ep, gold = from_ragas_sample({"user_input": msgs, "reference": "20C"})
    >>> ep.task_id, ep.trajectory[0].observation, ep.output, ep.agent_cost.total_tokens
    ('w1', {'c': 20}, '20C', 110)
    >>> gold.gold
    '20C'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ek._validate import short_repr
from ek.agents._episode import Cost, Episode, RunProvenance, Step, Trajectory
from ek.agents._spec import TaskSpec, ToolSpec
from ek.agents.bridge._duck import cost_list
from ek.agents.bridge._model_calls import MODEL_CALLS_KEY, model_calls, read_model_call
from ek.agents.toolcalls._parse import normalize_calls

__all__ = ["EPISODE_METADATA_KEYS", "from_ragas_sample"]

#: Episode-level keys read from any message's metadata (the last message that has one wins).
EPISODE_METADATA_KEYS = (
    "task_id",
    "final_state",
    "success",
    "trial",
    "duration",
    "run",
    "episode_error",
    "episode_metadata",
)


_MISSING = object()


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if type(obj) is dict:  # the common row / model_dump shape: skip the ABC check
        return obj.get(name, default)
    v = getattr(obj, name, _MISSING)  # one look-up (what hasattr + getattr did in two)
    if v is not _MISSING:
        return v
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return default


_KINDS = ("human", "ai", "tool")
_CLASS_KINDS = {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool"}
_ALIASES = {"user": "human", "assistant": "ai"}


def _kind(msg: Any, i: int) -> str:
    t = _get(msg, "type")
    if t in _KINDS:
        return str(t)
    if t is None:
        t = _CLASS_KINDS.get(type(msg).__name__)
    t = _ALIASES.get(t, t)
    if t not in _KINDS:
        raise ValueError(
            f"user_input[{i}] must be a human, ai or tool message, got {type(msg).__name__}: {short_repr(msg)}"
        )
    return str(t)


def _content(msg: Any, md: Mapping[str, Any]) -> Any:
    c = _get(msg, "content")
    if md.get("json") and isinstance(c, str):
        return json.loads(c)
    return c


def _digest(msgs: list[Any]) -> str:
    text = json.dumps(
        [[_get(m, "type"), _get(m, "content")] for m in msgs], default=repr, ensure_ascii=False
    )
    return "ragas-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _parts(sample: Any) -> tuple[list[Any], Any, Any]:
    if isinstance(sample, (list, tuple)):
        return list(sample), None, None
    msgs = _get(sample, "user_input")
    if not isinstance(msgs, (list, tuple)):
        raise TypeError(
            "from_ragas_sample expects a MultiTurnSample, a row with a 'user_input' message list, "
            f"or a message list; got {type(sample).__name__}: {short_repr(sample)}"
        )
    return list(msgs), _get(sample, "reference"), _get(sample, "reference_tool_calls")


_NO_METADATA: dict[str, Any] = {}


class _Pending:
    """A step being built: the call, then (maybe) its result."""

    __slots__ = ("args", "error", "id", "malformed", "observation", "tool")

    def __init__(self, call: Any, call_id: Any) -> None:
        # model output, read by the one call-shape normaliser: a malformed call becomes a
        # MALFORMED_TOOL step saying why (scored as a wrong call)
        read = read_model_call(call)
        self.tool, self.args = read.tool, read.args
        self.id = None if call_id is None else str(call_id)
        self.observation: Any = None
        self.malformed = read.error
        self.error: str | None = None

    def step(self) -> Step:
        err = self.error
        if self.malformed is not None:
            err = self.malformed if err is None else f"{self.malformed}; {err}"
        return Step(self.tool, self.args, self.observation, err, self.id)


def _ai_calls(msg: Any, md: Mapping[str, Any], i: int) -> list[_Pending]:
    """The calls of AI message ``i`` (the model's own, ``metadata["raw_tool_calls"]``, when
    given), each with its id."""
    raw = model_calls(md.get(MODEL_CALLS_KEY), f"user_input[{i}].metadata[{MODEL_CALLS_KEY!r}]")
    calls = raw if raw is not None else list(_get(msg, "tool_calls") or [])
    ids = md.get("tool_call_ids")
    if ids is None:
        ids = [None] * len(calls)
    if len(ids) != len(calls):
        raise ValueError(
            f"user_input[{i}].metadata['tool_call_ids'] must have one id per tool call "
            f"({len(calls)}), got {len(ids)}"
        )
    return [_Pending(c, cid) for c, cid in zip(calls, ids)]


class _Conversation:
    """A Ragas conversation read message by message: the human input, each AI message's calls
    (a tool message answers the pending call with its id, else the first), the last AI text,
    the usage, and what the messages' metadata says of the episode and its tools."""

    def __init__(self) -> None:
        self.steps: list[_Pending] = []
        self.pending: list[_Pending] = []
        self.costs: list[Cost] = []
        self.episode_md: dict[str, Any] = {}
        self.tools: Any = None
        self.input: Any = None
        self.output: Any = None

    def read(self, m: Any, i: int) -> None:
        """Message ``i``."""
        kind = _kind(m, i)
        md = _get(m, "metadata") or _NO_METADATA
        if type(md) is not dict:
            md = dict(md)
        if md:  # read only: a plain dict needs no copy
            for k in EPISODE_METADATA_KEYS:
                if k in md:
                    self.episode_md[k] = md[k]
            self.tools = md.get("tools", self.tools)
        if kind == "human":
            if self.input is None:
                self.input = _content(m, md)
        elif kind == "ai":
            self._ai(m, md, i)
        else:
            self._tool(m, md, i)

    def _ai(self, m: Any, md: Mapping[str, Any], i: int) -> None:
        calls = _ai_calls(m, md, i)
        self.steps.extend(calls)
        self.pending.extend(calls)
        if not calls:
            self.output = _content(m, md)
        self.costs.extend(cost_list(md.get("usage")))

    def _tool(self, m: Any, md: Mapping[str, Any], i: int) -> None:
        pending = self.pending
        if not pending:
            raise ValueError(
                f"user_input[{i}] is a tool message with no pending tool call to answer "
                "(results pair with calls by position)"
            )
        want = md.get("tool_call_id")
        j = 0 if want is None else next((k for k, p in enumerate(pending) if p.id == want), 0)
        p = pending.pop(j)
        p.observation = _content(m, md)
        err = md.get("error")
        p.error = None if err is None else str(err)


def from_ragas_sample(
    sample: Any, *, task_id: str | None = None, reference_is_json: bool = False
) -> tuple[Episode, TaskSpec]:
    """Convert a Ragas multi-turn sample to an ``(Episode, gold)`` pair (duck-typed).

    Args:
        sample: A ``MultiTurnSample``, a row mapping with ``user_input`` (and optionally
            ``reference`` / ``reference_tool_calls``), or a list of messages.
        task_id: Overrides the task id (else a message's ``metadata["task_id"]``, else a digest
            of the conversation).
        reference_is_json: Decode ``reference`` as JSON (e.g. a goal final state for the
            ``"final_state"`` checker).

    Returns:
        The episode and a :class:`~ek.agents.base.TaskSpec` gold (``gold_calls`` is ``None``
        when the sample has no ``reference_tool_calls``).

    Raises:
        ValueError: a tool message with no pending call, or an unknown message type.
    """
    msgs, reference, ref_calls = _parts(sample)
    conv = _Conversation()
    for i, m in enumerate(msgs):
        conv.read(m, i)
    ep_md = conv.episode_md
    tid = task_id or ep_md.get("task_id") or _digest(msgs)
    run = ep_md.get("run")
    inp = conv.input
    ep = Episode(
        task_id=tid,
        trajectory=Trajectory(p.step() for p in conv.steps),
        output=conv.output,
        final_state=ep_md.get("final_state"),
        cost=tuple(conv.costs),
        success=ep_md.get("success"),
        run=RunProvenance.from_dict(run) if isinstance(run, Mapping) else run,
        trial=ep_md.get("trial") or 0,
        input=inp,
        error=ep_md.get("episode_error"),
        duration=ep_md.get("duration"),
        metadata=ep_md.get("episode_metadata") or {},
    )
    if reference_is_json and isinstance(reference, str):
        reference = json.loads(reference)
    # gold, in any accepted call shape (a malformed one raises)
    gold_calls = None if ref_calls is None else Trajectory(normalize_calls(ref_calls, strict=True))
    specs = tuple(t if isinstance(t, ToolSpec) else ToolSpec.from_dict(t) for t in conv.tools or ())
    return ep, TaskSpec(tid, input=inp, gold=reference, gold_calls=gold_calls, tools=specs)
