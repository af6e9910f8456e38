"""Reliability estimators and intervals: pass@k, pass^k, Wilson, Newcombe, bootstrap.

pass@k and pass^k are **not** Metrics (DESIGN rule 1): they are cross-task quantities over k
trials of the same task, so they ship as pure functions and the harness owns the trial grouping,
handing per-task ``(n trials, c successes)`` counts to :func:`reliability`.

* :func:`pass_at_k`: capability, "can it ever?" (the unbiased HumanEval estimator).
* :func:`pass_hat_k`: reliability, "does it every time?" (the tau-bench estimator); this is the
  production number and decays like ``p**k``.
* :func:`wilson_interval`, :func:`newcombe_difference`, :func:`difference_interval`,
  :func:`difference_upper_bound`, :func:`bootstrap_interval`: the intervals the variance-aware
  regression gate needs (it tests the *difference* current - baseline, DESIGN rule 7).

Every interval is an :class:`Interval`; an undefined quantity is NaN with a ``reason``.

Example:
    >>> round(pass_at_k(10, 3, 2), 4), round(pass_hat_k(10, 3, 2), 4)
    (0.5333, 0.0667)
    >>> w = wilson_interval(8, 10)
    >>> round(w.point, 3), round(w.low, 4), round(w.high, 4)
    (0.8, 0.4902, 0.9433)
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = [
    "DeterministicAgentWarning",
    "Interval",
    "ReliabilityReport",
    "ReliabilityWarning",
    "bootstrap_interval",
    "difference_interval",
    "difference_upper_bound",
    "newcombe_difference",
    "normal_quantile",
    "pass_at_k",
    "pass_hat_k",
    "reliability",
    "wilson_interval",
]

_NAN = float("nan")


class ReliabilityWarning(UserWarning):
    """Something about a reliability estimate deserves the reader's attention."""


class DeterministicAgentWarning(ReliabilityWarning):
    """Every task is all-pass or all-fail: pass^k collapses to pass^1 and measures nothing."""


# --------------------------------------------------------------------------------------------
# Interval
# --------------------------------------------------------------------------------------------


def _nan_to_none(x: float) -> float | None:
    return None if math.isnan(x) else x


