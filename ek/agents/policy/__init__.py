"""Policies as code: deterministic process checks over a trajectory and its conversation.

An outcome check sees the final state, not how the agent got there. A policy rule reads the
calls (and the user and agent turns around them) and returns each **violation** with its step
index and a one-line reason. The vocabulary, plain frozen objects that serialise with
``to_dict`` / :func:`rule_from_dict`:

- :class:`Order`: a tool must come before another (``verify_identity`` before ``refund``,
  optionally for the same arguments);
- :class:`Confirm`: a user turn that agrees after the agent last described the action and
  before the call;
- :class:`Observed`: an argument against an earlier tool result (amount ``<=`` the order
  total); :class:`UserNamed`: an argument the user named;
- :class:`MaxCalls` (``send_email`` at most once) and :class:`Forbid` (a tool, or a tool with
  given argument values);
- :class:`Custom`: a registered plain function for anything else.

:class:`PolicyMetric` scores an episode (1.0 when clean, else weighted by the rules'
severities) and counts **near-misses**: successes that broke a policy. Rules attach to a task
(``TaskSpec.policies``) or a tool (``ToolSpec.policies``) or to the metric. A :class:`Record`
is built from an Episode or from chat messages (tau-bench's message list included), so recorded
conversations are audited without re-running them.

Example:
    >>> from ek.agents.base import Episode, Step
    >>> m = PolicyMetric([Order("get_order", "refund_order", same=("order_id",)),
    ...                   MaxCalls("refund_order", 1)], check="recorded")
    >>> ep = Episode("t", trajectory=[Step("refund_order", {"order_id": "O1"})], success=True)
    >>> s = m(ep, None)
    >>> s.value, s.detail["first_violation"]["step"], s.detail["near_misses"]
    (0.0, 0, 1)
"""

from __future__ import annotations

from ._arguments import OPERATORS, Observed, UserNamed
from ._counts import Forbid, MaxCalls
from ._custom import Custom
from ._metric import PolicyMetric, policies_of, policy_figures, policy_score
from ._policies import (
    RULE_KINDS,
    PolicyResult,
    as_policies,
    check_policies,
    policies_from_list,
    policies_to_list,
    rule_from_dict,
)
from ._record import MESSAGES_KEY, PolicyInputError, Record, Turn
from ._rule import Rule, Violation, call_matches
from ._sequence import DEFAULT_AGREE, Confirm, Order

__all__ = [
    "DEFAULT_AGREE",
    "MESSAGES_KEY",
    "OPERATORS",
    "RULE_KINDS",
    "Confirm",
    "Custom",
    "Forbid",
    "MaxCalls",
    "Observed",
    "Order",
    "PolicyInputError",
    "PolicyMetric",
    "PolicyResult",
    "Record",
    "Rule",
    "Turn",
    "UserNamed",
    "Violation",
    "as_policies",
    "call_matches",
    "check_policies",
    "policies_from_list",
    "policies_of",
    "policies_to_list",
    "policy_figures",
    "policy_score",
    "rule_from_dict",
]
