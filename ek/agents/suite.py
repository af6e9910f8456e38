"""``run_suite``: k trials of every task, checked, scored, persisted and resumable.

**The agent.** A sync or async callable, ``agent(task)`` or ``agent(task, context)`` (the second
form is used when the signature accepts two positional arguments). ``task`` is the
:class:`~ek.agents.base.TaskSpec`; ``context`` is a :class:`TrialContext` whose ``seed`` is
derived deterministically from the run seed, the task id and the trial (:func:`trial_seed`), so a
stochastic agent that draws from ``context.rng`` is reproducible. It returns:

* an :class:`~ek.agents.base.Episode` (the harness fills ``trial`` always, and ``run`` and
  ``duration`` when missing; a different ``task_id`` is an agent failure), or
* a mapping or object with ``output`` / ``trajectory`` / ``final_state`` / ``cost`` (and optionally
  ``metadata``), or
* any other value, taken as the ``output``.

**Faults.** An agent that raises, times out (``timeout`` seconds) or returns something that is not
a valid episode gives a *failed trial* with ``Episode.error`` set: an agent failure, counted as
such (``SuiteResult.agent_failures``). An exception inside ek's own checker or metrics (or the
progress callback) is a *harness error*: no more trials start, the trials that finished are
flushed to the store, and :class:`HarnessError` is raised. A timed-out **sync** agent cannot be
killed: its thread keeps running in the background and its result is discarded.

**Verdicts.** The checker receives ``(episode, task.gold)``; a failed trial is not checked. The
episode's ``success`` is then set to the checker's verdict (what the agent itself reported is
not trusted). Every metric in ``metrics=`` receives ``(episode, task)``: the
:class:`~ek.agents.base.TaskSpec` itself is the gold, so tool-call and trajectory metrics read its
``gold_calls`` and tools.

**One number whatever the path.** Each metric gives, per trial, exactly what
``metric(episode, task)`` gives when called directly, and a run never reports two figures for
one quantity:

* *Grammar.* A metric whose ``grammar`` is ``None`` scores each task with that task's own tools
  (Layer-A weights: a destructive tool weighs 10): ek's tool-call and trajectory metrics read
  them from the TaskSpec gold, and any metric with a ``with_grammar(grammar)`` method is rebuilt
  through it with each task's grammar (:meth:`~ek.agents.base.TaskSpec.grammar`). A metric built
  with a grammar keeps it. The user's metric objects are never modified.
* *Verdicts.* A metric with its own success checker (``check`` and ``with_check``:
  :class:`~ek.agents.metrics.TaskSuccessMetric`, :class:`~ek.agents.metrics.CostPerSuccessMetric`)
  gives the suite's verdict: built without ``check`` it adopts the suite's checker, built with
  the suite's checker it keeps it, built with another checker it is refused (``ValueError``).
  The checker runs once per trial; the metric reads its verdict.
* *Prices.* The run has one price setting: ``price``/``prices`` given to ``run_suite``, else the
  one a priced metric (``price``/``prices`` and ``with_prices``) was built with. A metric
  without a price adopts it; a metric priced differently is refused (``ValueError``). So
  ``SuiteResult.cost.cost_of_pass == SuiteResult.metrics["cost_per_success"]``.

A metric given by registered name is the registered instance (see :mod:`ek.registry`), a metric
class is instantiated with the suite's ``check``, ``price`` and ``prices`` when its constructor
accepts them.

**Concurrency.** Async agents run on one event loop under a limit of ``concurrency`` trials;
sync agents run in a pool of ``concurrency`` threads; ``executor=`` sends the trials to any
:class:`concurrent.futures.Executor` (a process pool, or ``distributed.Client.get_executor()``
for a Dask cluster; the agent and its inputs must then be picklable) in **batches**: one
executor call runs ``batch_size`` trials one after another and returns one compact result per
trial (:mod:`ek.agents._attempt`), and ``concurrency`` calls are in flight at once (so set it to
the executor's worker count). In a batch each trial's time limit is enforced in the worker, on
its own run time. An executor call that is lost (a worker killed, a connection dropped) is an
infrastructure error of each of its trials: retried, and recorded as such if it keeps failing,
never counted as an agent failure. Checkers and metrics always run in the calling process
(verifier isolation: the agent's code cannot reach them).

**Beyond pass^k.** Infrastructure errors are retried and left out of the counts
(``retry_on``, :mod:`ek.agents._infra`); per-trial budgets stop a trial as an agent failure
(``budget``, :mod:`ek.agents._budget`); adaptive trials stop settled tasks early (``adaptive``,
:mod:`ek.agents._adaptive`); fault plans run every task clean and under injected tool faults
(``faults``, :mod:`ek.agents._faults`); :meth:`SuiteResult.consistency` ranks the flaky tasks
(:mod:`ek.agents._consistency`). Without these options every figure is what it was.

**Persistence.** ``store=`` a JSON-lines path (see :mod:`ek.agents._store` for the exact
durability guarantees): re-running with the same store resumes and skips finished
``(task_id, trial)`` pairs; a store of a different experiment is refused.

Example:
    >>> from ek.agents.base import TaskSpec
    >>> tasks = [TaskSpec("add", input=(2, 3), gold=5), TaskSpec("mul", input=(2, 3), gold=6)]
    >>> def agent(task, context):               # right 70% of the time, reproducibly
    ...     return sum(task.input) if context.rng.random() < 0.7 else None
    >>> res = run_suite(agent, tasks, k=4, seed=1)
    >>> dict(res.counts)
    {'add': (4, 2), 'mul': (4, 0)}
    >>> res.reliability.success_rate.point, round(res.reliability.pass_hat_k[2].point, 4)
    (0.25, 0.0833)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import dataclasses
import hashlib
import inspect
import itertools
import json
import math
import os
import pickle
import random
import time
import warnings
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

from ek._validate import as_verdict, positive_int, positive_number, trial_count
from ek.base import ReadOnlyDict, Score
from ek.calling import CallTimeoutError, acall, is_async_callable, loop_running
from ek.harness import metric_direction
from ek.jsonio import to_json_safe
from ek.registry import resolve
from ek.stats import MAX_RESAMPLES, check_confidence, check_int

from ._adaptive import Adaptive
from ._attempt import Attempt, BatchSpec, batch_size, run_batch, settle
from ._budget import Budget, BudgetCurve, budget_curve, budget_hits, usage
from ._consistency import ConsistencyReport, consistency
from ._episode import Episode, RunProvenance, Trajectory
from ._faults import Fault, FaultPlan, RobustnessRow, fault_stream, robustness, wrap_tool
from ._fingerprint import callable_config, config_diff, metric_config, same_config
from ._infra import RetryPolicy
from ._spec import TaskSpec
from ._store import TrialStore
from ._summary import MetricSummary, RunSummary
from .cost import (
    CostReport,
    ModelPrice,
    check_pricing,
    cost_report,
    pricing_from_dict,
    pricing_to_dict,
)
from .metrics import check_name, resolve_checker
from .reliability import ReliabilityReport, reliability

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "HarnessError",
    "Progress",
    "ProgressEvent",
    "SliceResult",
    "SuiteConfig",
    "SuiteOptions",
    "SuiteResult",
    "TrialContext",
    "arun_suite",
    "run_suite",
    "suite_fingerprint",
    "trial_seed",
]


class HarnessError(RuntimeError):
    """ek's own checker, metrics or progress callback failed: not the agent's failure."""


def trial_seed(run_seed: int, task_id: str, trial: int) -> int:
    """The seed of one trial: the first 63 bits of ``sha256(run_seed, task_id, trial)``.

    Deterministic across processes and Python versions (unlike ``hash()``).

    Example:
        >>> trial_seed(0, "t1", 0) == trial_seed(0, "t1", 0) != trial_seed(0, "t1", 1)
        True
    """
    h = hashlib.sha256(f"{run_seed}\x1f{task_id}\x1f{trial}".encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


@dataclass(frozen=True)
class TrialContext:
    """What an agent may know about the trial it is running (second argument of the agent).

    Attributes:
        task_id: The task.
        trial: 0-based trial index (``0 .. k-1``).
        seed: This trial's seed (:func:`trial_seed`); draw randomness from it.
        run: The run's provenance.
        k: Trials per task.
        timeout: The per-trial time limit in seconds, or ``None``.
        budget: The per-trial :class:`~ek.agents._budget.Budget`, or ``None``.
        price: The run's price (a ``ModelPrice`` or a ``{model: ModelPrice}`` catalogue) that
            dollar budgets are counted in, or ``None``.
        started: ``time.monotonic()`` when this attempt started (``None`` outside a run).
        fault: The :class:`~ek.agents._faults.Fault` injected into this trial's tools (through
            :meth:`tool`), or ``None`` on a clean trial.
    """

    task_id: str
    trial: int
    seed: int
    run: RunProvenance
    k: int
    timeout: float | None = None
    budget: Budget | None = None
    price: Any = None
    started: float | None = None
    fault: Fault | None = None
    _streams: dict[str, random.Random] = field(default_factory=dict, compare=False, repr=False)

    def tool(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The tool ``fn`` named ``name`` as this trial must use it: ``fn`` itself on a clean
        trial, wrapped under the trial's injected :class:`~ek.agents._faults.Fault` otherwise
        (one seeded stream per tool and trial, however often it is wrapped)."""
        if self.fault is None or not self.fault.hits(name):
            return fn
        rng = self._streams.get(name)
        if rng is None:
            rng = self._streams[name] = fault_stream(self.seed, self.fault, name)
        return wrap_tool(fn, self.fault, name, rng=rng)

    @property
    def rng(self) -> random.Random:
        """A fresh ``random.Random(seed)``: the same numbers every time this trial is re-run."""
        return random.Random(self.seed)

    def time_left(self) -> float | None:
        """Seconds until the trial's wall-time limit (``budget.wall_time``, else ``timeout``);
        ``None`` without one."""
        wall = self.budget.wall_time if self.budget is not None else None
        caps = [float(c) for c in (self.timeout, wall) if c is not None]
        if not caps or self.started is None:
            return None
        return min(caps) - (time.monotonic() - self.started)

    def remaining(
        self, trajectory: Iterable[Any] = (), cost: Iterable[Any] = ()
    ) -> dict[str, float | None]:
        """What is left of each budget limit after the usage so far (steps ``trajectory``,
        :class:`~ek.agents.base.Cost` records ``cost``): ``{limit: cap - used}``, negative once
        crossed; ``{}`` without a budget. A sync agent checks it to stop before it is stopped.
        """
        if self.budget is None:
            return {}
        ep = Episode(self.task_id, trajectory=Trajectory(trajectory), cost=tuple(cost))
        elapsed = None if self.started is None else time.monotonic() - self.started
        return self.budget.remaining(usage(ep, self.price, elapsed=elapsed))


