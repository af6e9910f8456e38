"""Streaming aggregation: what a report and a gate keep of a run, read one trial at a time.

A report or a gate needs, per task, the counts ``(n, c)``; per metric and task, the sums its
``aggregate()`` divides (a ratio of sums: ``tp``/``fp``/``fn`` for tool calls, ``cost`` and
``worst_case`` for a trajectory, ``dollars`` and ``successes`` for Cost-of-Pass, ...); and the
cost totals by token kind, role and model, for the run and each slice. :class:`RunTally` keeps
exactly that while a store, an Inspect log or a trace file is read once, so memory grows with
tasks x metrics, not with trials, and time with the file's size.

**Per-task sums.** A metric that declares the detail fields its aggregate sums is kept as each
task's sums (:class:`~ek.agents._run.sums.TaskSums`: one merged Score a task, whose ``merged_trials``
says how many trials it stands for); the metric's own ``aggregate`` over the merged Scores is its
corpus figure. Tallies of parts of a run merge by adding these sums, task by task. A metric that
declares nothing keeps its Scores whole. What a metric declares, and how Scores merge, is said
once, in :mod:`ek.agents._run.sums`; the intervals over tasks work from the same per-task sums.

Example:
    >>> import ek.agents.metrics
    >>> from ek.base import Score
    >>> t = MetricTally("task_success")
    >>> for ok in (1, 0, 1):
    ...     t.add("a", Score(float(ok), {"successes": ok, "n": 1}))
    >>> m = t.summary(["a"]); m.value, len(m.scores["a"]), m.n_scores
    (0.6666666666666666, 1, 3)
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ek._validate import short_repr
from ek.base import Score
from ek.harness import metric_direction

from .._budget import budget_hits
from .._episode import Cost, Episode
from ..cost import CostReport, CostTally, ModelPrice
from .summary import MetricSummary
from .sums import TaskSums, metric_aggregator, score_from_record, summed_detail

__all__ = ["MetricTally", "RunTally"]


class MetricTally:
    """One metric's Scores over a run, kept as per-task sums (or whole, see the module doc).

    Args:
        name: The metric's name in the run.
        aggregated_as: The registered metric whose aggregate applies, when not ``name``.
        keep: Keep every Score whole (no per-task sums).
    """

    def __init__(self, name: str, aggregated_as: str | None = None, *, keep: bool = False) -> None:
        self.name = name
        self.metric = aggregated_as
        self.fields = None if keep else summed_detail(aggregated_as or name)
        self._sums: dict[str, TaskSums] = {}
        self._kept: dict[str, list[Score]] = {}
        self._first: Mapping[str, Any] | None = None

    @property
    def summed(self) -> bool:
        """True when the metric is kept as per-task sums."""
        return self.fields is not None

    def first_read(self, at: Callable[[str], int]) -> int:
        """Where this tally read its first Score in the file (``at``: a task's first line)."""
        return min(map(at, self._sums or self._kept), default=0)

    def add(self, task_id: str, score: Score | Mapping[str, Any]) -> None:
        """One trial's Score (or a merged one) of task ``task_id``; a store's score record
        (``{"value", "detail"}``) is read as its Score (only its detail, when summed)."""
        if self.fields is None:
            s = score if isinstance(score, Score) else score_from_record(score, self.name)
            if self._first is None:
                self._first = s.detail
            self._kept.setdefault(task_id, []).append(s)
            return
        if type(score) is dict:  # a store's score record, the common case
            detail: Mapping[str, Any] = score.get("detail") or {}
        elif isinstance(score, Score):
            detail = score.detail
        elif isinstance(score, Mapping):
            detail = score.get("detail") or {}
        else:
            detail = score_from_record(score, self.name).detail  # raises: not a score
        if type(detail) is not dict and not isinstance(detail, Mapping):  # untrusted records
            raise TypeError(
                f"metric {self.name!r} task {task_id!r}: Score.detail must be a mapping, got "
                f"{type(detail).__name__}: {short_repr(detail)}"
            )
        if self._first is None:
            self._first = detail
        acc = self._sums.get(task_id)
        if acc is None:
            acc = self._sums[task_id] = TaskSums(self.fields)
        acc.add(detail, (self.name, task_id))

    @classmethod
    def merged(cls, parts: Sequence[MetricTally]) -> MetricTally:
        """One metric's tally of several (parts of one run, in file order): each task's sums
        added field by field, as the declaration says they merge (a metric kept whole: the
        task's Scores in order). The first part's first Score gives the direction, as the first
        Score read would."""
        out = copy.copy(parts[0])  # the same metric and fields; its tasks are set below
        out._sums, out._kept = {}, {}
        out._first = next((p._first for p in parts if p._first is not None), None)
        for p in parts:
            for t, acc in p._sums.items():
                out._sums.setdefault(t, TaskSums(acc.fields)).merge(acc)
            for t, kept in p._kept.items():
                out._kept.setdefault(t, []).extend(kept)
        return out

    def summary(self, order: Iterable[str] = ()) -> MetricSummary:
        """The :class:`~ek.agents.harness.MetricSummary`: tasks in ``order`` first, then the
        others in the order they were first seen; the value is the metric's own aggregate."""
        held: Mapping[str, Any] = self._kept if self.fields is None else self._sums
        first = {t: None for t in order if t in held}
        ids = [*first, *(t for t in held if t not in first)]
        if self.fields is None:
            scores = {t: tuple(self._kept[t]) for t in ids}
        else:
            scores = {t: (self._sums[t].score(),) for t in ids}
        agg, _ = metric_aggregator(self.metric or self.name)
        hib = metric_direction(self.metric or self.name, self._first)
        flat = [s for ss in scores.values() for s in ss]
        return MetricSummary(self.name, hib, agg(flat), scores, metric=self.metric)


class RunTally:
    """A run read one trial at a time: counts, metric sums, costs (the run's and each slice's),
    agent failures and budget stops; nothing that grows with the trials per task.

    Args:
        tasks: ``task_id -> slice names`` (a store's header), or ``None``; these tasks come
            first in :attr:`counts`, in this order, and a slice's costs are tallied apart.
        price: One price for every cost (as :func:`~ek.agents.cost.cost_report`).
        prices: A ``{model: ModelPrice}`` catalogue.

    Example:
        >>> from ek.agents.base import Cost
        >>> t = RunTally(tasks={"a": ["easy"], "b": []})
        >>> t.add("a", True, (Cost(input_tokens=5, model="m"),))
        >>> t.add("a", False, (), error="budget: steps")
        >>> dict(t.counts), t.agent_failures, t.budget_hits, t.slice_costs()["easy"]["n_episodes"]
        ({'a': (2, 1), 'b': (0, 0)}, 1, {'steps': 1}, 2)
    """

    def __init__(
        self,
        *,
        tasks: Mapping[str, Sequence[str]] | None = None,
        price: ModelPrice | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        self._price, self._prices = price, prices
        self._counts: dict[str, list[int]] = {t: [0, 0] for t in tasks or {}}
        self._order = list(self._counts)
        self._slices_of: dict[str, tuple[str, ...]] = {
            t: tuple(str(s) for s in names) for t, names in (tasks or {}).items() if names
        }
        self._cost = CostTally(price=price, prices=prices)
        self._slice_cost: dict[str, CostTally] = {}
        self.metrics: dict[str, MetricTally] = {}
        self.agent_failures = 0
        self.budget_hits: dict[str, int] = {}

    def add(
        self,
        task_id: str,
        success: bool,
        costs: Sequence[Cost],
        *,
        error: str | None = None,
        scores: Mapping[str, Score | Mapping[str, Any]] | None = None,
        aggregated_as: Mapping[str, str] | None = None,
    ) -> None:
        """One trial: its verdict, its costs, its error (if any) and its metrics' Scores."""
        c = self._counts.get(task_id)
        if c is None:
            c = self._counts[task_id] = [0, 0]
        c[0] += 1
        c[1] += bool(success)
        prepared = self._cost.prepare(costs)  # priced once, for the run's tally and its slices'
        self._cost.add_prepared(prepared, success)
        for sname in self._slices_of.get(task_id, ()):
            tally = self._slice_cost.get(sname)
            if tally is None:
                tally = self._slice_cost[sname] = CostTally(price=self._price, prices=self._prices)
            tally.add_prepared(prepared, success)
        if error is not None:
            self.agent_failures += 1
            for limit, n in budget_hits([Episode(task_id, error=error)]).items():
                self.budget_hits[limit] = self.budget_hits.get(limit, 0) + n
        for name, score in (scores or {}).items():
            m = self.metrics.get(name)
            if m is None:
                m = self.metrics[name] = MetricTally(name, (aggregated_as or {}).get(name))
            m.add(task_id, score)

    @classmethod
    def merged(cls, parts: Sequence[RunTally], first_seen: Mapping[str, int]) -> RunTally:
        """One tally of several over parts of one run (shards of a store read in several
        processes, each built with the same ``tasks``, price and prices): every count and sum
        added, task by task (:meth:`MetricTally.merged`, :meth:`CostTally.merged`).

        ``first_seen`` (``task_id -> position`` of its first trial in the file, for every
        task read) puts what one reader orders as it reads in file order: the tasks ``tasks``
        did not list (so the counts, and every figure drawn from them, are one reader's), the
        slices, and each metric's first Score. Dollars are summed exactly
        (:class:`~ek.agents.cost.CostTally`), so they too are one reader's.
        """
        if not parts:
            raise ValueError("RunTally.merged needs at least one tally, got none")
        at = first_seen.__getitem__
        head = parts[0]
        out = cls(price=head._price, prices=head._prices)
        out._slices_of, out._order = dict(head._slices_of), list(head._order)
        out._counts = _added_counts(parts, head._order, at)
        out._cost = CostTally.merged([p._cost for p in parts])
        out._slice_cost = _merged_slice_costs(parts, out._slices_of, first_seen)
        for name in sorted({n for p in parts for n in p.metrics}):
            held = [p.metrics[name] for p in parts if name in p.metrics]
            out.metrics[name] = MetricTally.merged(sorted(held, key=lambda m: m.first_read(at)))
        out.agent_failures = sum(p.agent_failures for p in parts)
        for p in sorted(parts, key=lambda p: p.first_read(at)):
            for limit, n in p.budget_hits.items():
                out.budget_hits[limit] = out.budget_hits.get(limit, 0) + n
        return out

    def first_read(self, at: Callable[[str], int]) -> int:
        """Where this tally read its first trial in the file (``at``: a task's first line)."""
        return min((at(t) for t, (n, _) in self._counts.items() if n), default=0)

    @property
    def counts(self) -> dict[str, tuple[int, int]]:
        """``task_id -> (n, c)``: the given tasks first (in order), then the others as seen."""
        return {t: (n, c) for t, (n, c) in self._counts.items()}

    def metric_summaries(self) -> dict[str, MetricSummary]:
        """Each metric's summary, by name (sorted), tasks in :attr:`counts` order."""
        order = list(self._counts)
        return {n: self.metrics[n].summary(order) for n in sorted(self.metrics)}

    def cost(self) -> CostReport:
        """The run's cost report (every trial added)."""
        return self._cost.report()

    def slice_costs(self) -> dict[str, dict[str, Any]]:
        """``slice name -> cost report dict`` of the trials of its tasks."""
        return {s: t.report().to_dict() for s, t in self._slice_cost.items()}


def _added_counts(
    parts: Sequence[RunTally], listed: Sequence[str], at: Callable[[str], int]
) -> dict[str, list[int]]:
    """Each task's ``[n, c]`` summed over the parts: the listed tasks first, in order, then
    the others in file order."""
    known = set(listed)
    unlisted = sorted({t for p in parts for t in p._counts if t not in known}, key=at)
    out: dict[str, list[int]] = {t: [0, 0] for t in (*listed, *unlisted)}
    for p in parts:
        for t, (n, c) in p._counts.items():
            out[t][0] += n
            out[t][1] += c
    return out


def _merged_slice_costs(
    parts: Sequence[RunTally], slices_of: Mapping[str, Sequence[str]], first_seen: Mapping[str, int]
) -> dict[str, CostTally]:
    """Each slice's cost tally over the parts, the slices in the order one reader meets them."""
    order: dict[str, None] = {}
    for t in sorted((t for t in first_seen if t in slices_of), key=first_seen.__getitem__):
        order.update(dict.fromkeys(slices_of[t]))
    held: dict[str, list[CostTally]] = {s: [] for s in order}
    for p in parts:
        for sname, tally in p._slice_cost.items():
            held.setdefault(sname, []).append(tally)
    return {sname: CostTally.merged(ts) for sname, ts in held.items() if ts}
