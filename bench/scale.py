"""Scale of ``ek-agents report`` and ``ek-agents gate``: time and peak memory against trials.

Builds synthetic trial stores of 10^4, 10^5 and 10^6 trials in a temporary folder, in the
project's own format, written by the project's writer (:class:`ek.agents.harness.TrialStore`):
the records :func:`ek.agents.harness.run_suite` wrote for a two-call refund task scored by four
metrics (task success, tool calls, trajectory, Cost-of-Pass), cloned onto ``trials / 50``
synthetic tasks (k = 50, three slices; the verdict of each clone is drawn per task and trial,
so pass^k, the consistency and the gate have something to estimate). Each measurement runs
``ek-agents report`` or ``ek-agents gate`` in a fresh subprocess of a wrapper process, whose
``resource.getrusage(RUSAGE_CHILDREN)`` gives its peak RSS. ``report`` and ``gate`` run as a user
runs them (a store of 32 MiB or more read by one process per core); ``report --workers 1`` is
also timed, one process reading the whole file, and ``report --labels`` (people's labels on 2 %
of the trials: the report, then the run read again with its trials for the judged section).

Side by side in the same run, the **floor**: a fresh process whose only work is ``json.loads``
of every line of the same store (what any reader of the format must pay); each command's time
is also given as a multiple of it (issue 31's ceilings: ``report`` at 10^5 trials at most 4x,
the gate at most 8x, memory flat in trials). Every command runs twice, interleaved with the
others, and the best counts; the figures compared are CPU seconds (user + system of the command
and every process it waited for, so a report's readers are summed), which load from other
processes on a shared machine moves far less than wall time (also printed for ``report``).

``--tasks N ...`` measures how ``report`` grows with tasks instead (k = 5, one reader, 10,000 /
20,000 / 40,000 tasks by default), each beside its floor. Results: ``bench/README.md``.

Run: ``python bench/scale.py`` (all sizes), ``python bench/scale.py 10000 100000``, or
``python bench/scale.py --tasks 10000 20000 40000``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

K = 50
SIZES = (10_000, 100_000, 1_000_000)


def _agent(task: Any) -> Any:
    """Two tool calls (one argument wrong on odd tasks) and one model call's usage."""
    from ek.agents.base import Cost, Episode, Step, Trajectory

    odd = int(task.task_id[-1]) % 2
    steps = (
        Step("get_order", {"order_id": "A1"}, observation={"status": "delivered"}),
        Step("refund", {"order_id": "A1", "amount": 10 + odd}, observation="ok"),
    )
    cost = Cost(input_tokens=1200, output_tokens=150, cache_read_tokens=300, model="demo-model")
    return Episode(task.task_id, trajectory=Trajectory(steps), output="refunded", cost=(cost,))


