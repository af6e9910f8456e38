"""Issue 34: PolicyMetric in DeepEval's real evaluate(), offline, through EkMetric."""

from __future__ import annotations

import pytest

pytest.importorskip("deepeval")

from _policy_host_case import CAREFUL, HASTY, HASTY_REASON, RULES, direct
from deepeval.test_case import LLMTestCase, ToolCall
from ek.adapters.deepeval import EkMetric
from test_deepeval_adapter import by_name, no_outbound, quiet_evaluate  # noqa: F401 (fixture)

from ek.agents.base import Step
from ek.agents.policy import PolicyMetric


def case(name: str, steps: list[Step]) -> LLMTestCase:
    called = [
        ToolCall(name=s.tool, input_parameters=dict(s.args), output=s.observation) for s in steps
    ]
    return LLMTestCase(
        name=name,
        input="refund A1",
        actual_output="refunded",
        expected_output="refunded",
        tools_called=called,
    )


def test_deepeval_evaluate() -> None:
    metric = EkMetric(PolicyMetric(RULES), threshold=1.0)
    res = by_name(quiet_evaluate([case("careful", CAREFUL), case("hasty", HASTY)], [metric]))
    careful, hasty = (next(iter(res[n].values())) for n in ("careful", "hasty"))
    assert (careful.score, careful.success) == (1.0, True)
    # one Order violation of severity 1: value 0, below the threshold, as called directly;
    # DeepEval shows ek's reason, the near-miss included (the output was right)
    assert (hasty.score, hasty.success) == (0.0, False)
    assert hasty.score == direct(HASTY).value
    assert HASTY_REASON in hasty.reason and "near-miss" in hasty.reason
