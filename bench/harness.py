"""Throughput and overhead of ``run_suite`` against a bare asyncio loop doing the same work.

1. **I/O-bound agent**: an async agent that sleeps 20 ms per trial, 2,000 trials at
   concurrency 100. Ideal wall time = trials x latency / concurrency = 0.40 s. Measured for
   ek (with and without the JSON-lines store) and for the peer: a bare ``asyncio`` loop with a
   semaphore running the same sleeps (the floor for Python). Target: ek >= 90% of ideal.
2. **Per-trial overhead**: a zero-latency agent (async, and sync in threads), 2,000 trials,
   *including the store* (one JSON line written and flushed per trial, fsync every 64):
   (ek's wall time of the trial phase) / trials. Target: < 1 ms per trial.

The trial phase is timed from ek's own progress events (first to last); building the report at
the end (the reliability bootstrap over tasks, cost report) is a one-off per suite and shown
apart. Run: ``python bench/harness.py [--trials 2000] [--concurrency 100] [--latency 0.02]``.
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
) -> tuple[float, float, float]:
    clock = Clock()
    t0 = time.perf_counter()
    res = run_suite(
        agent, tasks, k=k, concurrency=conc, store=store, progress=clock,
        run=RunProvenance(agent="bench", seed=0),
    )  # fmt: skip
    total = time.perf_counter() - t0
    assert res.n_trials == len(tasks) * k
    return clock.last - clock.first, total - clock.last, total


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
    for label, store in (("ek run_suite, no store", None), ("ek run_suite, JSONL store", "io")):
        best = min(
            ek_run(sleepy, tasks, k, conc, f"{tmp}/{store}-{i}.jsonl" if store else None)
            for i in range(3)
        )
        phase = best[0]
        print(f"| {label:<26} | {phase:15.3f} | {ideal / phase:20.1%} | {phase / b:14.2f}x |")
        ok &= ideal / phase >= 0.90
    print(
        f"  report build after the trials (reliability bootstrap, cost): {best[1]:.3f} s, once per suite"
    )

    print(
        f"\n2. Per-trial overhead, zero-latency agent, {n} trials ({n // k} tasks x k={k}), store on"
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
        phase, build, _ = min(runs)
        per = phase / n * 1000
        print(f"| {label:<27} | {phase:15.3f} | {per:14.3f} | {build:16.3f} |")
        ok &= per < 1.0
    print(f"\ntargets (>= 90% of ideal; < 1 ms per trial): {'MET' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
