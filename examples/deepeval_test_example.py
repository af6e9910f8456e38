"""ek metrics in a DeepEval test file, for ``deepeval test run`` (offline, no API key).

Run it:

    DEEPEVAL_TELEMETRY_OPT_OUT=1 DEEPEVAL_FILE_SYSTEM=READ_ONLY \
        deepeval test run examples/deepeval_test_example.py

(the two variables switch off DeepEval's telemetry and its ``./.deepeval`` result files). The file
is named ``*_example.py`` so that a plain ``pytest`` run does not collect it by accident;
``deepeval test run`` collects it because it is named on the command line.

Every metric here is deterministic: ek never calls an LLM.
"""

from __future__ import annotations

import pytest
from deepeval import assert_test
from deepeval.test_case import LLMTestCase, ToolCall
from ek.adapters.deepeval import EkMetric, to_deepeval_test_case

from ek.agents.base import Cost, Episode, Step, TaskSpec, ToolSpec
from ek.agents.cost import per_million
from ek.agents.metrics import CostPerSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

# The task: look the order up, then refund it. The gold calls, in order.
LOOKUP, REFUND = Step("lookup", {"order_id": "A1"}), Step("refund", {"order_id": "A1"})
GOLD = TaskSpec("refund-A1", gold="refunded", gold_calls=[LOOKUP, REFUND])

# Two agent runs, as ek episodes (in practice: read from your harness, or build the
# LLMTestCase yourself and put step errors / token kinds in its metadata).
GOOD = Episode(
    "refund-A1",
    input="Please refund order A1",
    trajectory=[LOOKUP, Step("search", {"q": "refund policy"}), REFUND],  # one harmless extra
    output="refunded",
    cost=Cost(input_tokens=3_000, output_tokens=400, model="gpt-x"),
)
DOUBLE_REFUND = Episode(
    "refund-A1",
    input="Please refund order A1",
    trajectory=[LOOKUP, REFUND, REFUND],  # refunded twice: DeepEval's ToolCorrectness says 1.0
    output="refunded",
    cost=Cost(input_tokens=3_500, output_tokens=450, model="gpt-x"),
)

PRICE = per_million(2.50, 10.00)  # USD per million input / output tokens


def metrics() -> list[EkMetric]:
    """Fresh metric objects per test (DeepEval mutates the ones it is given)."""
    return [
        # Weighted tool-call F1 after a multiset matching; passes at 0.75.
        EkMetric(ToolCallMetric(), threshold=0.75),
        # The gold calls must appear in order; extra steps allowed ("in_order").
        EkMetric(TrajectoryMetric("in_order"), threshold=1.0),
        # Cost per successful task, lower is better: pass at 2 cents or less.
        EkMetric(CostPerSuccessMetric(price=PRICE), threshold=0.02),
    ]


def case(episode: Episode) -> LLMTestCase:
    return to_deepeval_test_case(episode, GOLD)


def test_good_run_passes() -> None:
    # Tool calls: TP 4, FP 2 (the extra search), F1 8/10 = 0.8 >= 0.75; trajectory in order;
    # cost 3000 * 2.5e-6 + 400 * 1e-5 = $0.0115 <= $0.02.
    assert_test(case(GOOD), metrics())


def test_double_refund_is_caught() -> None:
    # The repeated refund is an extra call: F1 8/(8 + 2) = 0.8 still passes the 0.75 bar,
    # so demand a valid call set (BFCL's verdict: everything matched, nothing extra).
    strict = EkMetric(ToolCallMetric(), threshold=1.0)
    with pytest.raises(AssertionError, match="extra refund"):
        assert_test(case(DOUBLE_REFUND), [strict])


def test_malformed_refund_is_caught() -> None:
    # A test case built by hand. The model wrote the refund's arguments as broken JSON, which
    # DeepEval's ToolCall refuses; a placeholder ToolCall(name="refund", input_parameters={})
    # would read as a refund with no arguments and pass the 0.75 bar. The model's own calls go
    # in metadata["raw_tool_calls"] (they replace tools_called for ek), the task's tools in
    # metadata["tools"] (the refund is destructive: it weighs 10, not 1).
    case = LLMTestCase(
        input="Please refund order A1",
        actual_output="refunded",
        expected_output="refunded",
        expected_tools=[
            ToolCall(name="lookup", input_parameters={"order_id": "A1"}),
            ToolCall(name="refund", input_parameters={"order_id": "A1"}),
        ],
        metadata={
            "raw_tool_calls": [
                {"name": "lookup", "arguments": '{"order_id": "A1"}'},
                {"name": "refund", "arguments": '{"order_id": "A1"'},  # unparseable
            ],
            "tools": [ToolSpec("lookup").to_dict(), ToolSpec("refund", destructive=True).to_dict()],
        },
    )
    # lookup TP 2; the malformed call is extra (FP 1); the refund is missing (FN 10 + 1):
    # F1 = 4 / (4 + 1 + 11) = 0.25
    with pytest.raises(AssertionError, match="malformed call"):
        assert_test(case, [EkMetric(ToolCallMetric(), threshold=0.75)])
