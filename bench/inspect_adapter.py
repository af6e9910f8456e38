"""Benchmark: the ek Inspect adapter against Inspect's own scorer and log reader.

1. Scoring overhead: re-score the same N-sample run (react + tools, scripted mockllm) with
   Inspect's built-in ``match()`` and with ek scorers (``ek/task_success`` on the final state;
   ``ek_scorer("tool_calls")``), through ``inspect_ai.score`` in one process. Target: ek within
   1.2x of ``match()``.
2. Log ingestion: ``episodes_from_inspect_log`` (every sample -> Episode) against Inspect's
   ``read_eval_log`` (full read) on the same N-sample ``.eval`` log. Target: no slower (<= 1.0x).

Usage: ``python bench/inspect_adapter.py [N]`` (default 1000). Prints a table of ratios of CPU
time (best of interleaved rounds: robust to other load on a shared machine).
Offline: the model is ``mockllm`` with explicit usage.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.pop("INSPECT_TELEMETRY", None)

from ek.adapters.inspect import ek_scorer, task_success
from inspect_ai import Task, eval, score
from inspect_ai.agent import AgentSubmit, react
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model
from inspect_ai.scorer import match

from ek.agents.bridge import episodes_from_inspect_log

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "inspect_task.py"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("ek_inspect_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _best(fn: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _interleaved(fns: list[Callable[[], Any]], repeat: int = 5) -> list[float]:
    """Best CPU time of each function over ``repeat`` rounds, the functions taking turns within a
    round, so that load from other processes on a shared machine falls on all of them alike."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.process_time()
            fn()
            best[i] = min(best[i], time.process_time() - t0)
    return best


def main(n: int = 1000) -> None:
    ex = _example()
    base = ex.samples()
    samples = []
    for i in range(n):
        s = base[i % len(base)]
        samples.append(
            Sample(id=f"{s.id}-{i}", input=s.input, target=s.target, metadata=s.metadata)
        )
    t = Task(
        dataset=samples,
        solver=react(
            tools=[ex.lookup_order(), ex.refund_order()], submit=AgentSubmit(answer_only=True)
        ),
        scorer=match(),
        model=get_model("mockllm/model", custom_outputs=ex.scripted_agent()),
    )
    log_dir = tempfile.mkdtemp(prefix="ek-bench-inspect-")
    t0 = time.perf_counter()
    [log] = eval(t, display="none", log_dir=log_dir, max_samples=100)
    gen = time.perf_counter() - t0
    path = log.location
    size = os.path.getsize(path) / 1e6
    print(f"generated {n}-sample log in {gen:.1f}s ({size:.2f} MB): {path}\n")

    def rescore(scorer: Any) -> Callable[[], Any]:
        return lambda: score(copy.deepcopy(log), [scorer], action="overwrite", display="none")

    t_copy = _best(lambda: copy.deepcopy(log))
    t_match, t_ts, t_tc = (
        t - t_copy
        for t in _interleaved(
            [
                rescore(match()),
                rescore(task_success(check="final_state", price=ex.PRICE)),
                rescore(ek_scorer("tool_calls", check="final_state", price=ex.PRICE)),
            ]
        )
    )
    t_read, t_eps = _interleaved(
        [lambda: read_eval_log(path), lambda: sum(1 for _ in episodes_from_inspect_log(path))]
    )

    rows = [
        ("re-score: match() (Inspect)", t_match, 1.0, ""),
        ("re-score: ek/task_success(final_state)", t_ts, t_ts / t_match, "<= 1.2"),
        ('re-score: ek_scorer("tool_calls")', t_tc, t_tc / t_match, "<= 1.2"),
        ("read_eval_log (Inspect, full)", t_read, 1.0, ""),
        ("episodes_from_inspect_log (all)", t_eps, t_eps / t_read, "<= 1.0"),
    ]
    print(f"{'operation (N=' + str(n) + ')':<44}{'seconds':>10}{'ratio':>9}  target")
    for name, secs, ratio, target in rows:
        print(f"{name:<44}{secs:>10.3f}{ratio:>9.2f}  {target}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
