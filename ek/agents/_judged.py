"""Judged success corrected for the judge's errors: human labels on a sample of judged trials.

An LLM judge decides every trial; people label a sample of the same trials. The judge's raw
pass rate is biased by its false passes and false fails (sensitivity ``q1`` = P(judge pass |
truly pass), specificity ``q0`` = P(judge fail | truly fail): the judged rate is
``θ q1 + (1 − θ)(1 − q0)``, not ``θ``). :func:`corrected_success_rate` uses the labels to
correct it, with an interval that carries both samples' uncertainty.

**The labelled trials are part of the judged ones.** Their judge noise is known and is not
counted twice: every estimator here is, to first order, the labels' own mean plus a correction
that vanishes when every trial is labelled, so at ``n = N`` the corrected rate *is* the
labelled mean and its interval *is* the labels-only one (``labels-only``: the clustered
interval of the labelled trials, :func:`ek.stats.ratio_interval`).

Methods (``method=``):

* ``"ppi++"`` (the default): prediction-powered inference with power tuning (Angelopoulos,
  Duchi & Zrnic 2023, "PPI++: Efficient Prediction-Powered Inference", arXiv 2311.01453),
  ``θ̂ = λ·mean_unlabelled(f) + mean_labelled(Y − λ f)`` with the variance-minimising
  ``λ = Cov(Y, f) / ((1 + n/N_u) Var(f))``, both moments taken on the labelled pairs. For a
  pass/fail verdict this makes the estimate the mean of the labels within each verdict,
  weighted by the verdict's share of all trials (post-stratification on the verdict; Holt &
  Smith 1979, "Post stratification", JRSS A 142(1)), and its small-sample interval the
  stratified-sampling one (Cochran 1977, "Sampling Techniques", §5.3-5.4): the variance
  ``Σ_s W_s² (1/n_s − 1/N_s) s_s² + S²/N`` with unbiased variances, Student's t with
  Satterthwaite's degrees of freedom (Cochran's eq. 5.16). It is the same estimate whether the
  labels were drawn at random or stratified by verdict. ``bench/judged.py`` measures it.
* ``"ppi++-asymptotic"``: the authors' package ``ppi-python`` (``ppi_mean_ci``) exactly:
  ``λ`` with the labelled covariance over the variance of all verdicts, clipped to [0, 1],
  variances with divisor n, the normal quantile. It under-covers at 50 labels (the bench).
  Simple random labels and independent trials only (it has no clusters or strata).
* ``"rogan-gladen"``: ``θ̂ = (p̂ + q̂0 − 1) / (q̂0 + q̂1 − 1)`` (Rogan & Gladen 1978,
  "Estimating prevalence from the results of a screening test", Am J Epidemiol 107(1)),
  clipped to [0, 1] with a reason. Its variance is derived for labels that are part of the
  judged trials: to first order ``θ̂ = mean_lab(Y − f/J) + p̂/J``, so
  ``Var = S²_Y/N + (1/n − 1/N)·Var(Y − f/J)`` (the textbook delta method adds the judge's
  noise on the labelled trials twice: ``1/n + 1/N``). It is never narrower than ``ppi++``:
  its judge-error term is ``ppi++``'s divided by ``ρ²(Y, f)``.
* ``"rogan-gladen-bootstrap"``: the same estimate, a percentile bootstrap that resamples
  tasks (labelled and unlabelled trials together, each task with all its trials),
  :func:`ek.stats.percentile_interval` with Hesterberg's expansion for the labelled tasks.
* ``"labels-only"``: the labelled trials alone (the reference every correction must beat).

**Which the report uses.** ``ppi++``, always: it is never less efficient than Rogan-Gladen
(asymptotically at least as narrow as the labels alone), it needs no clipping, it is the same
estimate for random and stratified labels, and its interval is the one whose coverage met the
band at 50 labels in ``bench/judged.py``.

**Refused** (the value is NaN, ``refused`` is True, the reason says why): fewer than two labels;
no labelled true pass or no labelled true fail (no sensitivity or specificity to estimate); a
judge no better than chance on the labels (``q̂0 + q̂1 <= 1``); for ``ppi++`` and stratified
sampling, a verdict with fewer than two labelled trials (in two tasks).

**Sampling** (``sampling=``): ``"random"`` (a simple random sample of the trials) or
``"stratified"`` (drawn within each judge verdict at its own rate). The rates are the realised
ones, ``n_s / N_s`` (every trial's verdict is known), and Rogan-Gladen weighs each label by
``1 / rate`` (then it equals the post-stratified estimate exactly).

**Tasks are clusters.** Where trials repeat a task (``tasks=``), a task and all its trials are
one unit: every interval sums each trial's influence on the estimate over its task, the
cluster-robust variance (Miller 2024, arXiv 2411.00640; :func:`ek.stats.clustered_se`) with
the small-sample factors counted in tasks; the bootstrap resamples tasks. Repeating every
trial of a task k times over leaves the interval exactly as it was.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import as_verdict, short_repr
from ek.base import ReadOnlyDict
from ek.stats import (
    Interval,
    check_confidence,
    check_int,
    percentile_interval,
    ratio_interval,
    t_interval,
    two_sided_z,
)

__all__ = [
    "JUDGED_METHODS",
    "SAMPLING_DESIGNS",
    "CorrectedRate",
    "JudgedTrials",
    "corrected_difference",
    "corrected_success_rate",
]

_NAN = float("nan")
#: The methods :func:`corrected_success_rate` offers; the first is the default.
JUDGED_METHODS = (
    "ppi++",
    "ppi++-asymptotic",
    "rogan-gladen",
    "rogan-gladen-bootstrap",
    "labels-only",
)
#: How the labelled trials were drawn.
SAMPLING_DESIGNS = ("random", "stratified")
_BOUNDS = (0.0, 1.0)


@dataclass(frozen=True)
class CorrectedRate:
    """A success rate corrected for the judge's errors; see :func:`corrected_success_rate`.

    Attributes:
        value: The corrected success rate (NaN when refused).
        interval: Its confidence interval (NaN bounds when refused).
        method: The estimator (one of :data:`JUDGED_METHODS`).
        judged_rate: The judge's raw pass rate over all trials (biased: not a success rate).
        n_trials: Judged trials.
        n_labelled: Trials with a human label.
        n_tasks: Tasks (clusters; a trial is its own task when no tasks were given).
        sensitivity: The judge's estimated P(pass | truly pass) (NaN when undefined).
        specificity: The judge's estimated P(fail | truly fail) (NaN when undefined).
        clipped: True when the estimate fell outside [0, 1] and was clipped.
        refused: True when no estimate could be made (``reason`` says why).
        reason: Why it was clipped or refused, else a one-line summary.
        detail: Machine-readable breakdown: ``sampling``, ``labelled_by_verdict`` and
            ``trials_by_verdict``, ``lam`` (PPI++), ``se``, ``df``, ``raw_value`` (before
            clipping), ``labelled_tasks``.
    """

    value: float
    interval: Interval
    method: str
    judged_rate: float
    n_trials: int
    n_labelled: int
    n_tasks: int
    sensitivity: float
    specificity: float
    clipped: bool
    refused: bool
    reason: str
    detail: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON-ready dict (NaN becomes ``None``)."""

        def f(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "value": f(self.value),
            "interval": self.interval.to_dict(),
            "method": self.method,
            "judged_rate": f(self.judged_rate),
            "n_trials": self.n_trials,
            "n_labelled": self.n_labelled,
            "n_tasks": self.n_tasks,
            "sensitivity": f(self.sensitivity),
            "specificity": f(self.specificity),
            "clipped": self.clipped,
            "refused": self.refused,
            "reason": self.reason,
            "detail": {k: (f(v) if isinstance(v, float) else v) for k, v in self.detail.items()},
        }


