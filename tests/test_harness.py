"""run_suite: calling convention, faults, verdicts, metrics wiring, concurrency, executors."""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
import time
import warnings
from typing import Any

import pytest

from ek.agents.base import Cost, Episode, RunProvenance, Step, TaskSpec, ToolSpec
from ek.agents.cost import per_million
from ek.agents.harness import (
    HarnessError,
    ProgressEvent,
    TrialContext,
    arun_suite,
    run_suite,
    trial_seed,
)
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.base import Score

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _tasks(n: int = 4, **kw: Any) -> list[TaskSpec]:
    return [TaskSpec(f"t{i}", input=i, gold=i * 2, **kw) for i in range(n)]


def double(task: TaskSpec) -> int:
    return task.input * 2


# ----------------------------------------------------------------------------- basics


def test_counts_verdicts_and_order() -> None:
    # the agent is right on even inputs only: t0, t2 pass every trial, t1, t3 fail every trial
    res = run_suite(lambda t: t.input * 2 if t.input % 2 == 0 else -1, _tasks(), k=3)
    assert dict(res.counts) == {"t0": (3, 3), "t1": (3, 0), "t2": (3, 3), "t3": (3, 0)}
    assert [(e.task_id, e.trial) for e in res.episodes][:4] == [
        ("t0", 0),
        ("t0", 1),
        ("t0", 2),
        ("t1", 0),
    ]
    assert res.verdicts == tuple(e.success for e in res.episodes)
    assert res.success_rate == 0.5  # 6 of 12
    assert res.reliability.success_rate.point == 0.5
    assert res.agent_failures == 0 and res.resumed == 0 and res.store is None


def test_agent_reported_success_is_not_trusted() -> None:
    # the agent claims success; the checker (output == gold) says otherwise
    res = run_suite(lambda t: Episode(t.task_id, output="wrong", success=True), _tasks(2), k=1)
    assert res.verdicts == (False, False)
    assert all(e.success is False for e in res.episodes)


def test_checker_receives_task_gold() -> None:
    seen: list[Any] = []

    def check(ep: Episode, gold: Any) -> bool:
        seen.append(gold)
        return True

    run_suite(double, _tasks(3), k=1, check=check, concurrency=1)
    assert sorted(seen) == [0, 2, 4]


def test_async_checker_is_awaited() -> None:
    async def check(ep: Episode, gold: Any) -> bool:
        await asyncio.sleep(0)
        return ep.output == gold

    res = run_suite(double, _tasks(3), k=1, check=check)
    assert res.success_rate == 1.0


# ----------------------------------------------------------------------------- calling convention


@pytest.mark.parametrize(
    "agent",
    [
        double,
        lambda task, context: task.input * 2,
        lambda task: {"output": task.input * 2, "trajectory": [{"tool": "calc"}]},
    ],
)
def test_sync_agent_forms(agent: Any) -> None:
    res = run_suite(agent, _tasks(3), k=2)
    assert res.success_rate == 1.0


def test_async_agent_and_context() -> None:
    contexts: list[TrialContext] = []

    async def agent(task: TaskSpec, context: TrialContext) -> int:
        contexts.append(context)
        await asyncio.sleep(0)
        return task.input * 2

    run = RunProvenance(agent="a", seed=11)
    res = run_suite(agent, _tasks(2), k=2, run=run)
    assert res.success_rate == 1.0
    assert sorted((c.task_id, c.trial) for c in contexts) == [
        ("t0", 0),
        ("t0", 1),
        ("t1", 0),
        ("t1", 1),
    ]
    for c in contexts:
        assert c.seed == trial_seed(11, c.task_id, c.trial)
        assert c.run == run and c.k == 2


def test_callable_object_with_async_call() -> None:
    class Agent:
        async def __call__(self, task: TaskSpec) -> int:
            return task.input * 2

    assert run_suite(Agent(), _tasks(2)).success_rate == 1.0


def test_episode_result_gets_trial_run_duration() -> None:
    run = RunProvenance(agent="x", seed=0)
    res = run_suite(lambda t: Episode(t.task_id, output=t.input * 2), _tasks(1), k=2, run=run)
    assert [e.trial for e in res.episodes] == [0, 1]
    assert all(e.run == run and e.duration is not None for e in res.episodes)


def test_object_result_with_attributes() -> None:
    class Out:
        def __init__(self, v: int) -> None:
            self.output = v
            self.trajectory = [Step("calc", {"x": v})]
            self.cost = Cost(input_tokens=10)

    res = run_suite(lambda t: Out(t.input * 2), _tasks(2))
    assert res.success_rate == 1.0
    assert res.episodes[0].trajectory.tools == ("calc",)
    assert res.episodes[0].cost[0].input_tokens == 10


