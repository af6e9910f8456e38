"""What a policy reads: the calls of an episode and the conversation turns around them.

A :class:`Record` is the steps (tool calls with what came back) and the :class:`Turn` s (what the
user and the agent said), each turn placed among the calls by ``at``: the number of calls made
before it. It comes from chat messages (:meth:`Record.from_messages`: the tau-bench message list,
OpenAI, Anthropic, Inspect or LangChain shapes, calls read by the message bridge) or from an
:class:`~ek.agents.base.Episode` (:meth:`Record.from_episode`: its trajectory, and the turns of
the conversation it recorded in ``metadata["messages"]``).

Example:
    >>> rec = Record.from_messages([
    ...     {"role": "user", "content": "cancel #R1"},
    ...     {"role": "assistant", "content": "Cancel #R1, is that right?"},
    ...     {"role": "user", "content": "yes"},
    ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
    ...         "function": {"name": "cancel", "arguments": '{"id": "R1"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "cancelled"}])
    >>> [(t.role, t.text, t.at) for t in rec.turns]
    [('user', 'cancel #R1', 0), ('assistant', 'Cancel #R1, is that right?', 0), ('user', 'yes', 0)]
    >>> rec.steps[0].tool, rec.steps[0].observation
    ('cancel', 'cancelled')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek._validate import count, nonempty_str, short_repr
from ek.agents.base import Step, Trajectory
from ek.agents.bridge import trajectory_from_messages

__all__ = ["MESSAGES_KEY", "PolicyInputError", "Record", "Turn"]

#: The episode metadata key holding the conversation (chat messages, oldest first).
MESSAGES_KEY = "messages"

_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}
_ROLES["model"] = "assistant"


class PolicyInputError(ValueError):
    """The conversation and the calls cannot be put in one order (the message says why)."""


@dataclass(frozen=True)
class Turn:
    """One thing the user or the agent said.

    Args:
        role: ``"user"`` or ``"assistant"``.
        text: What was said.
        at: How many calls were made before it (it comes after step ``at - 1``, before step
            ``at``).
        calls: The steps the agent made in the same message (an assistant turn's own calls).
    """

    role: str
    text: str
    at: int
    calls: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(
                f"Turn.role must be 'user' or 'assistant', got {short_repr(self.role)}"
            )
        if not isinstance(self.text, str):
            raise TypeError(f"Turn.text must be a str, got {short_repr(self.text)}")
        count("Turn.at", self.at)
        object.__setattr__(self, "calls", tuple(count("Turn.calls[]", i) for i in self.calls))


def _field(msg: Any, key: str) -> Any:
    if isinstance(msg, Mapping):
        return msg.get(key)
    return getattr(msg, key, None)


def _role(msg: Any) -> str | None:
    role = _field(msg, "role") or _field(msg, "type")  # LangChain messages have .type
    return _ROLES.get(role) if isinstance(role, str) else None


def _text(content: Any) -> str:
    """The text of a message's content: a str, or its text blocks joined (tool blocks left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = [_field(b, "text") if not isinstance(b, str) else b for b in content]
        kinds = [None if isinstance(b, str) else _field(b, "type") for b in content]
        return "\n".join(
            p for p, k in zip(parts, kinds) if isinstance(p, str) and k in (None, "text")
        )
    return ""


@dataclass(frozen=True)
class Record:
    """The calls of one episode and the turns of its conversation, in one order.

    Args:
        steps: The tool calls, in order (:class:`~ek.agents.base.Step` s).
        turns: The conversation's turns, in order (their ``at`` never decreasing); empty when
            no conversation was recorded.
    """

    steps: tuple[Step, ...]
    turns: tuple[Turn, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", Trajectory(self.steps).steps)
        turns = tuple(self.turns)
        for i, t in enumerate(turns):
            if not isinstance(t, Turn):
                raise TypeError(f"Record.turns[{i}] must be a Turn, got {short_repr(t)}")
            if t.at > len(self.steps) or (i and t.at < turns[i - 1].at):
                raise PolicyInputError(
                    f"Record.turns[{i}] is placed after {t.at} calls: expected between "
                    f"{turns[i - 1].at if i else 0} and {len(self.steps)} (the calls made)"
                )
        object.__setattr__(self, "turns", turns)

    def before(self, step: int) -> tuple[Turn, ...]:
        """The turns said before step ``step`` (an assistant turn's own calls come after it)."""
        return tuple(t for t in self.turns if t.at <= step)

    @classmethod
    def from_messages(cls, messages: Iterable[Any]) -> Record:
        """A record from chat messages, oldest first, in any shape the message bridge reads.

        User and assistant texts become turns (system messages and tool results do not); the
        calls are the bridge's (:func:`~ek.agents.bridge.trajectory_from_messages`), each
        paired with its result.
        """
        msgs = _message_list(messages)
        turns: list[Turn] = []
        made = 0
        for msg in msgs:
            role = _role(msg)
            calls = len(trajectory_from_messages([msg])) if role == "assistant" else 0
            text = _text(_field(msg, "content"))
            if role is not None and text.strip():
                turns.append(Turn(role, text, made, tuple(range(made, made + calls))))
            made += calls
        return cls(trajectory_from_messages(msgs).steps, tuple(turns))

    @classmethod
    def from_episode(cls, episode: Any) -> Record:
        """A record of an episode: its trajectory, and its conversation when it recorded one.

        The conversation is ``episode.metadata["messages"]`` (chat messages). When those
        messages hold the calls, they must be the trajectory's calls (as many); when they hold
        none, the turns can be placed among the calls only if there are no calls.

        Raises:
            PolicyInputError: the recorded conversation and the trajectory disagree.
        """
        steps = tuple(episode.trajectory)
        metadata = getattr(episode, "metadata", None) or {}
        messages = metadata.get(MESSAGES_KEY) if isinstance(metadata, Mapping) else None
        if messages is None:
            return cls(steps)
        talk = cls.from_messages(messages)
        if len(talk.steps) != len(steps):
            raise PolicyInputError(
                f"episode {short_repr(nonempty_str('Episode.task_id', episode.task_id))}: its "
                f"metadata[{MESSAGES_KEY!r}] holds {len(talk.steps)} call(s) but its trajectory "
                f"{len(steps)}: a policy cannot tell which turns came before which call"
            )
        return cls(steps, talk.turns)


def _message_list(messages: Iterable[Any]) -> Sequence[Any]:
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise TypeError(
            f"expected a list of chat messages, got {type(messages).__name__}: {short_repr(messages)}"
        )
    return list(messages)
