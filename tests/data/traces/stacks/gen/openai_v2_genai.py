"""Generate ``openai_v2_genai``: the plain ``openai`` client under the official
``opentelemetry-instrumentation-openai-v2``, with ``opentelemetry-util-genai``'s
``TelemetryHandler`` for the agent and tool spans.

No agent framework: the agent loop is the user's own code (as it is for people who call the
OpenAI API directly): Chat Completions with tools, answered by :class:`fake_openai.FakeOpenAI`;
each agent run is ``handler.invoke_local_agent(...)``, each tool execution
``handler.tool(name, tool_call_id=...)`` with its arguments and result. The notifier runs inside
the ``notify`` tool's span; after the handoff tool, the support agent's run ends and the billing
agent's run follows it under the same harness span.

Run in its own environment (``make traces-fixtures`` builds it from
``requirements-openai_v2_genai.txt``), from the repository root:
``.venv-traces/openai_v2_genai/bin/python tests/data/traces/stacks/gen/openai_v2_genai.py``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import world
from fake_openai import FakeOpenAI, clients

NAME = "openai_v2_genai"
HANDOFF_RESULT = "Transferred to billing."
STACK = world.Stack(
    name=NAME,
    packages=(
        "openai",
        "opentelemetry-instrumentation-openai-v2",
        "opentelemetry-util-genai",
        "opentelemetry-sdk",
    ),
    handoff_result=HANDOFF_RESULT,
    notes=(
        "No framework: the agent loop is the generator's own code (Chat Completions with tools); "
        "agent and tool spans come from opentelemetry-util-genai's TelemetryHandler.",
        "A raising tool fails its tool span; the loop sends the model 'error: <message>' and "
        "goes on.",
        "The sub-agent tool is notify(request): the notifier's run is nested in its tool span.",
        "The handoff tool transfer_to_billing returns the truth's result and ends the support "
        "agent's run; the billing agent's run follows under the same harness span.",
    ),
)


def _schema(name: str, description: str, params: dict[str, tuple[str, str]]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": t, "description": d} for p, (t, d) in params.items()},
                "required": list(params),
            },
        },
    }


def _tools(agent: str) -> list[dict[str, Any]]:
    tools = [
        _schema(t, (world.TOOLS[t].__doc__ or "").strip(), world.TOOL_PARAMS[t])
        for t in world.AGENT_TOOLS[agent]
    ]
    if agent == "support":
        request = {"request": ("string", "what to tell whom")}
        tools.append(_schema(world.NOTIFY, world.NOTIFY_DESCRIPTION, request))
        tools.append(_schema(world.HANDOFF, world.HANDOFF_DESCRIPTION, {}))
    return tools


class Loop:
    """The user's agent loop, one model turn at a time, with util-genai's spans."""

    def __init__(self, client: Any, handler: Any) -> None:
        self.client = client
        self.handler = handler

    def run(self, agent: str, messages: list[dict[str, Any]]) -> tuple[str | None, bool]:
        """Run ``agent`` until it answers (its text) or hands off (None, True)."""
        from opentelemetry.util.genai.types import InputMessage, OutputMessage, Text

        with self.handler.invoke_local_agent(
            agent_name=agent, request_model=world.MODELS[agent]
        ) as inv:
            inv.system_instruction = [Text(content=world.INSTRUCTIONS[agent])]
            asked = next(m["content"] for m in reversed(messages) if m["role"] == "user")
            inv.input_messages = [InputMessage(role="user", parts=[Text(content=asked)])]
            while True:
                reply = (
                    self.client.chat.completions.create(
                        model=world.MODELS[agent],
                        messages=[
                            {"role": "system", "content": world.INSTRUCTIONS[agent]},
                            *messages,
                        ],
                        tools=_tools(agent),
                    )
                    .choices[0]
                    .message
                )
                if not reply.tool_calls:
                    text = str(reply.content)
                    inv.output_messages = [
                        OutputMessage(
                            role="assistant", parts=[Text(content=text)], finish_reason="stop"
                        )
                    ]
                    return text, False
                messages.append(reply.model_dump(exclude_none=True))
                handed_off = False
                for call in reply.tool_calls:
                    content = self._execute(agent, call)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
                    handed_off = handed_off or call.function.name == world.HANDOFF
                if handed_off:
                    return None, True

    def _execute(self, agent: str, call: Any) -> str:
        """Run one tool call in its span; the text the model gets back."""
        name, args = call.function.name, json.loads(call.function.arguments)
        try:
            with self.handler.tool(name, tool_call_id=call.id, tool_type="function") as span:
                span.arguments = args
                result = self._tool(name, args)
                span.tool_result = result
        except RuntimeError as exc:
            return f"error: {exc}"
        return result if isinstance(result, str) else json.dumps(result)

    def _tool(self, name: str, args: dict[str, Any]) -> Any:
        if name == world.NOTIFY:
            answer, _ = self.run("notifier", [{"role": "user", "content": args["request"]}])
            return answer
        if name == world.HANDOFF:
            return HANDOFF_RESULT
        return world.TOOLS[name](**args)


def instrument(provider: Any) -> Any:
    """The official OpenAI instrumentation on ``provider``, and util-genai's handler."""
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.util.genai.handler import TelemetryHandler

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    return TelemetryHandler(tracer_provider=provider)


def main() -> int:
    world.setup_env()
    provider = world.tracer_provider(STACK)
    handler = instrument(provider)
    fake = FakeOpenAI(STACK)
    sync, _ = clients(fake)
    loop = Loop(sync, handler)

    def run(plan: world.RunPlan) -> str | None:
        messages = [{"role": "user", "content": plan.prompt}]
        answer, handed_off = loop.run("support", messages)
        if handed_off:
            answer, _ = loop.run("billing", messages)
        return answer

    world.run_all(STACK, provider, fake.cursor, run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
