"""Reverse converters: ek shapes -> Inspect objects (they need Inspect's classes, so they live here).

- :func:`to_inspect_sample`: a :class:`~ek.agents.base.TaskSpec` -> an Inspect ``Sample`` whose
  metadata carries the task (``"ek_task"``), which the ek scorers read as gold by default.
- :func:`episode_to_messages`: an :class:`~ek.agents.base.Episode` -> Inspect chat messages (the
  input, one assistant turn per tool call with its result or error, then the answer), the
  inverse of :func:`ek.agents.bridge.trajectory_from_messages` on the trajectory.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.tool import ToolCall, ToolCallError

from ek.agents.base import Episode, TaskSpec

__all__ = ["episode_to_messages", "to_inspect_sample"]


def to_inspect_sample(task: TaskSpec, *, target: str | list[str] | None = None) -> Sample:
    """An Inspect ``Sample`` for an ek task: ``id``, ``input``, ``target`` and ``metadata["ek_task"]``.

    Args:
        task: The task. Its ``input`` must be a string (or ``None``: empty input).
        target: The target text; default: ``task.gold`` when it is a string, else ``""``.
    """
    if not isinstance(task, TaskSpec):
        raise TypeError(f"to_inspect_sample expects a TaskSpec, got {type(task).__name__}")
    inp = task.input if isinstance(task.input, str) else json.dumps(task.input or "")
    tgt = target if target is not None else (task.gold if isinstance(task.gold, str) else "")
    return Sample(id=task.task_id, input=inp, target=tgt, metadata={"ek_task": task.to_dict()})


def _obs(x: Any) -> str:
    return x if isinstance(x, str) else ("" if x is None else json.dumps(x, default=repr))


def episode_to_messages(episode: Episode) -> list[ChatMessage]:
    """Inspect chat messages replaying an episode (input, tool calls and results, answer)."""
    if not isinstance(episode, Episode):
        raise TypeError(f"episode_to_messages expects an Episode, got {type(episode).__name__}")
    msgs: list[ChatMessage] = []
    if episode.input is not None:
        msgs.append(ChatMessageUser(content=_obs(episode.input)))
    for i, s in enumerate(episode.trajectory):
        cid = s.id or f"call_{i}"
        msgs.append(
            ChatMessageAssistant(
                content="",
                tool_calls=[ToolCall(id=cid, function=s.tool, arguments=dict(s.args))],
            )
        )
        msgs.append(
            ChatMessageTool(
                content=_obs(s.observation),
                tool_call_id=cid,
                function=s.tool,
                error=None if s.error is None else ToolCallError("unknown", s.error),
            )
        )
    if episode.output is not None:
        msgs.append(ChatMessageAssistant(content=_obs(episode.output)))
    return msgs
