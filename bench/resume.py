"""Peak memory of ``run_suite`` writing a trial store, and of resuming it (issue 31).

Each measurement is a fresh process (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at its end):
``write`` runs ``run_suite`` over ``tasks x k`` trials of a zero-latency agent into a new store
(a two-call refund trajectory, a final state and a priced cost per trial, scored by the
tool-call and trajectory metrics); ``resume`` runs the same call again on the finished store,
so every trial is read back (none is run). A baseline process that only imports ek is printed
beside them. Results: ``bench/README.md`` ("Resume memory").

Run: ``python bench/resume.py`` (2,000 tasks x k = 50 = 10^5 trials), or
``python bench/resume.py --tasks 200 --k 50`` for a quick look.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))


def _tasks(n: int) -> list[Any]:
    from ek.agents.base import Step, TaskSpec, Trajectory

    gold = Trajectory(
        [
            Step("get_order", {"order_id": "o1"}),
            Step("refund_order", {"order_id": "o1", "amount": 12.5, "reason": "damaged"}),
        ]
    )
    return [TaskSpec(f"task-{i:06d}", gold="refunded", gold_calls=gold) for i in range(n)]


def _agent(task: Any, context: Any) -> dict[str, Any]:
    from ek.agents.base import Cost

    ok = context.rng.random() < 0.8
    steps = [
        {"tool": "get_order", "args": {"order_id": "o1"}, "result": {"status": "delivered"}},
        {
            "tool": "refund_order",
            "args": {"order_id": "o1", "amount": 12.5 if ok else 10.0, "reason": "damaged"},
            "result": {"refund_id": f"r-{context.seed % 10_000}"},
        },
    ]
    state = {"orders": {"o1": {"status": "refunded", "refunds": [12.5]}}, "notes": ["done"] * 8}
    cost = Cost(input_tokens=900, output_tokens=120, model="m", role="agent")
    return {"output": "refunded" if ok else "sorry", "trajectory": steps, "final_state": state,
            "cost": (cost,)}  # fmt: skip


def child(mode: str, store: str, n_tasks: int, k: int) -> None:
    """One measurement, in this process: ``write``, ``resume`` or ``import``."""
    import resource
    import time
    import warnings

    from ek.agents.cost import per_million
    from ek.agents.harness import run_suite
    from ek.agents.toolcalls import ToolCallMetric
    from ek.agents.trajectory import TrajectoryMetric

    t0 = time.perf_counter()
    n = resumed = 0
    if mode != "import":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = run_suite(
                _agent,
                _tasks(n_tasks),
                k=k,
                seed=1,
                metrics=[ToolCallMetric(), TrajectoryMetric()],
                price=per_million(1.0, 4.0),
                store=store,
                concurrency=64,
            )
        n, resumed = res.n_trials, res.resumed
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(mode, n, resumed, kib, round(time.perf_counter() - t0, 2))


def _measure(mode: str, store: str, n_tasks: int, k: int) -> list[str]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, store, str(n_tasks), str(k)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return out.stdout.split()[-5:]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2], int(argv[3]), int(argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=2_000)
    ap.add_argument("--k", type=int, default=50)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "run.jsonl")
        rows = [_measure(m, store, args.tasks, args.k) for m in ("import", "write", "resume")]
        size = os.path.getsize(store) / 2**20
    print(f"{args.tasks} tasks x k = {args.k}; store {size:.0f} MiB")
    print("| process | trials | resumed | peak RSS (MB) | KB per trial | wall (s) |")
    print("|---|---:|---:|---:|---:|---:|")
    base = int(rows[0][3]) / 1024
    for mode, n, resumed, kib, wall in rows:
        mb = int(kib) / 1024
        per = (mb - base) * 1024 / int(n) if int(n) else 0.0
        print(f"| {mode} | {n} | {resumed} | {mb:.0f} | {per:.1f} | {wall} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
