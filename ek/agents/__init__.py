"""ek.agents: agent and assistant evaluation (episodes, tool calls, trajectories, cost, pass^k).

Every public name has one import path. The spec's modules are the faces:
:mod:`ek.agents.base` (the episode and the task shapes), :mod:`ek.agents.harness`
(``run_suite``, baselines, the gate, ``load_run``), :mod:`ek.agents.metrics`,
:mod:`ek.agents.toolcalls`, :mod:`ek.agents.trajectory`, :mod:`ek.agents.reliability`,
:mod:`ek.agents.cost`, :mod:`ek.agents.judge`, :mod:`ek.agents.bridge`, :mod:`ek.agents.traces`,
:mod:`ek.agents.verifier` and :mod:`ek.agents.plots`. This package itself exports only the
names no face holds: trial budgets, seeded tool faults, adaptive trials, consistency,
infrastructure errors, and the feature reports over a run (:func:`robustness`,
:func:`budget_curve`, :func:`trials_saved`, :func:`consistency`). Modules whose name starts
with ``_`` are private.

Importing this package registers the default checkers and metrics. It imports no third-party
package: the bridges to Inspect AI, DeepEval and Ragas duck-type their objects.

Example:
    >>> from ek.agents import Budget, consistency
    >>> Budget(steps=8).steps
    8
    >>> r = consistency({"t1": (4, 4), "t2": (4, 2)})
    >>> r.n_consistent, r.n_tasks
    (1, 2)
"""

from __future__ import annotations

# The default checkers and metrics register themselves when their modules are imported.
from ek.agents import metrics, toolcalls, trajectory, verifier  # noqa: F401
from ek.agents._adaptive import Adaptive, trials_saved
from ek.agents._budget import Budget, BudgetCurve, budget_curve
from ek.agents._consistency import ConsistencyReport, TaskConsistency, consistency, flip_rate
from ek.agents._faults import (
    FAULT_KINDS,
    Fault,
    FaultPlan,
    RobustnessRow,
    ToolFault,
    corrupt,
    fault_stream,
    robustness,
    wrap_tool,
)
from ek.agents._infra import InfraError, RetryPolicy

__all__ = [
    "FAULT_KINDS",
    "Adaptive",
    "Budget",
    "BudgetCurve",
    "ConsistencyReport",
    "Fault",
    "FaultPlan",
    "InfraError",
    "RetryPolicy",
    "RobustnessRow",
    "TaskConsistency",
    "ToolFault",
    "budget_curve",
    "consistency",
    "corrupt",
    "fault_stream",
    "flip_rate",
    "robustness",
    "trials_saved",
    "wrap_tool",
]
