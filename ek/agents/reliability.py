"""Reliability: pass@k, pass^k and the :class:`ReliabilityReport` of a suite.

pass@k and pass^k are **not** Metrics (DESIGN rule 1): they are cross-task quantities over k
trials of the same task, so they ship as pure functions and the harness owns the trial grouping,
handing per-task ``(n trials, c successes)`` counts to :func:`reliability`.

* :func:`pass_at_k`: capability, "can it ever?" (the unbiased HumanEval estimator).
* :func:`pass_hat_k`: reliability, "does it every time?" (the tau-bench estimator); this is the
  production number and decays like ``p**k``.
* :func:`reliability`: the per-suite (and per-slice) report, with a Wilson interval on the
  success rate (and the cluster-robust one beside it), and intervals over tasks on pass@k and
  pass^k: a percentile bootstrap over tasks, or the cluster-robust standard error with tasks as
  clusters (Miller 2024), each beside the other as a cross-check where both are computed.

The interval estimators (also those the variance-aware regression gate needs: it tests the
*difference* current - baseline, DESIGN rule 7) live in the core module :mod:`ek.stats`, their
one import path: :class:`~ek.stats.Interval`, :func:`~ek.stats.wilson_interval`,
:func:`~ek.stats.newcombe_difference`, :func:`~ek.stats.difference_interval`,
:func:`~ek.stats.difference_upper_bound`, :func:`~ek.stats.bootstrap_interval`,
:func:`~ek.stats.normal_quantile`. An undefined quantity is NaN with a ``reason``.

Example:
    >>> round(pass_at_k(10, 3, 2), 4), round(pass_hat_k(10, 3, 2), 4)
    (0.5333, 0.0667)
    >>> from ek.stats import wilson_interval
    >>> w = wilson_interval(8, 10)
    >>> round(w.point, 3), round(w.low, 4), round(w.high, 4)
    (0.8, 0.4902, 0.9433)
"""

from __future__ import annotations

import dataclasses
import math
import operator
import random
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import short_repr
from ek.base import ReadOnlyDict
from ek.stats import (
    BOOTSTRAP_MAX_TASKS,
    MAX_COUNT,
    MAX_RESAMPLES,
    Interval,
    check_confidence,
    check_counts,
    check_int,
    choose_interval,
    mean,
    mean_interval,
    percentile_interval,
    ratio_interval,
    wilson_interval,
)

__all__ = [
    "MAX_K",
    "DeterministicAgentWarning",
    "ReliabilityReport",
    "ReliabilityWarning",
    "pass_at_k",
    "pass_hat_k",
    "reliability",
]

_NAN = float("nan")
#: pass^k is computed with exact integer binomials (one rounding) up to this many trials.
_EXACT_N = 10_000
#: Beyond this many factors the estimators switch to the next bounded form.
_MAX_TERMS = 100_000
#: Largest k :func:`reliability` reports (every k in ``1..k`` gets an interval).
MAX_K = 100


class ReliabilityWarning(UserWarning):
    """Something about a reliability estimate deserves the reader's attention."""


class DeterministicAgentWarning(ReliabilityWarning):
    """Every task is all-pass or all-fail: pass^k collapses to pass^1 and measures nothing."""


