"""A metric named in a run: the metric itself, the sums its aggregate declares, and Scores
merged by them.

A run's file names its metrics by string; what a report, a gate or a resampled interval knows of
a metric it names is found here, once:

* :func:`registered_metric`: the metric registered under the name (a registered class built
  with no arguments), or ``None``;
* :func:`metric_aggregator`: its corpus ``aggregate`` (the mean of the values stands in, and
  says so, when nothing is registered);
* :func:`declared_sums` and :func:`summed_detail`: the detail fields the aggregate sums, as the
  metric declares them itself (a class attribute ``sums``, e.g. ``("tp", "fp", "fn")``, and
  ``sum_defaults`` for a field read with a default when a Score lacks it), as torchmetrics'
  ``add_state(..., dist_reduce_fx="sum")`` and sacrebleu's corpus statistics do;
* :class:`TaskSums` and :func:`merge_scores`: one task's Scores merged into one Score whose
  detail holds the task's sums (and ``merged_trials``, how many Scores it stands for). The
  metric's own ``aggregate`` over merged Scores is its corpus figure, as over the trials' Scores
  (the sums are only added in another order: equal to the last bits of a float); tallies of
  parts of a run merge by adding these sums, task by task;
* :func:`score_from_record`: the Score of a stored score record ``{"value", "detail"}``.

A metric that declares no sums (a registered custom metric without ``sums``, or one not
registered) keeps its Scores whole: its aggregate runs over every trial's Score, and its
intervals over tasks resample those Scores.

Example:
    >>> import ek.agents.metrics
    >>> from ek.base import Score
    >>> fields = summed_detail("task_success"); dict(fields)
    {'successes': None, 'n': 1.0}
    >>> merged = merge_scores([Score(1.0, {"successes": 1, "n": 1}),
    ...                        Score(0.0, {"successes": 0, "n": 1})], fields)
    >>> merged.detail["successes"], merged.detail["merged_trials"]
    (1.0, 2)
    >>> agg, exact = metric_aggregator("task_success"); agg([merged]), exact
    (0.5, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ek._validate import short_repr
from ek.base import Score
from ek.registry import UnknownNameError, resolve

__all__ = [
    "MERGED_TRIALS",
    "TaskSums",
    "declared_sums",
    "merge_scores",
    "metric_aggregator",
    "registered_metric",
    "score_from_record",
    "summed_detail",
]

#: The detail key of a merged Score: how many trials' Scores it stands for.
MERGED_TRIALS = "merged_trials"

_ABSENT: Any = object()  # a detail key a Score does not carry


def registered_metric(name: str) -> Any:
    """The metric registered as ``name`` (a registered class built with no arguments), or
    ``None`` when nothing is registered under it or the class needs arguments: what a run read
    from a file knows of a metric it names.

    Example:
        >>> import ek.agents.metrics
        >>> type(registered_metric("task_success")).__name__, registered_metric("no-such-metric")
        ('TaskSuccessMetric', None)
    """
    try:
        obj = resolve("metrics", name)
        return obj() if isinstance(obj, type) else obj
    except (UnknownNameError, TypeError, ValueError):
        return None


def _mean_value(scores: Sequence[Score]) -> float:
    vals = [s.value for s in scores]
    return math.fsum(vals) / len(vals) if vals else math.nan


def metric_aggregator(name: str) -> tuple[Callable[[Sequence[Score]], float], bool]:
    """The corpus aggregate of the metric registered as ``name``, and whether it is exact.

    The registered metric (a class is instantiated with no arguments) supplies its own
    ``aggregate`` (a ratio of sums). When ``name`` is not registered or cannot be built without
    arguments, the mean of the per-trial values stands in and ``exact`` is ``False``.

    Example:
        >>> import ek.agents.metrics
        >>> agg, exact = metric_aggregator("task_success")
        >>> agg([Score(1.0, {"successes": 1, "n": 1}), Score(0.0, {"successes": 0, "n": 1})]), exact
        (0.5, True)
    """
    agg = getattr(registered_metric(name), "aggregate", None)
    if not callable(agg):
        return _mean_value, False
    return (lambda scores: float(agg(list(scores)))), True


def declared_sums(metric: Any) -> dict[str, float | None] | None:
    """The detail fields ``metric``'s aggregate sums, from its own declaration, or ``None``.

    Each field named in ``metric.sums`` maps to the value the aggregate reads for a Score
    without it (``metric.sum_defaults``), or ``None`` when every Score must carry it.

    Example:
        >>> class Recall:
        ...     sums = ("hits", "relevant")
        ...     sum_defaults = {"relevant": 1.0}
        >>> declared_sums(Recall()), declared_sums(object())
        ({'hits': None, 'relevant': 1.0}, None)
    """
    names = getattr(metric, "sums", None)
    if names is None:
        return None  # the fallback: the metric's Scores are kept whole
    if isinstance(names, str) or not all(isinstance(k, str) for k in names):
        raise TypeError(
            f"{type(metric).__name__}.sums must be a tuple of detail field names, got "
            f"{short_repr(names)}"
        )
    defaults = getattr(metric, "sum_defaults", None) or {}
    return {k: (float(defaults[k]) if k in defaults else None) for k in names}


def summed_detail(name: str) -> Mapping[str, float | None] | None:
    """The detail fields the aggregate of the metric registered as ``name`` sums, or ``None``.

    ``None`` when the metric is not registered, cannot be built without arguments, or declares
    nothing (its Scores are kept whole then); see :func:`declared_sums`.

    Example:
        >>> import ek.agents.toolcalls
        >>> dict(summed_detail("tool_calls"))
        {'tp': None, 'fp': None, 'fn': None}
        >>> summed_detail("no-such-metric") is None
        True
    """
    metric = registered_metric(name)
    return None if metric is None else declared_sums(metric)


def score_from_record(d: Any, where: str = "score") -> Score:
    """The Score of a stored score record ``{"value": ..., "detail": {...}}`` (a null value
    is NaN): a store's trial, a baseline's metric.

    Example:
        >>> score_from_record({"value": None, "detail": {"tp": 1}}).detail["tp"]
        1
        >>> score_from_record({"detail": {}}, "metric 'm' task 'a'")
        Traceback (most recent call last):
        ...
        ValueError: metric 'm' task 'a': expected a score {'value': ..., 'detail': {...}}, got {'detail': {}}
    """
    if not isinstance(d, Mapping) or "value" not in d:
        raise ValueError(
            f"{where}: expected a score {{'value': ..., 'detail': {{...}}}}, got {short_repr(d, 100)}"
        )
    v = d["value"]
    return Score(math.nan if v is None else float(v), d.get("detail") or {})


def _num(v: Any, key: str, where: str) -> float:
    if v is None:
        return math.nan  # unknown (Cost-of-Pass dollars): the sum is unknown
    if isinstance(v, (int, float)):
        return float(v)
    raise ValueError(f"{where}: detail {key!r} must be a number, got {v!r:.100}")


def _where(where: str | tuple[str, str]) -> str:
    """An error's place: as given, or ``metric 'name' task 'id'`` (formatted only on error)."""
    return where if isinstance(where, str) else f"metric {where[0]!r} task {where[1]!r}"


