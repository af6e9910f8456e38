"""Quickstart: score a handful of agent episodes with ek, offline, in a few lines.

Run it with ``python examples/quickstart.py`` (``make demo`` runs the full demo suite).

It shows the two numbers ek is built around: whether each episode completed its task (judged
on the final state, not the text) and what one *successful* task costs (Cost-of-Pass), plus how
ek refuses to invent a dollar figure for a model it has no price for.
"""

from __future__ import annotations

from ek.agents.base import Cost, Episode, Step
from ek.agents.cost import cost_report, per_million
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.evaluate import evaluate

# Illustrative prices (USD per million tokens), declared here on purpose: ek ships no prices.
PRICES = {
    "small-model": per_million(0.15, 0.60, cache_read=0.075),
    "large-model": per_million(2.50, 10.00, cache_read=1.25),
}

GOAL = {"A1": "refunded", "B2": "shipped"}

episodes = [
    Episode(
        task_id="refund-A1",
        trajectory=[
            Step("get_order", {"order_id": "A1"}, observation={"status": "delivered"}),
            Step("refund_order", {"order_id": "A1", "amount": 25.0}, observation="ok"),
        ],
        output="Refunded order A1.",
        final_state={"A1": "refunded", "B2": "shipped"},
        cost=Cost(
            input_tokens=3_000, cache_read_tokens=9_000, output_tokens=400, model="large-model"
        ),
        trial=0,
    ),
    Episode(
        task_id="refund-A1",
        trajectory=[Step("refund_order", {"order_id": "B2", "amount": 25.0}, observation="ok")],
        output="Refunded order A1.",  # the text claims success ...
        final_state={"A1": "delivered", "B2": "refunded"},  # ... the database says otherwise
        cost=Cost(input_tokens=2_000, output_tokens=150, model="small-model"),
        trial=1,
    ),
    Episode(
        task_id="refund-A1",
        trajectory=[
            Step("get_order", {"order_id": "A1"}, observation={"status": "delivered"}),
            Step("refund_order", {"order_id": "A1", "amount": 25.0}, observation="ok"),
        ],
        output="Done.",
        final_state={"A1": "refunded", "B2": "shipped"},
        cost=Cost(input_tokens=2_500, output_tokens=300, model="small-model"),
        trial=2,
    ),
]
golds = [GOAL] * len(episodes)


def main() -> None:
    success = evaluate(TaskSuccessMetric(check="final_state"), episodes, golds)
    cop = evaluate(CostPerSuccessMetric(check="final_state", prices=PRICES), episodes, golds)
    print("ek-agents quickstart: 3 trials of one refund task, judged on the final database state\n")
    for ep, s, c in zip(episodes, success.scores, cop.scores):
        print(f"  trial {ep.trial}: success={s.value:.0f}  ${c.value:.6f}  ({s.reason})")
    print(f"\nsuccess rate      {success.value:.3f}   (a ratio of sums: successes / trials)")
    print(f"Cost-of-Pass      ${cop.value:.6f} per successful task (total dollars / successes)")

    verdicts = [bool(s.passed) for s in success.scores]
    report = cost_report(episodes, prices=PRICES, successes=verdicts)
    print(f"agent spend       ${report.agent_dollars:.6f} over {report.n_episodes} episodes")

    unknown = cost_report(
        episodes, prices={"large-model": PRICES["large-model"]}, successes=verdicts
    )
    print(
        f"\nwithout a price for small-model: dollars = {unknown.agent_dollars} ({unknown.reason})"
    )
    print("ek never reports an unpriced model as free.")


if __name__ == "__main__":
    main()