@dataclass(frozen=True)
class ProgressEvent:
    """One progress notification: sent once at the start and after every finished trial.

    ``done`` counts finished trials including ``skipped`` ones (read back from the store);
    ``task_id``/``trial``/``success`` describe the trial that just finished (``None`` at the
    start).
    """

    done: int
    total: int
    skipped: int
    agent_failures: int
    elapsed: float
    task_id: str | None = None
    trial: int | None = None
    success: bool | None = None


@runtime_checkable
class Progress(Protocol):
    """The progress callback: ``progress(event)``; it must be quick (it runs on the event loop)."""

    def __call__(self, event: ProgressEvent) -> None: ...


class SuiteOptions(TypedDict, total=False):
    """The keyword options of :func:`run_suite` / :func:`arun_suite` (see :class:`SuiteConfig`).

    Declared so that a type checker catches a misspelled option; at run time an unknown one is
    a ``TypeError`` naming it.
    """

    k: int
    check: Any
    metrics: Iterable[Any] | None
    price: ModelPrice | None
    prices: Mapping[str, ModelPrice] | None
    run: RunProvenance | None
    seed: int | None
    concurrency: int
    executor: concurrent.futures.Executor | None
    batch_size: int | None
    store: str | os.PathLike[str] | None
    timeout: float | None
    progress: Callable[[ProgressEvent], None] | None
    confidence: float
    n_resamples: int
    fsync_every: int
    fsync_interval: float
    retry_on: Any
    max_retries: int
    retry_backoff: float
    budget: Budget | None
    adaptive: Adaptive | None
    faults: FaultPlan | None
    fault: Fault | None
    resume_undescribed_checker: bool


@dataclass(frozen=True)
class SuiteConfig:
    """Every option of one suite run, validated when built (see :func:`run_suite`'s Args).

    ``run_suite(agent, tasks, k=5, check=...)`` builds one from its keywords;
    ``run_suite(agent, tasks, config=SuiteConfig(k=5, check=...))`` passes one (keywords given
    as well override its fields). Frozen: :meth:`replace` makes a changed copy.

    Example:
        >>> cfg = SuiteConfig(k=3, seed=7)
        >>> cfg.k, cfg.concurrency, cfg.replace(k=5).k
        (3, 8, 5)
        >>> SuiteConfig(k=0)
        Traceback (most recent call last):
        ...
        ValueError: k must be an int >= 1, got 0
    """

    k: int = 1
    check: Any = None
    metrics: Iterable[Any] | None = None
    price: ModelPrice | None = None
    prices: Mapping[str, ModelPrice] | None = None
    run: RunProvenance | None = None
    seed: int | None = None
    concurrency: int = 8
    executor: concurrent.futures.Executor | None = None
    batch_size: int | None = None
    store: str | os.PathLike[str] | None = None
    timeout: float | None = None
    progress: Callable[[ProgressEvent], None] | None = None
    confidence: float = 0.95
    n_resamples: int = 2000
    fsync_every: int = 64
    fsync_interval: float = 1.0
    retry_on: Any = None
    max_retries: int = 3
    retry_backoff: float = 0.5
    budget: Budget | None = None
    adaptive: Adaptive | None = None
    faults: FaultPlan | None = None
    fault: Fault | None = None
    resume_undescribed_checker: bool = False

    def __post_init__(self) -> None:
        trial_count("k", self.k)  # at most MAX_TRIALS: checked before any work
        positive_int("concurrency", self.concurrency)
        if self.timeout is not None:
            positive_number(
                "timeout", self.timeout, "{owner} must be a number > 0 or None, got {value!r}"
            )
        if self.executor is not None and not isinstance(self.executor, concurrent.futures.Executor):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor, got {type(self.executor).__name__}"
            )
        if self.batch_size is not None:
            positive_int("batch_size", self.batch_size)
        check_confidence(self.confidence)
        check_int("n_resamples", self.n_resamples, 1, MAX_RESAMPLES)
        if self.progress is not None and not callable(self.progress):
            raise TypeError(f"progress must be callable, got {type(self.progress).__name__}")
        if self.run is not None and not isinstance(self.run, RunProvenance):
            raise TypeError(f"run must be a RunProvenance, got {type(self.run).__name__}")
        RetryPolicy.build(self.retry_on, self.max_retries, self.retry_backoff)  # validates
        if self.budget is not None and not isinstance(self.budget, Budget):
            raise TypeError(
                f"budget must be an ek.agents._budget.Budget or None, got {type(self.budget).__name__}"
            )
        _check_faults(self.faults, self.fault)
        check_pricing(self.price, self.prices)
        if not isinstance(self.resume_undescribed_checker, bool):
            raise TypeError(
                "resume_undescribed_checker must be a bool, got "
                f"{type(self.resume_undescribed_checker).__name__}"
            )
        if self.adaptive is not None and not isinstance(self.adaptive, Adaptive):
            raise TypeError(
                f"adaptive must be an ek.agents._adaptive.Adaptive or None, got "
                f"{type(self.adaptive).__name__}"
            )

    @property
    def retry_policy(self) -> RetryPolicy:
        """The :class:`~ek.agents._infra.RetryPolicy` of ``retry_on``/``max_retries``/``retry_backoff``."""
        return RetryPolicy.build(self.retry_on, self.max_retries, self.retry_backoff)

    @property
    def time_limit(self) -> float | None:
        """The per-trial deadline: the smaller of ``timeout`` and ``budget.wall_time``."""
        wall = self.budget.wall_time if self.budget is not None else None
        given = [float(c) for c in (self.timeout, wall) if c is not None]
        return min(given) if given else None

    def replace(self, **changes: Any) -> SuiteConfig:
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def build(
        cls, config: SuiteConfig | None, options: Mapping[str, Any], *, caller: str = "run_suite"
    ) -> SuiteConfig:
        """``config`` (default: all defaults) with the keyword ``options`` applied.

        Raises:
            TypeError: an option that is not a :class:`SuiteConfig` field, or a ``config``
                that is not a :class:`SuiteConfig`.
        """
        if config is not None and not isinstance(config, SuiteConfig):
            raise TypeError(f"config must be a SuiteConfig or None, got {type(config).__name__}")
        unknown = sorted(set(options) - _OPTION_NAMES)
        if unknown:
            raise TypeError(
                f"{caller}() got unexpected keyword argument(s) {unknown}; the options are "
                f"{sorted(_OPTION_NAMES)}"
            )
        base = config if config is not None else cls()
        return dataclasses.replace(base, **options) if options else base


