"""Generate ``pydantic_ai_instrumentation``: pydantic-ai under its own ``Instrumentation``
capability (OpenTelemetry GenAI conventions), in the same world as the other stacks.

Each agent runs on pydantic-ai's ``OpenAIChatModel`` whose ``openai`` client talks to
:class:`fake_openai.FakeOpenAI` (Chat Completions; usage with cached and reasoning tokens, mapped
by pydantic-ai's own OpenAI adapter).
The raising tool raises pydantic-ai's ``ModelRetry`` with the exception's message (a plain
exception would end the run). ``notify(request)`` runs the notifier agent. The handoff is
pydantic-ai's output function: ``transfer_to_billing`` is an output tool whose result ends the
support agent's run, and the application then runs the billing agent.

Run in its own environment (``make traces-fixtures`` builds it from
``requirements-pydantic_ai_instrumentation.txt``), from the repository root:
``.venv-traces/pydantic_ai_instrumentation/bin/python tests/data/traces/stacks/gen/pydantic_ai_instrumentation.py``.
"""

# No `from __future__ import annotations`: pydantic-ai reads the tools' annotations at run time.
import asyncio
import sys
from typing import Any

import world
from fake_openai import FakeOpenAI, clients

HANDOFF_RESULT = {"handoff": "billing"}
STACK = world.Stack(
    name="pydantic_ai_instrumentation",
    packages=("pydantic-ai-slim", "openai", "opentelemetry-sdk"),
    handoff_result=HANDOFF_RESULT,
    notes=(
        "The raising tool's wrapper turns the exception into ModelRetry(message), pydantic-ai's "
        "way to tell the model a tool failed; the truth's error is that message.",
        "The sub-agent tool is notify(request), which runs the notifier agent.",
        "The handoff is an output function transfer_to_billing (no arguments) returning the "
        "truth's result, which ends the support agent's run; the application then runs the "
        "billing agent on the user's message.",
    ),
)


def _model(agent: str, client: Any) -> Any:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    return OpenAIChatModel(world.MODELS[agent], provider=OpenAIProvider(openai_client=client))


def _agents(client: Any, settings: Any) -> tuple[Any, Any]:
    from pydantic_ai import Agent, ModelRetry, ToolOutput
    from pydantic_ai.capabilities import Instrumentation

    def agent(name: str, **kwargs: Any) -> Any:
        return Agent(
            _model(name, client),
            name=name,
            instructions=world.INSTRUCTIONS[name],
            capabilities=[Instrumentation(settings=settings)],
            **kwargs,
        )

    notifier = agent("notifier")
    notifier.tool_plain(world.send_email)
    billing = agent("billing")
    billing.tool_plain(world.refund)

    def transfer_to_billing() -> dict:
        """Hand the conversation over to the billing agent."""
        return dict(HANDOFF_RESULT)

    support = agent(
        "support", output_type=[str, ToolOutput(transfer_to_billing, name=world.HANDOFF)]
    )
    support.tool_plain(world.lookup_order)
    support.tool_plain(world.refund)

    @support.tool_plain
    def fetch_invoice(order_id: str) -> str:
        """Fetch the invoice of an order."""
        try:
            return world.fetch_invoice(order_id)
        except RuntimeError as exc:
            raise ModelRetry(str(exc)) from exc

    @support.tool_plain
    async def notify(request: str) -> str:
        """Ask the notifier agent to e-mail a customer."""
        return str((await notifier.run(request)).output)

    return support, billing


async def _run(support: Any, billing: Any, prompt: str) -> Any:
    output = (await support.run(prompt)).output
    if output == HANDOFF_RESULT:
        output = (await billing.run(prompt)).output
    return output


def main() -> int:
    from pydantic_ai.models.instrumented import InstrumentationSettings

    world.setup_env()
    provider = world.tracer_provider(STACK)
    settings = InstrumentationSettings(
        tracer_provider=provider, include_model_request_parameters=False
    )
    fake = FakeOpenAI(STACK)
    _, aio = clients(fake)
    support, billing = _agents(aio, settings)
    world.run_all(
        STACK, provider, fake.cursor, lambda plan: asyncio.run(_run(support, billing, plan.prompt))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
