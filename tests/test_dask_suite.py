"""run_suite on an Executor: batches of trials, a Dask cluster of worker processes, killed workers.

Every run here goes through the real ``run_suite`` with a real executor (a Dask ``LocalCluster``
of two worker processes with one thread each, a process pool, a thread pool) and is compared
with the same run in process: a seeded agent gives the same verdict for a trial wherever it
runs, so the counts must agree exactly. A store checks that every ``(task, trial)`` is recorded
exactly once, including when a worker process is killed in the middle of a batch.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ek.agents import InfraError
from ek.agents.base import TaskSpec
from ek.agents.harness import HarnessError, TrialContext, run_suite

K = 4


def seeded(task: TaskSpec, context: TrialContext) -> bool:
    """Right 60% of the time, reproducibly (the verdict depends only on the trial's seed)."""
    time.sleep(0.005)
    return context.rng.random() < 0.6


def killer(task: TaskSpec, context: TrialContext) -> bool:
    """``seeded``, but the first time it runs trial 1 of task t3 it kills its own process
    (SIGKILL: no cleanup, no exception, the worker is simply gone)."""
    marker = task.input["marker"]
    if task.task_id == "t3" and context.trial == 1 and not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return seeded(task, context)


def _tasks(marker: Path, n: int = 8) -> list[TaskSpec]:
    return [TaskSpec(f"t{i}", input={"marker": str(marker)}, gold=True) for i in range(n)]


def _keys(store: Path) -> list[tuple[str, int]]:
    """The ``(task, trial)`` of every trial record of a store (the header line skipped)."""
    lines = store.read_text().splitlines()[1:]
    return [(r["task_id"], r["trial"]) for r in map(json.loads, lines)]


def _in_process(tasks: list[TaskSpec]) -> dict[str, tuple[int, int]]:
    return dict(run_suite(seeded, tasks, k=K, seed=3).counts)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Callable[..., Any]]:
    """``make(allowed_failures)``: a Client on a LocalCluster of 2 worker processes x 1
    thread; clusters are closed at the end of the module."""
    distributed = pytest.importorskip("distributed")
    import cloudpickle
    import dask

    # The workers must find this module's agents under the name pytest gave it: a module-level
    # function is pickled by reference. `tests` is not a package here and a dependency may
    # install a top-level `tests` package of its own (ppi-python does), so each worker loads
    # this file under that name when it starts (a preload), rather than importing it.
    preload = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location({__name__!r}, {__file__!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        f"sys.modules[{__name__!r}] = module\n"
        "spec.loader.exec_module(module)\n"
    )
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    opened: list[Any] = []

    def make(allowed_failures: int = 3) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
                lc = distributed.LocalCluster(
                    n_workers=2,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    protocol="tcp://",
                    dashboard_address=None,
                    silence_logs=50,
                    preload=[preload],
                )
                client = distributed.Client(lc)
        opened.append((client, lc))
        return client

    yield make
    for client, lc in opened:
        client.close()
        lc.close()
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.slow
def test_dask_cluster_equals_in_process(cluster: Callable[..., Any], tmp_path: Path) -> None:
    client = cluster()
    tasks = _tasks(tmp_path / "unused")
    store = tmp_path / "run.jsonl"
    res = run_suite(
        seeded, tasks, k=K, seed=3, executor=client.get_executor(), concurrency=2, store=store
    )
    assert dict(res.counts) == _in_process(tasks)
    assert res.agent_failures == 0 and res.n_infra_errors == 0
    keys = _keys(store)
    assert sorted(keys) == sorted({(t.task_id, i) for t in tasks for i in range(K)})


@pytest.mark.slow
def test_killed_worker_rerun_by_dask_counted_once(
    cluster: Callable[..., Any], tmp_path: Path
) -> None:
    # Dask reschedules a dead worker's batch on another worker: the agent runs trial (t3, 1)
    # twice, the run records it once, with the same seeded verdict as in process.
    client = cluster(allowed_failures=3)
    tasks = _tasks(tmp_path / "killed")
    store = tmp_path / "run.jsonl"
    res = run_suite(
        killer,
        tasks,
        k=K,
        seed=3,
        executor=client.get_executor(),
        concurrency=2,
        batch_size=3,
        store=store,
    )
    assert (tmp_path / "killed").exists()  # a worker really died
    assert dict(res.counts) == _in_process(tasks)
    assert res.n_infra_errors == 0 and res.agent_failures == 0
    keys = _keys(store)
    assert len(keys) == len(set(keys)) == len(tasks) * K


@pytest.mark.slow
def test_killed_worker_is_an_infrastructure_error(
    cluster: Callable[..., Any], tmp_path: Path
) -> None:
    # allowed-failures 0: Dask gives up on the batch (KilledWorker). ek retries each of its
    # trials as an infrastructure error (max_retries=1): nothing lost, nothing counted twice.
    client = cluster(allowed_failures=0)
    tasks = _tasks(tmp_path / "killed")
    store = tmp_path / "retried.jsonl"
    res = run_suite(
        killer,
        tasks,
        k=K,
        seed=3,
        executor=client.get_executor(),
        concurrency=2,
        batch_size=3,
        store=store,
        max_retries=1,
        retry_backoff=0.01,
    )
    assert dict(res.counts) == _in_process(tasks)
    assert res.n_infra_errors == 0 and res.agent_failures == 0
    assert 1 <= sum(res.retries.values()) <= 3  # the lost batch's trials (batch_size=3)
    keys = _keys(store)
    assert len(keys) == len(set(keys)) == len(tasks) * K


@pytest.mark.slow
def test_killed_worker_without_retries_is_recorded_not_counted(
    cluster: Callable[..., Any], tmp_path: Path
) -> None:
    client = cluster(allowed_failures=0)
    tasks = _tasks(tmp_path / "killed")
    store = tmp_path / "infra.jsonl"
    res = run_suite(
        killer,
        tasks,
        k=K,
        seed=3,
        executor=client.get_executor(),
        concurrency=2,
        batch_size=3,
        store=store,
        max_retries=0,
    )
    lost = res.n_infra_errors
    assert 1 <= lost <= 3 and "t3" in res.infra_errors  # the killed batch, t3's trial in it
    assert res.n_trials == len(tasks) * K - lost and res.agent_failures == 0
    full = _in_process(tasks)
    for tid, (n, _) in res.counts.items():
        assert n == full[tid][0] - res.infra_errors.get(tid, 0)
    records = [json.loads(x) for x in store.read_text().splitlines()[1:]]
    keys = [(r["task_id"], r["trial"]) for r in records]
    assert len(keys) == len(set(keys)) == len(tasks) * K
    infra = [r for r in records if r.get("infra_error")]
    assert len(infra) == lost
    assert all("KilledWorker" in r["infra_error"] for r in infra)
    # a resume neither re-runs nor forgets them
    again = run_suite(
        killer, tasks, k=K, seed=3, executor=client.get_executor(), store=store, max_retries=0
    )
    assert again.resumed == len(tasks) * K and dict(again.infra_errors) == dict(res.infra_errors)


# ----------------------------------------------------------------------------- any Executor


def test_process_pool_batches_equal_in_process(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "unused", n=6)
    with concurrent.futures.ProcessPoolExecutor(2) as ex:
        res = run_suite(seeded, tasks, k=K, seed=3, executor=ex, concurrency=2, batch_size=5)
    assert dict(res.counts) == _in_process(tasks)


@pytest.mark.parametrize("batch", [1, 3, None])
def test_thread_pool_batches_equal_in_process(tmp_path: Path, batch: int | None) -> None:
    tasks = _tasks(tmp_path / "unused", n=5)
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        res = run_suite(seeded, tasks, k=K, seed=3, executor=ex, concurrency=2, batch_size=batch)
    assert dict(res.counts) == _in_process(tasks)
    assert [ep.trial for ep in res.episodes[:K]] == list(range(K))


def test_a_trial_failing_in_a_batch_fails_alone() -> None:
    def agent(task: TaskSpec, context: TrialContext) -> int:
        if task.task_id == "b" and context.trial == 1:
            raise KeyError("boom")
        if task.task_id == "c" and context.trial == 0:
            time.sleep(2.0)  # over the time limit, enforced in the worker
        return 1

    tasks = [TaskSpec(t, gold=1) for t in "abc"]
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        res = run_suite(agent, tasks, k=2, executor=ex, concurrency=1, batch_size=6, timeout=0.5)
    errors = {(ep.task_id, ep.trial): ep.error for ep in res.episodes if ep.error}
    assert errors == {("b", 1): "KeyError: 'boom'", ("c", 0): "timeout: no result within 0.5s"}
    assert dict(res.counts) == {"a": (2, 2), "b": (2, 1), "c": (2, 1)}


def test_context_started_is_set_in_the_worker() -> None:
    seen: list[float | None] = []

    def agent(task: TaskSpec, context: TrialContext) -> int:
        seen.append(context.started)
        left = context.time_left()
        assert left is not None and 0 < left <= 30.0
        return 1

    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        res = run_suite(agent, [TaskSpec("a", gold=1)], k=3, executor=ex, timeout=30.0)
    assert res.success_rate == 1.0 and len(seen) == 3 and None not in seen


class _LosesFirstCall(concurrent.futures.Executor):
    """A thread pool whose first call is lost, as when a remote worker dies: the future fails
    with ConnectionError and the agent never ran."""

    def __init__(self) -> None:
        self.pool = concurrent.futures.ThreadPoolExecutor(1)
        self.calls = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        self.calls += 1
        if self.calls == 1:
            fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
            fut.set_exception(ConnectionError("worker lost"))
            return fut
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, **kwargs: Any) -> None:
        self.pool.shutdown(wait)


