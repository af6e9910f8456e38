"""Proof of the reliability-beyond-pass^k figures (issue 21), on simulated agents.

1. **Robustness-interval coverage.** Two settings. *Newcombe's own model*: every task succeeds
   with 0.7 clean and 0.5 under the fault, and the faulted trial draws independently of the
   clean one (true difference -0.2). *A realistic suite*: each repetition draws a suite of tasks with clean success
   probabilities ``p_t ~ Beta(2, 1)`` and a fault sensitivity ``s_t ~ Uniform(0, 0.6)`` (under
   the fault the task succeeds with ``p_t * (1 - s_t)``), and runs a simulated agent through the
   real ``run_suite(..., faults=FaultPlan([...]))``: clean and under the fault, ``k`` trials per
   task, the agent's look-up wrapped by ``context.tool``. The target is the true difference of
   the suite's success rates, ``mean_t(p_t (1 - s_t)) - mean_t(p_t)``; the row reports how often
   the robustness row's Newcombe interval contains it, at 95 % and 90 %.
2. **Adaptive-trial savings.** Tasks with ``p_t ~ Beta(0.4, 0.4)`` (most near 0 or 1, as in real
   suites) run with ``k = 10`` fixed, and adaptively with ``Adaptive(min_trials=4)`` (same
   seeds); the row reports the share of trials saved, how often the adaptive pass^4 point lies
   inside the fixed run's pass^4 interval, and the bias of each against the true pass^4,
   ``mean_t(p_t^4)``.

Run: ``python bench/reliability.py [--reps 300] [--tasks 30] [--k 5] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ek.agents.adaptive import Adaptive
from ek.agents.base import TaskSpec
from ek.agents.faults import Fault, FaultPlan, ToolFault
from ek.agents.suite import TrialContext, run_suite

PLAN = FaultPlan([Fault("error", tools=["lookup"], rate=1.0)])


def _tool(key: str) -> str:
    return key


def _fault_agent(p: dict[str, float], s: dict[str, float], paired: bool) -> Any:
    async def agent(task: TaskSpec, ctx: TrialContext) -> str:
        u = ctx.rng.random()
        try:
            ctx.tool("lookup", _tool)(task.task_id)
        except ToolFault:
            if not paired:  # an independent draw under the fault
                u = random.Random(f"fault/{ctx.seed}").random()
            return "ok" if u < p[task.task_id] * (1.0 - s[task.task_id]) else "no"
        return "ok" if u < p[task.task_id] else "no"

    return agent


def coverage(
    reps: int, n_tasks: int, k: int, seed: int, *, homogeneous: bool = False
) -> dict[float, float]:
    rng = random.Random(seed)
    hits = {0.95: 0, 0.90: 0}
    for rep in range(reps):
        ids = [f"t{i}" for i in range(n_tasks)]
        if homogeneous:  # Newcombe's own model: every trial Bernoulli(0.7) vs Bernoulli(0.5)
            p = dict.fromkeys(ids, 0.7)
            s = dict.fromkeys(ids, 2 / 7)
        else:
            p = {t: rng.betavariate(2, 1) for t in ids}
            s = {t: rng.uniform(0.0, 0.6) for t in ids}
        truth = sum(p[t] * (1 - s[t]) - p[t] for t in ids) / n_tasks
        tasks = [TaskSpec(t, gold="ok") for t in ids]
        for conf in hits:
            res = run_suite(
                _fault_agent(p, s, not homogeneous), tasks, k=k, seed=rep, faults=PLAN,
                confidence=conf,
                n_resamples=10,
            )  # fmt: skip
            (row,) = res.robustness
            hits[conf] += row.difference.low <= truth <= row.difference.high
    return {c: h / reps for c, h in hits.items()}


def _plain_agent(p: dict[str, float]) -> Any:
    async def agent(task: TaskSpec, ctx: TrialContext) -> str:
        return "ok" if ctx.rng.random() < p[task.task_id] else "no"

    return agent


def adaptive(reps: int, n_tasks: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed + 1)
    k, m = 10, 4
    saved = inside = 0.0
    bias_fixed = bias_adaptive = 0.0
    for rep in range(reps):
        ids = [f"t{i}" for i in range(n_tasks)]
        p = {t: rng.betavariate(0.4, 0.4) for t in ids}
        truth = sum(q**m for q in p.values()) / n_tasks
        tasks = [TaskSpec(t, gold="ok") for t in ids]
        fixed = run_suite(_plain_agent(p), tasks, k=k, seed=rep, n_resamples=200)
        ad = run_suite(
            _plain_agent(p), tasks, k=k, seed=rep, n_resamples=10, adaptive=Adaptive(min_trials=m)
        )
        saved += ad.trials_saved / (n_tasks * k)
        iv = fixed.reliability.pass_hat_k[m]
        point = ad.reliability.pass_hat_k[m].point
        inside += iv.low <= point <= iv.high
        bias_fixed += iv.point - truth
        bias_adaptive += point - truth
    return {
        "saved": saved / reps,
        "inside": inside / reps,
        "bias_fixed": bias_fixed / reps,
        "bias_adaptive": bias_adaptive / reps,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    cov = coverage(args.reps, args.tasks, args.k, args.seed)
    hom = coverage(args.reps, args.tasks, args.k, args.seed, homogeneous=True)
    print(f"robustness interval coverage ({args.reps} runs, {args.tasks} tasks, k={args.k})")
    print("| nominal | heterogeneous tasks, paired trials | identical tasks, independent trials |")
    print("|---:|---:|---:|")
    for conf, c in cov.items():
        print(f"| {conf:.0%} | {c:.1%} | {hom[conf]:.1%} |")
    ad = adaptive(args.reps, args.tasks, args.seed)
    print(f"\nadaptive trials (k=10, min_trials=4, {args.reps} runs, {args.tasks} tasks)")
    print("| trials saved | adaptive pass^4 inside fixed interval | bias fixed | bias adaptive |")
    print("|---:|---:|---:|---:|")
    print(
        f"| {ad['saved']:.1%} | {ad['inside']:.1%} | {ad['bias_fixed']:+.4f} | "
        f"{ad['bias_adaptive']:+.4f} |"
    )
    print(f"\n({time.perf_counter() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
