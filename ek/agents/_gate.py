"""The variance-aware agent regression gate (DESIGN rule 7).

Agent metrics are random variables: a point comparison flags noise and misses real regressions.
:func:`agent_regression_gate` tests the **difference** ``current - baseline`` with both runs'
uncertainty and declares a regression iff the *upper* bound of the change (in the metric's
good direction) is below ``-tolerance``:

* **success rate**: Newcombe's hybrid score interval from the raw counts
  (:func:`~ek.agents.reliability.newcombe_difference`, Newcombe 1998);
* **pass^k** (k = the largest k both runs support, when >= 2): the mean of per-task estimators,
  so the two runs' clustered standard errors are combined (Welch's t interval,
  :func:`ek.stats.difference_interval`);
* **metrics** both runs scored: the difference of each metric's own ratio-of-sums aggregate,
  tasks as the unit (:mod:`ek.agents._run.resample`), by a percentile bootstrap over tasks
  (Efron & Tibshirani 1993) or the cluster-robust standard error with tasks as clusters
  (Miller 2024): ``interval="auto"`` (default) takes the bootstrap up to
  :data:`ek.stats.BOOTSTRAP_MAX_TASKS` (1,000) tasks and the clustered one above, where
  resampling in pure Python is slow; ``"bootstrap"`` or ``"clustered"`` ask for one. The other
  method is recorded beside (``detail["cross_check"]``) where it was computed (the clustered
  one always, for a metric that declares its sums; the bootstrap up to 1,000 tasks or on
  request). The direction comes from ``detail["higher_is_better"]`` first
  (:func:`ek.harness.metric_direction`), so a **cost** regression is caught.

Every interval is a function of the trials, not of the order the tasks are listed in: the
tasks are resampled in sorted order (since issue 31; the bootstrap used to follow the order the
runs listed them in, e.g. an Inspect log's completion order). Normal-approximation intervals use
Student's t (``m - 1`` degrees of freedom paired, Welch-Satterthwaite's independent; sample
variances with the n - 1 convention), since issue 31 (they used the normal quantile: a little
narrower at a few dozen tasks).

Not "our interval vs the baseline's point" (the baseline is noisy too: one flake against a lucky
baseline reads as a confident regression), and not "do the two intervals overlap" (that is
roughly a 0.5% test, not a 5% one, and goes blind to real drops). ``bench/gate_power.py``
measures both against this gate.

A lower point estimate whose interval still includes zero passes with an **underpowered**
warning: it is not evidence of a regression, but not a clean pass either.

A check whose change **cannot be estimated** (a Cost-of-Pass that is NaN because one trial's
dollars are unknown; ``inf - inf`` when neither run has a success) is ``"undefined"`` and
**fails** the gate, naming why: a run whose spend tripled must not pass because one price was
missing. ``allow_undefined=[name]`` (``ek-agents gate --allow-undefined NAME``) accepts it with
a warning. The scalar :func:`ek.harness.regression_gate` treats an undefined change the same way.

**Stratified (paired) variant** (``stratified=True``): on the tasks both runs share, the
per-task differences ``d_t = rate_current(t) - rate_baseline(t)`` (and per-task pass^k
differences) are averaged and given the interval ``mean(d) ± t(T - 1)·sd(d)/sqrt(T)``
(:func:`paired_difference`); a metric's bootstrap resamples the shared tasks jointly, and its
clustered interval takes the per-task differences of the two runs' influences. Pairing removes
the between-task variance of task difficulty, which is most of the variance in a heterogeneous
suite, so the test has more power. **Assumption:** tasks are the sampling units (the per-task
differences are independent across tasks, as for a random sample of tasks from the population
the suite stands for), and the estimand is the task-weighted mean rate (equal to the pooled
rate when every task has the same number of trials). Tasks only one run has are left out, with
a warning: a stratified gate always compares the shared tasks (it implies
``tasks="intersect"``).

**Task sets.** The runs must have run the same tasks (those with at least one trial): a 1-task
baseline against a 30-task run, or two runs over different task sets, are different
experiments, and the default ``tasks="same"`` refuses them, naming how many tasks differ.
``tasks="intersect"`` (``ek-agents gate --tasks intersect``) compares the tasks both runs ran,
with a warning naming how many were left out. With ``allow_unscored=True`` a task left out of a
run because none of its samples was scored is expected to be missing: the shared tasks are
compared, with a warning. :attr:`GateResult.n_tasks` says how many tasks were compared.

Refusals (:class:`GateRefusedError`, a ``ValueError``): an empty current run or an empty
baseline (with no trials every bound is maximally uncertain, so nothing could ever fail: an
empty baseline would be a permanent free pass), a run with **unscored samples**
(:attr:`~ek.agents._run.summary.RunSummary.unscored`; a gate over the scored ones alone could pass a
run that failed to score) unless ``allow_unscored=True``, and runs whose simulator,
suite_version or scaffold differ (:meth:`~ek.agents.base.RunProvenance.incompatibilities`; a
changed simulator is compared with a warning when ``allow_simulator_change=True``), and
runs over different task sets (unless ``tasks="intersect"``), and runs whose metrics of one
name were **configured differently** (the fingerprints both recorded,
:attr:`~ek.agents._run.summary.RunSummary.metric_configs`, differ: a Cost-of-Pass priced at 1/2
dollars per million tokens against one priced at 100/200 is not a regression, it is another
measure) unless ``allow_metric_changes=True`` (``ek-agents gate --allow-metric-changes``),
and runs whose success **different judges** decided (the checkers both runs recorded,
:attr:`~ek.agents.harness.RunSummary.checker`, differ and either is an LLM judge,
:mod:`ek.agents._checker`: a judge's errors are its own, so the change in the judged rate mixes
the agents' change with the judges'), unless each run has its own labels (``labels`` and
``baseline_labels``: the rates corrected for each judge's errors are compared) or
``allow_judge_change=True`` (``ek-agents gate --allow-judge-change``), both with a warning
naming the two judges; a run that does not record its checker (a baseline saved before ek
recorded it) against a judged one is compared, with a warning.

Example:
    >>> from ek.agents.base import RunProvenance
    >>> from ek.agents.harness import RunSummary
    >>> run = RunProvenance(agent="bot", suite_version="v1")
    >>> base = RunSummary(run, k=1, counts={f"t{i}": (1, int(i < 48)) for i in range(60)})
    >>> cur = RunSummary(run, k=1, counts={f"t{i}": (1, int(i < 30)) for i in range(60)})
    >>> g = agent_regression_gate(cur, base)
    >>> g.passed, g.checks[0].verdict, round(g.checks[0].interval.high, 3)
    (False, 'regression', -0.13)
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ek._validate import is_number
from ek.base import ReadOnlyDict
from ek.harness import undefined_policy
from ek.jsonio import to_json_safe
from ek.stats import (
    Interval,
    choose_interval,
    clustered_se,
    difference_interval,
    newcombe_difference,
    t_interval,
)

from ._checker import judge_change, unrecorded_judge
from ._fingerprint import config_diff, same_config
from ._run.resample import MetricDifference, by_method
from ._run.summary import MetricSummary, RunSummary
from .reliability import pass_hat_k

__all__ = [
    "GateCheck",
    "GateRefusedError",
    "GateResult",
    "agent_regression_gate",
    "paired_difference",
]

_NAN = math.nan


class GateRefusedError(ValueError):
    """The gate cannot compare these runs (empty, or different experiments)."""


@dataclass(frozen=True)
class GateCheck:
    """One quantity the gate compared.

    Attributes:
        name: ``"success_rate"``, ``"pass^k"`` or the metric's name.
        kind: ``"success_rate"``, ``"pass_hat_k"`` or ``"metric"``.
        interval: The interval of ``current - baseline`` in the quantity's own units.
        current: The current run's value.
        baseline: The baseline's value.
        higher_is_better: The quantity's direction.
        tolerance: The allowed worsening.
        verdict: ``"pass"``, ``"within_tolerance"``, ``"underpowered"`` (a worse point estimate
            with an interval containing no change: passes, with a warning), ``"regression"``, or
            ``"undefined"`` (the difference could not be estimated: **fails**, unless allowed).
        reason: Human-readable explanation (for ``"undefined"``: why, and how to allow it).
        detail: Machine-readable extras (counts, k, tasks used, method).
        allowed: An ``"undefined"`` check the caller allowed (``allow_undefined``): passes,
            with a warning.
    """

    name: str
    kind: str
    interval: Interval
    current: float
    baseline: float
    higher_is_better: bool
    tolerance: float
    verdict: str
    reason: str
    detail: Mapping[str, Any] = field(default_factory=dict)
    allowed: bool = False

    @property
    def regression(self) -> bool:
        """True when this check is a statistically supported regression."""
        return self.verdict == "regression"

    @property
    def failed(self) -> bool:
        """True when this check fails the gate: a regression, or an undefined change not allowed."""
        return self.regression or (self.verdict == "undefined" and not self.allowed)

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON-ready dict."""
        return {
            "name": self.name,
            "kind": self.kind,
            "interval": self.interval.to_dict(),
            "current": to_json_safe(self.current),
            "baseline": to_json_safe(self.baseline),
            "higher_is_better": self.higher_is_better,
            "tolerance": self.tolerance,
            "verdict": self.verdict,
            "regression": self.regression,
            "failed": self.failed,
            "allowed": self.allowed,
            "reason": self.reason,
            "detail": to_json_safe(dict(self.detail)),
        }


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict: ``passed`` iff no check failed (a regression, or an undefined change
    that was not allowed); every check listed. ``n_tasks``: how many tasks were compared."""

    passed: bool
    checks: tuple[GateCheck, ...]
    warnings: tuple[str, ...]
    reason: str
    tolerance: float
    confidence: float
    stratified: bool
    current: Mapping[str, Any]
    baseline: Mapping[str, Any]
    n_tasks: int = 0

    @property
    def regressions(self) -> tuple[GateCheck, ...]:
        """The checks that regressed."""
        return tuple(c for c in self.checks if c.regression)

    @property
    def failures(self) -> tuple[GateCheck, ...]:
        """The checks that fail the gate (regressions and undefined changes not allowed)."""
        return tuple(c for c in self.checks if c.failed)

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON-ready dict."""
        return {
            "passed": self.passed,
            "reason": self.reason,
            "tolerance": self.tolerance,
            "confidence": self.confidence,
            "stratified": self.stratified,
            "n_tasks": self.n_tasks,
            "checks": [c.to_dict() for c in self.checks],
            "warnings": list(self.warnings),
            "current": dict(self.current),
            "baseline": dict(self.baseline),
        }


