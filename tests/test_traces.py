"""The span reader and the spans -> Episodes mapping (core, hand-written spans and OTLP files).

Real instrumentation (pydantic-ai, OpenInference) is in tests/test_traces_instrumented.py.
"""

from __future__ import annotations

import base64
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ek.agents.cost import cost_report
from ek.agents.harness import RunLoadError, load_run
from ek.agents.toolcalls import MALFORMED_TOOL, ToolCallMetric
from ek.agents.traces import (
    Span,
    TraceFormatError,
    TraceWarning,
    episodes_from_spans,
    read_spans,
    read_trace_episodes,
    read_traces,
    spans_to_otlp,
    summary_from_traces,
    write_otlp_json,
)

T1 = "0af7651916cd43dd8448eb211c80319c"
T2 = "4bf92f3577b34da6a3ce929d0e0e4736"


def agent(trace: str, sid: str, parent: str | None = None, start: int = 0, **attrs: Any) -> Span:
    a = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": attrs.pop("name", "bot")}
    return Span(trace, sid, parent, "invoke_agent", start, start + 100, {**a, **attrs})


def tool(
    trace: str, sid: str, parent: str | None, start: int, name: str, args: Any, **kw: Any
) -> Span:
    a = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    if args is not None:
        a["gen_ai.tool.call.arguments"] = args
    a.update(kw.pop("attrs", {}))
    return Span(trace, sid, parent, f"execute_tool {name}", start, start + 1, a, **kw)


def chat(trace: str, sid: str, parent: str | None, start: int, **attrs: Any) -> Span:
    return Span(
        trace, sid, parent, "chat", start, start + 1, {"gen_ai.operation.name": "chat", **attrs}
    )


# ----------------------------------------------------------------------------- OTLP reading


def _otlp_line(spans: list[dict[str, Any]], resource: list[dict[str, Any]] | None = None) -> str:
    return json.dumps(
        {
            "resourceSpans": [
                {"resource": {"attributes": resource or []}, "scopeSpans": [{"spans": spans}]}
            ]
        }
    )


