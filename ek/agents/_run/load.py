"""``load_run``: read a run from a trial store, a saved baseline, or an Inspect log.

* a **trial store** (:mod:`ek.agents._run.store`; first line is the store header): per-task counts
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
  :attr:`~ek.agents._run.summary.RunSummary.unscored` (a missing verdict is not a failure).

Example:
    >>> import os, tempfile
    >>> from ek.agents.base import RunProvenance
    >>> from ek.agents.harness import save_agent_baseline
    >>> from ek.agents.harness import RunSummary
    >>> p = os.path.join(tempfile.mkdtemp(), "base.json")
    >>> _ = save_agent_baseline(RunSummary(RunProvenance(agent="a"), 1, {"t": (1, 1)}), p)
    >>> load_run(p).n_successes
    1
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ek._validate import opt_str, positive_int, short_repr
from ek.base import Score
from ek.jsonio import readable_file

from .._episode import Cost, Episode, RunProvenance
from .._infra import infra_from_records
from ..cost import ModelPrice, pricing_from_dict
from .store import StoreError, is_store_file, iter_store
from .stored import ReadEpisode, ReadScore, StoredTrials, StoreFile, read_scores
from .summary import SUMMARY_FORMAT, MetricSummary, RunSummary, Unscored
from .tally import MetricTally, RunTally

__all__ = ["RunLoadError", "load_run", "summary_from_episodes"]


class RunLoadError(ValueError):
    """The file is not a run ek can read (the message says what was expected)."""


def load_run(
    path: str | os.PathLike[str],
    *,
    success_scorer: str | None = None,
    trace_options: Mapping[str, Any] | None = None,
    episodes: bool = True,
    prices: Mapping[str, ModelPrice] | None = None,
    workers: int | None = None,
) -> RunSummary:
    """Read a store, a baseline or an Inspect log into a :class:`~ek.agents.harness.RunSummary`.

    The file is read once, as a stream (:mod:`ek.agents._run.tally`). With ``episodes=False`` (what
    ``ek-agents report`` and ``gate`` use) only what the statistics need is kept: per-task
    counts, each metric's per-task sums (one merged Score per task; a metric whose aggregate
    is not a declared ratio of sums keeps its Scores), the cost totals of the run and of each
    slice; memory then grows with tasks x metrics, not with trials.

    Args:
        path: The file.
        success_scorer: For an Inspect log, the scorer whose value decides success (``"name"``
            or ``"name:key"``; e.g. ``"match"``); default: the ek scorer's verdict. A store or
            a baseline already holds its verdicts, and ignores it.
        trace_options: For a trace file (OTLP JSON), the keywords of
            :func:`ek.agents.traces.summary_from_traces` (``task_attribute``, ``trial_attribute``,
            ``success_attribute``, ``scope``); other files ignore them.
        episodes: Keep the episodes, their verdicts and every trial's Scores (default), or
            only the per-task summaries (``False``). A store's are not held in memory: the
            read notes where each trial's record starts (every trial is decoded once, so a
            corrupt one is refused here), and the episodes and each metric's Scores per task
            are :class:`~ek.agents._run.stored.StoredTrials`, read back from the file when
            used; the file must stay the one read (a run still writing it may append:
            :class:`~ek.agents._run.stored.StoreChangedError` if it is replaced or cut).
            Every figure (counts, each metric's value, the costs) is the same either way.
        prices: A ``{model: ModelPrice}`` catalogue to price the trials' costs with, instead of
            the pricing a store recorded (a baseline keeps no costs to re-price: ignored).
        workers: For a store read with ``episodes=False``: how many processes read it, one
            shard of its tasks each (every figure as one reader's). Default: one below
            :data:`PARALLEL_MIN_BYTES`, else one per core available, at most
            :data:`MAX_READERS`. Other files and ``episodes=True`` read in this process.

    Raises:
        RunLoadError: the file is none of these (or is corrupt, or truncated, or not a regular
            file: a FIFO or a directory, or a path no file system accepts, or JSON nested past
            the recursion limit); ``FileNotFoundError`` when missing; ``OSError`` when
            unreadable.
    """
    p = _run_file(path)
    workers = _check_workers(workers)
    try:
        return _load(p, success_scorer, trace_options, episodes, prices, workers)
    except RecursionError:  # json's parser on a file nested past Python's recursion limit
        raise RunLoadError(
            f"{p}: not a run ek can read (RecursionError: its JSON is nested too deeply)"
        ) from None


def _run_file(path: Any) -> str:
    """The path of an existing regular file, or a short error (never the whole of a huge path)."""
    try:
        return readable_file("load_run", path, "run file")
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{e.filename}: no such file") from None
    except ValueError as e:  # a directory, a FIFO (it would block the read), an impossible path
        raise RunLoadError(f"{e} (expected a trial store, a baseline or an Inspect log)") from None


def _load(
    p: str,
    success_scorer: str | None,
    trace_options: Mapping[str, Any] | None,
    episodes: bool,
    prices: Mapping[str, ModelPrice] | None,
    workers: int | None = None,
) -> RunSummary:
    if p.endswith(".eval"):
        return _from_inspect(p, success_scorer, episodes, prices)
    from ..traces._summary import is_trace_file, summary_from_traces  # lazy: traces imports runs

    if is_trace_file(p):
        return summary_from_traces(p, **{"prices": prices, **(trace_options or {})})
    if is_store_file(p):
        return _from_store(p, episodes, prices, workers)
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
        return _from_inspect(p, success_scorer, episodes, prices)
    kind = f"format {data.get('format')!r}" if isinstance(data, dict) else type(data).__name__
    raise RunLoadError(
        f"{p}: expected an ek trial store, an ek-agents baseline (format {SUMMARY_FORMAT!r}) or an "
        f"Inspect log (.eval, or .json with 'eval' and 'samples'); got JSON {kind}"
    )


def _infra_add(acc: dict[str, list[int]], rec: Mapping[str, Any]) -> None:
    if not rec.get("infra_error") and not rec.get("retries"):
        return
    for t, (e, r) in (infra_from_records([rec]) or {}).items():
        a = acc.setdefault(t, [0, 0])
        a[0] += e
        a[1] += r


class _Kept:
    """Where each trial of a store read with ``episodes=True`` is: its record's offset, its
    verdict and the metrics it holds a Score of. The summary's episodes and every trial's Scores
    are :class:`~ek.agents._run.stored.StoredTrials` over these offsets, read back from the
    file when used, so memory grows with the trials' offsets, not with the trials."""

    def __init__(self, tasks: Mapping[str, Any], file: StoreFile) -> None:
        self.file = file
        self.rank = {t: i for i, t in enumerate(tasks)}  # then the tasks it did not list, as seen
        self.rows: list[tuple[int, int, int, bool, tuple[str, ...]]] = []
        self._names: dict[tuple[str, ...], tuple[str, ...]] = {}  # the trials share a few

    def add(self, ep: Episode, at: int, ok: bool, metrics: Iterable[str]) -> None:
        rank = self.rank.setdefault(ep.task_id, len(self.rank))
        names = tuple(metrics)
        self.rows.append((rank, ep.trial, at, ok, self._names.setdefault(names, names)))

    def trials(
        self, run: Mapping[str, Any], metrics: Mapping[str, MetricSummary]
    ) -> tuple[StoredTrials[Episode], tuple[bool, ...], dict[str, MetricSummary]]:
        """The episodes and verdicts in the store's task order (a task's trials together, in
        trial order, whatever order they finished in), and ``metrics`` with every trial's
        Score per task in that order."""
        rows = sorted(self.rows)
        task_of = list(self.rank)
        at: dict[str, dict[str, list[int]]] = {}
        for rank, _, offset, _, names in rows:
            for name in names:
                at.setdefault(name, {}).setdefault(task_of[rank], []).append(offset)
        eps = StoredTrials(
            self.file, array("q", (r[2] for r in rows)), ReadEpisode(run), "episodes"
        )
        per_trial = {
            name: dataclasses.replace(
                m,
                scores={
                    t: StoredTrials(
                        self.file, array("q", offs), ReadScore(name), f"scores of {name!r}"
                    )
                    for t, offs in at.get(name, {}).items()
                },
            )
            for name, m in metrics.items()
        }
        return eps, tuple(r[3] for r in rows), per_trial


def _store_trial(
    rec: Mapping[str, Any], h: Mapping[str, Any], tally: RunTally, kept: _Kept | None, at: int
) -> None:
    ok = bool(rec["success"])
    e, scores = rec["episode"], rec.get("scores") or {}
    for key, value in (("episode", e), ("scores", scores)):
        if not isinstance(value, Mapping):
            raise TypeError(
                f"a trial record's {key!r} must be a JSON object, got {short_repr(value)}"
            )
    if kept is None:
        # only what the statistics need: the costs and the error, checked as an Episode checks them
        error = opt_str("Episode.error", e.get("error"))
        costs = Cost.several(e.get("cost"))
        tally.add(rec["task_id"], ok, costs, error=error, scores=scores)
        return
    # the whole trial is read (a corrupt one refused now, not when it is used), then let go
    ep, read = ReadEpisode(h["run"])(rec), read_scores(rec)
    tally.add(ep.task_id, ok, ep.cost, error=ep.error, scores=read)
    kept.add(ep, at, ok, read)


#: A store at least this large is read with ``episodes=False`` by several processes at once
#: (one shard of its tasks each), when the machine has more than one core for this process.
PARALLEL_MIN_BYTES = 32 << 20
#: At most this many reader processes.
MAX_READERS = 8


def _check_workers(workers: Any) -> int | None:
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"load_run workers must be an int >= 1 or None, got {short_repr(workers)}")
    return positive_int("load_run workers", workers)


def _readers(p: str, workers: int | None) -> int:
    """How many processes read the store: ``workers``, or by the file's size and the cores."""
    if workers is not None:
        return workers
    if os.path.getsize(p) < PARALLEL_MIN_BYTES:
        return 1
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_READERS))