# --------------------------------------------------------------------------------------------
# the trials: per task, the six kinds of trial (labelled or not, judge's verdict, label)
# --------------------------------------------------------------------------------------------

# A task's counts: labelled (label, verdict) = (pass, pass), (pass, fail), (fail, pass),
# (fail, fail); unlabelled judged pass, judged fail. Every estimator here is a function of these
# counts; written a, b, c, d, u1, u0 below.
_Y1F1, _Y1F0, _Y0F1, _Y0F0, _UNL1, _UNL0 = range(6)
_Counts = tuple[int, int, int, int, int, int]


def _kind(verdict: bool, label: bool | None) -> int:
    if label is None:
        return _UNL1 if verdict else _UNL0
    return (_Y1F1, _Y1F0, _Y0F1, _Y0F0)[2 * (not label) + (not verdict)]


@dataclass(frozen=True)
class JudgedTrials:
    """Judged trials, some labelled, grouped by task: what every estimator reads.

    Build it with :meth:`from_trials`. ``counts`` holds, per task in sorted task order, the
    number of its trials of each kind: labelled with (label, verdict) (pass, pass), (pass,
    fail), (fail, pass), (fail, fail), then unlabelled judged pass and judged fail; ``keys``
    the task ids in that order (``None`` when the trials were not given tasks).

    Example:
        >>> t = JudgedTrials.from_trials([True, True, False, False], [True, None, True, None])
        >>> t.totals, t.n_trials, t.n_labelled
        ((1, 1, 0, 0, 1, 1), 4, 2)
    """

    counts: tuple[_Counts, ...]
    keys: tuple[Hashable, ...] | None = None
    totals: _Counts = field(init=False)

    def __post_init__(self) -> None:
        totals = tuple(sum(c[j] for c in self.counts) for j in range(6))
        object.__setattr__(self, "totals", totals)

    @classmethod
    def from_trials(
        cls,
        verdicts: Sequence[Any],
        labels: Sequence[Any],
        tasks: Sequence[Hashable] | None = None,
    ) -> JudgedTrials:
        """Group trials by task: ``verdicts[i]`` the judge's bool, ``labels[i]`` a person's
        bool or ``None`` (not labelled), ``tasks[i]`` the trial's task (each trial its own task
        when ``None``)."""
        verdicts, labels = _sequence("verdicts", verdicts), _sequence("labels", labels)
        if len(labels) != len(verdicts):
            raise ValueError(
                f"labels must give one entry (a bool, or None when not labelled) per judged "
                f"trial: {len(verdicts)} verdicts, {len(labels)} labels"
            )
        if tasks is None:
            keys: Sequence[Hashable] = range(len(verdicts))
        else:
            keys = _sequence("tasks", tasks)
            if len(keys) != len(verdicts):
                raise ValueError(
                    f"tasks must name one task per judged trial: {len(verdicts)} verdicts, "
                    f"{len(keys)} tasks"
                )
        by_task: dict[Hashable, list[int]] = {}
        for i, (v, y, key) in enumerate(zip(verdicts, labels, keys)):
            verdict = as_verdict(f"verdicts[{i}]", v)
            label = as_verdict(f"labels[{i}]", y, allow_none=True)
            by_task.setdefault(key, [0] * 6)[_kind(bool(verdict), label)] += 1
        if tasks is None:  # trials without tasks are exchangeable: one canonical order
            return cls(tuple(sorted(tuple(c) for c in by_task.values())))  # type: ignore[misc]
        order = _sorted_keys(by_task)
        return cls(tuple(tuple(by_task[k]) for k in order), tuple(order))  # type: ignore[misc]

    @classmethod
    def from_counts(cls, totals: Sequence[int]) -> JudgedTrials:
        """Independent trials (each its own task) from the six counts: labelled with (label,
        verdict) (pass, pass), (pass, fail), (fail, pass), (fail, fail), then unlabelled judged
        pass and judged fail. The same as :meth:`from_trials` on such trials without tasks.

        Example:
            >>> JudgedTrials.from_counts((1, 1, 0, 0, 1, 1)) == JudgedTrials.from_trials(
            ...     [True, True, False, False], [True, None, True, None])
            True
        """
        if isinstance(totals, (str, bytes)) or not isinstance(totals, Sequence) or len(totals) != 6:  # fmt: skip
            raise ValueError(f"totals must be six counts, got {short_repr(totals)}")
        counts = [check_int(f"totals[{kind}]", k, 0, 10**9) for kind, k in enumerate(totals)]
        per_trial: list[_Counts] = []
        for kind in reversed(range(6)):  # the sorted order of one-trial tasks
            unit = [0] * 6
            unit[kind] = 1
            per_trial += [tuple(unit)] * counts[kind]  # type: ignore[list-item]
        return cls(tuple(per_trial))

    def corrected_rate(
        self,
        *,
        method: str = "ppi++",
        sampling: str = "random",
        confidence: float = 0.95,
        n_resamples: int = 2000,
        seed: int = 0,
    ) -> CorrectedRate:
        """The corrected success rate of these trials: :func:`corrected_success_rate`."""
        _check_options(method, sampling)
        confidence = check_confidence(confidence)
        n_resamples = check_int("n_resamples", n_resamples, 1, 1_000_000)
        seed = check_int("seed", seed, -(2**63))
        return _corrected(self, method, sampling, confidence, (n_resamples, seed))

    @property
    def n_trials(self) -> int:
        """Judged trials."""
        return sum(self.totals)

    @property
    def n_labelled(self) -> int:
        """Labelled trials."""
        return sum(self.totals[:4])


