"""The core protocols: :class:`Score`, :class:`Metric`, :class:`Signal`, and :func:`is_episode`.

A :class:`Metric` scores one ``(prediction, gold)`` pair and aggregates a corpus of scores as a
**ratio of sums** (the sums travel in ``Score.detail``). A :class:`Signal` is reference-free: it
scores an output alone and declares how expensive it is (``cost_tier``; cheap signals run first).

Example:
    >>> s = Score(0.5, {"tp": 1.0, "fp": 1.0, "fn": 1.0, "reason": "one of two right"})
    >>> s.value, s.reason, s.detail["tp"]
    (0.5, 'one of two right', 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

__all__ = ["Metric", "Score", "Signal", "is_episode"]


def _freeze(detail: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if detail is None:
        return MappingProxyType({})
    if not isinstance(detail, Mapping):
        raise TypeError(f"Score.detail must be a mapping, got {type(detail).__name__}: {detail!r}")
    return MappingProxyType(dict(detail))


@dataclass(frozen=True)
class Score:
    """One scored item: a ``value`` and a machine-readable ``detail``.

    ``detail`` carries what :meth:`Metric.aggregate` needs (``tp``/``fp``/``fn``, ``dollars``,
    ``successes``, ...), ``higher_is_better``, a verdict ``passed`` (a bool) where the metric has
    one, and a human-readable ``reason``. It is read-only.

    Args:
        value: The item's score. NaN means "undefined here"; the reason says why.
        detail: The breakdown (copied into a read-only mapping).

    Example:
        >>> Score(1.0, {"passed": True}).passed
        True
        >>> Score(float("nan"), {"reason": "no gold"}).reason
        'no gold'
    """

    value: float
    detail: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)):
            raise TypeError(
                f"Score.value must be a float, got {type(self.value).__name__}: {self.value!r}"
            )
        object.__setattr__(self, "value", float(self.value))
        object.__setattr__(self, "detail", _freeze(self.detail))

    @property
    def reason(self) -> str:
        """The human-readable explanation (``""`` when the metric gave none)."""
        return str(self.detail.get("reason", ""))

    @property
    def passed(self) -> bool | None:
        """The metric's verdict, or ``None`` when it has none."""
        p = self.detail.get("passed")
        return None if p is None else bool(p)

    @property
    def is_nan(self) -> bool:
        """True when the value is undefined (NaN)."""
        return math.isnan(self.value)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict ``{"value": ..., "detail": {...}}``."""
        return {"value": self.value, "detail": dict(self.detail)}


@runtime_checkable
class Metric(Protocol):
    """A reference-based metric: ``__call__(pred, gold) -> Score`` plus a corpus ``aggregate``.

    ``aggregate`` must be a ratio of sums read from each score's ``detail``, never a mean of
    per-item ratios.
    """

    name: str
    higher_is_better: bool

    def __call__(self, pred: Any, gold: Any) -> Score: ...

    def aggregate(self, scores: Sequence[Score]) -> float: ...


@runtime_checkable
class Signal(Protocol):
    """A reference-free quality signal: ``__call__(output) -> float``.

    ``cost_tier`` orders signals by expense (1 cheapest; an LLM judge is 5); cheap ones run first.
    A raw signal value is not a probability: calibrate it before gating on it.
    """

    name: str
    cost_tier: int

    def __call__(self, output: Any) -> float: ...


def is_episode(obj: Any) -> bool:
    """Duck-typed test for an agent episode (``task_id``, ``trajectory`` and ``output``).

    The core never imports ``ek.agents``; any object with these attributes qualifies.

    Example:
        >>> class E:
        ...     task_id, trajectory, output = "t", (), None
        >>> is_episode(E()), is_episode("text")
        (True, False)
    """
    return all(hasattr(obj, a) for a in ("task_id", "trajectory", "output"))
