"""The gate's interval of a metric's change, ``aggregate(current) - aggregate(baseline)``.

Each metric check of :func:`ek.agents.gate.agent_regression_gate` compares the metric's own
corpus aggregate (a ratio of sums) between two runs, with **tasks as the unit** (the trials of
a task are correlated), by one of two methods:

* **bootstrap**: the percentile bootstrap over tasks (Efron & Tibshirani 1993, ch. 13):
  ``n_resamples`` times, ``random.Random(seed).choices`` draws each run's tasks with
  replacement (the shared tasks jointly when paired), from the task ids in sorted order, and
  each run's aggregate is recomputed on the drawn tasks; :func:`ek.stats.percentile_interval`.
* **clustered**: the cluster-robust standard error with tasks as clusters (Miller 2024,
  arXiv 2411.00640; :func:`ek.stats.clustered_se`). A task's influence on the aggregate is
  found by deleting it (the jackknife: ``u_t = (m - 1) / m * (f(S) - f(S - s_t))`` with ``S``
  the run's sums and ``s_t`` the task's, evaluated by the metric's own ``aggregate``, so its
  formula is stated once, in the metric). For a mean of per-task values this is exactly
  ``sd / sqrt(m)``; for a ratio of sums ``A / B`` it is the linearised ratio estimator's
  ``(a_t - R b_t) / B`` times ``(m - 1) B / (m (B - b_t))``, the same with equal task sizes
  and within O(1/m) otherwise. Paired (the stratified gate): the per-task differences of the
  two runs' influences, Student's t with ``m - 1`` degrees of freedom; independent: the two
  standard errors combined, Welch-Satterthwaite degrees of freedom (:func:`ek.stats.welch_df`).
  O(tasks) aggregate calls.

Both work from each task's sums of the detail fields the metric declares
(:func:`ek.agents.tally.summed_detail`); a metric that declares none keeps its Scores, is
resampled from them, and has no clustered interval (no closed form: the bootstrap serves it).

Example:
    >>> import ek.agents.metrics
    >>> from ek.base import Score
    >>> cur = {t: [Score(1.0, {"successes": 1, "n": 1})] for t in "abcd"}
    >>> base = {t: [Score(float(t < "c"), {"successes": int(t < "c"), "n": 1})] for t in "abcd"}
    >>> d = MetricDifference("task_success", cur, base, list("abcd"))
    >>> iv = d.bootstrap(0.95, 200, 0)
    >>> iv.point, iv.low >= 0.0, iv.method
    (0.5, True, 'task-bootstrap-paired(n_resamples=200, seed=0)')
    >>> iv = d.clustered(0.95)   # d_t = (0, 0, 1, 1): 0.5 ± t(0.975; 3) * sd(d) / 2
    >>> round(iv.low, 4), round(iv.high, 4), iv.method   # 0.5 ± 3.1824 * 0.5774 / 2
    (-0.4187, 1.4187, 'task-clustered-paired(t, df=3)')
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

from ek.base import Score
from ek.stats import Interval, clustered_se, percentile_interval, t_interval, welch_df

from .summary import metric_aggregator
from .tally import merge_scores, summed_detail

__all__ = ["MetricDifference"]

_NAN = math.nan


class _Run:
    """One run's side of a metric difference: its task ids in canonical (sorted) order and,
    for a metric that declares its sums, each task's sums (an unknown sum as NaN)."""

    def __init__(
        self,
        scores: Mapping[str, Sequence[Score]],
        ids: Sequence[str],
        fields: Mapping[str, float | None] | None,
    ) -> None:
        self.scores = scores
        self.ids = sorted(ids)
        self.rows: list[list[float]] | None = None
        if fields is not None:
            self.rows = []
            for t in self.ids:
                det = merge_scores(scores[t], fields, f"task {t!r}").detail
                self.rows.append([_NAN if det[k] is None else float(det[k]) for k in fields])

    def totals(self, idx: Sequence[int]) -> list[float]:
        """The sums over the tasks ``idx`` (with repeats), field by field."""
        assert self.rows is not None
        rows = self.rows
        return [math.fsum(rows[i][j] for i in idx) for j in range(len(rows[0]))]

    def flat(self, idx: Sequence[int]) -> list[Score]:
        """The Scores of the tasks ``idx`` (with repeats), for a metric kept whole."""
        return [s for i in idx for s in self.scores[self.ids[i]]]


