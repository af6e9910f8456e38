"""Reference-free quality estimation: signals, calibration, and ``estimate_quality()``.

A :class:`~ek.base.Signal` scores an output without gold and declares its ``cost_tier``
(1 cheapest; an LLM judge is :data:`JUDGE_COST_TIER` = 5). Signals run **cheapest first**.

**A raw signal value is not a probability** (DESIGN rule 4). To gate on quality, fit a
calibrator on human labels (:func:`fit_isotonic`, pool-adjacent-violators isotonic regression)
that maps the raw value to the probability that a human would accept the output.
:func:`estimate_quality` refuses (raises :class:`UncalibratedScoreError`) to gate without one,
and refuses to put a judge and other signals under **one** calibrator: the "mean the raw
signals, calibrate the mean" facade is unsound when the signals live on different scales (a
judge's 1-5 and a log-probability), so calibrate each signal separately instead (pass a
``{signal name: calibrator}`` mapping).

Example:
    >>> class Length:
    ...     name, cost_tier = "length", 1
    ...     def __call__(self, output):
    ...         return min(len(output) / 100, 1.0)
    >>> cal = fit_isotonic([0.1, 0.2, 0.5, 0.9], [0, 0, 1, 1], signal="length")
    >>> q = estimate_quality("x" * 60, [Length()], calibrator={"length": cal}, threshold=0.5)
    >>> round(q.probability, 3), q.passed
    (1.0, True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import (
    check_keys,
    count,
    finite,
    is_number,
    opt_str,
    plain_json,
    positive_int,
    short_repr,
)
from ek.base import ReadOnlyDict

__all__ = [
    "JUDGE_COST_TIER",
    "IsotonicCalibrator",
    "QualityEstimate",
    "UncalibratedScoreError",
    "estimate_quality",
    "fit_isotonic",
    "is_judge",
    "isotonic_regression",
    "order_signals",
]

JUDGE_COST_TIER = 5
"""The cost tier of an LLM judge: the most expensive family of signals, escalated to last."""


class UncalibratedScoreError(ValueError):
    """Asked to gate on a raw signal (e.g. a raw judge score) that has no calibrator."""


# --------------------------------------------------------------------------------------------
# isotonic calibration (pool-adjacent-violators)
# --------------------------------------------------------------------------------------------


def isotonic_regression(ys: Sequence[float], weights: Sequence[float] | None = None) -> list[float]:
    """The non-decreasing sequence closest to ``ys`` in weighted least squares.

    Pool-adjacent-violators (Ayer et al. 1955, "An empirical distribution function for sampling
    with incomplete information", Ann. Math. Statist. 26:641-647; Barlow et al. 1972,
    "Statistical Inference under Order Restrictions"): scan left to right, merging a block into
    its predecessor while their weighted means violate the order. O(n).

    Args:
        ys: Values in the order that must be respected.
        weights: Positive weights (default all 1).

    Example:
        >>> isotonic_regression([1, 3, 2, 4])
        [1.0, 2.5, 2.5, 4.0]
    """
    y = [finite(f"ys[{i}]", v) for i, v in enumerate(ys)]
    w = [1.0] * len(y) if weights is None else [finite(f"weights[{i}]", v) for i, v in enumerate(weights)]  # fmt: skip
    if len(w) != len(y):
        raise ValueError(f"weights must match ys in length, got {len(w)} and {len(y)}")
    if any(v <= 0 for v in w):
        raise ValueError("weights must be > 0")
    # blocks: [weighted sum, weight, count]
    blocks: list[list[float]] = []
    for yi, wi in zip(y, w):
        blocks.append([yi * wi, wi, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, ww, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += ww
            blocks[-1][2] += c
    out: list[float] = []
    for s, ww, c in blocks:
        out.extend([s / ww] * int(c))
    return out


@dataclass(frozen=True)
class IsotonicCalibrator:
    """A monotone map from a raw signal value to a probability, fitted on human labels.

    Predicts by linear interpolation between the fitted points and clips outside them (as
    scikit-learn's ``IsotonicRegression(out_of_bounds="clip")`` does).

    Attributes:
        xs: Distinct raw values seen in fitting, ascending.
        ys: Fitted probabilities at ``xs`` (monotone).
        increasing: Whether a higher raw value means higher quality.
        n: Number of labelled examples it was fitted on.
        signal: Name of the signal it calibrates (``None`` if unspecified).
    """

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    increasing: bool = True
    n: int = 0
    signal: str | None = None

    def __post_init__(self) -> None:
        # every field checked here, so a calibrator built in code writes what from_dict reads
        xs = _finite_tuple("IsotonicCalibrator.xs", self.xs)
        ys = _finite_tuple("IsotonicCalibrator.ys", self.ys)
        if not xs or len(xs) != len(ys):
            raise ValueError(
                f"IsotonicCalibrator needs equal, non-empty xs and ys, got {len(xs)} and {len(ys)}"
            )
        if any(b <= a for a, b in itertools.pairwise(xs)):
            raise ValueError("IsotonicCalibrator.xs must be strictly increasing")
        if not isinstance(self.increasing, bool):
            raise TypeError(
                f"IsotonicCalibrator.increasing must be a bool, got {short_repr(self.increasing)}"
            )
        object.__setattr__(self, "xs", xs)
        object.__setattr__(self, "ys", ys)
        object.__setattr__(self, "n", count("IsotonicCalibrator.n", self.n))
        plain_json("IsotonicCalibrator.n", self.n)  # an int JSON can print
        opt_str("IsotonicCalibrator.signal", self.signal)

    def __call__(self, score: float) -> float:
        """The calibrated probability for a raw ``score``."""
        x = finite("score", score)
        xs, ys = self.xs, self.ys
        if x <= xs[0]:
            return ys[0]
        if x >= xs[-1]:
            return ys[-1]
        lo, hi = 0, len(xs) - 1
        while hi - lo > 1:  # binary search for xs[lo] <= x < xs[hi]
            mid = (lo + hi) // 2
            if xs[mid] <= x:
                lo = mid
            else:
                hi = mid
        t = (x - xs[lo]) / (xs[hi] - xs[lo])
        return ys[lo] + t * (ys[hi] - ys[lo])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (round-trips through :meth:`from_dict`)."""
        return {
            "xs": list(self.xs),
            "ys": list(self.ys),
            "increasing": self.increasing,
            "n": self.n,
            "signal": self.signal,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IsotonicCalibrator:
        """Rebuild a calibrator from :meth:`to_dict` output (each field checked)."""
        check_keys("IsotonicCalibrator", data, _CALIBRATOR_KEYS, ("xs", "ys"))
        return cls(
            xs=data["xs"],
            ys=data["ys"],
            increasing=data.get("increasing", True),
            n=data.get("n", 0),
            signal=data.get("signal"),
        )


_CALIBRATOR_KEYS = frozenset({"xs", "ys", "increasing", "n", "signal"})


def _finite_tuple(owner: str, values: Any) -> tuple[float, ...]:
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{owner} must be a list of numbers, got {type(values).__name__}")
    return tuple(finite(f"{owner}[{i}]", v) for i, v in enumerate(values))


def _labelled(
    scores: Sequence[float], labels: Sequence[float], weights: Sequence[float] | None
) -> tuple[list[float], list[float], list[float]]:
    """The labelled examples checked: finite scores, labels in [0, 1], positive weights."""
    x = [finite(f"scores[{i}]", v) for i, v in enumerate(scores)]
    y = [finite(f"labels[{i}]", v) for i, v in enumerate(labels)]
    if len(x) != len(y):
        raise ValueError(f"scores and labels must have equal length, got {len(x)} and {len(y)}")
    if not x:
        raise ValueError("fit_isotonic needs at least one labelled example, got 0")
    bad = [v for v in y if not 0.0 <= v <= 1.0]
    if bad:
        raise ValueError(f"labels must lie in [0, 1] (probabilities of acceptance), got {bad[:5]}")
    if weights is None:
        return x, y, [1.0] * len(x)
    w = [finite(f"weights[{i}]", v) for i, v in enumerate(weights)]
    if len(w) != len(x):
        raise ValueError(f"weights must match scores in length, got {len(w)} and {len(x)}")
    if any(v <= 0 for v in w):
        raise ValueError("weights must be > 0")
    return x, y, w


def _pool_ties(
    x: Sequence[float], y: Sequence[float], w: Sequence[float]
) -> tuple[list[float], list[float], list[float]]:
    """Tied scores pooled: the distinct scores sorted, each with its weighted mean label and
    total weight."""
    pooled: dict[float, list[float]] = {}
    for xi, yi, wi in zip(x, y, w):
        acc = pooled.setdefault(xi, [0.0, 0.0])
        acc[0] += yi * wi
        acc[1] += wi
    ux = sorted(pooled)
    return ux, [pooled[v][0] / pooled[v][1] for v in ux], [pooled[v][1] for v in ux]


def fit_isotonic(
    scores: Sequence[float],
    labels: Sequence[float],
    *,
    weights: Sequence[float] | None = None,
    increasing: bool = True,
    signal: str | None = None,
) -> IsotonicCalibrator:
    """Fit an isotonic calibrator mapping raw signal values to P(human accepts).

    Ties in ``scores`` are pooled (weighted mean label) before pool-adjacent-violators
    (:func:`isotonic_regression`); Zadrozny & Elkan (2002), "Transforming classifier scores
    into accurate multiclass probability estimates", KDD. Agrees with scikit-learn's
    ``IsotonicRegression(out_of_bounds="clip")``.

    Args:
        scores: Raw signal values (e.g. judge scores) of labelled outputs.
        labels: Human labels in [0, 1] (1 = acceptable; graded labels allowed).
        weights: Optional positive weights per example.
        increasing: ``False`` when a lower raw value means better quality.
        signal: The name of the signal this calibrates (checked by :func:`estimate_quality`).

    Example:
        >>> cal = fit_isotonic([1, 2, 3, 4, 5], [0, 1, 0, 1, 1])
        >>> [round(cal(x), 3) for x in (1, 2.5, 5, 9)]
        [0.0, 0.5, 1.0, 1.0]
    """
    x, y, w = _labelled(scores, labels, weights)
    ux, uy, uw = _pool_ties(x, y, w)
    if increasing:
        fitted = isotonic_regression(uy, uw)
    else:
        fitted = [-v for v in isotonic_regression([-v for v in uy], uw)]
    return IsotonicCalibrator(tuple(ux), tuple(fitted), increasing, len(x), signal)


# --------------------------------------------------------------------------------------------
# signals
# --------------------------------------------------------------------------------------------


def is_judge(signal: Any) -> bool:
    """True for an LLM-judge signal (``is_judge = True`` or ``cost_tier >= 5``)."""
    tier = getattr(signal, "cost_tier", 0)
    return getattr(signal, "is_judge", False) is True or (
        isinstance(tier, (int, float)) and tier >= JUDGE_COST_TIER
    )


def order_signals(signals: Sequence[Any]) -> list[Any]:
    """The signals sorted cheapest ``cost_tier`` first (stable for equal tiers).

    Example:
        >>> class S:
        ...     def __init__(self, name, tier): self.name, self.cost_tier = name, tier
        ...     def __call__(self, output): return 0.0
        >>> [s.name for s in order_signals([S("judge", 5), S("regex", 1), S("nli", 3)])]
        ['regex', 'nli', 'judge']
    """
    out = list(signals)
    for i, s in enumerate(out):
        missing = [a for a in ("name", "cost_tier") if not hasattr(s, a)]
        if missing or not callable(s):
            raise TypeError(
                f"signals[{i}] must be a Signal (name, cost_tier, __call__(output)), "
                f"{type(s).__name__} lacks {missing or ['__call__']}"
            )
        tier = s.cost_tier
        positive_int(f"signals[{i}] ({short_repr(s.name)}) cost_tier", tier)
    names = [s.name for s in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"signal names must be unique, got duplicates {dup}")
    return sorted(out, key=lambda s: s.cost_tier)


@dataclass(frozen=True)
class QualityEstimate:
    """The outcome of :func:`estimate_quality`.

    Attributes:
        probability: The calibrated probability of acceptable quality, or ``None`` when no
            calibrator applied (raw values only: not a probability, not gateable).
        passed: ``probability >= threshold`` when a threshold was given, else ``None``.
        raw: ``signal name -> raw value`` for every signal that ran.
        calibrated: ``signal name -> calibrated probability`` (per-signal mode; in the single
            calibrator mode the key ``"mean"``).
        order: Names of the signals that ran, in the order they ran (cheapest first).
        skipped: Names of signals not run because a cheaper one was already decisive.
        decided_by: The signal (or ``"mean"``) whose calibrated probability is ``probability``.
        reason: A human-readable summary.
    """

    probability: float | None
    passed: bool | None
    raw: Mapping[str, float]
    calibrated: Mapping[str, float] = field(default_factory=ReadOnlyDict)
    order: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    decided_by: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "probability": self.probability,
            "passed": self.passed,
            "raw": dict(self.raw),
            "calibrated": dict(self.calibrated),
            "order": list(self.order),
            "skipped": list(self.skipped),
            "decided_by": self.decided_by,
            "reason": self.reason,
        }


def _run(signal: Any, output: Any) -> float:
    v = signal(output)
    if not is_number(v):
        raise TypeError(
            f"signal {short_repr(signal.name)} must return a number, got {type(v).__name__}: {short_repr(v, 100)}"
        )
    f = float(v)
    if not math.isfinite(f):
        raise ValueError(
            f"signal {short_repr(signal.name)} returned a non-finite value {short_repr(v)}"
        )
    return f


def estimate_quality(
    output: Any,
    signals: Any,
    *,
    calibrator: IsotonicCalibrator | Mapping[str, IsotonicCalibrator] | None = None,
    threshold: float | None = None,
    escalate: tuple[float, float] | None = None,
) -> QualityEstimate:
    """Run reference-free signals on ``output`` (cheapest first) and calibrate them.

    Two calibration modes:

    * **per signal** (recommended): ``calibrator={name: IsotonicCalibrator}``. Each calibrated
      signal gets its own probability; the estimate is that of the most expensive calibrated
      signal that ran. With ``escalate=(low, high)``, signals run in cost order and stop as soon
      as a calibrated probability is ``<= low`` or ``>= high`` (cheap signals settle easy cases;
      the judge is reached only for the uncertain ones). Uncalibrated non-judge signals are
      recorded in ``raw`` but do not decide.
    * **one calibrator** for the mean of the raw values (the facade's behaviour). Refused when
      a judge is mixed with other signals: the mean of a 1-5 judge score and, say, a
      log-probability is not a meaningful quantity to calibrate.

    Args:
        output: The output to score (whatever the signals accept).
        signals: One Signal or a sequence of them.
        calibrator: ``None``, one calibrator, or a ``{signal name: calibrator}`` mapping.
        threshold: Gate: ``passed = probability >= threshold``. Requires a calibrated
            probability; a raw judge score is never gated.
        escalate: ``(low, high)`` early-stopping band (per-signal mode only).

    Raises:
        UncalibratedScoreError: ``threshold`` given but no calibrated probability can exist
            (no calibrator, or a judge without its own calibrator). Raised before any signal
            runs, so no judge call is spent.
        ValueError: a judge mixed with other signals under one calibrator; bad arguments.

    Example:
        >>> class Judge:
        ...     name, cost_tier, is_judge = "judge", 5, True
        ...     def __call__(self, output): return 4.0
        >>> estimate_quality("text", Judge()).probability is None   # raw: no probability
        True
        >>> try:
        ...     estimate_quality("text", Judge(), threshold=0.5)
        ... except UncalibratedScoreError as e:
        ...     print(str(e)[:38])
        a raw judge score is not a probability
    """
    sigs = order_signals([signals] if not isinstance(signals, (list, tuple)) else signals)
    if not sigs:
        raise ValueError("estimate_quality needs at least one signal, got 0")
    if threshold is not None:
        threshold = finite("threshold", threshold)
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be a probability in [0, 1], got {threshold}")
    if isinstance(calibrator, IsotonicCalibrator):
        return _one_calibrator(output, sigs, calibrator, threshold, escalate)
    cals = _per_signal_calibrators(calibrator, [s.name for s in sigs])
    if threshold is not None:
        _check_gateable(sigs, cals)
    if escalate is not None:
        _check_escalate(escalate)
    raw, calibrated, ran, skipped = _cascade(output, sigs, cals, escalate)
    decided_by = next(reversed(calibrated), None)  # the last calibrated signal that ran
    prob = None if decided_by is None else calibrated[decided_by]
    passed = None if threshold is None or prob is None else prob >= threshold
    return QualityEstimate(
        probability=prob,
        passed=passed,
        raw=ReadOnlyDict(raw),
        calibrated=ReadOnlyDict(calibrated),
        order=tuple(ran),
        skipped=skipped,
        decided_by=decided_by,
        reason=_reason(prob, threshold, decided_by, skipped),
    )


def _check_escalate(escalate: tuple[float, float]) -> None:
    low, high = (finite("escalate[0]", escalate[0]), finite("escalate[1]", escalate[1]))
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"escalate must be (low, high) with 0 <= low < high <= 1, got {escalate}")


