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

Those random pairs share little, so the banded alignment (issue 22) widens to the full table
for them: the rows are the full O(n*m) cost.

Issue 22 rows (``near_identical_rows``, ``unordered_rows``):

* ``near-identical``: an actual trajectory made from the expected one by 5 % edits (a third
  deleted steps, a third changed arguments, a third inserted steps), the case the band is for:
  ``in_order`` / ``exact`` at 1,000, 2,000 and 5,000 steps (target: 5,000 under 0.5 s);
* ``any_order`` / ``superset`` at 100, 1,000 and 5,000 steps on the same near-identical pairs
  and on the worst case of issue 22 (10 tool names, no exact argument match: every ``x``
  differs, ``mode`` drawn from two values, the actual steps shuffled; tool groups of hundreds;
  targets: 1,000 / 5,000 steps under 0.1 s / 2 s), beside agentevals' ``unordered`` and
  ``superset`` trajectory match run in the same process. agentevals is not installed in the
  project's environment (not a dependency, not in the dev extra), so ``agentevals_superset``
  below re-implements its counting rule faithfully (``agentevals/trajectory/utils.py``
  ``_is_trajectory_superset`` at 946ad15b, read for /work/shared/notes/algorithms.md section 4):
  for each reference call in order, the first output call of the same name not yet claimed
  whose arguments match (tool_args_match_mode "exact": ``==``) is claimed; unordered = superset
  both ways. It only answers yes / no and stops at the first reference call it cannot claim
  (near-identical and worst-case pairs fail within the first few calls), so the ``shuffled
  copy`` rows (the same multiset in another order: every call must be claimed) show its full
  work; ek's numbers include parsing both sides, the assignment and the full Score (reason
  and alignment);
* ``before``: the same worst case with the Hungarian on every group (what ek did before issue
  22: the class reduction switched off), at 100 and 1,000 steps (5,000 took 154 s).

Then the size limits: ``MAX_STEPS`` = 5,000 steps per side (every scheme) refused before any
work, and ``MAX_CELLS`` = 4,000,000 DP cells: two long trajectories with nothing in common are
refused once no band within the budget is proven optimal and the full table is larger.

Run: ``.venv/bin/python bench/trajectory.py``.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from typing import Any
from unittest import mock

import ek.agents.toolcalls._assign as assign
from ek.agents.base import Step
from ek.agents.trajectory import MAX_CELLS, MAX_STEPS, TrajectoryMetric, align_trajectory

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
    print(f"\nlimits: MAX_STEPS = {MAX_STEPS:,} steps per side, MAX_CELLS = {MAX_CELLS:,}")
    print("| scheme | expected x actual | CPU s | outcome |")
    print("|---|---|---:|---|")
    rnd = random.Random(18)
    for scheme in ("in_order", "exact", "any_order"):
        metric = TrajectoryMetric(scheme)  # type: ignore[arg-type]
        long, short = trajectory(10_000, False, rnd), trajectory(100, False, rnd)
        cases = [("", long, long), ("", short, long)]
        if scheme != "any_order":  # issue 18's 3,000 steps: near-identical, then unrelated
            e3 = trajectory(3000, False, rnd)
            cases.append((" (near-identical)", e3, near(e3, rnd)))
            cases.append((" (unrelated)", trajectory(3000, True, rnd), trajectory(3000, True, rnd)))
        for label, e, a in cases:
            t = cpu(lambda: refuse(lambda: metric(a, e)), 1)  # noqa: B023
            out = refuse(lambda: metric(a, e))  # noqa: B023
            print(f"| {scheme} | {len(e)} x {len(a)}{label} | {t:.3f} | {out[:110]} |")


# --------------------------------------------------------------------------- issue 22


def near(e: list[Step], rnd: random.Random, rate: float = 0.05) -> list[Step]:
    """``e`` with ``rate`` edits: a third deleted, a third changed arguments, a third inserted."""
    out = []
    for s in e:
        r = rnd.random()
        if r < rate / 3:
            continue
        if r < 2 * rate / 3:
            out.append(Step(s.tool, {"x": rnd.randrange(10**9), "mode": s.args["mode"]}))
            continue
        out.append(s)
        if r < rate:
            out.append(Step(rnd.choice(TOOLS), {"x": rnd.randrange(10**9), "mode": "a"}))
    return out


