"""``load_run``: read a run from a trial store, a saved baseline, or an Inspect log.

* a **trial store** (:mod:`ek.agents.store`; first line is the store header): per-task counts
  from the checker's verdicts, the episodes, and every metric's scores;
* a **baseline** (:func:`ek.agents.harness.save_agent_baseline`): the persisted summary
  (counts, slices, metric scores, the cost report priced when it was saved; no episodes);
* an **Inspect AI log** (``.eval``, or ``.json`` with top-level ``eval`` and ``samples``): read
  by ``ek.agents.bridge.read_inspect_log`` (imported only then). Each epoch is a trial
  (``trial = epoch - 1``) whose success is the ek scorer's verdict, or the value of the scorer
  named by ``success_scorer`` (e.g. Inspect's ``"match"``); every ek metric an ek scorer
  recorded in the samples' score metadata (tool calls, trajectory, Cost-of-Pass, ...) becomes a
  metric with its own ratio-of-sums aggregate over those recorded sums, exactly as from a store.
  Samples nothing scored are left out of the counts and counted in
  :attr:`~ek.agents.summary.RunSummary.unscored` (a missing verdict is not a failure).

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
import stat
from collections.abc import Iterable, Mapping
from typing import Any

from ek.base import Score
from ek.scalar_gate import metric_direction

from .cost import cost_report, pricing_from_dict
from .episode import Episode, RunProvenance
from .infra import infra_from_records
from .store import StoreError, read_store
from .summary import SUMMARY_FORMAT, MetricSummary, RunSummary, Unscored, metric_aggregator

__all__ = ["RunLoadError", "load_run", "summary_from_episodes"]


class RunLoadError(ValueError):
    """The file is not a run ek can read (the message says what was expected)."""


def _file_kind(path: str) -> str:
    mode = os.stat(path).st_mode
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)")):
        if test(mode):
            return kind
    return "a special file (socket or device)"


def _first_line(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.readline(1 << 20)


def load_run(
    path: str | os.PathLike[str],
    *,
    success_scorer: str | None = None,
    trace_options: Mapping[str, Any] | None = None,
) -> RunSummary:
    """Read a store, a baseline or an Inspect log into a :class:`~ek.agents.summary.RunSummary`.

    Args:
        path: The file.
        success_scorer: For an Inspect log, the scorer whose value decides success (``"name"``
            or ``"name:key"``; e.g. ``"match"``); default: the ek scorer's verdict. A store or
            a baseline already holds its verdicts, and ignores it.
        trace_options: For a trace file (OTLP JSON), the keywords of
            :func:`ek.agents.traces.summary_from_traces` (``task_attribute``, ``trial_attribute``,
            ``success_attribute``, ``scope``); other files ignore them.

    Raises:
        RunLoadError: the file is none of these (or is corrupt, or truncated, or not a regular
            file: a FIFO or a directory); ``OSError`` when unreadable.
    """
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"{p}: no such file")
    if not os.path.isfile(p):  # a FIFO would block the read forever; a directory is no run
        raise RunLoadError(
            f"{p}: expected a regular file (a trial store, a baseline or an Inspect log), got "
            f"{_file_kind(p)}"
        )
    if p.endswith(".eval"):
        return _from_inspect(p, success_scorer)
    from .traces.summary import is_trace_file, summary_from_traces  # lazy: traces imports runs

    if is_trace_file(p):
        return summary_from_traces(p, **(trace_options or {}))
    head = _first_line(p).strip()
    try:
        first = json.loads(head) if head else None
    except (ValueError, UnicodeDecodeError):
        first = None
    if isinstance(first, dict) and "ek_store" in first:
        return _from_store(p)
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)  # as written: RunSummary.from_dict decodes it (once)
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
        return _from_inspect(p, success_scorer)
    kind = f"format {data.get('format')!r}" if isinstance(data, dict) else type(data).__name__
    raise RunLoadError(
        f"{p}: expected an ek trial store, an ek-agents baseline (format {SUMMARY_FORMAT!r}) or an "
        f"Inspect log (.eval, or .json with 'eval' and 'samples'); got JSON {kind}"
    )


def _metrics(
    names: Iterable[str],
    per_task: Mapping[str, Mapping[str, list[Score]]],
    aggregated_as: Mapping[str, str] | None = None,
) -> dict[str, MetricSummary]:
    out = {}
    for name in names:
        scores = per_task[name]
        flat = [s for ss in scores.values() for s in ss]
        metric = (aggregated_as or {}).get(name)
        agg, _ = metric_aggregator(metric or name)
        hib = metric_direction(metric or name, flat[0].detail if flat else None)
        out[name] = MetricSummary(
            name, hib, agg(flat), {t: tuple(v) for t, v in scores.items()}, metric=metric
        )
    return out


def _from_store(p: str) -> RunSummary:
    try:
        snap = read_store(p)
        h = snap.header
        price, prices = pricing_from_dict(h.get("pricing"))
        run = RunProvenance.from_dict(h["run"])
        tasks: dict[str, list[str]] = dict(h.get("tasks") or {})
        counts: dict[str, list[int]] = {t: [0, 0] for t in tasks}
        eps: list[Episode] = []
        oks: list[bool] = []
        per_task: dict[str, dict[str, list[Score]]] = {}
        order = {t: i for i, t in enumerate(tasks)}
        recs = sorted(snap.records, key=lambda r: (order.get(r["task_id"], len(order)), r["trial"]))
        infra = infra_from_records(recs)
        for rec in recs:
            if rec.get("infra_error"):  # an infrastructure error is not a trial
                continue
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
            cost=cost_report(eps, price=price, prices=prices, successes=oks).to_dict(),
            source=p,
            episodes=tuple(eps),
            verdicts=tuple(oks),
            pricing=h.get("pricing"),
            infra=infra,
        )
    except StoreError as e:
        raise RunLoadError(str(e)) from None
    except (KeyError, TypeError, ValueError) as e:
        raise RunLoadError(f"{p}: corrupt trial store: {type(e).__name__}: {e}") from None


def summary_from_episodes(
    episodes: Iterable[Episode], *, run: RunProvenance | None = None, source: str | None = None
) -> RunSummary:
    """A summary of episodes that already carry their verdict (``success``), e.g. from Inspect.

    ``k`` is the largest per-task trial count. An episode with no recorded success (``None``)
    is not counted (a missing verdict is not a failure): it is reported in
    :attr:`~ek.agents.summary.RunSummary.unscored`.

    Example:
        >>> s = summary_from_episodes([Episode("a", success=True), Episode("a", trial=1, success=False)])
        >>> dict(s.counts), s.k, s.unscored
        ({'a': (2, 1)}, 2, None)
        >>> print(summary_from_episodes([Episode("a", success=True), Episode("b")]).unscored)
        1 of 2 samples unscored: episode 'b' trial 0 has no recorded success
    """
    eps = list(episodes)
    why = [
        f"episode {ep.task_id!r} trial {ep.trial} has no recorded success"
        for ep in eps
        if ep.success is None
    ]
    return _summarize(eps, why, len(eps), run=run, source=source)


def _summarize(
    episodes: list[Episode],
    unscored: list[str],
    n_samples: int,
    *,
    run: RunProvenance | None,
    source: str | None,
    metrics: Mapping[str, MetricSummary] | None = None,
) -> RunSummary:
    counts: dict[str, list[int]] = {}
    eps, oks = [], []
    for ep in episodes:
        if ep.success is None:
            continue
        c = counts.setdefault(ep.task_id, [0, 0])
        c[0] += 1
        c[1] += ep.success
        eps.append(ep)
        oks.append(ep.success)
    if run is None:
        run = next((ep.run for ep in episodes if ep.run is not None), None) or RunProvenance()
    return RunSummary(
        run=run,
        k=max((n for n, _ in counts.values()), default=1),
        counts={t: (n, c) for t, (n, c) in counts.items()},
        metrics=metrics or {},
        cost=cost_report(eps, successes=oks).to_dict(),
        source=source,
        episodes=tuple(eps),
        verdicts=tuple(oks),
        unscored=Unscored(len(unscored), n_samples, unscored[0]) if unscored else None,
    )


def _metric_names(keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """``(scorer, metric)`` -> the name in the report: the metric's own name, or
    ``"scorer:metric"`` when more than one scorer recorded that metric."""
    keys = sorted(set(keys))
    by_metric: dict[str, int] = {}
    for _, m in keys:
        by_metric[m] = by_metric.get(m, 0) + 1
    return {(sc, m): (m if by_metric[m] == 1 else f"{sc}:{m}") for sc, m in keys}


def _from_inspect(p: str, success_scorer: str | None = None) -> RunSummary:
    try:
        from .bridge import read_inspect_log

        eps: list[Episode] = []
        why: list[str] = []
        per: dict[tuple[str, str], dict[str, list[Score]]] = {}
        for rec in read_inspect_log(p, success_from=success_scorer):
            eps.append(rec.episode)
            if rec.unscored is not None:
                why.append(rec.unscored)
            if rec.episode.success is None:
                continue
            for key, score in rec.scores.items():
                per.setdefault(key, {}).setdefault(rec.episode.task_id, []).append(score)
    except ImportError as e:
        raise RunLoadError(f"{p}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        msg = str(e) if p in str(e) else f"{p}: not a readable Inspect log: {e}"
        raise RunLoadError(msg) from None
    names = _metric_names(per)
    per_task = {names[key]: v for key, v in per.items()}
    aggregated_as = {names[key]: key[1] for key in per if names[key] != key[1]}
    metrics = _metrics(sorted(per_task), per_task, aggregated_as)
    return _summarize(eps, why, len(eps), run=None, source=p, metrics=metrics)
