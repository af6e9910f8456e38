"""``ek/pass_hat`` (pass^k) and ``ek/pass_at`` (pass@k): epoch reducers that carry cost.

``Task(epochs=Epochs(5, "ek/pass_hat_3"))``: the ``_3`` suffix is ``k`` (Inspect splits it off).
For one sample's ``n`` scored epochs with ``c`` successes:

- pass^k = ``C(c, k) / C(n, k)``: the chance that k attempts drawn without replacement **all**
  succeed (tau-bench, Yao et al., 2024, arXiv:2406.12045): reliability;
- pass@k = ``1 - C(n - c, k) / C(n, k)``: the chance that **at least one** does (Chen et al.,
  2021, arXiv:2107.03374): capability.

Both come from :mod:`ek.agents.reliability` and are NaN when fewer than k epochs were scored.

**Relation to Inspect's built-ins.** ``pass_k(k)`` and ``pass_at(k)`` compute the same unbiased
estimators, but on *every* key of a dict value independently, so ``pass_at_2`` of a ``dollars``
key is meaningless, and they keep only the first epoch's metadata. These reducers apply the
estimator to the ``success`` key only (or to a scalar value, ``"C"`` counting as 1), reduce
``dollars`` and ``tokens`` to the mean per attempt and every other key to its mean over scored
epochs, and write an ek record whose counts and numeric details are **summed** over the epochs,
so the ratio-of-sums metrics (Cost-of-Pass, micro-F1) stay exact after reduction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.scorer import Score, ScoreReducer, score_reducer

from ek.agents.reliability import pass_at_k, pass_hat_k

from ._meta import EK, ek_record, num

__all__ = ["REDUCER_NAMES", "pass_at", "pass_hat", "reduce_epochs"]

#: The registered names (use them with a ``_<k>`` suffix in ``Epochs``).
REDUCER_NAMES = ("ek/pass_hat", "ek/pass_at")

_SCALE = {"c": 1.0, "i": 0.0, "p": 0.5, "n": 0.0, "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}


def _to_float(v: Any) -> float:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip().lower()
        if s in _SCALE:
            return _SCALE[s]
        try:
            return float(s)
        except ValueError:
            return math.nan
    return math.nan


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def _sum_details(details: list[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for d in details:
        for k, v in d.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            out[k] = out.get(k, 0.0) + float(v)
    return out


def _merged_record(scored: list[Score], estimate: float, label: str) -> dict[str, Any]:
    recs = [r for r in (ek_record(s) for s in scored) if r is not None]
    dollars: float | None = 0.0
    for r in recs:
        d = r.get("dollars")
        dollars = None if d is None or dollars is None else dollars + num(d)
    names = sorted({k for r in recs for k in (r.get("scores") or {})})
    scores = {}
    for k in names:
        parts = [r["scores"][k] for r in recs if k in (r.get("scores") or {})]
        scores[k] = {
            "value": _mean([num(p.get("value")) for p in parts]),
            "detail": _sum_details([p.get("detail") or {} for p in parts]),
        }
    succ = [r.get("success") for r in recs]
    return {
        "success": None,
        "successes": int(sum(num(r.get("successes", 0)) for r in recs)),
        "n": int(sum(num(r.get("n", 1)) for r in recs)),
        "dollars": dollars if recs else None,
        "tokens": int(sum(num(r.get("tokens", 0)) for r in recs)),
        "scores": scores,
        "epochs": len(scored),
        "epoch_success": succ,
        "reducer": label,
        "estimate": estimate if math.isfinite(estimate) else None,
    }


def reduce_epochs(
    scores: list[Score],
    k: int,
    estimator: Callable[[int, int, int], float],
    label: str,
    threshold: float = 1.0,
) -> Score:
    """Reduce one sample's epoch scores with ``estimator(n, c, k)`` on its success.

    Unscored epochs (NaN value, or NaN ``success``) are left out of ``n``; with fewer than
    ``k`` left, the estimate is NaN.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    scored = [s for s in scores if not _is_nan(s.value)]
    if not scored:
        return Score(value=math.nan, explanation=f"{label}: no scored epoch")
    dicts: list[Mapping[str, Any]] = [s.value for s in scored if isinstance(s.value, Mapping)]
    if dicts:
        succ = [_to_float(d.get("success", math.nan)) for d in dicts]
    else:
        succ = [_to_float(s.value) for s in scored]
    ok = [x for x in succ if not math.isnan(x)]
    n, c = len(ok), sum(1 for x in ok if x >= threshold)
    estimate = estimator(n, c, k) if n >= k else math.nan
    why = f"{label}: {c} of {n} scored epoch(s) succeeded" + (
        "" if n >= k else f"; undefined with fewer than k={k} scored epochs"
    )
    meta = {EK: _merged_record(scored, estimate, label)}
    if not dicts:
        return Score(value=estimate, explanation=why, metadata=meta)
    value: dict[str, Any] = {}
    for key in dicts[0]:
        vals = [_to_float(d.get(key)) for d in dicts]
        if key == "success":
            value[key] = estimate
        elif key == "dollars":  # an unknown attempt makes the mean unknown
            value[key] = sum(vals) / len(vals)
        else:
            value[key] = _mean(vals)
    return Score(value=value, explanation=why, metadata=meta)


@score_reducer(name="ek/pass_hat")
def pass_hat(k: int = 1, threshold: float = 1.0) -> ScoreReducer:
    """pass^k over epochs (all k attempts succeed), carrying cost; ``"ek/pass_hat_<k>"``.

    Args:
        k: Attempts that must all succeed (``1 <= k <= epochs``).
        threshold: A value at or above it is a success (``"C"`` = 1.0).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")

    def reduce(scores: list[Score]) -> Score:
        return reduce_epochs(scores, k, pass_hat_k, f"pass^{k}", threshold)

    return reduce


@score_reducer(name="ek/pass_at")
def pass_at(k: int = 1, threshold: float = 1.0) -> ScoreReducer:
    """pass@k over epochs (at least one of k attempts succeeds), carrying cost; ``"ek/pass_at_<k>"``.

    Args:
        k: Attempts drawn (``1 <= k <= epochs``).
        threshold: A value at or above it is a success (``"C"`` = 1.0).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")

    def reduce(scores: list[Score]) -> Score:
        return reduce_epochs(scores, k, pass_at_k, f"pass@{k}", threshold)

    return reduce
