"""The agent harness: ``run_suite``, baselines, and the variance-aware regression gate.

The face of the harness: the one import path of these names (the spec's). It defines nothing;
the parts live in private modules: the runner (:func:`run_suite`, :class:`SuiteConfig`,
:class:`SuiteResult`, :class:`TrialContext`, the progress protocol), ``_store.py`` (the
resumable JSON-lines trial store), ``_summary.py`` (:class:`RunSummary`, what a report and a
baseline hold), ``_baseline.py`` (baseline files), ``_gate.py`` (:func:`agent_regression_gate`)
and ``_runs.py`` (:func:`load_run`).

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

from ._config import Progress, ProgressEvent, SuiteConfig, SuiteOptions
from ._context import TrialContext, trial_seed
from ._gate import GateCheck, GateRefusedError, GateResult, agent_regression_gate, paired_difference
from ._result import SliceResult, SuiteResult
from ._run.baseline import load_agent_baseline, save_agent_baseline
from ._run.load import RunLoadError, load_run, summary_from_episodes
from ._run.store import (
    StoreError,
    StoreLockedError,
    StoreMismatchError,
    StoreSnapshot,
    StoreStream,
    TrialStore,
    iter_store,
    read_store,
)
from ._run.summary import SUMMARY_FORMAT, MetricSummary, RunSummary, Unscored
from ._run.sums import metric_aggregator
from ._scoring import HarnessError
from ._session import suite_fingerprint
from ._suite import arun_suite, run_suite

__all__ = [
    "SUMMARY_FORMAT",
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
    "StoreError",
    "StoreLockedError",
    "StoreMismatchError",
    "StoreSnapshot",
    "StoreStream",
    "SuiteConfig",
    "SuiteOptions",
    "SuiteResult",
    "TrialContext",
    "TrialStore",
    "Unscored",
    "agent_regression_gate",
    "arun_suite",
    "iter_store",
    "load_agent_baseline",
    "load_run",
    "metric_aggregator",
    "paired_difference",
    "read_store",
    "run_suite",
    "save_agent_baseline",
    "suite_fingerprint",
    "summary_from_episodes",
    "trial_seed",
]
