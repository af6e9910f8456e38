"""Make ``pydantic_ai_otlp.jsonl``: real pydantic-ai spans of a scripted agent, as OTLP JSON lines.

A pydantic-ai ``Agent`` ("support", three tools: ``lookup_order``, ``refund``, ``notify``; the
``notify`` tool runs a sub-agent "notifier" with its own tool ``send_email``) is driven by
``FunctionModel`` (scripted tool calls and token usage: no network, no API key), instrumented
with pydantic-ai's ``Instrumentation`` capability on an OpenTelemetry SDK ``TracerProvider``
with an ``InMemorySpanExporter``. Each run sits under a harness span ``task`` carrying
``ek.task_id`` and ``ek.success`` (the script knows which trials are right). The finished SDK
spans are converted with ``ek.agents.traces.span_from_otel`` and written with
``ek.agents.traces.write_otlp_json`` (one OTLP JSON document per trace per line, ids as hex,
times in ns, attributes as OTLP ``AnyValue``).

Run from the repository root: ``.venv/bin/python tests/data/traces/make_traces.py``. Trace ids
and times differ on every run; the tool calls, usage and verdicts do not. The tests import
:func:`run_scenario` to produce the same spans live.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: (task_id, trial) -> what the agent does: its tool calls in order (name, args as the model
#: wrote them: a dict, or JSON text; a malformed text on purpose in one trial) and whether it
#: is right. Each model turn asks for one call, so execution order is the scripted order.
SCRIPT: dict[tuple[str, int], dict[str, Any]] = {
    ("refund-A1", 0): {
        "calls": [
            ("lookup_order", {"order_id": "A1"}),
            ("refund", '{"order_id": "A1", "amount": 5.0}'),
            ("notify", {"customer": "ann", "message": "refunded"}),
        ],
        "output": "refunded A1",
        "success": True,
    },
    ("refund-A1", 1): {
        "calls": [
            ("lookup_order", {"order_id": "A1"}),
            ("refund", {"order_id": "A1", "amount": 50.0}),
            ("notify", {"customer": "ann", "message": "refunded"}),
        ],
        "output": "refunded A1",
        "success": False,
    },
    ("refund-A1", 2): {
        "calls": [
            ("lookup_order", {"order_id": "A1"}),
            ("refund", {"order_id": "A1", "amount": 5.0}),
            ("notify", '{"customer": "ann", "message": '),  # malformed JSON: the model's problem
        ],
        "output": "refunded A1",
        "success": False,
    },
    ("status-B2", 0): {
        "calls": [("lookup_order", {"order_id": "B2"})],
        "output": "paid",
        "success": True,
    },
    ("status-B2", 1): {
        "calls": [("lookup_order", {"order_id": "B3"})],
        "output": "unknown",
        "success": False,
    },
    ("status-B2", 2): {
        "calls": [("lookup_order", {"order_id": "B2"})],
        "output": "paid",
        "success": True,
    },
}

#: The gold calls of each task (ek's normalised call format).
GOLD = {
    "refund-A1": [
        {"lookup_order": {"order_id": "A1"}},
        {"refund": {"order_id": "A1", "amount": 5.0}},
        {"notify": {"customer": "ann", "message": "refunded"}},
    ],
    "status-B2": [{"lookup_order": {"order_id": "B2"}}],
}

#: Token usage of every model turn of the support agent: (input incl. cache reads, output, cache reads).
TURN_USAGE = (100, 10, 40)
#: Token usage of every turn of the notifier sub-agent.
SUB_USAGE = (30, 5, 0)
#: The sub-agent's model turns: one send_email call, then the final text.
SUB_CALL = ("send_email", {"to": "ann@example.com", "body": "refunded"})


@dataclass
class Captured:
    """The spans of one scenario run and the exporter that holds them."""

    spans: list[Any] = field(default_factory=list)


def _scripted_model(calls: list[tuple[str, Any]], output: str, usage: tuple[int, int, int]) -> Any:
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage

    state = {"turn": 0}

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        i = state["turn"]
        state["turn"] += 1
        u = RequestUsage(input_tokens=usage[0], output_tokens=usage[1], cache_read_tokens=usage[2])
        if i < len(calls):
            name, args = calls[i]
            return ModelResponse(
                parts=[ToolCallPart(name, args, tool_call_id=f"call_{i}")], usage=u
            )
        return ModelResponse(parts=[TextPart(output)], usage=u)

    return FunctionModel(respond, model_name="scripted")


def _notify_tool(notifier: Any) -> Any:
    """The support agent's ``notify`` tool: it runs the notifier sub-agent (a nested agent)."""

    async def notify(customer: str, message: str) -> str:
        res = await notifier.run(f"tell {customer}: {message}")
        return str(res.output)

    return notify


def run_scenario(tracer_provider: Any) -> None:
    """Run every (task, trial) of :data:`SCRIPT` under ``tracer_provider`` (spans go to its
    processors)."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    settings = InstrumentationSettings(
        tracer_provider=tracer_provider, include_model_request_parameters=False
    )
    tracer = tracer_provider.get_tracer("ek-test-harness")
    for (task, trial), plan in SCRIPT.items():
        support = Agent(
            _scripted_model(plan["calls"], plan["output"], TURN_USAGE),
            name="support",
            capabilities=[Instrumentation(settings=settings)],
        )
        notifier = Agent(
            _scripted_model([SUB_CALL], "sent", SUB_USAGE),
            name="notifier",
            capabilities=[Instrumentation(settings=settings)],
        )

        @notifier.tool_plain
        def send_email(to: str, body: str) -> str:
            return "queued"

        @support.tool_plain
        def lookup_order(order_id: str) -> dict[str, str]:
            if order_id not in ("A1", "B2"):
                raise ModelRetry(f"no order {order_id}")
            return {"order_id": order_id, "status": "paid"}

        @support.tool_plain
        def refund(order_id: str, amount: float) -> str:
            return f"refunded {amount}"

        support.tool_plain(_notify_tool(notifier))

        with tracer.start_as_current_span(
            "task", attributes={"ek.task_id": task, "ek.trial": trial}
        ) as span:
            support.run_sync(f"handle {task}")
            span.set_attribute("ek.success", bool(plan["success"]))


def capture() -> list[Any]:
    """Run the scenario with an in-memory exporter and return the finished SDK spans."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run_scenario(provider)
    provider.shutdown()
    return list(exporter.get_finished_spans())


def main(out: Path) -> int:
    from ek.agents.traces import span_from_otel, write_otlp_json

    n = write_otlp_json(out, [span_from_otel(s) for s in capture()])
    sys.path.insert(0, str(Path(__file__).with_name("stacks") / "gen"))
    from world import scrub_machine_paths  # the stacks' generators share the one scrub

    scrub_machine_paths(out)
    print(f"wrote {n} spans to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(__file__).with_name("pydantic_ai_otlp.jsonl")))
