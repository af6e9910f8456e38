"""Resuming a store never mixes two configurations of one metric (issue 18, leftover).

Before the fix the store header recorded the checker and the pricing but not the metrics, so a
resume with ``TrajectoryMetric(scheme="exact")`` over a store written with the default
``in_order`` scheme silently reused the stored ``in_order`` scores under the name
``trajectory``. Now the header records each metric's configuration
(:func:`ek.agents._fingerprint.metric_config`) and a changed one is refused; a stored score whose
configuration the header does not vouch for (a metric added on a later resume, or an old store)
is recomputed from the stored episode, never reused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ek.agents._fingerprint import metric_config
from ek.agents.base import Episode, Step, TaskSpec
from ek.agents.harness import StoreMismatchError, run_suite
from ek.agents.trajectory import TrajectoryMetric

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _tasks() -> list[TaskSpec]:
    return [TaskSpec("t", gold="ok", gold_calls=[Step("a"), Step("b")])]


def _agent(task: TaskSpec) -> Episode:
    # Extra step "x" between the gold steps: in_order passes (1.0), exact does not.
    return Episode(task.task_id, trajectory=[Step("a"), Step("x"), Step("b")], output="ok")


def test_header_records_each_metric_configuration(tmp_path: Path) -> None:
    store = tmp_path / "s.jsonl"
    m = TrajectoryMetric()
    run_suite(_agent, _tasks(), k=1, store=store, metrics=[m])
    header = json.loads(store.read_text().splitlines()[0])
    assert header["metrics"]["trajectory"] == metric_config(m)
    assert header["metrics"]["trajectory"]["settings"]["scheme"] == "in_order"


def test_resume_with_a_changed_metric_configuration_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "s.jsonl"
    first = run_suite(_agent, _tasks(), k=2, store=store, metrics=[TrajectoryMetric()])
    assert first.metrics["trajectory"] == 1.0
    with pytest.raises(StoreMismatchError, match=r"metrics\['trajectory'\].*exact"):
        run_suite(_agent, _tasks(), k=2, store=store, metrics=[TrajectoryMetric(scheme="exact")])
    # the same configuration resumes and reuses every stored trial
    again = run_suite(_agent, _tasks(), k=2, store=store, metrics=[TrajectoryMetric()])
    assert again.resumed == 2 and again.metrics["trajectory"] == 1.0


def test_metric_added_on_resume_then_changed_is_recomputed_not_mixed(tmp_path: Path) -> None:
    # run 1 has no metric (the header vouches for none); run 2 adds in_order (its new trials'
    # records carry in_order scores); run 3 asks for exact: the stored in_order scores are not
    # vouched for by the header, so every trial is scored with exact (no mixture).
    store = tmp_path / "s.jsonl"
    run_suite(_agent, _tasks(), k=2, store=store, check="output")
    lines = store.read_text().splitlines()
    store.write_text("\n".join(lines[:2]) + "\n")  # keep trial 0 only: run 2 adds trial 1
    run_suite(_agent, _tasks(), k=2, store=store, metrics=[TrajectoryMetric()])
    exact = TrajectoryMetric(scheme="exact")
    res = run_suite(_agent, _tasks(), k=2, store=store, metrics=[exact])
    assert res.resumed == 2
    direct = [exact(ep, _tasks()[0]).value for ep in res.episodes]
    assert [s.value for s in res.scores["trajectory"]] == direct
    assert all(v < 1.0 for v in direct)  # exact fails on the extra step
