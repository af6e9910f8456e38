"""Evaluation results out: ek Scores as OpenTelemetry ``gen_ai.evaluation.result`` events.

The file path (OTLP JSON logs, standard library only) is read back and every field checked; the
live path goes through the OpenTelemetry SDK's own logger provider and in-memory exporter; the
scores are the real ToolCallMetric's on real calls.
"""

from __future__ import annotations

import json
import math
import sys

import pytest

from ek.agents.base import Episode, Step
from ek.agents.metrics import TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.traces import (
    EVALUATION_EVENT_NAME,
    EvaluationEvent,
    emit_evaluation_results,
    evaluation_events,
    otlp_logs_document,
    write_evaluation_results,
)
from ek.base import Score

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def _scored_episode() -> tuple[Episode, dict[str, Score]]:
    ep = Episode(
        "refund-1",
        trajectory=[Step("lookup", {"order_id": "A1"}), Step("refund", {"amount": 30})],
        output="refunded",
        trial=1,
        metadata={"trace_id": TRACE, "span_id": SPAN},
    )
    gold = [
        {"name": "lookup", "args": {"order_id": "A1"}},
        {"name": "refund", "args": {"amount": 20}},
    ]
    # ToolCallMetric with unit costs: lookup matches (tool 1 + arg 1 = 2 TP); refund's tool
    # matches (1 TP) but its amount is wrong (1 FP + 1 FN): F1 = 2*3 / (2*3 + 1 + 1) = 0.75.
    tc = ToolCallMetric()(ep, gold)
    assert tc.value == pytest.approx(0.75)
    ok = TaskSuccessMetric()(ep, Episode("refund-1", output="refunded"))
    return ep, {"tool_calls": tc, "task_success": ok}


def _attrs(kvs: list[dict]) -> dict:
    """OTLP/JSON key-values back to Python (only the value kinds the writer uses)."""
    out = {}
    for kv in kvs:
        ((kind, v),) = kv["value"].items()
        out[kv["key"]] = int(v) if kind == "intValue" else v
    return out


