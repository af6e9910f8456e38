"""One attempt at a trial, run in this process or in a batch on any ``Executor``.

An *attempt* calls the agent once and settles what happened into an :class:`Attempt`: the
trial's :class:`~ek.agents.base.Episode` (the agent's result, or a failed trial with
``Episode.error`` set), or an **infrastructure error** (see :mod:`ek.agents._infra`), which is
retried by :func:`~ek.agents.harness.run_suite` and never counted as a trial. :func:`settle` is
the one place that decides which, wherever the agent ran.

With ``run_suite(..., executor=...)`` the trials go to the executor in **batches**:
:func:`run_batch` is one executor call that runs several trials one after another in the
worker and returns one compact :class:`Attempt` per trial (an episode or a reason, never an
exception object or the agent's raw result). A batch pays the executor's round trip (submit,
schedule, pickle the agent, return) once for all its trials, which is what made one future per
trial slow on a cluster. It works the same for every ``concurrent.futures.Executor`` (threads,
processes, ``distributed.Client.get_executor()``): nothing here knows which one runs it.

In a batch, each trial's time limit is enforced in the worker on the trial's own run time (time
spent waiting in the executor's queue does not count), and the trial's
:attr:`~ek.agents.harness.TrialContext.started` is set there when it starts.

Example:
    >>> from ek.agents.base import RunProvenance, TaskSpec
    >>> from ek.agents import InfraError, RetryPolicy
    >>> def agent(task):
    ...     if task.input == "down":
    ...         raise InfraError("503 from the model API")
    ...     return task.input * 2
    >>> spec = BatchSpec(agent, wants_context=False, run=RunProvenance(seed=0),
    ...                  policy=RetryPolicy())
    >>> a, b = run_batch(spec, [(TaskSpec("t", input=21), 0, None),
    ...                         (TaskSpec("u", input="down"), 0, None)])
    >>> a.episode.output, a.infra, b.episode, b.infra
    (42, None, None, 'InfraError: 503 from the model API')
    >>> batch_size(2000, 16), batch_size(10, 8), batch_size(10**6, 1)
    (31, 1, 64)
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek.calling import CallTimeoutError, call

from ._episode import Episode, RunProvenance
from ._infra import RetryPolicy
from ._spec import TaskSpec

__all__ = [
    "MAX_BATCH",
    "Attempt",
    "BatchSpec",
    "attempt_error",
    "batch_size",
    "run_batch",
    "settle",
    "to_episode",
    "trial_episode",
    "unstorable",
]

#: The largest automatic batch (see :func:`batch_size`).
MAX_BATCH = 64


@dataclass(frozen=True)
class Attempt:
    """What one call of the agent came to.

    Attributes:
        episode: The trial's episode (``error`` set for an agent failure), or ``None`` when
            the attempt ended in an infrastructure error.
        infra: The infrastructure error (``"<Type>: <message>"``), or ``None``.
        duration: Seconds the call took.
    """

    episode: Episode | None
    infra: str | None
    duration: float


@dataclass(frozen=True)
class BatchSpec:
    """What a worker needs to run trials: sent once per batch.

    Attributes:
        agent: The agent callable (sync or async; pickled by the executor).
        wants_context: Call ``agent(task, context)`` rather than ``agent(task)``.
        run: The run's provenance (filled into episodes that lack one).
        policy: Which exceptions are infrastructure errors.
        limit: The per-trial time limit in seconds, or ``None``.
        limit_is_wall_time: The limit is the budget's ``wall_time`` (a trial that hits it
            fails with ``"budget: wall_time"`` rather than ``"timeout: ..."``).
    """

    agent: Callable[..., Any]
    wants_context: bool
    run: RunProvenance
    policy: RetryPolicy
    limit: float | None = None
    limit_is_wall_time: bool = False


def attempt_error(exc: BaseException | None, limit: float | None) -> str:
    """The ``Episode.error`` (or infrastructure reason) of a failed call: ``exc`` as
    ``"<Type>: <message>"``, or ek's own time limit (``exc`` ``None``).

    Example:
        >>> attempt_error(KeyError("x"), None), attempt_error(None, 2.0)
        ("KeyError: 'x'", 'timeout: no result within 2s')
    """
    if exc is None:
        return f"timeout: no result within {limit:g}s"
    return f"{type(exc).__name__}: {exc}"


def settle(
    raw: Any,
    exc: BaseException | None,
    timed_out: bool,
    task: TaskSpec,
    trial: int,
    spec: BatchSpec,
    dur: float,
) -> Attempt:
    """The :class:`Attempt` of one call: ``raw`` is the agent's result, ``exc`` what it
    raised (or ``None``), ``timed_out`` whether ek's time limit stopped it (never an
    infrastructure error, even when ``retry_on`` names ``TimeoutError``)."""
    if exc is not None and spec.policy.is_infra(exc):
        return Attempt(None, attempt_error(exc, spec.limit), dur)
    error = None
    if timed_out:
        error = "budget: wall_time" if spec.limit_is_wall_time else attempt_error(None, spec.limit)
    elif exc is not None:
        error = attempt_error(exc, spec.limit)
    return Attempt(trial_episode(raw, error, task, trial, spec.run, dur), None, dur)


def run_batch(spec: BatchSpec, calls: Sequence[tuple[TaskSpec, int, Any]]) -> list[Attempt]:
    """Run ``calls`` (``(task, trial, context or None)``) one after another, here: the
    function an executor runs. Each trial's exception is settled into its :class:`Attempt`;
    nothing a trial does stops the others."""
    out: list[Attempt] = []
    for task, trial, ctx in calls:
        if ctx is not None:
            ctx = dataclasses.replace(ctx, started=time.monotonic())
        args = (task, ctx) if spec.wants_context else (task,)
        raw: Any = None
        exc: Exception | None = None
        timed_out = False
        t0 = time.perf_counter()
        try:
            raw = call(spec.agent, args, timeout=spec.limit)
        except CallTimeoutError:
            timed_out = True
        except Exception as e:
            exc = e
        out.append(settle(raw, exc, timed_out, task, trial, spec, time.perf_counter() - t0))
    return out


def batch_size(pending: int, concurrency: int) -> int:
    """The automatic batch size: about four batches per slot of ``concurrency`` (so the last
    batches still balance across workers), at most :data:`MAX_BATCH`, at least 1."""
    return max(1, min(MAX_BATCH, pending // (4 * concurrency)))


# ----------------------------------------------------------------------------- the agent's result

_EPISODE_KEYS = frozenset(
    {"output", "trajectory", "final_state", "cost", "metadata", "error", "success", "input"}
)
_CORE_KEYS = ("output", "trajectory", "final_state", "cost")


def to_episode(raw: Any, task: TaskSpec, trial: int, run: RunProvenance, dur: float) -> Episode:
    """The agent's result as the trial's episode (see :func:`~ek.agents.harness.run_suite` for the forms
    an agent may return).

    Raises:
        ValueError: an episode for another task.
        TypeError: a result that cannot be an episode.
    """
    if isinstance(raw, Episode):
        return _own_episode(raw, task, trial, run, dur)
    fields = _episode_fields(raw)
    fields.pop("success", None)  # the checker decides
    fields.pop("input", None)
    return Episode(task.task_id, trial=trial, run=run, duration=dur, **fields)


def _own_episode(
    raw: Episode, task: TaskSpec, trial: int, run: RunProvenance, dur: float
) -> Episode:
    """An episode the agent built itself: numbered as this trial, the run and duration filled in
    where the agent left them out."""
    if raw.task_id != task.task_id:
        raise ValueError(
            f"the agent returned an episode for task {raw.task_id!r} while running {task.task_id!r}"
        )
    changes: dict[str, Any] = {"trial": trial}
    if raw.run is None:
        changes["run"] = run
    if raw.duration is None:
        changes["duration"] = dur
    return raw.replace(**changes)


def _is_episode_mapping(raw: Any) -> bool:
    """A non-empty mapping whose keys are all episode fields, at least one of them a core one."""
    return (
        isinstance(raw, Mapping)
        and bool(raw)
        and all(isinstance(k, str) and k in _EPISODE_KEYS for k in raw)
        and any(k in raw for k in _CORE_KEYS)
    )


def _episode_fields(raw: Any) -> dict[str, Any]:
    """The episode fields an agent's result gives: a mapping of episode fields, an object with
    episode attributes (those not ``None``), or else the result itself as the output."""
    if _is_episode_mapping(raw):
        return dict(raw)
    if not isinstance(raw, (str, bytes, int, float, Mapping, list, tuple)) and any(
        hasattr(raw, k) for k in _CORE_KEYS
    ):
        fields = {k: getattr(raw, k) for k in (*_CORE_KEYS, "metadata") if hasattr(raw, k)}
        return {k: v for k, v in fields.items() if v is not None}
    return {"output": raw}


def trial_episode(
    raw: Any, error: str | None, task: TaskSpec, trial: int, run: RunProvenance, dur: float
) -> Episode:
    """The trial's episode: the agent's result, or a failed trial with ``error`` set."""
    if error is None:
        try:
            ep = to_episode(raw, task, trial, run, dur)
            error = unstorable(ep)
            if error is None:
                return ep
        except (TypeError, ValueError, RecursionError) as e:
            error = f"invalid agent result: {type(e).__name__}: {str(e)[:500]}"
    return Episode(task.task_id, trial=trial, run=run, error=error, duration=dur)


def unstorable(ep: Episode) -> str | None:
    """Why ``ep`` could not be stored and read back faithfully, or ``None``.

    Runs the reader's own validation (:meth:`Episode.from_dict` on ``to_dict()``: finite
    numbers, plain JSON, bounded depth, no cycles) and the strict UTF-8 JSON encoding the store
    writes (a lone surrogate, an int too long to print). Checked with and without a store, and
    before the checker sees the episode, so an odd agent output is that trial's failure (the
    same verdict whether or not the run is stored), never a poisoned store or a HarnessError.
    """
    try:
        d = ep.to_dict()
        Episode.from_dict(d)  # after this, ``d`` is plain JSON with finite numbers
        json.dumps(d, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as e:  # UnicodeEncodeError is a ValueError
        return f"invalid agent result (cannot be stored faithfully): {type(e).__name__}: {str(e)[:500]}"
    return None