_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(SuiteConfig))


def _check_faults(faults: Any, fault: Any) -> None:
    if faults is not None and not isinstance(faults, FaultPlan):
        raise TypeError(
            f"faults must be an ek.agents._faults.FaultPlan or None, got {type(faults).__name__}"
        )
    if fault is not None and not isinstance(fault, Fault):
        raise TypeError(
            f"fault must be an ek.agents._faults.Fault or None, got {type(fault).__name__}"
        )
    if faults is not None and fault is not None:
        raise ValueError("give faults= (clean and every fault) or fault= (one fault), not both")


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
        budget: The per-trial :class:`~ek.agents._budget.Budget`, or ``None``.
        pricing: The run's price setting (``pricing_to_dict``), for dollar budget curves.
        metric_configs: ``metric name -> configuration``
            (:func:`~ek.agents._fingerprint.metric_config`), as the store records it; the gate
            compares them.
        adaptive: The adaptive stopping rule, or ``None`` (see :attr:`trials_saved`).
        fault: The fault every trial of this result ran under, or ``None`` (clean).
        faults: ``fault name -> SuiteResult`` of the same tasks under each fault of
            ``faults=`` (see :attr:`robustness`).
        confidence: Interval coverage of :attr:`reliability` (and of robustness, consistency).
        n_resamples: Bootstrap replicates of :attr:`reliability`'s pass@k/pass^k intervals.

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
    pricing: Mapping[str, Any] | None = None
    metric_configs: Mapping[str, Mapping[str, Any]] | None = None
    adaptive: Adaptive | None = None
    fault: Fault | None = None
    faults: Mapping[str, SuiteResult] = field(default_factory=dict)
    confidence: float = 0.95
    n_resamples: int = 2000
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
                slices=_slice_ids(self.tasks) or None,
                confidence=self.confidence,
                n_resamples=self.n_resamples,
                seed=int(self.run.seed or 0),
            )
        return rep

    @property
    def robustness(self) -> tuple[RobustnessRow, ...]:
        """Per injected fault: its success rate minus the clean one, with Newcombe's interval
        (:func:`~ek.agents._faults.robustness`; empty without ``faults=``)."""
        faulted = {name: r.counts for name, r in self.faults.items()}
        return robustness(self.counts, faulted, self.confidence) if faulted else ()

    @property
    def trials_saved(self) -> int:
        """Trials not run because the adaptive rule settled their task (0 without ``adaptive``)."""
        if self.adaptive is None:
            return 0
        ran = sum(n for n, _ in self.counts.values()) + self.n_infra_errors
        return len(self.tasks) * self.k - ran

    def consistency(self, top: int = 10) -> ConsistencyReport:
        """Per-task consistency, flip rates and the flakiest tasks
        (:func:`~ek.agents._consistency.consistency`)."""
        return consistency(self.counts, confidence=self.confidence, top=top)

    @property
    def n_infra_errors(self) -> int:
        """Trials that ended in an infrastructure error (not counted as trials)."""
        return sum(self.infra_errors.values())

    @property
    def budget_hits(self) -> dict[str, int]:
        """``{budget limit: trials it stopped}``."""
        return budget_hits(self.episodes)

    def budget_curve(self, measure: str = "dollars") -> BudgetCurve:
        """Success rate against a cap on ``measure`` from the recorded usage
        (:func:`~ek.agents._budget.budget_curve`, priced as the run was)."""
        price, prices = pricing_from_dict(self.pricing)
        return budget_curve(
            self.episodes, self.verdicts, measure, price=price if price is not None else prices
        )

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
        """The :class:`~ek.agents._summary.RunSummary` a report, a baseline and a gate use."""
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
            **_reliability_extras(self),
        }


def _infra_summary(
    infra_errors: Mapping[str, int], retries: Mapping[str, int]
) -> dict[str, tuple[int, int]] | None:
    """``task_id -> (infra-ended trials, retries)``, or ``None`` when there were neither."""
    if not any(infra_errors.values()) and not any(retries.values()):
        return None
    ids = sorted(set(infra_errors) | set(retries))
    return {t: (infra_errors.get(t, 0), retries.get(t, 0)) for t in ids}


def _reliability_extras(res: SuiteResult) -> dict[str, Any]:
    """The to_dict keys of the options beyond pass^k (absent when unused)."""
    out: dict[str, Any] = {}
    if any(res.infra_errors.values()) or any(res.retries.values()):
        out["infra_errors"] = dict(res.infra_errors)
        out["retries"] = dict(res.retries)
    if res.budget is not None:
        out["budget"] = res.budget.to_dict()
        out["budget_hits"] = res.budget_hits
    if res.adaptive is not None:
        out["adaptive"] = {**res.adaptive.to_dict(), "trials_saved": res.trials_saved}
    if res.fault is not None:
        out["fault"] = res.fault.to_dict()
    if res.faults:
        out["robustness"] = [row.to_dict() for row in res.robustness]
    return out


# ----------------------------------------------------------------------------- preparation