# ----------------------------------------------------------------------------- intervals


def paired_difference(
    current: Sequence[float], baseline: Sequence[float], confidence: float = 0.95
) -> Interval:
    """Interval for the mean of paired differences ``current[t] - baseline[t]``.

    ``mean(d) ± t(T - 1) * sd(d) / sqrt(T)`` with the sample standard deviation (the n - 1
    convention) of the per-task differences: the paired t interval (e.g. Casella & Berger,
    "Statistical Inference", 2nd ed., §10.4), which is the clustered interval of the difference
    with tasks as clusters (:func:`ek.stats.clustered_se`). For values in [0, 1] the bounds are
    clipped to [-1, 1]. Fewer than two pairs: maximally uncertain bounds, with a reason.

    Example:
        >>> iv = paired_difference([1.0, 0.5, 0.0, 1.0], [1.0, 1.0, 0.5, 1.0])
        >>> round(iv.point, 4), round(iv.low, 4), round(iv.high, 4)
        (-0.25, -0.7093, 0.2093)
    """
    if len(current) != len(baseline):
        raise ValueError(
            f"paired_difference needs one baseline value per current value, got "
            f"{len(current)} and {len(baseline)}"
        )
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    cur = [float(x) for x in current]
    base = [float(x) for x in baseline]
    bounds = (-1.0, 1.0) if all(0.0 <= v <= 1.0 for v in cur + base) else None
    d = [a - b for a, b in zip(cur, base)]
    m = len(d)
    method = f"paired-task-difference-t(df={max(m - 1, 0)})"
    if not d:
        return t_interval(_NAN, _NAN, 1, confidence, method, bounds=bounds, reason="no shared task")
    reason = "one shared task: no variance estimate" if m < 2 else ""
    se = clustered_se([x / m for x in d])
    return t_interval(
        math.fsum(d) / m, se, max(m - 1, 1), confidence, method, bounds=bounds, reason=reason
    )


