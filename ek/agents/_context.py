"""What an agent may know about the trial it runs: :class:`TrialContext`, and the trial's seed
(:func:`trial_seed`), derived from the run seed, the task and the trial.

Example:
    >>> from ek.agents.base import RunProvenance
    >>> ctx = TrialContext("t1", 0, trial_seed(7, "t1", 0), RunProvenance(seed=7), k=3)
    >>> ctx.rng.random() == ctx.rng.random()     # the same numbers every time the trial runs
    True
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ._budget import Budget, usage
from ._episode import Episode, RunProvenance, Trajectory
from ._faults import Fault, fault_stream, wrap_tool

__all__ = ["TrialContext", "trial_seed"]


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
        budget: The per-trial :class:`~ek.agents.Budget`, or ``None``.
        price: The run's price (a ``ModelPrice`` or a ``{model: ModelPrice}`` catalogue) that
            dollar budgets are counted in, or ``None``.
        started: ``time.monotonic()`` when this attempt started (``None`` outside a run).
        fault: The :class:`~ek.agents.Fault` injected into this trial's tools (through
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
        trial, wrapped under the trial's injected :class:`~ek.agents.Fault` otherwise
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
