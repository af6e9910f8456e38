"""ek metrics in pydantic-evals: ``EkEvaluator`` on a traced pydantic-ai agent, ``repeat=3``,
and the report read back into pass^k and Cost-of-Pass (offline, no API key, no LLM).

Run it:

    python examples/pydantic_evals_example.py

The agent is a real pydantic-ai ``Agent`` with three tools, driven by ``FunctionModel`` (a
scripted model: its tool calls and token usage are written below), so nothing leaves the
machine. It is instrumented with OpenTelemetry; pydantic-evals hands each run's spans to the
evaluator as ``ctx.span_tree``, and ek reads the tool calls and the usage from them with the same
span reader that reads trace files. No exporter is configured: the spans stay in memory.
"""

from __future__ import annotations

from typing import Any

from ek.adapters.pydantic_evals import EkEvaluator, summary_from_report
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from pydantic_evals import Case, Dataset

from ek.agents.cost import per_million
from ek.agents.metrics import TaskSuccessMetric
from ek.agents.reliability import reliability
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

# pydantic-evals records ctx.span_tree only under an OpenTelemetry SDK tracer provider
# (logfire.configure() sets one too).
trace.set_tracer_provider(TracerProvider())

# -- a scripted agent: what the model "decides" on each run of each prompt -------------------
LOOKUP = ("lookup_order", {"order_id": "A1"})
RIGHT = [[LOOKUP], [("refund", {"order_id": "A1", "amount": 20})], "Refunded $20 on A1."]
WRONG = [[LOOKUP], [("refund", {"order_id": "A1", "amount": 200})], "Refunded $200 on A1."]
SCRIPT: dict[str, list[list[Any]]] = {
    "Refund $20 on order A1": [RIGHT, RIGHT, WRONG],  # the third run refunds ten times too much
    "Where is order B2?": [[[("lookup_order", {"order_id": "B2"})], "B2 has shipped."]] * 3,
}
runs: dict[str, int] = {}


def scripted_model(messages: list[Any], info: AgentInfo) -> ModelResponse:
    prompt = messages[0].parts[-1].content
    turn = sum(1 for m in messages if m.kind == "response")
    step = SCRIPT[prompt][runs.get(prompt, 0)][turn]
    usage = RequestUsage(input_tokens=1_200 + 300 * turn, output_tokens=60)
    if isinstance(step, str):
        return ModelResponse(parts=[TextPart(step)], usage=usage)
    calls = [
        ToolCallPart(name, args, tool_call_id=f"t{turn}-{i}") for i, (name, args) in enumerate(step)
    ]
    return ModelResponse(parts=calls, usage=usage)


agent = Agent(
    FunctionModel(scripted_model, model_name="scripted"),
    name="shop",
    capabilities=[Instrumentation()],  # OpenTelemetry spans: what EkEvaluator reads
)


@agent.tool_plain
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up."""
    return {"order_id": order_id, "status": "paid" if order_id == "A1" else "shipped"}


@agent.tool_plain
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded {amount:g}"


@agent.tool_plain
def notify(email: str) -> str:
    """Send the customer an email."""
    return "sent"


async def shop(prompt: str) -> str:
    result = await agent.run(prompt)
    runs[prompt] = runs.get(prompt, 0) + 1
    return result.output


# -- the dataset: gold calls in Case.metadata (any call shape ek reads) -----------------------
dataset = Dataset(
    name="shop",
    cases=[
        Case(
            name="refund-A1",
            inputs="Refund $20 on order A1",
            expected_output="Refunded $20 on A1.",
            metadata={
                "gold_calls": [
                    {"name": "lookup_order", "arguments": {"order_id": "A1"}},
                    {"name": "refund", "arguments": {"order_id": "A1", "amount": 20}},
                ]
            },
        ),
        Case(
            name="status-B2",
            inputs="Where is order B2?",
            expected_output="B2 has shipped.",
            metadata={"gold_calls": [{"lookup_order": {"order_id": "B2"}}]},
        ),
    ],
    evaluators=[
        EkEvaluator(ToolCallMetric()),  # weighted tool-call F1 + BFCL's valid
        EkEvaluator(TrajectoryMetric("in_order")),
        EkEvaluator(TaskSuccessMetric(check="output")),  # the verdict pass^k counts
    ],
)


def main() -> None:
    report = dataset.evaluate_sync(shop, repeat=3, max_concurrency=1, progress=False)
    # report.print() shows pydantic-evals' own table (ek's value, verdict and figures per run)
    print(f"{'run':<17} {'tool_calls':>10} {'trajectory':>10}  task_success")
    for case in report.cases:
        s, a = case.scores, case.assertions
        print(
            f"{case.name:<17} {s['tool_calls'].value:>10.3f} {s['trajectory'].value:>10.3f}  "
            f"{'pass' if a['task_success.passed'].value else 'FAIL'}"
        )
    print(f"why run 3 failed: {report.cases[2].scores['tool_calls'].reason}")

    # The report back in ek: per-case counts, each metric's ratio-of-sums aggregate, the cost.
    price = per_million(2.50, 10.00)  # USD per million input / output tokens
    summary = summary_from_report(report, success="task_success", price=price)
    rel = reliability(summary.counts, 3)
    print(f"counts            {dict(summary.counts)}")
    for k in (1, 3):
        iv = rel.pass_hat_k[k]
        print(f"pass^{k}            {iv.point:.3f}  [{iv.low:.3f}, {iv.high:.3f}]")
    for name, ms in summary.metrics.items():
        print(f"{name:<17} {ms.value:.4f}")
    assert summary.cost is not None
    print(f"Cost-of-Pass      ${summary.cost['cost_of_pass']:.6f} per successful task")


if __name__ == "__main__":
    main()