# --------------------------------------------------------------------------------------------
# pass@k and pass^k
# --------------------------------------------------------------------------------------------


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: the chance that at least one of k trials (drawn from n) succeeds.

    ``1 - C(n-c, k) / C(n, k)``, computed in the numerically stable product form
    ``1 - prod_{i=n-c+1}^{n} (1 - k/i)`` (Chen et al. 2021, "Evaluating Large Language Models
    Trained on Code", arXiv 2107.03374; openai/human-eval ``estimate_pass_at_k``).

    Degenerate cases: ``n < k`` is undefined and returns NaN (HumanEval's bare estimator
    returns a spurious 1.0 there; its caller skips such k, as Inspect's ``pass_at`` now returns
    NaN); ``n - c < k`` is exactly 1.0 (every k-subset contains a success).

    Args:
        n: Trials of the task (>= 0).
        c: Successful trials (0 <= c <= n).
        k: Trials per attempt (>= 1).

    Returns:
        pass@k in [0, 1], or NaN when ``n < k``.

    Example:
        >>> pass_at_k(5, 0, 1), pass_at_k(5, 5, 3), round(pass_at_k(5, 1, 1), 12)
        (0.0, 1.0, 0.2)
        >>> import math; math.isnan(pass_at_k(2, 2, 3))   # undefined: fewer trials than k
        True
    """
    n, c, k = check_counts(n, c, k)
    if n < k:  # undefined: no k-subset of n trials exists
        return _NAN
    if n - c < k:  # every k-subset contains at least one success
        return 1.0
    if c > _MAX_TERMS:  # huge n: the bounded form (a loop over k terms, or log-gamma)
        return 1.0 - _comb_ratio(n, n - c, k)
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
        if prod == 0.0:  # underflow: every further factor keeps it 0
            break
    return 1.0 - prod


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k trials (drawn without replacement from n) all succeed.

    ``C(c, k) / C(n, k)`` (Yao et al. 2024, "τ-bench", arXiv 2406.12045; sierra-research
    tau-bench ``display_metrics`` and tau2-bench ``pass_hat_k``). Computed with exact integer
    binomials and one correctly rounded division, so it is exact for n in the thousands.

    Degenerate case: ``n < k`` is undefined and returns NaN (tau2-bench raises there).

    Args:
        n: Trials of the task (>= 0).
        c: Successful trials (0 <= c <= n).
        k: Trials that must all succeed (>= 1).

    Returns:
        pass^k in [0, 1], or NaN when ``n < k``.

    Example:
        >>> pass_hat_k(4, 3, 2), pass_hat_k(4, 4, 4), pass_hat_k(4, 1, 2)
        (0.5, 1.0, 0.0)
    """
    n, c, k = check_counts(n, c, k)
    if n < k:  # undefined: no k-subset of n trials exists
        return _NAN
    if c < k:  # no k-subset of the successes exists
        return 0.0
    if n <= _EXACT_N:
        return math.comb(c, k) / math.comb(n, k)
    return _comb_ratio(n, c, k)


def _stirling_tail(x: float) -> float:
    """``lgamma(x + 1) - ((x + 0.5) * log(x) - x + log(2 pi) / 2)``: error < 1e-10 for x >= 10."""
    return 1.0 / (12.0 * x) - 1.0 / (360.0 * x**3) + 1.0 / (1260.0 * x**5)


def _log_falling(a: int, d: int) -> float:
    """``log(a! / (a - d)!)`` without the cancellation of two huge ``lgamma`` values.

    With ``b = a - d``, Stirling's series gives
    ``-(b + 1/2) log1p(-d/a) + d (log a - 1) + tail(a) - tail(b)``: every term is of the size of
    the result, so the error is a few ulps of ``d log a`` instead of ulps of ``a log a``.
    """
    b = a - d
    if b < 10:
        return math.lgamma(a + 1) - math.lgamma(b + 1)
    return (
        -(b + 0.5) * math.log1p(-d / a)
        + d * (math.log(a) - 1.0)
        + _stirling_tail(a)
        - _stirling_tail(b)
    )


def _comb_ratio(n: int, s: int, k: int) -> float:
    """``C(s, k) / C(n, k)`` for ``k <= s <= n``, in bounded time for any n up to 2**53.

    The product over the shorter of the two factorisations (``k`` factors ``(s-j)/(n-j)`` or
    ``n-s`` factors ``(n-k-j)/(n-j)``), stopped at underflow; when both have more than
    ``_MAX_TERMS`` factors, the closed form from Stirling's series (:func:`_log_falling`).
    """
    if min(k, n - s) > _MAX_TERMS:
        return min(1.0, math.exp(_log_falling(s, k) - _log_falling(n, k)))
    if k <= n - s:
        factors = ((s - j) / (n - j) for j in range(k))
    else:
        factors = ((n - k - j) / (n - j) for j in range(n - s))
    prod = 1.0
    for f in factors:
        prod *= f
        if prod == 0.0:  # underflow: every further factor keeps it 0
            break
    return prod


# --------------------------------------------------------------------------------------------
# ReliabilityReport
# --------------------------------------------------------------------------------------------

_UNEQUAL_POLICY = (
    "tau2-bench: each task's pass@k/pass^k uses its own trial count n; k runs up to the "
    "smallest per-task n (a larger requested k is lowered, with a warning); tasks with no "
    "trials are left out (with a warning). tau-bench instead divides by the global number of "
    "trial ids, counting missing trials as failures."
)


@dataclass(frozen=True)
class ReliabilityReport:
    """Reliability of an agent over a suite: success rate, pass@k and pass^k, per slice.

    Attributes:
        counts: ``task_id -> (n trials, c successes)`` of the tasks used.
        k: The largest k reported (every k in ``1..k`` is in ``pass_at_k``/``pass_hat_k``).
        success_rate: Pooled successes / trials with a Wilson interval (treats trials as
            independent; the per-task mean ``pass_hat_k[1]`` weights tasks equally instead).
        pass_at_k: ``k -> Interval``: mean over tasks of :func:`pass_at_k`, with an interval by
            the method :attr:`interval` names.
        pass_hat_k: ``k -> Interval``: mean over tasks of :func:`pass_hat_k`, likewise.
        slices: ``slice name -> ReliabilityReport`` for that subset of tasks.
        warnings: Every warning raised while building the report.
        confidence: Interval coverage.
        n_resamples: Bootstrap replicates.
        seed: Bootstrap seed (recorded so the intervals reproduce).
        policy: How unequal trial counts were handled.
        interval: The method of the pass@k / pass^k intervals: ``"bootstrap"`` (percentile
            bootstrap over tasks) or ``"clustered"`` (cluster-robust standard error, tasks as
            clusters).
        success_rate_clustered: The pooled success rate with the cluster-robust interval
            (tasks as clusters, :func:`~ek.stats.ratio_interval`): beside Wilson's, which
            assumes the trials are independent.
        cross_check: The other method's intervals, ``{"pass_at_k": {k: Interval},
            "pass_hat_k": {k: Interval}}``, when computed (the clustered ones always are; the
            bootstrap when the suite has at most :data:`~ek.stats.BOOTSTRAP_MAX_TASKS` tasks,
            for its slices too, or on request); empty otherwise.
    """

    counts: Mapping[str, tuple[int, int]]
    k: int
    success_rate: Interval
    pass_at_k: Mapping[int, Interval]
    pass_hat_k: Mapping[int, Interval]
    slices: Mapping[str, ReliabilityReport] = field(default_factory=ReadOnlyDict)
    warnings: tuple[str, ...] = ()
    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0
    policy: str = _UNEQUAL_POLICY
    interval: str = "bootstrap"
    success_rate_clustered: Interval | None = None
    cross_check: Mapping[str, Mapping[int, Interval]] = field(default_factory=ReadOnlyDict)

    @property
    def n_tasks(self) -> int:
        """Number of tasks in the report."""
        return len(self.counts)

    @property
    def n_trials(self) -> int:
        """Total trials over all tasks."""
        return sum(n for n, _ in self.counts.values())

    @property
    def n_successes(self) -> int:
        """Total successful trials over all tasks."""
        return sum(c for _, c in self.counts.values())

    @property
    def deterministic(self) -> bool:
        """True when every task is all-pass or all-fail (pass^k measures nothing then)."""
        return all(c in (0, n) for n, c in self.counts.values())

    def task_pass_hat_k(self, k: int) -> dict[str, float]:
        """Per-task pass^k (input to :func:`difference_upper_bound`); NaN where n < k."""
        return {t: pass_hat_k(n, c, k) for t, (n, c) in self.counts.items()}

    def task_pass_at_k(self, k: int) -> dict[str, float]:
        """Per-task pass@k; NaN where n < k."""
        return {t: pass_at_k(n, c, k) for t, (n, c) in self.counts.items()}

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON-ready dict (integer k keys become strings, NaN becomes ``None``)."""
        clustered = self.success_rate_clustered
        return {
            "n_tasks": self.n_tasks,
            "n_trials": self.n_trials,
            "n_successes": self.n_successes,
            "k": self.k,
            "success_rate": self.success_rate.to_dict(),
            "success_rate_clustered": clustered.to_dict() if clustered is not None else None,
            "interval": self.interval,
            "pass_at_k": _curve_dict(self.pass_at_k),
            "pass_hat_k": _curve_dict(self.pass_hat_k),
            "cross_check": {name: _curve_dict(c) for name, c in self.cross_check.items()},
            "counts": {t: [n, c] for t, (n, c) in self.counts.items()},
            "slices": {name: r.to_dict() for name, r in self.slices.items()},
            "warnings": list(self.warnings),
            "deterministic": self.deterministic,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "policy": self.policy,
        }


def _curve_dict(curve: Mapping[int, Interval]) -> dict[str, Any]:
    return {str(k): iv.to_dict() for k, iv in curve.items()}


def _check_counts(counts: Any) -> dict[str, tuple[int, int]]:
    if not isinstance(counts, Mapping):
        raise TypeError(f"counts must be a mapping task_id -> (n, c), got {type(counts).__name__}")
    out: dict[str, tuple[int, int]] = {}
    for task, pair in counts.items():
        if not isinstance(task, str):
            raise TypeError(f"counts keys must be task-id strings, got {short_repr(task)}")
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise TypeError(
                f"counts[{short_repr(task)}] must be a pair (n trials, c successes), got {short_repr(pair)}"
            )
        n = check_int(f"counts[{short_repr(task)}] n", pair[0], 0, MAX_COUNT)
        c = check_int(f"counts[{short_repr(task)}] c", pair[1], 0, MAX_COUNT)
        if c > n:
            raise ValueError(f"counts[{short_repr(task)}]: successes c={c} must be <= trials n={n}")
        out[task] = (n, c)
    return out


@dataclass(frozen=True)
class _Options:
    """The interval settings of one :func:`reliability` call (checked)."""

    confidence: float
    n_resamples: int
    seed: int
    method: str  # "bootstrap" or "clustered", chosen once for the suite and its slices
    bootstrap: bool  # computed (as the method or beside it): asked for, or a small suite


#: The two per-task estimators a report gives a curve of (over k = 1 .. k).
_CURVES = (("pass_at_k", pass_at_k), ("pass_hat_k", pass_hat_k))

#: One curve point: (curve name, k, each task's estimate by the index of its distinct (n, c)).
_Series = tuple[str, int, list[float]]


def _series(distinct: Sequence[tuple[int, int]], k: int) -> list[_Series]:
    """Every curve point's estimates, computed once per distinct ``(n, c)`` (tasks with the
    same counts have the same estimate)."""
    return [
        (name, j, [fn(n, c, j) for n, c in distinct])
        for name, fn in _CURVES
        for j in range(1, k + 1)
    ]


def _clustered_curves(
    classes: Sequence[int], series: Sequence[_Series], confidence: float
) -> dict[str, dict[int, Interval]]:
    """Each curve point's mean over tasks with its clustered interval
    (:func:`~ek.stats.mean_interval`: ``sd / sqrt(m)`` of the per-task estimates, Student's t
    with ``m − 1`` degrees of freedom). ``classes``: each task's distinct-count index."""
    out: dict[str, dict[int, Interval]] = {name: {} for name, _ in _CURVES}
    for name, j, values in series:
        out[name][j] = mean_interval([values[i] for i in classes], confidence, bounds=(0.0, 1.0))
    return out


