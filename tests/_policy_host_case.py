"""The host tests' shared case (issue 34): one agent refunds without looking the order up (a
near-miss: its output is right), another looks it up first."""

from __future__ import annotations

from typing import Any

from ek.agents.base import Episode, Step, TaskSpec
from ek.agents.policy import MaxCalls, Order, PolicyMetric

RULES = [Order("lookup", "refund", same=("order",)), MaxCalls("refund", 1)]
CAREFUL = [
    Step("lookup", {"order": "A1"}, observation={"total": 20}),
    Step("refund", {"order": "A1", "amount": 20}),
]
HASTY = [Step("refund", {"order": "A1", "amount": 20})]
HASTY_REASON = "refund at step 0 before any successful lookup with the same order ('A1')"


def direct(steps: list[Step]) -> Any:
    """The Score ek gives called directly."""
    ep = Episode("t", steps, output="refunded")
    return PolicyMetric(RULES)(ep, TaskSpec("t", gold="refunded"))
