"""The one call-shape normaliser (issue 16 item 5): every host's native call shape reads the same."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import pytest

from ek.agents.base import Step, Trajectory
from ek.agents.toolcalls import (
    ACCEPTED_CALL_SHAPES,
    MALFORMED_TOOL,
    AnyOf,
    CallShapeError,
    GoldCall,
    ToolCallMetric,
    normalize_call,
    normalize_calls,
)
from ek.agents.toolcalls import normalize_call as exported_call

WANT = Step("lookup", {"id": "A1"})

SHAPES: list[tuple[str, Any]] = [
    ("ek", {"tool": "lookup", "args": {"id": "A1"}}),
    ("inspect", {"id": "c1", "function": "lookup", "arguments": {"id": "A1"}, "type": "function"}),
    (
        "openai",
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"id": "A1"}'},
        },
    ),
    ("anthropic", {"type": "tool_use", "id": "tu1", "name": "lookup", "input": {"id": "A1"}}),
    ("deepeval", {"name": "lookup", "input_parameters": {"id": "A1"}, "output": "paid"}),
    ("ragas", {"name": "lookup", "args": {"id": "A1"}}),
    ("generic", {"name": "lookup", "arguments": {"id": "A1"}}),
    ("generic-json", {"name": "lookup", "arguments": '{"id": "A1"}'}),
    ("bfcl", {"lookup": {"id": "A1"}}),
    ("step", Step("lookup", {"id": "A1"})),
    ("goldcall", GoldCall("lookup", {"id": "A1"})),
    ("obj-inspect", NS(function="lookup", arguments={"id": "A1"})),
    ("obj-deepeval", NS(name="lookup", input_parameters={"id": "A1"}, output=None)),
    ("obj-anthropic", NS(type="tool_use", name="lookup", input={"id": "A1"})),
    ("obj-openai", NS(type="function", function=NS(name="lookup", arguments='{"id": "A1"}'))),
]


@pytest.mark.parametrize(("host", "call"), SHAPES, ids=[h for h, _ in SHAPES])
def test_every_accepted_shape_reads_the_same(host: str, call: Any) -> None:
    s = normalize_call(call)
    assert (s.tool, dict(s.args)) == (WANT.tool, dict(WANT.args))
    # and the metric scores it as the same call, as prediction and as gold
    m = ToolCallMetric()
    assert m([call], [WANT]).value == 1.0
    assert m([WANT], [call]).value == 1.0


def test_real_host_call_classes() -> None:
    for extra in ("deepeval", "inspect_ai", "openai", "ragas"):  # absent in the core-only venv
        pytest.importorskip(extra)
    from deepeval.test_case import ToolCall as DeepEvalToolCall
    from inspect_ai.tool import ToolCall as InspectToolCall
    from openai.types.chat import ChatCompletionMessageToolCall
    from ragas.messages import ToolCall as RagasToolCall

    calls = [
        InspectToolCall(id="c1", function="lookup", arguments={"id": "A1"}),
        DeepEvalToolCall(name="lookup", input_parameters={"id": "A1"}),
        RagasToolCall(name="lookup", args={"id": "A1"}),
        ChatCompletionMessageToolCall(
            id="c1", type="function", function={"name": "lookup", "arguments": '{"id": "A1"}'}
        ),
    ]
    assert normalize_calls(calls) == [WANT] * 4


def test_gold_values_kept_intact() -> None:
    g = GoldCall("f", {"x": AnyOf(1, 2, optional=True)})
    s = normalize_call(g)
    assert s.tool == "f" and s.args["x"] == AnyOf(1, 2, optional=True)
    s = normalize_call({"name": "f", "arguments": {"x": AnyOf(1, 2)}})
    assert s.args["x"] == AnyOf(1, 2)
    step = Step("f", {"x": 1}, observation="ok", id="c9")
    assert normalize_call(step) is step  # a Step keeps its observation and id


def test_no_arguments_forms() -> None:
    for call in (
        {"name": "f"},
        {"name": "f", "id": "c1"},
        {"name": "f", "arguments": None},
        {"name": "f", "arguments": ""},
        {"function": {"name": "f", "arguments": "  "}},
    ):
        assert normalize_call(call) == Step("f"), call


@pytest.mark.parametrize(
    ("call", "match"),
    [
        ({"": {"base": 10}}, "no tool name"),
        ({"name": 5, "args": {}}, "no tool name"),
        ({"name": "", "args": {}}, "no tool name"),
        ({"args": {"x": 1}}, "no tool name"),
        ({"name": "f", "args": [1, 2]}, "args must be a mapping"),
        ({"name": "f", "arguments": "[1, 2]"}, "args must be a mapping"),
        ({"name": "f", "arguments": "{x: 1"}, "not JSON"),
        ({"name": "f", "args": {1: "a"}}, "argument names must be str"),
        ({"name": "f", "parameters": {"x": 1}}, "unknown key"),
        ({"tool": "f", "name": "g", "args": {}}, "ambiguous"),
        ({"name": "f", "args": {"x": 1}, "arguments": {"x": 2}}, "ambiguous"),
        (42, "must be a mapping or an object"),
        ("f(x=1)", "must be a mapping or an object"),
        (NS(name="f"), "no arguments field"),
    ],
)
def test_malformed_raises_listing_the_shapes(call: Any, match: str) -> None:
    with pytest.raises(CallShapeError, match=match) as e:
        normalize_call(call, strict=True)  # gold is read strictly, on request
    # every accepted shape is named in the message
    for shape, _, host in ACCEPTED_CALL_SHAPES:
        assert shape in str(e.value) and host in str(e.value)
    # both a ValueError (the contract) and a TypeError (what non-mapping args raised before)
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)
    # the default (model output, issue 32 item 13): never raises; a Step that no gold
    # matches, with the reason
    s = normalize_call(call)
    assert s.tool == MALFORMED_TOOL and dict(s.args) == {} and s.error
    assert "accepted call shapes" not in s.error
    assert normalize_call(call, strict=False) == s


def test_list_of_calls() -> None:
    assert normalize_calls(({"a": {}}, {"name": "b"})) == [Step("a"), Step("b")]
    assert normalize_calls(Trajectory([WANT])) == [WANT]
    assert normalize_calls([]) == []
    with pytest.raises(CallShapeError, match="a single dict"):
        normalize_calls({"name": "a", "args": {}})  # not one call per key
    with pytest.raises(CallShapeError, match="expected a list of calls"):
        normalize_calls("lookup")
    with pytest.raises(CallShapeError, match="expected a list of calls"):
        normalize_calls(None)
    with pytest.raises(CallShapeError, match="call 1: no tool name"):
        normalize_calls([WANT, {"": {"x": 1}}], strict=True)
    bad = normalize_calls([WANT, {"": {"x": 1}}])  # the default: model output, never raises
    assert [s.tool for s in bad] == ["lookup", MALFORMED_TOOL]


def test_exported_from_the_package() -> None:
    assert exported_call is normalize_call


# --------------------------------------------------------------------------- real hosts, offline
# Issue 16 items 4 and 5 end to end: a malformed predicted call is scored (not an unscored
# sample that drops out of the mean), and gold written in any host's shape is read whole.

GOLD = [Step("lookup", {"id": "A1"}), Step("refund", {"id": "A1"})]


def _quiet_deepeval(cases: list[Any], metrics: list[Any]) -> Any:
    import contextlib
    import io

    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig

    with contextlib.redirect_stdout(io.StringIO()):
        return evaluate(
            cases,
            metrics,
            async_config=AsyncConfig(run_async=False),
            display_config=DisplayConfig(show_indicator=False, print_results=False),
        )


def test_deepeval_evaluate_scores_a_malformed_call(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("deepeval")
    from deepeval.test_case import LLMTestCase, ToolCall
    from ek.adapters.deepeval import EkMetric

    monkeypatch.chdir(tmp_path)  # DeepEval must write nothing (DEEPEVAL_FILE_SYSTEM=READ_ONLY)
    expected = [ToolCall(name=s.tool, input_parameters=dict(s.args)) for s in GOLD]
    good = LLMTestCase(
        input="refund A1",
        actual_output="ok",
        tools_called=expected,
        expected_tools=expected,
        name="good",
    )
    bad = LLMTestCase(
        input="refund A1",
        actual_output="ok",
        # a real model output: an empty tool name (what `[{"": {"base": 10}}]` becomes)
        tools_called=[expected[0], ToolCall(name="", input_parameters={"base": 10})],
        expected_tools=expected,
        name="bad",
    )
    m = EkMetric(ToolCallMetric(), threshold=0.9)
    res = _quiet_deepeval([good, bad], [m])
    got = {t.name: t.metrics_data[0] for t in res.test_results}
    assert got["good"].score == 1.0 and got["good"].success is True
    # bad: lookup matched (TP 2); refund missing (FN 2); the malformed call extra (FP 1)
    # -> F1 = 2*2 / (2*2 + 1 + 2) = 4/7; scored and failed, not an error
    assert got["bad"].score == pytest.approx(4 / 7) and got["bad"].success is False
    assert got["bad"].error is None and "malformed call" in got["bad"].reason


def test_deepeval_conversational_expected_tools_with_arguments(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("deepeval")
    from deepeval.test_case import ConversationalTestCase, ToolCall, Turn
    from ek.adapters.deepeval import EkConversationalMetric

    monkeypatch.chdir(tmp_path)
    called = [ToolCall(name=s.tool, input_parameters=dict(s.args)) for s in GOLD]
    shapes = {
        "name_arguments": [{"name": s.tool, "arguments": dict(s.args)} for s in GOLD],
        "function_arguments": [{"function": s.tool, "arguments": dict(s.args)} for s in GOLD],
        "deepeval": [{"name": s.tool, "input_parameters": dict(s.args)} for s in GOLD],
    }
    cases = [
        ConversationalTestCase(
            name=shape,
            turns=[
                Turn(role="user", content="refund A1"),
                Turn(role="assistant", content="done", tools_called=called),
            ],
            metadata={"expected_tools": expected},
        )
        for shape, expected in shapes.items()
    ]
    m = EkConversationalMetric(ToolCallMetric(), threshold=0.9)
    res = _quiet_deepeval(cases, [m])
    # a perfect run scores 1.0 in every shape (the arguments used to be dropped: 0.571)
    assert {t.name: t.metrics_data[0].score for t in res.test_results} == dict.fromkeys(shapes, 1.0)


def test_ragas_evaluate_scores_a_malformed_call() -> None:
    pytest.importorskip("ragas")
    from ek.adapters.ragas import ek_ragas_metric
    from ragas import EvaluationDataset, evaluate
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall

    ref = [ToolCall(name=s.tool, args=dict(s.args)) for s in GOLD]

    def sample(calls: list[ToolCall]) -> MultiTurnSample:
        return MultiTurnSample(
            user_input=[HumanMessage(content="refund A1"), AIMessage(content="", tool_calls=calls)],
            reference_tool_calls=ref,
        )

    samples = [sample(ref), sample([ref[0], ToolCall(name="", args={"base": 10})])]
    res = evaluate(
        EvaluationDataset(samples=samples),
        metrics=[ek_ragas_metric(ToolCallMetric())],
        show_progress=False,
    )
    # as in the DeepEval case: 1.0, then 4/7 (scored, not NaN)
    assert res["ek_tool_calls"] == pytest.approx([1.0, 4 / 7])