def test_otlp_any_values_ids_and_status(tmp_path: Path) -> None:
    b64_trace = base64.b64encode(bytes.fromhex(T1)).decode()
    span = {
        "traceId": b64_trace,  # protobuf's JSON printer writes base64; OTLP JSON says hex
        "spanId": "00f067aa0ba902b7",
        "parentSpanId": "",
        "name": "execute_tool lookup",
        "startTimeUnixNano": "1700000000000000001",
        "endTimeUnixNano": 1700000000000000009,
        "attributes": [
            {"key": "s", "value": {"stringValue": "x"}},
            {"key": "i", "value": {"intValue": "42"}},
            {"key": "d", "value": {"doubleValue": 1.5}},
            {"key": "b", "value": {"boolValue": True}},
            {
                "key": "a",
                "value": {"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "y"}]}},
            },
            {
                "key": "kv",
                "value": {"kvlistValue": {"values": [{"key": "k", "value": {"intValue": "2"}}]}},
            },
            {"key": "raw", "value": {"bytesValue": base64.b64encode(b"\x00\x01").decode()}},
            {"key": "empty", "value": {}},
        ],
        "events": [
            {
                "timeUnixNano": "5",
                "name": "exception",
                "attributes": [{"key": "exception.message", "value": {"stringValue": "boom"}}],
            }
        ],
        "status": {"code": 2},
    }
    p = tmp_path / "t.jsonl"
    p.write_text(
        "\n"
        + _otlp_line([span], [{"key": "service.name", "value": {"stringValue": "shop"}}])
        + "\n\n"
    )
    [s] = list(read_spans(p))
    assert s.trace_id == T1 and s.span_id == "00f067aa0ba902b7" and s.parent_id is None
    assert s.start_ns == 1700000000000000001 and s.duration_ns == 8
    assert dict(s.attributes) == {
        "s": "x",
        "i": 42,
        "d": 1.5,
        "b": True,
        "a": (1, "y"),
        "kv": {"k": 2},
        "raw": b"\x00\x01",
        "empty": None,
    }
    assert s.status == "ERROR" and s.error_message() == "boom"
    assert s.resource["service.name"] == "shop"


def test_single_pretty_document_and_legacy_scope_key(tmp_path: Path) -> None:
    doc = {
        "resourceSpans": [
            {
                "instrumentationLibrarySpans": [
                    {
                        "spans": [
                            {
                                "traceId": T1,
                                "spanId": "00f067aa0ba902b7",
                                "name": "a",
                                "startTimeUnixNano": "1",
                                "endTimeUnixNano": "2",
                                "status": {"code": "STATUS_CODE_OK"},
                            }
                        ]
                    }
                ]
            }
        ]
    }
    p = tmp_path / "doc.json"
    p.write_text(json.dumps(doc, indent=2))
    [s] = list(read_spans(p))
    assert s.status == "OK" and s.name == "a"


def test_to_json_spans_and_lists_and_span_objects() -> None:
    d = {
        "name": "chat m",
        "context": {"trace_id": "0x" + T1, "span_id": "0x00f067aa0ba902b7"},
        "parent_id": None,
        "start_time": "2025-01-01T00:00:00.000001Z",
        "end_time": "2025-01-01T00:00:00.000003Z",
        "status": {"status_code": "ERROR", "description": "x"},
        "attributes": {"k": [1, 2]},
        "events": [],
        "resource": {"attributes": {"service.name": "s"}},
    }
    s0 = Span(T2, "01", None, "x", 0, 0)
    spans = list(read_spans([d, [d], s0]))
    assert [s.name for s in spans] == ["chat m", "chat m", "x"]
    assert spans[0].attributes["k"] == (1, 2) and spans[0].duration_ns == 2000
    assert spans[0].status_message == "x" and spans[0].resource["service.name"] == "s"


def test_write_then_read_round_trip(tmp_path: Path) -> None:
    spans = [
        Span(
            T1,
            "01",
            None,
            "invoke_agent",
            1,
            9,
            {"n": 1, "f": float("nan"), "l": [1, [2]], "m": {"a": None}},
            status="ERROR",
            status_message="failed",
            events=[("exception", 3, {"x": "y"})],
            resource={"service.name": "bot"},
        ),
        Span(T1, "02", "01", "chat", 2, 3, {"b": b"\x01"}),
    ]
    p = tmp_path / "rt.jsonl"
    assert write_otlp_json(p, spans) == 2
    back = list(read_spans(p))
    assert back[1] == spans[1]
    assert back[0].attributes["l"] == (1, (2,)) and back[0].attributes["m"] == {"a": None}
    assert back[0].events == spans[0].events and back[0].status_message == "failed"


@pytest.mark.parametrize(
    ("content", "where", "what"),
    [
        ('{"resourceSpans": []}\n{not json\n', ":2:", "not JSON"),
        ('{"resourceSpans": []}\n[1, 2]\n', ":2:", "expected OTLP JSON"),
        ('{"resourceSpans": []}\n{"ek_store": 1}\n', ":2:", "expected OTLP JSON"),
        ('{"resourceSpans": {"a": 1}}\n', ":1:", "resourceSpans must be a list"),
        (
            '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "01"}]}]}]}\n',
            ":1:",
            "traceId",
        ),
        (
            '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "' + T1 + '"}]}]}]}\n',
            ":1:",
            "needs traceId and spanId",
        ),
        ("hello\n", ":1:", "not JSON"),
    ],
)
def test_malformed_files_name_file_and_line(
    tmp_path: Path, content: str, where: str, what: str
) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(content)
    with pytest.raises(TraceFormatError) as e:
        list(read_spans(p))
    assert str(p) + where in str(e.value) and what in str(e.value)


def test_bounds_line_length_and_nesting(tmp_path: Path) -> None:
    p = tmp_path / "long.jsonl"
    p.write_text(_otlp_line([]) + "\n" + _otlp_line([]) + " " * 200 + "\n")
    with pytest.raises(TraceFormatError, match=r":2: line longer than 100 bytes"):
        list(read_spans(p, max_line_bytes=100))
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"resourceSpans": []}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(TraceFormatError, match=r"deep.jsonl:2: JSON nested too deeply"):
        list(read_spans(deep))
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(80):
        value = {"arrayValue": {"values": [value]}}
    span = {
        "traceId": T1,
        "spanId": "00f067aa0ba902b7",
        "attributes": [{"key": "k", "value": value}],
    }
    nested = tmp_path / "nested.jsonl"
    nested.write_text(_otlp_line([span]) + "\n")
    with pytest.raises(TraceFormatError, match="nested deeper than 64"):
        list(read_spans(nested))


