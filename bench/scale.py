"""Scale of ``ek-agents report`` and ``ek-agents gate``: time and peak memory against trials.

Builds synthetic trial stores of 10^4, 10^5 and 10^6 trials in a temporary folder, in the
project's own format, written by the project's writer (:class:`ek.agents.store.TrialStore`):
the records :func:`ek.agents.suite.run_suite` wrote for a two-call refund task scored by four
metrics (task success, tool calls, trajectory, Cost-of-Pass), cloned onto ``trials / 50``
synthetic tasks (k = 50, three slices; the verdict of each clone is drawn per task and trial,
so pass^k, the consistency and the gate have something to estimate). Each measurement runs
``ek-agents report`` or ``ek-agents gate`` in a fresh subprocess of a wrapper process, whose
``resource.getrusage(RUSAGE_CHILDREN)`` gives its peak RSS. ``report`` and ``gate`` run as a user
runs them (a store of 32 MiB or more read by one process per core); ``report --workers 1`` is
also timed, one process reading the whole file. Results: ``bench/README.md``.

Run: ``python bench/scale.py`` (all sizes) or ``python bench/scale.py 10000 100000``.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

K = 50
SIZES = (10_000, 100_000, 1_000_000)


def _agent(task: Any) -> Any:
    """Two tool calls (one argument wrong on odd tasks) and one model call's usage."""
    from ek.agents.episode import Cost, Episode, Step, Trajectory

    odd = int(task.task_id[-1]) % 2
    steps = (
        Step("get_order", {"order_id": "A1"}, observation={"status": "delivered"}),
        Step("refund", {"order_id": "A1", "amount": 10 + odd}, observation="ok"),
    )
    cost = Cost(input_tokens=1200, output_tokens=150, cache_read_tokens=300, model="demo-model")
    return Episode(task.task_id, trajectory=Trajectory(steps), output="refunded", cost=(cost,))


def _templates(folder: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A real run_suite store (4 metrics, k = 2): its header and its records, as templates."""
    from ek.agents.cost import per_million
    from ek.agents.episode import RunProvenance, Step, Trajectory
    from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
    from ek.agents.spec import TaskSpec
    from ek.agents.store import read_store
    from ek.agents.suite import run_suite
    from ek.agents.toolcalls import ToolCallMetric
    from ek.agents.trajectory import TrajectoryMetric

    gold = Trajectory(
        (Step("get_order", {"order_id": "A1"}), Step("refund", {"order_id": "A1", "amount": 10}))
    )
    tasks = [TaskSpec(f"t{i}", gold="refunded", gold_calls=gold) for i in range(4)]
    price = {"demo-model": per_million(1.0, 4.0, cache_read=0.1)}
    path = os.path.join(folder, "template.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_suite(
            _agent,
            tasks,
            k=2,
            metrics=[
                TaskSuccessMetric(),
                ToolCallMetric(),
                TrajectoryMetric(),
                CostPerSuccessMetric(prices=price),
            ],
            prices=price,
            run=RunProvenance(agent="synthetic", model="demo-model", seed=7),
            store=path,
        )
    snap = read_store(path)
    return dict(snap.header), [dict(r) for r in snap.records]


def _clone(rec: Mapping[str, Any], task: str, trial: int, ok: bool) -> dict[str, Any]:
    """The template record for another task, trial and verdict (copies what changes)."""
    out = dict(rec)
    out["task_id"], out["trial"], out["success"] = task, trial, ok
    out["episode"] = {**rec["episode"], "task_id": task, "trial": trial, "success": ok}
    scores = dict(rec.get("scores") or {})
    for name, sd in scores.items():  # the verdict-bearing metrics follow the verdict
        det = sd.get("detail") or {}
        if "successes" in det:
            det = {**det, "successes": int(ok), "passed": ok}
            if "success" in det:
                det["success"] = ok
            value = float(ok) if "n" in det and name == "task_success" else sd["value"]
            scores[name] = {**sd, "value": value, "detail": det}
    out["scores"] = scores
    return out


def _records(
    templates: Sequence[dict[str, Any]], n_tasks: int, k: int, shift: float
) -> Iterator[dict[str, Any]]:
    """Trials in a realistic order (task by task, trials in order); seeded verdicts."""
    rng = random.Random(1234)
    for i in range(n_tasks):
        p = min(0.98, max(0.02, rng.random() + shift))  # each task its own success probability
        base = templates[i % len(templates)]
        for t in range(k):
            yield _clone(base, f"task-{i:07d}", t, rng.random() < p)


def build_store(path: str, n_trials: int, templates: Any, *, shift: float = 0.0) -> None:
    """A synthetic store of ``n_trials`` (``n_trials / K`` tasks of K trials) at ``path``."""
    from ek.agents.store import TrialStore

    header, recs = templates
    n_tasks = max(1, n_trials // K)
    h = dict(header)
    h.pop("ek_store", None)
    h["suite"] = {"fingerprint": f"synthetic-{n_tasks}", "n_tasks": n_tasks}
    h["k"] = K
    slices = ("refunds", "lookups", "exchanges")
    h["tasks"] = {f"task-{i:07d}": [slices[i % 3]] for i in range(n_tasks)}
    with TrialStore.open(path, h, fsync_every=1 << 30, fsync_interval=3600.0) as st:
        # the cached per-record encoding of the templates keeps building 10^6 trials quick
        for rec in _records(recs, n_tasks, K, shift):
            st.append(rec)


_WRAP = (
    "import resource, subprocess, sys; "
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
    "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def _measure(args: Sequence[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit status) of ``ek-agents *args`` in a fresh process.

    A wrapper process runs the command as its only child and reads that child's peak RSS from
    ``getrusage(RUSAGE_CHILDREN)`` (so one measurement never sees another's peak).
    """
    cmd = [sys.executable, "-m", "ek.agents.cli", *args]
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True, check=True
    )
    dt = time.perf_counter() - t0
    rc, kib = out.stdout.split()[-2:]
    return dt, int(kib) / 1024.0, int(rc)  # ru_maxrss is in KiB on Linux


