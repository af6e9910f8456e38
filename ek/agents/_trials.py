"""The trial loop of one suite run: every trial not finished yet, ``concurrency`` at a time
(in process, or in batches on an executor), each retried on infrastructure errors, stopped at
its budget, checked and scored, appended to the store, added to the ledger and reported.

Adaptive trials run in two phases: every task's first ``min_trials``, then the rest of the
tasks the rule has not settled. A failure of ek's own code stops the loop (no more trials
start); what finished is kept.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import itertools
import pickle
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from ek.calling import CallTimeoutError, acall, is_async_callable

from ._attempt import Attempt, BatchSpec, batch_size, run_batch, settle
from ._budget import usage
from ._config import ProgressEvent, SuiteConfig
from ._context import TrialContext, trial_seed
from ._episode import Episode, RunProvenance
from ._run.ledger import TrialLedger
from ._run.store import TrialStore
from ._scoring import HarnessError, check_and_score
from ._session import infra_record, trial_record
from ._spec import TaskSpec
from ._suite_metrics import SuiteMetrics

__all__ = ["TrialRunner"]


#: What an executor call fails with that is not infrastructure: a broken pool, or trials that
#: cannot be pickled (the agent's own exceptions never leave :func:`~ek.agents._attempt.run_batch`).
_NOT_INFRA = (concurrent.futures.BrokenExecutor, pickle.PicklingError, TypeError, AttributeError)
_PICKLE = " (with executor=, the agent, its tasks and their contexts must be picklable)"


class TrialRunner:
    """The trials of one :func:`arun_suite` call: run, checked, scored, stored, reported."""

    def __init__(
        self,
        agent: Callable[..., Any],
        cfg: SuiteConfig,
        run: RunProvenance,
        checker: Callable[[Any, Any], Any],
        ms: SuiteMetrics,
        st: TrialStore | None,
        ledger: TrialLedger,
        t_start: float,
    ) -> None:
        self.agent, self.cfg, self.run, self.checker = agent, cfg, run, checker
        self.ms, self.st, self.ledger, self.t_start = ms, st, ledger, t_start
        self.stop = False
        self.error: BaseException | None = None
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
        done, failures = self.ledger.done, self.ledger.failures
        self.cfg.progress(
            ProgressEvent(done, self.total, self.resumed, failures, elapsed, tid, trial, ok)
        )

    async def run_all(self, suite: Sequence[TaskSpec], resumed: int) -> None:
        """Run every trial not read back from the store, ``concurrency`` at a time."""
        cfg = self.cfg
        self.total, self.resumed = len(suite) * cfg.k, resumed
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
            if m < cfg.k and not self.stop:
                await self.run_phase([t for t in suite if not self.settled(t, m)], range(m, cfg.k))
        finally:
            if threads is not None:
                threads.shutdown(wait=False, cancel_futures=True)

    def settled(self, task: TaskSpec, m: int) -> bool:
        """Does the adaptive rule stop ``task`` after its first ``m`` trials?"""
        rule = self.cfg.adaptive
        return rule is not None and rule.settled(self.ledger.verdicts(task.task_id, m))

    async def run_phase(self, suite: Sequence[TaskSpec], trials: range) -> None:
        """Run ``trials`` of every task in ``suite`` not read back from the store."""
        finished = self.ledger.finished
        pending = [(t, i) for i in trials for t in suite if not finished(t.task_id, i)]
        it = iter(pending)
        cfg = self.cfg
        if cfg.executor is not None:
            self.batch = cfg.batch_size or batch_size(len(pending), cfg.concurrency)
        n_workers = min(cfg.concurrency, -(-len(pending) // self.batch)) or 1
        await asyncio.gather(*(self.worker(it) for _ in range(n_workers)))

    async def worker(self, it: Iterator[tuple[TaskSpec, int]]) -> None:
        """Take trials from ``it`` (a batch at a time with an executor) until it is empty or a
        harness error stops the run."""
        while not self.stop:
            todo = list(itertools.islice(it, self.batch))
            if not todo:
                return
            try:
                pool = self.cfg.executor
                firsts: Sequence[Attempt | None] = (
                    await self.submit(pool, todo) if pool is not None else (None,)
                )
                for (task, trial), first in zip(todo, firsts):
                    if self.stop:
                        return
                    await self.one(task, trial, first)
            except Exception as e:
                self.stop = True
                if self.error is None:
                    self.error = e

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
        att, retries = await self.attempts(task, trial, first)
        if att.episode is None:  # not a trial: not checked, not counted, recorded
            infra = f"infrastructure: {att.infra}"
            self.ledger.add_infra(task.task_id, trial, infra, retries)
            if self.st is not None:
                self.st.append(infra_record(task, trial, infra, retries, att.duration))
            self.notify(task.task_id, trial, None)
            return
        ep = self.over_budget(att.episode, att.duration)
        ep, scores = await check_and_score(ep, task, self.checker, self.ms.per_task[task.task_id])
        ok = bool(ep.success)
        if self.st is None:
            self.ledger.add_trial(ep, ok, scores, retries)
        else:  # the record holds the episode and Scores: the ledger keeps where it starts
            at = self.st.append(trial_record(ep, ok, scores, self.run, retries))
            failed = ep.error is not None
            self.ledger.add_stored(task.task_id, trial, ok, at, failed=failed, retries=retries)
        self.notify(task.task_id, trial, ok)


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
