"""Per-trial budgets, and success as a function of a budget cap.

A :class:`Budget` caps one trial's **tokens** (by kind: ``input_tokens``, ``output_tokens``,
``cache_read_tokens``, ``cache_write_tokens``, ``reasoning_tokens``, or ``total_tokens``),
**dollars** (under the run's price table), **steps** (tool calls: the trajectory's length),
**turns** (model calls: the agent-role :class:`~ek.agents.base.Cost` records) and **wall time**
(seconds). Usage counts the agent's role only, as Cost-of-Pass does.

Inside :func:`~ek.agents.harness.run_suite` (``budget=Budget(...)``):

* a trial whose recorded usage crosses a limit ends as an **agent failure** whose
  ``Episode.error`` is ``"budget: <limit>"`` (e.g. ``"budget: dollars"``,
  ``"budget: tokens.output_tokens"``); its trajectory and costs are kept, so the curve below
  can be computed from them;
* a sync agent can ask what is left through its context
  (:meth:`~ek.agents.harness.TrialContext.remaining`, :meth:`~ek.agents.harness.TrialContext.time_left`)
  and stop early; an async agent is cancelled at the wall-time limit (a sync agent's thread
  cannot be killed: its late result is discarded, and the trial fails the same way);
* a dollar limit is checked only on a trial whose dollars are known (an unpriced trial is not
  judged on dollars: unknown is not zero).

**Success against budget** (:func:`budget_curve`): the success rate the run would have had under
a lower cap, from recorded costs and without re-running: a trial counts as a success at cap
``x`` iff it succeeded and its usage is ``<= x`` (a trial over the cap would have been stopped
there: a failure). Above the run's own limit the curve is flat (the trials it stopped cannot
tell how they would have ended). A trial whose usage is unknown counts as a failure at every
cap and is reported (``n_unknown``).

Example:
    >>> from ek.agents.base import Cost, Episode
    >>> b = Budget(steps=2, tokens={"output_tokens": 100})
    >>> ep = Episode("t", trajectory=[{"tool": "a"}, {"tool": "b"}, {"tool": "c"}],
    ...              cost=[Cost(output_tokens=40)])
    >>> b.exceeded(usage(ep))
    'budget: steps'
    >>> b.remaining(usage(ep))
    {'tokens.output_tokens': 60.0, 'steps': -1.0}
    >>> Budget(dollars=-1)
    Traceback (most recent call last):
    ...
    ValueError: Budget.dollars must be a finite number >= 0, got -1
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ek.base import ReadOnlyDict

from ._episode import Episode
from .cost import ModelPrice, episode_dollars, pricing_from_dict

if TYPE_CHECKING:
    from ._result import SuiteResult

__all__ = [
    "BUDGET_TOKEN_KINDS",
    "Budget",
    "BudgetCurve",
    "budget_curve",
    "budget_hits",
    "usage",
    "usage_curve",
]

#: The token kinds a budget may cap (``total_tokens`` = every billed token).
BUDGET_TOKEN_KINDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "total_tokens",
)
_SCALARS = ("dollars", "steps", "turns", "wall_time")
_PREFIX = "budget: "


def _cap(owner: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{owner} must be a number >= 0 or None, got {type(value).__name__}: {value!r:.100}"
        )
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{owner} must be a finite number >= 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Budget:
    """Per-trial limits (see the module docstring); ``None`` means no limit.

    Attributes:
        tokens: ``{token kind: cap}`` (kinds in :data:`BUDGET_TOKEN_KINDS`).
        dollars: A dollar cap under the run's prices.
        steps: A cap on tool calls.
        turns: A cap on model calls.
        wall_time: Seconds.
    """

    tokens: Mapping[str, float] | None = None
    dollars: float | None = None
    steps: float | None = None
    turns: float | None = None
    wall_time: float | None = None

    def __post_init__(self) -> None:
        for name in _SCALARS:
            v = getattr(self, name)
            if v is not None:
                _cap(f"Budget.{name}", v)
        if self.tokens is not None:
            if not isinstance(self.tokens, Mapping):
                raise TypeError(
                    f"Budget.tokens must be a mapping token kind -> cap, got {type(self.tokens).__name__}"
                )
            for kind, v in self.tokens.items():
                if kind not in BUDGET_TOKEN_KINDS:
                    raise ValueError(
                        f"Budget.tokens keys must be in {list(BUDGET_TOKEN_KINDS)}, got {kind!r}"
                    )
                _cap(f"Budget.tokens[{kind!r}]", v)
            object.__setattr__(self, "tokens", ReadOnlyDict(dict(self.tokens)))

    def limits(self) -> dict[str, float]:
        """``{limit name: cap}``: ``"tokens.<kind>"``, ``"dollars"``, ``"steps"``, ``"turns"``,
        ``"wall_time"`` (only the limits that are set)."""
        out = {f"tokens.{k}": float(v) for k, v in (self.tokens or {}).items()}
        for name in _SCALARS:
            v = getattr(self, name)
            if v is not None:
                out[name] = float(v)
        return out

    def remaining(self, used: Mapping[str, float | None]) -> dict[str, float | None]:
        """``{limit: cap - used}`` (negative once crossed; ``None`` when the usage is unknown)."""
        out: dict[str, float | None] = {}
        for name, cap in self.limits().items():
            u = used.get(name)
            out[name] = None if u is None else cap - float(u)
        return out

    def exceeded(self, used: Mapping[str, float | None]) -> str | None:
        """``"budget: <limit>"`` for the first limit ``used`` crosses, else ``None``."""
        for name, left in self.remaining(used).items():
            if left is not None and left < 0:
                return _PREFIX + name
        return None

    def to_dict(self) -> dict[str, Any]:
        """The limits that are set (what a store header records)."""
        d: dict[str, Any] = {n: getattr(self, n) for n in _SCALARS if getattr(self, n) is not None}
        if self.tokens:
            d["tokens"] = dict(self.tokens)
        return d


def usage(
    episode: Episode,
    price: ModelPrice | Mapping[str, ModelPrice] | None = None,
    *,
    elapsed: float | None = None,
) -> dict[str, float | None]:
    """What a trial used, by limit name (the agent's role; dollars ``None`` when unpriced).

    ``elapsed`` (seconds) stands in for ``episode.duration`` when given.
    """
    costs = episode.costs("agent")
    out: dict[str, float | None] = {}
    for kind in BUDGET_TOKEN_KINDS:
        if kind == "total_tokens":
            out["tokens." + kind] = float(sum(c.total_tokens for c in costs))
        else:
            out["tokens." + kind] = float(sum(getattr(c, kind) for c in costs))
    out["dollars"] = episode_dollars(episode, price) if costs else 0.0
    out["steps"] = float(len(episode.trajectory))
    out["turns"] = float(len(costs))
    dur = elapsed if elapsed is not None else episode.duration
    out["wall_time"] = None if dur is None else float(dur)
    return out


def budget_hits(episodes: Sequence[Episode]) -> dict[str, int]:
    """``{limit: trials it stopped}``, read from the episodes' ``"budget: <limit>"`` errors."""
    out: dict[str, int] = {}
    for ep in episodes:
        if ep.error is not None and ep.error.startswith(_PREFIX):
            name = ep.error[len(_PREFIX) :]
            out[name] = out.get(name, 0) + 1
    return out


@dataclass(frozen=True)
class BudgetCurve:
    """Success rate as a function of a cap on one measure (see :func:`budget_curve`).

    Attributes:
        measure: ``"dollars"``, ``"steps"``, ``"turns"``, ``"wall_time"`` or ``"tokens.<kind>"``.
        caps: Increasing caps (every distinct recorded usage).
        rates: Success rate at each cap (successes within the cap / all trials).
        n_trials: Trials.
        n_unknown: Trials whose usage is unknown (a failure at every cap).
    """

    measure: str
    caps: tuple[float, ...]
    rates: tuple[float, ...]
    n_trials: int
    n_unknown: int

    def rate_at(self, cap: float) -> float:
        """The success rate under ``cap`` (a step function of the recorded usage)."""
        best = 0.0
        for c, r in zip(self.caps, self.rates):
            if c <= cap:
                best = r
        return best if self.n_trials else math.nan

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "measure": self.measure,
            "caps": list(self.caps),
            "rates": list(self.rates),
            "n_trials": self.n_trials,
            "n_unknown": self.n_unknown,
        }


