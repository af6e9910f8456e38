"""Consistency and flakiness of an agent across the trials of each task.

pass^k says how often every one of k trials succeeds; this says *which* tasks an agent is
inconsistent on, and how much. Per task, from its raw counts ``(n trials, c successes)``:

* **outcome**: ``"all-pass"`` (c = n), ``"all-fail"`` (c = 0) or ``"mixed"``; a task with fewer
  than two trials cannot show inconsistency and is ``"single"`` (left out of the share below);
* **flip rate**: the chance that two of its trials, drawn without replacement, disagree:
  ``2·c·(n−c) / (n·(n−1))``, the unbiased estimator of ``2p(1−p)`` (0 for a consistent task,
  at most about 0.5 + 1/(2(n-1))). It needs no trial order, so it reads the same from a store,
  a baseline or an Inspect log.

For the run: the **share of consistent tasks** (all-pass or all-fail, among tasks with >= 2
trials) with a Wilson interval (tasks as the sampling units), and the **flakiest tasks**:
the mixed tasks ranked by trials (the most evidence of flakiness first), then flip rate, then
task id. The share depends on the trials per task (more trials, more chances to see a flip):
compare runs with the same k; the gate (``consistency=True``) compares it by Newcombe's
interval on the difference.

Example:
    >>> r = consistency({"a": (4, 4), "b": (4, 0), "c": (4, 2), "d": (5, 4), "e": (1, 1)})
    >>> [(t.task_id, t.outcome, round(t.flip_rate, 3)) for t in r.flakiest]
    [('d', 'mixed', 0.4), ('c', 'mixed', 0.667)]
    >>> r.n_consistent, r.n_tasks, round(r.share.point, 2)
    (2, 4, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek.stats import Interval, wilson_interval

__all__ = ["ConsistencyReport", "TaskConsistency", "consistency", "flip_rate"]


def flip_rate(n: int, c: int) -> float:
    """The chance that two of a task's ``n`` trials (``c`` successes) disagree; NaN for n < 2.

    Example:
        >>> flip_rate(4, 2), flip_rate(3, 3), flip_rate(1, 0) != flip_rate(1, 0)
        (0.6666666666666666, 0.0, True)
    """
    if n < 2:
        return math.nan
    return 2.0 * c * (n - c) / (n * (n - 1))


@dataclass(frozen=True)
class TaskConsistency:
    """One task's outcome class and flip rate."""

    task_id: str
    n: int
    c: int
    outcome: str
    flip_rate: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (a NaN flip rate as ``None``)."""
        fr = None if math.isnan(self.flip_rate) else self.flip_rate
        return {
            "task_id": self.task_id,
            "n": self.n,
            "c": self.c,
            "outcome": self.outcome,
            "flip_rate": fr,
        }


def _outcome(n: int, c: int) -> str:
    if n < 2:
        return "single"
    return "all-pass" if c == n else "all-fail" if c == 0 else "mixed"


@dataclass(frozen=True)
class ConsistencyReport:
    """Per-task consistency, the share of consistent tasks and the flakiest tasks.

    Attributes:
        tasks: Every task's :class:`TaskConsistency`, in the order given.
        n_consistent: Tasks with >= 2 trials that are all-pass or all-fail.
        n_tasks: Tasks with >= 2 trials.
        share: ``n_consistent / n_tasks`` with a Wilson interval.
        flakiest: The mixed tasks, ranked (at most ``top``).
        mean_flip_rate: The mean flip rate over tasks with >= 2 trials.
    """

    tasks: tuple[TaskConsistency, ...]
    n_consistent: int
    n_tasks: int
    share: Interval
    flakiest: tuple[TaskConsistency, ...]
    mean_flip_rate: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "n_consistent": self.n_consistent,
            "n_tasks": self.n_tasks,
            "share": self.share.to_dict(),
            "mean_flip_rate": None if math.isnan(self.mean_flip_rate) else self.mean_flip_rate,
            "flakiest": [t.to_dict() for t in self.flakiest],
            "outcomes": {
                o: sum(1 for t in self.tasks if t.outcome == o)
                for o in ("all-pass", "all-fail", "mixed", "single")
            },
        }


def consistency(
    counts: Mapping[str, Sequence[int]], *, confidence: float = 0.95, top: int = 10
) -> ConsistencyReport:
    """The :class:`ConsistencyReport` of per-task counts ``task_id -> (n, c)``.

    Raises:
        ValueError: a count that is not ``0 <= c <= n``, or ``top < 1``.
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be an int >= 1, got {top!r}")
    rows = []
    for t, pair in counts.items():
        n, c = int(pair[0]), int(pair[1])
        if not 0 <= c <= n:
            raise ValueError(f"counts[{t!r}] must satisfy 0 <= c <= n, got (n={n}, c={c})")
        rows.append(TaskConsistency(str(t), n, c, _outcome(n, c), flip_rate(n, c)))
    multi = [r for r in rows if r.n >= 2]
    n_cons = sum(1 for r in multi if r.outcome != "mixed")
    mixed = sorted(
        (r for r in rows if r.outcome == "mixed"), key=lambda r: (-r.n, -r.flip_rate, r.task_id)
    )
    mean_fr = math.fsum(r.flip_rate for r in multi) / len(multi) if multi else math.nan
    return ConsistencyReport(
        tuple(rows),
        n_cons,
        len(multi),
        wilson_interval(n_cons, len(multi), confidence),
        tuple(mixed[:top]),
        mean_fr,
    )
