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
(``faults``, :mod:`ek.agents._faults`); :func:`~ek.agents.consistency` ranks the
flaky tasks. Their reports are functions over the result (:mod:`ek.agents._result`). Without these options every figure is what it was.

**The parts.** :mod:`~ek.agents._config` (the options), :mod:`~ek.agents._context` (what
an agent knows of its trial), :mod:`~ek.agents._suite_metrics` (the metrics prepared once),
:mod:`~ek.agents._trials` (the trial loop), :mod:`~ek.agents._scoring` (a trial's verdict and
Scores), :mod:`~ek.agents._session` (the store: header, records, resume),
:mod:`~ek.agents._run.ledger` (the finished trials) and :mod:`~ek.agents._result` (the result).

**Persistence.** ``store=`` a JSON-lines path (see :mod:`ek.agents._run.store` for the exact
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
import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ek.base import ReadOnlyDict
from ek.calling import loop_running

from ._config import SuiteConfig, SuiteOptions
from ._episode import RunProvenance
from ._result import SuiteResult, assemble
from ._run.ledger import TrialLedger
from ._run.store import TrialStore
from ._run.stored import StoreFile
from ._scoring import HarnessError
from ._session import open_store, restore
from ._spec import TaskSpec
from ._suite_metrics import prepare_metrics
from ._trials import TrialRunner
from .metrics import resolve_checker

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["arun_suite", "run_suite"]


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


def _conversational(
    agent: Callable[..., Any], suite: tuple[TaskSpec, ...], run: RunProvenance, cfg: SuiteConfig
) -> tuple[Callable[..., Any], RunProvenance]:
    """A conversational suite runs through :mod:`ek.agents.simulate`'s driver, the simulator
    named in the provenance (imported on use: it builds on this package)."""
    from .simulate import conversational

    return conversational(agent, suite, run, cfg.simulator, max_reruns=cfg.simulator_reruns)


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
    agent, run = _conversational(agent, suite, run, cfg)
    checker = resolve_checker(cfg.check)
    ms = prepare_metrics(
        cfg.metrics, suite, check=cfg.check, checker=checker, price=cfg.price, prices=cfg.prices
    )
    st = open_store(cfg, run, suite, ms, agent)
    ledger = TrialLedger()
    runner = TrialRunner(agent, cfg, run, checker, ms, st, ledger, t_start)
    try:
        resumed = restore(st, {t.task_id: t for t in suite}, run, ms, ledger) if st else 0
        await runner.run_all(suite, resumed)
    finally:
        if st is not None:
            st.close()
    if runner.error is not None:
        _raise_harness_error(runner.error, ledger.done, st)
    store = st.path if st is not None else None
    # the store as this run left it: the result reads its trials back from it
    stored = StoreFile.of(st.path) if st is not None else None
    elapsed = time.perf_counter() - t_start
    return assemble(
        suite, cfg, run, ledger, ms, resumed=resumed, store=store, elapsed=elapsed, stored=stored
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
            :class:`~ek.agents.InfraError` always is): retried, never counted as agent
            failures, never in pass^k (see :mod:`ek.agents._infra`).
        max_retries: Retries of a trial after an infrastructure error (>= 0; default 3).
        retry_backoff: The first backoff delay in seconds (exponential, full jitter).
        budget: A per-trial :class:`~ek.agents.Budget` (tokens by kind, dollars, steps,
            turns, wall time); a trial over it fails with ``"budget: <limit>"``.
        adaptive: An :class:`~ek.agents.Adaptive` stopping rule: settled tasks get no
            more than ``min_trials`` trials.
        faults: A :class:`~ek.agents.FaultPlan`: every task runs clean and under each
            fault (``SuiteResult.faults``, :func:`~ek.agents.robustness`); each fault's pass
            has its own store beside ``store`` (``run.fault-<name>.jsonl``).
        fault: One :class:`~ek.agents.Fault` every trial runs under (what each pass of
            ``faults`` uses).
        simulator: A user simulator (:mod:`ek.agents.simulate`): every task is a conversation
            on its ``scenario`` and ``agent`` is a conversational agent,
            ``agent(conversation) -> turn``; a conversation the simulator spoiled is re-run
            with a fresh seed, then set apart like an infrastructure error; ``run.simulator``
            is filled in with the simulator's identity (the gate compares it). An agent that
            is a :class:`~ek.agents.simulate.ConversationAgent` already needs none.
        simulator_reruns: Re-runs of a spoiled conversation with a fresh seed (>= 0, default 2).
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
        ek.agents._run.store.StoreMismatchError: ``store`` belongs to another experiment.
        RuntimeError: called from inside a running event loop (use :func:`arun_suite`).
    """
    cfg = SuiteConfig.build(config, options)
    if loop_running():
        raise RuntimeError(
            "run_suite() was called inside a running event loop; use `await arun_suite(...)`"
        )
    return asyncio.run(arun_suite(agent, tasks, config=cfg))
