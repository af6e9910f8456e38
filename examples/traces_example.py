"""Score the traces you already have: OpenTelemetry spans in, ek scores out (offline, no API key).

Run it:

    python examples/traces_example.py [OUT_DIR] [--by-hand]

1. **A trace file.** A real pydantic-ai ``Agent`` (tools ``lookup_order`` and ``refund``)
   driven by ``FunctionModel`` (a scripted model: its tool calls and token usage are written
   below, so nothing leaves the machine) runs two tasks three times each, instrumented with
   OpenTelemetry; each run sits in a harness span ``trial`` carrying ``ek.task_id`` and
   ``ek.trial``. The finished spans are written as OTLP JSON lines, what the OpenTelemetry
   Collector's file exporter writes. Without pydantic-ai and the OpenTelemetry SDK installed
   (``pip install "ek-agents[dev]"``), or with ``--by-hand``, the same runs are written as spans
   built by hand instead (standard library only).
2. **Traces in.** ``read_trace_episodes`` turns each agent run into an ek Episode (its tool
   calls, output and token usage); ``ToolCallMetric`` scores its calls against the gold calls;
   ``summary_from_traces`` counts the verdicts per task (pass^k) and the cost report gives
   Cost-of-Pass.
3. **Scores out.** ``write_evaluation_results`` writes every score back as an OpenTelemetry
   ``gen_ai.evaluation.result`` event attached to the run's own trace and span (an OTLP JSON
   logs file that the Collector's ``otlpjsonfile`` receiver forwards to any backend).
"""

from __future__ import annotations

import json
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ek.agents.base import TaskSpec, Trajectory
from ek.agents.cost import cost_report, per_million
from ek.agents.reliability import reliability
from ek.agents.toolcalls import ToolCallMetric, normalize_calls
from ek.agents.traces import (
    Span,
    evaluation_events,
    read_trace_episodes,
    summary_from_traces,
    write_evaluation_results,
    write_otlp_json,
)

# -- what the agent does on each trial: its turns (tool calls, then the answer) -----------------
LOOKUP_A1 = ("lookup_order", {"order_id": "A1"})
RIGHT = [[LOOKUP_A1], [("refund", {"order_id": "A1", "amount": 20})], "Refunded $20 on A1."]
WRONG = [[LOOKUP_A1], [("refund", {"order_id": "A1", "amount": 200})], "Refunded $200 on A1."]
STATUS = [[("lookup_order", {"order_id": "B2"})], "B2 has shipped."]
SCRIPT: dict[str, list[list[Any]]] = {
    "refund-A1": [RIGHT, RIGHT, WRONG],  # the third trial refunds ten times too much
    "status-B2": [STATUS, STATUS, STATUS],
}
PROMPTS = {"refund-A1": "Refund $20 on order A1", "status-B2": "Where is order B2?"}
OBSERVATIONS = {
    "A1": {"order_id": "A1", "status": "paid"},
    "B2": {"order_id": "B2", "status": "shipped"},
}

# -- the gold: what a right run calls and answers -----------------------------------------------
TASKS = {
    "refund-A1": TaskSpec(
        "refund-A1",
        gold="Refunded $20 on A1.",
        gold_calls=Trajectory(
            normalize_calls(
                [{"lookup_order": {"order_id": "A1"}}, {"refund": {"order_id": "A1", "amount": 20}}]
            )
        ),
    ),
    "status-B2": TaskSpec(
        "status-B2",
        gold="B2 has shipped.",
        gold_calls=Trajectory(normalize_calls([{"lookup_order": {"order_id": "B2"}}])),
    ),
}
MODEL = "scripted"
PRICE = per_million(2.50, 10.00)  # USD per million input / output tokens (illustrative)


def turn_usage(turn: int) -> tuple[int, int]:
    """The scripted token usage of one model turn: (input, output)."""
    return 1_200 + 300 * turn, 60


# -- 1a. the trace from real instrumentation (pydantic-ai + the OpenTelemetry SDK) -------------
def traced_by_pydantic_ai(path: Path) -> int:
    """Run every trial of :data:`SCRIPT` as an instrumented pydantic-ai run; write the spans."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import RequestUsage

    from ek.agents.traces import span_from_otel

    exporter = InMemorySpanExporter()  # in production: your OTLP exporter, or the Collector
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = InstrumentationSettings(tracer_provider=provider)
    agent = Agent(name="shop", capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, str]:
        """Look an order up."""
        return tool_result("lookup_order", {"order_id": order_id})

    @agent.tool_plain
    def refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        return tool_result("refund", {"order_id": order_id, "amount": amount})

    def scripted(turns: list[Any]) -> FunctionModel:
        def respond(messages: list[Any], info: Any) -> ModelResponse:
            turn = sum(1 for m in messages if m.kind == "response")
            inp, out = turn_usage(turn)
            usage = RequestUsage(input_tokens=inp, output_tokens=out)
            step = turns[turn]
            if isinstance(step, str):
                return ModelResponse(parts=[TextPart(step)], usage=usage)
            calls = [
                ToolCallPart(n, a, tool_call_id=f"call_{turn}_{i}") for i, (n, a) in enumerate(step)
            ]
            return ModelResponse(parts=calls, usage=usage)

        return FunctionModel(respond, model_name=MODEL)

    harness = provider.get_tracer("my-harness")
    for task_id, trials in SCRIPT.items():
        for trial, turns in enumerate(trials):
            attributes: dict[str, str | int] = {"ek.task_id": task_id, "ek.trial": trial}
            with harness.start_as_current_span("trial", attributes=attributes):
                agent.run_sync(PROMPTS[task_id], model=scripted(turns))
    provider.shutdown()
    return write_otlp_json(path, [span_from_otel(s) for s in exporter.get_finished_spans()])


# -- 1b. the same runs as spans built by hand (standard library only) ---------------------------
def tool_result(name: str, args: dict[str, Any]) -> Any:
    """What the shop's tools return."""
    if name == "lookup_order":
        return OBSERVATIONS[args["order_id"]]
    return f"refunded {args['amount']:g}"


