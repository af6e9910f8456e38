"""ek.agents.bridge: chat transcripts and Inspect samples -> Episodes, with no framework import."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import Cost, Step
from ek.agents.bridge import (
    cost_from_inspect_events,
    cost_from_usage,
    from_inspect_sample,
    provenance_from_inspect_header,
    success_from_inspect_scores,
    trajectory_from_messages,
)
from ek.agents.toolcalls import MALFORMED_TOOL, ToolCallMetric

# --------------------------------------------------------------------------- OpenAI


def test_openai_pairs_by_id_out_of_order_and_flags_malformed_json() -> None:
    msgs = [
        {"role": "system", "content": "be nice"},
        {"role": "user", "content": "refund A1"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"id": "A1"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "refund", "arguments": "{bad"},
                },
                {
                    "id": "c3",
                    "type": "function",
                    "function": {"name": "note", "arguments": "[1, 2]"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "noted"},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "paid"}'},
        {"role": "assistant", "content": "done"},
    ]
    t = trajectory_from_messages(msgs)
    # malformed calls are model output: a MALFORMED_TOOL step saying why (scored as wrong)
    assert t.tools == ("lookup", MALFORMED_TOOL, MALFORMED_TOOL)
    assert (
        t[0].args == {"id": "A1"}
        and t[0].observation == '{"status": "paid"}'
        and t[0].error is None
    )
    assert t[0].id == "c1"
    # c2 never answered; its arguments were not JSON: recorded, not raised
    assert t[1].observation is None and t[1].args == {}
    assert t[1].error is not None and t[1].error.startswith("call 'refund': arguments string is")
    assert "{bad" in t[1].error
    # a JSON array is valid JSON but not an argument object
    assert t[2].error is not None and "JSON object" in t[2].error and t[2].observation == "noted"


def test_openai_legacy_function_call_pairs_by_position() -> None:
    msgs = [
        {"role": "assistant", "function_call": {"name": "f", "arguments": '{"x": 1}'}},
        {"role": "function", "name": "f", "content": "ok"},
    ]
    t = trajectory_from_messages(msgs)
    assert [(s.tool, dict(s.args), s.observation, s.id) for s in t] == [("f", {"x": 1}, "ok", None)]


def test_results_without_ids_pair_by_position_same_name_first() -> None:
    msgs = [
        {"role": "assistant", "tool_calls": [{"name": "a", "args": {}}, {"name": "b", "args": {}}]},
        {"role": "tool", "name": "b", "content": "B"},  # no id: the open call named b
        {"role": "tool", "content": "A"},  # no id, no name: the first open call
        {"role": "tool", "content": "orphan"},  # nobody waiting: not a step
    ]
    t = trajectory_from_messages(msgs)
    assert [(s.tool, s.observation) for s in t] == [("a", "A"), ("b", "B")]


# --------------------------------------------------------------------------- Anthropic


def test_anthropic_blocks_dicts_and_sdk_like_objects() -> None:
    msgs = [
        {"role": "user", "content": "weather in Oslo and Rome"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "checking"},
                {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Oslo"}},
                NS(type="tool_use", id="t2", name="weather", input={"city": "Rome"}),
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": [{"type": "text", "text": "sunny"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "is_error": True,
                    "content": "quota exceeded",
                },
            ],
        },
    ]
    t = trajectory_from_messages(msgs)
    assert [(s.tool, s.args["city"], s.observation, s.error) for s in t] == [
        ("weather", "Oslo", None, "quota exceeded"),
        ("weather", "Rome", "sunny", None),
    ]


# --------------------------------------------------------------------------- Inspect shapes


def test_inspect_log_dict_shapes() -> None:
    msgs = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "x1",
                    "function": "lookup",
                    "arguments": {"key": "berlin"},
                    "type": "function",
                },
                {
                    "id": "x2",
                    "function": "lookup",
                    "arguments": {},
                    "parse_error": "Expecting value",
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "x1",
            "function": "lookup",
            "content": "",
            "error": {"type": "unknown", "message": "unknown key: berlin"},
        },
        {
            "role": "tool",
            "tool_call_id": "x2",
            "function": "lookup",
            "content": [{"type": "text", "text": "?"}],
        },
    ]
    t = trajectory_from_messages(msgs)
    assert t[0].error == "unknown key: berlin" and t[0].observation is None
    assert t[1].error == "call 'lookup': malformed arguments: Expecting value"
    assert t[1].tool == MALFORMED_TOOL and t[1].observation == "?"


def test_inspect_chat_message_objects() -> None:
    model = pytest.importorskip("inspect_ai.model")
    tool_mod = pytest.importorskip("inspect_ai.tool")
    msgs = [
        model.ChatMessageUser(content="refund A1"),
        model.ChatMessageAssistant(
            content="",
            tool_calls=[
                tool_mod.ToolCall(id="i1", function="refund", arguments={"order_id": "A1"})
            ],
        ),
        model.ChatMessageTool(
            content="",
            tool_call_id="i1",
            function="refund",
            error=tool_mod.ToolCallError("parsing", "amount is required"),
        ),
    ]
    t = trajectory_from_messages(msgs)
    assert [(s.tool, dict(s.args), s.error) for s in t] == [
        ("refund", {"order_id": "A1"}, "amount is required")
    ]


# --------------------------------------------------------------------------- LangChain


def test_langchain_shapes_objects_and_dicts() -> None:
    ai = NS(
        type="ai",
        content=[{"type": "tool_use", "id": "l1", "name": "search", "input": {"q": "x"}}],
        tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "l1", "type": "tool_call"}],
        invalid_tool_calls=[{"name": "calc", "args": "{1+", "id": "l2", "error": "bad json"}],
    )
    tool_ok = NS(type="tool", tool_call_id="l1", content="found", status="success")
    tool_err = {
        "type": "tool",
        "data": {"tool_call_id": "l2", "content": "boom", "status": "error"},
    }
    t = trajectory_from_messages([NS(type="human", content="hi"), ai, tool_ok, tool_err])
    # the tool_use block duplicates tool_calls[0] (same id): counted once
    assert t.tools == ("search", MALFORMED_TOOL)
    assert t[0].observation == "found" and t[0].error is None
    assert t[1].error is not None
    assert t[1].error.startswith("call 'calc': malformed arguments: bad json")


def test_langchain_openai_calls_in_additional_kwargs() -> None:
    ai = NS(
        type="ai",
        content="",
        tool_calls=[],
        additional_kwargs={
            "tool_calls": [{"id": "o1", "function": {"name": "f", "arguments": '{"a": 2}'}}]
        },
    )
    t = trajectory_from_messages([ai, NS(type="tool", tool_call_id="o1", content="r")])
    assert [(s.tool, dict(s.args), s.observation) for s in t] == [("f", {"a": 2}, "r")]


@pytest.mark.parametrize(
    "call",
    [
        {"id": "c1", "type": "function", "function": {"name": "", "arguments": '{"base": 10}'}},
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{x"}},
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "[1]"}},
        {"id": "c1", "function": "f", "arguments": {}, "parse_error": "Expecting value"},
    ],
)
def test_malformed_call_scores_the_same_on_every_path(call: dict[str, object]) -> None:
    # Issue 16: one number whatever the path. The message bridge and the raw call read by the
    # metric agree: a wrong (extra) call of weight 1 -> FP 1, FN 2 (gold f(x=1) missing), F1 0.
    gold = [Step("f", {"x": 1})]
    m = ToolCallMetric()
    via_messages = m(trajectory_from_messages([{"role": "assistant", "tool_calls": [call]}]), gold)
    assert (via_messages.value, via_messages.detail["fp"], via_messages.detail["fn"]) == (0, 1, 2)
    assert via_messages.detail["valid"] is False
    assert via_messages.detail["extra"][0]["reason"]
    if "parse_error" not in call:  # (a raw dict does not say its arguments failed to parse)
        direct = m([call], gold)
        assert (direct.value, dict(direct.detail)["fp"]) == (via_messages.value, 1.0)


def test_bad_input_type() -> None:
    with pytest.raises(TypeError, match="sequence of messages"):
        trajectory_from_messages("not messages")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40), st.one_of(st.none(), st.text(max_size=10)))
def test_arbitrary_argument_text_never_crashes(raw: str, cid: str | None) -> None:
    msgs = [
        {
            "role": "assistant",
            "tool_calls": [{"id": cid, "function": {"name": "f", "arguments": raw}}],
        }
    ]
    [step] = trajectory_from_messages(msgs)
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        assert step.error is None and dict(step.args) == parsed
    else:
        assert step.error is not None and dict(step.args) == {} and step.tool == MALFORMED_TOOL


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans()), max_size=6))
def test_openai_round_trip_of_a_trajectory(calls: list[tuple[str, bool]]) -> None:
    # build the OpenAI transcript of a known trajectory; converting it back gives the same steps
    steps = [
        Step(
            t,
            {"i": i},
            observation=None if err else f"r{i}",
            error="e" if err else None,
            id=f"id{i}",
        )
        for i, (t, err) in enumerate(calls)
    ]
    msgs: list[dict[str, object]] = []
    for s in steps:
        msgs.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": s.id,
                        "function": {"name": s.tool, "arguments": json.dumps(dict(s.args))},
                    }
                ],
            }
        )
    for s in reversed(steps):  # results in reverse order: pairing is by id
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": s.id,
                "content": s.error or s.observation,
                "status": "error" if s.error else "success",
            }
        )
    assert list(trajectory_from_messages(msgs)) == steps


# --------------------------------------------------------------------------- cost


def test_cost_from_usage_token_kinds() -> None:
    # Inspect: input excludes cache; output includes reasoning; total_cost -> dollars
    c = cost_from_usage(
        {
            "input_tokens": 100,
            "output_tokens": 10,
            "input_tokens_cache_read": 20,
            "input_tokens_cache_write": 7,
            "reasoning_tokens": 5,
            "total_cost": 0.0125,
        },
        "m",
    )
    assert (c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens) == (
        100,
        20,
        7,
        10,
    )
    assert c.reasoning_tokens == 5 and c.dollars == 0.0125 and c.total_tokens == 137
    # more reasoning than output: counted apart by the source, so added to output (10 + 30)
    c = cost_from_usage({"output_tokens": 10, "reasoning_tokens": 30, "total_cost": None})
    assert (c.output_tokens, c.reasoning_tokens, c.dollars) == (40, 30, None)


def test_cost_from_events_roles_and_scorer_spans() -> None:
    u = {"input_tokens": 100, "output_tokens": 10}
    events = [
        {"event": "span_begin", "id": "solv", "type": "solvers", "parent_id": None},
        {"event": "model", "model": "m", "role": None, "span_id": "solv", "output": {"usage": u}},
        {"event": "model", "model": "m", "role": None, "span_id": "solv", "output": {"usage": u}},
        {"event": "model", "model": "u", "role": "user", "span_id": "solv", "output": {"usage": u}},
        {
            "event": "model",
            "model": "m",
            "span_id": "solv",
            "output": {"usage": None},
        },  # failed call
        {"event": "span_begin", "id": "sc", "type": "scorers", "parent_id": None},
        {"event": "span_begin", "id": "one", "type": "scorer", "parent_id": "sc"},
        {"event": "model", "model": "g", "role": None, "span_id": "one", "output": {"usage": u}},
        {"event": "tool", "function": "x"},
    ]
    got = {
        (c.model, c.role): (c.input_tokens, c.output_tokens)
        for c in cost_from_inspect_events(events)
    }
    # two agent calls summed; the user-simulator role and the grader inside a scorer span apart
    assert got == {
        ("m", "agent"): (200, 20),
        ("u", "simulator"): (100, 10),
        ("g", "judge"): (100, 10),
    }


# --------------------------------------------------------------------------- samples and logs


def test_success_from_scores() -> None:
    scores = {
        "match": {"value": "C"},
        "dict": {"value": {"success": 0.0, "x": 1}},
        "nan": {"value": float("nan")},
        "ek": {"value": {}, "metadata": {"ek": {"success": True}}},
    }
    assert success_from_inspect_scores(scores) is True  # the ek verdict
    assert success_from_inspect_scores(scores, "match") is True
    assert success_from_inspect_scores(scores, "dict") is False
    assert success_from_inspect_scores(scores, "dict:x") is True
    assert success_from_inspect_scores(scores, "nan") is None  # unscored is not a failure
    assert success_from_inspect_scores(scores, "absent") is None
    assert success_from_inspect_scores({"p": {"value": "P"}}, "p") is False  # partial < 1.0


def test_from_inspect_sample_dict() -> None:
    sample = {
        "id": 3,
        "epoch": 2,
        "input": [{"role": "user", "content": "refund A1"}],
        "target": ["refunded"],
        "metadata": {"slice": "refunds"},
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": "a", "function": "refund", "arguments": {"order_id": "A1"}}],
            },
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
        ],
        "output": {"completion": "refunded"},
        "store": {"db": {"A1": "refunded"}},
        "events": [
            {
                "event": "model",
                "model": "m",
                "output": {"usage": {"input_tokens": 5, "output_tokens": 1}},
            },
            {"event": "sample_limit", "type": "message", "message": "message limit 10 reached"},
        ],
        "scores": {"match": {"value": "C"}},
        "total_time": 1.5,
        "uuid": "u1",
    }
    ep = from_inspect_sample(sample, success_from="match")
    assert (ep.task_id, ep.trial, ep.output, ep.input) == ("3", 1, "refunded", "refund A1")
    assert (
        ep.final_state == {"db": {"A1": "refunded"}} and ep.success is True and ep.duration == 1.5
    )
    assert ep.agent_cost == Cost(input_tokens=5, output_tokens=1, model="m")
    # a hit limit is an agent error: a transcript that merely contains the answer is not credited
    assert ep.error == "message limit 10 reached"
    assert from_inspect_sample(sample, limit_is_error=False).error is None
    assert ep.metadata["inspect"] == {
        "epoch": 2,
        "target": "refunded",
        "sample_metadata": {"slice": "refunds"},
        "uuid": "u1",
    }
    with pytest.raises(ValueError, match="with an id"):
        from_inspect_sample({"messages": []})


def test_from_inspect_sample_falls_back_to_model_usage_and_stamps_ek_dollars() -> None:
    sample = {
        "id": "s",
        "epoch": 1,
        "messages": [],
        "events": [],
        "model_usage": {"m": {"input_tokens": 10, "output_tokens": 2}},
        "scores": {"tc": {"value": {}, "metadata": {"ek": {"success": False, "dollars": 0.5}}}},
    }
    ep = from_inspect_sample(sample)
    assert ep.success is False and ep.agent_cost.input_tokens == 10 and ep.agent_cost.dollars == 0.5


def test_provenance_from_header() -> None:
    h = NS(
        status="success",
        eval=NS(
            task="t",
            task_version="v3",
            model="mockllm/model",
            solver=None,
            packages={"inspect_ai": "0.3.285"},
            eval_id="e",
            run_id="r",
            task_file=None,
            config=NS(seed=7),
        ),
        plan=NS(steps=[NS(solver="system_message"), NS(solver="react")]),
    )
    p = provenance_from_inspect_header(h, location="x.eval")
    assert (p.agent, p.model, p.scaffold, p.suite_version, p.seed) == (
        "system_message+react",
        "mockllm/model",
        "inspect_ai",
        "t@v3",
        7,
    )
    assert p.extra["log"] == "x.eval" and p.extra["inspect_version"] == "0.3.285"


def test_core_bridge_imports_no_framework() -> None:
    code = (
        "import sys; import ek.agents.bridge, ek.agents; "
        "bad = [m for m in ('inspect_ai', 'langchain_core', 'openai', 'anthropic', 'deepeval', 'ragas') "
        "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_episodes_from_inspect_log_without_inspect_names_the_extra(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "x.eval"
    f.write_bytes(b"")
    code = (
        "import sys; sys.modules['inspect_ai'] = None; sys.modules['inspect_ai.log'] = None\n"
        "from ek.agents.bridge import episodes_from_inspect_log\n"
        f"try:\n    next(episodes_from_inspect_log({str(f)!r}))\n"
        "except ImportError as e:\n    print(e); sys.exit(0)\nsys.exit(1)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "pip install ek-agents[inspect]" in r.stdout, r.stdout + r.stderr


def test_missing_log_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ek.agents.bridge import episodes_from_inspect_log

    with pytest.raises(FileNotFoundError, match="no Inspect log"):
        next(episodes_from_inspect_log(tmp_path / "nope.eval"))
    assert math.isnan(float("nan"))


# --------------------------------------------------------------------------- the package

# Every public name ek.agents.bridge exported when it was one module (issue 17), by its new home.
_BRIDGE_NAMES = {
    "trajectory_from_messages": "messages",
    "cost_from_usage": "messages",
    "DEFAULT_ROLES": "inspect_log",
    "EK_METADATA_KEY": "inspect_log",
    "INSPECT_EXTRA_HINT": "inspect_log",
    "AmbiguousSuccessError": "inspect_log",
    "InspectSampleRecord": "inspect_log",
    "cost_from_inspect_events": "inspect_log",
    "ek_scores_from_inspect_scores": "inspect_log",
    "episodes_from_inspect_log": "inspect_log",
    "from_inspect_sample": "inspect_log",
    "inspect_sample_record": "inspect_log",
    "inspect_verdict": "inspect_log",
    "provenance_from_inspect_header": "inspect_log",
    "read_inspect_log": "inspect_log",
    "success_from_inspect_scores": "inspect_log",
    "from_deepeval_test_case": "deepeval",
    "from_deepeval_trace": "deepeval",
    "from_ragas_sample": "ragas",
}


def test_bridge_package_exports_every_public_name() -> None:
    import importlib
    import importlib.util

    import ek.agents.bridge as bridge

    assert sorted(bridge.__all__) == sorted(_BRIDGE_NAMES)
    for name, module in _BRIDGE_NAMES.items():
        home = importlib.import_module(f"ek.agents.bridge._{module}")
        assert name in home.__all__, (name, module)
        assert getattr(bridge, name) is getattr(home, name), name
    for gone in ("ek.agents._bridge_deepeval", "ek.agents._bridge_ragas"):
        assert importlib.util.find_spec(gone) is None, gone


def _private_imports(path: Path) -> list[str]:
    """``from ek... import _x`` lines (absolute imports of a private name; dunders allowed)."""
    import ast

    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
            continue
        if node.module == "ek" or node.module.startswith("ek."):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    out.append(f"{path.name}:{node.lineno}: from {node.module} import {a.name}")
    return out


def test_bridges_and_adapters_import_only_public_names() -> None:
    root = Path(__file__).resolve().parents[1]
    files = [
        *sorted((root / "ek" / "agents" / "bridge").glob("*.py")),
        *sorted((root / "adapters").rglob("*.py")),
    ]
    assert len(files) > 10
    bad = [line for f in files for line in _private_imports(f)]
    assert bad == []
    # and no adapter reaches into a private ek.agents module
    for f in sorted((root / "adapters").rglob("*.py")):
        text = f.read_text(encoding="utf-8")
        assert "ek.agents._" not in text, f


def test_bridges_never_invent_calls() -> None:
    # issue 18: a string of tool calls used to give one "<unnamed>" step per character, and a
    # single call dict one step per key
    steps = trajectory_from_messages([{"role": "assistant", "tool_calls": "abc"}])
    assert [(s.tool, s.error) for s in steps] == [
        (MALFORMED_TOOL, "tool_calls must be a list of calls, got str: 'abc'")
    ]
    one = {"id": "1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    steps = trajectory_from_messages([{"role": "assistant", "tool_calls": one}])
    assert [(s.tool, dict(s.args)) for s in steps] == [("f", {"x": 1})]
