"""Issue 34: PolicyMetric through the real run_suite, its store, load_run and the gate; and
recorded tau-bench-style conversations audited without re-running them."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Episode, RunProvenance, Step, TaskSpec
from ek.agents.harness import agent_regression_gate, load_run, run_suite
from ek.agents.policy import (
    Confirm,
    MaxCalls,
    Observed,
    Order,
    PolicyMetric,
    UserNamed,
    policy_figures,
)

RULES = [
    Order("get_order", "refund_order", same=("order_id",)),
    Observed("refund_order", "amount", "<=", "get_order", path=("total",), same=("order_id",)),
    MaxCalls("refund_order", 1),
]
TASKS = [
    TaskSpec(f"t{i}", input={"order_id": f"O{i}", "amount": 10 * i}, gold="done")
    for i in range(1, 7)
]


def careful(task: TaskSpec) -> Episode:
    oid, amount = task.input["order_id"], task.input["amount"]
    steps = [
        Step("get_order", {"order_id": oid}, observation={"total": amount}),
        Step("refund_order", {"order_id": oid, "amount": amount}),
    ]
    return Episode(task.task_id, trajectory=steps, output="done")


def hasty(task: TaskSpec) -> Episode:
    """Refunds tasks t1-t4 without looking the order up (still 'done'); t5 and t6 it fails."""
    oid, amount = task.input["order_id"], task.input["amount"]
    if task.task_id in ("t5", "t6"):
        return Episode(
            task.task_id,
            trajectory=[Step("refund_order", {"order_id": oid, "amount": amount})],
            output="error",
        )
    return Episode(
        task.task_id,
        trajectory=[Step("refund_order", {"order_id": oid, "amount": amount})],
        output="done",
    )


def suite(agent: Any, store: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deterministic agents' reliability warning
        return run_suite(
            agent,
            TASKS,
            k=2,
            check="output",
            metrics=[PolicyMetric(RULES)],
            run=RunProvenance(agent=agent.__name__, suite_version="policy-test/1"),
            store=store,
        )


def test_run_suite_scores_violations_and_near_misses(tmp_path: Path) -> None:
    res = suite(hasty, tmp_path / "hasty.jsonl")
    scores = res.scores["policy"]
    assert len(scores) == 12  # 6 tasks x k=2
    first = scores[0].detail
    # the refund at step 0 breaks Order and Observed (no earlier get_order of O1): two
    # violations of severity 1 -> value max(0, 1 - 2) = 0
    assert [v["rule"] for v in first["violations"]] == [
        "get_order before refund_order",
        "refund_order.amount <= get_order total",
    ]
    assert first["first_violation"]["step"] == 0
    assert first["near_misses"] == 1 and first["successes"] == 1
    assert res.metrics["policy"] == 0.0  # every episode broke a rule: compliance 0/12
    figs = policy_figures(scores)
    # 12 trials all violated; 8 successes (t1-t4 x 2), all near-misses -> share 8/8
    assert figs["violation_rate"] == 1.0
    assert (figs["successes"], figs["near_misses"], figs["near_miss_share"]) == (8.0, 8.0, 1.0)


def test_store_report_and_gate_agree(tmp_path: Path) -> None:
    base = suite(careful, tmp_path / "careful.jsonl")
    cur = suite(hasty, tmp_path / "hasty.jsonl")
    assert base.metrics["policy"] == 1.0
    back = load_run(tmp_path / "hasty.jsonl")
    assert back.metrics["policy"].value == cur.metrics["policy"] == 0.0
    merged = [s for ss in back.metrics["policy"].scores.values() for s in ss]
    assert policy_figures(merged)["near_miss_share"] == 1.0  # from the per-task sums
    gate = agent_regression_gate(tmp_path / "hasty.jsonl", tmp_path / "careful.jsonl")
    check = {c.name: c for c in gate.checks}["policy"]
    # compliance fell from 1.0 to 0.0 on every task: the interval of the change is [-1, -1]
    assert check.verdict == "regression" and check.higher_is_better is True
    assert not gate.passed
    same = agent_regression_gate(tmp_path / "careful.jsonl", tmp_path / "careful.jsonl")
    assert {c.name: c for c in same.checks}["policy"].verdict == "pass"


def test_an_agent_failure_is_not_a_near_miss() -> None:
    m = PolicyMetric(RULES)
    ep = Episode(
        "t", trajectory=[Step("refund_order", {"order_id": "O1", "amount": 1})], error="timeout"
    )
    s = m(ep, TaskSpec("t", gold="done"))
    assert (s.detail["violated"], s.detail["successes"], s.detail["near_misses"]) == (1, 0, 0)


# ----------------------------------------------------------------------------- tau-bench conversations

AIRLINE = [
    Confirm("cancel_reservation", describe=r"cancel"),
    Confirm("update_reservation_flights", describe=r"change|update"),
    UserNamed("cancel_reservation", "reservation_id"),
    MaxCalls("send_certificate", 1),
]


def _call(cid: str, name: str, args: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
        ],
    }


def _tool(cid: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "name": name, "content": content}


CONFIRMED = [
    {"role": "system", "content": "You are an airline agent. Policy: ..."},
    {"role": "user", "content": "Hi, I need to cancel reservation EHGLP3."},
    _call("c1", "get_reservation_details", '{"reservation_id": "EHGLP3"}'),
    _tool("c1", "get_reservation_details", '{"reservation_id": "EHGLP3", "status": "active"}'),
    {
        "role": "assistant",
        "content": "I can cancel EHGLP3; the refund goes to your card. Confirm (yes)?",
    },
    {"role": "user", "content": "Yes, please."},
    _call("c2", "cancel_reservation", '{"reservation_id": "EHGLP3"}'),
    _tool("c2", "cancel_reservation", '{"status": "cancelled"}'),
    {"role": "assistant", "content": "Done."},
]
UNCONFIRMED = [
    {"role": "user", "content": "Can you cancel EHGLP3? Actually, what's the refund?"},
    {"role": "assistant", "content": "I will cancel EHGLP3 and refund $320."},
    {"role": "user", "content": "Hmm, let me think about it."},
    _call("c1", "cancel_reservation", '{"reservation_id": "EHGLP3"}'),
    _tool("c1", "cancel_reservation", '{"status": "cancelled"}'),
    _call("c2", "send_certificate", '{"amount": 50}'),
    _tool("c2", "send_certificate", "ok"),
    _call("c3", "send_certificate", '{"amount": 50}'),
    _tool("c3", "send_certificate", "ok"),
]


def audited(messages: list[dict[str, Any]], task_id: str, success: bool) -> Episode:
    """A recorded conversation as an Episode: the calls by the message bridge, the turns kept."""
    from ek.agents.bridge import trajectory_from_messages

    return Episode(
        task_id,
        trajectory=trajectory_from_messages(messages),
        success=success,
        metadata={"messages": messages},
    )


def test_tau_bench_conversations_are_audited_without_rerunning() -> None:
    m = PolicyMetric(AIRLINE, check="recorded")
    good = m(audited(CONFIRMED, "c", True), None)
    assert good.value == 1.0 and good.detail["passed"] is True
    bad = m(audited(UNCONFIRMED, "u", True), None)
    assert [(v["step"], v["reason"]) for v in bad.detail["violations"]] == [
        (
            0,
            "cancel_reservation at step 0: no user turn agreed after the agent's description "
            "'I will cancel EHGLP3 and refund $320.'",
        ),
        (2, "send_certificate at step 2: call 2 of send_certificate, at most 1 allowed"),
    ]
    assert bad.detail["near_misses"] == 1  # recorded success, broken policy
    # 1 clean + 1 violating episode: compliance 1/2, violation rate 1/2, near-misses 1 of 2
    assert m.aggregate([good, bad]) == 0.5
    assert policy_figures([good, bad])["near_miss_share"] == 0.5


def test_a_conversation_that_disagrees_with_the_trajectory_is_unscored() -> None:
    ep = Episode(
        "x",
        trajectory=[Step("cancel_reservation")],
        success=True,
        metadata={"messages": [{"role": "user", "content": "hi"}]},
    )
    s = PolicyMetric(AIRLINE, check="recorded")(ep, None)
    assert math.isnan(s.value) and s.detail["compliance"] is None
    assert s.detail["reason"].startswith(
        "policies not checked: episode 'x': its metadata['messages'] holds 0 call(s)"
    )
    assert math.isnan(PolicyMetric().aggregate([s]))


def test_policies_not_an_episode() -> None:
    with pytest.raises(TypeError, match="PolicyMetric expects an Episode"):
        PolicyMetric(RULES)("not an episode", None)


def test_episodes_from_opentelemetry_traces() -> None:
    from ek.agents.policy import Forbid
    from ek.agents.traces import read_trace_episodes

    path = Path(__file__).parent / "data" / "traces" / "pydantic_ai_otlp.jsonl"
    episodes = list(read_trace_episodes(path))  # real pydantic-ai instrumentation, 6 runs
    rules = [
        Order("lookup_order", "refund", same=("order_id",)),
        Observed("refund", "order_id", "==", "lookup_order", path=("order_id",)),
        Forbid("refund", {"amount": 50.0}),
    ]
    scores = [PolicyMetric(rules)(ep, None) for ep in episodes]
    found = [
        (i, v["step"], v["reason"]) for i, s in enumerate(scores) for v in s.detail["violations"]
    ]
    # every refund follows the look-up of its order; run 1 refunds 50.0, the forbidden amount
    assert found == [(1, 1, "refund at step 1: forbidden (refund with amount=50.0)")]
    assert PolicyMetric(rules).aggregate(scores) == 5 / 6


def test_report_prints_violation_rate_and_near_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ek.agents.cli import main

    suite(hasty, tmp_path / "hasty.jsonl")
    assert main(["report", str(tmp_path / "hasty.jsonl")]) == 0
    out = capsys.readouterr().out
    # 12 trials all violated; 8 successes (t1-t4 x 2) all near-misses
    assert "violation rate 1 (12/12 trials)  near-misses 1 (8 of 8 successes broke a policy)" in out
    assert main(["report", str(tmp_path / "hasty.jsonl"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"]["policy"]["figures"]["near_miss_share"] == 1.0