def hand_built_run(trace_id: str, task_id: str, trial: int, turns: list[Any]) -> list[Span]:
    """One run as OpenTelemetry GenAI spans: a harness span ``trial``, the agent's
    ``invoke_agent`` span, and under it one ``chat`` span per model turn and one
    ``execute_tool`` span per tool call (ids and times made up, in order)."""
    ids = iter(f"{n:016x}" for n in range(1, 100))
    clock = iter(range(1_000, 100_000, 10))
    root, run, start = next(ids), next(ids), next(clock)
    children = []
    for turn, step in enumerate(turns):
        inp, out = turn_usage(turn)
        chat: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.response.model": MODEL}
        chat |= {"gen_ai.usage.input_tokens": inp, "gen_ai.usage.output_tokens": out}
        t = next(clock)
        children.append(Span(trace_id, next(ids), run, f"chat {MODEL}", t, t + 5, chat))
        for i, (name, args) in enumerate([] if isinstance(step, str) else step):
            tool: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
            }
            tool |= {
                "gen_ai.tool.call.id": f"call_{turn}_{i}",
                "gen_ai.tool.call.arguments": json.dumps(args),
                "gen_ai.tool.call.result": json.dumps(tool_result(name, args)),
            }
            t = next(clock)
            children.append(Span(trace_id, next(ids), run, f"execute_tool {name}", t, t + 5, tool))
    end = next(clock)
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shop"}
    agent["final_result"] = turns[-1]
    harness = {"ek.task_id": task_id, "ek.trial": trial}
    return [
        Span(trace_id, root, None, "trial", start, end + 1, harness),
        Span(trace_id, run, root, "invoke_agent shop", start, end, agent),
        *children,
    ]


def traced_by_hand(path: Path) -> int:
    """The same runs as spans built by hand: this file stands in for what the OpenTelemetry
    Collector's file exporter writes from your instrumented agent."""
    spans: list[Span] = []
    for t_no, (task_id, trials) in enumerate(SCRIPT.items()):
        for trial, turns in enumerate(trials):
            trace_id = f"{t_no + 1:02x}{trial + 1:030x}"
            spans += hand_built_run(trace_id, task_id, trial, turns)
    return write_otlp_json(path, spans)


def make_trace(path: Path, by_hand: bool) -> str:
    """Write the trace file; say how it was made."""
    instrumented = all(find_spec(m) for m in ("pydantic_ai", "opentelemetry.sdk"))
    if instrumented and not by_hand:
        n = traced_by_pydantic_ai(path)
        return f"{n} spans from pydantic-ai's OpenTelemetry instrumentation"
    return f"{traced_by_hand(path)} spans built by hand (standing in for a Collector's file)"


def main(argv: list[str]) -> int:
    by_hand = "--by-hand" in argv
    args = [a for a in argv if a != "--by-hand"]
    out = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="ek-traces-"))
    out.mkdir(parents=True, exist_ok=True)
    traces, evals = out / "traces.jsonl", out / "evals.jsonl"
    print(f"trace file        {traces.name}: {make_trace(traces, by_hand)}")

    # 2. Traces in: one Episode per agent run, scored like any other Episode.
    where = {"task_attribute": "ek.task_id", "trial_attribute": "ek.trial"}
    episodes = read_trace_episodes(traces, **where)
    metric = ToolCallMetric()
    scores = [metric(ep, TASKS[ep.task_id]) for ep in episodes]
    print(f"{'run':<17} {'tool_calls':>10}  valid  tokens in/out")
    evals.unlink(missing_ok=True)
    for ep, score in zip(episodes, scores):
        c = ep.agent_cost
        run = f"{ep.task_id} #{ep.trial}"
        valid = "yes" if score.passed else "NO"
        print(f"{run:<17} {score.value:>10.3f}  {valid:<5}  {c.input_tokens}/{c.output_tokens}")
        # 3. Scores out: a gen_ai.evaluation.result event on the run's own trace and span.
        write_evaluation_results(evals, evaluation_events(ep, {"tool_calls": score}), append=True)
    print(f"tool_calls        {metric.aggregate(scores):.4f} (micro-F1 over all runs)")

    # pass^k and Cost-of-Pass: a trace has no verdict of its own; here a checker decides.
    golds = {t: task.gold for t, task in TASKS.items()}
    summary = summary_from_traces(traces, check="output", gold=golds, **where)
    rel = reliability(summary.counts, summary.k)
    print(f"counts            {dict(summary.counts)}")
    print(f"pass^{summary.k}            {rel.pass_hat_k[summary.k].point:.3f}")
    assert summary.episodes is not None and summary.verdicts is not None
    cost = cost_report(list(summary.episodes), price=PRICE, successes=list(summary.verdicts))
    print(f"Cost-of-Pass      ${cost.cost_of_pass:.6f} per successful task")

    with open(evals, encoding="utf-8") as f:
        first = json.loads(f.readline())["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    attrs = {a["key"]: next(iter(a["value"].values())) for a in first["attributes"]}
    print(
        f"evaluation file   {evals.name}: {len(episodes)} {first['eventName']} events; the first:"
    )
    print(f"                  trace {first['traceId']} span {first['spanId']}")
    print(
        f"                  {attrs['gen_ai.evaluation.name']} = "
        f"{attrs['gen_ai.evaluation.score.value']} ({attrs['gen_ai.evaluation.score.label']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
