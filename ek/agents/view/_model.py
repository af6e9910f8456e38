"""A run read for the view: its summary, its store header, its reliability report, and one row
per task (counts, pass^k, flakiness, infrastructure errors, its trials).

A store is read once, by ``load_run`` with its trials: the summary's figures are the report's,
and a task's trials are read back from the store by offset when the page embeds them, one task
at a time, so memory follows the tasks and the page, not the trials. Another file (a baseline, an Inspect log, a trace file) is read whole, with its
episodes, as its reader must."""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek.agents._run.stored import ReadEpisode, StoredTrials, read_scores
from ek.agents.base import Episode
from ek.agents.cost import ModelPrice, episode_dollars, pricing_from_dict
from ek.agents.harness import RunSummary, load_run
from ek.agents.reliability import ReliabilityReport, pass_hat_k, reliability
from ek.base import Score

__all__ = [
    "RunView",
    "TaskRow",
    "Trial",
    "read_view",
    "store_header",
    "task_dollars",
    "trial_price",
]


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
    infra_errors: int
    retries: int
    #: The task's trials in trial order: a tuple, or (a store's) read back by offset when iterated.
    trials: Sequence[Trial]

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


def task_dollars(trials: Sequence[Trial], price: Any) -> float | None:
    """The agent's dollars over a task's trials, or ``None`` when a trial's are unknown (see
    :func:`~ek.agents.cost.episode_dollars`) or the task has no trial."""
    if not trials:
        return None
    total = 0.0
    for t in trials:
        d = episode_dollars(t.episode, price)
        if d is None:
            return None
        total += d
    return total


@dataclass(frozen=True)
class ReadTrial:
    """A store record's :class:`Trial`: its judged episode, its verdict, its Scores."""

    run: Mapping[str, Any]

    def __call__(self, rec: Mapping[str, Any]) -> Trial:
        return Trial(ReadEpisode(self.run)(rec), bool(rec["success"]), read_scores(rec))


def _stored_trials(s: RunSummary, run: Mapping[str, Any]) -> dict[str, StoredTrials[Trial]]:
    """Each task's trials of a store read with its trials (``load_run``), in trial order, read
    back by offset (episode and Scores at once) when the page embeds them. The summary holds a
    task's trials together, the tasks in the order of its counts."""
    if not isinstance(s.episodes, StoredTrials):
        raise TypeError(f"expected a store's trials read back by offset, got {s.episodes!r}")
    trials = s.episodes.read_as(ReadTrial(run), "trials")
    out, start = {}, 0
    for t, (n, _) in s.counts.items():
        if n:
            out[t] = trials[start : start + n]
            start += n
    return out


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


def _task_rows(s: RunSummary, trials: Mapping[str, Sequence[Trial]]) -> tuple[TaskRow, ...]:
    slices: dict[str, list[str]] = {}
    for name, members in s.slices.items():
        for t in members:
            slices.setdefault(t, []).append(name)
    infra = s.infra or {}
    ids = list(dict.fromkeys([*s.counts, *infra]))
    rows = []
    for t in ids:
        n, c = s.counts.get(t, (0, 0))
        rows.append(
            TaskRow(
                task_id=t,
                slices=tuple(slices.get(t, ())),
                n=n,
                c=c,
                pass_hat=pass_hat_k(n, c, s.k) if n else math.nan,
                infra_errors=infra.get(t, (0, 0))[0],
                retries=infra.get(t, (0, 0))[1],
                trials=trials.get(t, ()),
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
    p = os.fspath(path)
    header = store_header(p)
    s = load_run(p, success_scorer=success_scorer, trace_options=trace_options, episodes=True)
    trials: Mapping[str, Sequence[Trial]]
    if header is not None:  # a store: its trials read back by offset, a task at a time
        trials = _stored_trials(s, header["run"])
    else:
        trials = {t: tuple(tr) for t, tr in _trials_by_task(s).items()}
    return RunView(s, header, _reliability(s), _task_rows(s, trials))