class _StoreRead:
    """What one reader (of the whole store, or of one shard of its tasks) took from it."""

    def __init__(
        self, header: dict[str, Any], run: RunProvenance, tally: RunTally, kept: _Kept | None
    ) -> None:
        self.header, self.run, self.tally, self.kept = header, run, tally, kept
        self.infra: dict[str, list[int]] = {}
        self.first_seen: dict[str, int] = {}  # task -> line of its first record (shards only)


def _read_store(
    p: str,
    keep: bool,
    prices: Mapping[str, ModelPrice] | None,
    shard: tuple[int, int] | None = None,
) -> _StoreRead:
    # the file the trials are read back from: taken before it is read (a store still being
    # written may grow meanwhile; one put in its place is refused when read back)
    file = StoreFile.of(p, growing=True) if keep else None
    with iter_store(p, shard=shard) as st:
        h = st.header
        run = RunProvenance.from_dict(h["run"])  # a header naming no valid run fails first
        price, catalog = (
            (None, prices) if prices is not None else pricing_from_dict(h.get("pricing"))
        )
        tasks: dict[str, list[str]] = dict(h.get("tasks") or {})
        tally = RunTally(tasks=tasks, price=price, prices=catalog)
        out = _StoreRead(h, run, tally, _Kept(tasks, file) if file is not None else None)
        for rec in st:
            if shard is not None and rec["task_id"] not in out.first_seen:
                out.first_seen[rec["task_id"]] = st.line
            _infra_add(out.infra, rec)
            if not rec.get("infra_error"):  # an infrastructure error is not a trial
                _store_trial(rec, h, out.tally, out.kept, st.offset)
    return out


