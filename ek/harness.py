"""The scalar regression gate, metric directions, and scalar baseline files (core, instance-free).

:func:`regression_gate` compares two ``{metric: value}`` snapshots **point by point**. That is
sound only for deterministic metrics; for stochastic ones (an agent's success rate, pass^k,
cost per success) use :func:`ek.agents.harness.agent_regression_gate`, which tests the
difference with both runs' uncertainty.

A metric's direction comes from its own score first: :func:`metric_direction` reads
``detail["higher_is_better"]``, then a declared direction, and only then the name table
:data:`LOWER_IS_BETTER` (error rates, cost, latency). ``cost_per_success`` is deliberately not
in that table: :class:`ek.agents.metrics.CostPerSuccessMetric` stamps its direction on every
score, and the stamp is what a gate must read.

Baseline files are JSON written atomically through :mod:`ek.jsonio` (non-finite floats survive
the round trip).

This is the spec's path for the scalar gate; the agent harness (k trials, the variance-aware
gate) is :mod:`ek.agents.harness`.

Example:
    >>> r = regression_gate({"accuracy": 0.80, "wer": 0.12}, {"accuracy": 0.82, "wer": 0.10},
    ...                     tolerance=0.01)
    >>> r.passed, [c.name for c in r.checks if c.regressed]
    (False, ['accuracy', 'wer'])
    >>> metric_direction("cost_per_success", {"higher_is_better": False})
    False
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ek._validate import number, short_repr
from ek.jsonio import read_json, to_json_safe, write_json_atomic

__all__ = [
    "LOWER_IS_BETTER",
    "ScalarCheck",
    "ScalarGateResult",
    "load_baseline",
    "metric_direction",
    "regression_gate",
    "save_baseline",
    "undefined_policy",
]

#: Metric names whose value is better when lower, used only when neither the score's
#: ``detail["higher_is_better"]`` nor a declared direction is available.
LOWER_IS_BETTER = frozenset(
    {
        "wer",
        "cer",
        "ter",
        "error_rate",
        "loss",
        "perplexity",
        "cost",
        "dollars",
        "latency",
        "duration",
        "tokens",
    }
)


def metric_direction(
    name: str, detail: Mapping[str, Any] | None = None, declared: bool | None = None
) -> bool:
    """Whether higher values of metric ``name`` are better.

    Order: ``detail["higher_is_better"]`` (what the score itself says), then ``declared`` (the
    metric object's attribute), then the name table :data:`LOWER_IS_BETTER`, else ``True``.

    Example:
        >>> metric_direction("wer"), metric_direction("wer", {"higher_is_better": True})
        (False, True)
        >>> metric_direction("accuracy", declared=False)
        False
    """
    if detail is not None:
        if not isinstance(detail, Mapping):
            raise TypeError(f"detail must be a mapping or None, got {type(detail).__name__}")
        hib = detail.get("higher_is_better")
        if isinstance(hib, bool):
            return hib
    if isinstance(declared, bool):
        return declared
    return name not in LOWER_IS_BETTER


@dataclass(frozen=True)
class ScalarCheck:
    """One metric of a :func:`regression_gate`: both values, the change and the verdict."""

    name: str
    current: float
    baseline: float
    change: float
    higher_is_better: bool
    tolerance: float
    regressed: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (non-finite floats spelled by :func:`ek.jsonio.to_json_safe`)."""
        return dict(to_json_safe(self.__dict__))


@dataclass(frozen=True)
class ScalarGateResult:
    """The verdict of :func:`regression_gate`: ``passed`` iff no check regressed."""

    passed: bool
    checks: tuple[ScalarCheck, ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "passed": self.passed,
            "reason": self.reason,
            "checks": [c.to_dict() for c in self.checks],
        }


def undefined_policy(allow_undefined: Any) -> bool | frozenset[str]:
    """Validate a gate's ``allow_undefined``: ``True``/``False`` or a collection of check names.

    Both gates (:func:`regression_gate` and :func:`ek.agents.harness.agent_regression_gate`)
    fail a check whose change is undefined (NaN) unless it is allowed here.

    Example:
        >>> undefined_policy(False), sorted(undefined_policy(["cost"]))
        (False, ['cost'])
        >>> undefined_policy("cost")
        Traceback (most recent call last):
        ...
        TypeError: allow_undefined must be True, False or a collection of check names, got the str 'cost' (write ['cost'])
    """
    if isinstance(allow_undefined, bool):
        return allow_undefined
    if isinstance(allow_undefined, str):
        raise TypeError(
            "allow_undefined must be True, False or a collection of check names, got the str "
            f"{short_repr(allow_undefined)} (write [{short_repr(allow_undefined)}])"
        )
    try:
        names = frozenset(allow_undefined)
    except TypeError:
        raise TypeError(
            "allow_undefined must be True, False or a collection of check names, got "
            f"{type(allow_undefined).__name__}: {short_repr(allow_undefined, 100)}"
        ) from None
    bad = sorted(repr(n) for n in names if not isinstance(n, str) or not n)
    if bad:
        raise TypeError(f"allow_undefined names must be non-empty str, got {', '.join(bad)}")
    return names


def _scalar_check(
    name: str, cur: float, base: float, hib: bool, tol: float, ok_undefined: bool
) -> ScalarCheck:
    """One metric's verdict: regressed iff it moved the worse way by more than ``tol``."""
    change = cur - base
    worse = -change if hib else change
    if math.isnan(change):  # a NaN side, or inf - inf
        regressed = not ok_undefined
        reason = f"undefined (NaN) change {base:.6g} -> {cur:.6g}: " + (
            "allowed by allow_undefined"
            if ok_undefined
            else f"cannot show it did not regress (allow_undefined=[{short_repr(name)}] to accept)"
        )
    elif cur == base:
        regressed, reason = False, "unchanged"
    else:
        regressed = worse > tol
        word = "regressed" if regressed else "within tolerance" if worse > 0 else "improved"
        reason = (
            f"{word}: {base:.6g} -> {cur:.6g} ({'higher' if hib else 'lower'} is better, "
            f"tolerance {tol:g})"
        )
    return ScalarCheck(name, cur, base, change, hib, tol, regressed, reason)


def regression_gate(
    current: Mapping[str, float],
    baseline: Mapping[str, float],
    *,
    tolerance: float | Mapping[str, float] = 0.0,
    higher_is_better: Mapping[str, bool] | None = None,
    allow_undefined: bool | Iterable[str] = False,
) -> ScalarGateResult:
    """Point comparison of two ``{metric: value}`` snapshots (for deterministic metrics only).

    A metric regresses when it moved in its worse direction by more than its tolerance. Every
    baseline metric must be present in ``current`` (a metric that disappeared is refused, not
    silently passed); extra current metrics are ignored. An **undefined change** (a NaN on
    either side, or ``inf - inf``) fails the check: an undefined value cannot show that nothing
    regressed. ``allow_undefined`` lets named metrics (or, ``True``, all) pass it with the
    reason saying so; :func:`ek.agents.harness.agent_regression_gate` does the same.

    Args:
        current: The new values.
        baseline: The reference values.
        tolerance: One absolute tolerance, or ``{metric: tolerance}`` (missing names: 0).
        higher_is_better: Declared directions; otherwise :func:`metric_direction` by name.
        allow_undefined: Metric names whose change may be undefined, or ``True`` for all.

    Raises:
        ValueError: an empty baseline, a baseline metric missing from ``current``, or a negative
            tolerance.

    Example:
        >>> regression_gate({"f1": 0.90}, {"f1": 0.91}, tolerance=0.02).passed
        True
    """
    if not isinstance(current, Mapping) or not isinstance(baseline, Mapping):
        raise TypeError(
            f"regression_gate expects two {{metric: value}} mappings, got "
            f"{type(current).__name__} and {type(baseline).__name__}"
        )
    if not baseline:
        raise ValueError("regression_gate: the baseline has no metric; nothing can be gated")
    missing = sorted(set(baseline) - set(current))
    if missing:
        raise ValueError(
            f"regression_gate: metric(s) {missing} are in the baseline but not current"
        )
    dirs = dict(higher_is_better or {})
    allowed = undefined_policy(allow_undefined)
    checks = []
    for name in sorted(baseline):
        tol = tolerance.get(name, 0.0) if isinstance(tolerance, Mapping) else tolerance
        tol = number(f"tolerance[{short_repr(name)}]", tol)
        if tol < 0 or math.isnan(tol):
            raise ValueError(
                f"tolerance for {short_repr(name)} must be >= 0, got {short_repr(tol)}"
            )
        cur = number(f"current[{short_repr(name)}]", current[name])
        base = number(f"baseline[{short_repr(name)}]", baseline[name])
        ok_undefined = allowed is True or (not isinstance(allowed, bool) and name in allowed)
        hib = metric_direction(name, declared=dirs.get(name))
        checks.append(_scalar_check(name, cur, base, hib, tol, ok_undefined))
    bad = [c.name for c in checks if c.regressed]
    reason = f"regression in {bad}" if bad else f"no regression in {len(checks)} metric(s)"
    return ScalarGateResult(not bad, tuple(checks), reason)


_BASELINE_FORMAT = "ek/baseline"


def save_baseline(
    path: str | os.PathLike[str],
    values: Mapping[str, float],
    *,
    higher_is_better: Mapping[str, bool] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> None:
    """Freeze a ``{metric: value}`` snapshot for :func:`regression_gate` (atomic write).

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "base.json")
        >>> save_baseline(p, {"f1": 0.9, "cost": float("inf")})
        >>> load_baseline(p)["values"]
        {'f1': 0.9, 'cost': inf}
    """
    if not isinstance(values, Mapping) or not values:
        raise ValueError(
            f"save_baseline needs a non-empty {{metric: value}} mapping, got {short_repr(values, 100)}"
        )
    from ek import __version__

    data = {
        "format": _BASELINE_FORMAT,
        "version": 1,
        "ek_version": __version__,
        "values": {str(k): number(f"values[{short_repr(k)}]", v) for k, v in values.items()},
        "higher_is_better": dict(higher_is_better or {}),
        "metadata": dict(metadata or {}),
    }
    write_json_atomic(path, data)


def load_baseline(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a file written by :func:`save_baseline` (``values``, ``higher_is_better``, ...).

    Raises:
        ValueError: the file is not an ek scalar baseline.
    """
    data = read_json(path)
    if not isinstance(data, dict) or data.get("format") != _BASELINE_FORMAT:
        raise ValueError(
            f"{os.fspath(path)}: not an ek scalar baseline (expected format {short_repr(_BASELINE_FORMAT)})"
        )
    return data