# ----------------------------------------------------------------------------- verdicts


def _undefined_why(iv: Interval, cur: float, base: float) -> str:
    if math.isinf(cur) and math.isinf(base) and cur == base:
        return f"both runs are {cur:g} (e.g. no success in either run): {cur:g} - {base:g} is undefined"
    sides = [w for w, v in (("current", cur), ("baseline", base)) if math.isnan(v)]
    if sides:
        return f"the {' and '.join(sides)} value is undefined (NaN, e.g. an unknown cost)"
    return iv.reason or "undefined value"


def _verdict(
    name: str,
    kind: str,
    iv: Interval,
    values: tuple[float, float],
    hib: bool,
    tol: float,
    detail: Mapping[str, Any],
    warnings: list[str],
    allowed: bool = False,
) -> GateCheck:
    cur, base = values
    # the change in the good direction: its upper bound decides
    if hib:
        imp_point, imp_high = iv.point, iv.high
    else:
        imp_point, imp_high = -iv.point, -iv.low
    ci = f"{iv.point:+.4g} [{iv.low:+.4g}, {iv.high:+.4g}]"
    better = "higher" if hib else "lower"
    if math.isnan(imp_point) or math.isnan(imp_high):
        verdict = "undefined"
        why = _undefined_why(iv, cur, base)
        if allowed:
            reason = f"change cannot be estimated ({why}); allowed by allow_undefined: not gated"
            warnings.append(f"{name}: {reason}")
        else:
            reason = (
                f"change cannot be estimated ({why}): an unmeasurable change cannot show that "
                f"nothing regressed, so the gate fails; accept it with allow_undefined="
                f"[{name!r}] (ek-agents gate --allow-undefined {name})"
            )
    elif imp_high < -tol:
        verdict = "regression"
        reason = (
            f"regression: change {ci} ({better} is better); the whole interval is worse than "
            f"the tolerance {tol:g}"
        )
    elif imp_high < 0:
        verdict = "within_tolerance"
        reason = f"worse, but within the tolerance {tol:g}: change {ci}"
    elif imp_point < 0:
        verdict = "underpowered"
        reason = (
            f"underpowered: the point estimate is worse ({iv.point:+.4g}) but the interval "
            f"[{iv.low:+.4g}, {iv.high:+.4g}] includes no change; not evidence of a regression, "
            "not a clean pass: run more trials or tasks"
        )
        warnings.append(f"{name}: {reason}")
    else:
        verdict = "pass"
        reason = f"no regression: change {ci} ({better} is better)"
    return GateCheck(
        name,
        kind,
        iv,
        cur,
        base,
        hib,
        tol,
        verdict,
        reason,
        ReadOnlyDict(detail),
        allowed=allowed and verdict == "undefined",
    )


def _as_summary(x: Any, label: str, success_scorer: str | None = None) -> RunSummary:
    if isinstance(x, RunSummary):
        return x
    summary = getattr(x, "summary", None)
    if callable(summary):
        s = summary()
        if isinstance(s, RunSummary):
            return s
    if isinstance(x, (str, os.PathLike)):
        from ._run.load import load_run

        return load_run(x, success_scorer=success_scorer, episodes=False)
    raise TypeError(
        f"{label} must be a SuiteResult, a RunSummary or a path to a run, got {type(x).__name__}"
    )


def _allow_set(allowed: bool | frozenset[str]) -> Callable[[str], bool]:
    if isinstance(allowed, bool):
        return lambda name: allowed
    return lambda name: name in allowed


def _check_arguments(
    tolerance: float, confidence: float, tolerances: Mapping[str, float] | None
) -> dict[str, float]:
    if not is_number(tolerance):
        raise TypeError(f"tolerance must be a number >= 0, got {tolerance!r}")
    if not tolerance >= 0 or math.isinf(tolerance):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    tols = dict(tolerances or {})
    for name, t in tols.items():
        if not is_number(t) or not t >= 0:
            raise ValueError(f"tolerances[{name!r}] must be a number >= 0, got {t!r}")
    return {name: float(t) for name, t in tols.items()}


