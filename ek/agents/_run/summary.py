"""What a report and a gate need to know about a run: :class:`RunSummary`.

A summary is the persisted form of a suite run: its :class:`~ek.agents.base.RunProvenance`, the
raw per-task counts ``task_id -> (n trials, c successes)`` (Newcombe's interval needs raw counts,
not rates), the slices, every metric's per-task scores (so a gate can re-derive each metric's
ratio-of-sums aggregate under resampling), and the cost report priced when it was made.
:meth:`ek.agents.harness.SuiteResult.summary` builds one; :func:`ek.agents.harness.save_agent_baseline`
freezes one; :func:`ek.agents.harness.load_run` reads one from a store, a baseline or an Inspect log.

Example:
    >>> from ek.agents.base import RunProvenance
    >>> s = RunSummary(RunProvenance(agent="bot"), k=2, counts={"a": (2, 1), "b": (2, 2)})
    >>> s.n_trials, s.n_successes, s.n_tasks
    (4, 3, 2)
    >>> RunSummary.from_dict(s.to_dict()) == s
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import positive_int, short_repr
from ek.base import ReadOnlyDict, Score
from ek.jsonio import from_json_safe, to_json_safe

from .._episode import Episode, RunProvenance
from .stored import StoredTrials
from .sums import MERGED_TRIALS, score_from_record

__all__ = [
    "SUMMARY_FORMAT",
    "MetricSummary",
    "RunSummary",
    "Unscored",
]

#: The ``format`` marker of a saved agent baseline.
SUMMARY_FORMAT = "ek-agents/baseline"


def _scores(scores: Sequence[Score]) -> Sequence[Score]:
    """A task's Scores as a summary holds them: a tuple, or (a run read from its store with
    its trials) a :class:`~ek.agents._run.stored.StoredTrials` reading them back when used."""
    return scores if isinstance(scores, StoredTrials) else tuple(scores)


@dataclass(frozen=True)
class MetricSummary:
    """One metric over a run: its direction, its corpus aggregate and its scores per task.

    ``higher_is_better`` is read from the scores' ``detail["higher_is_better"]`` first (see
    :func:`ek.harness.metric_direction`). ``metric`` names the registered ek metric whose
    ``aggregate`` applies when it differs from ``name`` (an Inspect log scored by two scorers
    that both recorded ``tool_calls`` gives ``"scorer_a:tool_calls"`` and
    ``"scorer_b:tool_calls"``, both aggregated as ``tool_calls``); ``None`` means ``name``.
    A task's ``scores`` are a tuple, or (a store read with its trials) a
    :class:`~ek.agents._run.stored.StoredTrials` that reads them back from the file when used.
    """

    name: str
    higher_is_better: bool
    value: float
    scores: Mapping[str, Sequence[Score]]
    metric: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"MetricSummary.name must be a non-empty str, got {self.name!r}")
        if self.metric is not None and (not isinstance(self.metric, str) or not self.metric):
            raise ValueError(
                f"MetricSummary.metric must be a non-empty str or None, got {self.metric!r}"
            )
        if not isinstance(self.higher_is_better, bool):
            raise TypeError(
                f"MetricSummary.higher_is_better must be a bool, got {self.higher_is_better!r}"
            )
        object.__setattr__(self, "value", float(self.value))
        object.__setattr__(
            self, "scores", ReadOnlyDict({str(t): _scores(s) for t, s in self.scores.items()})
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetricSummary):
            return NotImplemented
        same_value = self.value == other.value or (
            math.isnan(self.value) and math.isnan(other.value)
        )
        return (
            self.name == other.name
            and self.aggregated_as == other.aggregated_as
            and self.higher_is_better == other.higher_is_better
            and same_value
            and to_json_safe(self._scores_dict()) == to_json_safe(other._scores_dict())
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def n_scores(self) -> int:
        """The trials' Scores this summary stands for (a task's Scores merged into one, see
        :mod:`ek.agents._run.sums`, count for the trials they merged)."""
        return sum(int(s.detail.get(MERGED_TRIALS, 1)) for ss in self.scores.values() for s in ss)

    @property
    def aggregated_as(self) -> str:
        """The registered metric name whose aggregate applies (``metric``, else ``name``)."""
        return self.metric or self.name

    def _scores_dict(self) -> dict[str, list[dict[str, Any]]]:
        return {t: [s.to_dict() for s in ss] for t, ss in self.scores.items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (non-finite floats spelled by :func:`ek.jsonio.to_json_safe`)."""
        d: dict[str, Any] = {
            "name": self.name,
            "higher_is_better": self.higher_is_better,
            "value": self.value,
            "scores": self._scores_dict(),
        }
        if self.metric is not None:
            d["metric"] = self.metric
        return dict(to_json_safe(d))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricSummary:
        """Inverse of :meth:`to_dict` (decodes the non-finite floats :meth:`to_dict` spelled)."""
        return cls._from_decoded(from_json_safe(dict(data)))

    @classmethod
    def _from_decoded(cls, d: Mapping[str, Any]) -> MetricSummary:
        scores = d.get("scores") or {}
        if not isinstance(scores, Mapping):
            raise ValueError(
                f"MetricSummary.scores must be a mapping, got {short_repr(scores, 100)}"
            )
        return cls(
            name=d["name"],
            higher_is_better=d["higher_is_better"],
            value=math.nan if d.get("value") is None else float(d["value"]),
            scores={
                t: tuple(score_from_record(x, f"metric {d['name']!r} task {t!r}") for x in ss)
                for t, ss in scores.items()
            },
            metric=d.get("metric"),
        )


