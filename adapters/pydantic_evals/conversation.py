"""Conversations with a simulated user in pydantic-evals: :func:`conversation_task` and
:class:`SimulatorFaults`.

``dataset.evaluate(conversation_task(agent, simulator))`` runs each case as a conversation: the
case's ``inputs`` are an ek :class:`~ek.agents.base.TaskSpec` (or its dict) with a
``scenario``; the task function drives the agent and the simulated user
(:func:`ek.agents.simulate.aconverse`) and returns a :class:`ConversationOutput` mapping: the
agent's last text (``output``), its ``final_state``, the ``messages`` with their roles, how the
conversation ``ended`` and its costs by role. The :class:`SimulatorFaults` evaluator holds the
simulator to the scenario (:func:`ek.agents.simulate.check_simulator`): its assertion
``simulator_ok`` fails, with the faults as the reason, on a case the simulator spoiled, so a
report tells the agent's failures from the simulator's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from ek.agents.base import TaskSpec
from ek.agents.simulate import aconverse, check_simulator, scenario_of
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext

__all__ = ["ConversationOutput", "SimulatorFaults", "conversation_task"]


class ConversationOutput(TypedDict):
    """What :func:`conversation_task` returns for a case."""

    output: Any
    final_state: Any
    messages: list[dict[str, Any]]
    ended: str
    cost: list[dict[str, Any]]


def _task_of(inputs: Any) -> TaskSpec:
    if isinstance(inputs, TaskSpec):
        return inputs
    if isinstance(inputs, Mapping):
        return TaskSpec.from_dict(inputs)
    raise TypeError(
        "a conversation case's inputs must be a TaskSpec or its dict (with a scenario), got "
        f"{type(inputs).__name__}"
    )


def conversation_task(
    agent: Callable[..., Any], simulator: Any
) -> Callable[[Any], Awaitable[ConversationOutput]]:
    """The pydantic-evals task function running each case as a conversation.

    Args:
        agent: The conversational agent, ``agent(conversation) -> turn`` (sync or async).
        simulator: The user simulator.
    """

    async def run_conversation(inputs: Any) -> ConversationOutput:
        ep = await aconverse(agent, _task_of(inputs), simulator)
        return ConversationOutput(
            output=ep.output,
            final_state=ep.final_state,
            messages=list(ep.metadata["messages"]),
            ended=str(ep.metadata["conversation"]["ended"]),
            cost=[c.to_dict() for c in ep.cost],
        )

    return run_conversation


@dataclass
class SimulatorFaults(Evaluator[Any, Any, Any]):
    """The simulator's faults in a case's conversation: ``simulator_ok`` (an assertion; its
    reason lists the faults) and ``simulator_faults`` (their number)."""

    def evaluate(self, ctx: EvaluatorContext[Any, Any, Any]) -> dict[str, EvaluationReason]:
        sc = scenario_of(_task_of(ctx.inputs))
        out = ctx.output
        messages = out.get("messages") if isinstance(out, Mapping) else None
        if not isinstance(messages, list):
            why = "the task returned no conversation (use conversation_task)"
            return {"simulator_ok": EvaluationReason(False, why)}
        faults = check_simulator(messages, sc)
        why = "; ".join(f"{f.kind} at message {f.turn}: {f.reason}" for f in faults) or "no fault"
        return {
            "simulator_ok": EvaluationReason(not faults, why),
            "simulator_faults": EvaluationReason(len(faults), why),
        }