def suite_fingerprint(tasks: Iterable[TaskSpec]) -> str:
    """sha256 of the tasks' canonical JSON (order-independent): a store refuses another suite.

    Example:
        >>> a = suite_fingerprint([TaskSpec("x", gold=1), TaskSpec("y")])
        >>> a == suite_fingerprint([TaskSpec("y"), TaskSpec("x", gold=1)])
        True
        >>> a == suite_fingerprint([TaskSpec("x", gold=2), TaskSpec("y")])
        False
    """
    items = sorted((to_json_safe(t.to_dict()) for t in tasks), key=lambda d: d["task_id"])
    text = json.dumps(items, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _tasks(tasks: Any) -> tuple[TaskSpec, ...]:
    if isinstance(tasks, (str, bytes, Mapping)) or not isinstance(tasks, Iterable):
        raise TypeError(f"tasks must be an iterable of TaskSpec, got {type(tasks).__name__}")
    out: list[TaskSpec] = []
    for i, t in enumerate(tasks):
        if isinstance(t, Mapping):
            t = TaskSpec.from_dict(t)
        if not isinstance(t, TaskSpec):
            raise TypeError(f"tasks[{i}] must be a TaskSpec or a mapping, got {type(t).__name__}")
        out.append(t)
    if not out:
        raise ValueError("run_suite needs at least one task, got an empty suite")
    ids = [t.task_id for t in out]
    dup = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    if dup:
        raise ValueError(f"task ids must be unique, got duplicates {dup[:10]}")
    return tuple(out)


def _instantiate(cls: type, **kw: Any) -> Any:
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return cls()
    accepted = {
        k: v
        for k, v in kw.items()
        if v is not None and (k in params or any(p.kind == p.VAR_KEYWORD for p in params.values()))
    }
    return cls(**accepted)


class _SuiteVerdict:
    """The suite checker's verdict on a trial, read back from the judged episode.

    What a success-checking metric (:class:`~ek.agents.metrics.TaskSuccessMetric`,
    :class:`~ek.agents.metrics.CostPerSuccessMetric`) checks with inside ``run_suite``: the
    verdict the suite's checker gave on ``task.gold`` (the checker runs once per trial, and a
    metric cannot disagree with ``SuiteResult.verdicts``). Named after the suite's checker.
    """

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __call__(self, episode: Any, gold: Any) -> bool:
        return bool(episode.success)

    def ek_config(self) -> dict[str, Any]:
        """Its configuration (:mod:`ek.agents._fingerprint`): the suite checker it stands for."""
        return {"checker": self.__name__}


@dataclass(frozen=True)
class _Metrics:
    """The suite's metrics: as reported, per task (grammar-bound), and the run's one pricing."""

    reported: tuple[Any, ...]
    per_task: Mapping[str, tuple[Any, ...]]
    price: ModelPrice | None
    prices: Mapping[str, ModelPrice] | None


def _as_metric(m: Any, **kw: Any) -> Any:
    if isinstance(m, str):
        m = resolve("metrics", m)
    if isinstance(m, type):
        m = _instantiate(m, **kw)
    missing = [a for a in ("name", "higher_is_better", "aggregate") if not hasattr(m, a)]
    if missing or not callable(m):
        raise TypeError(
            f"metrics must be Metrics (name, higher_is_better, __call__, aggregate) or "
            f"registered names; {type(m).__name__} lacks {missing or ['__call__']}"
        )
    return m


def _align_check(m: Any, check: Any, checker: Callable[[Any, Any], Any]) -> Any:
    """A metric with its own success checker gives the suite's verdict, or is refused."""
    with_check = getattr(m, "with_check", None)
    if not callable(with_check) or not hasattr(m, "check"):
        return m
    own = m.check
    if own is not None and resolve_checker(own) is not checker:
        raise ValueError(
            f"metric {m.name!r} was built with check={check_name(own)!r} but run_suite checks "
            f"with check={check_name('output' if check is None else check)!r}: one run has one "
            f"verdict per trial (and one Cost-of-Pass); build the metric without check= (it then "
            f"adopts the suite's checker) or give run_suite the same checker"
        )
    return with_check(_SuiteVerdict(check_name("output" if check is None else check)))


def _pricing_of(m: Any) -> tuple[Any, Any] | None:
    if not callable(getattr(m, "with_prices", None)):
        return None
    price, prices = getattr(m, "price", None), getattr(m, "prices", None)
    return None if price is None and prices is None else (price, prices)


def _show_pricing(p: tuple[Any, Any] | None) -> str:
    if p is None:
        return "no price"
    return f"price={p[0]!r}" if p[0] is not None else f"prices={sorted(p[1])}"


def _one_pricing(
    mets: Sequence[Any], price: ModelPrice | None, prices: Mapping[str, ModelPrice] | None
) -> tuple[list[Any], ModelPrice | None, Mapping[str, ModelPrice] | None]:
    """One price setting for the run: the suite's, else the one its priced metrics share.

    A metric without a price adopts it; a metric priced differently is refused, so
    ``SuiteResult.cost.cost_of_pass`` and a Cost-of-Pass metric are the same figure.
    """
    run: tuple[Any, Any] | None = None if price is None and prices is None else (price, prices)
    for m in mets:
        own = _pricing_of(m)
        if own is None:
            continue
        if run is None:
            run = own
        elif own[0] != run[0] or (own[1] is not None and dict(own[1]) != dict(run[1] or {})):
            raise ValueError(
                f"metric {m.name!r} was built with {_show_pricing(own)} but the run is priced "
                f"with {_show_pricing(run)}: one run has one Cost-of-Pass; build the metric "
                f"without price=/prices= (it then adopts the run's) or give both the same"
            )
    if run is None:
        return list(mets), None, None
    out = [
        m.with_prices(run[0], run[1])
        if callable(getattr(m, "with_prices", None)) and _pricing_of(m) is None
        else m
        for m in mets
    ]
    return out, run[0], run[1]


def _per_task(mets: Sequence[Any], tasks: Sequence[TaskSpec]) -> dict[str, tuple[Any, ...]]:
    """The metrics that score each task: a metric without a grammar of its own that offers
    ``with_grammar`` gets the task's own grammar (the task's tools' Layer-A weights), built once
    per distinct grammar; the value equals ``metric(episode, task)`` called directly."""
    built: list[tuple[int, Any, Any]] = []  # (metric index, grammar, bound metric)

    def bound(i: int, m: Any, task: TaskSpec) -> Any:
        if not task.tools or getattr(m, "grammar", True) is not None:
            return m
        with_grammar = getattr(m, "with_grammar", None)
        if not callable(with_grammar):
            return m
        g = task.grammar()
        for j, gram, bm in built:
            if j == i and gram == g:
                return bm
        bm = with_grammar(g)
        built.append((i, g, bm))
        return bm

    return {t.task_id: tuple(bound(i, m, t) for i, m in enumerate(mets)) for t in tasks}


def _prepare_metrics(
    metrics: Iterable[Any] | None,
    tasks: Sequence[TaskSpec],
    *,
    check: Any,
    checker: Callable[[Any, Any], Any],
    price: ModelPrice | None,
    prices: Mapping[str, ModelPrice] | None,
) -> _Metrics:
    if metrics is None:
        metrics = []
    elif isinstance(metrics, (str, bytes)) or not isinstance(metrics, Iterable):
        metrics = [metrics]
    mets = [_as_metric(m, check=check, price=price, prices=prices) for m in metrics]
    names = [str(m.name) for m in mets]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"metric names must be unique, got {dup} twice")
    mets = [_align_check(m, check, checker) for m in mets]
    mets, price, prices = _one_pricing(mets, price, prices)
    return _Metrics(tuple(mets), ReadOnlyDict(_per_task(mets, tasks)), price, prices)


def _wants_context(agent: Any) -> bool:
    try:
        sig = inspect.signature(agent)
    except (TypeError, ValueError):
        return False
    try:
        sig.bind(None, None)
    except TypeError:
        return False
    return True


def _score_dict(s: Score) -> dict[str, Any]:
    return {"value": s.value, "detail": dict(s.detail)}


def _score_from(d: Mapping[str, Any]) -> Score:
    v = d.get("value")
    return Score(math.nan if v is None else float(v), d.get("detail") or {})


