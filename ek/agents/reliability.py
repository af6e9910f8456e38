"""Reliability: pass@k, pass^k and the :class:`ReliabilityReport` of a suite.

pass@k and pass^k are **not** Metrics (DESIGN rule 1): they are cross-task quantities over k
trials of the same task, so they ship as pure functions and the harness owns the trial grouping,
handing per-task ``(n trials, c successes)`` counts to :func:`reliability`.

* :func:`pass_at_k`: capability, "can it ever?" (the unbiased HumanEval estimator).
* :func:`pass_hat_k`: reliability, "does it every time?" (the tau-bench estimator); this is the
  production number and decays like ``p**k``.
* :func:`reliability`: the per-suite (and per-slice) report, with a Wilson interval on the
  success rate and bootstrap intervals over tasks on pass@k and pass^k.

The interval estimators the variance-aware regression gate needs (it tests the *difference*
current - baseline, DESIGN rule 7) live in the core module :mod:`ek.stats` and are re-exported
here, so ``from ek.agents.reliability import wilson_interval`` keeps working:
:class:`~ek.stats.Interval`, :func:`~ek.stats.wilson_interval`,
:func:`~ek.stats.newcombe_difference`, :func:`~ek.stats.difference_interval`,
:func:`~ek.stats.difference_upper_bound`, :func:`~ek.stats.bootstrap_interval`,
:func:`~ek.stats.normal_quantile`. An undefined quantity is NaN with a ``reason``.

Example:
    >>> round(pass_at_k(10, 3, 2), 4), round(pass_hat_k(10, 3, 2), 4)
    (0.5333, 0.0667)
    >>> w = wilson_interval(8, 10)
    >>> round(w.point, 3), round(w.low, 4), round(w.high, 4)
    (0.8, 0.4902, 0.9433)
"""

from __future__ import annotations

import bisect
import math
import operator
import random
import sys
import warnings
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import short_repr
from ek.base import ReadOnlyDict
from ek.stats import (
    MAX_COUNT,
    MAX_RESAMPLES,
    Interval,
    bootstrap_interval,
    check_confidence,
    check_counts,
    check_int,
    difference_interval,
    difference_upper_bound,
    mean,
    newcombe_difference,
    normal_quantile,
    percentile_interval,
    quantile,
    wilson_interval,
)