def _read_shards(p: str, prices: Mapping[str, ModelPrice] | None, n: int) -> _StoreRead:
    """The store read by ``n`` processes, one shard of its tasks each, merged in file order.

    A shard reports the first error in its own records; if any fails (or the processes cannot
    run), one reader reads the file again, and reports the file's first error as it always did.
    """
    # imported here: multiprocessing is only needed for a large store (and registers
    # "__mp_main__" among the loaded modules)
    from concurrent.futures.process import BrokenProcessPool

    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=n) as pool:
            jobs = [pool.submit(_read_store, p, False, prices, (i, n)) for i in range(n)]
            parts = [job.result() for job in jobs]
    except (StoreError, KeyError, TypeError, ValueError, OSError, BrokenProcessPool):
        return _read_store(p, False, prices)
    first_seen: dict[str, int] = {}
    infra: dict[str, list[int]] = {}
    for part in parts:
        first_seen.update(part.first_seen)
        infra.update(part.infra)
    head = parts[0]
    out = _StoreRead(
        head.header, head.run, RunTally.merged([part.tally for part in parts], first_seen), None
    )
    out.infra = {t: infra[t] for t in sorted(infra, key=first_seen.__getitem__)}
    return out


def _from_store(
    p: str, keep: bool, prices: Mapping[str, ModelPrice] | None, workers: int | None = None
) -> RunSummary:
    try:
        n = _readers(p, workers)
        read = _read_store(p, keep, prices) if keep or n == 1 else _read_shards(p, prices, n)
        h = read.header
        tasks: dict[str, list[str]] = dict(h.get("tasks") or {})
        return _store_summary(p, h, read.run, tasks, read.tally, read.kept, read.infra)
    except StoreError as e:
        raise RunLoadError(str(e)) from None
    except (KeyError, TypeError, ValueError) as e:
        raise RunLoadError(f"{p}: corrupt trial store: {type(e).__name__}: {e}") from None


