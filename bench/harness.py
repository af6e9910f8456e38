"""Throughput and overhead of ``run_suite`` against a bare asyncio loop doing the same work.

1. **I/O-bound agent**: an async agent that sleeps 20 ms per trial, 2,000 trials at
   concurrency 100. Ideal wall time = trials x latency / concurrency = 0.40 s. Measured for
   ek (with and without the JSON-lines store) and for the peer: a bare ``asyncio`` loop with a
   semaphore running the same sleeps (the floor for Python). Target: ek >= 90% of ideal.
2. **The tail after the trials**: the same I/O-bound run, whole call (``run_suite`` returning)
   against the trial phase and the ideal. Target: the whole call >= 85% of ideal, within 15%
   of its trial phase. The reliability report (a bootstrap over tasks) is built when first
   read (``SuiteResult.reliability``); reading it is timed apart.
3. **Per-trial overhead**: a zero-latency agent (async, and sync in threads), 2,000 trials,
   *including the store* (one JSON line written and flushed per trial, fsync every 64):
   (ek's wall time of the trial phase) / trials. Target: < 1 ms per trial.
4. **Dask**: the same 20 ms agent (sync, sleeping) on one ``LocalCluster`` of worker processes,
   submitted to Dask directly (``client.map``, one future per trial; and by hand in batches)
   and through ``run_suite(..., executor=client.get_executor())`` (ek's batches; and
   ``batch_size=1``, one future per trial as before issue 22). Target: ek <= 1.5x bare Dask.

The trial phase is timed from ek's own progress events (first to last). Run:
``python bench/harness.py [--trials 2000] [--concurrency 100] [--latency 0.02] [--no-dask]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ek.agents.base import RunProvenance, TaskSpec
from ek.agents.harness import ProgressEvent, run_suite


class Clock:
    """Progress callback that records when the trial phase starts and ends."""

    def __init__(self) -> None:
        self.first = self.last = 0.0

    def __call__(self, e: ProgressEvent) -> None:
        if e.done == 0:
            self.first = e.elapsed
        self.last = e.elapsed


def ek_run(
    agent: Any, tasks: list[TaskSpec], k: int, conc: int, store: str | None
) -> tuple[float, float, float, float]:
    """(trial phase, after the trials, whole call, reading the reliability report) in s."""
    clock = Clock()
    t0 = time.perf_counter()
    res = run_suite(
        agent, tasks, k=k, concurrency=conc, store=store, progress=clock,
        run=RunProvenance(agent="bench", seed=0),
    )  # fmt: skip
    total = time.perf_counter() - t0
    assert res.n_trials == len(tasks) * k
    t1 = time.perf_counter()
    _ = res.reliability.pass_hat_k[k]
    read = time.perf_counter() - t1
    return clock.last - clock.first, total - clock.last, total, read


def sleep_sync(x: Any, latency: float) -> Any:
    """Bare Dask's task: the agent's 20 ms of work, nothing else."""
    time.sleep(latency)
    return x


def sleep_batch(xs: list[Any], latency: float) -> list[Any]:
    """Bare Dask by hand in batches: several trials per task."""
    return [sleep_sync(x, latency) for x in xs]


class SleepAgent:
    """The sync agent for the Dask rows (a picklable object: no closure over the bench)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def __call__(self, task: TaskSpec) -> Any:
        time.sleep(self.latency)
        return task.input


def dask_rows(tasks: list[TaskSpec], k: int, lat: float, workers: int, threads: int) -> bool:
    """Bare Dask against ek on the same LocalCluster; True when ek is within 1.5x."""
    from distributed import Client, LocalCluster

    n = len(tasks) * k
    slots = workers * threads
    ideal = n * lat / slots
    print(
        f"\n4. Dask LocalCluster ({workers} worker processes x {threads} threads), {n} trials x "
        f"{lat * 1000:g} ms (sync agent); ideal {ideal:.3f} s"
    )
    print("| runner                                   | wall (s) | % of ideal | vs bare Dask |")
    print("|------------------------------------------|---------:|-----------:|-------------:|")
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=threads, processes=True,
            dashboard_address=None, silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        client.gather(client.map(sleep_sync, range(slots), latency=0.0, pure=False))  # warm up
        agent = SleepAgent(lat)
        b = len(tasks) * k // (4 * slots) or 1

        def bare_map() -> float:
            t0 = time.perf_counter()
            client.gather(client.map(sleep_sync, range(n), latency=lat, pure=False))
            return time.perf_counter() - t0

        def bare_batched() -> float:
            chunks = [list(range(i, min(n, i + b))) for i in range(0, n, b)]
            t0 = time.perf_counter()
            client.gather(client.map(sleep_batch, chunks, latency=lat, pure=False))
            return time.perf_counter() - t0

        def ek(batch: int | None) -> float:
            t0 = time.perf_counter()
            res = run_suite(
                agent, tasks, k=k, executor=client.get_executor(), concurrency=slots,
                batch_size=batch, run=RunProvenance(agent="bench", seed=0),
            )  # fmt: skip
            assert res.n_trials == n
            return time.perf_counter() - t0

        rows = [
            ("bare Dask, client.map (1 future/trial)", bare_map),
            (f"bare Dask, by hand in batches of {b}", bare_batched),
            ("ek run_suite, executor= (batched)", lambda: ek(None)),
            ("ek run_suite, batch_size=1 (as before)", lambda: ek(1)),
        ]
        best = {label: min(fn() for _ in range(2)) for label, fn in rows}
    base = best[rows[0][0]]
    for label, _ in rows:
        t = best[label]
        print(f"| {label:<40} | {t:8.3f} | {ideal / t:9.1%} | {t / base:11.2f}x |")
    return best[rows[2][0]] <= 1.5 * base


