"""The conversation loop inside a real Inspect AI eval: agent and simulated user both mockllm."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from ek.adapters.inspect.conversation import CONVERSATION_KEY, ek_conversation, inspect_user_model
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import use_tools
from inspect_ai.tool import tool

from ek.agents.simulate import LLMSimulator, Scenario, check_simulator

SCENARIO = Scenario(
    facts={"order_id": "#W1000001", "pin": "4321"},
    disclose=["order_id"],
    patterns={"order_id": r"#W\d{7}"},
    goals={"refund": ["refund"]},
    max_turns=4,
)


@tool
def refund_order():  # type: ignore[no-untyped-def]
    async def execute(order_id: str) -> str:
        """Refund an order.

        Args:
            order_id: The order.
        """
        return f"refunded {order_id}"

    return execute


def usage(out: ModelOutput) -> ModelOutput:
    out.usage = ModelUsage(input_tokens=30, output_tokens=5, total_tokens=35)  # offline: always set
    return out


def agent_outputs(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """The agent: asks to confirm, refunds on 'go ahead' (a tool call), then reports."""
    if isinstance(input[-1], ChatMessageTool):
        return usage(ModelOutput.from_content("mockllm/model", "Refunded."))
    said = [m for m in input if m.role == "user"][-1].text
    if "go ahead" in said:
        return usage(
            ModelOutput.for_tool_call(
                "mockllm/model", "refund_order", {"order_id": "#W1000001"}, content=""
            )
        )
    return usage(ModelOutput.from_content("mockllm/model", "Shall I refund #W1000001?"))


def user_outputs(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """The simulated user (its own turns are 'assistant' here); leaks the PIN when told to."""
    leaky = "LEAK" in input[0].text
    n = sum(m.role == "assistant" for m in input)
    text = ["I want a refund for #W1000001.", "Yes, go ahead.", "Thanks ###STOP###"][min(n, 2)]
    if leaky and n == 1:
        text += " My PIN is 4321."
    return usage(ModelOutput.from_content("mockllm/model", text))


def run(prompt: str) -> Any:
    user = get_model("mockllm/model", custom_outputs=user_outputs)
    sim = LLMSimulator(inspect_user_model(user), model_name="mockllm/user", prompt=prompt)
    task = Task(
        dataset=[Sample(id="s1", input="", metadata={"scenario": SCENARIO.to_dict()})],
        solver=[use_tools(refund_order()), ek_conversation(sim)],
    )
    (log,) = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=agent_outputs),
        display="none",
        log_dir=None,
    )
    assert log.status == "success", log.error
    return log.samples[0]


def test_inspect_conversation_is_driven_and_recorded() -> None:
    sample = run("You are the user. {persona} {instructions} {facts} {goals} {stop}")
    roles = [m.role for m in sample.messages if m.text or m.role != "user"]
    assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant", "user"]
    conv = sample.metadata[CONVERSATION_KEY]
    assert [m["role"] for m in conv["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert conv["messages"][3]["tool_calls"][0]["function"]["name"] == "refund_order"
    assert conv["messages"][3]["content"] == "Refunded."
    assert (conv["ended"], conv["simulator"].split("#")[0]) == ("simulator", "llm:mockllm/user@1")
    assert [c["role"] for c in conv["simulator_cost"]] == ["simulator"] * 3
    assert check_simulator(conv["messages"], SCENARIO) == ()


def test_inspect_conversation_with_a_leaking_simulator_is_attributed() -> None:
    sample = run("LEAK {persona} {instructions} {facts} {goals} {stop}")
    faults = check_simulator(sample.metadata[CONVERSATION_KEY]["messages"], SCENARIO)
    assert [(f.kind, f.turn) for f in faults] == [("disclosed", 2)]


def test_module_doctests() -> None:  # adapters/ is outside the doctest paths
    import doctest

    import ek.adapters.inspect.conversation as mod

    assert doctest.testmod(mod).failed == 0