def test_bad_sources() -> None:
    with pytest.raises(TypeError, match="expects a path, or an iterable"):
        read_spans(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="item 1: expected a Span"):
        list(read_spans([{"resourceSpans": []}, 3]))
    with pytest.raises(FileNotFoundError):
        read_spans("/nonexistent/traces.jsonl")
    with pytest.raises(ValueError, match="max_line_bytes must be an int >= 1, got 0"):
        read_spans([], max_line_bytes=0)


def test_span_validation() -> None:
    with pytest.raises(
        ValueError, match=r"Span.status must be one of \('UNSET', 'OK', 'ERROR'\), got 'BAD'"
    ):
        Span(T1, "01", None, "x", 0, 0, status="BAD")
    with pytest.raises(ValueError, match="Span.span_id must be a hex string"):
        Span(T1, "xyz", None, "x", 0, 0)
    with pytest.raises(ValueError, match="Span.start_ns must be >= 0, got -1"):
        Span(T1, "01", None, "x", -1, 0)
    with pytest.raises(TypeError, match="Span.attributes keys must be str"):
        Span(T1, "01", None, "x", 0, 0, {1: 2})  # type: ignore[dict-item]
    s = Span(T1, "01", "0000000000000000", "x", 5, 3)  # all-zero parent = root; clock step kept
    assert s.parent_id is None and s.duration_ns == 0


# ----------------------------------------------------------------------------- conventions


def test_genai_episode_tool_calls_results_errors_and_order() -> None:
    spans = [
        agent(T1, "a1", final_result='{"refunded": true}'),
        # given out of order: steps are ordered by start time
        tool(
            T1,
            "b2",
            "a1",
            30,
            "refund",
            {"order_id": "A1", "amount": 5},
            status="ERROR",
            status_message="card declined",
            attrs={"gen_ai.tool.call.id": "c2"},
        ),
        tool(
            T1,
            "b1",
            "a1",
            10,
            "lookup",
            '{"order_id": "A1"}',
            attrs={"gen_ai.tool.call.result": '{"status": "paid"}', "gen_ai.tool.call.id": "c1"},
        ),
        tool(T1, "b3", "a1", 40, "notify", '{"msg": '),  # malformed JSON: scored, not raised
        tool(T1, "b4", "a1", 50, "lookup", "[1, 2]"),  # not an object
        Span(T1, "b5", "a1", "execute_tool", 60, 61, {"gen_ai.operation.name": "execute_tool"}),
    ]
    [ep] = episodes_from_spans(spans)
    t = ep.trajectory
    assert t.tools[:2] == ("lookup", "refund") and t[0].id == "c1"
    assert t[0].observation == {"status": "paid"} and t[0].error is None
    assert t[1].args == {"order_id": "A1", "amount": 5} and t[1].error == "card declined"
    assert [s.tool for s in t[2:]] == [MALFORMED_TOOL] * 3
    assert "not JSON" in (t[2].error or "") and "no tool name" in (t[4].error or "")
    assert ep.output == {"refunded": True}
    gold = [{"lookup": {"order_id": "A1"}}, {"refund": {"order_id": "A1", "amount": 5}}]
    s = ToolCallMetric()(ep, gold)
    assert s.detail["tp"] > 0 and s.detail["fp"] > 0  # the malformed calls are extra, wrong calls


