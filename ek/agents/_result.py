"""What a suite run gives back: :class:`SuiteResult` (the run's data and its core summary) and
one :class:`SliceResult` per slice, assembled from the run's ledger.

The reports of the features beyond pass^k are functions over a result that live with their
feature: :func:`~ek.agents.robustness` (success under each injected fault against
clean), :func:`~ek.agents.budget_curve` (success against a cap, from the recorded
usage), :func:`~ek.agents.trials_saved`, and
:func:`~ek.agents.consistency` of the result's counts.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ek.base import ReadOnlyDict, Score
from ek.harness import metric_direction
from ek.jsonio import to_json_safe

from ._adaptive import Adaptive, trials_saved
from ._budget import Budget, budget_hits
from ._checker import checker_identity
from ._config import SuiteConfig
from ._episode import Episode, RunProvenance
from ._faults import Fault, robustness
from ._fingerprint import metric_config
from ._run.ledger import Trial, TrialLedger
from ._run.stored import ReadEpisode, ReadScore, StoredTrials, StoreFile
from ._run.summary import MetricSummary, RunSummary
from ._scoring import aggregate
from ._spec import TaskSpec
from ._suite_metrics import SuiteMetrics
from .cost import CostReport, CostTally, pricing_to_dict
from .reliability import ReliabilityReport, reliability

__all__ = ["SliceResult", "SuiteResult", "assemble", "slice_ids"]

T = TypeVar("T")


@dataclass(frozen=True)
class SliceResult:
    """One slice of a suite: its tasks, counts, cost report and metric aggregates."""

    name: str
    task_ids: tuple[str, ...]
    n_trials: int
    n_successes: int
    cost: CostReport
    metrics: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "task_ids": list(self.task_ids),
            "n_trials": self.n_trials,
            "n_successes": self.n_successes,
            "cost": self.cost.to_dict(),
            "metrics": to_json_safe(dict(self.metrics)),
        }


@dataclass(frozen=True, repr=False)
class SuiteResult:
    """Everything a suite run produced.

    Attributes:
        run: Provenance (its ``seed`` is the run seed).
        k: Trials per task.
        tasks: The tasks, in the order given.
        episodes: Every trial, ordered by task then trial; ``success`` is the checker's verdict
            (with a store: read from it on demand, see **Memory** below).
        verdicts: The checker's verdict per episode (aligned).
        counts: ``task_id -> (n trials, c successes)``.
        cost: Tokens and dollars by role and model, and Cost-of-Pass.
        slices: ``slice name -> SliceResult``.
        metrics: ``metric name -> corpus aggregate`` (each metric's own ratio of sums).
        scores: ``metric name -> scores`` aligned with ``episodes`` (with a store: read from
            it on demand).
        directions: ``metric name -> higher_is_better`` (read from the scores first).
        agent_failures: Trials where the agent raised, timed out or returned garbage.
        resumed: Trials read back from the store instead of run.
        store: The store path, or ``None``.
        elapsed: Wall-clock seconds of this call.
        infra_errors: ``task_id -> trials that ended in an infrastructure error`` after every
            retry (left out of ``episodes``, ``counts`` and pass^k; see :mod:`ek.agents._infra`).
        retries: ``task_id -> infrastructure retries`` over its trials.
        budget: The per-trial :class:`~ek.agents.Budget`, or ``None``.
        budget_hits: ``{budget limit: trials it stopped}``.
        pricing: The run's price setting (``pricing_to_dict``), for dollar budget curves.
        metric_configs: ``metric name -> configuration``
            (:func:`~ek.agents._fingerprint.metric_config`), as the store records it; the gate
            compares them.
        adaptive: The adaptive stopping rule, or ``None`` (see
            :func:`~ek.agents.trials_saved`).
        fault: The fault every trial of this result ran under, or ``None`` (clean).
        faults: ``fault name -> SuiteResult`` of the same tasks under each fault of
            ``faults=`` (see :func:`~ek.agents.robustness`).
        confidence: Interval coverage of :attr:`reliability` (and of robustness, consistency).
        n_resamples: Bootstrap replicates of :attr:`reliability`'s pass@k/pass^k intervals.
        checker: The checker that decided success, as the store records it
            (:func:`~ek.agents._checker.checker_identity`: its description, fingerprint and
            whether it is a judge); the gate refuses runs that different judges decided.

    The reports of the features beyond pass^k are functions over a result, each with its
    feature: :func:`~ek.agents.robustness`, :func:`~ek.agents.budget_curve`,
    :func:`~ek.agents.trials_saved`, and :func:`~ek.agents.consistency`
    of :attr:`counts`.

    **Memory.** A run without a store holds every trial it reports (tuples of episodes and
    Scores). A run with a store keeps its trials in the store: :attr:`episodes` and each
    :attr:`scores` entry are read-only sequences (:class:`~ek.agents._run.stored.StoredTrials`)
    that read the records back by byte offset when indexed or iterated, equal to the tuples the
    same run holds in memory; the result itself holds a verdict and an offset a trial, and what
    grows with tasks (counts, spans, the tasks). Writing a store of 10^5 trials (2,000 tasks x
    k = 50, 120 MiB) peaks at about 41 MB and resuming it (every trial read back) at about
    36 MB, against 450 MB and 1,051 MB when the result held every trial
    (``bench/resume.py``). A stored result read after its store changed (a later run resumed
    it, the file was replaced or deleted) raises
    :class:`~ek.agents._run.stored.StoreChangedError`; it pickles as the path and the offsets.

    :attr:`reliability` (its bootstrap over tasks is the one computation after the trials whose
    cost grows with ``n_resamples x tasks``) is computed when first read, from :attr:`counts`,
    and kept; its warnings (a deterministic agent, unequal trial counts) are issued then.
    """

    run: RunProvenance
    k: int
    tasks: tuple[TaskSpec, ...]
    episodes: Sequence[Episode]
    verdicts: tuple[bool, ...]
    counts: Mapping[str, tuple[int, int]]
    cost: CostReport
    slices: Mapping[str, SliceResult]
    metrics: Mapping[str, float]
    scores: Mapping[str, Sequence[Score]]
    directions: Mapping[str, bool]
    agent_failures: int
    resumed: int
    store: str | None
    elapsed: float
    infra_errors: Mapping[str, int] = field(default_factory=dict)
    retries: Mapping[str, int] = field(default_factory=dict)
    budget: Budget | None = None
    budget_hits: Mapping[str, int] = field(default_factory=dict)
    pricing: Mapping[str, Any] | None = None
    metric_configs: Mapping[str, Mapping[str, Any]] | None = None
    adaptive: Adaptive | None = None
    fault: Fault | None = None
    faults: Mapping[str, SuiteResult] = field(default_factory=dict)
    confidence: float = 0.95
    n_resamples: int = 2000
    checker: Mapping[str, Any] | None = None
    _built: dict[str, Any] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    @property
    def reliability(self) -> ReliabilityReport:
        """Success rate (Wilson), pass@k and pass^k (bootstrap over tasks), per slice.

        :func:`~ek.agents.reliability.reliability` of :attr:`counts` (k capped at the adaptive
        rule's ``min_trials``; the run seed), built on first read and kept.

        Raises:
            ValueError: no task has a trial (every trial ended in an infrastructure error).
        """
        rep = self._built.get("reliability")
        if rep is None:
            k = self.k if self.adaptive is None else min(self.k, self.adaptive.min_trials)
            rep = self._built["reliability"] = reliability(
                self.counts,
                k,
                slices=slice_ids(self.tasks) or None,
                confidence=self.confidence,
                n_resamples=self.n_resamples,
                seed=int(self.run.seed or 0),
            )
        return rep

    @property
    def n_infra_errors(self) -> int:
        """Trials that ended in an infrastructure error (not counted as trials)."""
        return sum(self.infra_errors.values())

    @property
    def n_trials(self) -> int:
        """Trials in the result."""
        return len(self.episodes)

    def __repr__(self) -> str:
        rate = self.success_rate
        return (
            f"SuiteResult(tasks={len(self.tasks)}, k={self.k}, trials={self.n_trials}, "
            f"success_rate={rate:.4g}, agent_failures={self.agent_failures}, "
            f"resumed={self.resumed}, metrics={dict(self.metrics)}, run={self.run.signature()!r})"
        )

    @property
    def success_rate(self) -> float:
        """Pooled successes / trials (NaN when empty)."""
        return sum(self.verdicts) / len(self.verdicts) if self.verdicts else math.nan

    def summary(self) -> RunSummary:
        """The :class:`~ek.agents.harness.RunSummary` a report, a baseline and a gate use."""
        # the trials are ordered by task as the counts are: each task's n Scores in turn
        owners = [t for t, (n, _) in self.counts.items() for _ in range(n)]
        per_task: dict[str, dict[str, list[Score]]] = {m: {} for m in self.scores}
        for name, ss in self.scores.items():
            for tid, s in zip(owners, ss):
                per_task[name].setdefault(tid, []).append(s)
        metrics = {
            name: MetricSummary(
                name,
                self.directions[name],
                self.metrics[name],
                {t: tuple(v) for t, v in per_task[name].items()},
            )
            for name in self.scores
        }
        slices = {name: sl.task_ids for name, sl in self.slices.items()}
        return RunSummary(
            run=self.run,
            k=self.k,
            counts=self.counts,
            slices=slices,
            metrics=metrics,
            cost=self.cost.to_dict(),
            source=self.store,
            episodes=self.episodes,
            verdicts=self.verdicts,
            pricing=self.pricing,
            metric_configs=self.metric_configs,
            checker=self.checker,
            infra=_infra_summary(self.infra_errors, self.retries),
            faults={n: dict(r.counts) for n, r in self.faults.items()} if self.faults else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the aggregates (episodes are in the store)."""
        return {
            "run": self.run.to_dict(),
            "k": self.k,
            "n_tasks": len(self.tasks),
            "n_trials": self.n_trials,
            "agent_failures": self.agent_failures,
            "resumed": self.resumed,
            "store": self.store,
            "elapsed": self.elapsed,
            "reliability": self.reliability.to_dict(),
            "cost": self.cost.to_dict(),
            "metrics": to_json_safe(dict(self.metrics)),
            "directions": dict(self.directions),
            "slices": {n: s.to_dict() for n, s in self.slices.items()},
            **_beyond_pass_k(self),
        }


def _infra_summary(
    infra_errors: Mapping[str, int], retries: Mapping[str, int]
) -> dict[str, tuple[int, int]] | None:
    """``task_id -> (infra-ended trials, retries)``, or ``None`` when there were neither."""
    if not any(infra_errors.values()) and not any(retries.values()):
        return None
    ids = sorted(set(infra_errors) | set(retries))
    return {t: (infra_errors.get(t, 0), retries.get(t, 0)) for t in ids}


def _beyond_pass_k(res: SuiteResult) -> dict[str, Any]:
    """The to_dict keys of the options beyond pass^k (absent when unused)."""
    out: dict[str, Any] = {}
    if any(res.infra_errors.values()) or any(res.retries.values()):
        out["infra_errors"] = dict(res.infra_errors)
        out["retries"] = dict(res.retries)
    if res.budget is not None:
        out["budget"] = res.budget.to_dict()
        out["budget_hits"] = dict(res.budget_hits)
    if res.adaptive is not None:
        out["adaptive"] = {**res.adaptive.to_dict(), "trials_saved": trials_saved(res)}
    if res.fault is not None:
        out["fault"] = res.fault.to_dict()
    if res.faults:
        out["robustness"] = [row.to_dict() for row in robustness(res)]
    return out


@dataclass
class _Collected:
    """The finished trials ordered by task then trial, and where each task's trials are:
    in memory (a run without a store), or their records' offsets (a run with one)."""

    episodes: list[Episode] = field(default_factory=list)
    verdicts: list[bool] = field(default_factory=list)
    scores: dict[str, list[Score]] = field(default_factory=dict)
    offsets: array[int] = field(default_factory=lambda: array("q"))
    fresh: dict[str, dict[int, Score]] = field(default_factory=dict)  # position -> Score
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    spans: dict[str, range] = field(default_factory=dict)  # task_id -> its positions

    def add(
        self,
        trial: Trial | None,
        stored: tuple[bool, int] | None,
        fresh: Mapping[str, Score] | None,
    ) -> None:
        """Append a trial held in memory or one in the store (neither: no trial)."""
        if trial is not None:
            self.episodes.append(trial.episode)
            self.verdicts.append(trial.verdict)
            for name, ss in self.scores.items():
                ss.append(trial.scores[name])
            return
        if stored is None:
            return
        for name, s in (fresh or {}).items():
            self.fresh.setdefault(name, {})[len(self.verdicts)] = s
        self.verdicts.append(stored[0])
        self.offsets.append(stored[1])

    def items(
        self, run: RunProvenance, file: StoreFile | None
    ) -> tuple[Sequence[Episode], dict[str, Sequence[Score]]]:
        """The episodes and each metric's Scores: tuples, or read from the store ``file``."""
        if file is None:
            return tuple(self.episodes), {n: tuple(v) for n, v in self.scores.items()}
        at = self.offsets
        eps = StoredTrials(file, at, ReadEpisode(run.to_dict()), "episodes")
        scores: dict[str, Sequence[Score]] = {
            n: StoredTrials(file, at, ReadScore(n), f"scores of {n!r}", self.fresh.get(n))
            for n in self.scores
        }
        return eps, scores


def _collect(
    suite: Sequence[TaskSpec], k: int, ledger: TrialLedger, names: Sequence[str]
) -> _Collected:
    """Each finished trial ordered by task then trial, and the per-task counts."""
    out = _Collected(scores={name: [] for name in names})
    verdicts = out.verdicts
    for t in suite:
        tid = t.task_id
        start = len(verdicts)
        for i in range(k):
            out.add(
                ledger.trials.get((tid, i)), ledger.stored_trial(tid, i), ledger.fresh.get((tid, i))
            )
        out.counts[tid] = (len(verdicts) - start, sum(verdicts[start:]))
        out.spans[tid] = range(start, len(verdicts))
    return out


def _pick(items: Sequence[T], positions: Sequence[int]) -> Sequence[T]:
    """The items at ``positions``: still read from the store when they are."""
    if isinstance(items, StoredTrials):
        return items.take(positions)
    return [items[j] for j in positions]


def _totals(
    episodes: Iterable[Episode], verdicts: Sequence[bool], ms: SuiteMetrics
) -> tuple[CostReport, dict[str, int]]:
    """The cost report (:class:`~ek.agents.cost.CostTally`: :func:`~ek.agents.cost.cost_report`
    one episode at a time) and the budget stops, in one pass over the episodes."""
    tally = CostTally(price=ms.price, prices=ms.prices)
    hits: dict[str, int] = {}
    for ep, ok in zip(episodes, verdicts):
        tally.add(ep.cost, ok)
        if ep.error is not None:
            for limit, n in budget_hits((ep,)).items():
                hits[limit] = hits.get(limit, 0) + n
    return tally.report(), hits


def slice_ids(suite: Iterable[TaskSpec]) -> dict[str, list[str]]:
    """``slice name -> task ids`` in suite order."""
    out: dict[str, list[str]] = {}
    for t in suite:
        for s in t.slices:
            out.setdefault(s, []).append(t.task_id)
    return out


def _slice_results(
    slice_ids: Mapping[str, list[str]],
    got: _Collected,
    episodes: Sequence[Episode],
    scores: Mapping[str, Sequence[Score]],
    ms: SuiteMetrics,
) -> dict[str, SliceResult]:
    slices: dict[str, SliceResult] = {}
    for sname, ids in slice_ids.items():
        # the slice's trials in suite order, read from each task's span (no scan of all trials)
        idx = [j for tid in ids for j in got.spans[tid]]
        s_ok = [got.verdicts[j] for j in idx]
        s_metrics = {
            str(m.name): aggregate(m, _pick(scores[str(m.name)], idx)) for m in ms.reported
        }
        s_cost, _ = _totals(_pick(episodes, idx), s_ok, ms)
        slices[sname] = SliceResult(
            sname,
            tuple(ids),
            len(idx),
            sum(s_ok),
            s_cost,
            ReadOnlyDict(s_metrics),
        )
    return slices


def assemble(
    suite: Sequence[TaskSpec],
    cfg: SuiteConfig,
    run: RunProvenance,
    ledger: TrialLedger,
    ms: SuiteMetrics,
    *,
    resumed: int,
    store: str | None,
    elapsed: float,
    stored: StoreFile | None = None,
) -> SuiteResult:
    """The result: counts, cost, aggregates and slices now; the reliability report (a
    bootstrap over tasks) when :attr:`SuiteResult.reliability` is first read. With ``stored``
    (the run's store as the run left it) the episodes and Scores are read from it
    (:mod:`ek.agents._run.stored`), by the same code that reads the tuples of a run without one."""
    mets = ms.reported
    got = _collect(suite, cfg.k, ledger, [str(m.name) for m in mets])
    episodes, scores = got.items(run, stored)
    aggregates = {str(m.name): aggregate(m, scores[str(m.name)]) for m in mets}
    directions = {
        str(m.name): metric_direction(
            str(m.name),
            scores[str(m.name)][0].detail if scores[str(m.name)] else None,
            bool(getattr(m, "higher_is_better", True)),
        )
        for m in mets
    }
    infra_errors, retries = ledger.infra_counts()
    cost, hits = _totals(episodes, got.verdicts, ms)
    return SuiteResult(
        run=run,
        k=cfg.k,
        tasks=tuple(suite),
        episodes=episodes,
        verdicts=tuple(got.verdicts),
        counts=ReadOnlyDict(got.counts),
        cost=cost,
        slices=ReadOnlyDict(_slice_results(slice_ids(suite), got, episodes, scores, ms)),
        metrics=ReadOnlyDict(aggregates),
        scores=ReadOnlyDict(scores),
        directions=ReadOnlyDict(directions),
        agent_failures=ledger.failures,
        resumed=resumed,
        store=store,
        elapsed=elapsed,
        infra_errors=ReadOnlyDict(infra_errors),
        retries=ReadOnlyDict(retries),
        budget=cfg.budget,
        budget_hits=ReadOnlyDict(hits),
        pricing=pricing_to_dict(ms.price, ms.prices),
        metric_configs=ReadOnlyDict({str(m.name): metric_config(m) for m in mets}),
        adaptive=cfg.adaptive,
        fault=cfg.fault,
        confidence=cfg.confidence,
        n_resamples=cfg.n_resamples,
        checker=ReadOnlyDict(checker_identity(cfg.check)),
    )
