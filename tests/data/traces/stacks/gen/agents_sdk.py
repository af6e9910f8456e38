"""The world on the OpenAI Agents SDK (``openai-agents``), under a given instrumentation.

Three ``Agent``s on ``OpenAIResponsesModel`` (the Responses API, answered by
:class:`fake_openai.FakeOpenAI`); ``notifier.as_tool("notify", ...)`` is the sub-agent tool (its
one argument is ``input``); ``handoffs=[billing]`` gives ``transfer_to_billing``. The SDK's own
trace export is replaced by the instrumentation's processor alone (``set_trace_processors([])``
before instrumenting), so nothing is sent anywhere.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import world
from fake_openai import FakeOpenAI, clients

#: What the SDK's handoff call returns (``Handoff.get_transfer_message``).
HANDOFF_RESULT = json.dumps({"assistant": "billing"})


def stack(name: str, instrumentation: str, notes: tuple[str, ...] = ()) -> world.Stack:
    """The world as the Agents SDK expresses it."""
    return world.Stack(
        name=name,
        packages=("openai-agents", "openai", instrumentation, "opentelemetry-sdk"),
        notify_arg="input",
        handoff_result=HANDOFF_RESULT,
        notes=(
            "The Agents SDK's default tool error function sends the model a fixed text "
            "('An error occurred while running the tool. Please try again.') instead of the "
            "exception; the truth's error is what the tool raised.",
            "The sub-agent runs through notifier.as_tool('notify'): its one argument is 'input'.",
            "The handoff is the SDK's transfer_to_billing; its result is the SDK's transfer "
            "message; the billing agent's turns follow in the same run.",
            *notes,
        ),
    )


def _agents(client: Any) -> Any:
    from agents import Agent, OpenAIResponsesModel, function_tool

    def model(agent: str) -> Any:
        return OpenAIResponsesModel(model=world.MODELS[agent], openai_client=client)

    def tools(agent: str) -> list[Any]:
        return [function_tool(world.TOOLS[t]) for t in world.AGENT_TOOLS[agent]]

    billing = Agent(
        name="billing",
        instructions=world.INSTRUCTIONS["billing"],
        model=model("billing"),
        tools=tools("billing"),
    )
    notifier = Agent(
        name="notifier",
        instructions=world.INSTRUCTIONS["notifier"],
        model=model("notifier"),
        tools=tools("notifier"),
    )
    return Agent(
        name="support",
        instructions=world.INSTRUCTIONS["support"],
        model=model("support"),
        tools=[
            *tools("support"),
            notifier.as_tool(tool_name=world.NOTIFY, tool_description=world.NOTIFY_DESCRIPTION),
        ],
        handoffs=[billing],
    )


def main(name: str, instrumentation: str, instrument: Callable[[Any], None]) -> int:
    """Generate stack ``name``: the world on the SDK under ``instrument(provider)``."""
    world.setup_env()
    generate(stack(name, instrumentation), instrument)
    return 0


def generate(st: world.Stack, instrument: Callable[[Any], None]) -> None:
    """Run every scripted run under ``instrument(provider)``'s spans; write spans and truth."""
    from agents import Runner, set_trace_processors

    provider = world.tracer_provider(st)
    set_trace_processors([])  # the SDK's own exporter (to OpenAI) off
    instrument(provider)
    fake = FakeOpenAI(st)
    _, aio = clients(fake)

    def run(plan: world.RunPlan) -> Any:
        return asyncio.run(Runner.run(_agents(aio), plan.prompt)).final_output

    world.run_all(st, provider, fake.cursor, run)