def worst(e: list[Step], rnd: random.Random) -> list[Step]:
    """Every step of ``e`` with a different ``x`` and a random mode, shuffled."""
    out = [Step(s.tool, {"x": rnd.randrange(10**9), "mode": rnd.choice(["a", "b"])}) for s in e]
    rnd.shuffle(out)
    return out


def agentevals_superset(outputs: list[dict[str, Any]], reference: list[dict[str, Any]]) -> bool:
    """agentevals' ``_is_trajectory_superset`` counting rule (greedy first-fit, exact args)."""
    claimed = [False] * len(outputs)
    for ref in reference:
        for j, out in enumerate(outputs):
            if not claimed[j] and out["name"] == ref["name"] and out["args"] == ref["args"]:
                claimed[j] = True
                break
        else:
            return False
    return True


def agentevals_unordered(outputs: list[dict[str, Any]], reference: list[dict[str, Any]]) -> bool:
    return agentevals_superset(outputs, reference) and agentevals_superset(reference, outputs)


def calls(steps: list[Step]) -> list[dict[str, Any]]:
    return [{"name": s.tool, "args": dict(s.args)} for s in steps]


def near_identical_rows() -> None:
    print("\nnear-identical trajectories (5 % edits), Needleman-Wunsch banded")
    print("| scheme | expected x actual | CPU s | score |")
    print("|---|---|---:|---:|")
    for n in (1000, 2000, 5000):
        rnd = random.Random(n)
        e = trajectory(n, True, rnd)
        a = near(e, rnd)
        for scheme in ("in_order", "exact"):
            metric = TrajectoryMetric(scheme)  # type: ignore[arg-type]
            t = cpu(lambda: metric(a, e))  # noqa: B023
            print(f"| {scheme} | {n} x {len(a)} | {t:.3f} | {metric(a, e).value:.4f} |")


def unordered_case(kind: str, e: list[Step], rnd: random.Random) -> list[Step]:
    if kind == "near-identical":
        return near(e, rnd)
    if kind == "shuffled copy":
        return rnd.sample(e, len(e))
    return worst(e, rnd)


def unordered_rows() -> None:
    print("\nany_order / superset beside agentevals (same process, CPU s, best of 3)")
    print(
        "| case | steps | ek any_order | ek superset | agentevals unordered | "
        "agentevals superset | ek any_order score | agentevals unordered |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for kind in ("near-identical", "shuffled copy", "worst case"):
        for n in (100, 1000, 5000):
            rnd = random.Random(n + 1)
            e = trajectory(n, True, rnd)
            a = unordered_case(kind, e, rnd)
            any_order, superset = TrajectoryMetric("any_order"), TrajectoryMetric("superset")
            ce, ca = calls(e), calls(a)
            t1 = cpu(lambda: any_order(a, e))  # noqa: B023
            t2 = cpu(lambda: superset(a, e))  # noqa: B023
            t3 = cpu(lambda: agentevals_unordered(ca, ce))  # noqa: B023
            t4 = cpu(lambda: agentevals_superset(ca, ce))  # noqa: B023
            print(
                f"| {kind} | {n:,} | {t1:.4f} | {t2:.4f} | {t3:.4f} | {t4:.4f} | "
                f"{any_order(a, e).value:.4f} | {agentevals_unordered(ca, ce)} |"
            )
    for n in (100, 1000):
        rnd = random.Random(n + 1)
        e = trajectory(n, True, rnd)
        a = worst(e, rnd)
        with mock.patch.object(assign, "_SMALL_GROUP", 10**12):  # every group: the Hungarian
            t1 = cpu(lambda: TrajectoryMetric("any_order")(a, e), 1)  # noqa: B023
            t2 = cpu(lambda: TrajectoryMetric("superset")(a, e), 1)  # noqa: B023
        print(f"| worst case, before (Hungarian) | {n:,} | {t1:.4f} | {t2:.4f} | | | | |")


if __name__ == "__main__":
    main()
    limit_rows()
    near_identical_rows()
    unordered_rows()