__all__ = [
    "MAX_K",
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
#: pass^k is computed with exact integer binomials (one rounding) up to this many trials.
_EXACT_N = 10_000
#: Beyond this many factors the estimators switch to the next bounded form.
_MAX_TERMS = 100_000
#: Largest k :func:`reliability` reports: every k in ``1..k`` gets a bootstrap interval (one
#: fixed-point pass over replicates x distinct (n, c) pairs for all k, then a sort of the
#: replicates per k and estimator; k = 50 on 2,000 tasks and three slices takes about 1.5 s).
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
    slices: Mapping[str, ReliabilityReport] = field(default_factory=ReadOnlyDict)
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


#: Bits of a draw's first 32-bit word that the bulk draws look up: a 64 KB table up to this
#: many tasks, a 1 MB one (20 bits: it stays in the cache) beyond, so that few buckets straddle
#: two tasks.
_SMALL_TABLE_TASKS = 4096
#: Classes the bulk draws can count in one byte each (255 marks a draw decoded exactly).
_MAX_BYTE_CLASSES = 255


def _draw_index(x53: int, scale: float) -> int:
    """``floor(random() * m)`` of ``random.choices`` for the 53-bit integer behind ``random()``.

    ``random()`` is ``x53 / 2**53`` exactly, and ``scale = m / 2**53`` is exact, so
    ``x53 * scale`` is the same correctly rounded product as ``random() * m``.
    """
    return int(x53 * scale)


def _bucket_table(task_class: list[int], bits: int) -> bytes:
    """Per value of a draw's top ``bits`` bits: the class every such draw lands in, or 255.

    A draw's 53-bit number ``x53`` has the top bits of its first word as its own top bits, so
    the draws of bucket ``h`` lie in ``[h << s, (h + 1) << s)`` with ``s = 53 - bits``. Task
    ``i`` begins near ``x = i * 2**53 / m``: the rounded product ``x53 * m / 2**53`` is within
    one unit of ``x53`` of the exact one, so every bucket within 4 units of a boundary between
    two runs of tasks of different classes is marked 255 (decoded exactly), and every other
    bucket lies inside one run and takes its class.
    """
    m, shift = len(task_class), 53 - bits
    table = bytearray(1 << bits)
    last = (1 << bits) - 1
    starts = [0] + [i for i in range(1, m) if task_class[i] != task_class[i - 1]]
    for start, end in zip(starts, [*starts[1:], m]):
        b0 = min(((start << 53) // m) >> shift, last)
        b1 = min(((end << 53) // m) >> shift, last)
        table[b0 : b1 + 1] = bytes([task_class[start]]) * (b1 - b0 + 1)
    for i in starts[1:]:
        x = (i << 53) // m
        table[(x - 4) >> shift : min((x + 4) >> shift, last) + 1] = bytes([_MAX_BYTE_CLASSES]) * (
            min((x + 4) >> shift, last) + 1 - ((x - 4) >> shift)
        )
    return bytes(table)


def _buckets(draws: int, m: int, bits: int, mask: int) -> array[int]:
    """Each draw's bucket, the top ``bits`` bits of its first word, from ``draws``, the integer
    ``getrandbits(64 * m)`` returned: draw ``i``'s first word is its bits ``64 i`` to
    ``64 i + 31``, so one shift and one ``mask`` (``bits`` ones at the bottom of each 64-bit
    slot) leave every draw's bucket in a slot of its own, with no Python step a draw."""
    out = array("Q", ((draws >> (32 - bits)) & mask).to_bytes(8 * m, "little"))
    if sys.byteorder == "big":  # pragma: no cover - the machines ek runs on are little-endian
        out.byteswap()
    return out


def _class_draw_counts(
    rng: random.Random, task_class: list[int], n_classes: int, n_resamples: int
) -> list[list[int]]:
    """Per replicate, how often ``rng.choices(range(m), k=m)`` drew a task of each class.

    The same draws as ``random.choices`` (two 32-bit words a draw, ``random()`` times ``m``,
    floored), taken in bulk: ``getrandbits(64 * m)`` returns a replicate's words in order; a
    draw's class is looked up from its top 16 bits (:func:`_bucket_table`), and only the few
    draws whose bucket straddles two classes are decoded exactly.
    """
    m = len(task_class)
    scale = m / float(1 << 53)
    bits = 16 if m <= _SMALL_TABLE_TASKS else 20
    bulk = n_classes < _MAX_BYTE_CLASSES and m < 1 << 32
    bulk = bulk and array("I").itemsize == 4 and array("Q").itemsize == 8
    table = _bucket_table(task_class, bits) if bulk else b""
    # with many classes, or so many tasks that buckets often straddle two classes (each such
    # draw is decoded in Python), the plain draws are faster: one Python step a draw
    if not table or table.count(_MAX_BYTE_CLASSES) > len(table) // 8:
        out = []
        for _ in range(n_resamples):
            cnt = [0] * n_classes
            for i in rng.choices(range(m), k=m):
                cnt[task_class[i]] += 1
            out.append(cnt)
        return out
    classes = range(n_classes)
    mask = int.from_bytes(((1 << bits) - 1).to_bytes(8, "little") * m, "little")
    out = []
    for _ in range(n_resamples):
        draws = rng.getrandbits(64 * m)
        words = array("I", draws.to_bytes(8 * m, "little"))
        if sys.byteorder == "big":  # pragma: no cover - the machines ek runs on are little-endian
            words.byteswap()
        top = _buckets(draws, m, bits, mask)
        drawn = bytes(operator.itemgetter(*top)(table)) if m > 1 else bytes([table[top[0]]])
        tally = Counter(drawn)
        cnt = [tally[c] for c in classes]
        at = drawn.find(_MAX_BYTE_CLASSES)
        while at >= 0:
            w0, w1 = words[2 * at], words[2 * at + 1]
            cnt[task_class[_draw_index((w0 >> 5) << 26 | w1 >> 6, scale)]] += 1
            at = drawn.find(_MAX_BYTE_CLASSES, at + 1)
        out.append(cnt)
    return out


class _OrderStatistics(Sequence[float]):
    """A sorted sequence of which only the positions :func:`~ek.stats.quantile` reads are known."""

    def __init__(self, size: int, known: dict[int, float]) -> None:
        self._size, self._known = size, known

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, i: Any) -> Any:
        return self._known[i]


def _quantile_positions(size: int, confidence: float) -> list[int]:
    """The order statistics :func:`~ek.stats.quantile` reads for the two interval ends."""
    alpha = 1.0 - confidence
    out = []
    for q in (alpha / 2.0, 1.0 - alpha / 2.0):
        lo = math.floor(q * (size - 1))
        out += [lo, min(lo + 1, size - 1)]
    return out


def _bootstrap_means(
    series: list[list[float]],
    rep_counts: list[list[int]],
    m: int,
    points: list[float],
    confidence: float,
    method: str,
    reason: str,
) -> list[Interval]:
    """Each series' percentile interval of the replicate means ``fsum(count * value) / m``.

    A replicate's mean of a series is ``math.fsum(c * v for c, v in zip(counts, values)) / m``.
    Computing it for every replicate and every series is replicates x classes x series Python
    steps, so instead all series are summed at once in fixed point (each class's values packed
    into one big integer, one multiply-add per class and replicate), which orders the
    replicates to within a proven bound; only the replicates that could hold the order
    statistics the interval reads are then computed exactly, so every bound is the same number.
    """
    finite = all(0.0 <= v <= 1.0 for vals in series for v in vals)
    if not finite or m.bit_length() > 40:  # pragma: no cover - [0, 1] and < 2**40 tasks
        return [
            percentile_interval(
                p, [math.fsum(map(operator.mul, cnt, vals)) / m for cnt in rep_counts],
                confidence, method, reason,
            )
            for p, vals in zip(points, series)
        ]  # fmt: skip
    # Fixed point with every replicate's sum of a series in one unsigned 64-bit slot, so a
    # replicate's packed sum splits into its series with one array conversion. The exact mean
    # differs from fixed / (m 2**frac) by at most 3.2 * 2**-53 (products, fsum and division
    # each round once; values <= 1) plus m / 2 fixed units of rounding the values: under 2.2 m
    # fixed units for frac <= 52; the window below is twice 8 m.
    frac_bits = min(52, 63 - m.bit_length())
    slack = m << 3
    packed = [
        sum(round(vals[c] * (1 << frac_bits)) << (64 * s) for s, vals in enumerate(series))
        for c in range(len(series[0]))
    ]
    n_rep, n_series = len(rep_counts), len(series)
    flat = array("Q")
    for cnt in rep_counts:
        total = sum(c * p for c, p in zip(cnt, packed) if c)
        flat.frombytes(total.to_bytes(8 * n_series, "little"))
    if sys.byteorder == "big":  # pragma: no cover - the machines ek runs on are little-endian
        flat.byteswap()
    wanted = _quantile_positions(n_rep, confidence)
    out = []
    for s, vals in enumerate(series):
        known: dict[int, float] = {}
        col = flat[s::n_series]
        order = sorted(range(n_rep), key=col.__getitem__)
        ranked = list(map(col.__getitem__, order))
        for j in wanted:
            if j in known:
                continue
            below = bisect.bisect_left(ranked, ranked[j] - 2 * slack)
            top = bisect.bisect_right(ranked, ranked[j] + 2 * slack)
            exact = sorted(
                math.fsum(map(operator.mul, rep_counts[r], vals)) / m for r in order[below:top]
            )
            known[j] = exact[j - below]
        stats = _OrderStatistics(n_rep, known)
        low = quantile(stats, (1.0 - confidence) / 2.0)
        high = quantile(stats, 1.0 - (1.0 - confidence) / 2.0)
        point = points[s]
        if not math.isnan(point):  # as percentile_interval: widened to contain the point
            low, high = min(low, point), max(high, point)
        out.append(Interval(point, low, high, confidence, method, reason))
    return out


def _build(
    counts: dict[str, tuple[int, int]],
    k: int,
    confidence: float,
    n_resamples: int,
    seed: int,
    notes: list[str],
) -> ReliabilityReport:
    pairs = list(counts.values())
    total_n = sum(n for n, _ in pairs)
    total_c = sum(c for _, c in pairs)
    ks = range(1, k + 1)
    m = len(pairs)
    method = f"percentile-bootstrap-over-tasks(n_resamples={n_resamples}, seed={seed})"
    reason = "one task: the interval is degenerate" if m == 1 else ""

    # Tasks with equal (n, c) have equal estimators at every k, so a replicate is fully described
    # by how often it drew each distinct (n, c) class: the estimators are computed per class, one
    # resample of tasks per replicate is shared by every k (so the curves stay coherent), and
    # each replicate's draws are counted per class, then dropped (memory: n_resamples x classes).
    class_of: dict[tuple[int, int], int] = {}
    task_class = [class_of.setdefault(p, len(class_of)) for p in pairs]
    rep_counts = _class_draw_counts(random.Random(seed), task_class, len(class_of), n_resamples)
    series = [[pass_at_k(n, c, j) for n, c in class_of] for j in ks]
    series += [[pass_hat_k(n, c, j) for n, c in class_of] for j in ks]
    points = [mean([vals[c] for c in task_class]) for vals in series]
    ivs = _bootstrap_means(series, rep_counts, m, points, confidence, method, reason)
    return ReliabilityReport(
        counts=ReadOnlyDict(counts),
        k=k,
        success_rate=wilson_interval(total_c, total_n, confidence),
        pass_at_k=ReadOnlyDict(dict(zip(ks, ivs[:k]))),
        pass_hat_k=ReadOnlyDict(dict(zip(ks, ivs[k:]))),
        warnings=tuple(notes),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
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
        k: Largest k to report, at most :data:`MAX_K` (100); defaults to the smallest
            per-task n (a ValueError asks for an explicit k when that is over the limit).
        slices: ``slice name -> task ids``; each slice gets its own report (same k and seed).
        confidence: Interval coverage in (0, 1).
        n_resamples: Bootstrap replicates, 1 to :data:`~ek.stats.MAX_RESAMPLES` (1,000,000).
        seed: Bootstrap seed (recorded in the report).

    Raises:
        ValueError: no task has a trial, bad counts (each at most 2**53), ``k`` or
            ``n_resamples`` out of range, or a slice names an unknown task.

    Example:
        >>> r = reliability({"a": (4, 4), "b": (4, 3), "c": (4, 0), "d": (4, 2)})
        >>> r.k, r.pass_hat_k[1].point, round(r.pass_hat_k[2].point, 4)
        (4, 0.5625, 0.4167)
        >>> round(r.pass_at_k[2].point, 4), round(r.success_rate.low, 4)
        (0.7083, 0.3318)
    """
    data = _check_counts(counts)
    confidence = check_confidence(confidence)
    n_resamples = check_int("n_resamples", n_resamples, 1, MAX_RESAMPLES)
    seed = check_int("seed", seed, -(2**63))
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
    k = _resolve_k(data, k, min_n, raised)
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
                raise TypeError(
                    f"slices[{short_repr(name)}] must be a sequence of task ids, not a str"
                )
            unknown = sorted(str(t) for t in ids if t not in counts)
            if unknown:
                raise ValueError(f"slices[{short_repr(name)}] names unknown task(s) {unknown[:10]}")
            sub = {t: data[t] for t in ids if t in data}
            if not sub:
                raise ValueError(f"slices[{short_repr(name)}] has no task with trials")
            sub_notes: list[str] = []
            if k >= 2 and all(c in (0, n) for n, c in sub.values()):
                sub_notes.append(f"slice {short_repr(name)}: every task is all-pass or all-fail")
            subs[str(name)] = _build(sub, k, confidence, n_resamples, seed, sub_notes)
        report = ReliabilityReport(
            counts=report.counts,
            k=report.k,
            success_rate=report.success_rate,
            pass_at_k=report.pass_at_k,
            pass_hat_k=report.pass_hat_k,
            slices=ReadOnlyDict(subs),
            warnings=report.warnings,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
    return report
