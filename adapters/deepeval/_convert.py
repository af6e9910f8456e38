"""Episode -> DeepEval test case (the inverse of ``from_deepeval_test_case``).

What DeepEval has no field for travels in ``metadata`` under the keys documented in
:mod:`ek.agents.bridge._deepeval` (step errors and ids, every :class:`~ek.agents.base.Cost` with
all token kinds, final state, success, error, trial, run provenance, non-string input/output/gold).
DeepEval's own ``input_token_count`` is set to all agent input tokens (uncached + cache reads +
cache writes) and ``output_token_count`` to all agent output tokens, so DeepEval's views stay
right; the exact breakdown is read back from ``metadata["cost"]``. (DeepEval before 4.0.9 has no
token-count fields and drops them: ek's counts then live in ``metadata["cost"]`` alone.)

Example:
    >>> from ek.agents.base import Cost, Episode, Step
    >>> ep = Episode("t1", [Step("search", {"q": "x"}, observation=[1, 2], error="timeout")],
    ...              output="done", cost=Cost(input_tokens=10, cache_read_tokens=5, output_tokens=2))
    >>> tc = to_deepeval_test_case(ep, "done")
    >>> tc.metadata["step_errors"], tc.tools_called[0].output, tc.metadata["cost"][0]["input_tokens"]
    (['timeout'], [1, 2], 10)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from deepeval.test_case import ConversationalTestCase, LLMTestCase, ToolCall, Turn
from ek.agents.base import Episode, Step, TaskSpec, Trajectory

__all__ = ["to_deepeval_test_case"]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)


def _calls(steps: Iterable[Step]) -> list[ToolCall]:
    return [
        ToolCall(name=s.tool, input_parameters=dict(s.args), output=s.observation) for s in steps
    ]


def _step_meta(steps: Trajectory) -> dict[str, Any]:
    md: dict[str, Any] = {}
    if any(s.error is not None for s in steps):
        md["step_errors"] = [s.error for s in steps]
    if any(s.id is not None for s in steps):
        md["step_ids"] = [s.id for s in steps]
    return md


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


def _episode_metadata(ep: Episode, answer: Any, spec: TaskSpec | None) -> dict[str, Any]:
    """What DeepEval has no field for, in the test case's ``metadata`` (read back by the bridge)."""
    md: dict[str, Any] = {"task_id": ep.task_id}
    md.update(_step_meta(ep.trajectory))
    md.update(_episode_fields(ep))
    md.update(_non_text(ep, answer))
    if spec is not None and spec.tools:
        md["tools"] = [t.to_dict() for t in spec.tools]
    if ep.duration is not None:
        md["duration"] = ep.duration
    return md


def _episode_fields(ep: Episode) -> dict[str, Any]:
    """The episode's fields DeepEval has no place for (those that are set)."""
    md: dict[str, Any] = {}
    if ep.cost:
        md["cost"] = [c.to_dict() for c in ep.cost]
    for key in ("final_state", "success", "error"):
        if getattr(ep, key) is not None:
            md[key] = getattr(ep, key)
    if ep.trial:
        md["trial"] = ep.trial
    if ep.run is not None:
        md["run"] = ep.run.to_dict()
    if ep.metadata:
        md["episode_metadata"] = dict(ep.metadata)
    return md


def _non_text(ep: Episode, answer: Any) -> dict[str, Any]:
    """The input, output and gold that are not strings (DeepEval's fields hold their JSON)."""
    md: dict[str, Any] = {}
    if not isinstance(ep.input, str):
        md["input"] = ep.input
    if ep.output is not None and not isinstance(ep.output, str):
        md["output"] = ep.output
    if answer is not None and not isinstance(answer, str):
        md["gold"] = answer
    return md


def _agent_usage(ep: Episode) -> dict[str, Any]:
    """DeepEval's token counts (all agent input, all agent output) and the recorded agent
    dollars (``None`` unless every agent cost recorded its dollars)."""
    costs = ep.costs("agent")
    if not costs:
        return {"input_token_count": None, "output_token_count": None, "token_cost": None}
    agent = ep.agent_cost
    dollars = [c.dollars for c in costs]
    known = all(d is not None for d in dollars)
    return {
        "input_token_count": agent.input_tokens
        + agent.cache_read_tokens
        + agent.cache_write_tokens,
        "output_token_count": agent.output_tokens,
        "token_cost": sum(d for d in dollars if d is not None) if known else None,
    }


def _conversational(
    ep: Episode, md: dict[str, Any], calls: Trajectory | None, texts: tuple[str, str | None]
) -> list[Turn]:
    """The two turns of a conversational case (the user's input; the assistant's tool calls
    and output); the step errors and ids move from the case's metadata to the turn's."""
    inp, out = texts
    if ep.output is None:
        md["output"] = None
    if calls is not None:
        md["expected_tools"] = [s.to_dict() for s in calls]
    turn_md: dict[str, Any] = _step_meta(ep.trajectory)
    md.pop("step_errors", None)
    md.pop("step_ids", None)
    return [
        Turn(role="user", content=inp),
        Turn(
            role="assistant",
            content=out or "",
            tools_called=_calls(ep.trajectory) or None,
            metadata=turn_md or None,
        ),
    ]


def to_deepeval_test_case(
    episode: Episode,
    gold: Any = None,
    *,
    name: str | None = None,
    conversational: bool = False,
) -> LLMTestCase | ConversationalTestCase:
    """Build a DeepEval test case from an ek episode (and its gold).

    Args:
        episode: The episode.
        gold: A :class:`~ek.agents.base.TaskSpec` (its ``gold`` -> ``expected_output``, its
            ``gold_calls`` -> ``expected_tools``, its ``tools`` -> ``metadata["tools"]``), a
            :class:`~ek.agents.base.Trajectory` / list of Steps (expected tools), or the gold
            answer itself.
        name: The test case name (default: the task id, ``"<task_id>#<trial>"`` for trial > 0).
        conversational: Build a ``ConversationalTestCase`` (a user turn with the input, then one
            assistant turn carrying the tool calls and the output) instead of an ``LLMTestCase``.

    Returns:
        An ``LLMTestCase`` (or ``ConversationalTestCase``) that
        :func:`~ek.agents.bridge.from_deepeval_test_case` reads back to the same
        episode (tool names, arguments, observations, errors, ids, token counts by kind, final
        state, success, error, trial, run, metadata).
    """
    if not isinstance(episode, Episode):
        raise TypeError(f"to_deepeval_test_case expects an Episode, got {type(episode).__name__}")
    ep = episode
    answer, calls, spec = _gold_parts(gold)
    md = _episode_metadata(ep, answer, spec)
    case_name = name or (ep.task_id if not ep.trial else f"{ep.task_id}#{ep.trial}")
    inp = "" if ep.input is None else _text(ep.input)
    out = None if ep.output is None else _text(ep.output)
    expected = None if answer is None else _text(answer)
    tags = list(spec.tags) if spec is not None and spec.tags else None
    if conversational:
        turns = _conversational(ep, md, calls, (inp, out))
        return ConversationalTestCase(
            turns=turns, expected_outcome=expected, name=case_name, metadata=md, tags=tags
        )
    return LLMTestCase(
        input=inp,
        actual_output=out,
        expected_output=expected,
        tools_called=_calls(ep.trajectory) or None,
        expected_tools=None if calls is None else _calls(calls),
        completion_time=ep.duration,
        name=case_name,
        metadata=md,
        tags=tags,
        **_agent_usage(ep),
    )
