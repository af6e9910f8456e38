"""Adaptive trials: stop adding trials to a task once its outcome is settled.

``run_suite(agent, tasks, k=10, adaptive=Adaptive(min_trials=4))`` first runs ``min_trials``
trials of every task; a task whose first ``min_trials`` trials all agree (all pass or all fail:
**settled**, the rule) gets no more; every other task runs on to ``k``. Like Inspect AI's early
stopping, it spends trials where the outcome is uncertain. The two phases run one after the
other, so which tasks stop does not depend on concurrency or timing (a re-run, or a resume,
stops the same tasks).

**The estimators with unequal trial counts.** The success rate, pass@j and pass^j are computed
per task from that task's own ``(n_i, c_i)`` (tau2-bench's policy), so they are defined for
``j <= min_trials``: the report gives pass^j up to ``min(k, min_trials)``. They are *not*
exactly unbiased under the stopping rule: a task that happens to pass its first
``min_trials`` trials is scored pass^j = 1 and the success rate 1 although more trials could
have shown a failure (one that fails them all is scored 0 although more could have shown a
success). The bias is largest for tasks with a success probability near 0 or 1 that is not 0
or 1 (they are the ones that look settled and are not), pushes the per-task estimates towards
their extremes, and vanishes as ``min_trials`` grows. The pooled success rate is also
re-weighted (a settled task has fewer trials in the pool); the mean of per-task rates is not.
``bench/reliability.py`` measures it against the fixed-k run on simulated agents (tasks with
success probabilities drawn from Beta(0.4, 0.4), ``k=10``, ``min_trials=4``): about a third of
the trials saved, the adaptive pass^4 inside the fixed run's 95% interval in 98% of runs, and
a bias of about +0.05 on a true pass^4 of 0.30 (fixed k: none); ``bench/README.md`` records it.

Example:
    >>> a = Adaptive(min_trials=3)
    >>> a.settled([True, True, True]), a.settled([True, False, True]), a.settled([True, True])
    (True, False, False)
    >>> Adaptive(min_trials=0)
    Traceback (most recent call last):
    ...
    ValueError: Adaptive.min_trials must be an int >= 1, got 0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ek._validate import positive_int

if TYPE_CHECKING:
    from ._result import SuiteResult

__all__ = ["Adaptive", "trials_saved"]

_RULES = ("unanimous",)


@dataclass(frozen=True)
class Adaptive:
    """The stopping rule of adaptive trials (see the module docstring).

    Attributes:
        min_trials: Trials every task gets before the rule is applied (>= 1).
        rule: ``"unanimous"``: settled when those trials all agree.
    """

    min_trials: int = 3
    rule: str = "unanimous"

    def __post_init__(self) -> None:
        positive_int("Adaptive.min_trials", self.min_trials)
        if self.rule not in _RULES:
            raise ValueError(f"Adaptive.rule must be one of {list(_RULES)}, got {self.rule!r}")

    def settled(self, outcomes: Sequence[bool]) -> bool:
        """Is a task with these first outcomes settled (no more trials needed)?"""
        first = list(outcomes)[: self.min_trials]
        return len(first) >= self.min_trials and len(set(first)) == 1

    def to_dict(self) -> dict[str, Any]:
        """What a store header records."""
        return {"min_trials": self.min_trials, "rule": self.rule}


def trials_saved(result: SuiteResult) -> int:
    """Trials of a suite result not run because the adaptive rule settled their task (0 for a
    run without ``adaptive=``): ``tasks x k`` minus the trials run (infrastructure errors
    included).

    Example:
        >>> from ek.agents.base import TaskSpec
        >>> from ek.agents.harness import run_suite
        >>> tasks = [TaskSpec(f"t{i}", gold=1) for i in range(3)]
        >>> res = run_suite(lambda task: 1, tasks, k=5, adaptive=Adaptive(min_trials=2))
        >>> trials_saved(res), res.n_trials    # every task settled after its first 2 trials
        (9, 6)
    """
    if result.adaptive is None:
        return 0
    ran = sum(n for n, _ in result.counts.values()) + result.n_infra_errors
    return len(result.tasks) * result.k - ran
