"""``evaluate()``: score a corpus with a metric; the aggregate is always ``metric.aggregate``.

Example:
    >>> from ek.base import Score
    >>> class Exact:
    ...     name, higher_is_better = "exact", True
    ...     def __call__(self, pred, gold):
    ...         ok = pred == gold
    ...         return Score(float(ok), {"passed": ok, "hits": int(ok)})
    ...     def aggregate(self, scores):
    ...         return sum(s.detail["hits"] for s in scores) / len(scores)
    >>> r = evaluate(Exact(), ["a", "b"], ["a", "c"])
    >>> r.value, r.n, r.metric, r.higher_is_better
    (0.5, 2, 'exact', True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ek.base import Score

__all__ = ["EvaluationResult", "evaluate"]


@dataclass(frozen=True)
class EvaluationResult:
    """A corpus result: the aggregate ``value``, the per-item ``scores`` and their count."""

    metric: str
    value: float
    scores: tuple[Score, ...]
    n: int
    higher_is_better: bool

    @property
    def values(self) -> list[float]:
        """The per-item values, in input order."""
        return [s.value for s in self.scores]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "metric": self.metric,
            "value": self.value,
            "n": self.n,
            "higher_is_better": self.higher_is_better,
            "scores": [s.to_dict() for s in self.scores],
        }


def evaluate(metric: Any, preds: Iterable[Any], golds: Iterable[Any]) -> EvaluationResult:
    """Score each ``(pred, gold)`` pair with ``metric`` and aggregate with ``metric.aggregate``.

    Args:
        metric: Anything with ``name``, ``higher_is_better``, ``__call__`` and ``aggregate``.
        preds: Predictions (e.g. Episodes).
        golds: Gold references, one per prediction.

    Raises:
        TypeError: ``metric`` lacks part of the Metric protocol, or returns a non-Score.
        ValueError: ``preds`` and ``golds`` differ in length.
    """
    missing = [a for a in ("name", "higher_is_better", "aggregate") if not hasattr(metric, a)]
    if missing or not callable(metric):
        raise TypeError(
            f"evaluate() expects a Metric (name, higher_is_better, __call__, aggregate); "
            f"{type(metric).__name__} lacks {missing or ['__call__']}"
        )
    p: Sequence[Any] = list(preds)
    g: Sequence[Any] = list(golds)
    if len(p) != len(g):
        raise ValueError(
            f"evaluate() needs one gold per prediction, got {len(p)} preds and {len(g)} golds"
        )
    scores = []
    for i, (a, b) in enumerate(zip(p, g)):
        s = metric(a, b)
        if not isinstance(s, Score):
            raise TypeError(
                f"{metric.name} returned {type(s).__name__} for item {i}, expected Score"
            )
        scores.append(s)
    return EvaluationResult(
        metric=str(metric.name),
        value=float(metric.aggregate(scores)),
        scores=tuple(scores),
        n=len(scores),
        higher_is_better=bool(metric.higher_is_better),
    )
