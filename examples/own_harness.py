"""Own harness: run_suite, a frozen baseline, and the variance-aware regression gate.

Runs offline in a few seconds on the retail suite that ships with ek-agents:

    python examples/own_harness.py            # writes into a temporary folder
    python examples/own_harness.py runs/ --ci # exit 1 when the gate finds a regression

Replace the demo's scripted agents with your own agent: any callable ``agent(task)`` or
``agent(task, context)`` (sync or async) that returns an ``Episode`` (or just its output).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

from ek.agents.base import Episode, TaskSpec
from ek.agents.demo import (
    DEMO_PRICES,
    baseline_agent,
    candidate_agent,
    load_tasks,
    replayed_state_match,
)
from ek.agents.harness import (
    TrialContext,
    agent_regression_gate,
    load_agent_baseline,
    run_suite,
    save_agent_baseline,
)
from ek.agents.metrics import CostPerSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("folder", nargs="?", help="where the stores and the baseline go")
parser.add_argument("--ci", action="store_true", help="exit 1 on a regression")
args = parser.parse_args()
folder = args.folder or tempfile.mkdtemp(prefix="ek-own-harness-")
os.makedirs(folder, exist_ok=True)

# 1. The tasks: each TaskSpec carries its input, its gold (here the database the task must
#    leave behind), its gold tool calls, and the tools with their cost grammar (refund_order and
#    cancel_order are destructive: a missing or extra call costs 10, a wrong order_id 8).
tasks: list[TaskSpec] = load_tasks()


# 2. Your agent. The harness passes a TrialContext: draw randomness from context.rng (or
#    context.seed) and every trial is reproducible from the run seed.
def my_agent(task: TaskSpec, context: TrialContext) -> Episode:
    return baseline_agent()(task, context)  # <- call your model / framework here


# 3. What to measure. The checker decides success (it replays the agent's tool calls on a fresh
#    database: it runs where the agent cannot reach it). Metrics score every trial against the
#    TaskSpec; their corpus aggregates are ratios of sums. Prices are explicit (these are the
#    demo's ILLUSTRATIVE rates, not real ones); without prices dollars are unknown, never $0.
metrics = [
    ToolCallMetric(),  # weighted tool-call F1 (BFCL AST semantics)
    TrajectoryMetric(),  # Needleman-Wunsch alignment, "in_order" scheme
    CostPerSuccessMetric(check=replayed_state_match, prices=DEMO_PRICES),  # lower is better
]
common = {"k": 5, "check": replayed_state_match, "metrics": metrics, "prices": DEMO_PRICES}

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    # 4. Run k trials of every task; the store makes the run resumable (re-run = skip done trials).
    base = run_suite(my_agent, tasks, store=os.path.join(folder, "baseline.jsonl"), **common)
    print(f"baseline : success {base.reliability.success_rate.point:.3f}, "
          f"pass^5 {base.reliability.pass_hat_k[5].point:.3f}, "
          f"Cost-of-Pass ${base.cost.cost_of_pass:.4f}")  # fmt: skip

    # 5. Freeze it: the baseline file keeps raw counts, per-task metric scores and provenance.
    save_agent_baseline(base, os.path.join(folder, "baseline.json"))

    # 6. Later (e.g. in CI): run the candidate and gate it against the frozen baseline. The gate
    #    tests the *difference* with both runs' uncertainty (Newcombe for the success rate, a
    #    bootstrap over tasks for each metric); noise passes, a real drop fails.
    cur = run_suite(
        candidate_agent(), tasks, store=os.path.join(folder, "candidate.jsonl"), **common
    )
    gate = agent_regression_gate(cur, load_agent_baseline(os.path.join(folder, "baseline.json")))

print(f"candidate: success {cur.reliability.success_rate.point:.3f}")
for c in gate.checks:
    iv = c.interval
    print(f"  {c.name:<18} change {iv.point:+.3f} [{iv.low:+.3f}, {iv.high:+.3f}]  {c.verdict}")
print("gate:", "PASS" if gate.passed else "REGRESSION", "-", gate.reason)
print(f"stores and baseline in {folder}")
if args.ci:
    sys.exit(0 if gate.passed else 1)
