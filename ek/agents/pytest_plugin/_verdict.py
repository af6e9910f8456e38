"""One outcome per ek test: its trials, pass^k, the Wilson interval, and the criterion's verdict.

The controller (the pytest process, or the pytest-xdist controller) turns what each trial's
worker sent into a :class:`TrialResult` (:func:`trial_from_payload`) and, once a test's trials
are in, decides on them with :func:`decide`: success counts, pass^k
(:func:`~ek.agents.reliability.pass_hat_k`, the tau-bench estimator), the Wilson interval of the
success rate (:func:`~ek.agents.reliability.wilson_interval`), each recorded metric's aggregate
(a ratio of sums: :func:`~ek.agents.harness.metric_aggregator`) and Cost-of-Pass.

Example:
    >>> from ek.agents.pytest_plugin import TrialSpec
    >>> trials = [TrialResult(i, "failed" if i in (1, 3) else "passed") for i in range(5)]
    >>> v = decide("t.py::test_a", TrialSpec(5, pass_hat_k=2, at_least=0.3), trials)
    >>> v.n, v.successes, v.pass_hat, v.outcome     # pass^2 = C(3,2)/C(5,2) = 3/10
    (5, 3, 0.3, 'passed')
    >>> round(v.interval.low, 4), round(v.interval.high, 4)
    (0.2307, 0.8824)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ek.agents._episode import Episode, RunProvenance
from ek.agents.cost import pricing_from_dict
from ek.agents.harness import metric_aggregator
from ek.agents.metrics import CostPerSuccessMetric
from ek.agents.reliability import pass_hat_k
from ek.base import Score
from ek.jsonio import from_json_safe
from ek.stats import Interval, wilson_interval

from ._spec import TrialSpec

__all__ = [
    "COST_METRIC",
    "TestVerdict",
    "TrialResult",
    "decide",
    "trial_from_payload",
    "with_cost",
]

#: The name of the per-trial Cost-of-Pass score (the metric :func:`decide` aggregates as $/success).
COST_METRIC = CostPerSuccessMetric.name

_MAX_FAILURE_LINES = 5


@dataclass(frozen=True)
class TrialResult:
    """One trial of one ek test, as the controller received it.

    Attributes:
        index: The trial (0-based).
        outcome: ``"passed"``, ``"failed"`` (an assertion, an error in setup, call or teardown)
            or ``"skipped"`` (left out of the counts).
        failure: The first line of the first failure, or ``None``.
        failure_text: The failure as pytest printed it, or ``None``.
        skip: ``(path, line, reason)`` of a skip, or ``None``.
        duration: Seconds spent in setup, call and teardown.
        episode: The recorded episode (task id, trial and verdict set by the plugin), or ``None``.
        scores: The episode's scores by metric name (Cost-of-Pass included when priced).
        pricing: The price setting ``record()`` was given (``pricing_to_dict``), or ``None``.
        sections: Captured output of a failed trial, ``(title, text)`` pairs.
    """

    index: int
    outcome: str
    failure: str | None = None
    failure_text: str | None = None
    skip: tuple[str, int, str] | None = None
    duration: float = 0.0
    episode: Episode | None = None
    scores: Mapping[str, Score] = field(default_factory=dict)
    pricing: Mapping[str, Any] | None = None
    sections: tuple[tuple[str, str], ...] = ()

    @property
    def passed(self) -> bool:
        """True when the trial passed."""
        return self.outcome == "passed"


@dataclass(frozen=True)
class TestVerdict:
    """The one outcome of an ek test.

    Attributes:
        test_id: The test's node id.
        spec: Its trials and criterion.
        n: Trials that ran (skipped ones excluded).
        successes: Trials that passed.
        skipped: Trials that skipped.
        pass_hat: pass^k for ``k = spec.k`` (NaN with fewer than k trials).
        interval: The Wilson interval of the success rate at ``spec.confidence``.
        value: The criterion's value (pass^k, the Wilson lower bound, or the success rate).
        outcome: ``"passed"``, ``"failed"`` or ``"skipped"`` (no trial ran).
        reason: The verdict in words.
        failures: ``(trial, first line)`` of each failed trial.
        reasons: Each failed trial's ek reasons (``"<metric>: <reason>"`` of the scores its
            ``ek_episode.record`` gave), by trial, shown under its failure line.
        metrics: Each recorded metric's aggregate over the test's trials.
        cost_of_pass: Dollars per success (``inf`` with no success), NaN when a trial's dollars
            are unknown, ``None`` when no trial recorded a cost.
    """

    __test__ = False  # not a test class, whatever pytest thinks of the name

    test_id: str
    spec: TrialSpec
    n: int
    successes: int
    skipped: int
    pass_hat: float
    interval: Interval
    value: float
    outcome: str
    reason: str
    failures: tuple[tuple[int, str], ...] = ()
    metrics: Mapping[str, float] = field(default_factory=dict)
    cost_of_pass: float | None = None
    reasons: Mapping[int, tuple[str, ...]] = field(default_factory=dict)

    def longrepr(self, first_failure: str | None = None) -> str:
        """The short table pytest shows for the test (and the first failure in full)."""
        iv = self.interval
        lines = [
            f"ek: {self.reason}",
            f"  trials     {self.n}" + (f" (+{self.skipped} skipped)" if self.skipped else ""),
            f"  successes  {self.successes}",
            f"  success    {_num(iv.point)} [{_num(iv.low)}, {_num(iv.high)}] "
            f"({iv.confidence * 100:g}% Wilson interval)",
            f"  pass^{self.spec.k:<5} {_num(self.pass_hat)}",
        ]
        lines += [f"  {name:<10} {_num(v)}" for name, v in sorted(self.metrics.items())]
        if self.cost_of_pass is not None:
            lines.append(f"  $/success  {_money(self.cost_of_pass)}")
        for j, (i, line) in enumerate(self.failures[:_MAX_FAILURE_LINES]):
            lines.append(f"  {'failures' if j == 0 else '':<10} trial {i + 1}: {line}")
            lines += [f"  {'':<10}   ek {reason}" for reason in self.reasons.get(i, ())]
        if len(self.failures) > _MAX_FAILURE_LINES:
            lines.append(f"  {'':<10} ... and {len(self.failures) - _MAX_FAILURE_LINES} more")
        if first_failure:
            i = self.failures[0][0] if self.failures else 0
            lines += ["", f"first failing trial ({i + 1} of {self.spec.trials}):", first_failure]
        return "\n".join(lines)


def _num(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.3f}"


def _money(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "unknown"
    return "inf (no success)" if math.isinf(x) else f"${x:.6g}"


def _skip(value: Any) -> tuple[str, int, str] | None:
    if not value:
        return None
    path, line, reason = value
    return str(path), int(line), str(reason)


def trial_from_payload(test_id: str, data: Mapping[str, Any], run: RunProvenance) -> TrialResult:
    """A :class:`TrialResult` from what a trial's teardown report carried (plain JSON).

    The recorded episode gets the test's node id as ``task_id`` (its own id, when different,
    is kept in ``metadata["recorded_task_id"]``), the trial number, the run and the verdict.
    """
    index = int(data["index"])
    outcome = str(data["outcome"])
    rec = data.get("record") or None
    episode: Episode | None = None
    scores: dict[str, Score] = {}
    pricing = None
    if rec is not None:
        d = from_json_safe(rec["episode"])
        own = d.get("task_id")
        if own != test_id:
            d["metadata"] = {**(d.get("metadata") or {}), "recorded_task_id": own}
        d.update(task_id=test_id, trial=index)
        d.pop("run", None)
        episode = Episode.from_dict(d).replace(
            success=outcome == "passed" if outcome != "skipped" else None, run=run
        )
        for name, sd in (rec.get("scores") or {}).items():
            v = from_json_safe(sd.get("value"))
            scores[name] = Score(math.nan if v is None else float(v), from_json_safe(sd["detail"]))
        pricing = from_json_safe(rec["pricing"]) if rec.get("pricing") is not None else None
    return TrialResult(
        index=index,
        outcome=outcome,
        failure=data.get("failure"),
        failure_text=data.get("failure_text"),
        skip=_skip(data.get("skip")),
        duration=float(data.get("duration") or 0.0),
        episode=episode,
        scores=scores,
        pricing=pricing,
        sections=tuple((str(t), str(c)) for t, c in data.get("sections") or ()),
    )


def with_cost(trials: Sequence[TrialResult], test_id: str, run: RunProvenance) -> list[TrialResult]:
    """The trials with a Cost-of-Pass score each, when any of them recorded a cost.

    Every trial that ran gets one (a trial that recorded no episode has unknown dollars), so
    the test's $/success is unknown rather than silently cheaper. Each trial is priced with its
    own ``record()`` prices, else the test's.
    """
    if not any(t.episode is not None and t.episode.cost for t in trials):
        return list(trials)
    default = next((t.pricing for t in trials if t.pricing is not None), None)
    out = []
    for t in trials:
        if t.outcome == "skipped" or COST_METRIC in t.scores:
            out.append(t)
            continue
        price, prices = pricing_from_dict(t.pricing if t.pricing is not None else default)
        ep = t.episode or Episode(test_id, trial=t.index, run=run, success=t.passed)
        s = CostPerSuccessMetric("recorded", price=price, prices=prices)(ep, None)
        out.append(_replace_scores(t, {**t.scores, COST_METRIC: s}))
    return out


def _replace_scores(t: TrialResult, scores: Mapping[str, Score]) -> TrialResult:
    return replace(t, scores=dict(scores))


def _criterion(spec: TrialSpec, n: int, c: int, pass_hat: float, low: float) -> tuple[float, str]:
    """The criterion's value and its name."""
    if spec.kind == "pass^k":
        return pass_hat, f"pass^{spec.k}"
    if spec.kind == "wilson":
        return low, f"{spec.confidence * 100:g}% Wilson lower bound"
    return (c / n if n else math.nan), "success"


