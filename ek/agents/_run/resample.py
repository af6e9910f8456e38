"""Intervals of a metric's corpus aggregate over tasks: one run's, and the change between two.

A metric's aggregate is a ratio of sums over every trial; its uncertainty comes from which
tasks the suite happened to hold, and the trials of one task are correlated, so **tasks are the
unit**. Two methods:

* **bootstrap**: the percentile bootstrap over tasks (Efron & Tibshirani 1993, ch. 13):
  ``n_resamples`` times, ``random.Random(seed).choices`` draws the tasks with replacement
  from the task ids in sorted order (for a change: the current run's, then the baseline's, or
  the shared tasks once when paired), and the aggregate is recomputed on the drawn tasks;
  :func:`ek.stats.percentile_interval`, expanded for the number of tasks (Hesterberg 2015; the
  fewer run's, for two independent runs).
* **clustered**: the cluster-robust standard error with tasks as clusters (Miller 2024,
  arXiv 2411.00640; :func:`ek.stats.clustered_se`), Student's t. A task's influence on the
  aggregate is found by deleting it (the jackknife: ``u_t = (m - 1) / m * (f(S) - f(S - s_t))``
  with ``S`` the run's sums and ``s_t`` the task's, evaluated by the metric's own
  ``aggregate``, so its formula is stated once, in the metric). For a mean of per-task values
  this is exactly ``sd / sqrt(m)``; for a ratio of sums ``A / B`` it is the linearised ratio
  estimator's ``(a_t - R b_t) / B`` times ``(m - 1) B / (m (B - b_t))``: the same when the tasks
  are the same size, within O(1/m) otherwise. One run: ``m - 1`` degrees of freedom. A change,
  paired (the stratified gate): the per-task differences of the two runs' influences,
  ``m - 1`` degrees of freedom; independent: the two standard errors combined, the
  Welch-Satterthwaite degrees of freedom (:func:`ek.stats.welch_df`). O(tasks) aggregate calls.

:func:`by_method` picks one for ``interval="auto" | "bootstrap" | "clustered"`` and keeps the
other beside it as a cross-check where it was computed.

Both work from each task's sums of the detail fields the metric declares
(:func:`ek.agents._run.sums.summed_detail`); a metric that declares none keeps its Scores, is
resampled from them, and has no clustered interval (no closed form: the bootstrap serves it).

Example:
    >>> import ek.agents.metrics
    >>> from ek.base import Score
    >>> cur = {t: [Score(1.0, {"successes": 1, "n": 1})] for t in "abcd"}
    >>> base = {t: [Score(float(t < "c"), {"successes": int(t < "c"), "n": 1})] for t in "abcd"}
    >>> d = MetricDifference("task_success", cur, base, list("abcd"))
    >>> iv = d.bootstrap(0.95, 200, 0)
    >>> iv.point, iv.low >= 0.0, iv.method
    (0.5, True, 'task-bootstrap-paired(expanded, n_resamples=200, seed=0)')
    >>> iv = d.clustered(0.95)   # d_t = (0, 0, 1, 1): 0.5 ± t(0.975; 3) * sd(d) / 2
    >>> round(iv.low, 4), round(iv.high, 4), iv.method   # 0.5 ± 3.1824 * 0.5774 / 2
    (-0.4187, 1.4187, 'task-clustered-paired(t, df=3)')
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence

from ek._validate import short_repr
from ek.base import Score
from ek.stats import (
    BOOTSTRAP_MAX_TASKS,
    Interval,
    clustered_se,
    percentile_interval,
    t_interval,
    welch_df,
)

from .sums import merge_scores, metric_aggregator, summed_detail

__all__ = ["MetricDifference", "MetricSample", "by_method"]

_NAN = math.nan


def by_method(
    method: str,
    n_tasks: int,
    clustered: Callable[[], Interval] | None,
    bootstrap: Callable[[], Interval],
) -> tuple[Interval, Interval | None]:
    """The interval by ``method`` (``"bootstrap"`` or ``"clustered"``, as the caller chose it
    for ``n_tasks`` tasks with :func:`ek.stats.choose_interval`), and the other method's beside
    it when computed.

    The clustered interval is computed whenever it exists (``clustered`` is ``None`` for a
    metric without declared sums); the bootstrap up to :data:`~ek.stats.BOOTSTRAP_MAX_TASKS`
    tasks, on request, or where no clustered interval is defined.
    """
    if method not in ("bootstrap", "clustered"):
        raise ValueError(f"method must be 'bootstrap' or 'clustered', got {short_repr(method)}")
    clus = clustered() if clustered is not None else None
    usable = clus is not None and clus.is_defined
    boot = None
    if method == "bootstrap" or not usable or n_tasks <= BOOTSTRAP_MAX_TASKS:
        boot = bootstrap()
    if method == "clustered" and clus is not None and usable:
        return clus, boot
    assert boot is not None  # computed whenever the clustered interval is not used
    return boot, clus


class MetricSample:
    """One run's Scores of one metric, by task, ready for intervals over tasks.

    Args:
        metric: The registered metric whose aggregate applies.
        scores: ``task_id -> Scores`` (per trial, or merged per task).
        ids: The tasks to use (default: all); they are taken in sorted order.

    Example:
        >>> import ek.agents.metrics
        >>> from ek.base import Score
        >>> s = MetricSample("task_success", {t: [Score(0.0, {"successes": c, "n": 2})]
        ...                                   for t, c in zip("abcd", (2, 0, 1, 1))})
        >>> s.value, s.clustered(0.95).method   # 4 / 8; rates (1, 0, .5, .5)
        (0.5, 'task-clustered(t, df=3)')
    """

    def __init__(
        self,
        metric: str,
        scores: Mapping[str, Sequence[Score]],
        ids: Sequence[str] | None = None,
    ) -> None:
        self.agg, self.exact = metric_aggregator(metric)
        self.fields = summed_detail(metric)
        self.keys = tuple(self.fields or ())
        self.scores = scores
        self.ids = sorted(scores if ids is None else ids)  # canonical order
        #: Per declared field, each task's sum (in :attr:`ids` order); ``None``: kept whole.
        self.cols: list[list[float]] | None = None
        if self.fields is not None:
            rows = [self._sums_of(t, self.fields) for t in self.ids]
            self.cols = [[row[j] for row in rows] for j in range(len(self.keys))]
        else:  # kept whole and re-aggregated for every resample: read once (a store's Scores
            # are read back from its file each time they are iterated)
            self.scores = {t: tuple(scores[t]) for t in self.ids}
        self.value = self.of(range(len(self.ids)))

    def _sums_of(self, task: str, fields: Mapping[str, float | None]) -> list[float]:
        det = merge_scores(self.scores[task], fields, f"task {task!r}").detail
        return [_NAN if det[k] is None else float(det[k]) for k in fields]

    @property
    def summed(self) -> bool:
        """True when the metric declares its sums (a clustered interval exists)."""
        return self.cols is not None

    def _of_sums(self, sums: Sequence[float]) -> float:
        """The metric's aggregate of one merged Score holding ``sums``."""
        detail = {k: (None if math.isnan(v) else v) for k, v in zip(self.keys, sums)}
        return self.agg([Score(_NAN, detail)])

    def totals(self, idx: Sequence[int]) -> list[float]:
        """The sums over the tasks ``idx`` (with repeats), field by field."""
        return [math.fsum(map(col.__getitem__, idx)) for col in self.cols or []]

    def of(self, idx: Sequence[int]) -> float:
        """The aggregate over the tasks ``idx`` (positions in :attr:`ids`, with repeats)."""
        if self.cols is not None:
            return self._of_sums(self.totals(idx))
        return self.agg([s for i in idx for s in self.scores[self.ids[i]]])

    def draw(self, rng: random.Random) -> list[int]:
        """One resample of the tasks: ``m`` positions drawn with replacement."""
        return rng.choices(range(len(self.ids)), k=len(self.ids))

    def influence(self) -> list[float]:
        """Each task's influence on the aggregate, by deleting it (the jackknife; needs sums).

        NaN or infinite where deleting a task leaves the aggregate undefined (the only task with
        a success, for Cost-of-Pass)."""
        cols, m = self.cols or [], len(self.ids)
        total = self.totals(range(m))
        return [
            (m - 1) / m * (self.value - self._of_sums([s - col[t] for s, col in zip(total, cols)]))
            for t in range(m)
        ]

    def bootstrap(self, confidence: float, n_resamples: int, seed: int) -> Interval:
        """The percentile bootstrap interval of the aggregate over tasks."""
        method = f"task-bootstrap(expanded, n_resamples={n_resamples}, seed={seed})"
        if math.isnan(self.value):
            return Interval(_NAN, _NAN, _NAN, confidence, method, "the aggregate is undefined")
        rng = random.Random(seed)
        reps = [self.of(self.draw(rng)) for _ in range(n_resamples)]
        return percentile_interval(self.value, reps, confidence, method, n=len(self.ids))

    def clustered(self, confidence: float) -> Interval:
        """The cluster-robust interval of the aggregate, tasks as clusters (needs sums)."""
        m = len(self.ids)
        u = self.influence() if m >= 2 and not math.isnan(self.value) else []
        why = _undefined(self.value, u, m)
        if why:
            return Interval(self.value, _NAN, _NAN, confidence, "task-clustered", why)
        return t_interval(
            self.value, clustered_se(u), m - 1, confidence, f"task-clustered(t, df={m - 1})"
        )