@dataclass(frozen=True)
class Unscored:
    """Samples a run read but could not score: how many, of how many, and the first reason.

    A sample is unscored when nothing decided its success (no scorer verdict, a NaN value, a
    scorer that failed) or when an ek metric failed on it. Its trial is left out of the counts
    (a missing verdict is not a failure), so every report shows this and the gate refuses such
    a run unless told otherwise (``allow_unscored``).

    Example:
        >>> str(Unscored(3, 30, "scorer 'match' did not score it"))
        "3 of 30 samples unscored: scorer 'match' did not score it"
    """

    n: int
    of: int
    reason: str

    def __post_init__(self) -> None:
        for label, v in (("n", self.n), ("of", self.of)):
            positive_int(f"Unscored.{label}", v, minimum=0)
        if self.n > self.of:
            raise ValueError(f"Unscored.n={self.n} exceeds the samples read, of={self.of}")
        if not isinstance(self.reason, str):
            raise TypeError(f"Unscored.reason must be a str, got {type(self.reason).__name__}")

    def __str__(self) -> str:
        return f"{self.n} of {self.of} samples unscored: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "of", "reason"}``."""
        return {"n": self.n, "of": self.of, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Unscored:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, Mapping):
            raise ValueError(
                f"expected an unscored record {{n, of, reason}}, got {short_repr(data, 100)}"
            )
        return cls(data["n"], data["of"], str(data.get("reason") or ""))


def _notes(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(n, str) for n in value):
        raise TypeError(f"RunSummary.notes must be a tuple of str, got {short_repr(value, 100)}")
    return tuple(value)


def _counts(value: Any, what: str = "counts", ordered: bool = True) -> dict[str, tuple[int, int]]:
    if not isinstance(value, Mapping):
        raise TypeError(
            f"RunSummary.{what} must be a mapping task_id -> (n, c), got {short_repr(value, 100)}"
        )
    out: dict[str, tuple[int, int]] = {}
    for t, pair in value.items():
        if not isinstance(t, str) or not t:
            raise TypeError(f"RunSummary.counts keys must be task-id strings, got {t!r}")
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise TypeError(
                f"RunSummary.{what}[{short_repr(t, 100)}] must be a pair (n, c), got {short_repr(pair, 100)}"
            )
        n, c = pair
        for label, v in (("n", n), ("c", c)):
            positive_int(f"RunSummary.{what}[{short_repr(t, 100)}] {label}", v, minimum=0)
        if ordered and c > n:
            raise ValueError(
                f"RunSummary.{what}[{short_repr(t, 100)}]: successes c={c} exceed trials n={n}"
            )
        out[t] = (n, c)
    return out