def test_older_attribute_names() -> None:
    spans = [
        Span(
            T1,
            "a1",
            None,
            "agent run",
            0,
            9,
            {"agent_name": "old", "final_result": "ok", "model_name": "gpt-4o"},
        ),
        Span(
            T1,
            "b1",
            "a1",
            "running tool",
            1,
            2,
            {"gen_ai.tool.name": "lookup", "tool_arguments": '{"id": 1}', "tool_response": "found"},
        ),
        Span(
            T1,
            "c1",
            "a1",
            "chat gpt-4o",
            3,
            4,
            {
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.prompt_tokens": 50,
                "gen_ai.usage.completion_tokens": 7,
                "gen_ai.usage.cache_read_input_tokens": 10,
            },
        ),
    ]
    [ep] = episodes_from_spans(spans)
    assert ep.run is not None and ep.run.agent == "old"
    assert [(s.tool, dict(s.args), s.observation) for s in ep.trajectory] == [
        ("lookup", {"id": 1}, "found")
    ]
    c = ep.agent_cost
    # prompt_tokens 50 include the 10 cache reads: uncached 40
    assert (c.input_tokens, c.cache_read_tokens, c.output_tokens, c.model) == (40, 10, 7, "gpt-4o")


def test_openllmetry_requested_calls_when_no_tool_span() -> None:
    spans = [
        Span(
            T1,
            "c1",
            None,
            "openai.chat",
            0,
            5,
            {
                "llm.request.type": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.completion.0.tool_calls.0.name": "lookup",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"order_id": "A1"}',
                "gen_ai.completion.0.tool_calls.0.id": "call_9",
                "gen_ai.completion.0.tool_calls.1.name": "refund",
                "gen_ai.completion.0.tool_calls.1.arguments": '{"order_id": "A1"}',
                "gen_ai.usage.input_tokens": 10,
                "gen_ai.usage.output_tokens": 2,
            },
        ),
    ]
    [ep] = episodes_from_spans(spans)
    assert ep.trajectory.tools == ("lookup", "refund") and ep.trajectory[0].id == "call_9"
    assert ep.metadata["trace"]["steps"][0]["requested"] is True


def test_requested_calls_not_doubled_when_tool_spans_exist() -> None:
    out = json.dumps(
        [
            {
                "role": "assistant",
                "parts": [
                    {
                        "type": "tool_call",
                        "id": "c1",
                        "name": "lookup",
                        "arguments": {"order_id": "A1"},
                    }
                ],
            }
        ]
    )
    last = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}])
    spans = [
        agent(T1, "a1"),
        chat(T1, "c1", "a1", 1, **{"gen_ai.output.messages": out}),
        tool(T1, "b1", "a1", 3, "lookup", {"order_id": "A1"}),
        chat(T1, "c2", "a1", 5, **{"gen_ai.output.messages": last}),
    ]
    [ep] = episodes_from_spans(spans)
    assert ep.trajectory.tools == ("lookup",)
    assert ep.output == "done"  # no final_result on the agent span: the last model text