def _bootstrap_curves(
    classes: Sequence[int],
    series: Sequence[_Series],
    confidence: float,
    n_resamples: int,
    seed: int,
) -> dict[str, dict[int, Interval]]:
    """Each curve point's percentile bootstrap interval over tasks (Efron & Tibshirani 1993,
    ch. 13): ``n_resamples`` times, ``random.Random(seed).choices`` draws ``m`` tasks with
    replacement (``classes``: each task's distinct-count index, the tasks in canonical order),
    and every curve point is the mean of the drawn tasks' estimates (one resample shared by
    every k, so the curves stay coherent). The quantiles are the expanded percentile interval's
    for ``m`` tasks (Hesterberg 2015, :func:`~ek.stats.expanded_tail`: the small-sample
    correction). Linear in tasks per replicate: the draws are counted by distinct ``(n, c)``,
    and each mean is a sum over the distinct counts."""
    m, n_distinct = len(classes), len(series[0][2])
    rng = random.Random(seed)
    reps: list[list[float]] = [[] for _ in series]
    for _ in range(n_resamples):
        drawn = Counter(rng.choices(classes, k=m))
        times = [drawn[i] for i in range(n_distinct)]  # how often each (n, c) was drawn
        for (_, _, values), out in zip(series, reps):
            out.append(math.fsum(map(operator.mul, times, values)) / m)
    method = f"percentile-bootstrap-over-tasks(expanded, n_resamples={n_resamples}, seed={seed})"
    reason = "one task: the interval is degenerate" if m == 1 else ""
    curves: dict[str, dict[int, Interval]] = {name: {} for name, _ in _CURVES}
    for (name, j, values), r in zip(series, reps):
        point = mean([values[i] for i in classes])
        curves[name][j] = percentile_interval(point, r, confidence, method, reason, n=m)
    return curves


