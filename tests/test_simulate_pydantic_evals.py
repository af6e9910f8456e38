"""A pydantic-evals dataset run as conversations with a simulated user (offline, no model)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pydantic_evals")

from ek.adapters.pydantic_evals.conversation import SimulatorFaults, conversation_task
from pydantic_evals import Case, Dataset

from ek.agents.base import TaskSpec
from ek.agents.simulate import Conversation, RuleSimulator, Scenario

SCENARIO = Scenario(
    facts={"order_id": "#W1000001", "pin": "4321"},
    disclose=["order_id"],
    patterns={"order_id": r"#W\d{7}"},
    goals={"refund": ["refund"]},
    max_turns=4,
)


def agent(conv: Conversation) -> dict[str, Any]:
    if "#W" in conv.last_user_message:
        return {"content": "Refunded.", "final_state": {"refunded": True}}
    return {"content": "Which order should I refund?"}


def test_pydantic_evals_runs_conversations_and_sets_simulator_faults_apart() -> None:
    good = RuleSimulator([(r"which order", "It is {order_id}.")], opening="I want a refund.")
    leaky = RuleSimulator(
        [(r"which order", "It is {order_id}, PIN {pin}.")], opening="I want a refund."
    )
    cases = [
        Case(name="clean", inputs=TaskSpec("clean", scenario=SCENARIO).to_dict()),
    ]
    ok = Dataset(name="conversations", cases=cases, evaluators=[SimulatorFaults()]).evaluate_sync(
        conversation_task(agent, good)
    )
    (case,) = ok.cases
    assert case.output["output"] == "Refunded." and case.output["ended"] == "simulator"
    assert [m["role"] for m in case.output["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert case.assertions["simulator_ok"].value is True
    bad = Dataset(name="conversations", cases=cases, evaluators=[SimulatorFaults()]).evaluate_sync(
        conversation_task(agent, leaky)
    )
    (case,) = bad.cases
    assert case.assertions["simulator_ok"].value is False
    assert "disclosed at message 2" in (case.assertions["simulator_ok"].reason or "")
    assert case.scores["simulator_faults"].value == 1