def _check_choices(tasks: str, interval: str) -> None:
    if tasks not in _TASK_POLICIES:
        raise ValueError(f"tasks must be one of {list(_TASK_POLICIES)}, got {tasks!r}")
    choose_interval(interval, 0)  # raises for a method it does not know


def _warn_unused_allowances(
    policy: bool | frozenset[str], checks: Sequence[GateCheck], warnings: list[str]
) -> None:
    if not isinstance(policy, bool):
        unknown = sorted(policy - {c.name for c in checks})
        if unknown:
            warnings.append(f"allow_undefined names no check of this gate: {unknown}")


def _refuse(
    cur: RunSummary,
    base: RunSummary,
    allow_unscored: bool,
    allow_simulator_change: bool,
    warnings: list[str],
) -> None:
    for label, s in (("baseline", base), ("current run", cur)):
        if s.unscored is None or s.unscored.n == 0:
            continue
        if not allow_unscored or s.is_empty:
            raise GateRefusedError(
                f"the {label} has {s.unscored}. A gate over the scored samples alone could pass "
                "a run that failed to score; fix the scoring (or name the scorer that decides "
                "success: --success-scorer), or gate the scored samples only with "
                "allow_unscored=True (ek-agents gate --allow-unscored)"
            )
        warnings.append(f"{label}: {s.unscored}; gated on the scored samples only")
    if base.is_empty:
        raise GateRefusedError(
            "the baseline has no trial: with no data every bound is maximally uncertain, so an "
            "empty baseline would pass every future run; re-create it from a real run"
        )
    if cur.is_empty:
        raise GateRefusedError(
            "the current run has no trial: an empty run would pass any gate; nothing was measured"
        )
    _refuse_incomparable(cur, base, allow_simulator_change, warnings)


def _refuse_incomparable(
    cur: RunSummary, base: RunSummary, allow_simulator_change: bool, warnings: list[str]
) -> None:
    """Refuse runs whose simulator, suite version or scaffold differ (a changed simulator
    only warns when allowed)."""
    bad = cur.run.incompatibilities(base.run)
    if allow_simulator_change and any(key == "simulator" for key, _, _ in bad):
        sims = next((theirs, mine) for key, mine, theirs in bad if key == "simulator")
        warnings.append(
            f"the user simulator changed ({sims[0]!r} (baseline) -> {sims[1]!r} (current)), "
            "compared anyway: a change in the rate may be the simulator's"
        )
        bad = [b for b in bad if b[0] != "simulator"]
    if bad:
        what = ", ".join(
            f"{key} {theirs!r} (baseline) vs {mine!r} (current)" for key, mine, theirs in bad
        )
        raise GateRefusedError(
            f"the runs are not comparable: {what}. A different simulator, suite version or "
            "scaffold is a different experiment; re-baseline instead (a changed simulator: "
            "compare anyway with allow_simulator_change=True, ek-agents gate "
            "--allow-simulator-change)"
        )


def _refuse_metric_changes(
    cur: RunSummary, base: RunSummary, allowed: bool, warnings: list[str]
) -> None:
    """Refuse runs whose metrics of one name were configured differently (unless allowed)."""
    a, b = base.metric_configs or {}, cur.metric_configs or {}
    changed = [
        f"{name!r}: {'; '.join(config_diff(a[name], b[name], limit=3)) or 'another configuration'}"
        for name in sorted(set(a) & set(b))
        if not same_config(a[name], b[name])
    ]
    if not changed:
        return
    what = "; ".join(changed)
    if not allowed:
        raise GateRefusedError(
            f"the runs' metrics are configured differently (baseline -> current: {what}). "
            "A metric whose settings changed measures something else (its change would read "
            "as a regression or an improvement); re-baseline, or compare anyway with "
            "allow_metric_changes=True (ek-agents gate --allow-metric-changes)"
        )
    warnings.append(f"metrics configured differently, compared anyway: {what}")


def _refuse_judge_change(
    cur: RunSummary, base: RunSummary, allowed: bool, labelled: bool, warnings: list[str]
) -> None:
    """Refuse runs whose success different judges decided, unless each run has labels (the
    corrected rates are compared) or ``allowed``; warn when one run's checker is unknown and
    the other was judged."""
    unknown = unrecorded_judge(base.checker, cur.checker)
    if unknown is not None:
        warnings.append(unknown)
    change = judge_change(base.checker, cur.checker)
    if change is None:
        return
    if labelled:
        warnings.append(
            f"different judges decided the runs ({change}); compared on the success rates "
            "corrected with each run's labels"
        )
    elif allowed:
        warnings.append(
            f"different judges decided the runs ({change}), compared anyway "
            "(allow_judge_change): a change in the judged rate may be the judges'"
        )
    else:
        raise GateRefusedError(
            f"the runs' success was decided by different judges ({change}). A judge's errors "
            "are its own, so a change in the judged rate mixes the agents' change with the "
            "judges'; label a sample of each run's trials and compare the corrected rates "
            "(labels=..., baseline_labels=...; ek-agents gate --labels FILE --baseline-labels "
            "FILE), re-baseline with the new judge, or compare the judged rates anyway with "
            "allow_judge_change=True (ek-agents gate --allow-judge-change)"
        )


