"""The options of one suite run: :class:`SuiteConfig` (validated when built), the keyword form
:class:`SuiteOptions`, and the progress notifications a run sends (:class:`ProgressEvent`).

Example:
    >>> cfg = SuiteConfig(k=3, seed=7)
    >>> cfg.k, cfg.concurrency, cfg.replace(k=5).k, cfg.time_limit
    (3, 8, 5, None)
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, runtime_checkable

from ek._validate import positive_int, positive_number, trial_count
from ek.stats import MAX_RESAMPLES, check_confidence, check_int

from ._adaptive import Adaptive
from ._budget import Budget
from ._episode import RunProvenance
from ._faults import Fault, FaultPlan
from ._infra import RetryPolicy
from .cost import ModelPrice, check_pricing

__all__ = ["Progress", "ProgressEvent", "SuiteConfig", "SuiteOptions"]


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
    simulator: Any
    simulator_reruns: int


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
    simulator: Any = None
    simulator_reruns: int = 2

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
        _check_simulator(self.simulator, self.simulator_reruns)

    @property
    def retry_policy(self) -> RetryPolicy:
        """The :class:`~ek.agents.RetryPolicy` of ``retry_on``/``max_retries``/``retry_backoff``."""
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


def _check_simulator(simulator: Any, reruns: Any) -> None:
    if simulator is not None and not callable(simulator):
        raise TypeError(
            "simulator must be a user simulator, a callable view -> turn (ek.agents.simulate), "
            f"got {type(simulator).__name__}"
        )
    positive_int("simulator_reruns", reruns, minimum=0)


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
