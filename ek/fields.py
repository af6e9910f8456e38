"""Weighted TP/FP/FN accounting over fields, and micro-F1 as a ratio of sums.

This is the IE field metric's bookkeeping, reused by the tool-call metric: a correct field is a
true positive weighted by its importance, a wrong value is both a false positive (what was said)
and a false negative (what was missed), a missing field is a false negative, an extra one a false
positive. The corpus F1 is computed from the summed counts (micro-F1), never as a mean of
per-item F1s.

Example:
    >>> c = compare_fields({"a": 1, "b": 2, "x": 0}, {"a": 1, "b": 3, "c": 4},
    ...                    importance={"b": 2.0})
    >>> c.counts
    FieldCounts(tp=1.0, fp=3.0, fn=3.0)
    >>> [(v.field, v.verdict) for v in c.verdicts]
    [('a', 'match'), ('b', 'wrong'), ('c', 'missing'), ('x', 'extra')]
    >>> round(c.counts.f1, 4)    # 2*1 / (2*1 + 3 + 3)
    0.25
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ek._validate import is_number, short_repr, to_float

__all__ = [
    "FieldComparison",
    "FieldCounts",
    "FieldVerdict",
    "compare_fields",
    "f1_score",
    "micro_f1",
]

Verdict = Literal["match", "wrong", "missing", "extra"]


def f1_score(tp: float, fp: float, fn: float) -> float:
    """F1 = 2·TP / (2·TP + FP + FN); 1.0 when there is nothing to find and nothing was said.

    Example:
        >>> f1_score(2, 1, 1), f1_score(0, 0, 0), f1_score(0, 1, 0)
        (0.6666666666666666, 1.0, 0.0)
    """
    if type(tp) is not float or type(fp) is not float or type(fn) is not float:
        _check_counts(tp, fp, fn)
    denom = 2.0 * tp + fp + fn
    # Counts >= 0 (NaN fails the comparisons) with a finite sum need no other check; else the
    # full check says which one is wrong (a sum that only overflows is not an error).
    if not (tp >= 0.0 and fp >= 0.0 and fn >= 0.0 and denom < _INF):
        _check_counts(tp, fp, fn)
    # Empty prediction against empty gold: nothing was missed and nothing invented.
    return 1.0 if denom == 0 else 2.0 * tp / denom


_INF = math.inf


def _check_counts(tp: Any, fp: Any, fn: Any) -> None:
    for label, v in (("tp", tp), ("fp", fp), ("fn", fn)):
        if not is_number(v):
            raise TypeError(
                f"{label} must be a number >= 0, got {type(v).__name__}: {short_repr(v)}"
            )
        if not (math.isfinite(to_float(label, v)) and v >= 0):
            raise ValueError(f"{label} must be a finite number >= 0, got {short_repr(v)}")


@dataclass(frozen=True)
class FieldCounts:
    """Weighted true-positive, false-positive and false-negative mass. Adds with ``+``."""

    tp: float = 0.0
    fp: float = 0.0
    fn: float = 0.0

    def __add__(self, other: FieldCounts) -> FieldCounts:
        if not isinstance(other, FieldCounts):
            return NotImplemented
        return FieldCounts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def precision(self) -> float:
        """TP / (TP + FP); 1.0 when nothing was predicted."""
        d = self.tp + self.fp
        return 1.0 if d == 0 else self.tp / d

    @property
    def recall(self) -> float:
        """TP / (TP + FN); 1.0 when there was nothing to find."""
        d = self.tp + self.fn
        return 1.0 if d == 0 else self.tp / d

    @property
    def f1(self) -> float:
        """The F1 of these counts (see :func:`f1_score`)."""
        return f1_score(self.tp, self.fp, self.fn)

    def as_dict(self) -> dict[str, float]:
        """``{"tp": ..., "fp": ..., "fn": ...}``."""
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn}


def micro_f1(counts: Iterable[FieldCounts | Mapping[str, float]]) -> float:
    """Micro-F1: sum TP, FP and FN over all items, then one F1 (a ratio of sums).

    Accepts :class:`FieldCounts` or mappings with ``tp``/``fp``/``fn`` (e.g. a ``Score.detail``).

    Example:
        >>> micro_f1([FieldCounts(1, 0, 0), {"tp": 0, "fp": 1, "fn": 1}])   # 2/(2+1+1)
        0.5
    """
    tot = FieldCounts()
    for c in counts:
        if isinstance(c, FieldCounts):
            tot = tot + c
        elif isinstance(c, Mapping):
            try:
                tot = tot + FieldCounts(float(c["tp"]), float(c["fp"]), float(c["fn"]))
            except KeyError as e:
                raise ValueError(
                    f"micro_f1 needs tp, fp and fn in each item; missing {e} in {short_repr(dict(c))}"
                ) from None
        else:
            raise TypeError(
                f"micro_f1 expects FieldCounts or mappings, got {type(c).__name__}: {short_repr(c)}"
            )
    return tot.f1


@dataclass(frozen=True)
class FieldVerdict:
    """How one field fared: ``match``, ``wrong``, ``missing`` or ``extra``, with its weight."""

    field: str
    verdict: Verdict
    importance: float
    predicted: Any = None
    gold: Any = None


@dataclass(frozen=True)
class FieldComparison:
    """The verdict of every field and the weighted counts they add up to."""

    verdicts: tuple[FieldVerdict, ...]
    counts: FieldCounts

    @property
    def exact(self) -> bool:
        """True when every field matched and none was extra or missing."""
        return all(v.verdict == "match" for v in self.verdicts)


def _default_equal(a: Any, b: Any) -> bool:
    return bool(a == b)


def compare_fields(
    pred: Mapping[str, Any],
    gold: Mapping[str, Any],
    *,
    importance: Mapping[str, float] | Callable[[str], float] | None = None,
    equal: Callable[[Any, Any], bool] = _default_equal,
    optional: Iterable[str] = (),
) -> FieldComparison:
    """Compare two records field by field and weigh each outcome by the field's importance.

    Args:
        pred: The predicted record.
        gold: The gold record.
        importance: Field importances, as a mapping (missing keys weigh 1.0) or a callable.
        equal: ``equal(pred_value, gold_value) -> bool`` (canonicalise inside it).
        optional: Gold fields whose absence in ``pred`` is not an error.

    Returns:
        The per-field verdicts (gold order, then extra fields in ``pred`` order) and the counts.
    """
    if not isinstance(pred, Mapping) or not isinstance(gold, Mapping):
        raise TypeError(
            f"compare_fields expects two mappings, got {type(pred).__name__} and {type(gold).__name__}"
        )
    if importance is None:
        imp: Callable[[str], float] = lambda _k: 1.0  # noqa: E731
    elif isinstance(importance, Mapping):
        table = importance
        imp = lambda k: float(table.get(k, 1.0))  # noqa: E731
    else:
        imp = importance
    opt = set(optional)
    tp = fp = fn = 0.0
    out: list[FieldVerdict] = []
    for k, g in gold.items():
        w = imp(k)
        if k in pred:
            if equal(pred[k], g):
                tp += w
                out.append(FieldVerdict(k, "match", w, pred[k], g))
            else:
                fp += w
                fn += w
                out.append(FieldVerdict(k, "wrong", w, pred[k], g))
        elif k in opt:
            continue
        else:
            fn += w
            out.append(FieldVerdict(k, "missing", w, None, g))
    for k, p in pred.items():
        if k not in gold:
            w = imp(k)
            fp += w
            out.append(FieldVerdict(k, "extra", w, p, None))
    return FieldComparison(tuple(out), FieldCounts(tp, fp, fn))
