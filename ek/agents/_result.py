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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
from ._ledger import TrialLedger
from ._scoring import aggregate
from ._spec import TaskSpec
from ._suite_metrics import SuiteMetrics
from ._summary import MetricSummary, RunSummary
from .cost import CostReport, cost_report, pricing_to_dict
from .reliability import ReliabilityReport, reliability

__all__ = ["SliceResult", "SuiteResult", "assemble", "slice_ids"]


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
        episodes: Every trial, ordered by task then trial; ``success`` is the checker's verdict.
        verdicts: The checker's verdict per episode (aligned).
        counts: ``task_id -> (n trials, c successes)``.
        cost: Tokens and dollars by role and model, and Cost-of-Pass.
        slices: ``slice name -> SliceResult``.
        metrics: ``metric name -> corpus aggregate`` (each metric's own ratio of sums).
        scores: ``metric name -> scores`` aligned with ``episodes``.
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

    **Memory.** A result holds every trial it reports (episodes, verdicts and Scores), run now
    or, on a resume, read back from the store (``resumed`` of them): its memory grows with
    trials, not tasks. Resuming a store of 10^5 trials (2,000 tasks x k = 50, 120 MiB) peaks at
    about 1 GB, against 0.45 GB for the run that wrote it (``bench/resume.py``). To read a large
    store without holding its trials, use :func:`~ek.agents.harness.load_run` (per-task
    summaries, streamed).

    :attr:`reliability` (its bootstrap over tasks is the one computation after the trials whose
    cost grows with ``n_resamples x tasks``) is computed when first read, from :attr:`counts`,
    and kept; its warnings (a deterministic agent, unequal trial counts) are issued then.
    """

    run: RunProvenance
    k: int
    tasks: tuple[TaskSpec, ...]
    episodes: tuple[Episode, ...]
    verdicts: tuple[bool, ...]
    counts: Mapping[str, tuple[int, int]]
    cost: CostReport
    slices: Mapping[str, SliceResult]
    metrics: Mapping[str, float]
    scores: Mapping[str, tuple[Score, ...]]
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
        per_task: dict[str, dict[str, list[Score]]] = {m: {} for m in self.scores}
        for name, ss in self.scores.items():
            for ep, s in zip(self.episodes, ss):
                per_task[name].setdefault(ep.task_id, []).append(s)
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
    """The finished trials ordered by task then trial, and where each task's trials are."""

    episodes: list[Episode] = field(default_factory=list)
    verdicts: list[bool] = field(default_factory=list)
    scores: dict[str, list[Score]] = field(default_factory=dict)
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    spans: dict[str, range] = field(default_factory=dict)  # task_id -> its positions


def _collect(
    suite: Sequence[TaskSpec], k: int, ledger: TrialLedger, names: Sequence[str]
) -> _Collected:
    """Episodes, verdicts and scores ordered by task then trial, and the per-task counts."""
    out = _Collected(scores={name: [] for name in names})
    eps, verdicts, scores = out.episodes, out.verdicts, out.scores
    for t in suite:
        start = len(eps)
        c = 0
        for i in range(k):
            r = ledger.trials.get((t.task_id, i))
            if r is None:
                continue
            ep, ok, sc = r.episode, r.verdict, r.scores
            eps.append(ep)
            verdicts.append(ok)
            for name in scores:
                scores[name].append(sc[name])
            c += ok
        out.counts[t.task_id] = (len(eps) - start, c)
        out.spans[t.task_id] = range(start, len(eps))
    return out


def slice_ids(suite: Iterable[TaskSpec]) -> dict[str, list[str]]:
    """``slice name -> task ids`` in suite order."""
    out: dict[str, list[str]] = {}
    for t in suite:
        for s in t.slices:
            out.setdefault(s, []).append(t.task_id)
    return out


def _slice_results(
    slice_ids: Mapping[str, list[str]], got: _Collected, ms: SuiteMetrics
) -> dict[str, SliceResult]:
    slices: dict[str, SliceResult] = {}
    for sname, ids in slice_ids.items():
        # the slice's trials in suite order, read from each task's span (no scan of all trials)
        idx = [j for tid in ids for j in got.spans[tid]]
        s_eps = [got.episodes[j] for j in idx]
        s_ok = [got.verdicts[j] for j in idx]
        s_metrics = {
            str(m.name): aggregate(m, [got.scores[str(m.name)][j] for j in idx])
            for m in ms.reported
        }
        slices[sname] = SliceResult(
            sname,
            tuple(ids),
            len(s_eps),
            sum(s_ok),
            cost_report(s_eps, price=ms.price, prices=ms.prices, successes=s_ok),
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
) -> SuiteResult:
    """The result: counts, cost, aggregates and slices now; the reliability report (a
    bootstrap over tasks) when :attr:`SuiteResult.reliability` is first read."""
    mets = ms.reported
    got = _collect(suite, cfg.k, ledger, [str(m.name) for m in mets])
    scores = got.scores
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
    return SuiteResult(
        run=run,
        k=cfg.k,
        tasks=tuple(suite),
        episodes=tuple(got.episodes),
        verdicts=tuple(got.verdicts),
        counts=ReadOnlyDict(got.counts),
        cost=cost_report(got.episodes, price=ms.price, prices=ms.prices, successes=got.verdicts),
        slices=ReadOnlyDict(_slice_results(slice_ids(suite), got, ms)),
        metrics=ReadOnlyDict(aggregates),
        scores=ReadOnlyDict({n: tuple(v) for n, v in scores.items()}),
        directions=ReadOnlyDict(directions),
        agent_failures=ledger.failures,
        resumed=resumed,
        store=store,
        elapsed=elapsed,
        infra_errors=ReadOnlyDict(infra_errors),
        retries=ReadOnlyDict(retries),
        budget=cfg.budget,
        budget_hits=ReadOnlyDict(budget_hits(got.episodes)),
        pricing=pricing_to_dict(ms.price, ms.prices),
        metric_configs=ReadOnlyDict({str(m.name): metric_config(m) for m in mets}),
        adaptive=cfg.adaptive,
        fault=cfg.fault,
        confidence=cfg.confidence,
        n_resamples=cfg.n_resamples,
        checker=ReadOnlyDict(checker_identity(cfg.check)),
    )