def _store_summary(
    p: str,
    h: Mapping[str, Any],
    run: RunProvenance,
    tasks: Mapping[str, Sequence[str]],
    tally: RunTally,
    kept: _Kept | None,
    infra: Mapping[str, Sequence[int]],
) -> RunSummary:
    slices: dict[str, list[str]] = {}
    for t, names in tasks.items():
        for sname in names:
            slices.setdefault(sname, []).append(t)
    eps: Sequence[Episode] | None = None
    oks: tuple[bool, ...] | None = None
    metrics = tally.metric_summaries()  # the report's figures, with or without the trials
    if kept is not None:  # every trial's episode and Scores, read back from the store when used
        eps, oks, metrics = kept.trials(h["run"], metrics)
    return RunSummary(
        run=run,
        k=int(h["k"]),
        counts=tally.counts,
        slices={k: tuple(v) for k, v in slices.items()},
        metrics=metrics,
        cost=tally.cost().to_dict(),
        source=p,
        episodes=eps,
        verdicts=oks,
        pricing=h.get("pricing"),
        infra={t: (e, r) for t, (e, r) in infra.items()} or None,
        slice_cost=tally.slice_costs(),
        agent_failures=tally.agent_failures,
        budget_hits=dict(tally.budget_hits),
        metric_configs=_metric_configs(h.get("metrics")),
        # the checker that decided success (unknown for a store that records it by name only)
        checker=h["checker"] if isinstance(h.get("checker"), Mapping) else None,
    )


def _metric_configs(recorded: Any) -> dict[str, Mapping[str, Any]] | None:
    """The metric configurations a store header records (entries of another shape skipped)."""
    if not isinstance(recorded, Mapping):
        return None
    return {str(n): c for n, c in recorded.items() if isinstance(c, Mapping)}