def test_openinference_tool_agent_and_cost() -> None:
    spans = [
        Span(
            T1,
            "a1",
            None,
            "agent",
            0,
            9,
            {
                "openinference.span.kind": "AGENT",
                "agent.name": "oi",
                "output.value": '{"answer": 4}',
                "output.mime_type": "application/json",
                "input.value": "what is 2+2",
            },
        ),
        Span(
            T1,
            "b1",
            "a1",
            "add",
            2,
            3,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "add",
                "tool.parameters": '{"type": "object", "properties": {"a": {}}}',  # a schema, not args
                "input.value": '{"a": 2, "b": 2}',
                "output.value": "4",
            },
        ),
        Span(
            T1,
            "b2",
            "a1",
            "mul",
            4,
            5,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "mul",
                "tool.parameters": '{"a": 1, "b": 1}',
            },
        ),
        Span(
            T1,
            "c1",
            "a1",
            "llm",
            1,
            2,
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "m",
                "llm.token_count.prompt": 100,
                "llm.token_count.completion": 20,
                "llm.token_count.prompt_details.cache_write": 30,
                "llm.cost.total": 0.25,
            },
        ),
    ]
    [ep] = episodes_from_spans(spans)
    assert [(s.tool, dict(s.args)) for s in ep.trajectory] == [
        ("add", {"a": 2, "b": 2}),
        ("mul", {"a": 1, "b": 1}),
    ]
    assert ep.trajectory[0].observation == "4"
    assert ep.output == {"answer": 4} and ep.input == "what is 2+2"
    c = ep.agent_cost
    # 100 prompt tokens include the 30 written to the cache: uncached 70; the bill is kept
    assert (c.input_tokens, c.cache_write_tokens, c.output_tokens, c.dollars) == (70, 30, 20, 0.25)


def test_total_only_usage_is_never_split() -> None:
    spans = [
        agent(T1, "a1", **{"ek.ok": True}),
        chat(
            T1,
            "c1",
            "a1",
            1,
            **{
                "gen_ai.request.model": "m",
                "gen_ai.usage.input_tokens": 10,
                "gen_ai.usage.output_tokens": 2,
            },
        ),
        Span(
            T1,
            "c2",
            "a1",
            "llm",
            3,
            4,
            {"openinference.span.kind": "LLM", "llm.model_name": "m", "llm.token_count.total": 500},
        ),
    ]
    [ep] = episodes_from_spans(spans, success_attribute="ek.ok")
    assert ep.cost == ()  # unknown, not under-counted
    meta = ep.metadata["trace"]
    assert meta["usage_unsplit"] == [
        {"span_id": "00000000000000c2", "model": "m", "total_tokens": 500}
    ]
    assert meta["usage_split"] == [
        {"input_tokens": 10, "output_tokens": 2, "model": "m", "role": "agent"}
    ]
    r = cost_report([ep])
    assert r.agent_dollars is None and "recorded no agent usage" in r.reason


def test_agent_span_usage_used_only_without_model_spans() -> None:
    agg = {
        "gen_ai.aggregated_usage.input_tokens": 90,
        "gen_ai.aggregated_usage.output_tokens": 9,
        "model_name": "m",
    }
    [alone] = episodes_from_spans([agent(T1, "a1", **agg)])
    assert (alone.agent_cost.input_tokens, alone.agent_cost.output_tokens) == (90, 9)
    spans = [agent(T1, "a1", **agg), chat(T1, "c1", "a1", 1, **{"gen_ai.usage.input_tokens": 5})]
    [ep] = episodes_from_spans(spans)
    assert ep.agent_cost.input_tokens == 5  # never both: the aggregate repeats the model spans


# ----------------------------------------------------------------------------- nesting, tasks, trials


def test_nested_agents_scope_and_structure() -> None:
    spans = [
        agent(T1, "a1", name="boss"),
        tool(T1, "b1", "a1", 10, "delegate", {}),
        agent(T1, "a2", "b1", 11, name="worker"),
        tool(T1, "b2", "a2", 12, "search", {"q": "x"}),
        agent(T1, "a3", "a2", 13, name="deep"),
        tool(T1, "b3", "a3", 14, "fetch", {}),
        tool(T1, "b4", "a1", 20, "answer", {}),
    ]
    [top] = episodes_from_spans(spans)
    [every] = episodes_from_spans(spans, scope="all")
    assert top.trajectory.tools == ("delegate", "answer")
    assert every.trajectory.tools == ("delegate", "search", "fetch", "answer")
    steps = every.metadata["trace"]["steps"]
    assert [(s["agent"], s["depth"]) for s in steps] == [
        ("boss", 1),
        ("worker", 2),
        ("deep", 3),
        ("boss", 1),
    ]
    agents = {a["name"]: a for a in every.metadata["trace"]["agents"]}
    assert agents["deep"]["parent_agent_span_id"] == agents["worker"]["span_id"]
    assert agents["worker"]["parent_agent_span_id"] == agents["boss"]["span_id"]


