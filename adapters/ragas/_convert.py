"""Episode -> Ragas ``MultiTurnSample`` (the inverse of ``from_ragas_sample``).

Layout: a human message with the input (when there is one); for every step an AI message with
that one tool call, then a tool message with its result (so positional pairing is exact); last, an
AI message with the output. Non-string contents are JSON-encoded with ``metadata["json"] = True``;
a step's error and id, all costs (``usage``, every token kind), the episode fields and the task's
tools (``tools``: :class:`~ek.agents.base.ToolSpec` dicts, which weight the tool-call and
trajectory costs) ride in message ``metadata`` under the keys of :mod:`ek.agents.bridge._ragas`.

Example:
    >>> from ek.agents.base import Cost, Episode, Step
    >>> ep = Episode("t1", [Step("search", {"q": "x"}, observation={"hits": 2})], output="ok",
    ...              cost=Cost(input_tokens=7, output_tokens=3))
    >>> s = to_ragas_sample(ep, [Step("search", {"q": "x"})])
    >>> [m.type for m in s.user_input], s.user_input[1].content, s.reference_tool_calls[0].name
    (['ai', 'tool', 'ai'], '{"hits": 2}', 'search')
"""

from __future__ import annotations

import json
import warnings
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

from ek.agents.base import Episode, Step, TaskSpec, Trajectory

__all__ = ["to_ragas_sample"]


def _encode(value: Any, md: dict[str, Any]) -> str:
    if isinstance(value, str):
        return value
    md["json"] = True
    return json.dumps(value, ensure_ascii=False, default=repr)


def _gold_parts(gold: Any) -> tuple[Any, Trajectory | None, TaskSpec | None]:
    if gold is None:
        return None, None, None
    if isinstance(gold, TaskSpec):
        return gold.gold, gold.gold_calls, gold
    if isinstance(gold, Trajectory):
        return None, gold, None
    if isinstance(gold, (list, tuple)) and gold and all(isinstance(s, Step) for s in gold):
        return None, Trajectory(gold), None
    return gold, None, None


def to_ragas_sample(episode: Episode, gold: Any = None) -> MultiTurnSample:
    """Build a Ragas ``MultiTurnSample`` from an ek episode (and its gold).

    Args:
        episode: The episode.
        gold: A :class:`~ek.agents.base.TaskSpec` (``gold`` -> ``reference``, ``gold_calls`` ->
            ``reference_tool_calls``, ``tools`` (the task's cost grammar) -> the last message's
            ``metadata["tools"]``, as DeepEval's converter does), a
            :class:`~ek.agents.base.Trajectory` / list of Steps (reference tool calls), or the
            reference answer. A non-string answer is
            JSON-encoded (read it back with ``reference_is_json=True``).

    Returns:
        A sample that :func:`~ek.agents.bridge.from_ragas_sample` reads back to the same
        episode (tool names, arguments, observations, errors, ids, token counts by kind, output,
        input, final state, success, error, trial, run, metadata).
    """
    if not isinstance(episode, Episode):
        raise TypeError(f"to_ragas_sample expects an Episode, got {type(episode).__name__}")
    ep = episode
    msgs: list[Any] = []
    if ep.input is not None:
        hmd: dict[str, Any] = {}
        content = _encode(ep.input, hmd)
        msgs.append(HumanMessage(content=content, metadata=hmd or None))
    for s in ep.trajectory:
        msgs.extend(_step_messages(s))
    fmd: dict[str, Any] = {"task_id": ep.task_id}
    content = _encode(ep.output, fmd)
    _episode_fields(ep, fmd)
    answer, calls, spec = _gold_parts(gold)
    if spec is not None and spec.tools:
        fmd["tools"] = [t.to_dict() for t in spec.tools]
    msgs.append(AIMessage(content=content, metadata=fmd))
    return MultiTurnSample(
        user_input=msgs,
        reference=None if answer is None else _encode(answer, {}),
        reference_tool_calls=None
        if calls is None
        else [ToolCall(name=c.tool, args=dict(c.args)) for c in calls],
    )


def _step_messages(s: Step) -> tuple[AIMessage, ToolMessage]:
    """One step: an AI message with its one tool call, then a tool message with its result."""
    amd: dict[str, Any] = {}
    if s.id is not None:
        amd["tool_call_ids"] = [s.id]
    call = AIMessage(
        content="", tool_calls=[ToolCall(name=s.tool, args=dict(s.args))], metadata=amd or None
    )
    tmd: dict[str, Any] = {}
    content = _encode(s.observation, tmd)
    if s.error is not None:
        tmd["error"] = s.error
    return call, ToolMessage(content=content, metadata=tmd or None)


def _episode_fields(ep: Episode, fmd: dict[str, Any]) -> None:
    """The episode's own fields in the last message's metadata (those that are set)."""
    if ep.cost:
        fmd["usage"] = [c.to_dict() for c in ep.cost]
    for key in ("final_state", "success", "duration"):
        if getattr(ep, key) is not None:
            fmd[key] = getattr(ep, key)
    if ep.error is not None:
        fmd["episode_error"] = ep.error
    if ep.trial:
        fmd["trial"] = ep.trial
    if ep.run is not None:
        fmd["run"] = ep.run.to_dict()
    if ep.metadata:
        fmd["episode_metadata"] = dict(ep.metadata)
