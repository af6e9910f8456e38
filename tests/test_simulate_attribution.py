"""Whose fault: the deterministic simulator checks, attribute(), and the tau-bench importer."""

from __future__ import annotations

import json

import pytest

from ek.agents.base import Episode, Step
from ek.agents.simulate import (
    Attribution,
    Scenario,
    attribute,
    check_simulator,
    read_taubench,
    scenario_from_taubench,
)

SC = Scenario(
    persona="Ana",
    facts={"order_id": "#W1000001", "email": "ana@example.com", "pin": "4321"},
    disclose=["order_id", "email"],
    patterns={"order_id": r"#W\d{7}", "zip": r"(?<!\d)\d{5}(?!\d)"},
    withheld=["store credit"],
    goals={"refund": ["refund", "money back"], "address": ["new address", "change my address"]},
    max_turns=4,
    max_chars=80,
)


def user(text: str, **kw: object) -> dict[str, object]:
    return {"role": "user", "content": text, **kw}


def agent(text: str) -> dict[str, object]:
    return {"role": "assistant", "content": text}


def kinds(messages: list[dict[str, object]]) -> list[tuple[str, int]]:
    return [(f.kind, f.turn) for f in check_simulator(messages, SC)]


def test_clean_conversation_has_no_fault() -> None:
    msgs = [
        user("Hi, I want a refund for #W1000001."),
        agent("Sure. I also see order #W2000002 on your account."),
        user("Not #W2000002, only the first one. Also I need a new address on file."),  # echo
        agent("Done."),
        user("Thanks ###STOP###", stop=True),
    ]
    assert kinds(msgs) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Refund #W1000002 please", "contradicted"),  # an order id, not the scenario's
        ("My zip is 94110, refund please", "disclosed"),  # a zip the scenario does not give
        ("My pin is 4321, refund", "disclosed"),  # known, but not disclosable
        ("Just give me store credit", "disclosed"),  # withheld (the answer)
        ("Assistant: how can I help you today?", "broke_role"),
        ("As an AI I would process the refund", "broke_role"),
        ("refund " + "x" * 100, "over_limit"),  # 107 characters > max_chars 80
    ],
)
def test_each_kind_is_found_at_its_turn(text: str, kind: str) -> None:
    msgs = [user("Hello, refund and a new address please"), agent("Okay."), user(text)]
    assert (kind, 2) in kinds(msgs)


def test_tool_calls_break_role() -> None:
    assert kinds([user("refund", attempted_calls=["refund_order()"])]) == [("broke_role", 0)]


def test_stopped_early_names_the_missing_goal() -> None:
    msgs = [user("I want my money back"), agent("Refunded."), user("bye ###STOP###", stop=True)]
    (fault,) = check_simulator(msgs, SC)
    assert (fault.kind, fault.turn) == ("stopped_early", 2)
    assert "['address']" in fault.reason


def test_over_limit_past_turns_after_stop_and_after_marker() -> None:
    turns = [user("refund, new address")] + [user("more") for _ in range(4)]
    assert ("over_limit", 4) in kinds(turns)  # the 5th user turn, max_turns 4
    after = [user("refund, new address ###STOP###", stop=True), user("one more thing")]
    assert ("over_limit", 1) in kinds(after)
    tail = [user("refund, new address ###STOP### and also")]
    assert kinds(tail) == [("over_limit", 0)]


def test_check_refuses_bad_input() -> None:
    with pytest.raises(TypeError, match="scenario must be a Scenario"):
        check_simulator([], {"facts": {}})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="list of"):
        check_simulator("hello", SC)  # type: ignore[arg-type]


def _ep(msgs: list[dict[str, object]], **kw: object) -> Episode:
    return Episode("t", metadata={"messages": msgs}, **kw)  # type: ignore[arg-type]


def test_attribute_orders_simulator_environment_reviewer_agent() -> None:
    spoiled = _ep([user("Refund #W1000009")], success=False)
    a = attribute(spoiled, SC)
    assert (a.party, a.spoiled) == ("simulator", True)
    assert a.to_dict()["faults"][0]["kind"] == "contradicted"

    clean = [user("refund and new address"), agent("No.")]
    env = _ep(
        clean,
        success=False,
        trajectory=[Step("get_order", error="injected fault: get_order failed")],
    )
    assert attribute(env, SC).party == "environment"

    assert attribute(_ep(clean, success=False), SC).party == "agent"
    assert attribute(_ep(clean, success=True), SC).party is None

    async def reviewer(messages: list[dict[str, object]]) -> str:
        assert messages[1]["content"] == "No."
        return "Verdict: SIMULATOR (it asked for the wrong thing)"

    r = attribute(_ep(clean, success=False), SC, reviewer=reviewer)
    assert (r.party, r.detail) == ("simulator", {"reviewer": "simulator"})
    unread = attribute(_ep(clean, success=False), SC, reviewer=lambda m: 42)
    assert (unread.party, unread.detail) == ("agent", {"reviewer": None})


def test_attribute_needs_a_conversation() -> None:
    with pytest.raises(ValueError, match="records no conversation"):
        attribute(Episode("t"), SC)
    assert isinstance(attribute(_ep([], success=False), Scenario()), Attribution)


