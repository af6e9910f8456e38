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
``dollars`` and ``tokens`` to the mean per attempt, and every ek metric's key to **that
metric's own aggregate over the sample's epochs** (a ratio of sums: the ``cost_per_success``
of a sample is its summed dollars over its successes, ``inf`` with none; ``tool_calls`` is the
micro-F1 of its summed counts), never a mean of per-epoch ratios. Other keys get their mean
over scored epochs. The ek record they write has its counts and numeric details **summed**
over the epochs, so the corpus ratio-of-sums metrics stay exact after reduction.

**k larger than the epochs.** Inspect refuses ``Epochs(2, "pass_k_5")`` before the run, but
only for its own reducers; a reducer cannot see the epoch count before the run. So when a
sample arrives with fewer epochs than ``k`` (``Epochs(2, "ek/pass_hat_5")``), the estimate is
NaN and the sample's explanation says why; the run-level warning naming the fix is given once,
about the final result, after the task (:mod:`._epochs`), never about the partial epochs
Inspect's live display reduces while the run goes on.

**A scorer that decides no success** (``tool_calls()`` without ``check``) has no ``success``
key: its reduced value has none either, and its explanation says pass^k was not computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.scorer import Score, ScoreReducer, score_reducer

from ek._validate import finite, is_number, short_repr
from ek.adapters._shell import json_safe
from ek.agents.reliability import pass_at_k, pass_hat_k

from ._epochs import too_few_epochs, watch_epochs
from ._meta import EK, ek_record, num
from ._metrics import aggregate_key

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
            if not is_number(v):
                continue
            out[k] = out.get(k, 0.0) + float(v)
    return out


def _summed_dollars(recs: list[Mapping[str, Any]]) -> float | None:
    """The epochs' dollars summed (``None``: unknown, as soon as one epoch's is)."""
    dollars: float | None = 0.0
    for r in recs:
        d = r.get("dollars")
        dollars = None if d is None or dollars is None else dollars + num(d)
    return dollars if recs else None