def test_mapping_output_that_is_not_an_episode_is_the_output() -> None:
    gold = {"answer": 3}
    res = run_suite(lambda t: {"answer": 3}, [TaskSpec("a", gold=gold)], check="output")
    assert res.episodes[0].output == {"answer": 3}


def test_stochastic_agent_is_reproducible() -> None:
    def agent(task: TaskSpec, ctx: TrialContext) -> int:
        return task.input * 2 if ctx.rng.random() < 0.5 else -1

    a = run_suite(agent, _tasks(10), k=4, seed=5, concurrency=7)
    b = run_suite(agent, _tasks(10), k=4, seed=5, concurrency=2)
    c = run_suite(agent, _tasks(10), k=4, seed=6)
    assert a.verdicts == b.verdicts
    assert a.verdicts != c.verdicts  # 40 coin flips: equal with probability 2**-40


# ----------------------------------------------------------------------------- faults


def test_agent_exception_is_a_counted_failure() -> None:
    def agent(task: TaskSpec) -> int:
        if task.input == 1:
            raise RuntimeError("boom")
        return task.input * 2

    res = run_suite(agent, _tasks(3), k=2)
    assert res.agent_failures == 2
    failed = [e for e in res.episodes if e.error]
    assert {e.task_id for e in failed} == {"t1"}
    assert failed[0].error == "RuntimeError: boom"
    assert dict(res.counts)["t1"] == (2, 0)


def test_async_timeout() -> None:
    async def agent(task: TaskSpec) -> int:
        if task.input == 0:
            await asyncio.sleep(30)
        return task.input * 2

    res = run_suite(agent, _tasks(2), k=1, timeout=0.05)
    assert res.episodes[0].error is not None and "timeout" in res.episodes[0].error
    assert res.verdicts == (False, True)


def test_sync_timeout() -> None:
    release = threading.Event()

    def agent(task: TaskSpec) -> int:
        if task.input == 0:
            release.wait(10)
        return task.input * 2

    try:
        res = run_suite(agent, _tasks(2), k=1, timeout=0.05)
    finally:
        release.set()
    assert "timeout" in (res.episodes[0].error or "")
    assert res.agent_failures == 1


def test_wrong_task_id_and_invalid_result_are_agent_failures() -> None:
    res = run_suite(lambda t: Episode("other", output=1), _tasks(1))
    assert "other" in (res.episodes[0].error or "")
    res = run_suite(lambda t: {"output": 1, "trajectory": 5}, _tasks(1))
    assert (res.episodes[0].error or "").startswith("invalid agent result")


def test_checker_exception_is_a_harness_error(tmp_path: Any) -> None:
    def check(ep: Episode, gold: Any) -> bool:
        if ep.task_id == "t3":
            raise KeyError("db")
        return True

    store = tmp_path / "s.jsonl"
    with pytest.raises(HarnessError, match="checker"):
        run_suite(double, _tasks(6), k=1, check=check, store=store, concurrency=1)
    lines = store.read_text().splitlines()
    # header + the three trials that finished before t3 (concurrency 1, trial-major order)
    assert len(lines) == 4


def test_metric_exception_is_a_harness_error() -> None:
    class Bad:
        name, higher_is_better = "bad", True

        def __call__(self, pred: Any, gold: Any) -> Score:
            raise ZeroDivisionError("x")

        def aggregate(self, scores: Any) -> float:
            return 0.0

    with pytest.raises(HarnessError, match="metric 'bad'"):
        run_suite(double, _tasks(2), metrics=[Bad()])


def test_metric_returning_non_score_is_a_harness_error() -> None:
    class Bad:
        name, higher_is_better = "bad", True

        def __call__(self, pred: Any, gold: Any) -> float:
            return 1.0

        def aggregate(self, scores: Any) -> float:
            return 0.0

    with pytest.raises(HarnessError, match="expected a Score"):
        run_suite(double, _tasks(1), metrics=[Bad()])


# ----------------------------------------------------------------------------- metrics


def test_metrics_get_taskspec_and_aggregates() -> None:
    price = per_million(1.0, 2.0)

    def agent(task: TaskSpec) -> Episode:
        out = task.input * 2 if task.input < 2 else -1
        return Episode(task.task_id, output=out, cost=Cost(input_tokens=1_000_000))

    res = run_suite(
        agent,
        _tasks(4),
        k=1,
        metrics=[TaskSuccessMetric(), CostPerSuccessMetric(price=price)],
        price=price,
    )
    # 4 episodes x $1 each = $4 over 2 successes -> $2 per success
    assert res.metrics["cost_per_success"] == 2.0
    assert res.metrics["task_success"] == 0.5
    assert res.directions == {"task_success": True, "cost_per_success": False}
    assert res.cost.cost_of_pass == 2.0 and res.cost.agent_dollars == 4.0
    assert len(res.scores["task_success"]) == 4


