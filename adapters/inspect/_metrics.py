"""Inspect ``@metric`` s that re-derive ek's ratio-of-sums aggregates from score metadata.

A mean of per-sample F1s is not micro-F1, and a mean of per-sample dollars-per-success is not
Cost-of-Pass. These metrics read the sums each ek score carries in ``metadata["ek"]`` (see
:mod:`._meta`) and divide the totals, as :func:`ek.evaluate.evaluate` does. They are declared
``scores="unreduced"``: they see every epoch of every sample, so the corpus number counts every
attempt, whichever epoch reducer the task uses (the built-in ones keep only the first epoch's
metadata).

- ``ek/cost_of_pass_metric``: ``sum(agent dollars) / sum(successes)`` (Erol et al., 2025,
  arXiv:2504.13359); ``inf`` with no success, NaN when any attempt's dollars are unknown.
- ``ek/micro_f1``: ``2·ΣTP / (2·ΣTP + ΣFP + ΣFN)`` of one ek metric's weighted counts.
- ``ek/ek_aggregate``: the ek metric's own ``aggregate()`` over the rebuilt ek scores (one key,
  or every ek metric in the record as a dict).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, metric

from ek.adapters._shell import resolve_metric
from ek.agents.cost import corpus_cost_of_pass
from ek.fields import micro_f1 as _micro_f1

from ._meta import num, rebuild_scores, records
from ._names import qualified

__all__ = [
    "LIVE_METRICS",
    "METRIC_NAMES",
    "aggregate_key",
    "cost_of_pass_metric",
    "cost_of_pass_value",
    "ek_aggregate",
    "micro_f1",
]

#: The registered names.
METRIC_NAMES = ("ek/cost_of_pass_metric", "ek/micro_f1", "ek/ek_aggregate")

#: ek metric instances used by scorers built in this process, by name: their own ``aggregate``
#: wins over a default-constructed one (set by the scorers).
LIVE_METRICS: dict[str, Any] = {}


def cost_of_pass_value(recs: list[Mapping[str, Any]]) -> float:
    """``sum(dollars) / sum(successes)`` over ek records (NaN: unknown dollars or no record).

    The one Cost-of-Pass rule, :func:`ek.agents.cost.corpus_cost_of_pass`, on each record's
    ``dollars`` and ``successes``.
    """
    return corpus_cost_of_pass(_dollars_successes(r) for r in recs)


def _dollars_successes(rec: Mapping[str, Any]) -> tuple[float | None, float]:
    d = rec.get("dollars")
    return (None if d is None else num(d)), num(rec.get("successes", 0))


@metric(name=qualified("cost_of_pass_metric"), scores="unreduced")
def cost_of_pass_metric() -> Metric:
    """Cost-of-Pass over every attempt: ``sum(agent dollars) / sum(successes)`` (lower is better)."""

    def compute(scores: list[SampleScore]) -> float:
        return cost_of_pass_value(records(scores))

    return compute


@metric(name=qualified("micro_f1"), scores="unreduced")
def micro_f1(key: str = "tool_calls") -> Metric:
    """Corpus micro-F1 of the ek metric ``key`` from its summed weighted TP/FP/FN."""

    def compute(scores: list[SampleScore]) -> float:
        details = [s.detail for s in rebuild_scores(records(scores), key)]
        return _micro_f1(details) if details else math.nan

    return compute


def aggregate_key(recs: list[Mapping[str, Any]], key: str) -> float:
    """The aggregate of ek metric ``key`` over the records (its own ``aggregate()``)."""
    scores = rebuild_scores(recs, key)
    if not scores:
        return math.nan
    m = LIVE_METRICS.get(key)
    if m is None:
        try:
            m = resolve_metric(key)
        except Exception:
            m = None
    if m is not None and hasattr(m, "aggregate"):
        return float(m.aggregate(scores))
    if all(k in scores[0].detail for k in ("tp", "fp", "fn")):
        return float(_micro_f1(s.detail for s in scores))
    return math.nan  # no known ratio of sums for an unregistered metric


@metric(name=qualified("ek_aggregate"), scores="unreduced")
def ek_aggregate(key: str | None = None) -> Metric:
    """The ek metric's own corpus aggregate (a ratio of sums) from score metadata.

    Args:
        key: The ek metric name; ``None`` gives a dict with every ek metric found.
    """

    def compute(scores: list[SampleScore]) -> float | dict[str, float]:
        recs = records(scores)
        if key is not None:
            return aggregate_key(recs, key)
        keys = sorted({k for r in recs for k in (r.get("scores") or {})})
        return {k: aggregate_key(recs, k) for k in keys}

    return compute