def _merged_scores(recs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Each ek metric's aggregate over the epochs and its details summed."""
    names = sorted({k for r in recs for k in (r.get("scores") or {})})
    scores = {}
    for k in names:
        parts = [r["scores"][k] for r in recs if k in (r.get("scores") or {})]
        scores[k] = {
            "value": json_safe(aggregate_key(recs, k)),
            "detail": _sum_details([p.get("detail") or {} for p in parts]),
        }
    return scores


def _merged_record(scored: list[Score], estimate: float, label: str) -> dict[str, Any]:
    recs = [r for r in (ek_record(s) for s in scored) if r is not None]
    out: dict[str, Any] = {"success": None}
    if any("successes" in r for r in recs):  # a scorer that decides success
        out["successes"] = int(sum(num(r.get("successes", 0)) for r in recs))
    return {
        **out,
        "n": int(sum(num(r.get("n", 1)) for r in recs)),
        "dollars": _summed_dollars(recs),
        "tokens": int(sum(num(r.get("tokens", 0)) for r in recs)),
        "scores": _merged_scores(recs),
        "epochs": len(scored),
        "epoch_success": [r.get("success") for r in recs],
        "reducer": label,
        "estimate": estimate if math.isfinite(estimate) else None,
    }


def _arguments(k: Any, threshold: Any) -> tuple[int, float]:
    """``k`` an int >= 1 and ``threshold`` a finite number, else an error naming it (a NaN
    threshold made every epoch a failure: a silent 0.0)."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be an int >= 1, got {short_repr(k)}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return k, finite("threshold", threshold)


def _reducer(
    k: int, estimator: Callable[[int, int, int], float], label: str, threshold: float
) -> ScoreReducer:
    """The reducer behind ``ek/pass_hat`` and ``ek/pass_at``. Its first reduction registers
    the after-the-task check of ``k`` against the epochs run (:func:`._epochs.watch_epochs`):
    the reducer itself never warns, since Inspect's live display calls it on partial epochs."""
    k, threshold = _arguments(k, threshold)

    def reduce(scores: list[Score]) -> Score:
        watch_epochs()
        return reduce_epochs(scores, k, estimator, label, threshold)

    return reduce


def _reduced_value(
    dicts: list[Mapping[str, Any]], estimate: float, record: Mapping[str, Any]
) -> dict[str, Any]:
    """The reduced dict value: the estimate, mean dollars/tokens, each ek metric's aggregate."""
    ek_scores = record.get("scores") or {}
    value: dict[str, Any] = {}
    for key in dicts[0]:
        vals = [_to_float(d.get(key)) for d in dicts]
        if key == "success":
            value[key] = estimate
        elif key == "dollars":  # an unknown attempt makes the mean unknown
            value[key] = sum(vals) / len(vals)
        elif key in ek_scores:  # the metric's own ratio of sums over the epochs
            value[key] = num(ek_scores[key]["value"])
        else:
            value[key] = _mean(vals)
    return value


def _counts(
    scored: list[Score], dicts: list[Mapping[str, Any]], threshold: float
) -> tuple[int, int]:
    """``(n, c)``: the epochs whose success is known, and the successes among them."""
    if dicts:
        succ = [_to_float(d.get("success", math.nan)) for d in dicts]
    else:
        succ = [_to_float(s.value) for s in scored]
    ok = [x for x in succ if not math.isnan(x)]
    return len(ok), sum(1 for x in ok if x >= threshold)


def reduce_epochs(
    scores: list[Score],
    k: int,
    estimator: Callable[[int, int, int], float],
    label: str,
    threshold: float = 1.0,
) -> Score:
    """Reduce one sample's epoch scores with ``estimator(n, c, k)`` on its success.

    Unscored epochs (NaN value, or NaN ``success``) are left out of ``n``; with fewer than
    ``k`` left, the estimate is NaN. With fewer than ``k`` epochs in all, it says so (see the
    module docstring).
    """
    k, threshold = _arguments(k, threshold)
    short = too_few_epochs(label, k, len(scores)) if len(scores) < k else None
    scored = [s for s in scores if not _is_nan(s.value)]
    if not scored:
        return Score(value=math.nan, explanation=short or f"{label}: no scored epoch")
    dicts: list[Mapping[str, Any]] = [s.value for s in scored if isinstance(s.value, Mapping)]
    if dicts and not any("success" in d for d in dicts):
        return _undecided(scored, dicts, label)
    n, c = _counts(scored, dicts, threshold)
    estimate = estimator(n, c, k) if n >= k else math.nan
    why = f"{label}: {c} of {n} scored epoch(s) succeeded" + (
        "" if n >= k else f"; undefined with fewer than k={k} scored epochs"
    )
    if short is not None:
        why = f"{why}. {short}"
    record = _merged_record(scored, estimate, label)
    meta = {EK: record}
    if not dicts:
        return Score(value=estimate, explanation=why, metadata=meta)
    return Score(value=_reduced_value(dicts, estimate, record), explanation=why, metadata=meta)


def _undecided(scored: list[Score], dicts: list[Mapping[str, Any]], label: str) -> Score:
    """The reduction of a scorer that decides no success: its other keys, no estimate."""
    record = _merged_record(scored, math.nan, label)
    why = (
        f"{label}: not computed: this scorer decides no success (give it check=... for a "
        "success column, or reduce the scorer that has one)"
    )
    return Score(
        value=_reduced_value(dicts, math.nan, record), explanation=why, metadata={EK: record}
    )


@score_reducer(name="ek/pass_hat")
def pass_hat(k: int = 1, threshold: float = 1.0) -> ScoreReducer:
    """pass^k over epochs (all k attempts succeed), carrying cost; ``"ek/pass_hat_<k>"``.

    Args:
        k: Attempts that must all succeed (``1 <= k <= epochs``).
        threshold: A value at or above it is a success (``"C"`` = 1.0); a finite number.

    Raises:
        ValueError / TypeError: ``k`` is not an int >= 1, or ``threshold`` is not a finite
            number (NaN would fail every epoch: a silent 0.0).
    """
    return _reducer(k, pass_hat_k, f"pass^{k}", threshold)


@score_reducer(name="ek/pass_at")
def pass_at(k: int = 1, threshold: float = 1.0) -> ScoreReducer:
    """pass@k over epochs (at least one of k attempts succeeds), carrying cost; ``"ek/pass_at_<k>"``.

    Args:
        k: Attempts drawn (``1 <= k <= epochs``).
        threshold: A value at or above it is a success (``"C"`` = 1.0); a finite number.

    Raises:
        ValueError / TypeError: as :func:`pass_hat`.
    """
    return _reducer(k, pass_at_k, f"pass@{k}", threshold)
