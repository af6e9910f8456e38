"""ek's values in a Ragas result: per row (:class:`EkRagasScore`), per column (:class:`EkRagasAggregate`),
and in the data frame (:func:`to_pandas_with_reasons`).

Ragas' ``evaluate()`` needs a plain number per row and keeps one column per metric name; its
``to_pandas()`` builds the frame from those numbers, so ek's reasons do not survive into it.
An :class:`EkRagasScore` is a ``float`` that also carries ek's reason, detail and task id;
:func:`to_pandas_with_reasons` is ``result.to_pandas()`` with a ``<column>_reason`` column beside
each ek column. A row ek could not score is NaN: with ek's reason when the shell refused it
(an :class:`EkRagasScore` whose ``detail["unscored"]`` says why), or a bare ``float('nan')``
when Ragas recorded it without ever getting a score from ek (it printed the exception,
"Exception raised in Job[i]"). :meth:`EkRagasMetric.aggregate <ek.adapters.ragas.EkRagasMetric.aggregate>`
aggregates the rows ek scored and says how many it could not, and why
(:class:`EkRagasAggregate`).

Example:
    >>> s = EkRagasScore(float("nan"), "no gold calls", {"passed": False}, "t1")
    >>> isinstance(s, float), s.reason, s.task_id
    (True, 'no gold calls', 't1')
    >>> a = EkRagasAggregate(0.75, 3, ["row 3: Ragas recorded NaN without an ek score"])
    >>> float(a), a.scored, a.unscored, a.reason
    (0.75, 3, 1, '1 of 4 rows unscored: row 3: Ragas recorded NaN without an ek score')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ek._validate import short_repr
from ek.base import Score

__all__ = [
    "UNSCORED_BY_RAGAS",
    "EkRagasAggregate",
    "EkRagasScore",
    "row_reason",
    "split_scored",
    "to_pandas_with_reasons",
]

#: The reason of a row Ragas recorded as a bare NaN, without a score from ek.
UNSCORED_BY_RAGAS = (
    "Ragas recorded NaN without an ek score (the row raised inside Ragas: see the "
    "'Exception raised in Job[i]' it printed, or rerun with raise_exceptions=True)"
)


class EkRagasScore(float):
    """A plain ``float`` (what Ragas' ``evaluate()`` needs) that also carries ek's ``reason``,
    ``detail`` and ``task_id``; it arrives unchanged in ``EvaluationResult.scores``.

    Example:
        >>> s = EkRagasScore(0.5, "half", {"tp": 1.0}, "t")
        >>> s == 0.5, s.detail["tp"], s.unscored
        (True, 1.0, False)
    """

    reason: str
    detail: Mapping[str, Any]
    task_id: str | None

    def __new__(
        cls,
        value: float,
        reason: str = "",
        detail: Mapping[str, Any] | None = None,
        task_id: str | None = None,
    ) -> EkRagasScore:
        obj = super().__new__(cls, value)
        obj.reason = reason
        # A Score's detail is already a read-only view of a private dict: share it.
        obj.detail = (
            detail if type(detail) is MappingProxyType else MappingProxyType(dict(detail or {}))
        )
        obj.task_id = task_id
        return obj

    @classmethod
    def from_score(cls, score: Score, task_id: str | None = None) -> EkRagasScore:
        """Wrap an ek :class:`~ek.base.Score`."""
        return cls(score.value, score.reason, score.detail, task_id)

    @classmethod
    def refused(cls, why: str, task_id: str | None = None) -> EkRagasScore:
        """A row ek could not score: NaN, the reason, ``detail["unscored"] = why``."""
        return cls(math.nan, f"unscored: {why}", {"unscored": why}, task_id)

    @property
    def unscored(self) -> bool:
        """Whether ek refused this row (rather than scoring it, perhaps as NaN)."""
        return "unscored" in self.detail

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (float(self), self.reason, dict(self.detail), self.task_id))

    def __repr__(self) -> str:
        return float.__repr__(self)


class EkRagasAggregate(float):
    """ek's corpus aggregate of one result column (a ``float``), over the rows ek scored, with
    how many rows it could not score and why.

    Attributes:
        scored: The rows in the aggregate.
        unscored: The rows left out (NaN that ek refused, or that Ragas recorded without ek).
        reasons: Why, one per unscored row, in row order (``"row <i>: <why>"``).
    """

    scored: int
    reasons: tuple[str, ...]

    def __new__(cls, value: float, scored: int, reasons: Sequence[str] = ()) -> EkRagasAggregate:
        obj = super().__new__(cls, value)
        obj.scored = scored
        obj.reasons = tuple(reasons)
        return obj

    @property
    def unscored(self) -> int:
        """How many rows were left out."""
        return len(self.reasons)

    @property
    def reason(self) -> str:
        """``""`` when every row was scored, else ``"<u> of <n> rows unscored: <first why>"``."""
        if not self.reasons:
            return ""
        return f"{self.unscored} of {self.scored + self.unscored} rows unscored: {self.reasons[0]}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (float(self), self.scored, self.reasons))

    def __repr__(self) -> str:
        return float.__repr__(self)


def row_reason(value: Any) -> str:
    """ek's reason for one cell of an ek column (``""`` for a value that is not ek's)."""
    if isinstance(value, EkRagasScore):
        return value.reason
    if isinstance(value, float) and math.isnan(value):
        return UNSCORED_BY_RAGAS
    return ""


def split_scored(values: Sequence[Any]) -> tuple[list[EkRagasScore], list[str]]:
    """The ek scores of a column's rows, and why each other row is unscored.

    Raises:
        TypeError: a number that is not ek's (no detail to aggregate).
    """
    scored: list[EkRagasScore] = []
    reasons: list[str] = []
    for i, v in enumerate(values):
        if isinstance(v, EkRagasScore) and not v.unscored:
            scored.append(v)
        elif isinstance(v, EkRagasScore) or (isinstance(v, float) and math.isnan(v)):
            reasons.append(f"row {i}: {row_reason(v)}")
        else:
            raise TypeError(
                "aggregate needs the EkRagasScore values this metric returned (a result column: "
                f"result[m.name]), got {type(v).__name__}: {short_repr(v, 80)} at row {i}"
            )
    return scored, reasons


def _ek_columns(result: Any) -> list[str]:
    rows = list(getattr(result, "scores", None) or [])
    keys = list(rows[0]) if rows else []
    return [k for k in keys if any(isinstance(r.get(k), EkRagasScore) for r in rows)]


def to_pandas_with_reasons(result: Any) -> Any:
    """``result.to_pandas()`` with ek's reason beside each ek column (``<column>_reason``).

    Args:
        result: The ``EvaluationResult`` of ``ragas.evaluate()`` / ``aevaluate()``.

    Returns:
        The data frame: the dataset's columns, one per metric, and one ``<column>_reason`` per
        ek metric column (ek's reason for the row; why, for a row ek could not score).

    Raises:
        TypeError: ``result`` is not an ``EvaluationResult``.
    """
    if not hasattr(result, "to_pandas") or not hasattr(result, "scores"):
        raise TypeError(
            "to_pandas_with_reasons expects the EvaluationResult of ragas.evaluate(), got "
            f"{type(result).__name__}: {short_repr(result, 80)}"
        )
    frame = result.to_pandas()
    for col in _ek_columns(result):
        frame[f"{col}_reason"] = [row_reason(row.get(col)) for row in result.scores]
    return frame
