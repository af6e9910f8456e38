"""A run whose success a judge decided, corrected with human labels: what a report shows.

:func:`judged_run` takes a run (a :class:`~ek.agents.harness.SuiteResult`, or a
:class:`~ek.agents.harness.RunSummary` read with its episodes by
:func:`~ek.agents.harness.load_run`: a store, an Inspect log, a pydantic-evals report) and the
labels people gave some of its trials, ``{(task_id, trial): bool}`` (:func:`load_labels` reads
them from a file), and corrects every success rate the report shows
(:func:`ek.agents.judge.corrected_success_rate`, ``ppi++`` by default):

* the run's success rate, with tasks as clusters (a task's trials are one unit);
* each slice's, from the trials and labels of its tasks;
* pass^k: for ``k = 1`` the corrected success rate. **For k > 1 it is refused**: pass^k is the
  chance that all k trials of a task succeed, a product over trials, and a judge's errors do not
  cancel in a product (a judge that misses one success in ten turns a task's 5/5 into 4/5 or
  worse 41 % of the time, 1 − 0.9⁵): correcting it needs every trial of a sample of tasks
  labelled and a task-level model of the judge, which per-trial labels do not give. Label all
  trials of some tasks and compute pass^k on those labels alone;
* Cost-of-Pass as E[agent cost] / corrected P(success) (the agent's spend only, as everywhere),
  and the judge's own spend, its ``"judge"`` role, beside it (``None`` when not recorded).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import as_verdict, short_repr
from ek.agents._judged import (
    CorrectedRate,
    JudgedTrials,
    corrected_difference,
    corrected_success_rate,
)
from ek.agents.cost import cost_of_pass
from ek.base import ReadOnlyDict
from ek.stats import Interval

__all__ = [
    "JudgedComparison",
    "JudgedRun",
    "check_labels",
    "judged_difference",
    "judged_run",
    "judged_text",
    "load_labels",
]

_NAN = float("nan")
_Key = tuple[str, int]


def check_labels(labels: Any) -> dict[_Key, bool]:
    """``labels`` as ``{(task_id, trial): bool}``, checked: a task id is a str, a trial an int
    >= 0 (0-based; an Inspect epoch ``e`` is trial ``e − 1``), a label a bool.

    Example:
        >>> check_labels({("t1", 0): True})
        {('t1', 0): True}
        >>> check_labels({"t1": True})
        Traceback (most recent call last):
        ...
        TypeError: labels: a key must be (task_id, trial), got 't1'
    """
    if not isinstance(labels, Mapping):
        raise TypeError(f"labels must map (task_id, trial) to a bool, got {type(labels).__name__}")
    out: dict[_Key, bool] = {}
    for key, value in labels.items():
        ok = isinstance(key, tuple) and len(key) == 2
        if not (ok and isinstance(key[0], str) and type(key[1]) is int and key[1] >= 0):
            raise TypeError(f"labels: a key must be (task_id, trial), got {short_repr(key)}")
        out[key] = bool(as_verdict(f"labels[{key!r}]", value))
    return out


def _label_record(rec: Any, where: str) -> tuple[_Key, bool]:
    if not isinstance(rec, Mapping) or not {"task_id", "trial", "success"} <= set(rec):
        raise ValueError(
            f'{where}: a label is {{"task_id": str, "trial": int, "success": bool}}, got '
            f"{short_repr(rec, 100)}"
        )
    key = (rec["task_id"], rec["trial"])
    try:
        return next(iter(check_labels({key: rec["success"]}).items()))
    except TypeError as e:
        raise ValueError(f"{where}: {e}") from None


def load_labels(path: str | os.PathLike[str]) -> dict[_Key, bool]:
    """Read human labels from a file: JSON lines, or a JSON array, of
    ``{"task_id": str, "trial": int, "success": bool}`` (the trial 0-based).

    A trial labelled twice must be labelled alike (two people who disagree are two labels to
    reconcile first, not a vote ek should take).

    Raises:
        ValueError: the file is missing or unreadable, a line is not such a record, or a trial
            has two different labels.
    """
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"labels file {p!r} cannot be read: {e}") from None
    if text.lstrip().startswith("["):
        try:
            items = [(f"{p}[{i}]", r) for i, r in enumerate(json.loads(text))]
        except json.JSONDecodeError as e:
            raise ValueError(f"labels file {p!r} is not valid JSON: {e}") from None
    else:
        items = []
        for no, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    items.append((f"{p}:{no}", json.loads(line)))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{p}:{no}: not a JSON record: {e}") from None
    labels: dict[_Key, bool] = {}
    for where, rec in items:
        key, value = _label_record(rec, where)
        if labels.setdefault(key, value) != value:
            raise ValueError(f"{where}: task {key[0]!r} trial {key[1]} is labelled both ways")
    return labels


@dataclass(frozen=True)
class JudgedRun:
    """A judged run's success corrected with labels; see :func:`judged_run`.

    Attributes:
        success: The corrected success rate over the run.
        slices: ``slice name -> corrected success rate`` of its tasks.
        agent_dollars: The agent's spend (``None`` when unknown).
        judge_dollars: The judge's spend (its ``"judge"`` role; ``None`` when not recorded).
        cost_of_pass: E[agent cost] / corrected success rate (``inf`` at 0, ``None`` when the
            dollars are unknown or the rate was refused).
        trials: The judged trials, grouped by task.
        reason: A one-line summary.
    """

    success: CorrectedRate
    slices: Mapping[str, CorrectedRate]
    agent_dollars: float | None
    judge_dollars: float | None
    cost_of_pass: float | None
    trials: JudgedTrials
    reason: str
    detail: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def pass_hat(self, k: int) -> CorrectedRate:
        """pass^k corrected: the success rate for ``k = 1``; refused (NaN, with the reason) for
        ``k > 1`` (see the module documentation).

        Example:
            >>> from ek.agents.harness import RunSummary
            >>> from ek.agents.base import Episode, RunProvenance
            >>> eps = tuple(Episode(f"t{i % 4}", trial=i // 4) for i in range(8))
            >>> run = RunSummary(RunProvenance(), k=2, counts={}, episodes=eps,
            ...                  verdicts=(True, True, False, False) * 2)
            >>> labels = {("t0", 0): True, ("t1", 0): False, ("t2", 0): False, ("t3", 0): False,
            ...           ("t0", 1): True, ("t2", 1): False}
            >>> j = judged_run(run, labels)
            >>> j.pass_hat(1) is j.success, j.pass_hat(2).refused
            (True, True)
        """
        if type(k) is not int or k < 1:
            raise ValueError(f"k must be an int >= 1, got {short_repr(k)}")
        if k == 1:
            return self.success
        why = (
            f"pass^{k} from a judge: refused. A judge's errors do not cancel in a product over "
            "trials; label every trial of a sample of tasks and compute pass^k on those labels"
        )
        s = self.success
        return CorrectedRate(
            _NAN, Interval(_NAN, _NAN, _NAN, s.interval.confidence, s.method, why), s.method,
            s.judged_rate, s.n_trials, s.n_labelled, s.n_tasks, s.sensitivity, s.specificity,
            False, True, f"refused: {why}", s.detail,
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON-ready dict."""

        def f(x: float | None) -> float | str | None:
            return "inf" if x is not None and math.isinf(x) else x

        return {
            "success": self.success.to_dict(),
            "slices": {name: r.to_dict() for name, r in self.slices.items()},
            "agent_dollars": self.agent_dollars,
            "judge_dollars": self.judge_dollars,
            "cost_of_pass": f(self.cost_of_pass),
            "reason": self.reason,
            "detail": dict(self.detail),
        }


def _trials_of(run: Any) -> tuple[Sequence[Any], Sequence[Any], Any]:
    """The run's episodes and verdicts, and the run as a summary (a SuiteResult's own; a path
    read with :func:`~ek.agents.harness.load_run`, episodes kept)."""
    if isinstance(run, (str, os.PathLike)):
        from ek.agents.harness import load_run

        run = load_run(run)
    episodes, verdicts = getattr(run, "episodes", None), getattr(run, "verdicts", None)
    if callable(getattr(run, "summary", None)):
        run = run.summary()
    if episodes is None or verdicts is None:
        raise ValueError(
            "judged_run needs the run's trials (its episodes and verdicts): read the run with "
            "load_run (which keeps them) or pass the SuiteResult; a saved baseline keeps only "
            "counts"
        )
    return episodes, verdicts, run


def _cost(run: Any, rate: float) -> tuple[float | None, float | None, float | None]:
    """(agent dollars, judge dollars, corrected Cost-of-Pass) from the run's cost report."""
    cost = getattr(run, "cost", None)
    if not isinstance(cost, Mapping):
        return None, None, None
    agent = cost.get("agent_dollars")
    judge = (cost.get("by_role") or {}).get("judge", {}).get("dollars")
    n = cost.get("n_episodes") or 0
    if agent is None or not n or math.isnan(rate):
        return agent, judge, None
    return agent, judge, cost_of_pass(agent, rate * n)


def judged_run(
    run: Any,
    labels: Mapping[tuple[str, int], Any],
    *,
    method: str = "ppi++",
    sampling: str = "random",
    confidence: float = 0.95,
) -> JudgedRun:
    """A judged run's success rates corrected with human labels (module documentation).

    Args:
        run: A :class:`~ek.agents.harness.SuiteResult` (its checker a judge), a
            :class:`~ek.agents.harness.RunSummary` with its episodes and verdicts, or the
            path of a run :func:`~ek.agents.harness.load_run` reads (a store, an Inspect log).
        labels: ``{(task_id, trial): bool}``, people's verdicts on some of its trials.
        method: The estimator (:data:`ek.agents.judge.JUDGED_METHODS`; ``"ppi++"``).
        sampling: How the labelled trials were drawn: ``"random"`` or ``"stratified"``.
        confidence: The intervals' coverage.

    Raises:
        ValueError: the run has no trials to correct, or a label names a trial the run does
            not have (a labels file of another run).
    """
    labels = check_labels(labels)
    episodes, verdicts, run = _trials_of(run)
    keys: list[_Key] = [(ep.task_id, ep.trial) for ep in episodes]
    unknown = sorted(set(labels) - set(keys))
    if unknown:
        shown = ", ".join(f"{t!r} trial {i}" for t, i in unknown[:3])
        raise ValueError(
            f"{len(unknown)} label(s) name a trial this run does not have ({shown}"
            f"{', ...' if len(unknown) > 3 else ''}): labels of another run?"
        )
    human = [labels.get(k) for k in keys]
    tasks: list[Hashable] = [k[0] for k in keys]

    def correct(idx: Sequence[int]) -> CorrectedRate:
        return corrected_success_rate(
            [verdicts[i] for i in idx],
            [human[i] for i in idx],
            tasks=[tasks[i] for i in idx],
            method=method,
            sampling=sampling,
            confidence=confidence,
        )

    success = correct(range(len(keys)))
    slices = {}
    for name, task_ids in (getattr(run, "slices", None) or {}).items():
        inside = set(task_ids)
        slices[name] = correct([i for i, t in enumerate(tasks) if t in inside])
    agent, judge, cop = _cost(run, success.value)
    return JudgedRun(
        success=success,
        slices=ReadOnlyDict(slices),
        agent_dollars=agent,
        judge_dollars=judge,
        cost_of_pass=cop,
        trials=JudgedTrials.from_trials(list(verdicts), human, tasks),
        reason=success.reason,
        detail=ReadOnlyDict({"labels": len(labels)}),
    )


@dataclass(frozen=True)
class JudgedComparison:
    """Two judged runs' corrected success rates and the interval of their difference; see
    :func:`judged_difference`.

    Attributes:
        interval: ``current − baseline`` corrected success, paired by task where both runs hold
            it (``interval.reason`` says which), NaN bounds when either run was refused.
        current: The current run's corrected success rate.
        baseline: The baseline's.
        reason: A one-line summary.
    """

    interval: Interval
    current: CorrectedRate
    baseline: CorrectedRate
    reason: str


def judged_difference(
    current: Any,
    baseline: Any,
    labels: Mapping[tuple[str, int], Any],
    baseline_labels: Mapping[tuple[str, int], Any],
    *,
    sampling: str = "random",
    baseline_sampling: str | None = None,
    confidence: float = 0.95,
) -> JudgedComparison:
    """Compare two judged runs on their success corrected with each run's own labels
    (``ppi++``): what the gate checks when it is given labels.

    Each run is corrected by the labels people gave *its* trials, so the two runs may have been
    judged by different judges, and a judge that errs differently on the two agents' outputs
    does not bias the comparison. The difference is paired by task where both runs ran a task
    (:func:`ek.agents.judge.corrected_difference`), independent otherwise.

    Example:
        >>> from ek.agents.harness import RunSummary
        >>> from ek.agents.base import Episode, RunProvenance
        >>> eps = tuple(Episode(f"t{i}", trial=0) for i in range(8))
        >>> run = RunSummary(RunProvenance(), k=1, counts={}, episodes=eps,
        ...                  verdicts=(True, True, True, False) * 2)
        >>> labels = {("t0", 0): True, ("t1", 0): True, ("t2", 0): False, ("t3", 0): False,
        ...           ("t4", 0): True, ("t7", 0): False, ("t6", 0): True}
        >>> c = judged_difference(run, run, labels, labels)
        >>> c.interval.point, c.interval.reason
        (0.0, 'paired on 8 shared task(s)')
    """
    sides = []
    for run, lab, sample in (
        (current, labels, sampling),
        (baseline, baseline_labels, baseline_sampling or sampling),
    ):
        j = judged_run(run, lab, sampling=sample, confidence=confidence)
        sides.append(j)
    cur, base = sides
    iv = corrected_difference(
        cur.trials,
        base.trials,
        sampling=sampling,
        baseline_sampling=baseline_sampling,
        confidence=confidence,
    )
    reason = (
        f"corrected success {cur.success.value:.4f} (judged {cur.success.judged_rate:.4f}, "
        f"{cur.success.n_labelled} labels) vs baseline {base.success.value:.4f} (judged "
        f"{base.success.judged_rate:.4f}, {base.success.n_labelled} labels); {iv.reason}"
    )
    return JudgedComparison(iv, cur.success, base.success, reason)


def _rate_text(r: Mapping[str, Any]) -> str:
    if r["refused"]:
        return r["reason"]
    iv = r["interval"]
    return (
        f"{r['value']:.4f} [{iv['low']:.4f}, {iv['high']:.4f}]  judged {r['judged_rate']:.4f}, "
        f"{r['n_labelled']} labels of {r['n_trials']} trials"
    )


def judged_text(d: Mapping[str, Any]) -> str:
    """The judged section of ``ek-agents report --labels`` from :meth:`JudgedRun.to_dict`.

    Example:
        >>> from ek.agents.harness import RunSummary
        >>> from ek.agents.base import Episode, RunProvenance
        >>> eps = tuple(Episode(f"t{i}", trial=0) for i in range(8))
        >>> run = RunSummary(RunProvenance(), k=1, counts={}, episodes=eps,
        ...                  verdicts=(True, True, True, False) * 2)
        >>> labels = {("t0", 0): True, ("t1", 0): True, ("t2", 0): False, ("t3", 0): False,
        ...           ("t4", 0): True, ("t7", 0): False, ("t6", 0): True}
        >>> print(judged_text(judged_run(run, labels).to_dict()).splitlines()[2])  # 6/8 * 4/5
        corrected success  0.6000 [0.1503, 1.0000]  judged 0.7500, 7 labels of 8 trials
    """
    s = d["success"]
    lines = [
        f"\njudged   success decided by a judge, corrected with human labels ({s['method']}; "
        f"sensitivity {_num(s['sensitivity'])}, specificity {_num(s['specificity'])})",
        f"corrected success  {_rate_text(s)}",
    ]
    for name, r in d["slices"].items():
        lines.append(f"  slice {name:<12} {_rate_text(r)}")
    lines.append(
        "  pass^k for k > 1 is not corrected: a judge's errors do not cancel in a product "
        "over trials (label every trial of some tasks)"
    )
    cop = d["cost_of_pass"]
    if cop is not None:
        judge = d["judge_dollars"]
        lines.append(
            f"corrected Cost-of-Pass ${cop}"
            if cop == "inf"
            else f"corrected Cost-of-Pass ${cop:.6g}"
        )
        lines[-1] += f" (agent spend); the judge's own spend {'unknown' if judge is None else f'${judge:.6g}'}"  # fmt: skip
    return "\n".join(lines) + "\n"


def _num(x: Any) -> str:
    return "n/a" if x is None else f"{x:.3f}"