def test_file_round_trip_checks_every_field(tmp_path):
    ep, scores = _scored_episode()
    events = evaluation_events(ep, scores, time_ns=1_700_000_000_000_000_000)
    path = tmp_path / "evals.jsonl"
    assert write_evaluation_results(path, events, resource={"service.name": "shop-agent"}) == 2

    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1  # one OTLP document per write, on one line (JSON lines)
    doc = json.loads(lines[0])
    assert list(doc) == ["resourceLogs"]
    (rl,) = doc["resourceLogs"]
    assert _attrs(rl["resource"]["attributes"]) == {"service.name": "shop-agent"}
    (sl,) = rl["scopeLogs"]
    assert sl["scope"]["name"] == "ek-agents"
    recs = sl["logRecords"]
    assert len(recs) == 2
    for rec, (name, score) in zip(recs, scores.items()):
        assert rec["eventName"] == EVALUATION_EVENT_NAME == "gen_ai.evaluation.result"
        assert rec["traceId"] == TRACE and rec["spanId"] == SPAN and rec["flags"] == 1
        assert rec["timeUnixNano"] == "1700000000000000000"  # 64-bit ints are JSON strings
        assert int(rec["observedTimeUnixNano"]) > 0
        assert rec["severityNumber"] == 9 and rec["severityText"] == "INFO"
        assert rec["body"] == {"stringValue": f"evaluation: {name}={score.value:g}"}
        attrs = _attrs(rec["attributes"])
        assert attrs == {
            "ek.task_id": "refund-1",
            "ek.trial": 1,
            "gen_ai.evaluation.name": name,
            "gen_ai.evaluation.score.value": score.value,
            "gen_ai.evaluation.score.label": "pass" if score.passed else "fail",
            "gen_ai.evaluation.explanation": score.reason,
            **(
                {"ek.higher_is_better": score.detail["higher_is_better"]}
                if "higher_is_better" in score.detail
                else {}
            ),
        }
    tc = _attrs(recs[0]["attributes"])
    assert tc["gen_ai.evaluation.score.value"] == pytest.approx(0.75)
    assert tc["gen_ai.evaluation.score.label"] == "fail"  # BFCL's valid: one argument wrong

    # append adds a second document line
    write_evaluation_results(path, events[:1], append=True)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_undefined_score_and_no_verdict_leave_the_fields_out():
    ev = EvaluationEvent("judge", Score(math.nan, {"reason": "no gold"}))
    assert ev.event_attributes() == {
        "gen_ai.evaluation.name": "judge",
        "gen_ai.evaluation.explanation": "no gold",
    }
    assert ev.body == "evaluation: judge=undefined"
    rec = otlp_logs_document([ev], now_ns=3)["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    assert "traceId" not in rec and "spanId" not in rec
    assert rec["timeUnixNano"] == rec["observedTimeUnixNano"] == "3"
    json.dumps(rec, allow_nan=False)  # strict JSON: no NaN anywhere


def test_ids_from_arguments_override_the_metadata_and_ints_are_formatted():
    ep, scores = _scored_episode()
    other = "1" * 32
    [ev, _] = evaluation_events(ep, scores, trace_id=other, span_id=0xABC)
    assert ev.trace_id == other and ev.span_id == "0000000000000abc"
    assert EvaluationEvent("x", Score(1.0), trace_id=TRACE.upper()).trace_id == TRACE
    # a reader that formats int ids without padding ("af76..."): zero-padded to 32 / 16 digits
    ev = EvaluationEvent("x", Score(1.0), trace_id="0x" + TRACE[1:], span_id="abc")
    assert (ev.trace_id, ev.span_id) == (TRACE, "0000000000000abc")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"trace_id": "xyz"}, ValueError, "trace_id must be 1 to 32 hex digits"),
        ({"trace_id": "1" * 33}, ValueError, "trace_id must be 1 to 32 hex digits"),
        ({"trace_id": "0" * 32}, ValueError, "not all zero"),
        ({"trace_id": TRACE, "span_id": "g2"}, ValueError, "span_id must be 1 to 16 hex digits"),
        ({"span_id": SPAN}, ValueError, "needs a trace_id"),
        ({"trace_id": 1.5}, TypeError, "trace_id must be a hex str of up to 32 digits"),
        ({"attributes": {"a": [1, 2]}}, TypeError, r"attributes\['a'\] must be a str, bool"),
        ({"attributes": {"a": math.inf}}, TypeError, "finite float"),
        ({"time_ns": -1}, ValueError, "time_ns must be an int >= 0"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(kwargs, error, match):
    with pytest.raises(error, match=match):
        EvaluationEvent("x", Score(1.0), **kwargs)


def test_bad_events_and_scores_are_refused(tmp_path):
    with pytest.raises(TypeError, match="score must be an ek Score, got float"):
        EvaluationEvent("x", 0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name must be a non-empty str"):
        EvaluationEvent("", Score(1.0))
    with pytest.raises(TypeError, match=r"events\[0\] must be an EvaluationEvent"):
        write_evaluation_results(tmp_path / "x.jsonl", [Score(1.0)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="events must be an iterable of EvaluationEvent"):
        write_evaluation_results(tmp_path / "x.jsonl", EvaluationEvent("x", Score(1.0)))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scores must be a mapping"):
        evaluation_events(Episode("t"), [Score(1.0)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"resource\['n'\] must be a str"):
        otlp_logs_document([], resource={"n": None})


# -- live, through the OpenTelemetry SDK -----------------------------------------------------


def _provider():
    pytest.importorskip("opentelemetry.sdk._logs")
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    return provider, exporter


def test_live_emission_reaches_the_sdk_exporter_on_the_scored_span():
    ep, scores = _scored_episode()
    events = evaluation_events(ep, scores, time_ns=42)
    provider, exporter = _provider()
    assert emit_evaluation_results(events, logger_provider=provider) == 2

    logs = exporter.get_finished_logs()
    assert len(logs) == 2
    for readable, ev in zip(logs, events):
        rec = readable.log_record
        assert rec.event_name == "gen_ai.evaluation.result"
        assert f"{rec.trace_id:032x}" == TRACE and f"{rec.span_id:016x}" == SPAN
        assert dict(rec.attributes) == ev.event_attributes()
        assert rec.body == ev.body and rec.timestamp == 42
        assert rec.severity_text == "INFO" and rec.severity_number.value == 9
        assert readable.instrumentation_scope.name == "ek-agents"


def test_live_emission_without_ids_attaches_to_the_current_span():
    provider, exporter = _provider()
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent shop") as span:
        emit_evaluation_results(
            [EvaluationEvent("task_success", Score(1.0, {"passed": True}))],
            logger_provider=provider,
        )
        want = span.get_span_context()
    (readable,) = exporter.get_finished_logs()
    assert readable.log_record.trace_id == want.trace_id
    assert readable.log_record.span_id == want.span_id


def test_live_emission_without_opentelemetry_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(ImportError, match=r"pip install ek-agents\[otel\]"):
        emit_evaluation_results([EvaluationEvent("x", Score(1.0))])


def test_a_real_pydantic_ai_trace_gets_its_verdicts_on_its_own_trace_and_span(tmp_path):
    """Real instrumentation: a pydantic-ai agent (FunctionModel, no network) traced with the SDK,
    read back by ek's span reader, scored, and the verdicts attached to that very agent span."""
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import RequestUsage

    from ek.agents.traces import episodes_from_spans, span_from_otel

    spans_out = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans_out))

    def model(messages, info):
        turn = sum(1 for m in messages if m.kind == "response")
        usage = RequestUsage(input_tokens=100, output_tokens=10)
        if turn == 0:
            return ModelResponse([ToolCallPart("lookup", {"order_id": "A1"}, "c1")], usage=usage)
        if turn == 1:
            return ModelResponse([ToolCallPart("refund", {"amount": 30}, "c2")], usage=usage)
        return ModelResponse([TextPart("refunded")], usage=usage)

    settings = InstrumentationSettings(tracer_provider=tracer_provider)
    agent = Agent(FunctionModel(model), name="shop", capabilities=[Instrumentation(settings)])

    @agent.tool_plain
    def lookup(order_id: str) -> str:
        return "paid"

    @agent.tool_plain
    def refund(amount: float) -> str:
        return "ok"

    assert agent.run_sync("refund A1").output == "refunded"
    finished = spans_out.get_finished_spans()
    (agent_span,) = [
        s for s in finished if s.attributes.get("gen_ai.operation.name") == "invoke_agent"
    ]
    [ep] = episodes_from_spans([span_from_otel(s) for s in finished])
    gold = [{"lookup": {"order_id": "A1"}}, {"refund": {"amount": 20}}]
    score = ToolCallMetric()(ep, gold)
    # the same calls handed over directly give the same Score
    direct = Episode(
        "x", trajectory=[Step("lookup", {"order_id": "A1"}), Step("refund", {"amount": 30})]
    )
    assert score == ToolCallMetric()(direct, gold)

    events = evaluation_events(ep, {"tool_calls": score})
    want_trace = f"{agent_span.context.trace_id:032x}"
    want_span = f"{agent_span.context.span_id:016x}"
    assert (events[0].trace_id, events[0].span_id) == (want_trace, want_span)

    provider, exporter = _provider()
    emit_evaluation_results(events, logger_provider=provider)
    (readable,) = exporter.get_finished_logs()
    assert readable.log_record.trace_id == agent_span.context.trace_id
    assert readable.log_record.span_id == agent_span.context.span_id
    assert readable.log_record.attributes["gen_ai.evaluation.score.value"] == score.value

    path = tmp_path / "evals.jsonl"
    write_evaluation_results(path, events)
    rec = json.loads(path.read_text())["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    assert (rec["traceId"], rec["spanId"]) == (want_trace, want_span)