def test_metric_by_registered_name_gets_price() -> None:
    res = run_suite(
        lambda t: Episode(t.task_id, output=t.input * 2, cost=Cost(output_tokens=500_000)),
        _tasks(2),
        metrics=["cost_per_success"],
        price=per_million(1.0, 2.0),
    )
    # each episode: 0.5M output tokens x $2/M = $1; 2 successes -> $1 per success
    assert res.metrics["cost_per_success"] == 1.0


class GrammarMetricWith:
    """A third-party metric that takes its grammar through ``with_grammar`` (the protocol)."""

    name, higher_is_better = "gmw", True

    def __init__(self, grammar: Any = None) -> None:
        self.grammar = grammar

    def with_grammar(self, grammar: Any) -> GrammarMetricWith:
        return GrammarMetricWith(grammar)

    def __call__(self, pred: Any, gold: Any) -> Score:
        assert isinstance(gold, TaskSpec)
        w = 0.0 if self.grammar is None else self.grammar.weight("refund")
        return Score(w, {"n": 1})

    def aggregate(self, scores: Any) -> float:
        return sum(s.value for s in scores) / len(scores)


def test_each_task_gets_its_own_grammar_through_with_grammar() -> None:
    # Task a declares refund destructive (weight 10), task b declares it plain (weight 1): no
    # suite-wide union exists (suite_grammar refuses the two declarations), and each task is
    # scored with its own. Task c declares no tools: the metric is used as given (grammar None).
    tasks = [
        TaskSpec("a", gold=1, tools=[ToolSpec("refund", destructive=True)]),
        TaskSpec("b", gold=1, tools=[ToolSpec("refund")]),
        TaskSpec("c", gold=1),
    ]
    m = GrammarMetricWith()
    res = run_suite(lambda t: 1, tasks, metrics=[m])
    assert [s.value for s in res.scores["gmw"]] == [10.0, 1.0, 0.0]
    assert m.grammar is None  # the user's object is untouched
    explicit = GrammarMetricWith(TaskSpec("x", tools=[ToolSpec("refund", weight=3.0)]).grammar())
    res = run_suite(lambda t: 1, tasks, metrics=[explicit])
    assert [s.value for s in res.scores["gmw"]] == [3.0, 3.0, 3.0]  # a grammar given is kept


def test_duplicate_metric_names_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        run_suite(double, _tasks(1), metrics=[TaskSuccessMetric(), TaskSuccessMetric()])


# ----------------------------------------------------------------------------- slices, progress


def test_slices() -> None:
    tasks = [
        TaskSpec(f"t{i}", input=i, gold=i * 2, slice="lo" if i < 2 else "hi") for i in range(4)
    ]
    res = run_suite(lambda t: t.input * 2 if t.input != 3 else 0, tasks, k=2)
    assert set(res.slices) == {"lo", "hi"}
    assert res.slices["lo"].n_successes == 4 and res.slices["hi"].n_successes == 2
    assert set(res.reliability.slices) == {"lo", "hi"}
    assert res.summary().slices == {"lo": ("t0", "t1"), "hi": ("t2", "t3")}


def test_progress_events() -> None:
    events: list[ProgressEvent] = []
    run_suite(double, _tasks(3), k=2, progress=events.append)
    assert events[0].done == 0 and events[0].task_id is None
    assert [e.done for e in events] == list(range(7))
    assert all(e.total == 6 for e in events)


def test_progress_exception_is_a_harness_error() -> None:
    def bad(e: ProgressEvent) -> None:
        if e.done:
            raise ValueError("tty gone")

    with pytest.raises(HarnessError):
        run_suite(double, _tasks(2), progress=bad)


# ----------------------------------------------------------------------------- concurrency


def test_concurrency_is_bounded_for_async_agents() -> None:
    live = peak = 0

    async def agent(task: TaskSpec) -> int:
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.002)
        live -= 1
        return task.input * 2

    run_suite(agent, _tasks(20), k=2, concurrency=5)
    assert 1 < peak <= 5


def test_thread_pool_executor() -> None:
    with concurrent.futures.ThreadPoolExecutor(3) as ex:
        res = run_suite(double, _tasks(5), k=2, executor=ex)
    assert res.success_rate == 1.0


def test_async_agent_in_executor() -> None:
    async def agent(task: TaskSpec) -> int:
        return task.input * 2

    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        assert run_suite(agent, _tasks(3), executor=ex).success_rate == 1.0