def _build(
    counts: Mapping[str, tuple[int, int]],
    k: int,
    options: _Options,
    notes: Sequence[str],
) -> ReliabilityReport:
    """One report of ``counts`` (the whole suite, or a slice), intervals by ``options.method``.

    Every interval is a function of the trials, not of their order: the tasks are taken in
    one canonical order, sorted by id (an Inspect log lists them in completion order).
    """
    pairs = [counts[t] for t in sorted(counts)]
    distinct = sorted(set(pairs))
    index = {p: i for i, p in enumerate(distinct)}
    classes = [index[p] for p in pairs]
    series = _series(distinct, k)
    curves = {"clustered": _clustered_curves(classes, series, options.confidence)}
    if options.bootstrap:
        curves["bootstrap"] = _bootstrap_curves(
            classes, series, options.confidence, options.n_resamples, options.seed
        )
    main = curves.pop(options.method)
    other = next(iter(curves.values()), {})
    return ReliabilityReport(
        counts=ReadOnlyDict(counts),
        k=k,
        success_rate=wilson_interval(
            sum(c for _, c in pairs), sum(n for n, _ in pairs), options.confidence
        ),
        pass_at_k=ReadOnlyDict(main["pass_at_k"]),
        pass_hat_k=ReadOnlyDict(main["pass_hat_k"]),
        warnings=tuple(notes),
        confidence=options.confidence,
        n_resamples=options.n_resamples,
        seed=options.seed,
        interval=options.method,
        success_rate_clustered=ratio_interval(
            [c for _, c in pairs], [n for n, _ in pairs], options.confidence, bounds=(0.0, 1.0)
        ),
        cross_check=ReadOnlyDict({name: ReadOnlyDict(c) for name, c in other.items()}),
    )