def _shared_tasks(
    cur_counts: Mapping[str, tuple[int, int]],
    base_counts: Mapping[str, tuple[int, int]],
    warnings: list[str],
) -> list[str]:
    shared = sorted(set(cur_counts) & set(base_counts))
    only_c = sorted(set(cur_counts) - set(base_counts))
    only_b = sorted(set(base_counts) - set(cur_counts))
    if only_c or only_b:
        warnings.append(
            f"stratified: {len(only_c)} task(s) only in current and {len(only_b)} only in the "
            f"baseline are left out (e.g. {(only_c + only_b)[:5]})"
        )
    if len(shared) < 2:
        raise GateRefusedError(
            f"stratified comparison needs at least 2 tasks both runs ran, got {len(shared)}"
        )
    return shared


_TASK_POLICIES = ("same", "intersect")


def _plural(n: int) -> str:
    return f"{n} task" if n == 1 else f"{n} tasks"


def _compared_tasks(
    cur_counts: dict[str, tuple[int, int]],
    base_counts: dict[str, tuple[int, int]],
    tasks: str,
    intersect_ok: bool,
    warnings: list[str],
) -> None:
    """Apply the task-set policy: refuse differing task sets (``"same"``), or keep the shared
    tasks of both runs in place (``"intersect"``, or ``intersect_ok``), with a warning."""
    shared = set(cur_counts) & set(base_counts)
    if len(shared) == len(cur_counts) == len(base_counts):
        return
    nb, nc, ns = len(base_counts), len(cur_counts), len(shared)
    sizes = f"baseline has {_plural(nb)}, current {nc}; {ns} shared"
    if tasks == "same" and not intersect_ok:
        raise GateRefusedError(
            f"the runs ran different task sets: {sizes}. A different task set is a different "
            "experiment: pass tasks='intersect' (--tasks intersect) to compare the shared tasks"
        )
    if not shared:
        raise GateRefusedError(f"the runs share no task ({sizes}): nothing to compare")
    left_out = sorted(set(cur_counts) ^ set(base_counts))
    warnings.append(
        f"task sets differ ({sizes}): compared the {_plural(ns)} both runs ran; "
        f"{len(left_out)} left out (e.g. {left_out[:5]})"
    )
    for counts in (cur_counts, base_counts):
        for t in [t for t in counts if t not in shared]:
            del counts[t]


@dataclass(frozen=True)
class _Setup:
    """What every check of one gate call shares: the two runs, their non-empty per-task counts,
    the shared tasks (stratified) and the options."""

    current: RunSummary
    baseline: RunSummary
    cur: Mapping[str, tuple[int, int]]
    base: Mapping[str, tuple[int, int]]
    shared: list[str] | None
    confidence: float
    tol: Callable[[str], float]
    allowed: Callable[[str], bool]
    warnings: list[str]
    k: int | None = None
    metrics: bool = True
    n_resamples: int = 2000
    seed: int = 0
    consistency: bool = False
    robustness: bool = False
    interval: str = "auto"
    # judged runs: (current, baseline) as given (with their trials) and each run's labels
    judged: tuple[Any, Any, Mapping[Any, Any], Mapping[Any, Any]] | None = None

    def verdict(
        self,
        name: str,
        kind: str,
        iv: Interval,
        values: tuple[float, float],
        hib: bool,
        detail: Mapping[str, Any],
    ) -> GateCheck:
        return _verdict(
            name,
            kind,
            iv,
            values,
            hib,
            self.tol(name),
            detail,
            self.warnings,
            self.allowed(name),
        )


def _success_check(g: _Setup) -> GateCheck:
    nc_, cc_ = sum(n for n, _ in g.cur.values()), sum(c for _, c in g.cur.values())
    nb_, cb_ = sum(n for n, _ in g.base.values()), sum(c for _, c in g.base.values())
    if g.shared is None:
        iv = newcombe_difference(cc_, nc_, cb_, nb_, g.confidence)
        values = (cc_ / nc_, cb_ / nb_)
        det: dict[str, Any] = {"current": [cc_, nc_], "baseline": [cb_, nb_], "method": iv.method}
    else:
        rc = [g.cur[t][1] / g.cur[t][0] for t in g.shared]
        rb = [g.base[t][1] / g.base[t][0] for t in g.shared]
        iv = paired_difference(rc, rb, g.confidence)
        values = (sum(rc) / len(rc), sum(rb) / len(rb))
        det = {"tasks": len(g.shared), "method": iv.method, "estimand": "task-weighted mean rate"}
    return g.verdict("success_rate", "success_rate", iv, values, True, det)


def _pass_hat_check(g: _Setup, kk: int) -> GateCheck:
    if g.shared is None:
        pc = [pass_hat_k(n, c, kk) for n, c in g.cur.values()]
        pb = [pass_hat_k(n, c, kk) for n, c in g.base.values()]
        iv = difference_interval(pc, pb, g.confidence)
    else:
        pc = [pass_hat_k(*g.cur[t], kk) for t in g.shared]
        pb = [pass_hat_k(*g.base[t], kk) for t in g.shared]
        iv = paired_difference(pc, pb, g.confidence)
    values = (sum(pc) / len(pc), sum(pb) / len(pb))
    return g.verdict(f"pass^{kk}", "pass_hat_k", iv, values, True, {"k": kk, "method": iv.method})


def _metric_plan(
    g: _Setup, name: str, mc: MetricSummary, mb: MetricSummary
) -> MetricDifference | str:
    """The metric's two runs, ready for an interval, or the warning that says why it is not
    compared."""
    if mc.higher_is_better != mb.higher_is_better:
        raise GateRefusedError(
            f"metric {name!r} changed direction (higher_is_better {mb.higher_is_better} "
            f"in the baseline, {mc.higher_is_better} now): not the same metric"
        )
    sc = {t: ss for t, ss in mc.scores.items() if ss and t in g.cur}
    sb = {t: ss for t, ss in mb.scores.items() if ss and t in g.base}
    ids = None
    if g.shared is not None:
        ids = [t for t in g.shared if t in sc and t in sb]
        if len(ids) < 2:
            return f"metric {name!r}: fewer than 2 shared tasks; not compared"
    if not sc or not sb:
        return f"metric {name!r} has no scores in a run; not compared"
    return MetricDifference(mc.aggregated_as, sc, sb, ids)


