"""Traces from real instrumentation -> Episodes -> the same scores as Episodes handed over directly.

pydantic-ai (OpenTelemetry GenAI conventions) through its ``Instrumentation`` capability and a
``FunctionModel``; OpenInference through ``openinference-instrumentation-openai`` around an
``openai`` client whose transport is an ``httpx.MockTransport``. Nothing reaches the network
(tests/conftest.py's guard would fail the test).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.sdk")

from ek.agents.base import Cost, Episode, TaskSpec, ToolSpec
from ek.agents.cli import main
from ek.agents.cost import per_million
from ek.agents.harness import load_run
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric, normalize_calls
from ek.agents.traces import (
    episodes_from_spans,
    read_spans,
    read_trace_episodes,
    span_from_otel,
    summary_from_traces,
    write_otlp_json,
)
from ek.agents.trajectory import TrajectoryMetric

DATA = Path(__file__).parent / "data" / "traces"
TRACE_FILE = DATA / "pydantic_ai_otlp.jsonl"
OPTS = {"task_attribute": "ek.task_id", "trial_attribute": "ek.trial"}


def _scenario() -> Any:
    spec = importlib.util.spec_from_file_location("ek_make_traces", DATA / "make_traces.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ek_make_traces"] = mod
    spec.loader.exec_module(mod)
    return mod


SC = _scenario()


@pytest.fixture(scope="module")
def sdk_spans() -> list[Any]:
    return SC.capture()


GOLD_OUTPUT = {"refund-A1": "refunded A1", "status-B2": "paid"}
PRICE = per_million(2.5, 10.0, cache_read=1.25)


def _task(task_id: str) -> TaskSpec:
    return TaskSpec(
        task_id,
        gold=GOLD_OUTPUT.get(task_id),
        tools=[ToolSpec("refund", destructive=True), ToolSpec("lookup_order"), ToolSpec("notify")],
        gold_calls=normalize_calls(SC.GOLD[task_id]),
    )


def _direct(task_id: str, trial: int) -> Episode:
    """The same run handed over directly: the scripted calls through ek's normaliser (a
    malformed JSON text becomes the same malformed call), the usage derived by hand."""
    plan = SC.SCRIPT[(task_id, trial)]
    steps = normalize_calls([{"name": n, "arguments": a} for n, a in plan["calls"]], strict=False)
    return Episode(
        task_id,
        trajectory=steps,
        output=plan["output"],
        trial=trial,
        cost=_expected_cost(task_id, trial),
    )


def _expected_cost(task_id: str, trial: int) -> Cost:
    # Support agent: one model turn per call plus the final answer; pydantic-ai retries after a
    # malformed or failing call, and that retry turn is the final answer here (calls run one by
    # one). Each turn reports input 100 (40 of them cache reads) and output 10, so per turn:
    # uncached input 100 - 40 = 60, cache read 40, output 10. The notifier sub-agent (run by
    # a successful `notify`) has 2 turns of input 30, output 5, no cache.
    plan = SC.SCRIPT[(task_id, trial)]
    calls = plan["calls"]
    notified = any(n == "notify" and isinstance(a, dict) for n, a in calls)
    turns = len(calls) + 1
    sub = 2 if notified else 0
    return Cost(
        input_tokens=60 * turns + 30 * sub,
        output_tokens=10 * turns + 5 * sub,
        cache_read_tokens=40 * turns,
        model="scripted",
    )


def _scores(ep: Episode) -> tuple[float, float, bool, float, float]:
    task = _task(ep.task_id)
    tc = ToolCallMetric()(ep, task)
    tr = TrajectoryMetric()(ep, task)
    ok = TaskSuccessMetric("output")(ep, task)
    cps = CostPerSuccessMetric("output", price=PRICE)(ep, task)
    return tc.value, tr.value, bool(tc.detail["passed"]), ok.value, cps.value


def test_live_pydantic_ai_spans_score_as_direct_episodes(sdk_spans: list[Any]) -> None:
    eps = episodes_from_spans([span_from_otel(s) for s in sdk_spans], **OPTS)
    assert [(e.task_id, e.trial) for e in eps] == list(SC.SCRIPT)
    for ep in eps:
        direct = _direct(ep.task_id, ep.trial)
        assert _scores(ep) == _scores(direct), (ep.task_id, ep.trial)
        assert ep.trajectory.tools == direct.trajectory.tools
        assert ep.output == direct.output
        assert ep.agent_cost == _expected_cost(ep.task_id, ep.trial)
    # the malformed call is scored as a wrong call with its reason, never a crash
    bad = eps[2].trajectory[2]
    assert bad.tool == "<malformed call>" and "not JSON" in (bad.error or "")
    # hand-derived: refund-A1 trial 0 matches the gold exactly
    assert _scores(eps[0])[0] == 1.0 and _scores(eps[0])[2] is True


def test_sdk_to_json_and_otlp_file_give_the_same_episodes(
    sdk_spans: list[Any], tmp_path: Path
) -> None:
    live = episodes_from_spans([span_from_otel(s) for s in sdk_spans], **OPTS)
    via_json = episodes_from_spans([json.loads(s.to_json()) for s in sdk_spans], **OPTS)
    p = tmp_path / "t.jsonl"
    write_otlp_json(p, [span_from_otel(s) for s in sdk_spans])
    via_file = read_trace_episodes(p, **OPTS)
    for a, b, c in zip(live, via_json, via_file):
        assert a.trajectory == b.trajectory == c.trajectory
        assert a.cost == b.cost == c.cost
        assert a.output == b.output == c.output
        assert _scores(a) == _scores(b) == _scores(c)


def test_nested_agent_scope(sdk_spans: list[Any]) -> None:
    spans = [span_from_otel(s) for s in sdk_spans]
    top = episodes_from_spans(spans, **OPTS)[0]
    every = episodes_from_spans(spans, scope="all", **OPTS)[0]
    assert top.trajectory.tools == ("lookup_order", "refund", "notify")
    assert every.trajectory.tools == ("lookup_order", "refund", "notify", "send_email")
    meta = every.metadata["trace"]
    assert [s["agent"] for s in meta["steps"]] == ["support"] * 3 + ["notifier"]
    assert [s["depth"] for s in meta["steps"]] == [1, 1, 1, 2]
    support, notifier = meta["agents"]
    assert notifier["parent_agent_span_id"] == support["span_id"]
    # cost counts the whole run whatever the scope
    assert top.cost == every.cost


def test_committed_trace_file_reads_back() -> None:
    eps = read_trace_episodes(TRACE_FILE, success_attribute="ek.success", **OPTS)
    assert [(e.task_id, e.trial, e.success) for e in eps] == [
        (t, i, p["success"]) for (t, i), p in SC.SCRIPT.items()
    ]
    for ep in eps:
        assert _scores(ep) == _scores(_direct(ep.task_id, ep.trial))
        assert ep.agent_cost == _expected_cost(ep.task_id, ep.trial)


def test_committed_trace_file_summary_and_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    s = load_run(TRACE_FILE, trace_options={**OPTS, "success_attribute": "ek.success"})
    # refund-A1: trial 0 right, 1 and 2 wrong; status-B2: trials 0 and 2 right
    assert dict(s.counts) == {"refund-A1": (3, 1), "status-B2": (3, 2)}
    assert s.k == 3
    same = summary_from_traces(TRACE_FILE, success_attribute="ek.success", **OPTS)
    assert dict(same.counts) == dict(s.counts)
    argv = ["report", str(TRACE_FILE), "--json", "--task-attribute", "ek.task_id"]
    assert main([*argv, "--success-attribute", "ek.success"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert json.dumps(out)  # a report was printed
    # the gate reads trace files too: the file against itself is no regression
    rc = main(
        [
            "gate",
            str(TRACE_FILE),
            str(TRACE_FILE),
            "--task-attribute",
            "ek.task_id",
            "--success-attribute",
            "ek.success",
        ]
    )
    assert rc == 0


def test_checker_decides_success_from_trace() -> None:
    golds = {"refund-A1": "refunded A1", "status-B2": "paid"}
    s = summary_from_traces(TRACE_FILE, check="output", gold=golds, **OPTS)
    # outputs: refund-A1 all "refunded A1" (3 of 3); status-B2 "paid", "unknown", "paid" (2 of 3)
    assert dict(s.counts) == {"refund-A1": (3, 3), "status-B2": (3, 2)}


# ----------------------------------------------------------------------------- OpenInference


def _openai_completion(request: Any) -> Any:
    import httpx

    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "lookup_order", "arguments": '{"order_id": "A1"}'},
                        },
                        {
                            "id": "call_2",
                            "type": "function",
                            "function": {
                                "name": "refund",
                                "arguments": '{"order_id": "A1", "amount": 5}',
                            },
                        },
                        {
                            "id": "call_3",
                            "type": "function",
                            "function": {"name": "notify", "arguments": '{"customer": "ann", '},
                        },
                    ],
                },
            }
        ],
        "usage": {
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 20},
            "completion_tokens_details": {"reasoning_tokens": 10},
        },
    }
    return httpx.Response(200, json=body)


def test_openinference_openai_chat_completion_with_tool_calls() -> None:
    httpx = pytest.importorskip("httpx")
    openai = pytest.importorskip("openai")
    oi = pytest.importorskip("openinference.instrumentation.openai")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = oi.OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = openai.OpenAI(
            api_key="test-key",
            base_url="http://mock.invalid/v1",
            http_client=httpx.Client(transport=httpx.MockTransport(_openai_completion)),
        )
        resp = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "refund A1 and tell ann"}]
        )
    finally:
        instrumentor.uninstrument()
    spans = [span_from_otel(s) for s in exporter.get_finished_spans()]
    assert spans and spans[0].attributes.get("openinference.span.kind") == "LLM"
    [ep] = episodes_from_spans(spans)
    # the same calls handed over directly: the SDK's own parsed tool calls
    direct = Episode(
        ep.task_id,
        trajectory=normalize_calls(
            [c.model_dump() for c in resp.choices[0].message.tool_calls or []], strict=False
        ),
    )
    task = _task("refund-A1")
    for metric in (ToolCallMetric(), TrajectoryMetric()):
        assert metric(ep, task).value == metric(direct, task).value
    assert ep.trajectory.tools == ("lookup_order", "refund", "<malformed call>")
    assert ep.input == "refund A1 and tell ann"
    # OpenAI's prompt_tokens include the 20 cached ones: uncached 120 - 20 = 100; the 10
    # reasoning tokens are inside the 30 completion tokens.
    assert ep.agent_cost == Cost(
        input_tokens=100,
        output_tokens=30,
        cache_read_tokens=20,
        reasoning_tokens=10,
        model="gpt-4o-2024-08-06",
    )
    # OTLP round trip keeps it
    from ek.agents.traces import spans_to_otlp

    doc_eps = episodes_from_spans(list(read_spans([spans_to_otlp(spans)])))
    assert doc_eps[0].trajectory == ep.trajectory
