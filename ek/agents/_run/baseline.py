"""Baselines: a run frozen as a file (:func:`save_agent_baseline`) and read back.

What a baseline holds is a :class:`~ek.agents.harness.RunSummary` (``_summary.py``); the gate
that compares a run with it is ``_gate.py``. Public through :mod:`ek.agents.harness`.
"""

from __future__ import annotations

import os
from typing import Any

from ek.jsonio import read_json, write_json_atomic

from .._result import SuiteResult
from .load import RunLoadError
from .store import is_store_file
from .summary import SUMMARY_FORMAT, RunSummary

__all__ = ["load_agent_baseline", "save_agent_baseline"]


def save_agent_baseline(
    result: SuiteResult | RunSummary, path: str | os.PathLike[str]
) -> RunSummary:
    """Freeze a run as a baseline file (atomic write) and return what was saved.

    Persists the raw counts (total and per task), the slices, every metric's per-task scores,
    the cost report, the provenance and the ek version: everything
    :func:`agent_regression_gate` needs, and nothing it would have to guess.

    Raises:
        ValueError: the run has no trial (an empty baseline would pass every future run), or
            ``path`` holds a trial store (a baseline written over it would lose its trials,
            and a run still writing it would write to a file no longer there).
    """
    if is_store_file(path):
        raise ValueError(
            f"save_agent_baseline: {os.fspath(path)} is a trial store; a baseline written over "
            "it would lose its trials: save the baseline to another path"
        )
    summary: Any = result.summary() if isinstance(result, SuiteResult) else result
    if not isinstance(summary, RunSummary):
        raise TypeError(
            f"save_agent_baseline expects a SuiteResult or a RunSummary, got {type(result).__name__}"
        )
    if summary.is_empty:
        raise ValueError(
            "refusing to save a baseline with zero trials: an empty baseline is a permanent free "
            "pass for every future run"
        )
    write_json_atomic(path, summary.to_dict())
    return summary


def load_agent_baseline(path: str | os.PathLike[str]) -> RunSummary:
    """Read a baseline written by :func:`save_agent_baseline`.

    Raises:
        RunLoadError: the file is not an ek-agents baseline; ``OSError`` when unreadable.
    """
    p = os.fspath(path)
    data = read_json(p, decode=False)  # RunSummary.from_dict decodes it (once)
    if not isinstance(data, dict) or data.get("format") != SUMMARY_FORMAT:
        raise RunLoadError(f"{p}: not an ek-agents baseline (expected format {SUMMARY_FORMAT!r})")
    try:
        return RunSummary.from_dict(data, source=p)
    except (TypeError, ValueError, KeyError) as e:
        raise RunLoadError(f"{p}: corrupt ek-agents baseline: {e}") from None