def _metric_summaries(value: Any) -> dict[str, MetricSummary]:
    """``metric name -> MetricSummary``, or a TypeError naming what is off."""
    if not isinstance(value, Mapping):
        raise TypeError(f"RunSummary.metrics must be a mapping, got {short_repr(value, 100)}")
    for name, m in value.items():
        if not isinstance(m, MetricSummary):
            raise TypeError(f"RunSummary.metrics[{short_repr(name, 100)}] must be a MetricSummary")
    return dict(value)


def _slices(value: Any) -> dict[str, tuple[str, ...]]:
    """``slice name -> task ids`` (strings), or an error naming what is off."""
    if not isinstance(value, Mapping):
        raise TypeError(f"RunSummary.slices must be a mapping, got {short_repr(value, 100)}")
    out = {}
    for name, ids in value.items():
        if isinstance(ids, str) or not isinstance(ids, (list, tuple)):
            raise TypeError(
                f"RunSummary.slices[{short_repr(name, 100)}] must be a list of task ids, got "
                f"{short_repr(ids, 100)}"
            )
        bad = [t for t in ids if not isinstance(t, str)]
        if bad or not isinstance(name, str):
            raise TypeError(
                f"RunSummary.slices: names and task ids must be str, got "
                f"{short_repr(name if not isinstance(name, str) else bad[0], 100)}"
            )
        out[name] = tuple(ids)
    return out


def _fault_counts(value: Any) -> ReadOnlyDict[str, Mapping[str, tuple[int, int]]]:
    """``fault kind -> task_id -> (n, c)``, read-only, or an error naming what is off."""
    if not isinstance(value, Mapping):
        raise TypeError(f"RunSummary.faults must be a mapping, got {short_repr(value, 100)}")
    return ReadOnlyDict(
        {str(f): ReadOnlyDict(_counts(c, f"faults[{f!r}]")) for f, c in value.items()}
    )


def _configs(value: Any) -> ReadOnlyDict[str, Mapping[str, Any]]:
    """``metric name -> configuration mapping``, read-only, or a TypeError."""
    if not isinstance(value, Mapping) or not all(
        isinstance(n, str) and isinstance(c, Mapping) for n, c in value.items()
    ):
        raise TypeError(
            f"RunSummary.metric_configs must map metric names to configurations, got {short_repr(value, 100)}"
        )
    return ReadOnlyDict({n: ReadOnlyDict(dict(c)) for n, c in value.items()})


def _checker(value: Any) -> ReadOnlyDict[str, Any]:
    """The recorded checker (a mapping, :func:`ek.agents._checker.checker_identity`), or a
    TypeError."""
    if not isinstance(value, Mapping):
        raise TypeError(
            f"RunSummary.checker must be a mapping (the checker's description) or None, got "
            f"{short_repr(value, 100)}"
        )
    return ReadOnlyDict(dict(value))