def summary_from_episodes(
    episodes: Iterable[Episode],
    *,
    run: RunProvenance | None = None,
    source: str | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
) -> RunSummary:
    """A summary of episodes that already carry their verdict (``success``), e.g. from Inspect.

    ``k`` is the largest per-task trial count. An episode with no recorded success (``None``)
    is not counted (a missing verdict is not a failure): it is reported in
    :attr:`~ek.agents._run.summary.RunSummary.unscored`. ``prices`` (a ``{model: ModelPrice}``
    catalogue) prices the episodes' costs in the summary's cost report.

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
    return _summarize(((ep, {}) for ep in eps), why, run=run, source=source, prices=prices)


def _summarize(
    items: Iterable[tuple[Episode, Mapping[tuple[str, str], Score]]],
    unscored: list[str],
    *,
    run: RunProvenance | None,
    source: str | None,
    keep: bool = True,
    prices: Mapping[str, ModelPrice] | None = None,
) -> RunSummary:
    """Episodes with their verdicts (and their metrics' Scores by ``(scorer, metric)``), read
    once: the unscored ones (``success`` None) are not counted."""
    tally = RunTally(prices=prices)
    per: dict[tuple[str, str], MetricTally] = {}
    eps: list[Episode] = []
    n_samples = 0
    for ep, scores in items:
        n_samples += 1
        if run is None and ep.run is not None:
            run = ep.run
        if ep.success is None:
            continue
        tally.add(ep.task_id, ep.success, ep.cost, error=ep.error)
        if keep:
            eps.append(ep)
        for key, score in scores.items():
            m = per.get(key)
            if m is None:
                m = per[key] = MetricTally(key[1], keep=keep)
            m.add(ep.task_id, score)
    counts = tally.counts
    return RunSummary(
        run=run or RunProvenance(),
        k=max((n for n, _ in counts.values()), default=1),
        counts=counts,
        metrics=_named(per, list(counts), keep),
        cost=tally.cost().to_dict(),
        source=source,
        episodes=tuple(eps) if keep else None,
        verdicts=tuple(bool(ep.success) for ep in eps) if keep else None,
        unscored=Unscored(len(unscored), n_samples, unscored[0]) if unscored else None,
        agent_failures=tally.agent_failures,
        budget_hits=dict(tally.budget_hits),
    )


def _named(
    per: Mapping[tuple[str, str], MetricTally], order: Sequence[str], keep: bool
) -> dict[str, MetricSummary]:
    """Each ``(scorer, metric)``'s summary under its name in the report (see
    :func:`_metric_names`); every trial's Scores when ``keep``, else per-task sums."""
    names = _metric_names(per)
    out = {}
    for key in sorted(per, key=lambda k: names[k]):
        name = names[key]
        m = per[key].summary(order)
        out[name] = MetricSummary(
            name, m.higher_is_better, m.value, m.scores, metric=key[1] if name != key[1] else None
        )
    return out


def _metric_names(keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """``(scorer, metric)`` -> the name in the report: the metric's own name, or
    ``"scorer:metric"`` when more than one scorer recorded that metric."""
    keys = sorted(set(keys))
    by_metric: dict[str, int] = {}
    for _, m in keys:
        by_metric[m] = by_metric.get(m, 0) + 1
    return {(sc, m): (m if by_metric[m] == 1 else f"{sc}:{m}") for sc, m in keys}


def _from_inspect(
    p: str,
    success_scorer: str | None = None,
    keep: bool = True,
    prices: Mapping[str, ModelPrice] | None = None,
) -> RunSummary:
    why: list[str] = []

    def items() -> Iterator[tuple[Episode, Mapping[tuple[str, str], Score]]]:
        from ..bridge import read_inspect_log

        for rec in read_inspect_log(p, success_from=success_scorer):
            if rec.unscored is not None:
                why.append(rec.unscored)
            yield rec.episode, rec.scores

    try:
        return _summarize(items(), why, run=None, source=p, keep=keep, prices=prices)
    except ImportError as e:
        raise RunLoadError(f"{p}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        msg = str(e) if p in str(e) else f"{p}: not a readable Inspect log: {e}"
        raise RunLoadError(msg) from None