def _judged_success_check(g: _Setup) -> GateCheck:
    """The success rates corrected for the judge's errors, each run with its own labels,
    paired by task where both runs ran it (:func:`ek.agents.judge.judged_difference`)."""
    from .judge import judged_difference

    assert g.judged is not None
    cmp = judged_difference(*g.judged, confidence=g.confidence)
    det = {
        "method": cmp.interval.method,
        "estimand": "success rate corrected for the judge's errors",
        "pairing": cmp.interval.reason,
        "current": cmp.current.to_dict(),
        "baseline": cmp.baseline.to_dict(),
    }
    values = (cmp.current.value, cmp.baseline.value)
    return g.verdict("success_rate", "success_rate", cmp.interval, values, True, det)


def _success_checks(g: _Setup) -> list[GateCheck]:
    """The success rate (always checked; corrected with labels when the gate has them)."""
    return [_judged_success_check(g) if g.judged is not None else _success_check(g)]


def _pass_hat_checks(g: _Setup) -> list[GateCheck]:
    """pass^k at the requested k, else the largest k both runs support; none below 2; none
    for judged runs (a judge's errors do not cancel in a product over trials)."""
    if g.judged is not None:
        g.warnings.append(
            "pass^k not checked: success was decided by a judge, and per-trial labels correct "
            "the success rate (pass^1), not pass^k for k > 1 (ek.agents.judge.JudgedRun.pass_hat)"
        )
        return []
    min_n = min(n for n, _ in (*g.cur.values(), *g.base.values()))
    if g.k is not None and g.k > min_n:
        raise ValueError(
            f"k={g.k} exceeds the smallest per-task trial count {min_n} of the two runs"
        )
    kk = min(g.current.k, g.baseline.k, min_n) if g.k is None else int(g.k)
    if kk < 2:
        g.warnings.append("pass^k not checked: a run has fewer than 2 trials per task")
        return []
    return [_pass_hat_check(g, kk)]


def _metric_checks(g: _Setup) -> list[GateCheck]:
    """Each metric both runs scored (when ``metrics=True``), by the gate's interval method
    (:mod:`ek.agents._run.resample`), warnings in the metrics' order."""
    if not g.metrics:
        return []
    cur, base = g.current.metrics, g.baseline.metrics
    out = []
    for name in sorted(set(cur) | set(base)):
        plan = (
            _metric_plan(g, name, cur[name], base[name])
            if name in cur and name in base
            else f"metric {name!r} is in only one run; not compared"
        )
        if isinstance(plan, str):
            g.warnings.append(plan)
            continue
        iv, other = by_method(
            choose_interval(g.interval, plan.n_tasks),
            plan.n_tasks,
            partial(plan.clustered, g.confidence) if plan.summed else None,
            partial(plan.bootstrap, g.confidence, g.n_resamples, g.seed),
        )
        if not plan.exact:
            g.warnings.append(
                f"metric {name!r} is not registered: the mean of its per-trial values was "
                "gated instead of its own aggregate"
            )
        det = {
            "method": iv.method,
            "exact_aggregate": plan.exact,
            "cross_check": other.to_dict() if other is not None else None,
        }
        out.append(g.verdict(name, "metric", iv, plan.values, cur[name].higher_is_better, det))
    return out


def _consistency_checks(g: _Setup) -> list[GateCheck]:
    """The share of consistent tasks (all-pass or all-fail), by Newcombe's interval on the
    difference, tasks as the units (when ``consistency=True``)."""
    if not g.consistency:
        return []
    from ._consistency import consistency

    cur, base = consistency(g.cur), consistency(g.base)
    if not cur.n_tasks or not base.n_tasks:
        g.warnings.append("consistency not checked: a run has no task with >= 2 trials")
        return []
    iv = newcombe_difference(
        cur.n_consistent, cur.n_tasks, base.n_consistent, base.n_tasks, g.confidence
    )
    det = {
        "current": [cur.n_consistent, cur.n_tasks],
        "baseline": [base.n_consistent, base.n_tasks],
        "method": iv.method,
    }
    values = (cur.share.point, base.share.point)
    return [g.verdict("consistency", "consistency", iv, values, True, det)]


def _robustness_checks(g: _Setup) -> list[GateCheck]:
    """The success rate under each fault kind both runs injected (when ``robustness=True``),
    by Newcombe's interval as the clean success rate."""
    if not g.robustness:
        return []
    cf, bf = g.current.faults or {}, g.baseline.faults or {}
    if not cf or not bf:
        g.warnings.append("robustness not checked: a run has no fault-injected trials")
        return []
    out = []
    for kind in sorted(set(cf) & set(bf)):
        nc, c1 = _fault_tally(cf[kind], g.cur)
        nb, c2 = _fault_tally(bf[kind], g.base)
        if not nc or not nb:
            continue
        iv = newcombe_difference(c1, nc, c2, nb, g.confidence)
        det = {"current": [c1, nc], "baseline": [c2, nb], "method": iv.method, "fault": kind}
        name = f"success_rate[fault={kind}]"
        out.append(g.verdict(name, "robustness", iv, (c1 / nc, c2 / nb), True, det))
    return out


