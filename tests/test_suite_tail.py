"""What run_suite computes after the trials: proportional to tasks, every figure as before.

The reliability report (a bootstrap over tasks: n_resamples x tasks draws) is built when
``SuiteResult.reliability`` is first read, from the per-task counts, and kept; everything else
(counts, cost, slices, metric aggregates) is built when the run ends, each slice read from its
tasks' positions instead of a scan of every trial. The figures must be exactly those of
``reliability()`` / ``cost_report()`` / ``metric.aggregate()`` called directly.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import pytest

import ek.agents._result as suite_module
from ek.agents import Adaptive, InfraError, consistency
from ek.agents.base import Cost, Episode, RunProvenance, Step, TaskSpec
from ek.agents.cost import cost_report, per_million
from ek.agents.harness import TrialContext, run_suite
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.reliability import DeterministicAgentWarning, reliability
from ek.agents.toolcalls import ToolCallMetric

PRICE = per_million(1.0, 4.0)


def _agent(task: TaskSpec, context: TrialContext) -> Episode:
    """Seeded: right 60% of the time, with a priced cost and one tool call."""
    r = context.rng
    ok = r.random() < 0.6
    return Episode(
        task.task_id,
        output=task.gold if ok else None,
        trajectory=[Step("lookup", {"id": task.task_id})],
        cost=Cost(input_tokens=1000 + r.randrange(500), output_tokens=r.randrange(300)),
    )


def _tasks(n: int = 12) -> list[TaskSpec]:
    # slice "easy"/"hard" alternating by thirds; "tools" a tag on every third task
    kinds = [("easy", ()), ("hard", ()), ("easy", ("tools",))]
    return [
        TaskSpec(
            f"t{i}",
            gold=i,
            gold_calls=[Step("lookup", {"id": f"t{i}"})],
            slice=kinds[i % 3][0],
            tags=kinds[i % 3][1],
        )
        for i in range(n)
    ]


def _run(**kw: Any) -> Any:
    return run_suite(
        _agent,
        _tasks(),
        k=5,
        seed=11,
        price=PRICE,
        metrics=[TaskSuccessMetric(), CostPerSuccessMetric(), ToolCallMetric()],
        **kw,
    )


def test_reliability_equals_the_direct_call_with_slices() -> None:
    res = _run(confidence=0.9, n_resamples=300)
    slices: dict[str, list[str]] = {}
    for t in res.tasks:
        for s in t.slices:
            slices.setdefault(s, []).append(t.task_id)
    direct = reliability(
        dict(res.counts), 5, slices=slices, confidence=0.9, n_resamples=300, seed=11
    )
    assert res.reliability.to_dict() == direct.to_dict()
    assert set(res.reliability.slices) == {"easy", "hard", "tools"}
    assert res.to_dict()["reliability"] == direct.to_dict()


def test_reliability_is_built_once_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = suite_module.reliability

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(suite_module, "reliability", counting)
    res = _run(n_resamples=50)
    assert calls == []  # not built by the run
    first = res.reliability
    assert res.reliability is first and calls == [1]
    # a changed copy (dataclasses.replace) builds its own, with the same figures
    copy = dataclasses.replace(res, elapsed=0.0)
    assert copy.reliability.to_dict() == first.to_dict() and calls == [1, 1]


@pytest.mark.filterwarnings("ignore::UserWarning")  # unequal trial counts, by design
def test_adaptive_caps_the_reliability_k_as_before() -> None:
    res = _run(adaptive=Adaptive(min_trials=3), n_resamples=50)
    assert res.reliability.k == 3
    direct = reliability(dict(res.counts), 3, slices=None, n_resamples=50, seed=11)
    assert res.reliability.pass_hat_k[3] == direct.pass_hat_k[3]


def test_deterministic_warning_comes_with_the_report() -> None:
    tasks = [TaskSpec("a", gold=1), TaskSpec("b", gold=2)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = run_suite(lambda task: 1, tasks, k=3)  # a: always right, b: always wrong
    with pytest.warns(DeterministicAgentWarning):
        rep = res.reliability
    assert any("deterministic" in w for w in rep.warnings)


def test_a_run_of_only_infrastructure_errors_returns_and_says_why_on_read() -> None:
    def down(task: TaskSpec) -> None:
        raise InfraError("503")

    res = run_suite(down, [TaskSpec("a", gold=1)], k=2, max_retries=0)
    assert res.n_trials == 0 and dict(res.infra_errors) == {"a": 2}
    with pytest.raises(ValueError, match="at least one trial"):
        _ = res.reliability


@pytest.mark.parametrize(
    ("option", "match"),
    [({"confidence": 1.5}, "confidence"), ({"n_resamples": 0}, "n_resamples")],
)
def test_bad_interval_options_refused_before_any_trial(option: dict[str, Any], match: str) -> None:
    ran: list[str] = []

    def agent(task: TaskSpec) -> int:
        ran.append(task.task_id)
        return 1

    with pytest.raises(ValueError, match=match):
        run_suite(agent, [TaskSpec("a", gold=1)], **option)
    assert ran == []


def test_slices_equal_the_figures_of_their_trials() -> None:
    res = _run(n_resamples=50)
    mets = {m.name: m for m in (TaskSuccessMetric(), CostPerSuccessMetric(), ToolCallMetric())}
    for name, sl in res.slices.items():
        ids = set(sl.task_ids)
        idx = [j for j, ep in enumerate(res.episodes) if ep.task_id in ids]
        eps = [res.episodes[j] for j in idx]
        oks = [res.verdicts[j] for j in idx]
        assert sl.n_trials == len(idx) and sl.n_successes == sum(oks), name
        assert sl.cost == cost_report(eps, price=PRICE, successes=oks), name
        for m, agg in sl.metrics.items():
            scores = [res.scores[m][j] for j in idx]
            assert agg == mets[m].aggregate(scores), (name, m)


def test_robustness_and_consistency_use_the_run_confidence() -> None:
    res = _run(confidence=0.8, n_resamples=50)
    assert res.confidence == 0.8
    assert (
        consistency(res.counts, confidence=res.confidence).to_dict()
        == consistency(res.counts, confidence=res.confidence).to_dict()
    )
    assert res.reliability.confidence == 0.8


def test_summary_and_to_dict_figures_unchanged_by_reading_order() -> None:
    a = _run(n_resamples=100)
    b = _run(n_resamples=100)
    _ = b.reliability  # read before to_dict
    da, db = a.to_dict(), b.to_dict()
    da.pop("elapsed")
    db.pop("elapsed")
    assert da == db
    assert a.summary().counts == b.summary().counts


def test_run_provenance_seed_seeds_the_bootstrap() -> None:
    res = run_suite(_agent, _tasks(6), k=3, run=RunProvenance(agent="x", seed=5), n_resamples=40)
    direct = reliability(
        dict(res.counts),
        3,
        slices={"easy": ["t0", "t2", "t3", "t5"], "hard": ["t1", "t4"], "tools": ["t2", "t5"]},
        n_resamples=40,
        seed=5,
    )
    assert res.reliability.to_dict() == direct.to_dict()
