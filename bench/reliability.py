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

3. **Coverage of the 95 % intervals over tasks (issue 31).** Each repetition draws a suite of
   ``m`` tasks from a population (task success probabilities ``p_t ~ Beta(2, 1)``, k = 5
   trials each, ``c_t ~ Binomial(5, p_t)``) and asks the real :func:`reliability` (with
   ``interval="bootstrap"``, so the clustered intervals are computed beside) and the real
   stratified :func:`agent_regression_gate` (a baseline as above, a current run whose tasks
   lose a share ``s_t ~ Uniform(0, 0.2)`` of their success probability, the same tasks,
   independent trials; the ``task_success`` metric held as per-task sums, as ``load_run``
   gives it) whether their intervals contain the population's value: the success rate
   ``E[p] = 2/3`` (Wilson, clustered), ``pass^2 = E[p^2] = 1/2`` and
   ``pass^5 = E[p^5] = 2/7`` (bootstrap, clustered), and the paired change of the success
   rate, ``-E[p] E[s] = -1/15`` (the metric check: bootstrap, clustered; the success-rate check:
   the paired t interval of per-task rates) and of pass^5,
   ``E[p^5] (E[(1-s)^5] - 1) = -0.110034`` (paired t). The Monte Carlo standard error of a
   coverage ``c`` over ``R`` repetitions is ``sqrt(c (1 - c) / R)``, printed with the table.

Run: ``python bench/reliability.py [--reps 300] [--tasks 30] [--k 5] [--seed 0]``;
``python bench/reliability.py --part coverage --coverage-reps 2000 --sizes 30,300,3000``.
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

from ek.agents import Adaptive, Fault, FaultPlan, ToolFault, robustness, trials_saved
from ek.agents.base import RunProvenance, TaskSpec
from ek.agents.harness import (
    MetricSummary,
    RunSummary,
    TrialContext,
    agent_regression_gate,
    run_suite,
)
from ek.agents.reliability import reliability
from ek.base import Score

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
            (row,) = robustness(res)
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
        saved += trials_saved(ad) / (n_tasks * k)
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


# ----------------------------------------------------------------------------- issue 31

K = 5
#: Population values the intervals should contain (p ~ Beta(2, 1): E[p^j] = 2 / (j + 2);
#: s ~ Uniform(0, 0.2): E[s] = 0.1, E[(1 - s)^5] = (1 - 0.8^6) / (6 * 0.2)).
TRUTH = {
    "success": 2 / 3,
    "pass^2": 1 / 2,
    "pass^5": 2 / 7,
    "paired change of the success rate": -(2 / 3) * 0.1,
    "paired change of pass^5": (2 / 7) * ((1 - 0.8**6) / 1.2 - 1),
}


def _binomial(rng: random.Random, n: int, p: float) -> int:
    return sum(rng.random() < p for _ in range(n))


def _run(counts: dict[str, tuple[int, int]]) -> RunSummary:
    """A run as ``load_run(..., episodes=False)`` gives it: counts, task_success per-task sums."""
    scores = {
        t: (Score(float("nan"), {"successes": c, "n": n, "merged_trials": n}),)
        for t, (n, c) in counts.items()
    }
    m = MetricSummary("task_success", True, float("nan"), scores)
    return RunSummary(RunProvenance(agent="sim"), K, counts, metrics={"task_success": m})


def _family(method: str) -> str:
    return "clustered" if "clustered" in method else "bootstrap"


def _report_hits(counts: dict[str, tuple[int, int]], seed: int, interval: str) -> dict[str, bool]:
    rep = reliability(counts, K, seed=seed, interval=interval)
    assert rep.success_rate_clustered is not None
    hits = {
        "success / Wilson": rep.success_rate.contains(TRUTH["success"]),
        "success / clustered": rep.success_rate_clustered.contains(TRUTH["success"]),
    }
    other = "clustered" if rep.interval == "bootstrap" else "bootstrap"
    for j in (2, 5):
        truth = TRUTH[f"pass^{j}"]
        hits[f"pass^{j} / {rep.interval}"] = rep.pass_hat_k[j].contains(truth)
        if rep.cross_check:
            hits[f"pass^{j} / {other}"] = rep.cross_check["pass_hat_k"][j].contains(truth)
    return hits