def _sequence(name: str, values: Any) -> Sequence[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence, got {type(values).__name__}")
    return values


def _sorted_keys(groups: Mapping[Hashable, Any]) -> list[Hashable]:
    """Task ids in one canonical order (sorted; by their repr when they do not compare)."""
    try:
        return sorted(groups)  # type: ignore[type-var]
    except TypeError:
        return sorted(groups, key=repr)


# --------------------------------------------------------------------------------------------
# the sensitivity / specificity and the refusals every method shares
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Judge:
    """The judge on the labels: (weighted) sensitivity and specificity, or why not."""

    sensitivity: float
    specificity: float
    refusal: str


def _judge_on_labels(totals: _Counts, sampling: str) -> _Judge:
    a, b, c, d, u1, u0 = totals
    n = a + b + c + d
    if n < 2:
        return _Judge(_NAN, _NAN, f"{n} labelled trial(s): at least 2 are needed")
    if sampling == "stratified" and (a + c == 0 or b + d == 0):
        side = "pass" if a + c == 0 else "fail"
        return _Judge(_NAN, _NAN, f"stratified labels but none where the judge said {side}")
    # stratified: each label weighs 1 / its verdict's realised labelling rate
    w1 = (a + c + u1) / (a + c) if sampling == "stratified" else 1.0
    w0 = (b + d + u0) / (b + d) if sampling == "stratified" else 1.0
    if a + b == 0 or c + d == 0:
        which = "true pass" if a + b == 0 else "true fail"
        return _Judge(
            _NAN,
            _NAN,
            f"no labelled {which}: the judge's {'sensitivity' if a + b == 0 else 'specificity'} "
            "cannot be estimated",
        )
    sens = w1 * a / (w1 * a + w0 * b)
    spec = w0 * d / (w1 * c + w0 * d)
    if sens + spec <= 1.0:
        return _Judge(
            sens,
            spec,
            f"the judge is no better than chance on the labels: sensitivity {sens:.3f} + "
            f"specificity {spec:.3f} <= 1",
        )
    return _Judge(sens, spec, "")


# --------------------------------------------------------------------------------------------
# the variance: each trial's influence summed by task, small-sample factors counted in tasks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Linear:
    """An estimate and each trial kind's influence on it, to first order.

    ``lab[k]`` is the labelled-sampling influence of a labelled trial of kind ``k`` (its
    label's deviation from its stratum's mean, weighted), ``pop[k]`` the influence of any trial
    of kind ``k`` through the judged shares. ``stratum[k]`` names the stratum a labelled kind
    was sampled in and ``fraction[s]`` the share of that stratum's trials that are labelled.
    """

    point: float
    lab: tuple[float, ...]
    pop: tuple[float, ...]
    stratum: tuple[int, ...]
    fraction: tuple[float, ...]


def _tasks_holding(trials: JudgedTrials, lin: _Linear) -> list[int] | str:
    """Per stratum, the number of tasks holding a labelled trial of it (or why too few)."""
    held = [0] * len(lin.fraction)
    for cnt in trials.counts:
        for s in {lin.stratum[k] for k in range(4) if cnt[k]}:
            held[s] += 1
    if min(held) < 2:
        return (
            "the labels of a stratum lie in a single task: no spread to estimate a variance "
            "from (label trials of more tasks)"
        )
    return held


def _influences(
    trials: JudgedTrials, lin: _Linear, held: list[int]
) -> dict[_Counts, tuple[float, list[float]]]:
    """Per distinct task (its counts), its influence ``u_t`` on the estimate with the
    small-sample factors, and its labelled-sampling part per stratum (unscaled).

    ``u_t = Σ_i sqrt(c_s)·lab_i + sqrt(M/(M−1))·pop_i`` over the task's trials, with
    ``c_s = (1 − f_s)·m_s/(m_s − 1) + f_s·M/(M − 1)``: ``m_s`` the tasks holding a label of
    stratum ``s``, ``M`` all tasks, ``f_s`` the labelled fraction of the stratum.
    """
    n_strata = len(lin.fraction)
    big_m = len(trials.counts)
    pop_scale = math.sqrt(big_m / (big_m - 1))
    scale = []
    for s in range(n_strata):
        f = lin.fraction[s]
        scale.append(math.sqrt((1.0 - f) * held[s] / (held[s] - 1) + f * big_m / (big_m - 1)))
    out = {}
    for cnt in set(trials.counts):  # tasks with the same counts have the same influence
        parts = [0.0] * n_strata
        for k in range(4):
            parts[lin.stratum[k]] += cnt[k] * lin.lab[k]
        u = math.fsum(cnt[k] * lin.pop[k] for k in range(6)) * pop_scale
        out[cnt] = (u + math.fsum(parts[s] * scale[s] for s in range(n_strata)), parts)
    return out


def _variance(trials: JudgedTrials, lin: _Linear, held: list[int]) -> tuple[float, float]:
    """The variance of ``lin.point`` and its Satterthwaite degrees of freedom.

    ``Var = Σ_t u_t²`` over tasks (:func:`_influences`): with one trial a task this is exactly
    Cochran's unbiased stratified variance ``Σ_s W_s² (1 − f_s) s_s²/n_s + S²/N``, and at
    ``f_s = 1`` (all labelled) the CR1 clustered variance of the labels' mean. Degrees of
    freedom by Satterthwaite over the strata terms (``m_s − 1`` each) and the rest
    (``M − 1``), rounded down.
    """
    big_m = len(trials.counts)
    infl = _influences(trials, lin, held)
    total = 0.0
    strata = [0.0] * len(lin.fraction)
    for cnt, times in Counter(trials.counts).items():
        u, parts = infl[cnt]
        total += times * u * u
        for s, part in enumerate(parts):
            strata[s] += times * part**2 * (1.0 - lin.fraction[s]) * held[s] / (held[s] - 1)
    rest = max(total - sum(strata), 0.0)
    denom = sum(v * v / (held[s] - 1) for s, v in enumerate(strata)) + rest * rest / (big_m - 1)
    df = total * total / denom if denom > 0 else float(big_m - 1)
    # rounded down, as t tables are read (an integral df with rounding error stays itself)
    return total, float(max(1, math.floor(df + 1e-9)))


# --------------------------------------------------------------------------------------------
# the estimators
# --------------------------------------------------------------------------------------------


def _post_stratified(totals: _Counts) -> _Linear | str:
    """PPI++ with its tuned λ on a pass/fail verdict: the labels' mean within each verdict
    weighted by the verdict's share of all trials. Strata: 0 = judged pass, 1 = judged fail."""
    a, b, c, d, u1, u0 = totals
    big_n = sum(totals)
    n1, n0 = a + c, b + d
    if n1 < 2 or n0 < 2:
        side = "pass" if n1 < 2 else "fail"
        return (
            f"{min(n1, n0)} labelled trial(s) where the judge said {side}: PPI++ needs at least "
            "2 in each verdict (label more of them: sampling='stratified')"
        )
    big_n1, big_n0 = n1 + u1, n0 + u0
    y1, y0 = a / n1, b / n0
    w1, w0 = big_n1 / big_n, big_n0 / big_n
    point = w1 * y1 + w0 * y0
    # kinds a, b, c, d: (label, verdict) = (1, 1), (1, 0), (0, 1), (0, 0)
    lab = (w1 * (1 - y1) / n1, w0 * (1 - y0) / n0, w1 * (0 - y1) / n1, w0 * (0 - y0) / n0)
    e1, e0 = (y1 - point) / big_n, (y0 - point) / big_n
    return _Linear(point, lab, (e1, e0, e1, e0, e1, e0), (0, 1, 0, 1), (n1 / big_n1, n0 / big_n0))


def _rogan_gladen(totals: _Counts, judge: _Judge) -> _Linear:
    """Rogan-Gladen and its first-order form ``mean_lab(Y − f/J) + p̂/J`` (random labels)."""
    a, b, c, d, u1, _ = totals
    big_n, n = sum(totals), a + b + c + d
    j = judge.sensitivity + judge.specificity - 1.0
    p = (a + c + u1) / big_n
    point = (p + judge.specificity - 1.0) / j
    # g = Y − f/J per labelled kind, its labelled mean, and each kind's deviation
    g = (1 - 1 / j, 1.0, -1 / j, 0.0)
    g_mean = (a * g[0] + b * g[1] + c * g[2] + d * g[3]) / n
    lab = tuple((gk - g_mean) / n for gk in g)
    e1, e0 = (1 - p) / (j * big_n), (0 - p) / (j * big_n)
    return _Linear(point, lab, (e1, e0, e1, e0, e1, e0), (0, 0, 0, 0), (n / big_n,))


def _asymptotic_ppi(totals: _Counts, z: float) -> tuple[float, float, float]:
    """``ppi_py.ppi_mean_ci`` on binary data: (point, standard error, λ)."""
    a, b, c, d, u1, u0 = totals
    n, big_nu = a + b + c + d, u1 + u0
    big_n = n + big_nu
    ybar, fbar = (a + b) / n, (a + c) / n
    cov = a / n - ybar * fbar  # divisor n
    ones = a + c + u1
    var_all = (ones - ones * ones / big_n) / (big_n - 1)  # np.cov: divisor N - 1
    lam = 0.0
    if big_nu and var_all > 0:
        lam = min(max(cov / ((1 + n / big_nu) * var_all), 0.0), 1.0)
    pu = u1 / big_nu if big_nu else 0.0
    point = lam * pu + ybar - lam * fbar
    # the divisor-n variance of g = Y − λ f over the labelled kinds, summed as deviations
    g, counts = (1 - lam, 1.0, -lam, 0.0), (a, b, c, d)
    g_mean = math.fsum(k * x for k, x in zip(counts, g)) / n
    var_g = math.fsum(k * (x - g_mean) ** 2 for k, x in zip(counts, g)) / n
    var = var_g / n + (lam * lam * pu * (1 - pu) / big_nu if big_nu else 0.0)
    return point, math.sqrt(var), lam


def _rg_point(totals: _Counts, sampling: str) -> float:
    """Rogan-Gladen's unclipped estimate, NaN where it is refused (a bootstrap replicate)."""
    judge = _judge_on_labels(totals, sampling)
    if judge.refusal:
        return _NAN
    p = (totals[_Y1F1] + totals[_Y0F1] + totals[_UNL1]) / sum(totals)
    return (p + judge.specificity - 1.0) / (judge.sensitivity + judge.specificity - 1.0)


def _bootstrap(
    trials: JudgedTrials, sampling: str, confidence: float, n_resamples: int, seed: int
) -> tuple[list[float], int]:
    """Rogan-Gladen on ``n_resamples`` resamples of the tasks (labelled and unlabelled trials
    together, each task with all its trials), seeded; and the number of labelled tasks."""
    tasks = trials.counts
    rng = random.Random(seed)
    reps = []
    for _ in range(n_resamples):
        draw = rng.choices(tasks, k=len(tasks))
        totals = tuple(sum(cnt[j] for cnt in draw) for j in range(6))
        reps.append(_rg_point(totals, sampling))  # type: ignore[arg-type]
    return reps, sum(1 for cnt in tasks if sum(cnt[:4]))


# --------------------------------------------------------------------------------------------
# the public function
# --------------------------------------------------------------------------------------------


def _check_options(method: Any, sampling: Any) -> None:
    if method not in JUDGED_METHODS:
        raise ValueError(f"method must be one of {list(JUDGED_METHODS)}, got {short_repr(method)}")
    if sampling not in SAMPLING_DESIGNS:
        raise ValueError(
            f"sampling must be one of {list(SAMPLING_DESIGNS)}, got {short_repr(sampling)}"
        )
    if method in ("ppi++-asymptotic", "labels-only") and sampling != "random":
        raise ValueError(
            f"method={method!r} assumes the labels are a simple random sample of the trials; "
            "with stratified labels use 'ppi++' or 'rogan-gladen'"
        )


def corrected_success_rate(
    verdicts: Sequence[Any],
    labels: Sequence[Any],
    *,
    tasks: Sequence[Hashable] | None = None,
    method: str = "ppi++",
    sampling: str = "random",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> CorrectedRate:
    """The success rate of judged trials, corrected for the judge's errors with human labels.

    See the module documentation for the methods, the refusals and how repeated trials of a
    task are treated.

    Args:
        verdicts: The judge's verdict (a bool) on every trial.
        labels: A person's verdict (a bool) on the same trial, ``None`` where not labelled.
        tasks: The task of each trial (tasks are clusters); ``None``: every trial its own.
        method: One of :data:`JUDGED_METHODS` (default ``"ppi++"``).
        sampling: ``"random"`` or ``"stratified"`` (by the judge's verdict).
        confidence: Two-sided coverage of the interval.
        n_resamples: Bootstrap replicates (``"rogan-gladen-bootstrap"``).
        seed: Bootstrap seed.

    Returns:
        A :class:`CorrectedRate`; a refused estimate is NaN with the reason, never an error.

    Raises:
        TypeError, ValueError: malformed input (a verdict that is not a bool, lengths that
            differ, an unknown method).

    Example:
        >>> judge = [True] * 6 + [False] * 4          # the judge passes 6 of 10 trials
        >>> human = [True, True, False, None, None, None, False, False, None, None]
        >>> r = corrected_success_rate(judge, human)
        >>> r.judged_rate, round(r.value, 4)            # 6/10 * 2/3 + 4/10 * 0/2
        (0.6, 0.4)
        >>> r.method, r.refused
        ('ppi++', False)
    """
    _check_options(method, sampling)
    trials = JudgedTrials.from_trials(verdicts, labels, tasks)
    return trials.corrected_rate(
        method=method,
        sampling=sampling,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def _corrected(
    trials: JudgedTrials,
    method: str,
    sampling: str,
    confidence: float,
    resampling: tuple[int, int],
) -> CorrectedRate:
    """:func:`corrected_success_rate` on checked options."""
    totals = trials.totals
    judge = _judge_on_labels(totals, sampling)
    base = _Base(trials, method, sampling, confidence, judge)
    if judge.refusal:
        return base.refused(judge.refusal)
    if method == "labels-only":
        return _labels_only(base)
    if method == "ppi++-asymptotic":
        return _ppi_asymptotic(base)
    if method == "ppi++" or sampling == "stratified":
        lin = _post_stratified(totals)
        if isinstance(lin, str):
            return base.refused(lin)
        if method == "ppi++":
            return base.linear(lin, {"lam": _ppi_lambda(totals)})
    else:
        lin = _rogan_gladen(totals, judge)
    if method == "rogan-gladen-bootstrap":
        n_resamples, seed = resampling
        reps, m_lab = _bootstrap(trials, sampling, confidence, n_resamples, seed)
        return base.bootstrap(lin.point, reps, m_lab, n_resamples, seed)
    return base.linear(lin, {})


def _ppi_parts(trials: JudgedTrials, sampling: str) -> tuple[_Linear, list[int]] | str:
    """``ppi++``'s first-order form and the tasks holding each verdict's labels, or why not."""
    judge = _judge_on_labels(trials.totals, sampling)
    if judge.refusal:
        return judge.refusal
    lin = _post_stratified(trials.totals)
    if isinstance(lin, str):
        return lin
    held = _tasks_holding(trials, lin)
    return held if isinstance(held, str) else (lin, held)


def corrected_difference(
    current: JudgedTrials,
    baseline: JudgedTrials,
    *,
    sampling: str = "random",
    baseline_sampling: str | None = None,
    confidence: float = 0.95,
) -> Interval:
    """The interval of ``current − baseline`` corrected success rates (``ppi++`` for both),
    paired by task where both runs hold it.

    Each run's per-task influences (:func:`corrected_success_rate`'s variance) are subtracted
    task by task, ``Var = Σ_t (u_t − v_t)²`` (a task one run lacks counts with 0 there), so
    trials of a shared task that move together cancel as in a paired test; runs without task
    ids (``keys`` ``None``) are independent samples (``Var = V_current + V_baseline``). Student's
    t with the smaller of the two runs' degrees of freedom. Each run is corrected by its own
    labels, so the two may have different judges. A refusal of either run gives NaN bounds
    with its reason.

    Example:
        >>> base = JudgedTrials.from_trials([True] * 6 + [False] * 4, [True, True, False, None,
        ...     None, None, False, False, None, None], tasks=list(range(10)))
        >>> iv = corrected_difference(base, base)
        >>> iv.point, iv.low, iv.high
        (0.0, 0.0, 0.0)
    """
    confidence = check_confidence(confidence)
    for name, sample in (("sampling", sampling), ("baseline_sampling", baseline_sampling)):
        if sample is not None and sample not in SAMPLING_DESIGNS:
            raise ValueError(f"{name} must be one of {list(SAMPLING_DESIGNS)}, got {short_repr(sample)}")  # fmt: skip
    method = "ppi++-difference"
    sides = []
    for who, trials, sample in (
        ("current run", current, sampling),
        ("baseline", baseline, baseline_sampling or sampling),
    ):
        if not isinstance(trials, JudgedTrials):
            raise TypeError(f"the {who} must be JudgedTrials, got {type(trials).__name__}")
        parts = _ppi_parts(trials, sample)
        if isinstance(parts, str):
            return Interval(_NAN, _NAN, _NAN, confidence, method, f"the {who}: refused: {parts}")
        lin, held = parts
        var, df = _variance(trials, lin, held)
        infl = _influences(trials, lin, held)
        per_task = {}
        if trials.keys is not None:
            per_task = {key: infl[cnt][0] for key, cnt in zip(trials.keys, trials.counts)}
        sides.append((lin.point, var, df, per_task))
    (p1, v1, df1, u1), (p2, v2, df2, u2) = sides
    shared = set(u1) & set(u2)
    if shared:
        var = math.fsum((u1.get(k, 0.0) - u2.get(k, 0.0)) ** 2 for k in set(u1) | set(u2))
    else:
        var = v1 + v2
    reason = f"paired on {len(shared)} shared task(s)" if shared else "independent runs"
    return t_interval(p1 - p2, math.sqrt(var), min(df1, df2), confidence, method, bounds=(-1.0, 1.0), reason=reason)  # fmt: skip


def _ppi_lambda(totals: _Counts) -> float:
    """PPI++'s λ = Cov(Y, f) / ((1 + n/N_u) Var(f)) with both moments on the labelled pairs:
    ``(N_u / N) · (ȳ_pass − ȳ_fail)``."""
    a, b, c, d, u1, u0 = totals
    return (u1 + u0) / sum(totals) * (a / (a + c) - b / (b + d))


@dataclass(frozen=True)
class _Base:
    """What every result of one call shares, and how each method's result is written."""

    trials: JudgedTrials
    method: str
    sampling: str
    confidence: float
    judge: _Judge

    def _detail(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        a, b, c, d, u1, u0 = self.trials.totals
        return {
            "sampling": self.sampling,
            "labelled_by_verdict": {"pass": a + c, "fail": b + d},
            "trials_by_verdict": {"pass": a + c + u1, "fail": b + d + u0},
            "labelled_tasks": sum(1 for cnt in self.trials.counts if sum(cnt[:4])),
            **extra,
        }

    def result(
        self, value: float, interval: Interval, reason: str, extra: Mapping[str, Any]
    ) -> CorrectedRate:
        a, _, c, _, u1, _ = self.trials.totals
        n_trials = self.trials.n_trials
        raw = extra.get("raw_value", value)
        clipped = not math.isnan(raw) and not 0.0 <= raw <= 1.0
        if clipped:
            reason = f"the estimate {raw:.4f} lies outside [0, 1], clipped to {value:g}" + (
                f"; {reason}" if reason else ""
            )
        return CorrectedRate(
            value=value,
            interval=interval,
            method=self.method,
            judged_rate=(a + c + u1) / n_trials if n_trials else _NAN,
            n_trials=n_trials,
            n_labelled=self.trials.n_labelled,
            n_tasks=len(self.trials.counts),
            sensitivity=self.judge.sensitivity,
            specificity=self.judge.specificity,
            clipped=clipped,
            refused=math.isnan(value),
            reason=reason or self._summary(value, interval),
            detail=ReadOnlyDict(self._detail(extra)),
        )

    def _summary(self, value: float, interval: Interval) -> str:
        return (
            f"{self.method}: corrected success {value:.4f}, {interval.confidence:.0%} interval "
            f"[{interval.low:.4f}, {interval.high:.4f}] from {self.trials.n_labelled} labels on "
            f"{self.trials.n_trials} judged trials"
        )

    def refused(self, why: str) -> CorrectedRate:
        iv = Interval(_NAN, _NAN, _NAN, self.confidence, self.method, why)
        return self.result(_NAN, iv, f"refused: {why}", {})

    def linear(self, lin: _Linear, extra: Mapping[str, Any]) -> CorrectedRate:
        held = _tasks_holding(self.trials, lin)
        if isinstance(held, str):
            return self.refused(held)
        var, df = _variance(self.trials, lin, held)
        se = math.sqrt(var)
        iv = t_interval(lin.point, se, df, self.confidence, f"{self.method}-t(df={df:.0f})")
        value = min(max(lin.point, 0.0), 1.0)
        iv = _clip(iv, value)
        info = {"se": se, "df": df, "raw_value": lin.point, **extra}
        return self.result(value, iv, "", info)

    def bootstrap(
        self, point: float, reps: list[float], m_lab: int, n_resamples: int, seed: int
    ) -> CorrectedRate:
        method = f"rogan-gladen-bootstrap(n_resamples={n_resamples}, seed={seed})"
        iv = percentile_interval(point, reps, self.confidence, method, n=m_lab)
        value = min(max(point, 0.0), 1.0)
        iv = _clip(iv, value)
        undefined = sum(1 for r in reps if math.isnan(r))
        return self.result(value, iv, "", {"raw_value": point, "undefined_replicates": undefined})


def _clip(iv: Interval, value: float) -> Interval:
    """The interval of a rate within [0, 1], around the (clipped) estimate."""
    if not iv.is_defined:
        return Interval(value, iv.low, iv.high, iv.confidence, iv.method, iv.reason)
    low = min(max(iv.low, 0.0), value)
    high = max(min(iv.high, 1.0), value)
    return Interval(value, low, high, iv.confidence, iv.method, iv.reason)


def _labels_only(base: _Base) -> CorrectedRate:
    """The labelled trials alone: the clustered interval of their mean."""
    tasks = [cnt for cnt in base.trials.counts if sum(cnt[:4])]
    iv = ratio_interval(
        [cnt[_Y1F1] + cnt[_Y1F0] for cnt in tasks],
        [sum(cnt[:4]) for cnt in tasks],
        base.confidence,
        bounds=_BOUNDS,
    )
    iv = Interval(iv.point, iv.low, iv.high, iv.confidence, f"labels-only-{iv.method}", iv.reason)
    return base.result(iv.point, iv, "", {})


def _ppi_asymptotic(base: _Base) -> CorrectedRate:
    """``ppi_py.ppi_mean_ci`` exactly (independent trials, random labels)."""
    if len(base.trials.counts) != base.trials.n_trials:
        raise ValueError(
            "method='ppi++-asymptotic' reproduces ppi-python, which treats every trial as "
            "independent; with repeated trials of a task use method='ppi++'"
        )
    z = two_sided_z(base.confidence)
    point, se, lam = _asymptotic_ppi(base.trials.totals, z)
    iv = Interval(point, point - z * se, point + z * se, base.confidence, "ppi++-asymptotic-z")
    value = min(max(point, 0.0), 1.0)
    extra = {"se": se, "lam": lam, "raw_value": point, "low_unclipped": iv.low, "high_unclipped": iv.high}  # fmt: skip
    return base.result(value, _clip(iv, value), "", extra)