def main(argv: Sequence[str]) -> int:
    sizes = [int(a) for a in argv] or list(SIZES)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ek-scale-") as tmp:
        templates = _templates(tmp)
        for n in sizes:
            cur, base = os.path.join(tmp, f"cur-{n}.jsonl"), os.path.join(tmp, f"base-{n}.jsonl")
            t0 = time.perf_counter()
            build_store(cur, n, templates)
            build_store(base, n, templates, shift=0.02)
            built = time.perf_counter() - t0
            mb = os.path.getsize(cur) / 1e6
            rt, rm, rc = _measure(["report", cur])
            st, _, _ = _measure(["report", cur, "--workers", "1"])
            gt, gm, gc = _measure(["gate", base, cur])
            rows.append((n, mb, rt, rm, rc, gt, gm, gc, st))
            print(
                f"{n:>9,} trials  {mb:7.1f} MB  built {built:6.1f} s   report {rt:6.2f} s "
                f"{rm:7.1f} MB (exit {rc}; one reader {st:6.2f} s)   gate {gt:6.2f} s "
                f"{gm:7.1f} MB (exit {gc})",
                flush=True,
            )
            for p in (cur, base):
                os.remove(p)
    _print_table(rows)
    return 0


def _print_table(rows: Sequence[tuple[Any, ...]]) -> None:
    print(
        "\n| trials | store | report | report, one reader | report peak RSS | gate (2 runs) "
        "| gate peak RSS |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, mb, rt, rm, _, gt, gm, _, st in rows:
        print(
            f"| {n:,} | {mb:.0f} MB | {rt:.2f} s | {st:.2f} s | {rm:.0f} MB | {gt:.2f} s "
            f"| {gm:.0f} MB |"
        )
    if len(rows) >= 2:
        (n0, _, r0, m0, _, g0, h0, _, _), (n1, _, r1, m1, _, g1, h1, _, _) = rows[0], rows[-1]
        print(
            f"\nslope {n0:,} -> {n1:,} trials (x{n1 / n0:g}): report time x{r1 / r0:.1f}, "
            f"memory x{m1 / m0:.2f}; gate time x{g1 / g0:.1f}, memory x{h1 / h0:.2f}"
        )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