def _templates(folder: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A real run_suite store (4 metrics, k = 2): its header and its records, as templates."""
    from ek.agents.base import RunProvenance, Step, TaskSpec, Trajectory
    from ek.agents.cost import per_million
    from ek.agents.harness import read_store, run_suite
    from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
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


def build_store(
    path: str, n_trials: int, templates: Any, *, shift: float = 0.0, k: int = K
) -> None:
    """A synthetic store of ``n_trials`` (``n_trials / k`` tasks of k trials) at ``path``."""
    from ek.agents.harness import TrialStore

    header, recs = templates
    n_tasks = max(1, n_trials // k)
    h = dict(header)
    h.pop("ek_store", None)
    h["suite"] = {"fingerprint": f"synthetic-{n_tasks}", "n_tasks": n_tasks}
    h["k"] = k
    slices = ("refunds", "lookups", "exchanges")
    h["tasks"] = {f"task-{i:07d}": [slices[i % 3]] for i in range(n_tasks)}
    with TrialStore.open(path, h, fsync_every=1 << 30, fsync_interval=3600.0) as st:
        # the cached per-record encoding of the templates keeps building 10^6 trials quick
        for rec in _records(recs, n_tasks, k, shift):
            st.append(rec)


def write_labels(path: str, store: str, share: float = 0.02) -> None:
    """People's labels on a random ``share`` of the store's trials (seeded; each label agrees
    with the recorded verdict nine times in ten), for ``report --labels``."""
    rng = random.Random(99)
    with open(store, encoding="utf-8") as src, open(path, "w", encoding="utf-8") as out:
        next(src)  # the header
        for line in src:
            if rng.random() < share:
                rec = json.loads(line)
                ok = rec["success"] if rng.random() < 0.9 else not rec["success"]
                label = {"task_id": rec["task_id"], "trial": rec["trial"], "success": ok}
                out.write(json.dumps(label) + "\n")


_WRAP = (
    "import resource, subprocess, sys; "
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(rc, u.ru_maxrss, u.ru_utime + u.ru_stime)"
)

#: The floor: a process that only ``json.loads`` every line of a store.
_FLOOR = (
    "import json, sys\n"
    "with open(sys.argv[1], 'rb') as fh:\n"
    "    for line in fh:\n"
    "        json.loads(line)"
)

#: Each command runs this many times, interleaved with the others; the best time counts (the
#: machine is shared: load from other processes falls on every command alike).
ROUNDS = 2


@dataclass(frozen=True)
class Took:
    """One command's wall time, CPU time (user + system, of the command and every process it
    waited for: a report's readers included), peak RSS in MB and exit status."""

    wall: float
    cpu: float
    mb: float
    rc: int


def _measure(cmd: Sequence[str]) -> Took:
    """Run ``cmd`` as the only child of a wrapper process, which reads its resource use from
    ``getrusage(RUSAGE_CHILDREN)`` (so one measurement never sees another's)."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True, check=True
    )
    rc, kib, cpu = out.stdout.split()[-3:]
    return Took(time.perf_counter() - t0, float(cpu), int(kib) / 1024.0, int(rc))


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ek.agents.cli", *args]


def _interleaved(cmds: dict[str, list[str]]) -> dict[str, Took]:
    """Each command ``ROUNDS`` times, in turn; the best wall and CPU time, the largest RSS."""
    runs: dict[str, list[Took]] = {name: [] for name in cmds}
    for _ in range(ROUNDS):
        for name, cmd in cmds.items():
            runs[name].append(_measure(cmd))
    return {
        name: Took(
            min(t.wall for t in ts), min(t.cpu for t in ts), max(t.mb for t in ts), ts[-1].rc
        )
        for name, ts in runs.items()
    }


def main(argv: Sequence[str]) -> int:
    if argv and argv[0] == "--tasks":
        return _tasks_sweep([int(a) for a in argv[1:]] or [10_000, 20_000, 40_000])
    sizes = [int(a) for a in argv] or list(SIZES)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ek-scale-") as tmp:
        templates = _templates(tmp)
        for n in sizes:
            cur, base = os.path.join(tmp, f"cur-{n}.jsonl"), os.path.join(tmp, f"base-{n}.jsonl")
            labels = os.path.join(tmp, f"labels-{n}.jsonl")
            build_store(cur, n, templates)
            build_store(base, n, templates, shift=0.02)
            write_labels(labels, cur)
            took = _interleaved(
                {
                    "floor": [sys.executable, "-c", _FLOOR, cur],
                    "report": _cli("report", cur),
                    "one": _cli("report", cur, "--workers", "1"),
                    "gate": _cli("gate", base, cur),
                    "labels": _cli("report", cur, "--labels", labels),
                }
            )
            rows.append((n, os.path.getsize(cur) / 1e6, took))
            print(f"{n:>9,} trials: {took}", flush=True)
            for p in (cur, base, labels):
                os.remove(p)
    _print_table(rows)
    return 0


def _print_table(rows: Sequence[tuple[int, float, dict[str, Took]]]) -> None:
    print(
        "\nCPU seconds (user + system, readers included), best of "
        f"{ROUNDS}; x = multiple of the floor's\n"
        "| trials | store | floor (json.loads a line) | report | report, one reader "
        "| report peak RSS | gate (2 runs) | gate peak RSS | report --labels | its peak RSS |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, mb, t in rows:
        fl = t["floor"].cpu
        print(
            f"| {n:,} | {mb:.0f} MB | {fl:.2f} s "
            f"| {t['report'].cpu:.2f} s ({t['report'].cpu / fl:.1f}x; wall {t['report'].wall:.2f} s) "
            f"| {t['one'].cpu:.2f} s ({t['one'].cpu / fl:.1f}x) | {t['report'].mb:.0f} MB "
            f"| {t['gate'].cpu:.2f} s ({t['gate'].cpu / fl:.1f}x) | {t['gate'].mb:.0f} MB "
            f"| {t['labels'].cpu:.2f} s ({t['labels'].cpu / fl:.1f}x) | {t['labels'].mb:.0f} MB |"
        )


def _tasks_sweep(task_counts: Sequence[int], k: int = 5) -> int:
    """``report --workers 1`` against tasks (k trials each), each beside its floor."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="ek-scale-") as tmp:
        templates = _templates(tmp)
        for m in task_counts:
            path = os.path.join(tmp, f"tasks-{m}.jsonl")
            build_store(path, m * k, templates, k=k)
            took = _interleaved(
                {
                    "floor": [sys.executable, "-c", _FLOOR, path],
                    "report": _cli("report", path, "--workers", "1"),
                }
            )
            rows.append((m, took))
            print(f"{m:>7,} tasks: {took}", flush=True)
            os.remove(path)
    print(
        f"\nCPU seconds, best of {ROUNDS}\n| tasks (k = {k}) | floor | report, one reader | ratio | peak RSS |"
    )
    print("|---:|---:|---:|---:|---:|")
    for m, t in rows:
        fl, rt = t["floor"].cpu, t["report"].cpu
        print(f"| {m:,} | {fl:.2f} s | {rt:.2f} s | {rt / fl:.1f}x | {t['report'].mb:.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