# ----------------------------------------------------------------------------- the run


@dataclass
class _State:
    stop: bool = False
    error: BaseException | None = None
    done: int = 0
    failures: int = 0
    results: dict[tuple[str, int], tuple[Episode, bool, dict[str, Score]]] = field(
        default_factory=dict
    )
    infra: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)
    retries: dict[tuple[str, int], int] = field(default_factory=dict)

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


def _resolve_run(run: Any, seed: int | None) -> RunProvenance:
    if run is None:
        return RunProvenance(seed=0 if seed is None else seed)
    if not isinstance(run, RunProvenance):
        raise TypeError(f"run must be a RunProvenance, got {type(run).__name__}")
    if run.seed is None:
        return dataclasses.replace(run, seed=0 if seed is None else seed)
    if seed is not None and seed != run.seed:
        raise ValueError(f"seed={seed} disagrees with run.seed={run.seed}; give one of them")
    return run


def _open_store(
    cfg: SuiteConfig,
    run: RunProvenance,
    suite: Sequence[TaskSpec],
    pricing: dict[str, Any] | None = None,
    metrics: Sequence[Any] = (),
    agent: Any = None,
) -> TrialStore | None:
    store, k = cfg.store, cfg.k
    if store is None:
        return None
    from ek import __version__

    check = cfg.check if cfg.check is not None else "output"
    agent_config = callable_config(agent)
    header = {
        "run": run.to_dict(),
        "suite": {"fingerprint": suite_fingerprint(suite), "n_tasks": len(suite)},
        "k": k,
        "seed": int(run.seed or 0),
        "ek_version": __version__,
        "check": check_name(check),
        # the checker's configuration (a registered name: the function it names now): a resume
        # with another one is refused (see the store)
        "checker": callable_config(
            resolve_checker(check) if isinstance(check, str) else check, check_name(check)
        ),
        # the agent's: a resume with another one warns (its trials would mix two agents)
        "agent": agent_config,
        "tasks": {t.task_id: list(t.slices) for t in suite},
        # what priced the run, so a report of the store gives the run's own Cost-of-Pass
        "pricing": pricing,
        # each metric's configuration: a resume with other settings under a name is refused
        "metrics": {str(m.name): metric_config(m) for m in metrics},
    }
    if cfg.budget is not None:  # a budget changes verdicts: a resume must use the same one
        header["budget"] = cfg.budget.to_dict()
    if cfg.adaptive is not None:  # the stopping rule decides which trials exist
        header["adaptive"] = cfg.adaptive.to_dict()
    if cfg.fault is not None:  # a store holds one fault's trials (or the clean ones)
        header["fault"] = cfg.fault.to_dict()
    if cfg.timeout is not None:  # a trial past it fails: a resume must use the same limit
        header["timeout"] = float(cfg.timeout)
    st = TrialStore.open(
        store,
        header,
        fsync_every=cfg.fsync_every,
        fsync_interval=cfg.fsync_interval,
        resume_undescribed_checker=cfg.resume_undescribed_checker,
    )
    _warn_if_other_agent(st, agent_config)
    return st


def _warn_if_other_agent(st: TrialStore, agent: Mapping[str, Any]) -> None:
    """Warn when a resumed store's trials were run by another agent than this run's."""
    before = st.header.get("agent")
    if not isinstance(before, Mapping) or same_config(before, agent):
        return
    what = "; ".join(config_diff(before, agent)) or "another configuration"
    warnings.warn(
        f"{st.path}: resumed with another agent than the one that ran its {len(st.records)} "
        f"stored trial(s) ({what}); the run mixes two agents' trials",
        stacklevel=4,
    )


#: What an executor call fails with that is not infrastructure: a broken pool, or trials that
#: cannot be pickled (the agent's own exceptions never leave :func:`~ek.agents._attempt.run_batch`).
_NOT_INFRA = (concurrent.futures.BrokenExecutor, pickle.PicklingError, TypeError, AttributeError)
_PICKLE = " (with executor=, the agent, its tasks and their contexts must be picklable)"


async def _call(call: Awaitable[Any], task: TaskSpec) -> tuple[Any, Exception | None, bool]:
    """Await one in-process agent call (:func:`ek.calling.acall`, which enforces the time
    limit): ``(result, exception raised or None, timed out)``."""
    try:
        return await call, None, False
    except CallTimeoutError:
        return None, None, True
    except (concurrent.futures.BrokenExecutor, pickle.PicklingError) as e:
        raise HarnessError(f"the executor failed running task {task.task_id!r}: {e!r}") from e
    except Exception as e:
        return None, e, False


def _raise_harness_error(err: BaseException, done: int, st: TrialStore | None) -> None:
    if isinstance(err, HarnessError):
        raise err
    raise HarnessError(
        f"ek's checker, metrics or progress callback failed ({type(err).__name__}: {err}); "
        f"{done} finished trial(s) were kept" + (f" in {st.path}" if st is not None else "")
    ) from err


async def arun_suite(
    agent: Callable[..., Any],
    tasks: Iterable[TaskSpec],
    *,
    config: SuiteConfig | None = None,
    **options: Unpack[SuiteOptions],
) -> SuiteResult:
    """The async form of :func:`run_suite` (use it inside a running event loop).

    Takes the same options as :func:`run_suite`, as keywords or as one :class:`SuiteConfig`
    (``config=``; keywords given as well override its fields).
    """
    cfg = SuiteConfig.build(config, options, caller="arun_suite")
    if cfg.faults is not None:
        return await _run_with_faults(agent, tasks, cfg)
    t_start = time.perf_counter()
    if not callable(agent):
        raise TypeError(f"agent must be callable, got {type(agent).__name__}")
    suite = _tasks(tasks)
    run = _resolve_run(cfg.run, cfg.seed)
    checker = resolve_checker(cfg.check)
    ms = _prepare_metrics(
        cfg.metrics, suite, check=cfg.check, checker=checker, price=cfg.price, prices=cfg.prices
    )
    st = _open_store(cfg, run, suite, pricing_to_dict(ms.price, ms.prices), ms.reported, agent)
    trials = _Trials(agent, cfg, run, checker, ms, st, t_start)
    try:
        resumed = _restore(st, {t.task_id: t for t in suite}, run, ms, trials.state) if st else 0
        await trials.run_all(suite, resumed)
    finally:
        if st is not None:
            st.close()
    if trials.state.error is not None:
        _raise_harness_error(trials.state.error, trials.state.done, st)
    return _assemble(suite, cfg, run, trials.state, ms, resumed, st, t_start)