def _gate_hits(
    base: dict[str, tuple[int, int]], cur: dict[str, tuple[int, int]], seed: int, interval: str
) -> dict[str, bool]:
    g = agent_regression_gate(
        _run(cur), _run(base), stratified=True, seed=seed, interval=interval, k=5
    )
    by = {c.name: c for c in g.checks}
    metric, change = by["task_success"], TRUTH["paired change of the success rate"]
    name = "paired change, success"
    hits = {
        f"{name} / {_family(metric.interval.method)}": metric.interval.contains(change),
        f"{name} / paired t": by["success_rate"].interval.contains(change),
        "paired change, pass^5 / paired t": by["pass^5"].interval.contains(
            TRUTH["paired change of pass^5"]
        ),
    }
    other = metric.detail["cross_check"]
    if other:
        hits[f"{name} / {_family(other['method'])}"] = other["low"] <= change <= other["high"]
    return hits


def interval_coverage(
    reps: int, n_tasks: int, seed: int, interval: str = "bootstrap"
) -> dict[str, float]:
    """The share of ``reps`` simulated suites of ``n_tasks`` tasks whose 95 % intervals
    contain the population's value, per quantity and method (see the module docstring).
    ``interval="bootstrap"`` computes both methods; ``"clustered"`` above 1,000 tasks only the
    clustered ones (and the closed forms), which is fast."""
    rng = random.Random(f"coverage/{n_tasks}/{seed}")
    hits: dict[str, int] = {}
    for rep in range(reps):
        p = [rng.betavariate(2, 1) for _ in range(n_tasks)]
        q = [pt * (1 - rng.uniform(0.0, 0.2)) for pt in p]
        ids = [f"t{i:05d}" for i in range(n_tasks)]
        base = {t: (K, _binomial(rng, K, pt)) for t, pt in zip(ids, p)}
        cur = {t: (K, _binomial(rng, K, qt)) for t, qt in zip(ids, q)}
        found = {**_report_hits(base, rep, interval), **_gate_hits(base, cur, rep, interval)}
        for name, hit in found.items():
            hits[name] = hits.get(name, 0) + hit
    return {name: h / reps for name, h in hits.items()}


def print_coverage(reps: int, sizes: list[int], seed: int, interval: str) -> None:
    table = {m: interval_coverage(reps, m, seed, interval) for m in sizes}
    se = (0.95 * 0.05 / reps) ** 0.5
    print(
        f"coverage of 95 % intervals ({reps} simulated suites a size; Monte Carlo standard "
        f"error at 95 %: {se:.2%}; the 94-96 % band is +-{0.01 / se:.1f} of them)"
    )
    print("| quantity / method | " + " | ".join(f"{m:,} tasks" for m in sizes) + " |")
    print("|---" + "|---:" * len(sizes) + "|")
    for name in sorted({n for t in table.values() for n in t}):
        cells = [f"{table[m][name]:.1%}" if name in table[m] else "-" for m in sizes]
        print(f"| {name} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    # the coverage table takes hours (see bench/README.md): only on request
    ap.add_argument("--part", choices=("all", "robustness", "coverage"), default="robustness")
    ap.add_argument("--coverage-reps", type=int, default=2000)
    ap.add_argument("--sizes", default="30,300,3000", help="task counts of the coverage table")
    ap.add_argument(
        "--interval",
        choices=("bootstrap", "clustered"),
        default="bootstrap",
        help="coverage: 'bootstrap' measures both methods; 'clustered' skips the bootstrap "
        "above 1,000 tasks (fast)",
    )
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    if args.part in ("all", "coverage"):
        sizes = [int(x) for x in args.sizes.split(",")]
        print_coverage(args.coverage_reps, sizes, args.seed, args.interval)
        if args.part == "coverage":
            print(f"\n({time.perf_counter() - t0:.0f}s)")
            return 0
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