def test_tasks_from_attribute_ancestors_resource_and_trials_by_start() -> None:
    harness = Span(T1, "f1", None, "task", 0, 1000, {"ek.task_id": "t-a"})
    spans = [
        harness,
        agent(T1, "a1", "f1", start=50),  # task from the ancestor
        Span(
            T2,
            "a2",
            None,
            "invoke_agent",
            10,
            20,
            {"gen_ai.operation.name": "invoke_agent"},
            resource={"ek.task_id": "t-a"},
        ),  # task from the resource; starts first
    ]
    eps = episodes_from_spans(spans, task_attribute="ek.task_id")
    assert [(e.task_id, e.trial, e.metadata["trace"]["trace_id"]) for e in eps] == [
        ("t-a", 0, T2),
        ("t-a", 1, T1),
    ]


def test_task_and_trial_attribute_errors() -> None:
    with pytest.raises(TraceFormatError, match=f"trace {T1} .*no attribute 'ek.task_id'"):
        episodes_from_spans([agent(T1, "a1")], task_attribute="ek.task_id")
    dup = [agent(T1, "a1", **{"t": "x", "n": 0}), agent(T2, "a1", 5, **{"t": "x", "n": "0"})]
    # the same (task, trial) twice: the first read is kept, the second reported, not the file lost
    with pytest.warns(
        TraceWarning, match=f"trace {T2} .*task 'x' trial 0 was already read from trace {T1}"
    ):
        [kept] = episodes_from_spans(dup, task_attribute="t", trial_attribute="n")
    assert kept.metadata["trace"]["trace_id"] == T1
    reading = read_traces(dup, task_attribute="t", trial_attribute="n")
    assert [p.trace_id for p in reading.problems] == [T2] and len(reading.episodes) == 1
    with pytest.raises(TraceFormatError, match="trial attribute 'n' must be an int >= 0, got -1"):
        episodes_from_spans([agent(T1, "a1", n=-1)], trial_attribute="n")
    with pytest.raises(TraceFormatError, match="verdict attribute 'v' must be a bool"):
        episodes_from_spans([agent(T1, "a1", v="maybe")], success_attribute="v")
    with pytest.raises(ValueError, match="scope must be one of"):
        episodes_from_spans([], scope="some")
    with pytest.raises(TypeError, match="task_attribute must be a non-empty str"):
        episodes_from_spans([], task_attribute="")


@pytest.mark.parametrize(
    ("value", "verdict"), [(True, True), ("PASS", True), ("fail", False), (0, False), (1, True)]
)
def test_verdict_values(value: Any, verdict: bool) -> None:
    [ep] = episodes_from_spans([agent(T1, "a1", v=value)], success_attribute="v")
    assert ep.success is verdict


def test_several_runs_in_one_trace_and_broken_parents() -> None:
    spans = [
        Span(T1, "f1", None, "root", 0, 100, {}),
        agent(T1, "a1", "f1", 1),
        agent(T1, "a2", "f1", 50),
        tool(T1, "b1", "ff", 5, "orphan", {}),  # parent never exported: a root of its own
        Span(T1, "e1", "e2", "loop", 0, 1, {}),
        Span(T1, "e2", "e1", "loop", 0, 1, {}),  # a cycle
    ]
    eps = episodes_from_spans(spans)
    assert [e.task_id for e in eps] == [f"{T1}:00000000000000a1", f"{T1}:00000000000000a2"]
    assert [e.trial for e in eps] == [0, 0]