class MetricDifference:
    """One metric's change between two runs, ready for an interval.

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
        self.agg, self.exact = metric_aggregator(metric)
        self.fields = summed_detail(metric)
        self.keys = tuple(self.fields or ())
        self.paired = shared is not None
        self.cur = _Run(cur, list(shared) if shared is not None else list(cur), self.fields)
        self.base = _Run(base, list(shared) if shared is not None else list(base), self.fields)
        self.values = (self._value(self.cur), self._value(self.base))

    @property
    def summed(self) -> bool:
        """True when the metric declares its sums (a clustered interval exists)."""
        return self.fields is not None

    @property
    def n_tasks(self) -> int:
        """The tasks compared (the larger run's, when independent)."""
        return max(len(self.cur.ids), len(self.base.ids))

    def _of_sums(self, sums: Sequence[float]) -> float:
        """The metric's aggregate of one merged Score holding ``sums``."""
        detail = {k: (None if math.isnan(v) else v) for k, v in zip(self.keys, sums)}
        return self.agg([Score(_NAN, detail)])

    def _value(self, run: _Run, idx: Sequence[int] | None = None) -> float:
        """The aggregate of the tasks ``idx`` of ``run`` (all of them by default)."""
        idx = range(len(run.ids)) if idx is None else idx
        return self._of_sums(run.totals(idx)) if run.rows is not None else self.agg(run.flat(idx))

    @property
    def point(self) -> float:
        """current - baseline on the runs themselves."""
        return self.values[0] - self.values[1]

    def bootstrap(self, confidence: float, n_resamples: int, seed: int) -> Interval:
        """The percentile bootstrap interval over tasks (see the module docstring)."""
        kind = "paired" if self.paired else "independent"
        method = f"task-bootstrap-{kind}(n_resamples={n_resamples}, seed={seed})"
        if math.isnan(self.point):
            return Interval(_NAN, _NAN, _NAN, confidence, method, "an aggregate is undefined (NaN)")
        rng = random.Random(seed)
        mc, mb = len(self.cur.ids), len(self.base.ids)
        reps = []
        for _ in range(n_resamples):
            ic = rng.choices(range(mc), k=mc)
            ib = ic if self.paired else rng.choices(range(mb), k=mb)
            reps.append(self._value(self.cur, ic) - self._value(self.base, ib))
        return percentile_interval(self.point, reps, confidence, method)

    def _influence(self, run: _Run, value: float) -> list[float]:
        """Each task's influence on ``run``'s aggregate, by deleting it (the jackknife)."""
        assert run.rows is not None
        total = run.totals(range(len(run.ids)))
        m = len(run.rows)
        return [
            (m - 1) / m * (value - self._of_sums([a - b for a, b in zip(total, row)]))
            for row in run.rows
        ]

    def clustered(self, confidence: float) -> Interval:
        """The cluster-robust interval, tasks as clusters (see the module docstring).

        Raises:
            ValueError: the metric declares no sums (only its bootstrap exists).
        """
        if self.fields is None:
            raise ValueError("a clustered interval needs a metric that declares its sums")
        kind = "paired" if self.paired else "independent"
        mc, mb = len(self.cur.ids), len(self.base.ids)
        if math.isnan(self.point) or min(mc, mb) < 2:
            why = "an aggregate is undefined (NaN)" if math.isnan(self.point) else "one task"
            return Interval(self.point, _NAN, _NAN, confidence, f"task-clustered-{kind}", why)
        uc = self._influence(self.cur, self.values[0])
        ub = self._influence(self.base, self.values[1])
        if not all(map(math.isfinite, uc + ub)):  # e.g. the only task with a success deleted
            why = "deleting a task leaves an aggregate undefined: no clustered standard error"
            return Interval(self.point, _NAN, _NAN, confidence, f"task-clustered-{kind}", why)
        if self.paired:
            se, df = clustered_se([a - b for a, b in zip(uc, ub)]), float(mc - 1)
        else:
            se_c, se_b = clustered_se(uc), clustered_se(ub)
            se, df = math.hypot(se_c, se_b), welch_df(se_c, mc, se_b, mb)
        method = f"task-clustered-{kind}(t, df={df:.4g})"
        return t_interval(self.point, se, df, confidence, method)
