"""The harness as plain parts (issue 31): the reports of the features beyond pass^k are
functions over a result, and a result round-trips through its store and its baseline.

The expected figures below were read from the demo suite with the methods these functions
replaced (``SuiteResult.robustness``, ``.budget_curve``, ``.budget_hits``, ``.trials_saved``,
``.consistency``) at commit 0ec8ac6, with the same agents, seeds and options.
"""

from __future__ import annotations

import warnings

import pytest

from ek.agents import (
    Adaptive,
    Budget,
    Fault,
    FaultPlan,
    budget_curve,
    consistency,
    robustness,
    trials_saved,
)
from ek.agents.demo import (
    DEMO_PRICES,
    baseline_agent,
    candidate_agent,
    load_tasks,
    replayed_state_match,
)
from ek.agents.harness import (
    SuiteResult,
    load_agent_baseline,
    load_run,
    run_suite,
    save_agent_baseline,
)
from ek.agents.metrics import CostPerSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

#: The demo's fault plan: the order look-up fails on half of its calls.
DEMO_FAULTS = FaultPlan([Fault("error", tools=["get_order"], rate=0.5)])


def demo_metrics() -> list[object]:
    """The demo's metrics: Cost-of-Pass, tool calls and trajectory."""
    cps = CostPerSuccessMetric(check=replayed_state_match, prices=DEMO_PRICES)
    return [cps, ToolCallMetric(), TrajectoryMetric()]


def _quiet_run(agent, **kw) -> SuiteResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the demo agents' reliability warnings
        return run_suite(agent, load_tasks(), check=replayed_state_match, **kw)


@pytest.fixture(scope="module")
def faulted() -> SuiteResult:
    """The candidate, k = 3, clean and under the demo's fault, each trial capped at 4 steps."""
    return _quiet_run(
        candidate_agent(),
        k=3,
        metrics=demo_metrics(),
        prices=DEMO_PRICES,
        faults=DEMO_FAULTS,
        budget=Budget(steps=4),
    )


def test_robustness_is_the_old_method(faulted: SuiteResult) -> None:
    (row,) = robustness(faulted)
    # clean 44/90, under the fault 37/90: 37/90 - 44/90 = -7/90 = -0.0778 (Newcombe interval)
    assert row.fault == "error:get_order"
    assert (row.n_clean, row.c_clean, row.n_fault, row.c_fault) == (90, 44, 90, 37)
    assert row.difference.point == pytest.approx(-7 / 90)
    assert row.difference.low == pytest.approx(-0.21753919029188581)
    assert row.difference.high == pytest.approx(0.06644139685868827)
    assert faulted.to_dict()["robustness"] == [row.to_dict()]
    clean_only = _quiet_run(candidate_agent(), k=1)
    assert robustness(clean_only) == ()  # no faults= run: no rows


def test_budget_curve_and_hits_are_the_old_methods(faulted: SuiteResult) -> None:
    steps = budget_curve(faulted, "steps")
    # the old method's curve: 0 successes within 0 steps, 3/90 within 1, 36/90 within 2,
    # and 44/90 from 3 steps on (the 4-step budget stopped 39 trials)
    assert steps.caps == tuple(float(c) for c in range(11))
    assert steps.rates[:4] == pytest.approx((0.0, 3 / 90, 36 / 90, 44 / 90))
    assert steps.rates[3:] == pytest.approx((44 / 90,) * 8)
    dollars = budget_curve(faulted)  # priced as the run was (the demo's prices)
    mid = dollars.caps[len(dollars.caps) // 2]
    assert len(dollars.caps) == 90
    assert mid == pytest.approx(0.00068487)
    assert dollars.rate_at(mid) == pytest.approx(40 / 90)  # 0.4444
    assert dict(faulted.budget_hits) == {"steps": 39}
    assert faulted.to_dict()["budget_hits"] == {"steps": 39}


@pytest.mark.filterwarnings("ignore:unequal trial counts")  # the adaptive run's, by design
def test_consistency_and_trials_saved_are_the_old_methods(faulted: SuiteResult) -> None:
    rep = consistency(faulted.counts, confidence=faulted.confidence, top=3)
    assert rep.n_consistent == 27 and rep.n_tasks == 30
    adaptive = _quiet_run(baseline_agent(), k=6, adaptive=Adaptive(min_trials=2))
    # 30 tasks x 6 trials = 180; 80 ran (every task's first 2, then 4 more on 5 unsettled
    # tasks), so 100 were saved
    assert (trials_saved(adaptive), adaptive.n_trials) == (100, 80)
    assert adaptive.to_dict()["adaptive"]["trials_saved"] == 100
    assert trials_saved(faulted) == 0  # no adaptive rule


def test_a_result_round_trips_through_its_store_and_its_baseline(tmp_path) -> None:
    store = tmp_path / "run.jsonl"
    kw = dict(k=3, metrics=demo_metrics(), prices=DEMO_PRICES, store=store)
    first = _quiet_run(candidate_agent(), **kw)
    again = _quiet_run(candidate_agent(), **kw)  # every trial read back from the store
    assert (first.resumed, again.resumed) == (0, 90)
    a, b = first.to_dict(), again.to_dict()
    for key in ("elapsed", "resumed"):
        a.pop(key), b.pop(key)
    assert a == b
    assert [e.to_dict() for e in first.episodes] == [e.to_dict() for e in again.episodes]
    assert first.verdicts == again.verdicts and dict(first.scores) == dict(again.scores)
    # the summary a baseline persists is what a report reads from the store
    path = tmp_path / "baseline.json"
    save_agent_baseline(first, path)
    saved, read = load_agent_baseline(path), load_run(store)
    assert dict(saved.counts) == dict(read.counts) == dict(first.counts)
    for name, m in saved.metrics.items():
        assert m.value == pytest.approx(first.metrics[name])
        assert read.metrics[name].value == pytest.approx(first.metrics[name])
