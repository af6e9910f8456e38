"""Issue 32, items 6-8: DeepEval as its users expect, through the real ``evaluate()`` and
``assert_test()`` (offline, telemetry off, no files written).

- item 6: DeepEval's ``ToolCall`` refuses arguments that are not a mapping, and the fallbacks
  (``input_parameters={}`` or ``None``) read as a well-formed call with no arguments: a false
  pass. ``metadata["raw_tool_calls"]`` hands ek the model's own output, scored as malformed;
- item 7: a hand-built ``LLMTestCase`` without ``metadata["tools"]`` is scored with unit weights,
  and the reason says so; with the tools, the task's weights;
- item 8: :func:`ek.adapters.deepeval.summary_from_evaluation` reads an ``evaluate()`` result
  into ek's ``RunSummary`` (counts, ek's ratio-of-sums aggregates, Cost-of-Pass, the gate);
  DeepEval's own per-case mean is a different number.

The task (hand-derived weights): ``lookup_order(order_id)`` weighs 1 + 1; the destructive
``refund_order(order_id, amount)`` weighs 10 + 1 + 5 (amount's importance 5). Gold: look up A1,
refund A1 20.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

pytest.importorskip("deepeval")

from deepeval import assert_test
from deepeval.test_case import ConversationalTestCase, LLMTestCase, ToolCall, Turn
from ek.adapters.deepeval import EkConversationalMetric, EkMetric, summary_from_evaluation
from test_deepeval_adapter import by_name, no_outbound, quiet_evaluate  # noqa: F401 (fixture)

from ek.agents.base import Cost, Episode, Step, TaskSpec, ToolSpec
from ek.agents.cost import per_million
from ek.agents.harness import agent_regression_gate
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.grammar import FieldSpec

LOOKUP = ToolSpec("lookup_order", [FieldSpec("order_id", "string")])
REFUND = ToolSpec(
    "refund_order",
    [FieldSpec("order_id", "string"), FieldSpec("amount", "number", importance=5.0)],
    destructive=True,
)
TOOLS = [LOOKUP.to_dict(), REFUND.to_dict()]
GOLD = [
    ToolCall(name="lookup_order", input_parameters={"order_id": "A1"}),
    ToolCall(name="refund_order", input_parameters={"order_id": "A1", "amount": 20}),
]
LOOKED_UP = ToolCall(name="lookup_order", input_parameters={"order_id": "A1"})
#: What the model wrote: a refund whose arguments are not JSON.
RAW = [
    {"name": "lookup_order", "arguments": '{"order_id": "A1"}'},
    {"name": "refund_order", "arguments": '{"order_id": "A1", "amount": }'},
]
UNIT_NOTE = (
    "unit weights: the task gives no tools (metadata['tools']: the task's ToolSpec dicts), so "
    "every tool and every argument weighs 1"
)


def _case(name: str, calls: list[ToolCall], **metadata: Any) -> LLMTestCase:
    return LLMTestCase(
        input="Please refund order A1.",
        actual_output="refunded",
        expected_output="refunded",
        tools_called=calls,
        expected_tools=GOLD,
        name=name,
        metadata={"tools": TOOLS, **metadata},
    )


# --------------------------------------------------------------------------- item 6


def test_a_malformed_call_handed_over_raw_is_scored_as_malformed(
    no_outbound: None,  # noqa: F811
) -> None:
    cases = [
        # the fallbacks a user reaches for: DeepEval refuses the string
        _case("empty", [LOOKED_UP, ToolCall(name="refund_order", input_parameters={})]),
        _case("none", [LOOKED_UP, ToolCall(name="refund_order", input_parameters=None)]),
        # the model's own output, beside placeholders (or nothing) in tools_called
        _case("raw", [LOOKED_UP], raw_tool_calls=RAW),
        _case("raw-text", [], raw_tool_calls=[json.dumps(RAW[0]), json.dumps(RAW[1])]),
    ]
    with pytest.raises(Exception, match="input_parameters"):
        ToolCall(name="refund_order", input_parameters='{"order_id": "A1", "amount": }')
    res = by_name(quiet_evaluate(cases, [EkMetric(ToolCallMetric(), threshold=0.75, name="tc")]))
    # {} or None: lookup TP 2, refund matched by name TP 10, its two arguments missing FN 1 + 5
    # -> F1 = 2*12 / (2*12 + 0 + 6) = 0.8: passes 0.75 although the refund never happened
    for name in ("empty", "none"):
        assert res[name]["tc"].score == pytest.approx(0.8) and res[name]["tc"].success is True
    # raw: lookup TP 2; the malformed call is an extra call of an unknown tool (FP 1); the refund
    # is missing (FN 16) -> F1 = 4 / (4 + 1 + 16) = 4/21 = 0.19: fails, saying why
    for name in ("raw", "raw-text"):
        md = res[name]["tc"]
        assert md.score == pytest.approx(4 / 21) and md.success is False
        assert "<malformed call>" in md.reason and "arguments string is not JSON" in md.reason
        assert "missing refund_order" in md.reason
    with pytest.raises(AssertionError, match="malformed call"):
        assert_test(cases[2], [EkMetric(ToolCallMetric(), threshold=0.75)])
    assert_test(cases[0], [EkMetric(ToolCallMetric(), threshold=0.75)])  # the false pass


def test_raw_tool_calls_in_a_conversational_turn(no_outbound: None) -> None:  # noqa: F811
    case = ConversationalTestCase(
        turns=[
            Turn(role="user", content="Please refund order A1."),
            Turn(role="assistant", content="refunded", metadata={"raw_tool_calls": RAW}),
        ],
        metadata={"expected_tools": [c.model_dump() for c in GOLD], "tools": TOOLS},
    )
    metric = EkConversationalMetric(ToolCallMetric(), threshold=0.75)
    [tr] = quiet_evaluate([case], [metric]).test_results
    assert tr.metrics_data[0].score == pytest.approx(4 / 21)  # as above


def test_raw_tool_calls_must_be_a_list(no_outbound: None) -> None:  # noqa: F811
    case = _case("bad", [LOOKED_UP], raw_tool_calls=RAW[1])  # one call, not a list of them
    with pytest.raises(RuntimeError, match=r"metadata\['raw_tool_calls'\] must be a list"):
        EkMetric(ToolCallMetric(), threshold=0.75).measure(case)


# --------------------------------------------------------------------------- item 7


def test_without_tools_the_reason_says_unit_weights(no_outbound: None) -> None:  # noqa: F811
    wrong_amount = [
        LOOKED_UP,
        ToolCall(name="refund_order", input_parameters={"order_id": "A1", "amount": 25}),
    ]
    bare = LLMTestCase(
        input="Please refund order A1.",
        actual_output="refunded",
        tools_called=wrong_amount,
        expected_tools=GOLD,
        name="bare",
    )
    weighted = _case("weighted", wrong_amount)
    res = by_name(quiet_evaluate([bare, weighted], [EkMetric(ToolCallMetric(), threshold=0.5)]))
    [name] = res["bare"]
    # unit weights: lookup TP 2; refund TP 1 + order_id 1, amount wrong FP 1 FN 1
    # -> 2*4 / (2*4 + 1 + 1) = 0.8
    assert res["bare"][name].score == pytest.approx(0.8)
    assert res["bare"][name].reason.endswith(UNIT_NOTE)
    # the task's weights: lookup TP 2; refund TP 10 + 1, amount wrong FP 5 FN 5
    # -> 2*13 / (2*13 + 5 + 5) = 26/36 = 0.7222
    assert res["weighted"][name].score == pytest.approx(26 / 36)
    assert "unit weights" not in res["weighted"][name].reason


def test_metadata_keys_are_documented_where_users_look() -> None:
    from pathlib import Path

    import ek.adapters.deepeval as ekd

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for text in (readme, ekd.__doc__ or ""):
        for key in ("tools", "raw_tool_calls", "final_state", "task_id", "trial", "cost"):
            assert f"``{key}``" in text or f"`{key}`" in text, key
    assert "summary_from_evaluation" in readme and "Average Score" in readme


# --------------------------------------------------------------------------- item 8

PRICE = per_million(1.0, 0.0)  # $1 per million input tokens: 1,000 tokens = $0.001
A, B = Step("A", {"x": 1}), Step("B", {"y": 2})
C = Step("C")
# (task, calls, output); gold [A, B] and answer "done" everywhere; unit weights (no tools)
RUNS = [
    ("t1", [A, B], "done"),  # TP 4 -> F1 1
    ("t1", [A], "failed"),  # TP 2, FN 2 -> F1 4/6
    ("t2", [A, B, C, C, C, C], "done"),  # TP 4, FP 4 -> F1 8/12
]


def _runs() -> list[LLMTestCase]:
    from ek.adapters.deepeval import to_deepeval_test_case

    seen: dict[str, int] = {}
    cases = []
    for task, calls, out in RUNS:
        trial = seen.get(task, 0)
        seen[task] = trial + 1
        ep = Episode(
            task,
            calls,
            input="q",
            output=out,
            trial=trial,
            cost=Cost(input_tokens=1000 * len(calls), model="m"),
        )
        cases.append(to_deepeval_test_case(ep, TaskSpec(task, gold="done", gold_calls=[A, B])))
    return cases


def test_summary_from_evaluation_gives_ek_figures(no_outbound: None) -> None:  # noqa: F811
    metrics = [
        EkMetric(ToolCallMetric(), threshold=0.5),
        EkMetric(TaskSuccessMetric(), threshold=1.0, name="success"),
        EkMetric(CostPerSuccessMetric(price=PRICE), threshold=1.0),
    ]
    result = quiet_evaluate(_runs(), metrics)
    s = summary_from_evaluation(result, metrics, success="success", price=PRICE)
    assert dict(s.counts) == {"t1": (2, 1), "t2": (1, 1)} and s.k == 2
    # micro-F1 over the three cases: TP 10, FP 4, FN 2 -> 20 / 26
    assert s.metrics["tool_calls"].value == pytest.approx(20 / 26)
    # DeepEval's "Average Score" is the per-case mean: (1 + 4/6 + 8/12) / 3 = 0.7778
    per_case = [by_name(result)[n][metrics[0].__name__].score for n in ("t1", "t1#1", "t2")]
    assert sum(per_case) / 3 == pytest.approx((1 + 4 / 6 + 8 / 12) / 3)
    # Cost-of-Pass: (2 + 1 + 6) thousand tokens = $0.009 over 2 successes = 0.0045; the mean of
    # the per-case cost_per_success values is dollars per episode: 0.009 / 3 = 0.003
    assert s.cost is not None and s.cost["cost_of_pass"] == pytest.approx(0.0045)
    cop = s.metrics["cost_per_success"]
    assert cop.value == pytest.approx(0.0045) and cop.higher_is_better is False
    # the deciding metric is a metric too, under its ek name: 2 of 3 outputs are right
    assert s.metrics["task_success"].value == pytest.approx(2 / 3)
    assert s.unscored is None
    # the input of the gate: the same run against itself passes, every metric checked
    g = agent_regression_gate(s, s)
    assert g.passed and {"tool_calls", "cost_per_success"} <= {c.name for c in g.checks}


def test_summary_refuses_what_evaluate_did_not_give(no_outbound: None) -> None:  # noqa: F811
    metrics = [EkMetric(ToolCallMetric(), threshold=0.5)]
    result = quiet_evaluate(_runs(), metrics)
    with pytest.raises(ValueError, match="success='nope' names no metric of the results"):
        summary_from_evaluation(result, metrics, success="nope")
    with pytest.raises(TypeError, match="ek's DeepEval shells"):
        summary_from_evaluation(result, [ToolCallMetric()])
    with pytest.raises(TypeError, match="EvaluationResult"):
        summary_from_evaluation("result", metrics)
    # the default verdict is DeepEval's own: every metric passed its threshold (F1 >= 0.5)
    s = summary_from_evaluation(result, metrics)
    assert dict(s.counts) == {"t1": (2, 2), "t2": (1, 1)}
    assert not math.isnan(s.metrics["tool_calls"].value)


def test_summary_docstring_example() -> None:
    import doctest

    import ek.adapters.deepeval._summary as summary

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    assert doctest.testmod(summary, optionflags=flags).failed == 0
