"""The demo's conversational part: a retail task pair run with two user simulators.

Two tasks (refund an order, cancel an order) are conversations: the simulated user opens,
the agent asks for what it needs, confirms, then acts. The same conversational agent runs them
twice, once with a :class:`~ek.agents.simulate.ScriptedSimulator` (the turns listed in each
task) and once with an :class:`~ek.agents.simulate.LLMSimulator` around an offline fake model
that sometimes misbehaves as real simulators do (it invents an order id, plays the agent, or
stops before saying what it wants). The report puts the two runs side by side: pass^k over the
trials counted, and the trials the simulator spoiled, re-run with fresh seeds and, when still
spoiled, set apart and counted (never the agent's failures).

Example:
    >>> res = run_conversations(k=4, seed=0)
    >>> sorted(res), res["scripted"].n_infra_errors
    (['llm', 'scripted'], 0)
"""

from __future__ import annotations

import json
import os
import random
import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from ek.agents.base import Cost, Episode, RunProvenance, Step, TaskSpec
from ek.agents.cost import per_million
from ek.agents.policy import Confirm, PolicyMetric
from ek.agents.simulate import (
    Conversation,
    ConversationAgent,
    LLMSimulator,
    Scenario,
    ScriptedSimulator,
)

__all__ = [
    "CONVERSATION_STORES",
    "conversation_part",
    "conversation_tasks",
    "format_conversations",
    "run_conversations",
]

#: The trial stores of the conversational part, in the demo folder (one a simulator).
CONVERSATION_STORES = ("conversations.scripted.trials.jsonl", "conversations.llm.trials.jsonl")

_ORDER = re.compile(r"#W\d{7}")

#: ILLUSTRATIVE prices (USD per million tokens) of this part's two made-up models.
CONVERSATION_PRICES = {
    "demo-agent": per_million(0.15, 0.60, source="illustrative"),
    "demo-user-model": per_million(0.40, 1.60, source="illustrative"),
}


def _scenario(goal: str, order: str, phrases: list[str]) -> Scenario:
    return Scenario(
        persona="A customer of the demo shop",
        instructions=f"You want to {goal} your order {order}.",
        facts={"order_id": order, "pin": "4321"},
        disclose=["order_id"],
        patterns={"order_id": r"#W\d{7}"},
        goals={goal: phrases},
        script=[f"Hi, I'd like to {goal} my order {order}.", "Yes, please go ahead."],
        max_turns=5,
    )


def conversation_tasks() -> list[TaskSpec]:
    """The conversational task pair (gold: the final state the shop must be left in)."""
    return [
        TaskSpec(
            "conv-refund",
            gold={"refunded": "#W2000001"},
            slice="conversation",
            scenario=_scenario("refund", "#W2000001", ["refund", "money back"]),
        ),
        TaskSpec(
            "conv-cancel",
            gold={"cancelled": "#W2000002"},
            slice="conversation",
            scenario=_scenario("cancel", "#W2000002", ["cancel"]),
            # the shop's policy: the customer's explicit "yes" after the agent described the
            # cancellation and before the call (ek.agents.policy; PolicyMetric in the run)
            policies=(Confirm("cancel_pending_order", describe="cancel"),),
        ),
    ]


def conversational_agent(conv: Conversation) -> dict[str, Any]:
    """The demo's conversational agent: asks for the order, confirms, acts. On one
    conversation in five (by its seed) it misreads the order id: a real agent failure."""
    users = [str(m["content"]) for m in conv.messages if m["role"] == "user"]
    orders = [o for u in users for o in _ORDER.findall(u)]
    wants = "cancel" if any("cancel" in u.lower() for u in users) else "refund"
    spend = Cost(input_tokens=400 + 60 * len(conv.messages), output_tokens=40, model="demo-agent")
    if not orders:
        return {"content": "Which order is it about?", "cost": spend}
    order = orders[-1]
    if "go ahead" not in users[-1].lower() and "yes" not in users[-1].lower():
        return {"content": f"I can {wants} order {order}. Shall I go ahead?", "cost": spend}
    if random.Random(conv.seed).random() < 0.2:
        order = order[:-1] + str((int(order[-1]) + 1) % 10)  # misread
    tool = "cancel_pending_order" if wants == "cancel" else "refund_order"
    state = {("cancelled" if wants == "cancel" else "refunded"): order}
    step = Step(tool, {"order_id": order}, observation="ok")
    return {"content": f"Done: {order}.", "trajectory": [step], "final_state": state, "cost": spend}