def _cascade(
    output: Any,
    sigs: Sequence[Any],
    cals: Mapping[str, IsotonicCalibrator],
    escalate: tuple[float, float] | None,
) -> tuple[dict[str, float], dict[str, float], list[str], tuple[str, ...]]:
    """Run the signals cheapest first: ``(raw values, calibrated probabilities, the names that
    ran, the names skipped)``; with ``escalate`` it stops at the first calibrated probability
    outside the band."""
    raw: dict[str, float] = {}
    calibrated: dict[str, float] = {}
    ran: list[str] = []
    for i, s in enumerate(sigs):
        raw[s.name] = _run(s, output)
        ran.append(s.name)
        if s.name not in cals:
            continue
        p = calibrated[s.name] = cals[s.name](raw[s.name])
        if escalate is not None and (p <= escalate[0] or p >= escalate[1]):
            return raw, calibrated, ran, tuple(x.name for x in sigs[i + 1 :])
    return raw, calibrated, ran, ()


def _one_calibrator(
    output: Any,
    sigs: list[Any],
    calibrator: IsotonicCalibrator,
    threshold: float | None,
    escalate: tuple[float, float] | None,
) -> QualityEstimate:
    """One calibrator for the mean of the raw values (refused with a judge among others)."""
    judges = [s.name for s in sigs if is_judge(s)]
    names = [s.name for s in sigs]
    if judges and len(sigs) > 1:
        raise ValueError(
            f"refusing to mix judge signal(s) {judges} with other signals "
            f"{[n for n in names if n not in judges]} under one calibrator: the mean of raw "
            "values on different scales is not calibratable (a known facade limitation). "
            "Calibrate each signal separately: calibrator={name: fit_isotonic(...)}"
        )
    if escalate is not None:
        raise ValueError("escalate needs per-signal calibrators (a {name: calibrator} mapping)")
    raw = {s.name: _run(s, output) for s in sigs}
    mean = math.fsum(raw.values()) / len(raw)
    p = calibrator(mean)
    passed = None if threshold is None else p >= threshold
    what = names[0] if len(names) == 1 else "mean"
    return QualityEstimate(
        probability=p,
        passed=passed,
        raw=ReadOnlyDict(raw),
        calibrated=ReadOnlyDict({what: p}),
        order=tuple(names),
        decided_by=what,
        reason=_reason(p, threshold, what),
    )


