"""The agent harness: ``run_suite``, baselines, and the variance-aware regression gate.

This module gathers the public names; the parts live in small modules:
:mod:`~ek.agents._suite` (:func:`run_suite`, :class:`SuiteConfig`, :class:`SuiteResult`,
:class:`TrialContext`, the progress protocol), :mod:`ek.agents._store` (the resumable JSON-lines trial store),
:mod:`ek.agents._summary` (:class:`RunSummary`, what a baseline persists),
:mod:`ek.agents._gate` (:func:`agent_regression_gate`) and :mod:`ek.agents._runs`
(:func:`load_run`).

Example:
    >>> import os, tempfile, warnings
    >>> from ek.agents.base import RunProvenance, TaskSpec
    >>> tasks = [TaskSpec(f"t{i}", input=i, gold=i % 3 != 0) for i in range(30)]
    >>> run = RunProvenance(agent="parity-bot", suite_version="v1", seed=7)
    >>> agent = lambda task, ctx: ctx.rng.random() < 0.8      # a flaky agent, reproducible
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     base = run_suite(agent, tasks, k=3, run=run)
    ...     cur = run_suite(agent, tasks, k=3, run=run)
    >>> path = os.path.join(tempfile.mkdtemp(), "baseline.json")
    >>> _ = save_agent_baseline(base, path)
    >>> gate = agent_regression_gate(cur, load_agent_baseline(path))
    >>> gate.passed, [c.name for c in gate.checks]
    (True, ['success_rate', 'pass^3'])
"""

from __future__ import annotations

import os
from typing import Any

from ek.jsonio import read_json, write_json_atomic

from ._config import Progress, ProgressEvent, SuiteConfig, SuiteOptions
from ._context import TrialContext, trial_seed
from ._gate import GateCheck, GateRefusedError, GateResult, agent_regression_gate, paired_difference
from ._result import SliceResult, SuiteResult
from ._runs import RunLoadError, load_run
from ._scoring import HarnessError
from ._session import suite_fingerprint
from ._store import is_store_file
from ._suite import arun_suite, run_suite
from ._summary import SUMMARY_FORMAT, MetricSummary, RunSummary

__all__ = [
    "GateCheck",
    "GateRefusedError",
    "GateResult",
    "HarnessError",
    "MetricSummary",
    "Progress",
    "ProgressEvent",
    "RunLoadError",
    "RunSummary",
    "SliceResult",
    "SuiteConfig",
    "SuiteOptions",
    "SuiteResult",
    "TrialContext",
    "agent_regression_gate",
    "arun_suite",
    "load_agent_baseline",
    "load_run",
    "paired_difference",
    "run_suite",
    "save_agent_baseline",
    "suite_fingerprint",
    "trial_seed",
]


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