def _resolve_k(
    data: dict[str, tuple[int, int]],
    k: Any,
    min_n: int,
    raised: list[tuple[str, type[Warning]]],
) -> int:
    """The k to report: given (1 to MAX_K) or the smallest n, lowered to the smallest n."""
    if k is None:
        if min_n > MAX_K:
            raise ValueError(
                f"k defaults to the smallest per-task trial count {min_n}, over the limit "
                f"MAX_K={MAX_K}: pass k (1 to {MAX_K}) explicitly"
            )
        return min_n
    k = check_int("k", k, 1, MAX_K)
    if k > min_n:
        short = sorted(t for t, (n, _) in data.items() if n < k)
        msg = (
            f"k={k} lowered to {min_n}, the smallest per-task trial count ({len(short)} "
            f"task(s) have fewer than {k} trials: {short[:10]}) (tau2-bench policy)"
        )
        raised.append((msg, ReliabilityWarning))
        k = min_n
    return int(k)


def _notes(data: Mapping[str, tuple[int, int]], k: int) -> list[tuple[str, type[Warning]]]:
    """The warnings about unequal trial counts and a deterministic agent."""
    raised: list[tuple[str, type[Warning]]] = []
    ns = [n for n, _ in data.values()]
    if len(set(ns)) > 1:
        msg = (
            f"unequal trial counts (min {min(ns)}, max {max(ns)}): "
            "each task uses its own n (tau2-bench policy)"
        )
        raised.append((msg, ReliabilityWarning))
    if k >= 2 and all(c in (0, n) for n, c in data.values()):
        msg = (
            "every task is all-pass or all-fail (a deterministic agent?): pass^k equals pass^1 "
            "for every k and measures nothing about run-to-run reliability"
        )
        raised.append((msg, DeterministicAgentWarning))
    return raised