def test_a_lost_executor_call_is_retried_as_infrastructure() -> None:
    ex = _LosesFirstCall()
    try:
        tasks = [TaskSpec(t, gold=1) for t in "ab"]
        res = run_suite(lambda task: 1, tasks, k=2, executor=ex, batch_size=2, retry_backoff=0)
    finally:
        ex.shutdown()
    # batch 1 = (a, 0), (b, 0) lost once, each retried alone: 1 + 2 retries + 1 batch = 4 calls
    assert ex.calls == 4
    assert dict(res.counts) == {"a": (2, 2), "b": (2, 2)}
    assert dict(res.retries) == {"a": 1, "b": 1} and res.agent_failures == 0


def test_infra_error_raised_by_the_agent_in_a_batch_is_retried() -> None:
    tries: dict[tuple[str, int], int] = {}

    def agent(task: TaskSpec, context: TrialContext) -> int:
        key = (task.task_id, context.trial)
        tries[key] = tries.get(key, 0) + 1
        if key == ("a", 1) and tries[key] == 1:
            raise InfraError("503")
        return 1

    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        res = run_suite(
            agent, [TaskSpec("a", gold=1)], k=3, executor=ex, batch_size=3, retry_backoff=0
        )
    assert dict(res.counts) == {"a": (3, 3)} and dict(res.retries) == {"a": 1}


def test_a_shut_down_executor_is_a_harness_error() -> None:
    ex = concurrent.futures.ThreadPoolExecutor(1)
    ex.shutdown()
    with pytest.raises(HarnessError, match="executor refused"):
        run_suite(lambda task: 1, [TaskSpec("a", gold=1)], executor=ex)


class _Unpicklable:
    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, task: TaskSpec) -> int:
        return 1


def test_an_agent_that_cannot_be_sent_is_a_harness_error_not_infrastructure() -> None:
    with (
        concurrent.futures.ProcessPoolExecutor(1) as ex,
        pytest.raises(HarnessError, match="must be picklable"),
    ):
        run_suite(_Unpicklable(), [TaskSpec("a", gold=1)], executor=ex, retry_backoff=0)


def test_batch_size_is_validated() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        run_suite(lambda task: 1, [TaskSpec("a", gold=1)], batch_size=0)
