"""What a suite run keeps of its finished trials while it runs: each trial's verdict, and
either its judged episode and Scores (a run without a store) or where its record starts in the
store (a run with one: the record holds the episode and Scores, read back on demand); the
trials that ended in an infrastructure error, and the retries.

A trial finishes once, run now or read back from the store on a resume; the trial loop asks the
ledger what is left to run (:meth:`TrialLedger.finished`) and what the adaptive rule reads
(:meth:`TrialLedger.verdicts`), and the result is assembled from it. A stored trial costs the
ledger a byte (its verdict) and eight (its offset), kept per task; a Score the store does not
hold (a metric scored afresh on a resume) is kept beside it.

Example:
    >>> from ek.agents.base import Episode
    >>> led = TrialLedger()
    >>> led.add_trial(Episode("a", trial=0), True, {})
    >>> led.add_infra("b", 0, "infrastructure: lost", retries=3)
    >>> led.finished("a", 0), led.finished("a", 1), led.verdicts("a", 2), led.done
    (True, False, [True], 2)
    >>> led.infra_counts()
    ({'b': 1}, {'b': 3})
    >>> led.add_stored("c", 1, False, 4096, failed=True)
    >>> led.verdicts("c", 2), led.stored_trial("c", 1), led.failures
    ([False], (False, 4096), 1)
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ek.base import Score

from .._episode import Episode

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
        self.trials: dict[tuple[str, int], Trial] = {}  # held in memory (no store)
        self.infra: dict[tuple[str, int], tuple[str, int]] = {}  # -> (reason, retries)
        self.retries: dict[tuple[str, int], int] = {}  # trials that finished after retries
        self.fresh: dict[tuple[str, int], dict[str, Score]] = {}  # Scores the store lacks
        self.done = 0  # finished trials, those that ended in an infrastructure error included
        self.failures = 0  # agent failures
        # stored trials, per task by trial number: verdict (0 none, 1 fail, 2 pass), offset
        self._verdict: dict[str, bytearray] = {}
        self._offset: dict[str, array[int]] = {}

    def finished(self, task_id: str, trial: int) -> bool:
        """Has trial ``trial`` of ``task_id`` finished (in this run or in the store)?"""
        key = (task_id, trial)
        return key in self.trials or key in self.infra or self._stored(task_id, trial) > 0

    def _stored(self, task_id: str, trial: int) -> int:
        got = self._verdict.get(task_id)
        return got[trial] if got is not None and trial < len(got) else 0

    def verdicts(self, task_id: str, first: int) -> list[bool]:
        """The verdicts of the task's first ``first`` trials that finished as trials."""
        out = []
        for i in range(first):
            r = self.trials.get((task_id, i))
            v = self._stored(task_id, i)
            if r is not None or v:
                out.append(r.verdict if r is not None else v == 2)
        return out

    def stored_trial(self, task_id: str, trial: int) -> tuple[bool, int] | None:
        """A stored trial's verdict and its record's byte offset (``None``: not stored)."""
        v = self._stored(task_id, trial)
        return (v == 2, self._offset[task_id][trial]) if v else None

    def add_trial(
        self, ep: Episode, ok: bool, scores: Mapping[str, Score], retries: int = 0
    ) -> None:
        """A finished trial held in memory: its judged episode, verdict, Scores and
        infrastructure retries."""
        key = (ep.task_id, ep.trial)
        self.trials[key] = Trial(ep, ok, scores)
        self._count(key, retries, ep.error is not None)

    def add_stored(
        self,
        task_id: str,
        trial: int,
        ok: bool,
        offset: int,
        *,
        failed: bool,
        retries: int = 0,
        fresh: Mapping[str, Score] | None = None,
    ) -> None:
        """A finished trial whose record starts at byte ``offset`` of the store: its verdict,
        whether the agent failed, its retries, and any Scores the record does not hold."""
        verdict = self._verdict.setdefault(task_id, bytearray())
        at = self._offset.setdefault(task_id, array("q"))
        if trial >= len(verdict):
            verdict.extend(bytes(trial + 1 - len(verdict)))
            at.extend([-1] * (trial + 1 - len(at)))
        verdict[trial], at[trial] = (2 if ok else 1), offset
        if fresh:
            self.fresh[(task_id, trial)] = dict(fresh)
        self._count((task_id, trial), retries, failed)

    def _count(self, key: tuple[str, int], retries: int, failed: bool) -> None:
        if retries:
            self.retries[key] = retries
        self.done += 1
        self.failures += failed

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