class TaskSums:
    """One task's running sums of a metric's declared detail fields.

    Args:
        fields: ``field -> default`` (:func:`declared_sums`): the fields summed, in order.

    Example:
        >>> acc = TaskSums({"tp": None, "fp": None})
        >>> acc.add({"tp": 2, "fp": 1}, "task 'a'"); acc.add({"tp": 1, "fp": 0}, "task 'a'")
        >>> acc.score().detail
        {'tp': 3.0, 'fp': 1.0, 'merged_trials': 2}
    """

    __slots__ = ("fields", "hib", "keys", "n", "sums")

    def __init__(self, fields: Mapping[str, float | None]) -> None:
        self.fields = fields
        self.keys = tuple(fields)
        self.n = 0
        self.sums = [0.0] * len(self.keys)
        self.hib: Any = None

    def add(self, detail: Mapping[str, Any], where: str | tuple[str, str]) -> None:
        """Add one Score's detail (``where``: for errors, or ``(metric, task)``)."""
        sums = self.sums
        for i, key in enumerate(self.keys):
            v = detail.get(key, _ABSENT)
            if type(v) is float or type(v) is int:  # float + int == float + float(int)
                sums[i] += v
            elif v is not _ABSENT:
                sums[i] += _num(v, key, _where(where))
            elif self.fields[key] is None:
                raise ValueError(
                    f"{_where(where)}: a score without the detail {key!r} its aggregate sums"
                )
            else:
                sums[i] += self.fields[key]  # type: ignore[operator]
        self.n += int(detail.get(MERGED_TRIALS, 1))
        if self.hib is None and "higher_is_better" in detail:
            self.hib = detail["higher_is_better"]

    def merge(self, other: TaskSums) -> None:
        """Add another tally's sums of the same task (every field a sum)."""
        self.n += other.n
        self.sums = [a + b for a, b in zip(self.sums, other.sums)]
        if self.hib is None:
            self.hib = other.hib

    def score(self) -> Score:
        """The merged Score: the sums (an unknown sum as ``None``), ``merged_trials`` and the
        direction the first Score carried. Its value is NaN: the aggregate reads the sums."""
        detail: dict[str, Any] = {
            k: (None if math.isnan(v) else v) for k, v in zip(self.keys, self.sums)
        }
        detail[MERGED_TRIALS] = self.n
        if self.hib is not None:
            detail["higher_is_better"] = self.hib
        return Score(math.nan, detail)


def merge_scores(
    scores: Iterable[Score], fields: Mapping[str, float | None], where: str = "scores"
) -> Score:
    """One Score for many (a task's trials) whose detail holds the sums of ``fields``.

    Its value is NaN (the aggregate reads the sums, not the values); ``merged_trials`` counts
    the Scores merged (a merged Score counts for the trials it stands for); an unknown part
    (``None``) makes its sum unknown (NaN).

    Example:
        >>> s = merge_scores([Score(0.5, {"tp": 1, "fp": 1, "fn": 0}),
        ...                   Score(1.0, {"tp": 2, "fp": 0, "fn": 0})], {"tp": None, "fp": None, "fn": None})
        >>> s.detail["tp"], s.detail["fp"], s.detail["merged_trials"]
        (3.0, 1.0, 2)
    """
    acc = TaskSums(fields)
    for s in scores:
        acc.add(s.detail, where)
    return acc.score()