def _with_trials(
    data: dict[str, tuple[int, int]], raised: list[tuple[str, type[Warning]]]
) -> dict[str, tuple[int, int]]:
    """The tasks with at least one trial (the others left out with a warning)."""
    empty = sorted(t for t, (n, _) in data.items() if n == 0)
    if empty:
        raised.append(
            (f"{len(empty)} task(s) with no trials left out: {empty[:10]}", ReliabilityWarning)
        )
    out = {t: nc for t, nc in data.items() if nc[0] > 0}
    if not out:
        raise ValueError(
            "reliability() needs at least one task with at least one trial, got "
            f"{len(data)} task(s) and 0 trials"
        )
    return out


def _slice_reports(
    slices: Any,
    counts: Mapping[str, Any],
    data: Mapping[str, tuple[int, int]],
    k: int,
    options: _Options,
) -> dict[str, ReliabilityReport]:
    """Each slice's report (same k, seed and method as the suite's)."""
    if not isinstance(slices, Mapping):
        raise TypeError(f"slices must be a mapping name -> task ids, got {type(slices).__name__}")
    subs: dict[str, ReliabilityReport] = {}
    for name, ids in slices.items():
        if isinstance(ids, str):
            raise TypeError(f"slices[{short_repr(name)}] must be a sequence of task ids, not a str")
        unknown = sorted(str(t) for t in ids if t not in counts)
        if unknown:
            raise ValueError(f"slices[{short_repr(name)}] names unknown task(s) {unknown[:10]}")
        sub = {t: data[t] for t in ids if t in data}
        if not sub:
            raise ValueError(f"slices[{short_repr(name)}] has no task with trials")
        sub_notes: list[str] = []
        if k >= 2 and all(c in (0, n) for n, c in sub.values()):
            sub_notes.append(f"slice {short_repr(name)}: every task is all-pass or all-fail")
        subs[str(name)] = _build(sub, k, options, sub_notes)
    return subs