def _verdict(spec: TrialSpec, n: int, c: int, value: float, name: str) -> tuple[str, str]:
    ran = f"{c} of {n} trials passed"
    if n == 0:
        return "skipped", "no trial ran (every trial skipped)"
    if spec.kind == "all":
        return ("passed", f"{ran}") if c == n else ("failed", f"{ran}; every trial must pass")
    if math.isnan(value):
        return "failed", f"{ran}; {name} is undefined with {n} trial(s) (it needs {spec.k})"
    ok = value >= spec.threshold
    sign = ">=" if ok else "<"
    return ("passed" if ok else "failed"), f"{ran}; {name} {value:.3f} {sign} {spec.threshold:g}"


def _metrics(trials: Sequence[TrialResult]) -> dict[str, float]:
    names = sorted({n for t in trials for n in t.scores if n != COST_METRIC})
    out = {}
    for name in names:
        agg, _ = metric_aggregator(name)
        out[name] = agg([t.scores[name] for t in trials if name in t.scores])
    return out


def _cost(trials: Sequence[TrialResult]) -> float | None:
    scores = [t.scores[COST_METRIC] for t in trials if COST_METRIC in t.scores]
    if not scores:
        return None
    agg, _ = metric_aggregator(COST_METRIC)
    return agg(scores)


