"""The demo world: tools, database purity, and the consistency of the 30 tasks' gold."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import DESTRUCTIVE_WEIGHT, Episode, Step, suite_grammar
from ek.agents.demo import (
    SUITE_VERSION,
    TOOLS,
    call_tool,
    initial_db,
    load_tasks,
    oracle_agent,
    replay,
    replayed_state_match,
)
from ek.agents.demo._tasks import apply_changes, suite_info
from ek.agents.demo._world import tool_schemas
from ek.agents.metrics import TaskSuccessMetric, final_state_match

TASKS = load_tasks()


# --------------------------------------------------------------------------- hand-derived


def test_partial_then_full_refund_hand_derived() -> None:
    # O1001 = 2 x MUG-01 at 12.50 + 1 x TEE-02 at 19.00 -> total 44.00.
    db = initial_db()
    assert db["orders"]["O1001"]["total"] == 44.0
    db2, s = call_tool(db, "refund_order", {"order_id": "O1001", "amount": 25, "reason": "damaged"})
    # 25.00 of 44.00 refunded: still 'delivered', 19.00 left.
    assert not s.failed and s.observation == {
        "order_id": "O1001",
        "refunded": 25.0,
        "status": "delivered",
    }
    assert db2["orders"]["O1001"]["refunds"] == [{"amount": 25.0, "reason": "damaged"}]
    _, s = call_tool(
        db2, "refund_order", {"order_id": "O1001", "amount": 20.0, "reason": "damaged"}
    )
    assert s.error == "refund amount must be in (0, 19.0] for order O1001, got 20.0"
    db3, s = call_tool(
        db2, "refund_order", {"order_id": "O1001", "amount": 19.0, "reason": "damaged"}
    )
    assert db3["orders"]["O1001"]["status"] == "refunded"  # 25 + 19 = 44 = total
    assert db["orders"]["O1001"]["refunds"] == []  # the input was never mutated


def test_cancel_restocks_hand_derived() -> None:
    # O1019 = 2 x LAMP-03; lamp stock 8 -> 10 after the cancel.
    db, t = replay([Step("cancel_order", {"order_id": "O1019", "reason": "no_longer_needed"})])
    assert db["stock"]["LAMP-03"]["qty"] == 10
    assert db["orders"]["O1019"]["status"] == "cancelled"
    assert db["orders"]["O1019"]["cancel_reason"] == "no_longer_needed"
    assert not t[0].failed


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        (
            "refund_order",
            {"order_id": "O1003", "amount": 1.0, "reason": "damaged"},
            "only a delivered",
        ),
        ("cancel_order", {"order_id": "O1002", "reason": "no_longer_needed"}, "only a pending"),
        ("update_address", {"order_id": "O1005", "address": "x"}, "only a pending"),
        ("update_address", {"order_id": "O1003", "address": "  "}, "must not be empty"),
        ("get_order", {"order_id": "O1003", "extra": 1}, "unknown argument(s) ['extra']"),
        ("get_order", {}, "missing required argument(s) ['order_id']"),
        ("get_order", {"order_id": 1003}, "order_id must be a string"),
        (
            "refund_order",
            {"order_id": "O1002", "amount": "45", "reason": "damaged"},
            "must be a number",
        ),
        (
            "refund_order",
            {"order_id": "O1002", "amount": True, "reason": "damaged"},
            "must be a number",
        ),
        ("refund_order", {"order_id": "O1002", "amount": 45.0, "reason": "meh"}, "must be one of"),
        ("refund_order", {"order_id": "O1002", "amount": 0, "reason": "damaged"}, "(0, 45.0]"),
        ("find_customer", {"email": "nobody@example.com"}, "no customer"),
        ("get_customer", {"customer_id": "C99"}, "not found"),
        ("check_stock", {"sku": "X"}, "unknown product"),
        ("delete_everything", {}, "unknown tool"),
    ],
)
def test_refused_calls_leave_the_db_unchanged(tool: str, args: dict, error: str) -> None:
    db = initial_db()
    before = copy.deepcopy(db)
    out, step = call_tool(db, tool, args)
    assert step.failed and error in (step.error or "")
    assert out is db and db == before


def test_tool_schemas_and_weights() -> None:
    g = suite_grammar(TOOLS)
    assert {t.name for t in TOOLS if t.destructive} == {"refund_order", "cancel_order"}
    assert g.weight("refund_order") == DESTRUCTIVE_WEIGHT == g.weight("cancel_order")
    assert g.weight("get_order") == 1.0
    assert g.importance("refund_order", "order_id") == 8.0
    assert g.importance("refund_order", "amount") == 5.0
    assert [f["function"]["name"] for f in tool_schemas()] == [t.name for t in TOOLS]


# --------------------------------------------------------------------------- the suite's gold


def test_suite_shape() -> None:
    assert len(TASKS) == 30 == len({t.task_id for t in TASKS})
    assert sum(t.slice == "refund" for t in TASKS) == 16
    assert sum(t.slice == "lookup" for t in TASKS) == 14
    assert all(t.tags in (("easy",), ("hard",)) for t in TASKS)
    assert suite_info()["version"] in SUITE_VERSION
    assert {t.slice for t in load_tasks("hard")} == {"refund", "lookup"}
    with pytest.raises(ValueError, match="no demo task in slice"):
        load_tasks("nope")


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.task_id)
def test_gold_calls_give_the_gold_state(task) -> None:
    # Two independent statements of the gold: the calls replayed on the initial database, and
    # the recorded changes applied to it, must give the same database.
    assert task.gold_calls is not None
    db, traj = replay(task.gold_calls)
    assert not traj.errors, traj.errors
    assert db == task.gold == apply_changes(initial_db(), task.metadata["gold_changes"])
    assert db != initial_db()  # every task changes the world
    ep = Episode(task.task_id, trajectory=traj, final_state=db)
    assert final_state_match(ep, task) and replayed_state_match(ep, task)
    assert TaskSuccessMetric("final_state")(ep, task).detail["passed"] is True
    # the untouched world fails every task
    assert not final_state_match(Episode(task.task_id, final_state=initial_db()), task)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.task_id)
def test_oracle_agent_reproduces_the_gold_calls(task) -> None:
    ep = oracle_agent()(task)
    assert [(s.tool, dict(s.args)) for s in ep.trajectory] == [
        (s.tool, dict(s.args)) for s in task.gold_calls
    ]
    assert final_state_match(ep, task)


def test_destructive_gold_only_in_the_refund_slice() -> None:
    for t in TASKS:
        destructive = {"refund_order", "cancel_order"} & set(t.gold_calls.tools)
        assert bool(destructive) == (t.slice == "refund"), t.task_id


def test_apply_changes_rejects_bad_paths() -> None:
    with pytest.raises(ValueError, match="does not exist"):
        apply_changes({"a": {}}, [{"path": ["x", "y"], "value": 1}])
    with pytest.raises(ValueError, match="non-empty 'path'"):
        apply_changes({}, [{"path": [], "value": 1}])


# --------------------------------------------------------------------------- properties

_ORDER_IDS = [*sorted(initial_db()["orders"]), "O9999"]
_call = st.one_of(
    st.builds(lambda o: ("get_order", {"order_id": o}), st.sampled_from(_ORDER_IDS)),
    st.builds(
        lambda o, r: ("cancel_order", {"order_id": o, "reason": r}),
        st.sampled_from(_ORDER_IDS),
        st.sampled_from(["no_longer_needed", "ordered_by_mistake", "bad"]),
    ),
    st.builds(
        lambda o, a: ("refund_order", {"order_id": o, "amount": a, "reason": "damaged"}),
        st.sampled_from(_ORDER_IDS),
        st.floats(-10, 200, allow_nan=False),
    ),
    st.builds(
        lambda o, a: ("update_address", {"order_id": o, "address": a}),
        st.sampled_from(_ORDER_IDS),
        st.text(max_size=10),
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_call, max_size=8))
def test_tools_are_pure_and_replay_is_deterministic(calls) -> None:
    db = initial_db()
    snapshots = []
    for tool, args in calls:
        snap = copy.deepcopy(db)
        new, step = call_tool(db, tool, args)
        assert db == snap  # the input is never mutated
        if step.failed:
            assert new is db
        snapshots.append(new)
        db = new
    steps = [Step(t, a) for t, a in calls]
    again, traj = replay(steps)
    assert again == db and len(traj) == len(calls)
    # money conservation: refunds never exceed an order's total; stock never goes negative
    for o in db["orders"].values():
        assert sum(r["amount"] for r in o["refunds"]) <= o["total"] + 1e-9
    assert all(s["qty"] >= 0 for s in db["stock"].values())