def fake_user_model(messages: list[Mapping[str, str]], seed: int) -> dict[str, Any]:
    """An offline stand-in for an LLM playing the user: reads its brief from the system
    prompt; on some seeds misbehaves (invents an order id 10 %, plays the agent 8 %, stops
    before saying what it wants 6 %)."""
    system = messages[0]["content"]
    facts = json.loads(re.search(r"\{.*?\}", system).group(0))  # type: ignore[union-attr]
    goal = "cancel" if "to cancel" in system else "refund"
    mine = sum(m["role"] == "assistant" for m in messages)  # the user's own turns so far
    roll = random.Random(seed).random()
    if mine == 0 and roll < 0.10:
        text = f"Hello, please {goal} order #W9{facts['order_id'][3:]}."  # invents an order id
    elif mine == 0 and roll < 0.16:
        text = "Hi! ###STOP###"  # stops before saying what it wants
    elif mine == 0:
        text = f"Hello, please {goal} order {facts['order_id']}."
    elif "go ahead" in messages[-1]["content"].lower():
        text = "Agent: I have processed it for you." if roll < 0.08 else "Yes, go ahead."
    elif mine == 1 and "which order" in messages[-1]["content"].lower():
        text = f"It is {facts['order_id']}."
    else:
        text = "Thank you! ###STOP###"
    prompt = sum(len(m["content"]) for m in messages)
    return {
        "content": text,
        "usage": {"input_tokens": prompt // 4, "output_tokens": len(text) // 4},
    }


def state_matches(ep: Episode, gold: Any) -> bool:
    """The checker: the shop is left in the gold state."""
    return ep.final_state == gold


def _simulators() -> dict[str, Any]:
    return {
        "scripted": ScriptedSimulator(),
        "llm": LLMSimulator(fake_user_model, model_name="demo-user-model", version="1"),
    }


def run_conversations(
    *,
    k: int = 5,
    seed: int = 0,
    stores: Callable[[str], str | None] = lambda name: None,
    max_reruns: int = 1,
) -> dict[str, Any]:
    """Run the task pair with each simulator: ``{simulator name: SuiteResult}``.

    Args:
        k: Trials per task.
        seed: The run seed.
        stores: The trial store path of each simulator's run (``None``: no store).
        max_reruns: Re-runs of a spoiled conversation with a fresh seed.
    """
    from ek.agents.harness import run_suite

    out = {}
    for name, sim in _simulators().items():
        agent = ConversationAgent(conversational_agent, sim, max_reruns=max_reruns)
        run = RunProvenance(agent="demo-conversational", simulator=agent.simulator_id, seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deterministic-agent warnings: shown in the table
            out[name] = run_suite(
                agent,
                conversation_tasks(),
                k=k,
                check=state_matches,
                metrics=[PolicyMetric()],
                run=run,
                store=stores(name),
                prices=CONVERSATION_PRICES,
            )
    return out


def _spoiled_runs(res: Any, max_reruns: int) -> int:
    """Conversations the simulator spoiled: those re-run inside kept trials, and every run of
    the trials set apart."""
    kept = sum(len(ep.metadata["conversation"].get("spoiled", ())) for ep in res.episodes)
    return kept + res.n_infra_errors * (max_reruns + 1)


def _usd(x: float | None) -> str:
    return "unknown" if x is None else f"{x:.4f}"


def format_conversations(results: Mapping[str, Any], max_reruns: int = 1) -> str:
    """The two runs side by side."""
    lines = [
        "== conversations: 2 retail tasks, one agent, two user simulators "
        f"(a spoiled conversation is re-run with a fresh seed up to {max_reruns} time(s))",
        f"   {'simulator':<44}{'trials':>7}{'set apart':>10}{'spoiled':>8}{'success':>9}"
        f"{'pass^k':>13}{'agent $':>9}{'user $':>9}{'$/success':>10}{'policy':>7}",
    ]
    for res in results.values():
        rel, by_role = res.reliability, res.cost.by_role
        usd = {r: by_role[r].dollars if r in by_role else 0.0 for r in ("agent", "simulator")}
        kk = max(rel.pass_hat_k)
        pk = f"{rel.pass_hat_k[kk].point:.3f} (k={kk})"
        lines.append(
            f"   {res.run.simulator:<44}{res.n_trials:>7}{res.n_infra_errors:>10}"
            f"{_spoiled_runs(res, max_reruns):>8}{rel.success_rate.point:>9.3f}{pk:>13}"
            f"{_usd(usd['agent']):>9}{_usd(usd['simulator']):>9}"
            f"{_usd(res.cost.cost_of_pass):>10}{res.metrics['policy']:>7.3f}"
        )
    lines.append(
        "   (set apart: trials the simulator spoiled on every run, not counted, like "
        "infrastructure errors; spoiled: conversations with a simulator fault; $/success: "
        "Cost-of-Pass, the agent's dollars only, at illustrative prices; policy: PolicyMetric's compliance, the cancel task's rule "
        "being the customer's explicit yes after the agent described the cancellation)"
    )
    return "\n".join(lines)


def conversation_part(
    emit: Callable[[str], None], root: str, *, k: int, seed: int
) -> dict[str, Any]:
    """The demo's conversational part: both runs into their stores in ``root``, the table
    emitted; returns ``{simulator name: SuiteResult}``."""

    def store(name: str) -> str:
        return os.path.join(root, f"conversations.{name}.trials.jsonl")

    results = run_conversations(k=k, seed=seed, stores=store)
    emit(format_conversations(results))
    return results
