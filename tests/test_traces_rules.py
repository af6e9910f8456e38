"""The trace reader's rules, one at a time, on hand-written spans shaped as the stacks write them.

The real stacks' files are checked whole in tests/test_traces_conformance.py; here each rule of
docs/traces.md ("Which spans make an episode") gets its own small case: the agent is the span
that owns the model calls (wrappers, nested duplicates, graph turns), a requested call and its
execution are one call, framework argument shapes and schemas, the final answer out of framework
state, handoffs and sub-agents placed by time, answer tools, token spellings, what is not
recorded, and one odd trace never costing the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.cli import main
from ek.agents.toolcalls import MALFORMED_TOOL, normalize_call
from ek.agents.toolcalls._parse import is_parameter_schema, unwrap_arguments
from ek.agents.traces import (
    Span,
    TraceFormatError,
    TraceWarning,
    episodes_from_spans,
    read_spans,
    read_traces,
    write_otlp_json,
)
from ek.agents.traces._content import final_answer, first_request, handoff_command, tool_result
from ek.agents.traces._tree import TraceTree

T = "0af7651916cd43dd8448eb211c80319c"


def oi(sid: str, parent: str | None, name: str, start: int, end: int, kind: str, **a: Any) -> Span:
    return Span(T, sid, parent, name, start, end, {"openinference.span.kind": kind, **a})


def ga(sid: str, parent: str | None, name: str, start: int, end: int, **a: Any) -> Span:
    return Span(T, sid, parent, name, start, end, a)


def chat(
    sid: str,
    parent: str | None,
    start: int,
    calls: list[dict[str, Any]] = (),
    text: str = "",
    **a: Any,
) -> Span:  # type: ignore[assignment]
    parts: list[dict[str, Any]] = [{"type": "tool_call", **c} for c in calls]
    if text:
        parts.append({"type": "text", "content": text})
    out = json.dumps([{"role": "assistant", "parts": parts}])
    return ga(
        sid, parent, "chat", start, start + 1,
        **{"gen_ai.operation.name": "chat", "gen_ai.output.messages": out, **a},
    )  # fmt: skip


def tool(sid: str, parent: str | None, start: int, name: str, args: Any = None, **a: Any) -> Span:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **a}
    if args is not None:
        attrs["gen_ai.tool.call.arguments"] = args
    return ga(sid, parent, f"execute_tool {name}", start, start + 1, **attrs)


def agent(sid: str, parent: str | None, start: int, end: int, name: str, **a: Any) -> Span:
    return ga(
        sid, parent, f"invoke_agent {name}", start, end,
        **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, **a},
    )  # fmt: skip


# ----------------------------------------------------------------------------- argument shapes


def test_framework_argument_wrappers_are_taken_off_in_one_place() -> None:
    smol = '{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"order_id": "A1"}}'
    assert unwrap_arguments(smol) == {"order_id": "A1"}
    assert unwrap_arguments({"args": ["A1"], "kwargs": {}}) == "A1"  # one positional value
    payload = {"input_str": "{'order_id': 'A1', 'amount': 5.0}", "tags": [], "metadata": {}}
    assert unwrap_arguments(payload) == {"order_id": "A1", "amount": 5.0}  # a Python repr
    payload_inputs = {**payload, "inputs": {"order_id": "B2"}, "kwargs": {"tool_call_id": "c"}}
    assert unwrap_arguments(json.dumps(payload_inputs)) == {"order_id": "B2"}  # inputs win
    assert unwrap_arguments({"INVALID_JSON": '{"x": '}) == '{"x": '
    assert unwrap_arguments('{"order_id": "A1"}') == '{"order_id": "A1"}'  # not a wrapper
    # a repr is read with ast.literal_eval, never evaluated: code stays text, a malformed call
    evil = {"input_str": "{'x': __import__('os').getcwd()}", "tags": []}
    assert unwrap_arguments(evil) == evil["input_str"]
    assert (
        normalize_call({"name": "f", "arguments": unwrap_arguments(evil)}, strict=False).tool
        == MALFORMED_TOOL
    )


def test_parameter_schemas_are_not_arguments() -> None:
    assert is_parameter_schema('{"order_id": {"type": "string", "description": "the id"}}')
    assert is_parameter_schema({"type": "object", "properties": {"a": {}}})
    assert not is_parameter_schema({"order_id": "A1"})
    assert not is_parameter_schema({"ticket": {"type": "bug", "description": "x"}})  # no type name
    span = oi("b1", None, "SimpleTool", 0, 1, "TOOL", **{
        "tool.name": "lookup_order",
        "tool.parameters": '{"order_id": {"type": "string", "description": "the id"}}',
        "input.value": '{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"order_id": "A1"}}',
    })  # fmt: skip
    [ep] = episodes_from_spans([span])
    assert [(s.tool, dict(s.args)) for s in ep.trajectory] == [("lookup_order", {"order_id": "A1"})]


# ----------------------------------------------------------------------------- framework values


def test_final_answer_from_framework_state_and_messages() -> None:
    state = {"messages": [
        {"type": "human", "data": {"content": "hi"}},
        {"type": "ai", "data": {"content": "", "tool_calls": [{"name": "f"}]}},
        {"type": "tool", "data": {"content": "42"}},
        {"type": "ai", "data": {"content": "It is 42."}},
    ]}  # fmt: skip
    assert final_answer(json.dumps(state)) == "It is 42."  # the last assistant message with text
    assert first_request(state) == "hi"
    lc = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "AIMessage"],
        "kwargs": {"content": "ok"},
    }
    assert final_answer({"outputs": lc, "kwargs": {}}) == "ok"  # OpenLLMetry's payload
    assert final_answer({"answer": 4}) == {"answer": 4}  # a structured output stays as it is
    tool_msg = {
        "lc": 1,
        "type": "constructor",
        "id": ["ToolMessage"],
        "kwargs": {"content": '{"a": 1}'},
    }
    assert tool_result({"output": tool_msg, "kwargs": {}}) == {"a": 1}
    command = {"graph": "__parent__", "goto": "billing", "resume": None,
               "update": {"messages": [{"type": "tool", "data": {"content": "Transferred."}}]}}  # fmt: skip
    assert handoff_command(json.dumps(command)) == ("billing", "Transferred.")
    assert handoff_command({"goto": 3}) is None


# ----------------------------------------------------------------------------- which span is the agent


def test_a_workflow_wrapper_is_not_the_agent() -> None:
    # the Agents SDK under OpenInference: an AGENT span for the workflow above the real agent
    spans = [
        oi("f0", None, "Agent workflow", 0, 100, "AGENT"),
        oi("f1", "f0", "Agent workflow", 1, 99, "CHAIN"),
        oi("a1", "f1", "support", 2, 98, "AGENT", **{"agent.name": "support"}),
        chat("c1", "a1", 3, [{"id": "k1", "name": "lookup", "arguments": {"id": "A1"}}]),
        oi(
            "b1",
            "a1",
            "lookup",
            5,
            6,
            "TOOL",
            **{"tool.name": "lookup", "input.value": '{"id": "A1"}'},
        ),
        chat("c2", "a1", 7, text="done"),
    ]
    [ep] = episodes_from_spans(spans)  # scope="top"
    assert ep.run.agent == "support" and ep.output == "done"
    # one call, not two: the request (with its id) and the execution (without) are merged
    assert [(s.tool, dict(s.args), s.id) for s in ep.trajectory] == [("lookup", {"id": "A1"}, "k1")]


def test_two_nested_agent_spans_of_one_agent_are_one_agent() -> None:
    # OpenLLMetry's LangChain instrumentation: invoke_agent > invoke_agent for one agent; the
    # answer on the outer span as gen_ai.task.output (a callback payload around graph state)
    state = {"outputs": {"messages": [{"type": "ai", "data": {"content": "paid"}}]}, "kwargs": {}}
    spans = [
        agent("a1", None, 0, 100, "support", **{"gen_ai.task.output": json.dumps(state)}),
        agent("a2", "a1", 1, 99, "support"),
        ga("e1", "a2", "execute_task agent", 2, 10, **{"gen_ai.operation.name": "execute_task"}),
        chat("c1", "e1", 3, [{"id": "k1", "name": "lookup", "arguments": {"id": "B2"}}]),
        tool("b1", "a2", 11, "lookup", '{"id": "B2"}', **{"gen_ai.tool.call.id": "k1"}),
        chat("c2", "a2", 13, text="paid"),
    ]
    [ep] = episodes_from_spans(spans)
    assert ep.trajectory.tools == ("lookup",) and ep.output == "paid"
    assert [a["name"] for a in ep.metadata["trace"]["agents"]] == ["support"]  # one agent


def test_graph_turns_marked_as_agents_are_turns_of_the_graph() -> None:
    # LangGraph under OpenInference: each `agent` node is AGENT and owns the LLM span, the tools
    # run beside it in a `tools` node; the graph (a CHAIN) is the agent; no call counted twice
    req = "llm.output_messages.0.message.tool_calls.0.tool_call."
    state = json.dumps({"messages": [{"type": "ai", "data": {"content": "ok"}}]})
    asked = {
        req + "id": "k1",
        req + "function.name": "lookup",
        req + "function.arguments": '{"id": "A1"}',
    }
    spans = [
        oi("f0", None, "support", 0, 100, "CHAIN", **{"output.value": state}),
        oi("a1", "f0", "agent", 1, 10, "AGENT"),
        oi("c1", "a1", "Model", 2, 9, "LLM", **asked),
        oi("f1", "f0", "tools", 11, 20, "CHAIN"),
        oi("b1", "f1", "lookup", 12, 13, "TOOL", **{"tool.name": "lookup", "input.value": "A1"}),
        oi("a2", "f0", "agent", 21, 30, "AGENT"),
        oi("c2", "a2", "Model", 22, 29, "LLM", **{"llm.output_messages.0.message.content": "ok"}),
    ]
    for scope in ("top", "all"):
        [ep] = episodes_from_spans(spans, scope=scope)
        # the bare value "A1" (a single-argument tool) is named from the request
        assert [(s.tool, dict(s.args), s.id) for s in ep.trajectory] == [
            ("lookup", {"id": "A1"}, "k1")
        ]
        assert ep.run.agent == "support" and ep.output == "ok"


# ----------------------------------------------------------------------------- sub-agents, handoffs


def test_time_repairs_parents_that_cannot_be_right() -> None:
    spans = [
        ga("f0", None, "workflow", 0, 100, **{"traceloop.span.kind": "workflow"}),
        agent("a1", "f0", 1, 90, "support"),
        tool("b1", "a1", 10, "notify"),
        ga(
            "b2",
            "a1",
            "notify",
            20,
            60,
            **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "notify"},
        ),
        agent("a2", "f0", 21, 50, "notifier"),  # ran within notify, recorded beside it
        chat("c1", "a2", 70),  # starts after its parent a2 ended: support's last turn
        ga(
            "b3",
            "a1",
            "x",
            80,
            85,
            **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x"},
        ),
        ga("e0", "b3", "task", 81, 84),
        agent("a3", "e0", 81, 84, "inner"),  # an empty invoke_agent span ...
        ga("e1", "e0", "sub-graph", 82, 83),  # ... beside the span that does its work
    ]
    tree = TraceTree(T, spans)
    parent = {
        s.span_id[-2:]: tree.parent[s.span_id].span_id[-2:]
        for s in tree.order
        if tree.parent[s.span_id]
    }
    assert parent["a2"] == "b2" and parent["c1"] == "a1" and parent["e1"] == "a3"
    assert sorted(w for *_, w in tree.repaired) == ["beside_agent", "beside_tool", "late"]
    [ep] = episodes_from_spans(spans, scope="all")
    agents = {a["name"]: a for a in ep.metadata["trace"]["agents"]}
    assert (
        agents["notifier"]["kind"] == "sub_agent"
        and agents["notifier"]["started_by"]["name"] == "notify"
    )
    assert "sub_agent_structure" in ep.metadata["trace"]["not_recorded"]


def test_handoffs_by_span_by_sequence_and_concurrent_peers() -> None:
    handoff = {"gen_ai.operation.name": "handoff", "traceloop.span.kind": "handoff"}
    spans = [
        ga("f0", None, "workflow", 0, 100, **{"traceloop.span.kind": "workflow"}),
        agent("a1", "f0", 1, 20, "support"),
        chat("c1", "a1", 2, [{"id": "k1", "name": "transfer_to_billing", "arguments": {}}]),
        ga("d1", "a1", "support -> unknown.handoff", 5, 6, **handoff),  # names no agent
        agent("a2", "f0", 21, 40, "billing"),
        chat("c2", "a2", 22, text="refunded"),
        agent("a3", "f0", 41, 60, "closer"),  # after billing ended, no handoff span: by sequence
        chat("c3", "a3", 42, text="bye"),
    ]
    [ep] = episodes_from_spans(spans)
    a = {x["name"]: x for x in ep.metadata["trace"]["agents"]}
    assert ep.run.agent == "support" and ep.trajectory.tools == ("transfer_to_billing",)
    assert (a["billing"]["kind"], a["billing"]["started_by"]["call_id"]) == ("handoff", "k1")
    assert (
        a["closer"]["kind"] == "handoff"
        and a["closer"]["parent_agent_span_id"] == a["billing"]["span_id"]
    )
    assert ep.output == "bye"  # the agent that ended the run answers
    assert "handoff_target" in ep.metadata["trace"]["not_recorded"]
    overlapping = [spans[0], agent("a1", "f0", 1, 50, "x"), agent("a2", "f0", 10, 60, "y")]
    [ep2] = episodes_from_spans(overlapping)
    assert [x["kind"] for x in ep2.metadata["trace"]["agents"]] == ["agent", "agent"]  # peers


def test_agents_under_one_harness_trial_are_one_run() -> None:
    # two invoke_agent spans side by side under the harness span of one (task, trial): one run
    spans = [
        ga("f0", None, "task", 0, 100, **{"ek.task_id": "t", "ek.trial": 0}),
        agent("a1", "f0", 1, 20, "support"),
        chat("c1", "a1", 2, [{"id": "k1", "name": "transfer_to_billing", "arguments": {}}]),
        tool("b1", "a1", 5, "transfer_to_billing", "{}", **{"gen_ai.tool.call.id": "k1"}),
        agent("a2", "f0", 21, 40, "billing"),
        chat("c2", "a2", 22, text="done"),
    ]
    [ep] = episodes_from_spans(spans, task_attribute="ek.task_id", trial_attribute="ek.trial")
    assert ep.run.agent == "support" and ep.output == "done"
    assert [x["kind"] for x in ep.metadata["trace"]["agents"]] == ["agent", "handoff"]
    # without a trial attribute they stay two runs (two trials of the task)
    assert len(episodes_from_spans(spans, task_attribute="ek.task_id")) == 2


def test_answer_tools_are_the_output_not_calls() -> None:
    # smolagents answers through its final_answer tool; pydantic-ai through an output tool
    spans = [
        agent("a1", None, 0, 100, "support", final_result='{"order_id": "A1", "status": "paid"}'),
        chat("c1", "a1", 1, [{"id": "k1", "name": "lookup", "arguments": {"order_id": "A1"}}]),
        tool("b1", "a1", 3, "lookup", '{"order_id": "A1"}', **{"gen_ai.tool.call.id": "k1"}),
        chat(
            "c2",
            "a1",
            5,
            [
                {
                    "id": "k2",
                    "name": "final_result",
                    "arguments": {"order_id": "A1", "status": "paid"},
                }
            ],
        ),
    ]
    [ep] = episodes_from_spans(spans)
    assert ep.trajectory.tools == ("lookup",) and ep.output == {"order_id": "A1", "status": "paid"}
    assert ep.metadata["trace"]["answer_calls"][0]["name"] == "final_result"
    # a last call whose arguments are not the answer stays a call
    spans[3] = chat(
        "c2", "a1", 5, [{"id": "k2", "name": "refund", "arguments": {"order_id": "A1"}}]
    )
    [kept] = episodes_from_spans(spans)
    assert kept.trajectory.tools == ("lookup", "refund")


# ----------------------------------------------------------------------------- tokens, not recorded


@pytest.mark.parametrize(
    ("attrs", "expected", "missing"),
    [
        # OpenLLMetry: cache reads under the older spelling, reasoning as llm.usage.*
        ({"gen_ai.usage.input_tokens": 400, "gen_ai.usage.output_tokens": 40,
          "gen_ai.usage.cache_read_input_tokens": 256, "llm.usage.reasoning_tokens": 16},
         (144, 256, 40, 16), []),
        # the latest GenAI conventions
        ({"gen_ai.usage.input_tokens": 400, "gen_ai.usage.output_tokens": 40,
          "gen_ai.usage.cache_read.input_tokens": 256, "gen_ai.usage.reasoning.output_tokens": 16},
         (144, 256, 40, 16), []),
        # a count of 0 is recorded; no cache attribute at all is not: all input priced uncached
        ({"gen_ai.usage.input_tokens": 400, "gen_ai.usage.output_tokens": 40,
          "gen_ai.usage.cache_read.input_tokens": 0},
         (400, 0, 40, 0), ["reasoning_tokens"]),
        ({"gen_ai.usage.input_tokens": 400, "gen_ai.usage.output_tokens": 40},
         (400, 0, 40, 0), ["cached_tokens", "reasoning_tokens"]),
    ],
)  # fmt: skip
def test_token_kinds_under_every_spelling(
    attrs: dict[str, Any], expected: tuple[int, ...], missing: list[str]
) -> None:
    [ep] = episodes_from_spans(
        [chat("c1", None, 0, text="x", **{"gen_ai.request.model": "m", **attrs})]
    )
    c = ep.agent_cost
    # 400 input of which 256 read from the cache: 144 uncached; output 40 includes 16 reasoning
    assert (c.input_tokens, c.cache_read_tokens, c.output_tokens, c.reasoning_tokens) == expected
    assert sorted(k for k in ep.metadata["trace"]["not_recorded"] if "tokens" in k) == missing


def test_openinference_cache_input_detail() -> None:
    span = oi("c1", None, "llm", 0, 1, "LLM", **{
        "llm.model_name": "m", "llm.token_count.prompt": 100, "llm.token_count.completion": 10,
        "llm.token_count.prompt_details.cache_input": 60,
    })  # fmt: skip
    [ep] = episodes_from_spans([span])
    assert (ep.agent_cost.input_tokens, ep.agent_cost.cache_read_tokens) == (40, 60)


# ----------------------------------------------------------------------------- one odd trace


def test_one_odd_trace_never_costs_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(trace: int, **attrs: Any) -> list[Span]:
        t = f"{trace:032x}"
        return [
            Span(t, "f0", None, "task", 0, 10, attrs),
            Span(t, "a1", "f0", "invoke_agent", 1, 9, {"gen_ai.operation.name": "invoke_agent"}),
        ]

    spans = [
        *run(1, **{"ek.task_id": "t", "ek.trial": 0, "ok": True}),
        *run(2, **{"ek.task_id": "t", "ek.trial": 1, "ok": False}),
        *run(3, **{"ek.trial": 2, "ok": True}),  # no task id
        *run(4, **{"ek.task_id": "t", "ek.trial": 1, "ok": True}),  # (t, 1) again
    ]
    reading = read_traces(
        spans, task_attribute="ek.task_id", trial_attribute="ek.trial", success_attribute="ok"
    )
    assert [e.trial for e in reading.episodes] == [0, 1]
    assert [p.trace_id[-1] for p in reading.problems] == ["3", "4"]
    with pytest.warns(TraceWarning, match="2 run"):
        assert (
            len(episodes_from_spans(spans, task_attribute="ek.task_id", trial_attribute="ek.trial"))
            == 2
        )
    p = tmp_path / "t.jsonl"
    write_otlp_json(p, spans)
    opts = [
        "--task-attribute",
        "ek.task_id",
        "--trial-attribute",
        "ek.trial",
        "--success-attribute",
        "ok",
    ]
    assert main(["report", str(p), *opts]) == 0
    out = capsys.readouterr().out
    # 2 runs read (1 success), 2 left out and counted as unscored, each named with its reason
    assert "(1/2, Wilson" in out and "UNSCORED 2 of 4 samples unscored" in out
    assert f"not read: trace {3:032x}" in out and "no attribute 'ek.task_id'" in out
    assert f"not read: trace {4:032x}" in out and "trial 1 was already read" in out


def test_one_unreadable_line_never_costs_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A real stack's file with a truncated line and a non-OTLP object spliced into its middle:
    # both lines are skipped and named (file and line), every other run is read and scored.
    stack = Path(__file__).parent / "data" / "traces" / "stacks" / "openai_v2_genai.otlp.jsonl"
    lines = stack.read_text(encoding="utf-8").splitlines()
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join([*lines[:3], lines[3][:40], '{"x": 1}', *lines[4:]]) + "\n")
    opts = {"task_attribute": "ek.task_id", "trial_attribute": "ek.trial"}
    whole = read_traces(stack, **opts)
    reading = read_traces(p, **opts)
    assert len(reading.episodes) == len(whole.episodes) - 1  # line 4's run is gone, no other
    assert [str(x)[: len(f"skipped: {p}:5")] for x in reading.problems] == [
        f"skipped: {p}:4",
        f"skipped: {p}:5",
    ]
    with pytest.raises(TraceFormatError, match=":4: not JSON"):  # strict when asked directly
        list(read_spans(p))
    args = ["--task-attribute", "ek.task_id", "--trial-attribute", "ek.trial"]
    assert main(["report", str(p), *args, "--success-attribute", "ek.success"]) == 0
    out = capsys.readouterr().out
    assert f"not read: skipped: {p}:4: not JSON" in out
    assert f"not read: skipped: {p}:5: expected OTLP JSON" in out


# ----------------------------------------------------------------------------- scale


@pytest.mark.parametrize("shape", ["chain", "flat"])
def test_chain_and_flat_traces_of_many_runs(shape: str) -> None:
    # 2,000 agent runs in one trace: each under the previous run's step span (a chain 6,000
    # spans deep) or all under one root; grouping is linear (bench/traces.py times it)
    n, spans, parent = (
        2000,
        [Span(T, "f0000", None, "root", 0, 10**9, {"ek.task_id": "x"})],
        "f0000",
    )
    for i in range(n):
        step, run, call = (f"{3 * i + j + 1:x}" for j in range(3))
        spans.append(Span(T, step, parent, "step", 10 * i, 10**9 - i, {}))
        spans.append(agent(run, step, 10 * i + 1, 10 * i + 5, f"a{i}"))
        spans.append(tool(call, run, 10 * i + 2, "f", "{}"))
        parent = step if shape == "chain" else "f0000"
    eps = episodes_from_spans(spans, task_attribute="ek.task_id")
    assert len(eps) == n and [e.trial for e in eps[:3]] == [0, 1, 2]
    assert all(e.trajectory.tools == ("f",) for e in eps)


# ----------------------------------------------------------------------------- untrusted shapes

_SHAPE_KEYS = [
    "gen_ai.operation.name",
    "traceloop.span.kind",
    "gen_ai.agent.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.tool.call.id",
    "gen_ai.handoff.to_agent",
    "gen_ai.task.output",
    "traceloop.entity.output",
    "gen_ai.output.messages",
    "gen_ai.input.messages",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "llm.usage.reasoning_tokens",
    "openinference.span.kind",
    "agent.name",
    "tool.name",
    "tool.parameters",
    "input.value",
    "output.value",
    "llm.input_messages.0.message.role",
    "llm.input_messages.0.message.tool_call_id",
    "llm.input_messages.0.message.content",
    "llm.output_messages.0.message.tool_calls.0.tool_call.id",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "ek.task_id",
    "ek.trial",
]
_SHAPE_VALUES = st.one_of(
    st.sampled_from(
        [
            "invoke_agent", "chat", "execute_tool", "handoff", "workflow", "agent", "tool",
            "AGENT", "LLM", "TOOL", "CHAIN", "tool", "c1", "f", 0, 1, 7,
            '{"args": ["A1"], "kwargs": {}, "sanitize_inputs_outputs": true}',
            '{"args": [], "kwargs": 3}',
            '{"input_str": "{\'a\': (1, {2})}", "tags": []}',
            '{"input_str": "{\'a\': 1, **x}", "inputs": 5}',
            '{"goto": "b", "update": {"messages": [1, {"lc": 1, "kwargs": 2}]}}',
            '{"goto": ["b"], "graph": "__parent__"}',
            '{"messages": [{"type": "ai", "data": 3}, {"role": "assistant", "content": [1]}]}',
            '{"outputs": {"output": {"outputs": {}, "kwargs": 1}, "kwargs": 2}, "kwargs": 3}',
            '[{"role": "tool", "parts": [{"type": "tool_call_response", "id": 1}]}]',
            '[{"role": "assistant", "parts": [{"type": "tool_call", "name": "f", "id": "c1"}]}]',
            '{"x": {"type": "string"}}',
            '{"INVALID_JSON": 3}',
            "tool",
            "user",
        ]
    ),
    st.text(max_size=6),
    st.integers(-3, 2**54),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 7),
            st.one_of(st.none(), st.integers(1, 7)),
            st.tuples(st.integers(0, 20), st.integers(0, 20)),
            st.sampled_from(["s", "handoff to b", "x.run"]),
            st.dictionaries(st.sampled_from(_SHAPE_KEYS), _SHAPE_VALUES, max_size=7),
        ),
        max_size=9,
    )
)
def test_untrusted_framework_shapes_never_crash(items: list[Any]) -> None:
    # parents, times (overlapping, late, inverted) and attributes at random: the reader reads
    # what it can and reports the rest, never another kind of error
    spans = []
    for sid, parent, (start, length), name, attrs in items:
        spans.append(
            Span(
                T,
                f"{sid:02x}",
                None if parent is None else f"{parent:02x}",
                name,
                start,
                start + length,
                attrs,
            )
        )
    for scope in ("top", "all"):
        reading = read_traces(
            spans, scope=scope, task_attribute="ek.task_id", trial_attribute="ek.trial"
        )
        for ep in reading.episodes:
            json.dumps(ep.to_dict(), default=repr)  # the episode is whole
