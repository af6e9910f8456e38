"""Issue 34, Layer A: TaskSpec and ToolSpec carry policies; they serialise, enter the suite's
fingerprint (a store resumed with other policies is refused), and PolicyMetric reads them."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from ek.agents.base import Episode, Step, TaskSpec, ToolSpec
from ek.agents.harness import run_suite, suite_fingerprint
from ek.agents.policy import Confirm, MaxCalls, Order, PolicyMetric

LOOKUP_FIRST = Order("get_order", "refund_order", same=("order_id",))
REFUND = ToolSpec("refund_order", destructive=True, policies=[LOOKUP_FIRST])


def task(*policies: object) -> TaskSpec:
    return TaskSpec("r1", gold="refunded", tools=[REFUND], policies=list(policies))


def test_policies_round_trip_as_json() -> None:
    t = task(MaxCalls("refund_order", 1), {"kind": "confirm", "tool": "cancel_order"})
    assert t.policies == (MaxCalls("refund_order", 1), Confirm("cancel_order"))  # dicts read
    d = json.loads(json.dumps(t.to_dict()))
    assert d["policies"] == [
        {"kind": "max_calls", "tool": "refund_order", "limit": 1},
        {"kind": "confirm", "tool": "cancel_order"},
    ]
    assert d["tools"][0]["policies"] == [
        {"kind": "order", "first": "get_order", "then": "refund_order", "same": ["order_id"]}
    ]
    assert TaskSpec.from_dict(d) == t
    assert ToolSpec.from_dict(d["tools"][0]) == REFUND
    assert "policies" not in TaskSpec("plain").to_dict()  # nothing written when none


def test_bad_policies_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="TaskSpec.policies must be a list of policy rules"):
        TaskSpec("t", policies="no refunds")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind must be one of"):
        ToolSpec("x", policies=[{"kind": "never"}])


def test_the_fingerprint_includes_policies() -> None:
    assert suite_fingerprint([task()]) != suite_fingerprint([task(MaxCalls("refund_order", 1))])
    assert suite_fingerprint([task(MaxCalls("refund_order", 1))]) == suite_fingerprint(
        [task({"kind": "max_calls", "tool": "refund_order", "limit": 1})]
    )


def test_metric_reads_task_and_tool_policies() -> None:
    ep = Episode(
        "r1",
        [Step("refund_order", {"order_id": "O1"}), Step("refund_order", {"order_id": "O1"})],
        output="refunded",
    )
    s = PolicyMetric()(ep, task(MaxCalls("refund_order", 1)))
    # the tool's Order rule: both refunds lack a look-up (steps 0, 1); the task's MaxCalls: the
    # second refund (step 1)
    assert [(v["step"], v["rule"]) for v in s.detail["violations"]] == [
        (0, "get_order before refund_order"),
        (1, "refund_order at most 1"),
        (1, "get_order before refund_order"),
    ]
    assert s.detail["near_misses"] == 1  # "refunded" is the gold answer


def _agent(t: TaskSpec) -> Episode:
    return Episode(
        t.task_id,
        [Step("get_order", {"order_id": "O1"}), Step("refund_order", {"order_id": "O1"})],
        output="refunded",
    )


def test_a_store_resumed_with_other_policies_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "run.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_suite(_agent, [task()], k=2, metrics=[PolicyMetric()], store=store)
        assert res.metrics["policy"] == 1.0
        # the store's error class is not on a public face: matched by its message
        with pytest.raises(ValueError, match=r"belongs to another experiment \(suite: "):
            run_suite(
                _agent,
                [task(MaxCalls("refund_order", 0))],
                k=2,
                metrics=[PolicyMetric()],
                store=store,
            )