@pytest.mark.slow
def test_dask_local_cluster() -> None:
    distributed = pytest.importorskip("distributed")
    with (
        warnings.catch_warnings(),
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            host="127.0.0.1",
            protocol="tcp://",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        warnings.simplefilter("ignore")
        res = run_suite(
            double, _tasks(6), k=2, executor=client.get_executor(), concurrency=4, seed=1
        )
    assert res.success_rate == 1.0 and res.n_trials == 12


def test_arun_suite_inside_a_loop_and_run_suite_refuses() -> None:
    async def main() -> float:
        with pytest.raises(RuntimeError, match="arun_suite"):
            run_suite(double, _tasks(1))
        res = await arun_suite(double, _tasks(2), k=2)
        return res.success_rate

    assert asyncio.run(main()) == 1.0


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kw", "exc"),
    [
        ({"k": 0}, ValueError),
        ({"concurrency": 0}, ValueError),
        ({"timeout": -1}, ValueError),
        ({"executor": "pool"}, TypeError),
        ({"run": RunProvenance(seed=1), "seed": 2}, ValueError),
    ],
)
def test_bad_arguments(kw: dict[str, Any], exc: type[Exception]) -> None:
    with pytest.raises(exc):
        run_suite(double, _tasks(1), **kw)


def test_bad_suites() -> None:
    with pytest.raises(ValueError, match="at least one task"):
        run_suite(double, [])
    with pytest.raises(ValueError, match="unique"):
        run_suite(double, [TaskSpec("a"), TaskSpec("a")])
    with pytest.raises(TypeError):
        run_suite(double, ["a"])  # type: ignore[list-item]


def test_no_usage_means_unknown_dollars_not_zero() -> None:
    res = run_suite(double, _tasks(2), price=per_million(1, 1))
    assert res.cost.agent_dollars is None and res.cost.cost_of_pass is None
    assert not math.isnan(res.success_rate)


def test_summary_roundtrip_and_to_dict() -> None:
    res = run_suite(double, _tasks(3), k=2, metrics=[TaskSuccessMetric()])
    s = res.summary()
    assert s.n_trials == 6 and s.metrics["task_success"].value == 1.0
    d = res.to_dict()
    assert d["n_trials"] == 6 and d["reliability"]["n_trials"] == 6
    t0 = time.perf_counter()
    assert res.elapsed < time.perf_counter() - t0 + 3600  # a duration, not a timestamp


# ----------------------------------------------------------------------------- SuiteConfig


def test_suite_config_equals_keywords() -> None:
    # the same options as keywords or as one SuiteConfig give the same run
    from ek.agents.harness import SuiteConfig

    def flaky(task: TaskSpec, ctx: TrialContext) -> int:
        return task.input * 2 if ctx.rng.random() < 0.6 else -1

    kw = {"k": 3, "seed": 5, "concurrency": 2}
    a = run_suite(flaky, _tasks(4), **kw)  # type: ignore[arg-type]
    b = run_suite(flaky, _tasks(4), config=SuiteConfig(k=3, seed=5, concurrency=2))
    c = run_suite(flaky, _tasks(4), config=SuiteConfig(k=1, seed=5), k=3, concurrency=2)
    assert a.counts == b.counts == c.counts
    assert a.verdicts == b.verdicts == c.verdicts


def test_suite_config_is_frozen_and_validated() -> None:
    import dataclasses

    from ek.agents.harness import SuiteConfig

    cfg = SuiteConfig(k=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.k = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="k must be an int >= 1, got 0"):
        cfg.replace(k=0)
    with pytest.raises(ValueError, match="timeout must be a number > 0 or None, got -1"):
        SuiteConfig(timeout=-1)
    with pytest.raises(TypeError, match="config must be a SuiteConfig"):
        run_suite(double, _tasks(1), config={"k": 2})  # type: ignore[arg-type]


def test_misspelled_option_is_a_type_error() -> None:
    # run_suite no longer spells out its 17 keywords; a typo must still fail loudly
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['kk'\]"):
        run_suite(double, _tasks(1), kk=3)  # type: ignore[call-arg]

    async def main() -> None:
        with pytest.raises(TypeError, match=r"arun_suite\(\) got unexpected"):
            await arun_suite(double, _tasks(1), timout=1.0)  # type: ignore[call-arg]

    asyncio.run(main())


def test_async_agent_timeout_through_the_one_helper() -> None:
    # an async agent that never answers within the limit is an agent failure, not a hang
    async def slow(task: TaskSpec) -> int:
        await asyncio.sleep(30)
        return 0

    res = run_suite(slow, _tasks(2), timeout=0.05)
    assert res.agent_failures == 2
    assert all(e.error == "timeout: no result within 0.05s" for e in res.episodes)
