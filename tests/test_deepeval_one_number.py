"""Issue 16 through the real DeepEval (4.3.1), offline: one number whatever the path.

- a conversational case's ``metadata["expected_tools"]`` in any host's call shape (``{"name",
  "arguments"}``, ``{"function", "arguments"}``, ...) is read with its arguments: a perfect run
  scores 1.0 through ``evaluate()`` and ``assert_test()`` (it used to drop the arguments and
  score 0.571, or raise for ``{"function", ...}``);
- an unknown call shape is refused with the list of accepted ones;
- a test case of the wrong kind is refused naming the type given and the class to use;
- every per-case value through ``evaluate()`` equals ek's direct value to 1e-12.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest

pytest.importorskip("deepeval")

from deepeval import assert_test, evaluate
from deepeval.evaluate.configs import DisplayConfig, ErrorConfig
from deepeval.test_case import ConversationalTestCase, LLMTestCase, ToolCall, Turn
from ek.adapters.deepeval import (
    EkConversationalMetric,
    EkMetric,
    from_deepeval_test_case,
    to_deepeval_test_case,
)
from test_deepeval_adapter import by_name, no_outbound, quiet_evaluate  # noqa: F401 (fixture)

from ek.adapters._shell import EkAdapterError
from ek.agents.base import Cost, Episode, Step, TaskSpec
from ek.agents.cost import per_million
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

# The run: look the order up, then refund it. Three arguments in all (1 + 2).
CALLED = [
    ToolCall(name="lookup", input_parameters={"order": "A1"}, output={"status": "paid"}),
    ToolCall(name="refund", input_parameters={"order": "A1", "amount": 20}, output="ok"),
]
GOLD = [Step("lookup", {"order": "A1"}), Step("refund", {"order": "A1", "amount": 20})]

#: The same two expected calls in every host's shape.
SHAPES: dict[str, list[dict[str, Any]]] = {
    "name/arguments": [
        {"name": "lookup", "arguments": {"order": "A1"}},
        {"name": "refund", "arguments": {"order": "A1", "amount": 20}},
    ],
    "function/arguments (Inspect)": [
        {"function": "lookup", "arguments": {"order": "A1"}},
        {"function": "refund", "arguments": {"order": "A1", "amount": 20}},
    ],
    "name/input_parameters (DeepEval)": [c.model_dump() for c in CALLED],
    "name/args (Ragas)": [
        {"name": "lookup", "args": {"order": "A1"}},
        {"name": "refund", "args": {"order": "A1", "amount": 20}},
    ],
    "tool/args (ek)": [s.to_dict() for s in GOLD],
    "name/input (Anthropic)": [
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"order": "A1"}},
        {"type": "tool_use", "id": "t2", "name": "refund", "input": {"order": "A1", "amount": 20}},
    ],
    "function.name + JSON (OpenAI)": [
        {"type": "function", "function": {"name": "lookup", "arguments": '{"order": "A1"}'}},
        {
            "type": "function",
            "function": {"name": "refund", "arguments": '{"order": "A1", "amount": 20}'},
        },
    ],
    "{name: args} (BFCL)": [{"lookup": {"order": "A1"}}, {"refund": {"order": "A1", "amount": 20}}],
}


def conversation(expected_tools: Any, name: str = "refund") -> ConversationalTestCase:
    return ConversationalTestCase(
        name=name,
        turns=[
            Turn(role="user", content="refund order A1"),
            Turn(role="assistant", content="", tools_called=CALLED),
            Turn(role="assistant", content="refunded"),
        ],
        expected_outcome="refunded",
        metadata={"task_id": name, "expected_tools": expected_tools},
    )


# --------------------------------------------------------------------------- gold-call shapes


@pytest.mark.parametrize("run_async", [True, False])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_conversational_expected_tools_in_any_shape_score_a_perfect_run_1(
    shape: str, run_async: bool
) -> None:
    tc = EkConversationalMetric(ToolCallMetric(), threshold=1.0)
    tr = EkConversationalMetric(TrajectoryMetric("exact"), threshold=1.0)
    res = by_name(quiet_evaluate([conversation(SHAPES[shape])], [tc, tr], run_async=run_async))
    row = res["refund"]
    # Every call and argument right: F1 1.0, exact trajectory cost 0. (Before the fix the gold
    # arguments were dropped: TP 2 (the tools), FP 3 (every called argument "unexpected") ->
    # F1 = 2*2 / (2*2 + 3) = 0.571.)
    assert (row[tc.__name__].score, row[tr.__name__].score) == (1.0, 1.0), shape
    assert row[tc.__name__].success is True and row[tr.__name__].success is True


@pytest.mark.parametrize("shape", ["name/arguments", "function/arguments (Inspect)"])
def test_assert_test_passes_a_perfect_conversational_run(shape: str) -> None:
    assert_test(
        conversation(SHAPES[shape]), [EkConversationalMetric(ToolCallMetric(), threshold=1.0)]
    )
    assert_test(
        conversation(SHAPES[shape]),
        [EkConversationalMetric(TrajectoryMetric("exact"), threshold=1.0)],
    )


def test_assert_test_fails_on_a_wrong_argument_given_as_arguments() -> None:
    # The arguments are read, so a wrong one is seen: gold amount 25, called 20.
    # Unit costs: TP = 2 tools + 2 right arguments = 4, the wrong amount costs 1 as FP and 1 as
    # FN -> F1 = 2*4 / (2*4 + 1 + 1) = 0.8.
    wrong = [
        {"name": "lookup", "arguments": {"order": "A1"}},
        {"name": "refund", "arguments": {"order": "A1", "amount": 25}},
    ]
    m = EkConversationalMetric(ToolCallMetric(), threshold=1.0)
    assert m.measure(conversation(wrong)) == pytest.approx(0.8)
    with pytest.raises(AssertionError, match="score: 0.8"):
        assert_test(conversation(wrong), [EkConversationalMetric(ToolCallMetric(), threshold=1.0)])


def test_llm_test_case_expected_tools_with_arguments_is_1() -> None:
    case = LLMTestCase(
        input="refund order A1",
        actual_output="refunded",
        tools_called=CALLED,
        expected_tools=[ToolCall(name=s.tool, input_parameters=dict(s.args)) for s in GOLD],
        name="llm",
    )
    m = EkMetric(ToolCallMetric(), threshold=1.0)
    assert by_name(quiet_evaluate([case], [m]))["llm"][m.__name__].score == 1.0
    assert_test(case, [EkMetric(ToolCallMetric(), threshold=1.0)])


def test_unknown_call_shape_is_refused_listing_the_accepted_ones() -> None:
    bad = conversation([{"tool_name": "lookup", "params": {"order": "A1"}}])
    m = EkConversationalMetric(ToolCallMetric(), threshold=1.0)
    with pytest.raises(EkAdapterError, match="accepted call shapes") as e:
        m.measure(bad)
    assert "function/arguments" in str(e.value) and "name/input_parameters" in str(e.value)
    with pytest.raises(EkAdapterError, match="accepted call shapes"):
        quiet_evaluate([bad], [EkConversationalMetric(ToolCallMetric(), threshold=1.0)])
    # With DeepEval's ignore_errors the case fails with the same message, it never scores.
    with contextlib.redirect_stdout(io.StringIO()):
        res = evaluate(
            [bad],
            [EkConversationalMetric(ToolCallMetric(), threshold=1.0)],
            display_config=DisplayConfig(show_indicator=False, print_results=False),
            error_config=ErrorConfig(ignore_errors=True),
        )
    md = res.test_results[0].metrics_data[0]
    assert md.score is None and md.success is False and "accepted call shapes" in md.error


# --------------------------------------------------------------------------- wrong test-case kind


def test_ek_metric_given_a_conversational_case_names_the_class_to_use() -> None:
    m = EkMetric(ToolCallMetric(), threshold=1.0)
    with pytest.raises(TypeError) as e:
        m.measure(conversation(SHAPES["name/arguments"]))
    msg = str(e.value)
    assert "EkMetric scores an LLMTestCase, got ConversationalTestCase" in msg
    assert "use EkConversationalMetric" in msg and "gold_calls" not in msg
    assert m.success is False and m.error == msg


def test_conversational_metric_given_an_llm_case_names_the_class_to_use() -> None:
    m = EkConversationalMetric(ToolCallMetric(), threshold=1.0)
    case = LLMTestCase(input="q", actual_output="a", tools_called=CALLED)
    with pytest.raises(
        TypeError, match=r"scores a ConversationalTestCase, got LLMTestCase: use EkMetric"
    ):
        m.measure(case)


def test_wrong_kind_is_refused_on_the_async_path_too() -> None:
    import asyncio

    m = EkMetric(ToolCallMetric(), threshold=1.0)
    with pytest.raises(TypeError, match="use EkConversationalMetric"):
        asyncio.run(m.a_measure(conversation(SHAPES["name/arguments"])))


# --------------------------------------------------------------------------- one number


def _episodes() -> list[tuple[Episode, TaskSpec]]:
    A1, A2, B1, C1 = Step("A", {"x": 1}), Step("A", {"x": 2}), Step("B", {"y": "q"}), Step("C", {})
    runs = {
        "dup": ([A1, A1, B1], [A1, B1], "ok", 1200),
        "extra": ([A1, B1, C1], [A1, B1], "ok", 800),
        "reorder": ([B1, A1], [A1, B1], "no", 3000),
        "wrong_arg": ([A2, B1], [A1, B1], "ok", 50),
        "empty": ([], [], "ok", 0),
    }
    return [
        (
            Episode(k, pred, input=f"task {k}", output=out, cost=Cost(input_tokens=tok)),
            TaskSpec(k, gold="ok", gold_calls=gold),
        )
        for k, (pred, gold, out, tok) in runs.items()
    ]


@pytest.mark.parametrize("conversational", [False, True])
def test_every_value_through_evaluate_equals_the_direct_value(conversational: bool) -> None:
    ek_metrics = [
        ToolCallMetric(),
        TrajectoryMetric("exact"),
        TrajectoryMetric("in_order"),
        TrajectoryMetric("any_order"),
        TaskSuccessMetric(),
        CostPerSuccessMetric(price=per_million(1.0, 2.0)),
    ]
    shell = EkConversationalMetric if conversational else EkMetric
    wrapped = [shell(m, threshold=0.5) for m in ek_metrics]
    assert len({w.__name__ for w in wrapped}) == len(wrapped)  # one name per configuration
    pairs = _episodes()
    cases = [to_deepeval_test_case(ep, g, conversational=conversational) for ep, g in pairs]
    res = by_name(quiet_evaluate(cases, wrapped))
    for (ep, gold), case in zip(pairs, cases):
        back, _ = from_deepeval_test_case(case)
        for m, w in zip(ek_metrics, wrapped):
            want = m(ep, gold).value
            got = res[ep.task_id][w.__name__].score
            assert got == pytest.approx(want, abs=1e-12, rel=0), (ep.task_id, w.__name__)
            assert m(back, gold).value == want  # the case reads back to the same episode
