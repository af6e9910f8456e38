"""The ``Score.metadata["ek"]`` record the ek scorers write and the metrics/reducers read.

Inspect score values must be flat scalars, and a reducer or metric sees only ``Score`` s, so
everything a ratio-of-sums aggregate needs travels here, as strict JSON (NaN written ``"NaN"``)::

    {"ek": {"success": bool | None, "successes": int, "n": int,
            "dollars": float | None,          # None = unknown (never 0.0)
            "tokens": int,                    # agent tokens
            "scores": {metric_name: {"value": float | "NaN", "detail": {...}}},
            "episode": {...summary...}, "error": str | None}}

A reducer writes the same record with the counts and numeric details summed over epochs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ek.agents.bridge import EK_METADATA_KEY
from ek.base import Score as EkScore

__all__ = ["EK", "ek_record", "num", "rebuild_scores", "records"]

EK = EK_METADATA_KEY


def num(v: Any) -> float:
    """A number from a JSON-safe value (``"NaN"``/``"Infinity"`` strings; others NaN)."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return math.nan
    return math.nan


def ek_record(score: Any) -> Mapping[str, Any] | None:
    """The ek record of an Inspect ``Score`` (or ``None`` when it has none or scoring failed)."""
    md = getattr(score, "metadata", None)
    if not isinstance(md, Mapping):
        return None
    rec = md.get(EK)
    if not isinstance(rec, Mapping) or rec.get("error"):
        return None
    return rec


def records(sample_scores: Iterable[Any]) -> list[Mapping[str, Any]]:
    """The ek records of Inspect ``SampleScore`` s (those without one are skipped)."""
    out = []
    for ss in sample_scores:
        rec = ek_record(getattr(ss, "score", ss))
        if rec is not None:
            out.append(rec)
    return out


def rebuild_scores(recs: Iterable[Mapping[str, Any]], key: str) -> list[EkScore]:
    """ek :class:`~ek.base.Score` s of metric ``key`` rebuilt from the records."""
    out = []
    for rec in recs:
        s = (rec.get("scores") or {}).get(key)
        if isinstance(s, Mapping):
            detail = s.get("detail") or {}
            out.append(EkScore(num(s.get("value")), {k: _undo(v) for k, v in detail.items()}))
    return out


def _undo(v: Any) -> Any:
    if v in ("NaN", "Infinity", "-Infinity"):
        return float(v.replace("Infinity", "inf"))
    return v