def _reasons(trials: Sequence[TrialResult]) -> dict[int, tuple[str, ...]]:
    """Each failed trial's ek reasons, ``"<metric>: <reason>"`` (first line), by trial."""
    out = {}
    for t in trials:
        said = tuple(
            f"{name}: {str(s.reason).splitlines()[0]}"
            for name, s in sorted(t.scores.items())
            if not t.passed and s.reason
        )
        if said:
            out[t.index] = said
    return out


def decide(test_id: str, spec: TrialSpec, trials: Sequence[TrialResult]) -> TestVerdict:
    """Judge a test's trials against its criterion (see the module docstring)."""
    ran = [t for t in trials if t.outcome != "skipped"]
    n, c = len(ran), sum(t.passed for t in ran)
    iv = wilson_interval(c, n, spec.confidence)
    ph = pass_hat_k(n, c, spec.k)
    value, name = _criterion(spec, n, c, ph, iv.low)
    outcome, reason = _verdict(spec, n, c, value, name)
    return TestVerdict(
        test_id=test_id,
        spec=spec,
        n=n,
        successes=c,
        skipped=len(trials) - n,
        pass_hat=ph,
        interval=iv,
        value=value,
        outcome=outcome,
        reason=reason,
        failures=tuple((t.index, t.failure or "failed") for t in ran if not t.passed),
        metrics=_metrics(ran),
        cost_of_pass=_cost(ran),
        reasons=_reasons(ran),
    )