@dataclass(frozen=True)
class RunSummary:
    """A run as a report and a gate see it.

    Attributes:
        run: The run's provenance (its comparability keys guard the gate).
        k: Trials per task the run was asked for.
        counts: ``task_id -> (n trials, c successes)``; raw counts, never rates.
        slices: ``slice name -> task ids``.
        metrics: ``metric name -> MetricSummary``.
        cost: The run's :class:`~ek.agents.cost.CostReport` as a dict (priced when summarised),
            or ``None``.
        source: Where it was read from (a path), or ``None`` for an in-memory run.
        episodes: The episodes, when the source has them (a store, an Inspect log); not saved
            in a baseline. A store's are read back from it when used (``StoredTrials``).
        verdicts: The checker's verdict for each episode (aligned with ``episodes``).
        unscored: The samples read but not scored (left out of ``counts``), or ``None``.
        pricing: The price setting a run store recorded (``pricing_to_dict``), so a report
            re-prices its episodes as the run did; not saved in a baseline (its ``cost`` is).
        infra: ``task_id -> (trials that ended in an infrastructure error, retries)``, or
            ``None`` when the run had neither (see :mod:`ek.agents._infra`); those trials are
            not in ``counts``.
        faults: ``fault kind -> task_id -> (n, c)``: the same tasks run under each injected
            fault (see :mod:`ek.agents._faults`), or ``None``; ``counts`` are the clean runs.
        slice_cost: ``slice name -> cost report dict`` of its tasks' trials, when read from
            trials (:func:`ek.agents.harness.load_run`); not saved in a baseline.
        agent_failures: Trials whose agent raised or was stopped (an ``error``), when read
            from trials; not saved in a baseline.
        budget_hits: ``limit -> trials a budget stopped``, when read from trials; not saved.
        notes: What the report should say about how the run was read (e.g. a trace file's runs
            that could not be read, or what its spans do not record); not saved.
        metric_configs: ``metric name -> configuration`` as the run recorded it
            (:func:`ek.agents._fingerprint.metric_config`: its settings and fingerprint), or
            ``None``; saved in a baseline. The gate refuses runs whose metrics of one name
            were configured differently (a Cost-of-Pass priced at other rates).
        checker: The checker that decided success, as the run recorded it
            (:func:`ek.agents._checker.checker_identity`: its description, fingerprint and
            ``judge``), or ``None`` when unknown (a store or a baseline written before it was
            recorded, an Inspect log); saved in a baseline. The gate refuses runs that
            different judges decided, unless each has labels.

    Metric scores may be per trial or, read by :func:`ek.agents.harness.load_run` without its
    episodes, one merged Score per task holding the sums the metric's aggregate divides
    (:mod:`ek.agents._run.tally`); aggregates and the gate read both alike.
    """

    run: RunProvenance
    k: int
    counts: Mapping[str, tuple[int, int]]
    slices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    metrics: Mapping[str, MetricSummary] = field(default_factory=dict)
    cost: Mapping[str, Any] | None = None
    source: str | None = field(default=None, compare=False)
    episodes: Sequence[Episode] | None = field(default=None, compare=False, repr=False)
    verdicts: tuple[bool, ...] | None = field(default=None, compare=False, repr=False)
    unscored: Unscored | None = None
    pricing: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    infra: Mapping[str, tuple[int, int]] | None = None
    faults: Mapping[str, Mapping[str, tuple[int, int]]] | None = None
    slice_cost: Mapping[str, Mapping[str, Any]] | None = field(
        default=None, compare=False, repr=False
    )
    agent_failures: int | None = field(default=None, compare=False, repr=False)
    budget_hits: Mapping[str, int] | None = field(default=None, compare=False, repr=False)
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)
    metric_configs: Mapping[str, Mapping[str, Any]] | None = field(
        default=None, compare=False, repr=False
    )
    checker: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.run, RunProvenance):
            raise TypeError(
                f"RunSummary.run must be a RunProvenance, got {type(self.run).__name__}"
            )
        positive_int("RunSummary.k", self.k)
        object.__setattr__(self, "notes", _notes(self.notes))
        object.__setattr__(self, "counts", ReadOnlyDict(_counts(self.counts)))
        object.__setattr__(self, "slices", ReadOnlyDict(_slices(self.slices)))
        object.__setattr__(self, "metrics", ReadOnlyDict(_metric_summaries(self.metrics)))
        if self.cost is not None:
            object.__setattr__(self, "cost", ReadOnlyDict(self.cost))
        if isinstance(self.episodes, list) or not isinstance(self.episodes, (Sequence, type(None))):
            # a read-only sequence stays as it is (a stored run's episodes, read from its store)
            object.__setattr__(self, "episodes", tuple(self.episodes))
        if self.verdicts is not None:
            object.__setattr__(self, "verdicts", tuple(bool(v) for v in self.verdicts))
            if self.episodes is None or len(self.verdicts) != len(self.episodes):
                raise ValueError("RunSummary.verdicts must align one-to-one with episodes")
        if self.unscored is not None and not isinstance(self.unscored, Unscored):
            raise TypeError(
                f"RunSummary.unscored must be an Unscored or None, got {type(self.unscored).__name__}"
            )
        if self.infra is not None:
            object.__setattr__(self, "infra", ReadOnlyDict(_counts(self.infra, "infra", False)))
        if self.metric_configs is not None:
            object.__setattr__(self, "metric_configs", _configs(self.metric_configs))
        if self.faults is not None:
            object.__setattr__(self, "faults", _fault_counts(self.faults))
        if self.checker is not None:
            object.__setattr__(self, "checker", _checker(self.checker))

    @property
    def n_infra_errors(self) -> int:
        """Trials that ended in an infrastructure error (not counted as trials)."""
        return sum(e for e, _ in (self.infra or {}).values())

    @property
    def infra_share(self) -> float:
        """Infrastructure-ended trials over all trials attempted (0.0 without any)."""
        from .._infra import infra_share

        return infra_share(self.n_infra_errors, self.n_trials)

    @property
    def n_tasks(self) -> int:
        """Tasks with at least one trial."""
        return sum(1 for n, _ in self.counts.values() if n)

    @property
    def n_trials(self) -> int:
        """Trials over all tasks."""
        return sum(n for n, _ in self.counts.values())

    @property
    def n_successes(self) -> int:
        """Successful trials over all tasks."""
        return sum(c for _, c in self.counts.values())

    @property
    def n_unscored(self) -> int:
        """Samples read but not scored (0 when every sample was scored)."""
        return self.unscored.n if self.unscored is not None else 0

    @property
    def is_empty(self) -> bool:
        """True when the run has no trial (no gate can use it)."""
        return self.n_trials == 0

    def to_dict(self) -> dict[str, Any]:
        """The baseline form: strict-JSON-ready, with a format marker and the ek version."""
        from ek import __version__

        d = {
            "format": SUMMARY_FORMAT,
            "version": 1,
            "ek_version": __version__,
            "run": self.run.to_dict(),
            "k": self.k,
            "n_tasks": self.n_tasks,
            "n_trials": self.n_trials,
            "n_successes": self.n_successes,
            "counts": {t: [n, c] for t, (n, c) in self.counts.items()},
            "slices": {s: list(ids) for s, ids in self.slices.items()},
            "metrics": {name: m.to_dict() for name, m in self.metrics.items()},
            "cost": self.cost,
            "unscored": self.unscored.to_dict() if self.unscored is not None else None,
        }
        if self.infra is not None:  # optional keys: a baseline without them reads as before
            d["infra"] = {t: [e, r] for t, (e, r) in self.infra.items()}
        if self.metric_configs is not None:
            d["metric_configs"] = {n: dict(c) for n, c in self.metric_configs.items()}
        if self.checker is not None:
            d["checker"] = dict(self.checker)
        if self.faults is not None:
            d["faults"] = {
                f: {t: [n, c] for t, (n, c) in cs.items()} for f, cs in self.faults.items()
            }
        return dict(to_json_safe(d))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> RunSummary:
        """Inverse of :meth:`to_dict` (refuses data without the baseline format marker).

        ``data`` is the JSON as written (:func:`ek.jsonio.read_json` with ``decode=False``):
        its non-finite floats are decoded here, once.
        """
        if isinstance(data, Mapping):
            data = from_json_safe(dict(data))
        if not isinstance(data, Mapping) or data.get("format") != SUMMARY_FORMAT:
            raise ValueError(
                f"not an ek-agents baseline: expected format {SUMMARY_FORMAT!r}, got "
                f"{data.get('format') if isinstance(data, Mapping) else type(data).__name__!r}"
            )
        for key in ("run", "k", "counts"):
            if key not in data:
                raise ValueError(f"ek-agents baseline is missing {key!r}")
        counts = _counts(data["counts"])  # integers only: 2.9 or "4" is refused, not truncated
        declared = (data.get("n_trials"), data.get("n_successes"))
        actual = (sum(n for n, _ in counts.values()), sum(c for _, c in counts.values()))
        if declared != (None, None) and declared != actual:
            raise ValueError(
                f"ek-agents baseline is inconsistent: totals say (trials, successes) = {declared}, "
                f"per-task counts sum to {actual}"
            )
        return cls(
            run=RunProvenance.from_dict(data["run"]),
            k=data["k"],
            counts=counts,
            slices=dict(data.get("slices") or {}),
            metrics={
                n: MetricSummary._from_decoded(m)
                for n, m in dict(data.get("metrics") or {}).items()
            },
            cost=data.get("cost"),
            source=source,
            unscored=Unscored.from_dict(data["unscored"]) if data.get("unscored") else None,
            infra=data.get("infra"),
            faults=data.get("faults"),
            metric_configs=data.get("metric_configs"),
            checker=data.get("checker"),
        )