def _fault_tally(counts: Mapping[str, tuple[int, int]], tasks: Iterable[str]) -> tuple[int, int]:
    """The trials and successes under one fault, summed over ``tasks`` (those it ran)."""
    rows = [counts[t] for t in tasks if t in counts]
    return sum(n for n, _ in rows), sum(c for _, c in rows)


#: The gate's checks, each independent of the others: ``check(setup) -> [GateCheck, ...]``.
_CHECKS: tuple[Callable[[_Setup], list[GateCheck]], ...] = (
    _success_checks,
    _pass_hat_checks,
    _metric_checks,
    _consistency_checks,
    _robustness_checks,
)


def _refuse_infra(cur: RunSummary, base: RunSummary, max_share: float | None) -> None:
    """Refuse a run in which more than ``max_share`` of the trials attempted ended in an
    infrastructure error (see :mod:`ek.agents._infra`)."""
    if max_share is None:
        return
    if not is_number(max_share) or not 0.0 <= max_share <= 1.0:
        raise ValueError(f"max_infra_share must be a number in [0, 1] or None, got {max_share!r}")
    for label, s in (("current run", cur), ("baseline", base)):
        share = s.infra_share
        if share > max_share:
            raise GateRefusedError(
                f"the {label} has {s.n_infra_errors} trial(s) that ended in infrastructure "
                f"errors, {share:.1%} of the trials attempted, over max_infra_share="
                f"{max_share:g}: its counts say too little about the agent; fix the "
                "infrastructure and re-run (a resume re-uses the finished trials)"
            )


def _reason(checks: Sequence[GateCheck]) -> str:
    regressions = [c.name for c in checks if c.regression]
    undefined = [c.name for c in checks if c.failed and not c.regression]
    parts = []
    if regressions:
        parts.append(f"regression in {regressions}")
    if undefined:
        parts.append(
            f"undefined change in {undefined} (cannot show it did not regress; "
            "allow_undefined / --allow-undefined CHECK to accept)"
        )
    if parts:
        return "; ".join(parts)
    under = [c.name for c in checks if c.verdict == "underpowered"]
    return f"no regression in {len(checks)} check(s)" + (
        f" (underpowered: {under})" if under else ""
    )