def _none_to_nan(x: Any) -> float:
    return _NAN if x is None else float(x)


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval.

    Attributes:
        point: The estimate (NaN when undefined; ``reason`` says why).
        low: Lower end of the interval.
        high: Upper end of the interval.
        confidence: The nominal coverage, e.g. ``0.95``.
        method: How it was computed (``"wilson"``, ``"newcombe-hybrid-score"``, ...).
        reason: Why a field is NaN or the interval is degenerate (``""`` otherwise).

    Example:
        >>> iv = Interval(0.5, 0.2, 0.8, 0.95, "demo")
        >>> iv.width, iv.contains(0.3)
        (0.6000000000000001, True)
        >>> Interval.from_dict(iv.to_dict()) == iv
        True
    """

    point: float
    low: float
    high: float
    confidence: float
    method: str
    reason: str = ""

    def __post_init__(self) -> None:
        for name in ("point", "low", "high", "confidence"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(
                    f"Interval.{name} must be a float, got {type(v).__name__}: {v!r:.100}"
                )
            object.__setattr__(self, name, float(v))
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"Interval.confidence must be in (0, 1), got {self.confidence!r}")
        if not isinstance(self.method, str) or not self.method:
            raise ValueError(f"Interval.method must be a non-empty str, got {self.method!r}")
        if not isinstance(self.reason, str):
            raise TypeError(f"Interval.reason must be a str, got {type(self.reason).__name__}")
        if self.low > self.high:  # NaN compares False, so NaN bounds are allowed
            raise ValueError(f"Interval.low must be <= high, got low={self.low}, high={self.high}")

    @property
    def width(self) -> float:
        """``high - low`` (NaN when a bound is undefined)."""
        return self.high - self.low

    @property
    def is_defined(self) -> bool:
        """True when the point and both bounds are numbers (not NaN)."""
        return not any(math.isnan(v) for v in (self.point, self.low, self.high))

    def contains(self, value: float) -> bool:
        """True when ``low <= value <= high``."""
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON-ready dict; NaN becomes ``None`` (see :meth:`from_dict`)."""
        return {
            "point": _nan_to_none(self.point),
            "low": _nan_to_none(self.low),
            "high": _nan_to_none(self.high),
            "confidence": self.confidence,
            "method": self.method,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Interval:
        """Rebuild an interval from :meth:`to_dict` output (``None`` becomes NaN)."""
        if not isinstance(data, Mapping):
            raise TypeError(f"Interval.from_dict expects a mapping, got {type(data).__name__}")
        missing = [k for k in ("point", "low", "high", "confidence", "method") if k not in data]
        if missing:
            raise ValueError(f"Interval.from_dict: missing field(s) {missing}")
        return cls(
            point=_none_to_nan(data["point"]),
            low=_none_to_nan(data["low"]),
            high=_none_to_nan(data["high"]),
            confidence=float(data["confidence"]),
            method=str(data["method"]),
            reason=str(data.get("reason", "")),
        )


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _int(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(
                f"{name} must be an int >= {minimum}, got {type(value).__name__}: {value!r:.100}"
            )
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _counts(n: Any, c: Any, k: Any | None = None) -> tuple[int, int, int]:
    n_ = _int("n", n)
    c_ = _int("c", c)
    if c_ > n_:
        raise ValueError(f"c (successes) must be <= n (trials), got c={c_}, n={n_}")
    k_ = 1 if k is None else _int("k", k, 1)
    return n_, c_, k_


def _confidence(confidence: Any) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        raise TypeError(f"confidence must be a float in (0, 1), got {confidence!r:.100}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def _floats(name: str, values: Any) -> list[float]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, tuple, list)):
        try:
            values = list(values)
        except TypeError:
            raise TypeError(
                f"{name} must be a sequence of numbers, got {type(values).__name__}"
            ) from None
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"{name}[{i}] must be a number, got {type(v).__name__}: {v!r:.100}")
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{name}[{i}] must be finite, got {v!r}")
        out.append(f)
    return out


# --------------------------------------------------------------------------------------------
# the normal quantile (no scipy in the core)
# --------------------------------------------------------------------------------------------

# Rational approximation of P. J. Acklam (2003), |rel. error| < 1.15e-9, refined below by two
# Halley steps on math.erfc to full double precision.
_A = (-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.3577518672690,
      -30.66479806614716, 2.506628277459239)  # fmt: skip
_B = (-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972,
      -13.28068155288572)  # fmt: skip
_C = (-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734,
      4.374664141464968, 2.938163982698783)  # fmt: skip
_D = (0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416)


def normal_quantile(p: float) -> float:
    """The standard normal quantile Φ⁻¹(p) to double precision (no SciPy needed).

    Acklam's rational approximation, polished with two Halley steps on ``math.erfc``.

    Args:
        p: A probability in (0, 1).

    Returns:
        z with Φ(z) = p.

    Example:
        >>> round(normal_quantile(0.975), 12)
        1.95996398454
    """
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 < p < 1.0:
        raise ValueError(f"p must be a probability in (0, 1), got {p!r}")
    p_low = 0.02425
    if p < p_low:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    elif p <= 1.0 - p_low:
        q = p - 0.5
        r = q * q
        x = (
            (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5])
            * q
            / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
        )
    else:
        q = math.sqrt(-2.0 * math.log1p(-p))
        x = -(((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    for _ in range(2):  # Halley refinement
        e = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
        u = e * math.sqrt(2.0 * math.pi) * math.exp(x * x / 2.0)
        x = x - u / (1.0 + x * u / 2.0)
    return x


def _z(confidence: float) -> float:
    # two-sided: z = Φ⁻¹(1 − α/2), α = 1 − confidence (as statsmodels does)
    return normal_quantile(1.0 - (1.0 - confidence) / 2.0)


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
    n, c, k = _counts(n, c, k)
    if n < k:  # undefined: no k-subset of n trials exists
        return _NAN
    if n - c < k:  # every k-subset contains at least one success
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
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
    n, c, k = _counts(n, c, k)
    if n < k:  # undefined: no k-subset of n trials exists
        return _NAN
    if c < k:  # no k-subset of the successes exists
        return 0.0
    return math.comb(c, k) / math.comb(n, k)


# --------------------------------------------------------------------------------------------
# intervals
# --------------------------------------------------------------------------------------------


def _wilson_bounds(successes: int, n: int, z: float) -> tuple[float, float]:
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, center - half)  # exact at the boundary
    high = 1.0 if successes == n else min(1.0, center + half)
    return low, high


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion.

    Wilson (1927), "Probable inference, the law of succession, and statistical inference",
    JASA 22:209-212; identical to statsmodels ``proportion_confint(method="wilson")`` (clipped to
    [0, 1]). Unlike the Wald interval it never collapses to zero width at 0 or n successes.

    With ``n == 0`` the proportion is undefined: the point is NaN and the bounds are the
    maximally uncertain [0, 1] (a gate must reject empty runs itself; see DESIGN rule 7).

    Args:
        successes: Successful trials (0 <= successes <= n).
        n: Trials.
        confidence: Two-sided coverage in (0, 1).

    Example:
        >>> iv = wilson_interval(0, 10)
        >>> iv.point, iv.low, round(iv.high, 6)
        (0.0, 0.0, 0.277533)
    """
    n, successes, _ = _counts(n, successes)
    confidence = _confidence(confidence)
    if n == 0:
        return Interval(_NAN, 0.0, 1.0, confidence, "wilson", "no trials: proportion undefined")
    low, high = _wilson_bounds(successes, n, _z(confidence))
    return Interval(successes / n, low, high, confidence, "wilson")


def newcombe_difference(c1: int, n1: int, c2: int, n2: int, confidence: float = 0.95) -> Interval:
    """Newcombe's hybrid score interval (method 10) for ``p1 - p2`` from raw counts.

    With Wilson intervals ``(l1, u1)`` for ``p1 = c1/n1`` and ``(l2, u2)`` for ``p2 = c2/n2``
    and ``d = p1 - p2``: ``low = d - sqrt((p1-l1)^2 + (u2-p2)^2)``,
    ``high = d + sqrt((p2-l2)^2 + (u1-p1)^2)``. No continuity correction, no clipping
    (the bounds stay in [-1, 1] by construction). Newcombe (1998), "Interval estimation for the
    difference between independent proportions", Statistics in Medicine 17:873-890; identical
    to statsmodels ``confint_proportions_2indep(method="newcomb", compare="diff")``.

    The first sample is the *current* run and the second the *baseline*, so a regression shows
    as ``high < -tolerance``. With ``n1 == 0`` or ``n2 == 0`` the point is NaN and the bounds
    are the maximally uncertain [-1, 1].

    Args:
        c1: Successes of the current run.
        n1: Trials of the current run.
        c2: Successes of the baseline.
        n2: Trials of the baseline.
        confidence: Two-sided coverage in (0, 1).

    Example:
        >>> iv = newcombe_difference(56, 70, 48, 80)   # Newcombe (1998) Table II, example (a)
        >>> round(iv.point, 4), round(iv.low, 4), round(iv.high, 4)
        (0.2, 0.0524, 0.3339)
    """
    n1, c1, _ = _counts(n1, c1)
    n2, c2, _ = _counts(n2, c2)
    confidence = _confidence(confidence)
    method = "newcombe-hybrid-score"
    if n1 == 0 or n2 == 0:
        which = "current" if n1 == 0 else "baseline"
        return Interval(_NAN, -1.0, 1.0, confidence, method, f"{which} has no trials")
    z = _z(confidence)
    p1, p2 = c1 / n1, c2 / n2
    l1, u1 = _wilson_bounds(c1, n1, z)
    l2, u2 = _wilson_bounds(c2, n2, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    return Interval(d, max(-1.0, low), min(1.0, high), confidence, method)


def _mean_and_var(xs: Sequence[float]) -> tuple[float, float]:
    m = math.fsum(xs) / len(xs)
    if len(xs) < 2:
        return m, _NAN
    return m, math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def difference_interval(
    current: Sequence[float], baseline: Sequence[float], confidence: float = 0.95
) -> Interval:
    """Interval for ``mean(current) - mean(baseline)`` of per-task estimators (independent runs).

    For a mean of per-task estimators (pass^k per task, a per-task score) Newcombe does not
    apply, so the two runs' standard errors are combined:
    ``d ± z * sqrt(s1^2/n1 + s2^2/n2)`` with sample variances (ddof 1), the large-sample
    (Welch-type, normal-quantile) two-sample interval for a difference of means (e.g. Casella &
    Berger, "Statistical Inference", 2nd ed., §10.4). When every value lies in [0, 1] the
    difference lies in [-1, 1] and the bounds are clipped to it.

    Degenerate cases: an empty side gives a NaN point; a side with one task has no variance
    estimate, so the bounds are the maximally uncertain [-1, 1] for [0, 1] data (NaN otherwise),
    with a reason.

    Args:
        current: Per-task values of the current run.
        baseline: Per-task values of the baseline run.
        confidence: Two-sided coverage in (0, 1).

    Example:
        >>> iv = difference_interval([1, 1, 0, 1], [1, 0, 0, 1])
        >>> round(iv.point, 4), round(iv.low, 4), round(iv.high, 4)
        (0.25, -0.4985, 0.9985)
    """
    cur = _floats("current", current)
    base = _floats("baseline", baseline)
    confidence = _confidence(confidence)
    method = "difference-of-means-normal"
    unit = all(0.0 <= v <= 1.0 for v in cur + base)
    lo_default, hi_default = (-1.0, 1.0) if unit else (_NAN, _NAN)
    if not cur or not base:
        which = "current" if not cur else "baseline"
        return Interval(_NAN, lo_default, hi_default, confidence, method, f"{which} is empty")
    m1, v1 = _mean_and_var(cur)
    m2, v2 = _mean_and_var(base)
    d = m1 - m2
    if math.isnan(v1) or math.isnan(v2):
        which = "current" if math.isnan(v1) else "baseline"
        return Interval(
            d,
            lo_default,
            hi_default,
            confidence,
            method,
            f"{which} has one task: no variance estimate, bounds maximally uncertain",
        )
    half = _z(confidence) * math.sqrt(v1 / len(cur) + v2 / len(base))
    low, high = d - half, d + half
    if unit:
        low, high = max(-1.0, low), min(1.0, high)
    return Interval(d, low, high, confidence, method)


def difference_upper_bound(
    current: Sequence[float], baseline: Sequence[float], confidence: float = 0.95
) -> float:
    """The upper end of :func:`difference_interval` (the gate's regression test statistic).

    A regression is declared iff this is below ``-tolerance``: the change is confidently
    negative with both runs' uncertainty folded in.

    Example:
        >>> round(difference_upper_bound([0, 0, 1, 0], [1, 1, 1, 0]), 4)
        0.193
    """
    return difference_interval(current, baseline, confidence).high


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    # linear interpolation between order statistics (numpy's default "linear" method)
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    frac = pos - lo
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * frac


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def _percentile_interval(
    point: float, replicates: list[float], confidence: float, method: str, reason: str = ""
) -> Interval:
    reps = sorted(r for r in replicates if not math.isnan(r))
    if not reps:
        return Interval(point, _NAN, _NAN, confidence, method, reason or "no defined replicate")
    alpha = 1.0 - confidence
    low = _quantile(reps, alpha / 2.0)
    high = _quantile(reps, 1.0 - alpha / 2.0)
    if not math.isnan(point):
        # a percentile interval can exclude the point for a skewed statistic; widen to keep it
        low, high = min(low, point), max(high, point)
    return Interval(point, low, high, confidence, method, reason)


def bootstrap_interval(
    values: Sequence[float],
    statistic: Callable[[Sequence[float]], float] = _mean,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """Seeded percentile bootstrap interval for ``statistic(values)``.

    Resamples ``values`` with replacement ``n_resamples`` times with ``random.Random(seed)``
    (so the result reproduces bit for bit for a given seed; record the seed) and takes the
    ``(1-confidence)/2`` and ``(1+confidence)/2`` quantiles of the replicates (linear
    interpolation). Efron & Tibshirani (1993), "An Introduction to the Bootstrap", ch. 13.
    The interval is widened, if needed, to contain the point estimate.

    Args:
        values: The sample (finite numbers), e.g. per-task pass^k values.
        statistic: Maps a sample to a number; defaults to the mean.
        confidence: Two-sided coverage in (0, 1).
        n_resamples: Bootstrap replicates (>= 1).
        seed: Seed of the resampling generator.

    Example:
        >>> iv = bootstrap_interval([0.0, 0.5, 1.0, 1.0], seed=1)
        >>> iv.point, iv.low <= iv.point <= iv.high, iv.method
        (0.625, True, 'percentile-bootstrap(n_resamples=2000, seed=1)')
    """
    xs = _floats("values", values)
    confidence = _confidence(confidence)
    n_resamples = _int("n_resamples", n_resamples, 1)
    seed = _int("seed", seed, -(2**63))
    method = f"percentile-bootstrap(n_resamples={n_resamples}, seed={seed})"
    if not xs:
        return Interval(_NAN, _NAN, _NAN, confidence, method, "no values")
    point = float(statistic(xs))
    rng = random.Random(seed)
    reps = [float(statistic(rng.choices(xs, k=len(xs)))) for _ in range(n_resamples)]
    reason = "one value: the interval is degenerate" if len(xs) == 1 else ""
    return _percentile_interval(point, reps, confidence, method, reason)


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
        pass_at_k: ``k -> Interval``: mean over tasks of :func:`pass_at_k`, bootstrap over tasks.
        pass_hat_k: ``k -> Interval``: mean over tasks of :func:`pass_hat_k`, bootstrap over tasks.
        slices: ``slice name -> ReliabilityReport`` for that subset of tasks.
        warnings: Every warning raised while building the report.
        confidence: Interval coverage.
        n_resamples: Bootstrap replicates.
        seed: Bootstrap seed (recorded so the intervals reproduce).
        policy: How unequal trial counts were handled.
    """

    counts: Mapping[str, tuple[int, int]]
    k: int
    success_rate: Interval
    pass_at_k: Mapping[int, Interval]
    pass_hat_k: Mapping[int, Interval]
    slices: Mapping[str, ReliabilityReport] = field(default_factory=lambda: MappingProxyType({}))
    warnings: tuple[str, ...] = ()
    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0
    policy: str = _UNEQUAL_POLICY

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
        return {
            "n_tasks": self.n_tasks,
            "n_trials": self.n_trials,
            "n_successes": self.n_successes,
            "k": self.k,
            "success_rate": self.success_rate.to_dict(),
            "pass_at_k": {str(k): iv.to_dict() for k, iv in self.pass_at_k.items()},
            "pass_hat_k": {str(k): iv.to_dict() for k, iv in self.pass_hat_k.items()},
            "counts": {t: [n, c] for t, (n, c) in self.counts.items()},
            "slices": {name: r.to_dict() for name, r in self.slices.items()},
            "warnings": list(self.warnings),
            "deterministic": self.deterministic,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "policy": self.policy,
        }


def _check_counts(counts: Any) -> dict[str, tuple[int, int]]:
    if not isinstance(counts, Mapping):
        raise TypeError(f"counts must be a mapping task_id -> (n, c), got {type(counts).__name__}")
    out: dict[str, tuple[int, int]] = {}
    for task, pair in counts.items():
        if not isinstance(task, str):
            raise TypeError(f"counts keys must be task-id strings, got {task!r}")
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise TypeError(
                f"counts[{task!r}] must be a pair (n trials, c successes), got {pair!r}"
            )
        n = _int(f"counts[{task!r}] n", pair[0])
        c = _int(f"counts[{task!r}] c", pair[1])
        if c > n:
            raise ValueError(f"counts[{task!r}]: successes c={c} must be <= trials n={n}")
        out[task] = (n, c)
    return out


def _build(
    counts: dict[str, tuple[int, int]],
    k: int,
    confidence: float,
    n_resamples: int,
    seed: int,
    notes: list[str],
) -> ReliabilityReport:
    tasks = list(counts)
    pairs = [counts[t] for t in tasks]
    total_n = sum(n for n, _ in pairs)
    total_c = sum(c for _, c in pairs)
    ks = range(1, k + 1)
    at = {j: [pass_at_k(n, c, j) for n, c in pairs] for j in ks}
    hat = {j: [pass_hat_k(n, c, j) for n, c in pairs] for j in ks}
    # one resample of tasks per replicate, shared by every k (so the curves stay coherent)
    rng = random.Random(seed)
    m = len(pairs)
    positions = range(m)
    idx_reps = [rng.choices(positions, k=m) for _ in range(n_resamples)]
    method = f"percentile-bootstrap-over-tasks(n_resamples={n_resamples}, seed={seed})"

    # Tasks with equal (n, c) have equal estimators at every k, so a replicate is fully described
    # by how often it drew each distinct (n, c) class: count once, then every k is a short dot
    # product (the same numbers as summing task by task, at a fraction of the cost).
    class_of: dict[tuple[int, int], int] = {}
    task_class = [class_of.setdefault(p, len(class_of)) for p in pairs]
    n_classes = len(class_of)
    rep_counts = []
    for idx in idx_reps:
        cnt = [0] * n_classes
        for i in idx:
            cnt[task_class[i]] += 1
        rep_counts.append(cnt)
    first_task = {cid: t for t, cid in reversed(list(enumerate(task_class)))}

    def interval(vals: list[float]) -> Interval:
        point = _mean(vals)
        cvals = [vals[first_task[cid]] for cid in range(n_classes)]
        reps = [math.fsum(c * v for c, v in zip(cnt, cvals)) / m for cnt in rep_counts]
        reason = "one task: the interval is degenerate" if m == 1 else ""
        return _percentile_interval(point, reps, confidence, method, reason)

    return ReliabilityReport(
        counts=MappingProxyType(dict(counts)),
        k=k,
        success_rate=wilson_interval(total_c, total_n, confidence),
        pass_at_k=MappingProxyType({j: interval(at[j]) for j in ks}),
        pass_hat_k=MappingProxyType({j: interval(hat[j]) for j in ks}),
        warnings=tuple(notes),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def reliability(
    counts: Mapping[str, tuple[int, int]],
    k: int | None = None,
    *,
    slices: Mapping[str, Sequence[str]] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> ReliabilityReport:
    """Build a :class:`ReliabilityReport` from per-task ``(n trials, c successes)`` counts.

    pass@k and pass^k are the mean over tasks of the per-task estimators (tau-bench,
    arXiv 2406.12045; HumanEval, arXiv 2107.03374), each with a seeded percentile bootstrap
    interval over tasks; the pooled success rate gets a Wilson interval.

    **Unequal trial counts** follow tau2-bench (``get_metrics_df``): each task uses its own n,
    and ``k`` defaults to (and is capped at, with a warning) the smallest per-task n, so every
    reported k is defined for every task. Tasks with zero trials are left out with a warning.

    **Deterministic agents**: when k >= 2 and every task is all-pass or all-fail, pass^k equals
    pass^1 for every k and says nothing about reliability; a
    :class:`DeterministicAgentWarning` is issued and recorded in ``report.warnings``.

    Args:
        counts: ``task_id -> (n, c)``.
        k: Largest k to report; defaults to the smallest per-task n.
        slices: ``slice name -> task ids``; each slice gets its own report (same k and seed).
        confidence: Interval coverage in (0, 1).
        n_resamples: Bootstrap replicates (>= 1).
        seed: Bootstrap seed (recorded in the report).

    Raises:
        ValueError: no task has a trial, bad counts, ``k < 1``, or a slice names an unknown task.

    Example:
        >>> r = reliability({"a": (4, 4), "b": (4, 3), "c": (4, 0), "d": (4, 2)})
        >>> r.k, r.pass_hat_k[1].point, round(r.pass_hat_k[2].point, 4)
        (4, 0.5625, 0.4167)
        >>> round(r.pass_at_k[2].point, 4), round(r.success_rate.low, 4)
        (0.7083, 0.3318)
    """
    data = _check_counts(counts)
    confidence = _confidence(confidence)
    n_resamples = _int("n_resamples", n_resamples, 1)
    seed = _int("seed", seed, -(2**63))
    raised: list[tuple[str, type[Warning]]] = []
    empty = sorted(t for t, (n, _) in data.items() if n == 0)
    if empty:
        raised.append(
            (f"{len(empty)} task(s) with no trials left out: {empty[:10]}", ReliabilityWarning)
        )
        data = {t: nc for t, nc in data.items() if nc[0] > 0}
    if not data:
        raise ValueError(
            "reliability() needs at least one task with at least one trial, got "
            f"{len(counts)} task(s) and 0 trials"
        )
    min_n = min(n for n, _ in data.values())
    if k is None:
        k = min_n
    else:
        k = _int("k", k, 1)
        if k > min_n:
            short = sorted(t for t, (n, _) in data.items() if n < k)
            msg = (
                f"k={k} lowered to {min_n}, the smallest per-task trial count ({len(short)} "
                f"task(s) have fewer than {k} trials: {short[:10]}) (tau2-bench policy)"
            )
            raised.append((msg, ReliabilityWarning))
            k = min_n
    if len({n for n, _ in data.values()}) > 1:
        msg = (
            f"unequal trial counts (min {min_n}, max {max(n for n, _ in data.values())}): "
            "each task uses its own n (tau2-bench policy)"
        )
        raised.append((msg, ReliabilityWarning))
    if k >= 2 and all(c in (0, n) for n, c in data.values()):
        msg = (
            "every task is all-pass or all-fail (a deterministic agent?): pass^k equals pass^1 "
            "for every k and measures nothing about run-to-run reliability"
        )
        raised.append((msg, DeterministicAgentWarning))
    for msg, category in raised:
        warnings.warn(msg, category, stacklevel=2)
    notes = [msg for msg, _ in raised]
    report = _build(data, k, confidence, n_resamples, seed, notes)
    if slices:
        if not isinstance(slices, Mapping):
            raise TypeError(
                f"slices must be a mapping name -> task ids, got {type(slices).__name__}"
            )
        subs: dict[str, ReliabilityReport] = {}
        for name, ids in slices.items():
            if isinstance(ids, str):
                raise TypeError(f"slices[{name!r}] must be a sequence of task ids, not a str")
            unknown = sorted(str(t) for t in ids if t not in counts)
            if unknown:
                raise ValueError(f"slices[{name!r}] names unknown task(s) {unknown[:10]}")
            sub = {t: data[t] for t in ids if t in data}
            if not sub:
                raise ValueError(f"slices[{name!r}] has no task with trials")
            sub_notes: list[str] = []
            if k >= 2 and all(c in (0, n) for n, c in sub.values()):
                sub_notes.append(f"slice {name!r}: every task is all-pass or all-fail")
            subs[str(name)] = _build(sub, k, confidence, n_resamples, seed, sub_notes)
        report = ReliabilityReport(
            counts=report.counts,
            k=report.k,
            success_rate=report.success_rate,
            pass_at_k=report.pass_at_k,
            pass_hat_k=report.pass_hat_k,
            slices=MappingProxyType(subs),
            warnings=report.warnings,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
    return report