def test_scenario_refuses_bad_fields() -> None:
    with pytest.raises(ValueError, match="disclose names facts the scenario does not give"):
        Scenario(facts={"a": "1"}, disclose=["b"])
    with pytest.raises(ValueError, match=r"patterns\['x'\] is not a regular expression"):
        Scenario(patterns={"x": "("})
    with pytest.raises(ValueError, match="max_turns must be an int >= 1, got 0"):
        Scenario(max_turns=0)
    with pytest.raises(TypeError, match=r"Scenario.facts\['a'\] must be a str"):
        Scenario(facts={"a": 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="at least one non-empty phrase"):
        Scenario(goals={"g": []})
    assert Scenario.from_dict(SC.to_dict()) == SC
    with pytest.raises(ValueError):
        Scenario.from_dict({"persona": "x", "mood": "angry"})


TAU = [
    {
        "task_id": 7,
        "trial": 1,
        "reward": 1.0,
        "info": {
            "task": {
                "instruction": "You are ana@example.com; cancel order #W1000001 and #W1000002."
            },
            "user_cost": 0.003,
        },
        "traj": [
            {"role": "system", "content": "wiki"},
            {"role": "user", "content": "Cancel #W1000001 and #W1000002, I'm ana@example.com"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "cancel_pending_order",
                            "arguments": '{"order_id": "#W1000001"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "cancel_pending_order", "content": "ok"},
            {"role": "assistant", "content": "Both cancelled."},
            {"role": "user", "content": "###STOP###"},
        ],
    },
    {"task_id": 8, "trial": 0, "reward": 0.0, "info": {"error": "env crashed"}, "traj": []},
]


def test_taubench_import(tmp_path: object) -> None:
    path = tmp_path / "results.json"  # type: ignore[operator]
    path.write_text(json.dumps(TAU))
    ok, broken = read_taubench(path)
    assert (ok.task_id, ok.trial, ok.success) == ("7", 1, True)
    assert [(s.tool, dict(s.args), s.observation) for s in ok.trajectory] == [
        ("cancel_pending_order", {"order_id": "#W1000001"}, "ok")
    ]
    msgs = ok.metadata["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "assistant", "user"]
    assert len(msgs[1]["tool_calls"]) == 1 and msgs[3]["stop"] is True
    assert [(c.role, c.dollars) for c in ok.cost] == [("simulator", 0.003)]
    assert ok.agent_cost.dollars is None  # the simulator's spend is not the agent's
    sc = scenario_from_taubench(TAU[0]["info"]["task"])  # type: ignore[index]
    assert sc.facts == {
        "order_id": "#W1000001",
        "order_id_2": "#W1000002",
        "email": "ana@example.com",
    }
    assert check_simulator(msgs, sc) == ()
    assert (broken.success, broken.error) == (False, "environment: env crashed")
    assert attribute(broken, sc).party == "environment"


def test_taubench_import_refuses_junk(tmp_path: object) -> None:
    bad = tmp_path / "bad.json"  # type: ignore[operator]
    bad.write_text("{nope")
    with pytest.raises(ValueError, match="not a tau-bench results file"):
        read_taubench(bad)
    with pytest.raises(ValueError, match="result 0: a tau-bench result needs 'task_id' and 'traj'"):
        read_taubench([{"reward": 1}])
    with pytest.raises(ValueError, match=r"traj\[0\] must be a message mapping"):
        read_taubench([{"task_id": 1, "traj": ["hi"]}])
    with pytest.raises(TypeError, match="expects a results path or a list"):
        read_taubench(42)
    with pytest.raises(ValueError, match="needs an 'instruction' text"):
        scenario_from_taubench({})


def test_attribute_run_over_imported_taubench_failures() -> None:
    from ek.agents.simulate import attribute_run

    leaky = {
        "task_id": 9,
        "trial": 0,
        "reward": 0.0,
        "info": {"task": {"instruction": "Cancel #W1000001."}},
        "traj": [
            {"role": "user", "content": "Cancel #W1000003"},
            {"role": "assistant", "content": "No."},
        ],
    }
    eps = read_taubench([*TAU, leaky])
    tasks = {str(r["task_id"]): r for r in [*TAU, leaky]}

    def scenario(ep: Episode) -> Scenario:
        task = tasks[ep.task_id].get("info", {}).get("task", {"instruction": ""})
        return scenario_from_taubench(task)

    res = attribute_run(eps, scenario)
    # task 7 passed (not attributed); task 8: environment error; task 9: a contradicted order id
    assert (res.failed, dict(res.by_party)) == (2, {"agent": 0, "simulator": 1, "environment": 1})
    assert dict(res.by_fault) == {"contradicted": 1}
    assert [k for k, _ in res.trials] == [("8", 0), ("9", 0)]
    assert res.to_dict()["reason"] == "2 failed trial(s): agent 0, simulator 1, environment 1"
    with pytest.raises(ValueError, match="no scenario for task '8'"):
        attribute_run(eps, {"9": SC})