def budget_curve(result: SuiteResult, measure: str = "dollars") -> BudgetCurve:
    """A suite result's success rate against a cap on ``measure``, from the recorded usage of
    its trials (no re-run), priced as the run was (:func:`usage_curve`).

    Example:
        >>> from ek.agents.base import TaskSpec
        >>> from ek.agents.harness import run_suite
        >>> def agent(task, context):             # one more step on each trial
        ...     return {"output": 1, "trajectory": [{"tool": "x"}] * (context.trial + 1)}
        >>> res = run_suite(agent, [TaskSpec("a", gold=1)], k=3)
        >>> c = budget_curve(res, "steps")
        >>> list(zip(c.caps, c.rates))
        [(1.0, 0.3333333333333333), (2.0, 0.6666666666666666), (3.0, 1.0)]
    """
    price, prices = pricing_from_dict(result.pricing)
    return usage_curve(
        result.episodes, result.verdicts, measure, price=price if price is not None else prices
    )


def usage_curve(
    episodes: Sequence[Episode],
    verdicts: Sequence[bool],
    measure: str = "dollars",
    *,
    price: ModelPrice | Mapping[str, ModelPrice] | None = None,
) -> BudgetCurve:
    """Success rate against a cap on ``measure``, from recorded usage (no re-run).

    Example:
        >>> from ek.agents.base import Episode
        >>> eps = [Episode("a", trajectory=[{"tool": "x"}] * n) for n in (1, 3, 2, 5)]
        >>> c = usage_curve(eps, [True, True, False, True], "steps")
        >>> list(zip(c.caps, c.rates))
        [(1.0, 0.25), (2.0, 0.25), (3.0, 0.5), (5.0, 0.75)]
    """
    if len(episodes) != len(verdicts):
        raise ValueError(
            f"episodes and verdicts must align, got {len(episodes)} and {len(verdicts)}"
        )
    names = [f"tokens.{k}" for k in BUDGET_TOKEN_KINDS] + list(_SCALARS)
    if measure not in names:
        raise ValueError(f"measure must be one of {names}, got {measure!r}")
    used = [usage(ep, price)[measure] for ep in episodes]
    known = [(u, ok) for u, ok in zip(used, verdicts) if u is not None]
    caps = sorted({float(u) for u, _ in known})
    n = len(episodes)
    rates = tuple(sum(1 for u, ok in known if ok and u <= c) / n for c in caps) if n else ()
    return BudgetCurve(measure, tuple(caps), rates, n, n - len(known))
