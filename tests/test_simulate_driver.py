"""The conversation driver, the simulators and ConversationAgent, alone and in the real run_suite."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ek.agents.base import Cost, Episode, RunProvenance, TaskSpec
from ek.agents.harness import agent_regression_gate, run_suite
from ek.agents.simulate import (
    Conversation,
    ConversationAgent,
    LLMSimulator,
    RuleSimulator,
    Scenario,
    ScriptedSimulator,
    SimulatorError,
    SimulatorView,
    aconverse,
    converse,
    simulator_id,
)

SCENARIO = Scenario(
    persona="Ana",
    instructions="Get a refund for your order.",
    facts={"order_id": "#W1000001", "pin": "4321"},
    disclose=["order_id"],
    patterns={"order_id": r"#W\d{7}"},
    goals={"refund": ["refund"]},
    script=["I want a refund for #W1000001.", "Yes, please go ahead."],
    max_turns=4,
)
TASK = TaskSpec("refund", input="refund #W1000001", gold="#W1000001", scenario=SCENARIO)


def shop_agent(conv: Conversation) -> dict[str, Any]:
    """Refunds the order the user names, once the user confirms."""
    said = conv.last_user_message
    if "go ahead" in said:
        return {
            "content": "Refunded.",
            "trajectory": [{"tool": "refund_order", "args": {"order_id": "#W1000001"}}],
            "final_state": {"refunded": "#W1000001"},
            "cost": Cost(input_tokens=100, output_tokens=10, model="agent-m"),
        }
    return {
        "content": "Shall I refund it?",
        "cost": Cost(input_tokens=50, output_tokens=5, model="agent-m"),
    }


def refunded(ep: Episode, gold: str) -> bool:
    return isinstance(ep.final_state, dict) and ep.final_state.get("refunded") == gold


def test_scripted_conversation_is_recorded_turn_by_turn() -> None:
    ep = converse(shop_agent, TASK, ScriptedSimulator(), seed=3)
    conv = ep.metadata["conversation"]
    assert [(m["role"], m["content"]) for m in ep.metadata["messages"]] == [
        ("user", "I want a refund for #W1000001."),
        ("assistant", "Shall I refund it?"),
        ("user", "Yes, please go ahead."),
        ("assistant", "Refunded."),
        ("user", "###STOP###"),
    ]
    msgs = ep.metadata["messages"]
    assert (
        msgs[3]["tool_calls"][0]["function"]["name"] == "refund_order" and msgs[4]["stop"] is True
    )
    assert (conv["ended"], conv["seed"], conv["simulator"]) == ("simulator", 3, "scripted@1")
    assert ep.trajectory.tools == ("refund_order",)
    assert (ep.output, ep.final_state) == ("Refunded.", {"refunded": "#W1000001"})
    assert ep.agent_cost.input_tokens == 150  # 50 + 100, both agent turns


def fake_model(calls: list[Any]) -> Any:
    """A scripted offline 'LLM': opens with the order, confirms, then stops; reports usage."""

    def model(messages: list[dict[str, str]], seed: int) -> dict[str, Any]:
        calls.append((messages, seed))
        n = sum(m["role"] == "assistant" for m in messages)  # the simulated user's turns so far
        text = ["Refund #W1000001 please.", "Yes, go ahead.", "Thanks ###STOP###"][min(n, 2)]
        return {"content": text, "usage": {"input_tokens": 20, "output_tokens": 4}}

    return model


def test_llm_simulator_sees_the_users_side_and_its_cost_is_the_simulators() -> None:
    calls: list[Any] = []
    sim = LLMSimulator(fake_model(calls), model_name="user-m", version="2")
    ep = converse(shop_agent, TASK, sim, seed=10)
    system, *rest = calls[1][0]
    assert system["role"] == "system" and "#W1000001" in system["content"]
    assert "4321" not in system["content"]  # the PIN is known but not disclosable
    # the user's own turns are 'assistant', the agent's 'user' (tau-bench's convention)
    assert [m["role"] for m in rest] == ["assistant", "user"]
    assert [seed for _, seed in calls] == [10, 11, 12]  # conversation seed + turn
    sim_costs = ep.costs("simulator")
    assert [(c.model, c.input_tokens) for c in sim_costs] == [("user-m", 20)] * 3
    assert ep.agent_cost.input_tokens == 150  # the simulator's 60 input tokens are not the agent's
    assert simulator_id(sim).startswith("llm:user-m@2#")


def test_async_simulator_and_agent() -> None:
    import asyncio

    async def sim(view: SimulatorView) -> str:
        return "refund please" if view.turn == 0 else "bye ###STOP###"

    async def agent(conv: Conversation) -> str:
        return "ok"

    ep = asyncio.run(aconverse(agent, TASK, sim))
    assert [m["role"] for m in ep.metadata["messages"]] == [
        "user",
        "assistant",
        "user",
    ]
    assert ep.metadata["conversation"]["simulator"].startswith("custom:")


def test_rule_simulator_answers_from_the_facts() -> None:
    sim = RuleSimulator(
        [(r"order", "It is {order_id}."), (r"confirm|shall i", "Yes, go ahead.")],
        opening="I need a refund.",
    )
    seen: list[str] = []

    def agent(conv: Conversation) -> str:
        seen.append(conv.last_user_message)
        return ["Which order?", "Shall I refund it?", "Done."][len(seen) - 1]

    ep = converse(agent, TASK, sim)
    assert seen == ["I need a refund.", "It is #W1000001.", "Yes, go ahead."]
    assert ep.metadata["conversation"]["ended"] == "simulator"  # "Done." matches no rule


def test_turn_limit_agent_done_and_bad_replies() -> None:
    chatty = Scenario(goals={}, max_turns=2)
    t = TaskSpec("t", scenario=chatty)
    ep = converse(lambda c: "hm?", t, lambda v: "still here")
    assert ep.metadata["conversation"]["ended"] == "turn_limit"
    assert len(ep.metadata["messages"]) == 4
    done = converse(lambda c: {"content": "bye", "done": True}, t, lambda v: "hi")
    assert done.metadata["conversation"]["ended"] == "agent"
    with pytest.raises(SimulatorError, match="user turn 0: TypeError: a simulator must return"):
        converse(lambda c: "x", t, lambda v: 42)
    with pytest.raises(TypeError, match="returns text or a mapping"):
        converse(lambda c: 42, t, lambda v: "hi")
    with pytest.raises(ValueError, match="has no scenario"):
        converse(lambda c: "x", TaskSpec("plain"), ScriptedSimulator())


def test_scenario_round_trips_in_the_task() -> None:
    assert TaskSpec.from_dict(json.loads(json.dumps(TASK.to_dict()))) == TASK
    with pytest.raises(TypeError, match="scenario"):
        TaskSpec("t", scenario="be nice")


def leaky_model(messages: list[dict[str, str]], seed: int) -> str:
    """Gives the PIN away on some seeds (a simulator fault), behaves on others."""
    n = sum(m["role"] == "assistant" for m in messages)
    if n == 0:
        return "Refund #W1000001 please." + (" My PIN is 4321." if seed % 3 == 0 else "")
    return "Yes, go ahead." if n == 1 else "###STOP###"


def test_conversation_agent_reruns_spoiled_conversations_with_fresh_seeds() -> None:
    agent = ConversationAgent(
        shop_agent, LLMSimulator(leaky_model, model_name="leaky"), max_reruns=5
    )
    res = run_suite(
        agent, [TASK], k=12, check=refunded, seed=0, run=RunProvenance(simulator=agent.simulator_id)
    )
    eps = [ep for ep in res.episodes if ep.task_id == "refund"]
    spoiled = [len(ep.metadata["conversation"]["spoiled"]) for ep in eps]
    assert sum(spoiled) > 0  # some first seeds leaked and were re-run
    for ep in eps:
        for s in ep.metadata["conversation"]["spoiled"]:
            assert s["faults"][0]["kind"] == "disclosed" and s["seed"] % 3 == 0
        assert ep.metadata["conversation"]["seed"] % 3 != 0  # the kept conversation is clean
    assert res.counts["refund"] == (12, 12)
    assert res.n_infra_errors == 0


def test_always_spoiled_trials_are_set_apart_counted_and_persisted(tmp_path: Any) -> None:
    def always_leaks(messages: list[dict[str, str]]) -> str:
        return "My PIN is 4321, refund #W1000001 ###STOP###"

    agent = ConversationAgent(
        shop_agent, LLMSimulator(always_leaks, model_name="leaks"), max_reruns=1
    )
    store = tmp_path / "run.jsonl"
    res = run_suite(
        agent,
        [TASK],
        k=3,
        check=refunded,
        store=str(store),
        run=RunProvenance(simulator=agent.simulator_id),
    )
    assert res.counts.get("refund", (0, 0)) == (0, 0)  # no trial counted
    assert res.infra_errors["refund"] == 3
    again = run_suite(
        agent,
        [TASK],
        k=3,
        check=refunded,
        store=str(store),
        run=RunProvenance(simulator=agent.simulator_id),
    )
    assert again.infra_errors["refund"] == 3  # read back, not re-run
    reasons = [json.loads(x).get("infra") for x in store.read_text().splitlines()[1:]]
    assert all("SimulatorSpoiledError" in str(r) for r in reasons if r is not None)


def test_run_suite_reports_both_costs_and_keeps_cost_of_pass_the_agents() -> None:
    sim = LLMSimulator(fake_model([]), model_name="user-m")
    agent = ConversationAgent(shop_agent, sim)
    res = run_suite(
        agent, [TASK], k=2, check=refunded, run=RunProvenance(simulator=agent.simulator_id)
    )
    report = res.cost
    assert (
        report.by_role["simulator"].tokens["input_tokens"] == 2 * 60
    )  # 3 user turns of 20, 2 trials
    assert report.by_role["agent"].tokens["input_tokens"] == 2 * 150


class Crash(BaseException):
    """Stands in for the process dying mid-conversation."""


CRASH = {"at": 7, "turns": 0}  # a global, not a closure: the resumed run's agent is the same


def crashing_agent(conv: Conversation) -> Any:
    CRASH["turns"] += 1
    if CRASH["turns"] == CRASH["at"]:  # the 4th conversation's first agent turn
        raise Crash()
    return shop_agent(conv)


def test_a_crash_mid_conversation_resumes_without_losing_or_duplicating(tmp_path: Any) -> None:
    tasks = [TaskSpec(f"r{i}", gold="#W1000001", scenario=SCENARIO) for i in range(3)]
    store = tmp_path / "conv.jsonl"
    run = RunProvenance(simulator="scripted@1", seed=0)
    agent = ConversationAgent(crashing_agent, ScriptedSimulator())
    with pytest.raises(Crash):
        run_suite(agent, tasks, k=2, check=refunded, store=str(store), run=run, concurrency=1)
    stored = len(store.read_text().splitlines()) - 1  # the header, then one line a trial
    assert stored == 3  # three conversations finished before the crash
    res = run_suite(agent, tasks, k=2, check=refunded, store=str(store), run=run)
    records = [json.loads(x) for x in store.read_text().splitlines()[1:]]
    keys = [(r["task_id"], r.get("trial", 0)) for r in records if "task_id" in r]
    assert sorted(keys) == sorted(set(keys)) and len(keys) == 6  # every trial once
    assert dict(res.counts) == {"r0": (2, 2), "r1": (2, 2), "r2": (2, 2)}


def test_gate_refuses_a_changed_simulator_unless_told() -> None:
    a = ConversationAgent(
        shop_agent, LLMSimulator(fake_model([]), model_name="user-m", version="1")
    )
    b = ConversationAgent(
        shop_agent, LLMSimulator(fake_model([]), model_name="user-m", version="2")
    )
    base = run_suite(a, [TASK], k=2, check=refunded, run=RunProvenance(simulator=a.simulator_id))
    cur = run_suite(b, [TASK], k=2, check=refunded, run=RunProvenance(simulator=b.simulator_id))
    with pytest.raises(Exception, match="simulator"):
        agent_regression_gate(cur, base)
    res = agent_regression_gate(cur, base, allow_simulator_change=True)
    assert res.passed and any("user simulator changed" in w for w in res.warnings)


def test_cli_gate_refuses_a_changed_simulator_unless_flagged(tmp_path: Any) -> None:
    from ek.agents.cli import main

    stores = []
    for version in ("1", "2"):
        agent = ConversationAgent(
            shop_agent, LLMSimulator(fake_model([]), model_name="user-m", version=version)
        )
        store = str(tmp_path / f"v{version}.jsonl")
        run_suite(
            agent,
            [TASK],
            k=2,
            check=refunded,
            store=store,
            run=RunProvenance(simulator=agent.simulator_id),
        )
        stores.append(store)
    assert main(["gate", *stores]) == 2  # refused: another experiment
    assert main(["gate", *stores, "--allow-simulator-change"]) == 0


def test_the_gate_refuses_a_run_with_too_many_spoiled_trials() -> None:
    clean = ConversationAgent(
        shop_agent, LLMSimulator(leaky_model, model_name="leaky"), max_reruns=5
    )
    leaky = ConversationAgent(
        shop_agent, LLMSimulator(leaky_model, model_name="leaky"), max_reruns=0
    )
    run = RunProvenance(simulator=clean.simulator_id)
    base = run_suite(clean, [TASK], k=12, check=refunded, run=run, max_retries=0)
    cur = run_suite(leaky, [TASK], k=12, check=refunded, run=run, max_retries=0)
    assert base.n_infra_errors == 0 and 0 < cur.n_infra_errors < 12  # the seeds that leak
    agent_regression_gate(cur, base)  # no share set: the counted trials are compared
    with pytest.raises(ValueError, match="infrastructure"):
        agent_regression_gate(cur, base, max_infra_share=0.05)


def test_conversational_wraps_fills_and_refuses() -> None:
    from ek.agents.simulate import conversational

    agent, run = conversational(
        shop_agent, [TASK], RunProvenance(seed=1), ScriptedSimulator(), max_reruns=0
    )
    assert isinstance(agent, ConversationAgent) and agent.max_reruns == 0
    assert (run.simulator, run.seed) == ("scripted@1", 1)
    same, kept = conversational(agent, [TASK], run)  # already conversational, provenance right
    assert same is agent and kept is run
    with pytest.raises(
        ValueError, match="needs a scenario on every task; 1 have none: \\['plain'\\]"
    ):
        conversational(shop_agent, [TASK, TaskSpec("plain")], RunProvenance(), ScriptedSimulator())
    with pytest.raises(
        ValueError, match="run.simulator is 'gpt-user' but the simulator that runs is 'scripted@1'"
    ):
        conversational(shop_agent, [TASK], RunProvenance(simulator="gpt-user"), ScriptedSimulator())
    with pytest.raises(ValueError, match="give the simulator once"):
        conversational(agent, [TASK], RunProvenance(), ScriptedSimulator())
    plain, untouched = conversational(shop_agent, [TaskSpec("plain")], RunProvenance())
    assert plain is shop_agent and untouched.simulator is None  # not a conversational run


def test_run_suite_with_a_simulator_runs_every_task_as_a_conversation(tmp_path: Any) -> None:
    store = str(tmp_path / "run.jsonl")
    res = run_suite(
        shop_agent, [TASK], k=3, check=refunded, simulator=ScriptedSimulator(), store=store
    )
    assert dict(res.counts) == {"refund": (3, 3)}
    assert res.run.simulator == "scripted@1"  # filled in: the gate compares it
    assert all(ep.metadata["conversation"]["simulator"] == "scripted@1" for ep in res.episodes)
    again = run_suite(
        shop_agent, [TASK], k=3, check=refunded, simulator=ScriptedSimulator(), store=store
    )
    assert again.resumed == 3 and dict(again.counts) == {"refund": (3, 3)}  # read back, not re-run
    with pytest.raises(ValueError, match="needs a scenario on every task"):
        run_suite(shop_agent, [TASK, TaskSpec("plain")], simulator=ScriptedSimulator())
    with pytest.raises(ValueError, match="simulator_reruns must be an int >= 0, got -1"):
        run_suite(shop_agent, [TASK], simulator=ScriptedSimulator(), simulator_reruns=-1)
    with pytest.raises(TypeError, match="simulator must be a user simulator"):
        run_suite(shop_agent, [TASK], simulator="gpt-4o")
