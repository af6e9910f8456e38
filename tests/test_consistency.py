"""Consistency and flakiness per task (issue 21), through the real run_suite, load_run and gate."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ek.agents import consistency, flip_rate
from ek.agents.base import RunProvenance, TaskSpec
from ek.agents.harness import TrialContext, agent_regression_gate, load_run, run_suite

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _sim(probs: dict[str, float]):  # type: ignore[no-untyped-def]
    def agent(task: TaskSpec, ctx: TrialContext) -> str:
        return "ok" if ctx.rng.random() < probs[task.task_id] else "no"

    return agent


def test_hand_derived_report() -> None:
    # a: 4/4 all-pass; b: 0/4 all-fail; c: 2/4 mixed, flip 2*2*2/(4*3) = 2/3;
    # d: 4/5 mixed, flip 2*4*1/(5*4) = 0.4; e: a single trial (left out of the share).
    r = consistency({"a": (4, 4), "b": (4, 0), "c": (4, 2), "d": (5, 4), "e": (1, 1)})
    assert [t.outcome for t in r.tasks] == ["all-pass", "all-fail", "mixed", "mixed", "single"]
    assert r.n_consistent == 2 and r.n_tasks == 4 and r.share.point == 0.5
    # ranked by trials first (d has 5), then flip rate
    assert [t.task_id for t in r.flakiest] == ["d", "c"]
    assert r.mean_flip_rate == pytest.approx((0 + 0 + 2 / 3 + 0.4) / 4)
    assert r.share.low < 0.5 < r.share.high


@given(st.integers(2, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_flip_rate_is_the_chance_two_trials_disagree(nc: tuple[int, int]) -> None:
    n, c = nc
    # ordered pairs of distinct trials that disagree over all ordered pairs
    pairs = 2 * c * (n - c)
    assert flip_rate(n, c) == pytest.approx(pairs / (n * (n - 1)))
    assert (flip_rate(n, c) == 0) == (c in (0, n))


def test_run_suite_store_and_report_agree(tmp_path: Path) -> None:
    probs = {"sure": 1.0, "never": 0.0, "coin": 0.5, "mostly": 0.9}
    tasks = [TaskSpec(t, gold="ok") for t in probs]
    store = tmp_path / "s.jsonl"
    res = run_suite(_sim(probs), tasks, k=8, seed=2, store=store)
    rep = consistency(res.counts, confidence=res.confidence)
    assert {t.task_id: t.outcome for t in rep.tasks}["sure"] == "all-pass"
    assert {t.task_id: t.outcome for t in rep.tasks}["never"] == "all-fail"
    assert rep.flakiest and rep.flakiest[0].task_id == "coin"
    assert consistency(load_run(store).counts).to_dict() == rep.to_dict()


def test_gate_holds_consistency() -> None:
    run = RunProvenance(agent="a")
    tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(40)]
    steady = run_suite(_sim({t.task_id: 1.0 for t in tasks}), tasks, k=6, run=run)
    # every task now succeeds 60% of the time: nearly every task is mixed (0.6^6 + 0.4^6 ≈ 5%
    # of tasks stay consistent), a regression the success check also sees
    flaky = run_suite(_sim({t.task_id: 0.6 for t in tasks}), tasks, k=6, run=run)
    g = agent_regression_gate(flaky, steady, consistency=True)
    c = {x.name: x for x in g.checks}["consistency"]
    assert c.regression and c.baseline == 1.0 and c.current < 0.2
    assert agent_regression_gate(steady, steady, consistency=True).passed
    assert "consistency" not in {x.name for x in agent_regression_gate(steady, steady).checks}


def test_single_trial_runs_are_not_gated_on_consistency() -> None:
    run = RunProvenance(agent="a")
    tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(5)]
    one = run_suite(lambda t: "ok", tasks, k=1, run=run)
    g = agent_regression_gate(one, one, consistency=True)
    assert "consistency" not in {c.name for c in g.checks}
    assert any("consistency not checked" in w for w in g.warnings)
    assert math.isnan(consistency(one.counts, confidence=one.confidence).share.point)
