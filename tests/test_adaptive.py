"""Adaptive trials (issue 21): settled tasks stop early, estimators stay within the fixed-k
interval, the stopped tasks are the same whatever the concurrency, and a resume agrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from ek.agents import Adaptive, trials_saved
from ek.agents.base import TaskSpec
from ek.agents.harness import SuiteConfig, TrialContext, run_suite

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# 30 tasks: 10 always solved, 10 never, 10 with p = 0.5
PROBS = {f"t{i}": (1.0 if i < 10 else 0.0 if i < 20 else 0.5) for i in range(30)}
TASKS = [TaskSpec(t, gold="ok") for t in PROBS]


def _agent(task: TaskSpec, ctx: TrialContext) -> str:
    return "ok" if ctx.rng.random() < PROBS[task.task_id] else "no"


def test_settled_tasks_stop_and_pass_hat_k_stays_in_the_fixed_k_interval() -> None:
    k, m = 10, 4
    fixed = run_suite(_agent, TASKS, k=k, seed=5)
    adaptive = run_suite(_agent, TASKS, k=k, seed=5, adaptive=Adaptive(min_trials=m))
    # the 20 deterministic tasks settle after m trials: 20 * (10 - 4) = 120 trials saved, plus
    # any p=0.5 task whose first 4 trials agreed (chance 2 * 0.5^4 = 1/8 each)
    n = {t: nc[0] for t, nc in adaptive.counts.items()}
    assert all(n[f"t{i}"] == m for i in range(20))
    assert trials_saved(adaptive) >= 120
    assert trials_saved(adaptive) == 30 * k - adaptive.n_trials
    # the seeds are per (task, trial): the trials run are the fixed run's first ones
    for _t, (nt, _ct) in adaptive.counts.items():
        assert nt in (m, k)
    # pass^j is reported up to min_trials, and inside the fixed-k run's interval
    assert max(adaptive.reliability.pass_hat_k) == m
    iv = fixed.reliability.pass_hat_k[m]
    assert iv.low <= adaptive.reliability.pass_hat_k[m].point <= iv.high
    sr = fixed.reliability.success_rate
    per_task_mean = sum(c / nt for nt, c in adaptive.counts.values()) / len(TASKS)
    assert sr.low <= per_task_mean <= sr.high


def test_adaptive_is_deterministic_across_concurrency_and_resume(tmp_path: Path) -> None:
    cfg = SuiteConfig(k=8, seed=1, adaptive=Adaptive(min_trials=3))
    one = run_suite(_agent, TASKS, config=cfg.replace(concurrency=1))
    many = run_suite(_agent, TASKS, config=cfg.replace(concurrency=16))
    assert dict(one.counts) == dict(many.counts)
    store = tmp_path / "s.jsonl"
    lines_cfg = cfg.replace(store=store)
    first = run_suite(_agent, TASKS, config=lines_cfg)
    text = store.read_text().splitlines()
    store.write_text("\n".join(text[: len(text) // 2]) + "\n")  # a crash half-way
    again = run_suite(_agent, TASKS, config=lines_cfg)
    assert dict(again.counts) == dict(first.counts) == dict(one.counts)
    assert 0 < again.resumed < again.n_trials


def test_min_trials_at_least_k_changes_nothing() -> None:
    fixed = run_suite(_agent, TASKS[:5], k=3, seed=2)
    same = run_suite(_agent, TASKS[:5], k=3, seed=2, adaptive=Adaptive(min_trials=3))
    assert dict(same.counts) == dict(fixed.counts) and trials_saved(same) == 0


def test_bad_adaptive_options() -> None:
    with pytest.raises(ValueError, match="min_trials must be an int >= 1"):
        Adaptive(min_trials=0)
    with pytest.raises(ValueError, match="rule must be one of"):
        Adaptive(rule="sprt")
    with pytest.raises(TypeError, match="adaptive must be"):
        SuiteConfig(adaptive=3)  # type: ignore[arg-type]