def reliability(
    counts: Mapping[str, tuple[int, int]],
    k: int | None = None,
    *,
    slices: Mapping[str, Sequence[str]] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    interval: str = "auto",
) -> ReliabilityReport:
    """Build a :class:`ReliabilityReport` from per-task ``(n trials, c successes)`` counts.

    pass@k and pass^k are the mean over tasks of the per-task estimators (tau-bench,
    arXiv 2406.12045; HumanEval, arXiv 2107.03374). Their intervals treat **tasks as the unit**
    (the trials of a task are correlated), by one of two methods:

    * ``"bootstrap"``: the percentile bootstrap over tasks (``random.Random(seed).choices``
      over the tasks sorted by id, ``n_resamples`` times; :func:`~ek.stats.percentile_interval`
      with Hesterberg's expansion for few tasks, the standard small-sample correction);
    * ``"clustered"``: the cluster-robust standard error with tasks as clusters (Miller 2024,
      arXiv 2411.00640): ``sd / sqrt(m)`` of the per-task estimates, Student's t with
      ``m − 1`` degrees of freedom (:func:`~ek.stats.mean_interval`), in O(tasks);
    * ``"auto"`` (default): the bootstrap up to :data:`~ek.stats.BOOTSTRAP_MAX_TASKS` (1,000)
      tasks, the clustered standard error above, where resampling in pure Python is slow.

    The other method is reported beside as a cross-check (:attr:`ReliabilityReport.cross_check`;
    the bootstrap only where it is cheap or requested). The pooled success rate gets Wilson's
    interval and, beside it, the clustered one (:attr:`ReliabilityReport.success_rate_clustered`).
    Every interval is a function of the trials, not of the order the tasks are listed in (the
    tasks are resampled in sorted order; before ek 0.x, issue 31, the bootstrap followed the
    order given, so the same trials listed in another order, e.g. an Inspect log's completion
    order, gave other bounds).

    **Unequal trial counts** follow tau2-bench (``get_metrics_df``): each task uses its own n,
    and ``k`` defaults to (and is capped at, with a warning) the smallest per-task n, so every
    reported k is defined for every task. Tasks with zero trials are left out with a warning.

    **Deterministic agents**: when k >= 2 and every task is all-pass or all-fail, pass^k equals
    pass^1 for every k and says nothing about reliability; a
    :class:`DeterministicAgentWarning` is issued and recorded in ``report.warnings``.

    Args:
        counts: ``task_id -> (n, c)``.
        k: Largest k to report, at most :data:`MAX_K` (100); defaults to the smallest
            per-task n (a ValueError asks for an explicit k when that is over the limit).
        slices: ``slice name -> task ids``; each slice gets its own report (same k, seed and
            interval method).
        confidence: Interval coverage in (0, 1).
        n_resamples: Bootstrap replicates, 1 to :data:`~ek.stats.MAX_RESAMPLES` (1,000,000).
        seed: Bootstrap seed (recorded in the report).
        interval: ``"auto"``, ``"bootstrap"`` or ``"clustered"`` (see above).

    Raises:
        ValueError: no task has a trial, bad counts (each at most 2**53), ``k``,
            ``n_resamples`` or ``interval`` out of range, or a slice names an unknown task.

    Example:
        >>> r = reliability({"a": (4, 4), "b": (4, 3), "c": (4, 0), "d": (4, 2)})
        >>> r.k, r.pass_hat_k[1].point, round(r.pass_hat_k[2].point, 4), r.interval
        (4, 0.5625, 0.4167, 'bootstrap')
        >>> round(r.pass_at_k[2].point, 4), round(r.success_rate.low, 4)
        (0.7083, 0.3318)
        >>> iv = r.cross_check["pass_hat_k"][1]   # the clustered interval beside the bootstrap
        >>> iv.method, round(iv.low, 4), round(iv.high, 4)
        ('clustered-t(df=3)', 0.0, 1.0)
    """
    data = _check_counts(counts)
    confidence = check_confidence(confidence)
    n_resamples = check_int("n_resamples", n_resamples, 1, MAX_RESAMPLES)
    seed = check_int("seed", seed, -(2**63))
    raised: list[tuple[str, type[Warning]]] = []
    data = _with_trials(data, raised)
    min_n = min(n for n, _ in data.values())
    k = _resolve_k(data, k, min_n, raised)
    raised += _notes(data, k)
    method = choose_interval(interval, len(data))
    small = (
        len(data) <= BOOTSTRAP_MAX_TASKS
    )  # then the bootstrap is cheap: beside, if not the method
    options = _Options(confidence, n_resamples, seed, method, method == "bootstrap" or small)
    for msg, category in raised:
        warnings.warn(msg, category, stacklevel=2)
    report = _build(data, k, options, [msg for msg, _ in raised])
    if slices:
        subs = _slice_reports(slices, counts, data, k, options)
        report = dataclasses.replace(report, slices=ReadOnlyDict(subs))
    return report
