"""Trajectory alignment cost: time per DP cell and peak memory, for n x m up to 2,000 x 2,000.

``align_trajectory`` (Needleman-Wunsch with traceback, ``ek.agents.trajectory``) on generated
trajectories of 10, 100, 1,000 and 2,000 steps, square (n x n) and unequal (n x n/2, n/2 x n),
under ``in_order`` and ``exact``, with two kinds of arguments:

* ``repeating``: 10 tools, arguments drawn from a few values (agents repeat calls; the
  substitution costs of repeated (expected, actual) pairs are computed once),
* ``distinct``: every step has a distinct argument value (worst case for the pair comparisons).

It prints CPU time (best of 3), nanoseconds per DP cell (flat = O(n*m) growth), and the peak
memory of one alignment measured separately with ``tracemalloc`` (which slows Python down, so it
is not used for the timings). Target: 1,000 x 1,000 with traceback under 1 s, memory linear in
n*m (one byte of traceback per cell plus two rows of costs).

Then the size limit (``MAX_STEPS`` = 2,000 steps per side for ``in_order`` / ``exact``): at
3,000 and 10,000 steps an over-long expected trajectory is refused with a ValueError and an
over-long actual one is scored 0 by ``TrajectoryMetric``, both before any alignment; the rows
show the time to refuse.

Run: ``.venv/bin/python bench/trajectory.py``.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from typing import Any

from ek.agents.base import Step
from ek.agents.trajectory import MAX_STEPS, TrajectoryMetric, align_trajectory

TOOLS = [f"tool_{i}" for i in range(10)]


def trajectory(n: int, distinct: bool, rnd: random.Random) -> list[Step]:
    out = []
    for _ in range(n):
        x: Any = rnd.randrange(10**9) if distinct else rnd.randrange(4)
        out.append(Step(rnd.choice(TOOLS), {"x": x, "mode": rnd.choice(["a", "b"])}))
    return out


def cpu(fn: Any, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    sizes = [
        (10, 10),
        (100, 100),
        (1000, 1000),
        (2000, 2000),
        (1000, 500),
        (500, 1000),
        (2000, 1000),
    ]
    print(
        "| args | scheme | expected x actual | cells | CPU s | ns / cell | peak MiB | MiB per 1e6 cells |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for distinct in (False, True):
        for scheme in ("in_order", "exact"):
            for n, m in sizes:
                rnd = random.Random(n * 7 + m)
                e = trajectory(n, distinct, rnd)
                a = trajectory(m, distinct, rnd)
                reps = 3 if n * m <= 1_000_000 else 1
                t = cpu(lambda: align_trajectory(a, e, scheme=scheme), reps)  # noqa: B023
                tracemalloc.start()
                align_trajectory(a, e, scheme=scheme)
                peak = tracemalloc.get_traced_memory()[1] / 2**20
                tracemalloc.stop()
                cells = n * m
                print(
                    f"| {'distinct' if distinct else 'repeating'} | {scheme} | {n} x {m} | {cells:,} "
                    f"| {t:.3f} | {t / cells * 1e9:.0f} | {peak:.1f} | {peak / cells * 1e6:.1f} |"
                )


def refuse(fn: Any) -> str:
    try:
        s = fn()
    except ValueError as e:
        return f"ValueError: {e}"
    return f"scored {s.value} ({s.reason})"


def limit_rows() -> None:
    print(f"\nlimit MAX_STEPS = {MAX_STEPS} steps per side")
    print("| scheme | expected x actual | CPU s | outcome |")
    print("|---|---|---:|---|")
    rnd = random.Random(18)
    for scheme in ("in_order", "exact"):
        metric = TrajectoryMetric(scheme)  # type: ignore[arg-type]
        for n in (3000, 10_000):
            long, short = trajectory(n, False, rnd), trajectory(MAX_STEPS, False, rnd)
            for e, a in ((long, long), (short, long)):
                t = cpu(lambda: refuse(lambda: metric(a, e)), 1)  # noqa: B023
                out = refuse(lambda: metric(a, e))  # noqa: B023
                print(f"| {scheme} | {len(e)} x {len(a)} | {t:.3f} | {out} |")


if __name__ == "__main__":
    main()
    limit_rows()
