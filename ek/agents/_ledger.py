"""What a suite run keeps of its finished trials while it runs: each trial's judged episode,
verdict and Scores, the trials that ended in an infrastructure error, and the retries.

A trial finishes once, run now or read back from the store on a resume; the trial loop asks the
ledger what is left to run (:meth:`TrialLedger.finished`) and what the adaptive rule reads
(:meth:`TrialLedger.verdicts`), and the result is assembled from it.

Example:
    >>> from ek.agents.base import Episode
    >>> led = TrialLedger()
    >>> led.add_trial(Episode("a", trial=0), True, {})
    >>> led.add_infra("b", 0, "infrastructure: lost", retries=3)
    >>> led.finished("a", 0), led.finished("a", 1), led.verdicts("a", 2), led.done
    (True, False, [True], 2)
    >>> led.infra_counts()
    ({'b': 1}, {'b': 3})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ek.base import Score

from ._episode import Episode

__all__ = ["Trial", "TrialLedger", "record_retries"]


@dataclass(frozen=True)
class Trial:
    """One finished trial: its episode (``success`` is the checker's verdict), the verdict, and
    each metric's Score."""

    episode: Episode
    verdict: bool
    scores: Mapping[str, Score]


class TrialLedger:
    """The finished trials of one run (see the module docstring)."""

    def __init__(self) -> None:
        self.trials: dict[tuple[str, int], Trial] = {}
        self.infra: dict[tuple[str, int], tuple[str, int]] = {}  # -> (reason, retries)
        self.retries: dict[tuple[str, int], int] = {}  # trials that finished after retries
        self.done = 0  # finished trials, those that ended in an infrastructure error included
        self.failures = 0  # agent failures

    def finished(self, task_id: str, trial: int) -> bool:
        """Has trial ``trial`` of ``task_id`` finished (in this run or in the store)?"""
        key = (task_id, trial)
        return key in self.trials or key in self.infra

    def verdicts(self, task_id: str, first: int) -> list[bool]:
        """The verdicts of the task's first ``first`` trials that finished as trials."""
        got = self.trials
        return [got[(task_id, i)].verdict for i in range(first) if (task_id, i) in got]

    def add_trial(
        self, ep: Episode, ok: bool, scores: Mapping[str, Score], retries: int = 0
    ) -> None:
        """A finished trial: its judged episode, verdict, Scores and infrastructure retries."""
        key = (ep.task_id, ep.trial)
        self.trials[key] = Trial(ep, ok, scores)
        if retries:
            self.retries[key] = retries
        self.done += 1
        self.failures += ep.error is not None

    def add_infra(self, task_id: str, trial: int, reason: str, retries: int) -> None:
        """A trial that ended in an infrastructure error after ``retries`` retries."""
        self.infra[(task_id, trial)] = (reason, retries)
        self.done += 1

    def infra_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """``task_id -> infra-ended trials`` and ``task_id -> retries`` (tasks with any)."""
        ended: dict[str, int] = {}
        retried: dict[str, int] = {}
        for (tid, _), (_, r) in self.infra.items():
            ended[tid] = ended.get(tid, 0) + 1
            retried[tid] = retried.get(tid, 0) + r
        for (tid, _), r in self.retries.items():
            retried[tid] = retried.get(tid, 0) + r
        return ended, {t: r for t, r in retried.items() if r}


def record_retries(rec: Mapping[str, Any]) -> int:
    """The infrastructure retries a store record notes (0 when it notes none)."""
    r = rec.get("retries")
    return r if isinstance(r, int) and not isinstance(r, bool) else 0