def _undefined(point: float, influence: Sequence[float], m: int) -> str:
    """Why no clustered interval exists, or ``""``."""
    if math.isnan(point):
        return "an aggregate is undefined (NaN)"
    if m < 2:
        return "one task: no spread to estimate"
    if not all(map(math.isfinite, influence)):  # e.g. the only task with a success deleted
        return "deleting a task leaves an aggregate undefined: no clustered standard error"
    return ""


class MetricDifference:
    """One metric's change between two runs, ``aggregate(current) - aggregate(baseline)``.

    Args:
        metric: The registered metric whose aggregate applies.
        cur: ``task_id -> Scores`` of the current run (per trial, or merged per task).
        base: The same for the baseline.
        shared: The shared task ids for a paired comparison, or ``None`` to treat the two
            runs' tasks as independent samples.
    """

    def __init__(
        self,
        metric: str,
        cur: Mapping[str, Sequence[Score]],
        base: Mapping[str, Sequence[Score]],
        shared: Sequence[str] | None,
    ) -> None:
        self.paired = shared is not None
        self.cur = MetricSample(metric, cur, shared)
        self.base = MetricSample(metric, base, shared)
        self.exact = self.cur.exact
        self.values = (self.cur.value, self.base.value)

    @property
    def summed(self) -> bool:
        """True when the metric declares its sums (a clustered interval exists)."""
        return self.cur.summed

    @property
    def n_tasks(self) -> int:
        """The tasks compared (the larger run's, when independent)."""
        return max(len(self.cur.ids), len(self.base.ids))

    @property
    def point(self) -> float:
        """current - baseline on the runs themselves."""
        return self.values[0] - self.values[1]

    def bootstrap(self, confidence: float, n_resamples: int, seed: int) -> Interval:
        """The percentile bootstrap interval of the change over tasks."""
        kind = "paired" if self.paired else "independent"
        method = f"task-bootstrap-{kind}(expanded, n_resamples={n_resamples}, seed={seed})"
        if math.isnan(self.point):
            return Interval(_NAN, _NAN, _NAN, confidence, method, "an aggregate is undefined (NaN)")
        rng = random.Random(seed)
        reps = []
        for _ in range(n_resamples):
            ic = self.cur.draw(rng)
            ib = ic if self.paired else self.base.draw(rng)
            reps.append(self.cur.of(ic) - self.base.of(ib))
        n = min(len(self.cur.ids), len(self.base.ids))
        return percentile_interval(self.point, reps, confidence, method, n=n)

    def clustered(self, confidence: float) -> Interval:
        """The cluster-robust interval of the change, tasks as clusters (needs sums)."""
        kind = "paired" if self.paired else "independent"
        mc, mb = len(self.cur.ids), len(self.base.ids)
        ok = min(mc, mb) >= 2 and not math.isnan(self.point)
        uc, ub = (self.cur.influence(), self.base.influence()) if ok else ([], [])
        why = _undefined(self.point, uc + ub, min(mc, mb))
        if why:
            return Interval(self.point, _NAN, _NAN, confidence, f"task-clustered-{kind}", why)
        if self.paired:
            se, df = clustered_se([a - b for a, b in zip(uc, ub)]), float(mc - 1)
        else:
            se_c, se_b = clustered_se(uc), clustered_se(ub)
            se, df = math.hypot(se_c, se_b), welch_df(se_c, mc, se_b, mb)
        return t_interval(self.point, se, df, confidence, f"task-clustered-{kind}(t, df={df:.4g})")