class _Trials:
    """The trials of one :func:`arun_suite` call: run, checked, scored, stored, reported."""

    def __init__(
        self,
        agent: Callable[..., Any],
        cfg: SuiteConfig,
        run: RunProvenance,
        checker: Callable[[Any, Any], Any],
        ms: _Metrics,
        st: TrialStore | None,
        t_start: float,
    ) -> None:
        self.agent, self.cfg, self.run, self.checker = agent, cfg, run, checker
        self.ms, self.st, self.t_start = ms, st, t_start
        self.state = _State()
        self.wants_ctx = _wants_context(agent)
        self.total = self.resumed = 0
        self.pool: concurrent.futures.Executor | None = None  # in-process threads (sync agent)
        self.policy = cfg.retry_policy
        self.price: Any = ms.price if ms.price is not None else ms.prices
        limit, budget = cfg.time_limit, cfg.budget
        self.spec = BatchSpec(
            agent,
            self.wants_ctx,
            run,
            self.policy,
            limit,
            limit is not None and budget is not None and budget.wall_time == limit,
        )
        self.batch = 1  # trials per executor call (set per phase; 1 in process)

    def notify(self, tid: str | None, trial: int | None, ok: bool | None) -> None:
        """Send a :class:`ProgressEvent` (when a progress callback was given)."""
        if self.cfg.progress is None:
            return
        elapsed = time.perf_counter() - self.t_start
        s = self.state
        self.cfg.progress(
            ProgressEvent(s.done, self.total, self.resumed, s.failures, elapsed, tid, trial, ok)
        )

    async def run_all(self, suite: Sequence[TaskSpec], resumed: int) -> None:
        """Run every trial not read back from the store, ``concurrency`` at a time."""
        cfg, state = self.cfg, self.state
        self.total, self.resumed, state.done = len(suite) * cfg.k, resumed, resumed
        threads = None
        if cfg.executor is None and not is_async_callable(self.agent):
            threads = concurrent.futures.ThreadPoolExecutor(
                cfg.concurrency, thread_name_prefix="ek-agent"
            )
        self.pool = cfg.executor if cfg.executor is not None else threads
        self.notify(None, None, None)
        # adaptive trials: every task's first min_trials, then the rest of the unsettled ones
        m = cfg.k if cfg.adaptive is None else min(cfg.k, cfg.adaptive.min_trials)
        try:
            await self.run_phase(suite, range(m))
            if m < cfg.k and not state.stop:
                await self.run_phase([t for t in suite if not self.settled(t, m)], range(m, cfg.k))
        finally:
            if threads is not None:
                threads.shutdown(wait=False, cancel_futures=True)

    def settled(self, task: TaskSpec, m: int) -> bool:
        """Does the adaptive rule stop ``task`` after its first ``m`` trials?"""
        rule = self.cfg.adaptive
        res = self.state.results
        first = [res[(task.task_id, i)][1] for i in range(m) if (task.task_id, i) in res]
        return rule is not None and rule.settled(first)

    async def run_phase(self, suite: Sequence[TaskSpec], trials: range) -> None:
        """Run ``trials`` of every task in ``suite`` not read back from the store."""
        state = self.state
        pending = [
            (t, i)
            for i in trials
            for t in suite
            if (t.task_id, i) not in state.results and (t.task_id, i) not in state.infra
        ]
        it = iter(pending)
        cfg = self.cfg
        if cfg.executor is not None:
            self.batch = cfg.batch_size or batch_size(len(pending), cfg.concurrency)
        n_workers = min(cfg.concurrency, -(-len(pending) // self.batch)) or 1
        await asyncio.gather(*(self.worker(it) for _ in range(n_workers)))

    async def worker(self, it: Iterator[tuple[TaskSpec, int]]) -> None:
        """Take trials from ``it`` (a batch at a time with an executor) until it is empty or a
        harness error stops the run."""
        state = self.state
        while not state.stop:
            todo = list(itertools.islice(it, self.batch))
            if not todo:
                return
            try:
                pool = self.cfg.executor
                firsts: Sequence[Attempt | None] = (
                    await self.submit(pool, todo) if pool is not None else (None,)
                )
                for (task, trial), first in zip(todo, firsts):
                    if state.stop:
                        return
                    await self.one(task, trial, first)
            except Exception as e:
                state.stop = True
                if state.error is None:
                    state.error = e

    def context(self, task: TaskSpec, trial: int, started: float | None) -> TrialContext | None:
        """The trial's :class:`TrialContext` (``None`` for an agent that takes none)."""
        if not self.wants_ctx:
            return None
        cfg = self.cfg
        seed = trial_seed(int(self.run.seed or 0), task.task_id, trial)
        return TrialContext(
            task.task_id, trial, seed, self.run, cfg.k, cfg.timeout, cfg.budget,
            self.price, started, cfg.fault,
        )  # fmt: skip

    async def submit(
        self, pool: concurrent.futures.Executor, todo: Sequence[tuple[TaskSpec, int]]
    ) -> list[Attempt]:
        """One executor call running the trials ``todo`` (:func:`~ek.agents._attempt.run_batch`):
        their first attempts. The executor losing the call (a worker died, a connection
        dropped) is an infrastructure error of each of its trials, retried like any other."""
        calls = [(task, trial, self.context(task, trial, None)) for task, trial in todo]
        tid = todo[0][0].task_id
        try:
            fut = pool.submit(run_batch, self.spec, calls)
        except Exception as e:  # shut down, or the agent cannot be sent: not the agent's failure
            raise HarnessError(
                f"the executor refused trials of task {tid!r}: {e!r}{_PICKLE}"
            ) from e
        try:
            return await asyncio.wrap_future(fut)
        except _NOT_INFRA as e:  # run_batch settles every agent exception: these are sending
            raise HarnessError(f"the executor failed running task {tid!r}: {e!r}{_PICKLE}") from e
        except Exception as e:
            why = f"executor lost the call: {type(e).__name__}: {e}"
            return [Attempt(None, why, 0.0) for _ in todo]

    async def call_once(self, task: TaskSpec, trial: int) -> Attempt:
        """One attempt at a trial: in an executor (a batch of one), else in this process."""
        if self.cfg.executor is not None:
            return (await self.submit(self.cfg.executor, [(task, trial)]))[0]
        ctx = self.context(task, trial, time.monotonic())
        args = (task, ctx) if self.wants_ctx else (task,)
        t0 = time.perf_counter()
        call = acall(self.agent, args, timeout=self.spec.limit, executor=self.pool)
        raw, exc, timed_out = await _call(call, task)
        return settle(raw, exc, timed_out, task, trial, self.spec, time.perf_counter() - t0)

    async def attempts(
        self, task: TaskSpec, trial: int, first: Attempt | None
    ) -> tuple[Attempt, int]:
        """The trial's last attempt after retrying infrastructure errors
        (:mod:`ek.agents._infra`), and the retries; ``first`` is an attempt already made."""
        policy = self.policy
        rng = random.Random(trial_seed(int(self.run.seed or 0), task.task_id, trial))
        retries = 0
        att = first if first is not None else await self.call_once(task, trial)
        while att.infra is not None and retries < policy.max_retries:
            await asyncio.sleep(policy.delay(retries, rng))
            retries += 1
            att = await self.call_once(task, trial)
        return att, retries

    def over_budget(self, ep: Episode, dur: float) -> Episode:
        """``ep`` as an agent failure ``"budget: <limit>"`` when it crossed a budget limit."""
        budget = self.cfg.budget
        if budget is None or ep.error is not None:
            return ep
        why = budget.exceeded(usage(ep, self.price, elapsed=dur))
        return ep if why is None else ep.replace(error=why)

    async def one(self, task: TaskSpec, trial: int, first: Attempt | None = None) -> None:
        """Run (unless ``first`` was run already), check, score, store and report one trial."""
        cfg, run, state = self.cfg, self.run, self.state
        att, retries = await self.attempts(task, trial, first)
        key = (task.task_id, trial)
        if att.episode is None:  # not a trial: not checked, not counted, recorded
            infra = f"infrastructure: {att.infra}"
            state.infra[key] = (infra, retries)
            state.done += 1
            if self.st is not None:
                self.st.append(_infra_record(task, trial, infra, retries, att.duration))
            self.notify(task.task_id, trial, None)
            return
        ep = self.over_budget(att.episode, att.duration)
        ep, scores = await _check_and_score(ep, task, self.checker, self.ms.per_task[task.task_id])
        ok = bool(ep.success)
        state.results[key] = (ep, ok, scores)
        if retries:
            state.retries[key] = retries
        state.done += 1
        state.failures += ep.error is not None
        if self.st is not None:
            self.st.append(_record(ep, ok, scores, run, cfg.check, retries))
        self.notify(task.task_id, trial, ok)


def _with_success(ep: Episode, ok: bool) -> Episode:
    # A copy with the checker's verdict. ``ok`` is a bool, so the full re-validation that
    # Episode.replace does would only cost time on the hot path (one call per trial).
    new = copy.copy(ep)
    object.__setattr__(new, "success", ok)
    return new


async def _check_and_score(
    ep: Episode, task: TaskSpec, checker: Callable[[Any, Any], Any], mets: Sequence[Any]
) -> tuple[Episode, dict[str, Score]]:
    """The trial's verdict (the suite's checker on ``task.gold``; a failed trial fails) and
    every metric's score of the judged episode.

    Harness code: any exception here propagates as a HarnessError (not an agent failure).
    """
    if ep.error is not None:
        ok = False
    else:
        try:
            v = checker(ep, task.gold)
            if inspect.isawaitable(v):
                v = await v
        except Exception as e:
            raise HarnessError(
                f"checker {check_name(checker)!r} raised on task {task.task_id!r} trial "
                f"{ep.trial}: {type(e).__name__}: {e}"
            ) from e
        try:  # the one verdict rule: "false", 0 or NaN is no verdict, whatever its truthiness
            ok = bool(as_verdict(f"checker {check_name(checker)!r}", v))
        except TypeError as e:
            raise HarnessError(f"{e} (task {task.task_id!r} trial {ep.trial})") from None
    judged = _with_success(ep, ok)
    scores: dict[str, Score] = {}
    for m in mets:
        scores[str(m.name)] = _score(m, judged, task)
    return judged, scores


def _score(m: Any, ep: Episode, task: TaskSpec) -> Score:
    try:
        s = m(ep, task)
    except Exception as e:
        raise HarnessError(
            f"metric {m.name!r} raised on task {task.task_id!r} trial {ep.trial}: "
            f"{type(e).__name__}: {e}"
        ) from e
    if not isinstance(s, Score):
        raise HarnessError(f"metric {m.name!r} returned {type(s).__name__}, expected a Score")
    return s


def _record(
    ep: Episode,
    ok: bool,
    scores: Mapping[str, Score],
    run: RunProvenance,
    check: Any,
    retries: int = 0,
) -> dict[str, Any]:
    d = ep.to_dict()
    if ep.run is run or ep.run == run:
        d.pop("run", None)  # the header holds it
    rec = {
        "task_id": ep.task_id,
        "trial": ep.trial,
        "success": ok,
        "agent_error": ep.error is not None,
        "episode": d,
        "scores": {n: _score_dict(s) for n, s in scores.items()},
    }
    if retries:
        rec["retries"] = retries  # infrastructure retries before this trial's result
    return rec


def _infra_record(
    task: TaskSpec, trial: int, reason: str, retries: int, dur: float
) -> dict[str, Any]:
    """A trial that ended in an infrastructure error: ``success`` false (a store field every
    reader requires) and ``infra_error`` set, which tells this ek to leave it out of the counts."""
    ep = Episode(task.task_id, trial=trial, error=reason, duration=dur).to_dict()
    return {
        "task_id": task.task_id,
        "trial": trial,
        "success": False,
        "agent_error": False,
        "infra_error": reason,
        "retries": retries,
        "episode": ep,
    }


def _restore(
    st: TrialStore,
    by_id: Mapping[str, TaskSpec],
    run: RunProvenance,
    ms: _Metrics,
    state: _State,
) -> int:
    n = 0
    # stored scores are reused only for metrics whose configuration the header records (the
    # store refused a different one); any other metric is scored afresh on the stored episode
    vouched = st.header.get("metrics")
    vouched = vouched if isinstance(vouched, Mapping) else {}
    for rec in st.records:
        tid, trial = rec["task_id"], rec["trial"]
        task = by_id.get(tid)
        if task is None:  # the fingerprint makes this unreachable; be explicit anyway
            raise ValueError(f"{st.path}: a record names task {tid!r}, which is not in the suite")
        retries = rec.get("retries")
        retries = retries if isinstance(retries, int) and not isinstance(retries, bool) else 0
        if rec.get("infra_error"):
            state.infra[(tid, trial)] = (str(rec["infra_error"]), retries)
            n += 1
            continue
        if retries:
            state.retries[(tid, trial)] = retries
        d = dict(rec["episode"])
        d.setdefault("run", run.to_dict())
        ep = Episode.from_dict(d)
        ok = bool(rec["success"])
        saved = rec.get("scores") or {}
        scores = {}
        for m in ms.per_task[tid]:
            name = str(m.name)
            scores[name] = (
                _score_from(saved[name])
                if name in saved and name in vouched
                else _score(m, _with_success(ep, ok), task)
            )
        state.results[(tid, trial)] = (_with_success(ep, ok), ok, scores)
        state.failures += ep.error is not None
        n += 1
    return n


@dataclass
class _Collected:
    """The finished trials ordered by task then trial, and where each task's trials are."""

    episodes: list[Episode] = field(default_factory=list)
    verdicts: list[bool] = field(default_factory=list)
    scores: dict[str, list[Score]] = field(default_factory=dict)
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    spans: dict[str, range] = field(default_factory=dict)  # task_id -> its positions


def _collect(suite: Sequence[TaskSpec], k: int, state: _State, names: Sequence[str]) -> _Collected:
    """Episodes, verdicts and scores ordered by task then trial, and the per-task counts."""
    out = _Collected(scores={name: [] for name in names})
    eps, verdicts, scores = out.episodes, out.verdicts, out.scores
    for t in suite:
        start = len(eps)
        c = 0
        for i in range(k):
            r = state.results.get((t.task_id, i))
            if r is None:
                continue
            ep, ok, sc = r
            eps.append(ep)
            verdicts.append(ok)
            for name in scores:
                scores[name].append(sc[name])
            c += ok
        out.counts[t.task_id] = (len(eps) - start, c)
        out.spans[t.task_id] = range(start, len(eps))
    return out


def _slice_ids(suite: Iterable[TaskSpec]) -> dict[str, list[str]]:
    """``slice name -> task ids`` in suite order."""
    out: dict[str, list[str]] = {}
    for t in suite:
        for s in t.slices:
            out.setdefault(s, []).append(t.task_id)
    return out


def _aggregate(m: Any, scores: Sequence[Score]) -> float:
    """The metric's own corpus aggregate; its failure is a harness error."""
    try:
        return float(m.aggregate(scores))
    except Exception as e:
        raise HarnessError(f"metric {m.name!r} failed to aggregate: {type(e).__name__}: {e}") from e


def _slice_results(
    slice_ids: Mapping[str, list[str]], got: _Collected, ms: _Metrics
) -> dict[str, SliceResult]:
    slices: dict[str, SliceResult] = {}
    for sname, ids in slice_ids.items():
        # the slice's trials in suite order, read from each task's span (no scan of all trials)
        idx = [j for tid in ids for j in got.spans[tid]]
        s_eps = [got.episodes[j] for j in idx]
        s_ok = [got.verdicts[j] for j in idx]
        s_metrics = {
            str(m.name): _aggregate(m, [got.scores[str(m.name)][j] for j in idx])
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


def _assemble(
    suite: Sequence[TaskSpec],
    cfg: SuiteConfig,
    run: RunProvenance,
    state: _State,
    ms: _Metrics,
    resumed: int,
    st: TrialStore | None,
    t_start: float,
) -> SuiteResult:
    """The result: counts, cost, aggregates and slices now; the reliability report (a
    bootstrap over tasks) when :attr:`SuiteResult.reliability` is first read."""
    mets = ms.reported
    got = _collect(suite, cfg.k, state, [str(m.name) for m in mets])
    scores = got.scores
    aggregates = {str(m.name): _aggregate(m, scores[str(m.name)]) for m in mets}
    directions = {
        str(m.name): metric_direction(
            str(m.name),
            scores[str(m.name)][0].detail if scores[str(m.name)] else None,
            bool(getattr(m, "higher_is_better", True)),
        )
        for m in mets
    }
    infra_errors, retries = state.infra_counts()
    return SuiteResult(
        run=run,
        k=cfg.k,
        tasks=tuple(suite),
        episodes=tuple(got.episodes),
        verdicts=tuple(got.verdicts),
        counts=ReadOnlyDict(got.counts),
        cost=cost_report(got.episodes, price=ms.price, prices=ms.prices, successes=got.verdicts),
        slices=ReadOnlyDict(_slice_results(_slice_ids(suite), got, ms)),
        metrics=ReadOnlyDict(aggregates),
        scores=ReadOnlyDict({n: tuple(v) for n, v in scores.items()}),
        directions=ReadOnlyDict(directions),
        agent_failures=state.failures,
        resumed=resumed,
        store=st.path if st is not None else None,
        elapsed=time.perf_counter() - t_start,
        infra_errors=ReadOnlyDict(infra_errors),
        retries=ReadOnlyDict(retries),
        budget=cfg.budget,
        pricing=pricing_to_dict(ms.price, ms.prices),
        metric_configs=ReadOnlyDict({str(m.name): metric_config(m) for m in mets}),
        adaptive=cfg.adaptive,
        fault=cfg.fault,
        confidence=cfg.confidence,
        n_resamples=cfg.n_resamples,
    )


def _fault_store(store: Any, name: str) -> str | None:
    """The store of one fault's pass beside the clean one: ``run.jsonl`` ->
    ``run.fault-<name>.jsonl`` (the name's non-alphanumerics as ``_``)."""
    if store is None:
        return None
    base = os.fspath(store)
    root, ext = os.path.splitext(base)
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    return f"{root}.fault-{safe}{ext or '.jsonl'}"


async def _run_with_faults(
    agent: Callable[..., Any], tasks: Iterable[TaskSpec], cfg: SuiteConfig
) -> SuiteResult:
    """The clean run, then one run per fault of ``cfg.faults`` (same seeds, its own store)."""
    plan = cfg.faults.faults if cfg.faults is not None else ()
    suite = _tasks(tasks)
    clean = await arun_suite(agent, suite, config=cfg.replace(faults=None))
    runs: dict[str, SuiteResult] = {}
    for f in plan:
        one = cfg.replace(faults=None, fault=f, store=_fault_store(cfg.store, str(f.name)))
        runs[str(f.name)] = await arun_suite(agent, suite, config=one)
    return dataclasses.replace(clean, faults=ReadOnlyDict(runs))


def run_suite(
    agent: Callable[..., Any],
    tasks: Iterable[TaskSpec],
    *,
    config: SuiteConfig | None = None,
    **options: Unpack[SuiteOptions],
) -> SuiteResult:
    """Run ``k`` trials of every task, check and score them, persist and summarise them.

    See the module docstring for the agent's calling convention, faults, concurrency and
    persistence. Runs its own event loop; inside a running loop, ``await arun_suite(...)``.

    The options below are keywords (checked against :class:`SuiteOptions`), or one
    :class:`SuiteConfig` given as ``config=``.

    Args:
        agent: ``agent(task)`` or ``agent(task, context)``, sync or async.
        tasks: The :class:`~ek.agents.base.TaskSpec` s (unique ids).
        config: All the options below as one :class:`SuiteConfig` (keywords override it).
        k: Trials per task (1 to :data:`ek._validate.MAX_TRIALS`, 10,000).
        check: The success oracle: a registered checker name or an ``(episode, gold) -> bool``
            callable (may be async); default ``"output"``. It receives ``task.gold``. Its
            result follows the one verdict rule (:func:`ek._validate.as_verdict`): a bool, a
            rich verdict with a bool ``passed``, or a numpy bool; anything else (``"false"``,
            ``0``, NaN) stops the run with a :class:`HarnessError` naming it.
        metrics: Metrics (or registered names) scored on every trial with the TaskSpec as gold;
            each gives what it gives called directly, with the suite's verdicts and prices (see
            the module docstring).
        price: One :class:`~ek.agents.cost.ModelPrice` for every cost (default: the price a
            Cost-of-Pass metric in ``metrics`` was built with, if any).
        prices: A ``{model: ModelPrice}`` catalogue (same default).
        run: The run's provenance; its ``seed`` (or ``seed``) seeds every trial.
        seed: The run seed when ``run`` has none (default 0).
        concurrency: Trials in flight at once (>= 1).
        executor: Any ``concurrent.futures.Executor`` to run the agent in (threads,
            processes, ``distributed.Client.get_executor()``), in batches of trials.
        batch_size: Trials per executor call (>= 1; default: about four batches per slot of
            ``concurrency``, at most 64). Ignored without ``executor``.
        store: A JSON-lines path: persist every finished trial and resume from it (a regular
            file, or none yet: a FIFO, a directory or a device is refused before any work).
        timeout: Seconds per trial; a slower trial fails with ``Episode.error`` set.
        progress: A :class:`Progress` callback.
        confidence: Interval coverage of the reliability report.
        n_resamples: Bootstrap replicates of the reliability report's pass@k/pass^k intervals.
        fsync_every: Group-commit batch size of the store.
        fsync_interval: Group-commit time window of the store, in seconds.
        retry_on: Exception classes that are infrastructure errors (an
            :class:`~ek.agents._infra.InfraError` always is): retried, never counted as agent
            failures, never in pass^k (see :mod:`ek.agents._infra`).
        max_retries: Retries of a trial after an infrastructure error (>= 0; default 3).
        retry_backoff: The first backoff delay in seconds (exponential, full jitter).
        budget: A per-trial :class:`~ek.agents._budget.Budget` (tokens by kind, dollars, steps,
            turns, wall time); a trial over it fails with ``"budget: <limit>"``.
        adaptive: An :class:`~ek.agents._adaptive.Adaptive` stopping rule: settled tasks get no
            more than ``min_trials`` trials.
        faults: A :class:`~ek.agents._faults.FaultPlan`: every task runs clean and under each
            fault (``SuiteResult.faults``, ``SuiteResult.robustness``); each fault's pass has its
            own store beside ``store`` (``run.fault-<name>.jsonl``).
        fault: One :class:`~ek.agents._faults.Fault` every trial runs under (what each pass of
            ``faults`` uses).
        resume_undescribed_checker: Resume ``store`` although the checker cannot be described
            in full (:mod:`ek.agents._fingerprint`: e.g. it closes over an object whose settings
            cannot be read) or the store records its checker by name only; by default such a
            resume is refused, since another checker under the same name would mix two
            checkers' verdicts. A checker whose description differs is refused either way.

    Raises:
        TypeError: an unknown option.
        ValueError: a metric was built with another checker or other prices than the run's.
        HarnessError: ek's checker, a metric or the progress callback failed (finished trials
            are kept in the store).
        ek.agents._store.StoreMismatchError: ``store`` belongs to another experiment.
        RuntimeError: called from inside a running event loop (use :func:`arun_suite`).
    """
    cfg = SuiteConfig.build(config, options)
    if loop_running():
        raise RuntimeError(
            "run_suite() was called inside a running event loop; use `await arun_suite(...)`"
        )
    return asyncio.run(arun_suite(agent, tasks, config=cfg))