def bare(latency: float, n: int, conc: int) -> float:
    async def main() -> None:
        sem = asyncio.Semaphore(conc)

        async def one() -> None:
            async with sem:
                await asyncio.sleep(latency)

        await asyncio.gather(*(one() for _ in range(n)))

    t0 = time.perf_counter()
    asyncio.run(main())
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask rows")
    ap.add_argument("--dask-workers", type=int, default=2)
    ap.add_argument("--dask-threads", type=int, default=8)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    n, conc, lat, k = args.trials, args.concurrency, args.latency, args.k
    tasks = [TaskSpec(f"t{i}", input=i, gold=i) for i in range(n // k)]
    tmp = tempfile.mkdtemp(prefix="ek-bench-")

    async def sleepy(task: TaskSpec) -> int:
        await asyncio.sleep(lat)
        return task.input

    async def instant(task: TaskSpec) -> int:
        return task.input

    def instant_sync(task: TaskSpec) -> int:
        return task.input

    ideal = n * lat / conc
    print(
        f"1. I/O-bound agent: {n} trials x {lat * 1000:g} ms at concurrency {conc}; ideal {ideal:.3f} s"
    )
    print(
        "| runner                     | trial phase (s) | % of ideal throughput | vs bare asyncio |"
    )
    print(
        "|----------------------------|----------------:|----------------------:|----------------:|"
    )
    b = min(bare(lat, n, conc) for _ in range(3))
    print(f"| bare asyncio + semaphore   | {b:15.3f} | {ideal / b:20.1%} | {1.0:14.2f}x |")
    ok = True
    whole = []
    for label, store in (("ek run_suite, no store", None), ("ek run_suite, JSONL store", "io")):
        best = min(
            ek_run(sleepy, tasks, k, conc, f"{tmp}/{store}-{i}.jsonl" if store else None)
            for i in range(3)
        )
        phase = best[0]
        whole.append((label, best))
        print(f"| {label:<26} | {phase:15.3f} | {ideal / phase:20.1%} | {phase / b:14.2f}x |")
        ok &= ideal / phase >= 0.90

    print("\n2. The tail after the trials (same runs): whole call against trial phase and ideal")
    print(
        "| runner                     | trial phase (s) | after (s) | whole call (s) | whole % of ideal | whole / phase | reliability read (s) |"
    )
    print(
        "|----------------------------|----------------:|----------:|---------------:|-----------------:|--------------:|---------------------:|"
    )
    for label, (phase, after, total, read) in whole:
        print(
            f"| {label:<26} | {phase:15.3f} | {after:9.3f} | {total:14.3f} | "
            f"{ideal / total:16.1%} | {total / phase:12.2f}x | {read:20.3f} |"
        )
        ok &= ideal / total >= 0.85 or total <= 1.15 * phase

    print(
        f"\n3. Per-trial overhead, zero-latency agent, {n} trials ({n // k} tasks x k={k}), store on"
    )
    print("| agent                       | trial phase (s) | per trial (ms) | report build (s) |")
    print("|-----------------------------|----------------:|---------------:|-----------------:|")
    for label, agent, c in (
        ("async, concurrency 100", instant, 100),
        ("async, concurrency 1", instant, 1),
        ("sync (threads), concurrency 8", instant_sync, 8),
    ):
        runs = [
            ek_run(agent, tasks, k, c, f"{tmp}/zero-{label[:4]}-{c}-{i}.jsonl") for i in range(3)
        ]
        phase, build, _, _ = min(runs)
        per = phase / n * 1000
        print(f"| {label:<27} | {phase:15.3f} | {per:14.3f} | {build:16.3f} |")
        ok &= per < 1.0
    if not args.no_dask:
        ok &= dask_rows(tasks, k, lat, args.dask_workers, args.dask_threads)
    print(
        "\ntargets (>= 90% of ideal; < 1 ms per trial; whole call >= 85% of ideal or within 15%"
        f" of the trial phase; Dask <= 1.5x bare): {'MET' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