def _per_signal_calibrators(calibrator: Any, names: list[str]) -> dict[str, IsotonicCalibrator]:
    """``{signal name: calibrator}``, each checked against the signals that exist."""
    if calibrator is None:
        return {}
    if not isinstance(calibrator, Mapping):
        raise TypeError(
            "calibrator must be an IsotonicCalibrator or a {signal name: calibrator} "
            f"mapping, got {type(calibrator).__name__}"
        )
    cals = dict(calibrator)
    unknown = sorted(set(cals) - set(names))
    if unknown:
        raise ValueError(f"calibrators for unknown signal(s) {unknown}; signals are {names}")
    for name, cal in cals.items():
        if not isinstance(cal, IsotonicCalibrator):
            raise TypeError(f"calibrator[{short_repr(name)}] must be an IsotonicCalibrator")
        if cal.signal is not None and cal.signal != name:
            raise ValueError(
                f"calibrator[{short_repr(name)}] was fitted for signal {short_repr(cal.signal)}, not {short_repr(name)}"
            )
    return cals


def _check_gateable(sigs: list[Any], cals: Mapping[str, IsotonicCalibrator]) -> None:
    """Refuse to gate (before any signal runs) when no calibrated probability can exist."""
    raw_judges = [s.name for s in sigs if is_judge(s) and s.name not in cals]
    if raw_judges:
        raise UncalibratedScoreError(
            f"a raw judge score is not a probability: {raw_judges} has no calibrator. Fit "
            "one on human labels (fit_isotonic) after validating the judge "
            "(judge_validation), then pass calibrator={name: calibrator}"
        )
    if not cals:
        raise UncalibratedScoreError(
            f"cannot gate on raw signal values {[s.name for s in sigs]}: a raw signal is not "
            "a probability; pass a calibrator fitted on human labels (fit_isotonic)"
        )


def _reason(
    p: float | None, threshold: float | None, by: str | None, skipped: tuple[str, ...] = ()
) -> str:
    if p is None:
        return "raw signal values only (no calibrator): not a probability, not gateable"
    msg = f"P(acceptable) = {p:.3f} from {short_repr(by)}"
    if threshold is not None:
        msg += f" {'>=' if p >= threshold else '<'} threshold {threshold:g}"
    if skipped:
        msg += f"; skipped {list(skipped)} (already decisive)"
    return msg
