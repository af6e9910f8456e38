"""The world on smolagents (``ToolCallingAgent``), under a given instrumentation.

Each agent is a ``ToolCallingAgent`` on ``OpenAIModel`` whose ``openai`` client talks to
:class:`fake_openai.FakeOpenAI` (Chat Completions; usage with cached and reasoning tokens). The
notifier is a managed agent: the support model calls it as a tool named ``notifier`` with the
argument ``task``, and smolagents returns its answer inside its report template. A final answer
is a ``final_answer`` tool call. smolagents has no handoff: the handoff run is not expressible.

(Named ``smolagents_world`` so that it does not shadow the ``smolagents`` package.)
"""

# No `from __future__ import annotations`: smolagents reads the tools' annotations at run time.
from collections.abc import Callable
from typing import Any

import world
from fake_openai import FakeOpenAI

#: smolagents' managed-agent report (prompts/toolcalling_agent.yaml, ``managed_agent.report``).
REPORT = "Here is the final answer from your managed agent 'notifier':\n{}"


def stack(name: str, instrumentation: str) -> world.Stack:
    """The world as smolagents expresses it."""
    return world.Stack(
        name=name,
        packages=("smolagents", "openai", instrumentation, "opentelemetry-sdk"),
        notify_tool="notifier",
        notify_arg="task",
        notify_result=REPORT.format,
        final_answer_tool="final_answer",
        notes=(
            "smolagents has no handoff (managed agents are sub-agents that return): the handoff "
            "run is not expressible.",
            "The notifier is a managed agent: the support model calls the tool 'notifier' with "
            "the argument 'task'; its result is smolagents' report around the notifier's answer.",
            "Every final answer is a call of smolagents' final_answer tool ({'answer': text}), "
            "not listed in calls.",
        ),
    )


def _tools() -> dict[str, Any]:
    from smolagents import tool

    @tool
    def lookup_order(order_id: str) -> dict:
        """Look up an order by its id and return its status and total.

        Args:
            order_id: the order id, e.g. A1
        """
        return world.lookup_order(order_id)

    @tool
    def refund(order_id: str, amount: float) -> str:
        """Refund an amount on an order.

        Args:
            order_id: the order id
            amount: the amount to refund
        """
        return world.refund(order_id, amount)

    @tool
    def fetch_invoice(order_id: str) -> str:
        """Fetch the invoice of an order.

        Args:
            order_id: the order id
        """
        return world.fetch_invoice(order_id)

    @tool
    def send_email(to: str, body: str) -> str:
        """Send a short e-mail to a customer.

        Args:
            to: the address
            body: the text
        """
        return world.send_email(to, body)

    return {t.name: t for t in (lookup_order, refund, fetch_invoice, send_email)}


def _support(client: Any) -> Any:
    from smolagents import OpenAIModel, ToolCallingAgent

    tools = _tools()

    def agent(name: str, **kwargs: Any) -> Any:
        model = OpenAIModel(model_id=world.MODELS[name], client_kwargs={"http_client": client})
        return ToolCallingAgent(
            tools=[tools[t] for t in world.AGENT_TOOLS[name]],
            model=model,
            name=name,
            instructions=world.INSTRUCTIONS[name],
            verbosity_level=0,
            **kwargs,
        )

    notifier = agent("notifier", description=world.NOTIFY_DESCRIPTION)
    return agent("support", managed_agents=[notifier])


def main(name: str, instrumentation: str, instrument: Callable[[Any], None]) -> int:
    """Generate stack ``name``: the world on smolagents under ``instrument(provider)``."""
    import httpx2

    world.setup_env()
    st = stack(name, instrumentation)
    provider = world.tracer_provider(st)
    instrument(provider)
    fake = FakeOpenAI(st)
    client = httpx2.Client(transport=httpx2.MockTransport(fake))
    world.run_all(st, provider, fake.cursor, lambda plan: _support(client).run(plan.prompt))
    return 0
