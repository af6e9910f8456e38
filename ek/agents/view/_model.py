"""A run read for the view: its summary with episodes, its store header, its reliability
report, and one row per task (counts, pass^k, flakiness, cost, infrastructure errors)."""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek.agents.base import Episode
from ek.agents.cost import ModelPrice, episode_dollars, pricing_from_dict
from ek.agents.harness import RunSummary, load_run
from ek.agents.reliability import ReliabilityReport, pass_hat_k, reliability
from ek.base import Score

__all__ = ["RunView", "TaskRow", "Trial", "read_view", "store_header", "trial_price"]


@dataclass(frozen=True)
class Trial:
    """One trial: its episode, the checker's verdict, and every metric's Score of it."""

    episode: Episode
    ok: bool | None
    scores: Mapping[str, Score]


@dataclass(frozen=True)
class TaskRow:
    """One task of the run as the task table shows it."""

    task_id: str
    slices: tuple[str, ...]
    n: int
    c: int
    pass_hat: float
    dollars: float | None
    infra_errors: int
    retries: int
    trials: tuple[Trial, ...]

    @property
    def flaky(self) -> bool:
        """Some trials passed and some failed."""
        return 0 < self.c < self.n

    @property
    def failed(self) -> bool:
        """At least one trial failed."""
        return self.c < self.n


@dataclass(frozen=True)
class RunView:
    """Everything the page shows of one run."""

    summary: RunSummary
    header: Mapping[str, Any] | None
    reliability: ReliabilityReport | None
    tasks: tuple[TaskRow, ...]


def store_header(path: str) -> Mapping[str, Any] | None:
    """The header (first line) of a trial store, or ``None`` for any other file."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 24)
        obj = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) and "ek_store" in obj else None


def trial_price(summary: RunSummary) -> ModelPrice | Mapping[str, ModelPrice] | None:
    try:
        price, catalog = pricing_from_dict(summary.pricing)
    except (TypeError, ValueError, KeyError):
        return None
    return price if price is not None else catalog


def _task_dollars(eps: Sequence[Episode], price: Any) -> float | None:
    total = 0.0
    for ep in eps:
        d = episode_dollars(ep, price)
        if d is None:
            return None
        total += d
    return total


def _trials_by_task(s: RunSummary) -> dict[str, list[Trial]]:
    """Each task's trials, with the i-th Score of every metric for the i-th trial of a task
    (a summary read with its episodes keeps them aligned so)."""
    out: dict[str, list[Trial]] = {}
    verdicts: Sequence[bool | None] = s.verdicts or tuple(ep.success for ep in s.episodes or ())
    for ep, ok in zip(s.episodes or (), verdicts):
        i = len(out.setdefault(ep.task_id, []))
        scores = {
            name: m.scores[ep.task_id][i]
            for name, m in s.metrics.items()
            if i < len(m.scores.get(ep.task_id, ()))
        }
        out[ep.task_id].append(Trial(ep, ok, scores))
    return out


def _task_rows(s: RunSummary) -> tuple[TaskRow, ...]:
    trials = _trials_by_task(s)
    price = trial_price(s)
    slices: dict[str, list[str]] = {}
    for name, members in s.slices.items():
        for t in members:
            slices.setdefault(t, []).append(name)
    infra = s.infra or {}
    ids = list(dict.fromkeys([*s.counts, *infra]))
    rows = []
    for t in ids:
        n, c = s.counts.get(t, (0, 0))
        tr = trials.get(t, [])
        rows.append(
            TaskRow(
                task_id=t,
                slices=tuple(slices.get(t, ())),
                n=n,
                c=c,
                pass_hat=pass_hat_k(n, c, s.k) if n else math.nan,
                dollars=_task_dollars([x.episode for x in tr], price) if tr else None,
                infra_errors=infra.get(t, (0, 0))[0],
                retries=infra.get(t, (0, 0))[1],
                trials=tuple(tr),
            )
        )
    return tuple(rows)


def _reliability(s: RunSummary) -> ReliabilityReport | None:
    counts = {t: nc for t, nc in s.counts.items() if nc[0] > 0}
    if not counts:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return reliability(counts, s.k, seed=s.run.seed or 0)


def read_view(
    path: str | os.PathLike[str],
    *,
    success_scorer: str | None = None,
    trace_options: Mapping[str, Any] | None = None,
) -> RunView:
    """Read any run ``ek-agents report`` reads, with its episodes, for the page
    (``success_scorer`` and ``trace_options`` as :func:`~ek.agents.harness.load_run` takes them).

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a run ek can read (:class:`~ek.agents.harness.RunLoadError`).
    """
    s = load_run(path, success_scorer=success_scorer, trace_options=trace_options, episodes=True)
    p = os.fspath(path)
    return RunView(s, store_header(p), _reliability(s), _task_rows(s))
