"""A suite run's store session: the header that names the experiment, a trial's record, and
the resume, which streams the stored trials into the run's
:class:`~ek.agents._run.ledger.TrialLedger` (each one's verdict and record offset; the result reads
the episodes and Scores back from the store, :mod:`ek.agents._run.stored`).

Stored Scores are reused only for metrics whose configuration the store's header records (the
store refuses a different one under the name); any other metric is scored afresh on the stored
episode.

Example:
    >>> from ek.agents.base import TaskSpec
    >>> a = suite_fingerprint([TaskSpec("x", gold=1), TaskSpec("y")])
    >>> a == suite_fingerprint([TaskSpec("y"), TaskSpec("x", gold=1)])
    True
    >>> a == suite_fingerprint([TaskSpec("x", gold=2), TaskSpec("y")])
    False
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ek.base import Score
from ek.jsonio import to_json_safe

from ._checker import checker_identity
from ._config import SuiteConfig
from ._episode import Episode, RunProvenance
from ._fingerprint import callable_config, config_diff, metric_config, same_config
from ._run.ledger import TrialLedger, record_retries
from ._run.store import TrialStore
from ._run.stored import ReadEpisode
from ._scoring import score
from ._spec import TaskSpec
from ._suite_metrics import SuiteMetrics
from .cost import pricing_to_dict
from .metrics import check_name

__all__ = [
    "infra_record",
    "open_store",
    "restore",
    "store_header",
    "suite_fingerprint",
    "trial_record",
]


def suite_fingerprint(tasks: Iterable[TaskSpec]) -> str:
    """sha256 of the tasks' canonical JSON (order-independent): a store refuses another suite.

    Example:
        >>> from ek.agents.base import TaskSpec
        >>> len(suite_fingerprint([TaskSpec("x")]))
        64
    """
    items = sorted((to_json_safe(t.to_dict()) for t in tasks), key=lambda d: d["task_id"])
    text = json.dumps(items, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def store_header(
    cfg: SuiteConfig, run: RunProvenance, suite: Sequence[TaskSpec], ms: SuiteMetrics, agent: Any
) -> dict[str, Any]:
    """What names the experiment a store holds (a resume of another one is refused)."""
    from ek import __version__

    check = cfg.check if cfg.check is not None else "output"
    header = {
        "run": run.to_dict(),
        "suite": {"fingerprint": suite_fingerprint(suite), "n_tasks": len(suite)},
        "k": cfg.k,
        "seed": int(run.seed or 0),
        "ek_version": __version__,
        "check": check_name(check),
        # the checker's configuration (a registered name: the function it names now) and
        # whether it is a judge: a resume with another one is refused (see the store), a gate
        # of runs another judge decided too (ek.agents._checker)
        "checker": checker_identity(check),
        # the agent's: a resume with another one warns (its trials would mix two agents)
        "agent": callable_config(agent),
        "tasks": {t.task_id: list(t.slices) for t in suite},
        # what priced the run, so a report of the store gives the run's own Cost-of-Pass
        "pricing": pricing_to_dict(ms.price, ms.prices),
        # each metric's configuration: a resume with other settings under a name is refused
        "metrics": {str(m.name): metric_config(m) for m in ms.reported},
    }
    if cfg.budget is not None:  # a budget changes verdicts: a resume must use the same one
        header["budget"] = cfg.budget.to_dict()
    if cfg.adaptive is not None:  # the stopping rule decides which trials exist
        header["adaptive"] = cfg.adaptive.to_dict()
    if cfg.fault is not None:  # a store holds one fault's trials (or the clean ones)
        header["fault"] = cfg.fault.to_dict()
    if cfg.timeout is not None:  # a trial past it fails: a resume must use the same limit
        header["timeout"] = float(cfg.timeout)
    return header


def open_store(
    cfg: SuiteConfig, run: RunProvenance, suite: Sequence[TaskSpec], ms: SuiteMetrics, agent: Any
) -> TrialStore | None:
    """Open (or create) the run's store (``None`` without one); a store of another experiment
    is refused (:class:`~ek.agents.harness.StoreMismatchError`)."""
    if cfg.store is None:
        return None
    header = store_header(cfg, run, suite, ms, agent)
    st = TrialStore.open(
        cfg.store,
        header,
        fsync_every=cfg.fsync_every,
        fsync_interval=cfg.fsync_interval,
        resume_undescribed_checker=cfg.resume_undescribed_checker,
    )
    _warn_if_other_agent(st, header["agent"])
    return st


def _warn_if_other_agent(st: TrialStore, agent: Mapping[str, Any]) -> None:
    """Warn when a resumed store's trials were run by another agent than this run's."""
    before = st.header.get("agent")
    if not isinstance(before, Mapping) or same_config(before, agent):
        return
    what = "; ".join(config_diff(before, agent)) or "another configuration"
    warnings.warn(
        f"{st.path}: resumed with another agent than the one that ran its {len(st.finished)} "
        f"stored trial(s) ({what}); the run mixes two agents' trials",
        stacklevel=4,
    )


def restore(
    st: TrialStore,
    by_id: Mapping[str, TaskSpec],
    run: RunProvenance,
    ms: SuiteMetrics,
    ledger: TrialLedger,
) -> int:
    """Stream the store's trials into ``ledger`` (each one's verdict and record offset): how
    many were resumed. A trial's episode is rebuilt only to score a metric the store's header
    does not vouch for; those Scores are kept in the ledger (the record does not hold them)."""
    # stored scores are reused only for metrics whose configuration the header records (the
    # store refused a different one); any other metric is scored afresh on the stored episode
    vouched = st.header.get("metrics")
    vouched = vouched if isinstance(vouched, Mapping) else {}
    read_episode = ReadEpisode(run.to_dict())
    n = 0
    for at, rec in st.stored():
        tid, trial = rec["task_id"], rec["trial"]
        task = by_id.get(tid)
        if task is None:  # the fingerprint makes this unreachable; be explicit anyway
            raise ValueError(f"{st.path}: a record names task {tid!r}, which is not in the suite")
        n += 1
        if rec.get("infra_error"):  # not a trial: recorded, left out of the counts
            ledger.add_infra(tid, trial, str(rec["infra_error"]), record_retries(rec))
            continue
        saved = rec.get("scores") or {}
        afresh = [
            m for m in ms.per_task[tid] if not (str(m.name) in saved and str(m.name) in vouched)
        ]
        fresh = {}
        if afresh:
            ep = read_episode(rec)
            fresh = {str(m.name): score(m, ep, task) for m in afresh}
        failed = (rec.get("episode") or {}).get("error") is not None
        ok = bool(rec["success"])
        ledger.add_stored(
            tid, trial, ok, at, failed=failed, retries=record_retries(rec), fresh=fresh
        )
    return n


def trial_record(
    ep: Episode,
    ok: bool,
    scores: Mapping[str, Score],
    run: RunProvenance,
    retries: int = 0,
) -> dict[str, Any]:
    """A finished trial's store record (its episode without the run: the header holds it)."""
    d = ep.to_dict()
    if ep.run is run or ep.run == run:
        d.pop("run", None)  # the header holds it
    rec = {
        "task_id": ep.task_id,
        "trial": ep.trial,
        "success": ok,
        "agent_error": ep.error is not None,
        "episode": d,
        "scores": {n: {"value": s.value, "detail": dict(s.detail)} for n, s in scores.items()},
    }
    if retries:
        rec["retries"] = retries  # infrastructure retries before this trial's result
    return rec


def infra_record(
    task: TaskSpec, trial: int, reason: str, retries: int, dur: float
) -> dict[str, Any]:
    """A trial that ended in an infrastructure error: ``success`` false (a store field every
    reader requires) and ``infra_error`` set, which tells this ek to leave it out of the counts."""
    ep = Episode(task.task_id, trial=trial, error=reason, duration=dur).to_dict()
    return {
        "task_id": task.task_id,
        "trial": trial,
        "success": False,
        "agent_error": False,
        "infra_error": reason,
        "retries": retries,
        "episode": ep,
    }
