"""Infrastructure errors are not agent failures: which exceptions, how retried.

An agent's trial can fail because the *agent* failed (it raised, timed out, returned garbage:
an agent failure, counted in pass^k) or because the *infrastructure* under it failed (the
model API's connection dropped, a rate limit, a sandbox that did not start). The second is not
evidence about the agent. :func:`~ek.agents.harness.run_suite` tells them apart:

* an exception that is an :class:`InfraError` (raise it from the agent), or an instance of a
  class given in ``retry_on=`` (e.g. ``(TimeoutError, ConnectionError)``), is an
  **infrastructure error**;
* the trial is re-run with exponential backoff and full jitter (:meth:`RetryPolicy.delay`:
  ``uniform(1 - jitter, 1) * min(max_backoff, backoff * 2**attempt)``, seeded by the trial's
  seed so a re-run waits the same) up to ``max_retries`` times;
* a trial that still ends in an infrastructure error is **not a trial**: it is left out of the
  counts, the success rate and pass^k, counted per task in
  :attr:`~ek.agents.harness.SuiteResult.infra_errors`, and persisted in the store (with the
  retries of every trial), so a resume neither re-runs nor forgets it. The gate refuses a run
  whose share of such trials exceeds ``max_infra_share``.

ek's own time limit (``timeout=``) is the agent's failure, never an infrastructure error, even
when ``retry_on`` names ``TimeoutError``: a ``TimeoutError`` the agent raises (its HTTP client's)
is infrastructure; the harness's deadline is not.

Example:
    >>> p = RetryPolicy.build(retry_on=ConnectionError, max_retries=2, backoff=0.5)
    >>> p.is_infra(ConnectionError("reset")), p.is_infra(InfraError("429")), p.is_infra(KeyError())
    (True, True, False)
    >>> import random
    >>> [round(p.delay(a, random.Random(0)), 3) for a in range(3)]
    [0.078, 0.156, 0.311]
    >>> RetryPolicy.build(retry_on="TimeoutError")
    Traceback (most recent call last):
    ...
    TypeError: retry_on must be an exception class or a tuple of exception classes, got str: 'TimeoutError'
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ek._validate import positive_int

__all__ = ["InfraError", "RetryPolicy", "infra_from_records", "infra_share"]


class InfraError(Exception):
    """Raised by an agent when its infrastructure (not the agent) failed: retried, not counted."""


def _exception_classes(retry_on: Any) -> tuple[type[BaseException], ...]:
    if retry_on is None:
        return ()
    items = (
        (retry_on,)
        if isinstance(retry_on, type) or not isinstance(retry_on, Iterable)
        else tuple(retry_on)
    )
    if isinstance(retry_on, (str, bytes)):
        items = (retry_on,)
    for c in items:
        if not (isinstance(c, type) and issubclass(c, BaseException)):
            raise TypeError(
                "retry_on must be an exception class or a tuple of exception classes, got "
                f"{type(c).__name__}: {c!r:.100}"
            )
    return tuple(items)


def _non_negative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number >= 0, got {type(value).__name__}: {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class RetryPolicy:
    """Which exceptions are infrastructure errors and how they are retried.

    Attributes:
        retry_on: Exception classes that are infrastructure errors (:class:`InfraError`
            always is).
        max_retries: Re-runs of a trial after an infrastructure error (>= 0).
        backoff: The first delay in seconds (>= 0; 0 retries at once).
        max_backoff: The longest delay in seconds.
        jitter: The share of each delay drawn at random (0 = none, 1 = full jitter).
    """

    retry_on: tuple[type[BaseException], ...] = ()
    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    jitter: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "retry_on", _exception_classes(self.retry_on))
        positive_int("max_retries", self.max_retries, minimum=0)
        _non_negative("backoff", self.backoff)
        _non_negative("max_backoff", self.max_backoff)
        if _non_negative("jitter", self.jitter) > 1:
            raise ValueError(f"jitter must be in [0, 1], got {self.jitter!r}")

    @classmethod
    def build(cls, retry_on: Any = None, max_retries: int = 3, backoff: float = 0.5) -> RetryPolicy:
        """A policy from ``run_suite``'s ``retry_on``/``max_retries``/``retry_backoff``."""
        return cls(_exception_classes(retry_on), max_retries, backoff)

    def is_infra(self, exc: BaseException) -> bool:
        """Is ``exc`` an infrastructure error?"""
        return isinstance(exc, (InfraError, *self.retry_on))

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait before retry ``attempt + 1`` (exponential, capped, jittered)."""
        d = min(self.max_backoff, self.backoff * 2.0**attempt)
        return d * (1.0 - self.jitter * rng.random())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (exception classes by qualified name)."""
        return {
            "retry_on": [f"{c.__module__}.{c.__qualname__}" for c in self.retry_on],
            "max_retries": self.max_retries,
            "backoff": self.backoff,
        }


def infra_share(n_infra: int, n_trials: int) -> float:
    """Trials that ended in an infrastructure error, as a share of all trials attempted
    (``n_infra / (n_infra + n_trials)``; 0.0 when nothing was attempted).

    Example:
        >>> infra_share(1, 9)
        0.1
    """
    total = n_infra + n_trials
    return n_infra / total if total else 0.0


def infra_from_records(records: Iterable[Mapping[str, Any]]) -> dict[str, tuple[int, int]] | None:
    """``task_id -> (infra-ended trials, retries)`` from trial-store records, or ``None`` when
    no record has either (a store written without retries reads as before).

    Example:
        >>> infra_from_records([{"task_id": "a", "infra_error": "x", "retries": 3},
        ...                     {"task_id": "a", "retries": 1}, {"task_id": "b"}])
        {'a': (1, 4)}
    """
    out: dict[str, list[int]] = {}
    for rec in records:
        r = rec.get("retries")
        r = r if isinstance(r, int) and not isinstance(r, bool) and r > 0 else 0
        ended = 1 if rec.get("infra_error") else 0
        if ended or r:
            acc = out.setdefault(str(rec["task_id"]), [0, 0])
            acc[0] += ended
            acc[1] += r
    return {t: (e, r) for t, (e, r) in out.items()} or None
