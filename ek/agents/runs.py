"""``load_run``: read a run from a trial store, a saved baseline, or an Inspect log.

* a **trial store** (:mod:`ek.agents.store`; first line is the store header): per-task counts
  from the checker's verdicts, the episodes, and every metric's scores;
* a **baseline** (:func:`ek.agents.harness.save_agent_baseline`): the persisted summary
  (counts, slices, metric scores, the cost report priced when it was saved; no episodes);
* an **Inspect AI log** (``.eval``, or ``.json`` with top-level ``eval`` and ``samples``):
  converted by ``ek.agents.bridge.episodes_from_inspect_log`` (imported only then), whose
  episodes carry the recorded success and ``trial = epoch - 1``.

Example:
    >>> import os, tempfile
    >>> from ek.agents.base import RunProvenance
    >>> from ek.agents.harness import save_agent_baseline
    >>> from ek.agents.summary import RunSummary
    >>> p = os.path.join(tempfile.mkdtemp(), "base.json")
    >>> _ = save_agent_baseline(RunSummary(RunProvenance(agent="a"), 1, {"t": (1, 1)}), p)
    >>> load_run(p).n_successes
    1
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ek.base import Score
from ek.harness import from_json_safe, metric_direction

from .base import Episode, RunProvenance
from .cost import cost_report
from .store import StoreError, read_store
from .summary import SUMMARY_FORMAT, MetricSummary, RunSummary, metric_aggregator

__all__ = ["RunLoadError", "load_run", "summary_from_episodes"]


class RunLoadError(ValueError):
    """The file is not a run ek can read (the message says what was expected)."""


def _first_line(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.readline(1 << 20)


def load_run(path: str | os.PathLike[str]) -> RunSummary:
    """Read a store, a baseline or an Inspect log into a :class:`~ek.agents.summary.RunSummary`.

    Raises:
        RunLoadError: the file is none of these (or is corrupt); ``OSError`` when unreadable.
    """
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"{p}: no such file")
    if p.endswith(".eval"):
        return _from_inspect(p)
    head = _first_line(p).strip()
    try:
        first = json.loads(head) if head else None
    except (ValueError, UnicodeDecodeError):
        first = None
    if isinstance(first, dict) and "ek_store" in first:
        return _from_store(p)
    try:
        with open(p, encoding="utf-8") as fh:
            data = from_json_safe(json.load(fh))
    except (ValueError, UnicodeDecodeError) as e:
        raise RunLoadError(
            f"{p}: not an ek trial store, an ek-agents baseline or an Inspect log (not JSON: {e})"
        ) from None
    if isinstance(data, dict) and data.get("format") == SUMMARY_FORMAT:
        try:
            return RunSummary.from_dict(data, source=p)
        except (TypeError, ValueError, KeyError) as e:
            raise RunLoadError(f"{p}: corrupt ek-agents baseline: {e}") from None
    if isinstance(data, dict) and "eval" in data and "samples" in data:
        return _from_inspect(p)
    kind = f"format {data.get('format')!r}" if isinstance(data, dict) else type(data).__name__
    raise RunLoadError(
        f"{p}: expected an ek trial store, an ek-agents baseline (format {SUMMARY_FORMAT!r}) or an "
        f"Inspect log (.eval, or .json with 'eval' and 'samples'); got JSON {kind}"
    )


def _metrics(
    names: Iterable[str], per_task: Mapping[str, Mapping[str, list[Score]]]
) -> dict[str, MetricSummary]:
    out = {}
    for name in names:
        scores = per_task[name]
        flat = [s for ss in scores.values() for s in ss]
        agg, _ = metric_aggregator(name)
        hib = metric_direction(name, flat[0].detail if flat else None)
        out[name] = MetricSummary(name, hib, agg(flat), {t: tuple(v) for t, v in scores.items()})
    return out


def _from_store(p: str) -> RunSummary:
    try:
        snap = read_store(p)
        h = snap.header
        run = RunProvenance.from_dict(h["run"])
        tasks: dict[str, list[str]] = dict(h.get("tasks") or {})
        counts: dict[str, list[int]] = {t: [0, 0] for t in tasks}
        eps: list[Episode] = []
        oks: list[bool] = []
        per_task: dict[str, dict[str, list[Score]]] = {}
        order = {t: i for i, t in enumerate(tasks)}
        recs = sorted(snap.records, key=lambda r: (order.get(r["task_id"], len(order)), r["trial"]))
        for rec in recs:
            d = dict(rec["episode"])
            d.setdefault("run", h["run"])
            ok = bool(rec["success"])
            ep = Episode.from_dict(d).replace(success=ok)
            eps.append(ep)
            oks.append(ok)
            c = counts.setdefault(ep.task_id, [0, 0])
            c[0] += 1
            c[1] += ok
            for name, sd in (rec.get("scores") or {}).items():
                v = sd.get("value")
                s = Score(float("nan") if v is None else float(v), sd.get("detail") or {})
                per_task.setdefault(name, {}).setdefault(ep.task_id, []).append(s)
        slices: dict[str, list[str]] = {}
        for t, names in tasks.items():
            for sname in names:
                slices.setdefault(sname, []).append(t)
        return RunSummary(
            run=run,
            k=int(h["k"]),
            counts={t: (n, c) for t, (n, c) in counts.items()},
            slices={k: tuple(v) for k, v in slices.items()},
            metrics=_metrics(sorted(per_task), per_task),
            cost=cost_report(eps, successes=oks).to_dict(),
            source=p,
            episodes=tuple(eps),
            verdicts=tuple(oks),
        )
    except StoreError as e:
        raise RunLoadError(str(e)) from None
    except (KeyError, TypeError, ValueError) as e:
        raise RunLoadError(f"{p}: corrupt trial store: {type(e).__name__}: {e}") from None


def summary_from_episodes(
    episodes: Iterable[Episode], *, run: RunProvenance | None = None, source: str | None = None
) -> RunSummary:
    """A summary of episodes that already carry their verdict (``success``), e.g. from Inspect.

    ``k`` is the largest per-task trial count.

    Raises:
        RunLoadError: an episode has no recorded success (a missing verdict is not a failure).

    Example:
        >>> s = summary_from_episodes([Episode("a", success=True), Episode("a", trial=1, success=False)])
        >>> dict(s.counts), s.k
        ({'a': (2, 1)}, 2)
    """
    eps = list(episodes)
    counts: dict[str, list[int]] = {}
    oks = []
    for ep in eps:
        if ep.success is None:
            raise RunLoadError(
                f"episode {ep.task_id!r} trial {ep.trial} has no recorded success; cannot count it"
            )
        c = counts.setdefault(ep.task_id, [0, 0])
        c[0] += 1
        c[1] += ep.success
        oks.append(ep.success)
    if run is None:
        run = next((ep.run for ep in eps if ep.run is not None), None) or RunProvenance()
    return RunSummary(
        run=run,
        k=max((n for n, _ in counts.values()), default=1),
        counts={t: (n, c) for t, (n, c) in counts.items()},
        cost=cost_report(eps, successes=oks).to_dict(),
        source=source,
        episodes=tuple(eps),
        verdicts=tuple(oks),
    )


def _from_inspect(p: str) -> RunSummary:
    try:
        from . import bridge
    except ImportError as e:  # pragma: no cover - depends on what is installed
        raise RunLoadError(f"{p}: reading Inspect logs needs ek.agents.bridge ({e})") from None
    fn: Any = getattr(bridge, "episodes_from_inspect_log", None)
    if fn is None:
        raise RunLoadError(
            f"{p}: reading Inspect logs needs ek.agents.bridge.episodes_from_inspect_log, "
            "which this installation does not have"
        )
    return summary_from_episodes(fn(p), source=p)