def test_no_agent_trace_gives_nothing_and_error_status_is_episode_error() -> None:
    assert episodes_from_spans([Span(T1, "01", None, "GET /", 0, 1, {"http.method": "GET"})]) == []
    [ep] = episodes_from_spans(
        [
            agent(T1, "a1").__class__(
                T1,
                "a1",
                None,
                "invoke_agent",
                0,
                1,
                {"gen_ai.operation.name": "invoke_agent"},
                status="ERROR",
                status_message="UsageLimitExceeded",
            )
        ]
    )
    assert ep.error == "UsageLimitExceeded"


# ----------------------------------------------------------------------------- summary, load_run


def _write(tmp_path: Path, spans: list[Span], name: str = "t.jsonl") -> Path:
    p = tmp_path / name
    write_otlp_json(p, spans)
    return p


def test_summary_refusals_say_what_was_looked_for(tmp_path: Path) -> None:
    p = _write(tmp_path, [Span(T1, "01", None, "GET /", 0, 1, {})])
    with pytest.raises(
        RunLoadError,
        match=r"no agent traces: 1 span\(s\) in 1 trace\(s\), none of them agent spans \(gen_ai.operation.name = invoke_agent",
    ):
        load_run(p)
    q = _write(tmp_path, [agent(T1, "a1")], "q.jsonl")
    with pytest.raises(RunLoadError, match="hold no verdict of their own"):
        load_run(q)
    with pytest.raises(
        RunLoadError, match=f"{q}: no run could be read: trace {T1} .*no attribute 'task'"
    ):
        load_run(q, trace_options={"task_attribute": "task", "success_attribute": "v"})


def test_load_run_reads_a_pretty_single_document(tmp_path: Path) -> None:
    doc = spans_to_otlp([agent(T1, "a1", t="x", ok=True), agent(T2, "a1", t="x", ok=False)])
    p = tmp_path / "doc.json"
    p.write_text(json.dumps(doc, indent=2))
    s = load_run(p, trace_options={"task_attribute": "t", "success_attribute": "ok"})
    assert dict(s.counts) == {"x": (2, 1)} and s.k == 2
    assert summary_from_traces(p, task_attribute="t", success_attribute="ok").n_successes == 1


def test_read_trace_episodes_path_only() -> None:
    with pytest.raises(TypeError, match="needs a path"):
        read_trace_episodes([])  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- untrusted input


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "resourceSpans",
                    "scopeSpans",
                    "spans",
                    "traceId",
                    "spanId",
                    "attributes",
                    "key",
                    "value",
                    "stringValue",
                    "intValue",
                    "arrayValue",
                    "values",
                    "status",
                    "code",
                    "context",
                    "name",
                    "parentSpanId",
                    "events",
                ]
            ),
            c,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_json, max_size=3))
def test_arbitrary_documents_never_crash(tmp_path: Path, docs: list[Any]) -> None:
    p = tmp_path / "fuzz.jsonl"
    p.write_text("".join(json.dumps(d) + "\n" for d in docs))
    with contextlib.suppress(TraceFormatError):  # anything else is a crash
        episodes_from_spans(p)


_KEYS = [
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.tool.call.id",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.total_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.output.messages",
    "gen_ai.input.messages",
    "final_result",
    "gen_ai.agent.name",
    "openinference.span.kind",
    "tool.name",
    "tool.parameters",
    "input.value",
    "output.value",
    "output.mime_type",
    "llm.token_count.prompt",
    "llm.token_count.total",
    "llm.cost.total",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "ek.task_id",
    "ek.ok",
]
_OPS = st.sampled_from(["invoke_agent", "chat", "execute_tool", "AGENT", "LLM", "TOOL", "x"])
_VAL = st.one_of(
    _OPS,
    st.integers(-5, 2**60),
    st.floats(),
    st.booleans(),
    st.text(max_size=8),
    st.sampled_from(
        [
            '{"a": 1}',
            "[1]",
            '{"x',
            '[{"role": "assistant", "parts": [{"type": "tool_call"}]}]',
            '{"INVALID_JSON": "{"}',
            "application/json",
        ]
    ),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 6),
            st.one_of(st.none(), st.integers(1, 6)),
            st.dictionaries(st.sampled_from(_KEYS), _VAL, max_size=6),
            st.sampled_from(["UNSET", "OK", "ERROR"]),
        ),
        max_size=8,
    )
)
def test_arbitrary_span_attributes_never_crash(items: list[Any]) -> None:
    spans = [
        Span(T1, f"{sid:02x}", None if p is None else f"{p:02x}", "s", sid, sid + 1, a, status=stat)
        for sid, p, a, stat in items
    ]
    for scope in ("top", "all"):
        with contextlib.suppress(TraceFormatError):  # only a bad task/verdict attribute may raise
            for ep in episodes_from_spans(
                spans, scope=scope, task_attribute="ek.task_id", success_attribute="ek.ok"
            ):
                json.dumps(ep.to_dict(), default=repr)  # the episode is whole