def agent_regression_gate(
    current: Any,
    baseline: Any,
    *,
    tolerance: float = 0.0,
    confidence: float = 0.95,
    stratified: bool = False,
    k: int | None = None,
    tolerances: Mapping[str, float] | None = None,
    metrics: bool = True,
    n_resamples: int = 2000,
    seed: int = 0,
    allow_undefined: bool | Iterable[str] = False,
    allow_unscored: bool = False,
    allow_metric_changes: bool = False,
    allow_simulator_change: bool = False,
    allow_judge_change: bool = False,
    success_scorer: str | None = None,
    tasks: str = "same",
    max_infra_share: float | None = None,
    consistency: bool = False,
    robustness: bool = False,
    interval: str = "auto",
    labels: Mapping[tuple[str, int], Any] | None = None,
    baseline_labels: Mapping[tuple[str, int], Any] | None = None,
) -> GateResult:
    """Is ``current`` a statistically supported regression from ``baseline``?

    See the module docstring for the tests, the stratified variant and its assumption.

    Args:
        current: A :class:`~ek.agents.harness.SuiteResult`, a
            :class:`~ek.agents.harness.RunSummary`, or a path (store, baseline, Inspect log).
        baseline: The same kinds (usually :func:`~ek.agents.harness.load_agent_baseline`).
        tolerance: The allowed worsening, in each quantity's own units (>= 0).
        confidence: Two-sided coverage of every interval.
        stratified: Use the paired, task-stratified tests on the shared tasks.
        k: The pass^k to check (default: the largest k both runs support; none below 2).
        tolerances: Per-check tolerances by check name (``"success_rate"``, ``"pass^k"``, a
            metric's name), overriding ``tolerance``.
        metrics: Gate the metrics both runs scored (default ``True``).
        n_resamples: Bootstrap replicates for the metric checks.
        seed: Bootstrap seed (the gate is deterministic for a given seed).
        interval: The metric checks' interval method: ``"auto"`` (default: the bootstrap up
            to :data:`~ek.stats.BOOTSTRAP_MAX_TASKS` tasks, the clustered standard error
            above), ``"bootstrap"`` or ``"clustered"`` (see the module docstring).
        allow_undefined: Check names whose change may be undefined (NaN: an unknown cost,
            ``inf - inf`` when neither run has a success) without failing the gate, or
            ``True`` for every check. By default an undefined check **fails** the gate, as a
            NaN does in the scalar :func:`ek.harness.regression_gate`.
        allow_unscored: Gate runs that have unscored samples on their scored samples only
            (with a warning). By default such a run is refused.
        allow_metric_changes: Gate runs whose metrics of one name were configured
            differently (with a warning naming the change). By default they are refused.
        allow_simulator_change: Gate runs whose user simulator differs
            (``RunProvenance.simulator``, :mod:`ek.agents.simulate`) with a warning naming
            both. By default they are refused: a new simulator is a new experiment.
        allow_judge_change: Gate runs whose success different judges decided
            (:attr:`~ek.agents.harness.RunSummary.checker`) on their judged rates, with a
            warning naming both. By default they are refused unless both runs have labels.
        success_scorer: For a run given as an Inspect log path, the scorer that decides
            success (see :func:`~ek.agents.harness.load_run`).
        tasks: ``"same"`` (default): refuse runs whose task sets differ; ``"intersect"``:
            compare the tasks both runs ran (``stratified=True`` always does).
        max_infra_share: Refuse a run in which more than this share (in [0, 1]) of the
            trials attempted ended in an infrastructure error (:mod:`ek.agents._infra`);
            ``None`` (default): no limit.
        consistency: Also gate the share of consistent tasks
            (:mod:`ek.agents._consistency`; check ``"consistency"``).
        robustness: Also gate the success rate under each fault kind both runs injected
            (:mod:`ek.agents._faults`; checks ``"success_rate[fault=<kind>]"``).
        labels: For runs whose success a judge decided: people's labels on some of the current
            run's trials, ``{(task_id, trial): bool}`` (:func:`ek.agents.judge.load_labels`).
            With ``baseline_labels`` the success check compares the rates corrected for the
            judge's errors, each run with its own labels (so the runs may have different
            judges), paired by task where both ran it; pass^k is not checked. The runs must
            keep their trials (a :class:`~ek.agents.harness.SuiteResult`, or ``load_run``
            with episodes).
        baseline_labels: The same for the baseline; labels for one run only are refused.

    Raises:
        GateRefusedError: an empty run or baseline, a run with unscored samples (unless
            allowed), incomparable provenance, different task sets (unless
            ``tasks="intersect"``), metrics configured differently (unless
            ``allow_metric_changes``), runs that different judges decided (unless both have
            labels, or ``allow_judge_change``), or too many infrastructure errors
            (``max_infra_share``).

    Example:
        >>> from ek.agents.base import RunProvenance
        >>> from ek.agents.harness import MetricSummary, RunSummary
        >>> from ek.base import Score
        >>> run = RunProvenance(agent="bot", suite_version="v1")
        >>> nan = Score(float("nan"), {"dollars": None, "successes": 1, "n": 1,
        ...                            "higher_is_better": False})
        >>> m = MetricSummary("cost_per_success", False, float("nan"), {"t": (nan,)})
        >>> s = RunSummary(run, k=1, counts={"t": (1, 1)}, metrics={"cost_per_success": m})
        >>> g = agent_regression_gate(s, s)
        >>> g.passed, g.checks[-1].verdict, g.checks[-1].failed
        (False, 'undefined', True)
        >>> agent_regression_gate(s, s, allow_undefined=["cost_per_success"]).passed
        True
    """
    cur = _as_summary(current, "current", success_scorer)
    base = _as_summary(baseline, "baseline", success_scorer)
    tols = _check_arguments(tolerance, confidence, tolerances)
    _check_choices(tasks, interval)
    policy = undefined_policy(allow_undefined)
    warnings: list[str] = []
    _refuse(cur, base, allow_unscored, allow_simulator_change, warnings)
    if metrics:
        _refuse_metric_changes(cur, base, allow_metric_changes, warnings)
    _refuse_infra(cur, base, max_infra_share)
    judged = _judged_labels(labels, baseline_labels)
    _refuse_judge_change(cur, base, allow_judge_change, judged is not None, warnings)
    cur_counts = {t: nc for t, nc in cur.counts.items() if nc[0] > 0}
    base_counts = {t: nc for t, nc in base.counts.items() if nc[0] > 0}
    if not stratified:  # stratified pairs the shared tasks itself (warning on the rest)
        dropped_unscored = allow_unscored and bool(cur.n_unscored or base.n_unscored)
        _compared_tasks(cur_counts, base_counts, tasks, dropped_unscored, warnings)
    g = _Setup(
        cur,
        base,
        cur_counts,
        base_counts,
        _shared_tasks(cur_counts, base_counts, warnings) if stratified else None,
        float(confidence),
        lambda name: float(tols.get(name, tolerance)),
        _allow_set(policy),
        warnings,
        k=k,
        metrics=metrics,
        n_resamples=n_resamples,
        seed=seed,
        consistency=consistency,
        robustness=robustness,
        interval=interval,
        judged=None if judged is None else (current, baseline, *judged),
    )
    checks = [c for make in _CHECKS for c in make(g)]
    n_tasks = len(g.shared) if g.shared is not None else len(cur_counts)
    _warn_unused_allowances(policy, checks, warnings)
    return GateResult(
        passed=not any(c.failed for c in checks),
        checks=tuple(checks),
        warnings=tuple(warnings),
        reason=_reason(checks),
        tolerance=float(tolerance),
        confidence=float(confidence),
        stratified=stratified,
        current=ReadOnlyDict(_side(cur)),
        baseline=ReadOnlyDict(_side(base)),
        n_tasks=n_tasks,
    )


def _judged_labels(
    labels: Mapping[Any, Any] | None, baseline_labels: Mapping[Any, Any] | None
) -> tuple[Mapping[Any, Any], Mapping[Any, Any]] | None:
    """Both runs' labels, or ``None``; labels for one run only are refused."""
    if labels is None and baseline_labels is None:
        return None
    if labels is None or baseline_labels is None:
        which = "current run" if labels is not None else "baseline"
        raise GateRefusedError(
            f"labels for the {which} only: a corrected rate compared with a judged one still "
            "carries the other run's judge errors (and the runs may have different judges); "
            "label a sample of each run's trials (ek-agents gate --labels FILE "
            "--baseline-labels FILE)"
        )
    return labels, baseline_labels


def _side(s: RunSummary) -> dict[str, Any]:
    return {
        "run": s.run.to_dict(),
        "n_trials": s.n_trials,
        "source": s.source,
        "unscored": s.unscored.to_dict() if s.unscored is not None else None,
    }