def test_cli_report_refuses_and_gate_reads_trace_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ek.agents.cli import main

    http = _write(tmp_path, [Span(T1, "01", None, "GET /", 0, 1, {})], "http.jsonl")
    assert main(["report", str(http)]) == 2
    assert "no agent traces" in capsys.readouterr().err

    def run(n: int, ok: bool) -> list[Span]:
        # 10 trials of each of 2 tasks; task and verdict on a harness span above the agent
        out = []
        for i in range(n):
            trace = f"{i + 1:032x}"
            out.append(Span(trace, "f1", None, "task", i, i + 10, {"t": f"task-{i % 2}", "ok": ok}))
            out.append(agent(trace, "a1", "f1", i))
        return out

    base = _write(tmp_path, run(20, True), "base.jsonl")
    new = _write(tmp_path, run(20, False), "new.jsonl")
    opts = ["--task-attribute", "t", "--success-attribute", "ok"]
    assert main(["gate", str(base), str(base), *opts]) == 0
    # success 20/20 -> 0/20: the whole interval of the change is below 0, a regression
    assert main(["gate", str(base), str(new), *opts]) == 1


def test_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    p = tmp_path / "bom.jsonl"
    doc = json.dumps(spans_to_otlp([agent(T1, "a1", ok=True)]))
    p.write_bytes(b"\xef\xbb\xbf" + doc.encode() + b"\r\n" + doc.encode() + b"\r\n")
    assert len(list(read_spans(p))) == 2
    assert load_run(p, trace_options={"success_attribute": "ok"}).n_successes == 1


def test_usage_sum_out_of_range_is_a_format_error() -> None:
    big = {
        "gen_ai.request.model": "m",
        "gen_ai.usage.input_tokens": 2**53,
        "gen_ai.usage.output_tokens": 1,
    }
    spans = [agent(T1, "a1"), chat(T1, "c1", "a1", 1, **big), chat(T1, "c2", "a1", 2, **big)]
    with pytest.raises(TraceFormatError, match="usage out of range"):
        episodes_from_spans(spans)


def test_console_exporter_output_concatenated_pretty_spans(tmp_path: Path) -> None:
    def d(sid: str, start: int) -> str:
        return json.dumps(
            {
                "name": "execute_tool f",
                "context": {"trace_id": "0x" + T1, "span_id": "0x" + sid},
                "parent_id": None,
                "start_time": f"2025-01-01T00:00:0{start}Z",
                "end_time": f"2025-01-01T00:00:0{start}Z",
                "status": {"status_code": "UNSET"},
                "attributes": {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": f"f{start}",
                },
            },
            indent=4,
        )

    p = tmp_path / "console.txt"
    p.write_text(d("00000000000000b1", 2) + "\n" + d("00000000000000b2", 1) + "\n")
    [ep] = read_trace_episodes(p)
    assert ep.trajectory.tools == ("f1", "f2")
    bad = tmp_path / "bad.txt"
    bad.write_text(d("00000000000000b1", 2) + "\n{oops\n")
    with pytest.raises(TraceFormatError, match=r"bad.txt:\d+: not JSON"):
        list(read_spans(bad))
