"""DeepEval results -> ek: :func:`summary_from_evaluation` (success, pass^k, Cost-of-Pass, the gate).

**DeepEval's "Average Score" is not ek's corpus figure.** DeepEval summarises a metric over an
``evaluate()`` run as the plain mean of its per-case scores (and a pass rate). ek's corpus
aggregate is a ratio of sums: tool-call F1 is the micro-F1 of every case's weighted counts (a
case with many calls weighs more than one with few), and Cost-of-Pass is total dollars over
total successes, where the mean of ``cost_per_success``'s per-case values is mean dollars per
episode, failures included. :func:`summary_from_evaluation` reads the result back into ek's
:class:`~ek.agents.harness.RunSummary`, the input of ``ek-agents report``-style figures and of
:func:`ek.agents.harness.agent_regression_gate`, as ``summary_from_report`` does for pydantic-evals:

- one episode per test result (``ek.agents.bridge.from_deepeval_test_case`` on the result:
  its ``metadata`` gives the task id, the trial, the costs; results of one task are its
  trials), so k results per task give the ``(n, c)`` counts pass^k needs;
- each :class:`~ek.adapters.deepeval.EkMetric` given in ``metrics``: its ek scores rebuilt from
  ``MetricData.verbose_logs`` (ek's detail), aggregated by the ek metric's own ``aggregate``;
- the cost report (Cost-of-Pass) from the costs in ``metadata["cost"]``, which
  :func:`~ek.adapters.deepeval.to_deepeval_test_case` writes; DeepEval's own ``token_cost`` and
  token counts do not reach its results.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ek._validate import as_verdict, short_repr
from ek.agents.base import Episode, RunProvenance
from ek.agents.bridge import from_deepeval_test_case
from ek.agents.cost import ModelPrice, cost_report, pricing_to_dict
from ek.agents.harness import MetricSummary, RunSummary, Unscored, summary_from_episodes
from ek.base import Score
from ek.harness import metric_direction
from ek.jsonio import from_json_safe

__all__ = ["summary_from_evaluation"]

Success = str | Callable[[Any], "bool | None"] | None


def _results(result: Any) -> list[Any]:
    """The test results of an ``EvaluationResult`` (or a list of ``TestResult`` s)."""
    items = getattr(result, "test_results", result)
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise TypeError(
            "result must be a DeepEval EvaluationResult (what evaluate() returns) or a list of "
            f"its TestResult s, got {type(result).__name__}: {short_repr(result, 80)}"
        )
    return list(items)


def _shells(metrics: Any) -> dict[str, Any]:
    """The ek shells by the name DeepEval files their results under."""
    if isinstance(metrics, (str, bytes, Mapping)) or not isinstance(metrics, Iterable):
        raise TypeError(
            "metrics must be the list of EkMetric / EkConversationalMetric objects given to "
            f"evaluate(), got {type(metrics).__name__}: {short_repr(metrics, 80)}"
        )
    out: dict[str, Any] = {}
    for m in metrics:
        if not hasattr(m, "ek_metric"):
            raise TypeError(
                "metrics must be ek's DeepEval shells (EkMetric, EkConversationalMetric), got "
                f"{type(m).__name__}: {short_repr(m, 80)}"
            )
        out[str(m.__name__)] = m
    return out


def _metric_data(tr: Any) -> dict[str, Any]:
    return {str(md.name): md for md in getattr(tr, "metrics_data", None) or []}


def _check_success(success: Any, results: Sequence[Any]) -> Success:
    """``success`` as a name or a callable; a metric object is named by its ``__name__``."""
    if success is None or callable(success):
        return success
    if not isinstance(success, str):
        name = getattr(success, "__name__", None)
        if not isinstance(name, str):
            raise TypeError(
                "success must be None, a metric name, a metric object or a callable, got "
                f"{type(success).__name__}"
            )
        success = name
    names = {n for tr in results for n in _metric_data(tr)}
    if results and success not in names:
        raise ValueError(
            f"success={success!r} names no metric of the results; their metrics are "
            f"{sorted(names)[:30]}"
        )
    return success


def _verdict(tr: Any, success: Success) -> tuple[bool | None, str | None]:
    """The verdict of one test result and, when there is none, why."""
    if callable(success):
        return as_verdict("success", success(tr), allow_none=True), "success(...) returned None"
    data = _metric_data(tr)
    errors = [f"{n}: {md.error}" for n, md in data.items() if md.error]
    if success is None:
        if errors:
            return None, f"a metric failed ({errors[0]})"
        return bool(tr.success), None
    md = data.get(success)
    if md is None:
        return None, f"metric {success!r} did not score it"
    if md.error:
        return None, f"metric {success!r} failed: {md.error}"
    return bool(md.success), None


def _score(md: Any) -> Score:
    detail = from_json_safe(json.loads(md.verbose_logs)) if md.verbose_logs else {}
    value = md.score
    return Score(math.nan if value is None else float(value), detail or {})


def _summary_names(shells: Mapping[str, Any]) -> dict[str, str]:
    """DeepEval name -> name in the summary: the ek metric's own name when no other shell
    wraps a metric of that name, else the DeepEval name."""
    ek_names = {n: str(getattr(s.ek_metric, "name", n)) for n, s in shells.items()}
    seen = list(ek_names.values())
    return {n: (e if seen.count(e) == 1 else n) for n, e in ek_names.items()}


def _metric_summaries(
    shells: Mapping[str, Any], per: Mapping[str, Mapping[str, list[Score]]]
) -> dict[str, MetricSummary]:
    names = _summary_names(shells)
    out: dict[str, MetricSummary] = {}
    for dname, shell in shells.items():
        by_task = {t: tuple(ss) for t, ss in per.get(dname, {}).items()}
        flat = [s for ss in by_task.values() for s in ss]
        if not flat:
            continue
        ek = shell.ek_metric
        ek_name = str(getattr(ek, "name", dname))
        name = names[dname]
        hib = metric_direction(ek_name, flat[0].detail, getattr(ek, "higher_is_better", None))
        out[name] = MetricSummary(
            name,
            hib,
            float(ek.aggregate(flat)),
            by_task,
            metric=ek_name if ek_name != name else None,
        )
    return out


class _Read:
    """The episodes, the ek scores of the scored ones, and why the others are unscored."""

    def __init__(self) -> None:
        self.episodes: list[Episode] = []
        self.per: dict[str, dict[str, list[Score]]] = {}
        self.why: list[str] = []
        self.trials: dict[str, set[int]] = {}

    def trial(self, task_id: str, recorded: int) -> int:
        """The recorded trial, or the next free one when two results claim it."""
        taken = self.trials.setdefault(task_id, set())
        t = recorded
        while t in taken:
            t += 1
        taken.add(t)
        return t

    def add(self, tr: Any, shells: Mapping[str, Any], success: Success, run: Any) -> None:
        ep, _ = from_deepeval_test_case(tr)
        verdict, why = _verdict(tr, success)
        ep = replace(ep, success=verdict, trial=self.trial(ep.task_id, ep.trial), run=run or ep.run)
        self.episodes.append(ep)
        if verdict is None:
            self.why.append(f"test case {getattr(tr, 'name', '?')!r}: {why}")
            return
        data = _metric_data(tr)
        for dname in shells:
            md = data.get(dname)
            if md is not None and not md.error:
                self.per.setdefault(dname, {}).setdefault(ep.task_id, []).append(_score(md))


def summary_from_evaluation(
    result: Any,
    metrics: Iterable[Any],
    *,
    success: Any = None,
    price: ModelPrice | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
    run: RunProvenance | None = None,
) -> RunSummary:
    """A DeepEval ``evaluate()`` result as an ek :class:`~ek.agents.harness.RunSummary`.

    Args:
        result: The ``EvaluationResult`` that ``deepeval.evaluate`` returned (or a list of its
            ``TestResult`` s).
        metrics: The :class:`~ek.adapters.deepeval.EkMetric` /
            :class:`~ek.adapters.deepeval.EkConversationalMetric` objects given to
            ``evaluate()`` (matched to the results by their DeepEval name); each becomes a
            metric of the summary, named after its ek metric (``tool_calls``, ...) unless two
            wrap metrics of one name, aggregated by the ek metric's own ``aggregate``.
        success: A result's verdict. ``None`` (default): DeepEval's own, every metric passed
            its threshold (``TestResult.success``). A metric name (or the metric object): that
            metric's pass/fail (e.g. an ``EkMetric(TaskSuccessMetric(...))``); a name no result
            has is a ``ValueError``. A callable: ``(TestResult) -> bool | None``. A result whose
            deciding metric errored is unscored (counted in ``unscored``), not a failure.
        price: One price for all costs (wins over ``prices``).
        prices: ``{model: ModelPrice}``.
        run: The run's provenance (the gate compares its ``suite_version``, ``scaffold``...);
            default: the test cases' ``metadata["run"]``.

    Returns:
        The summary: per-task ``(n, c)``, every ek metric with its ratio-of-sums aggregate,
        the cost report, the episodes (one per result, without tool calls: results do not
        carry them).

    Raises:
        TypeError: ``result`` or ``metrics`` is not what ``evaluate()`` took and gave.
        ValueError: ``success`` names no metric of the results.

    Example:
        >>> from deepeval.evaluate.types import TestResult
        >>> from deepeval.evaluate.utils import create_metric_data
        >>> from deepeval.test_case import LLMTestCase
        >>> from ek.adapters.deepeval import EkMetric
        >>> from ek.agents.metrics import TaskSuccessMetric
        >>> m = EkMetric(TaskSuccessMetric(), threshold=1.0)
        >>> def result(answer):   # what evaluate() returns for one test case
        ...     _ = m.measure(LLMTestCase(input="2+2?", actual_output=answer, expected_output="4"))
        ...     return TestResult(name="sum", success=m.success, conversational=False,
        ...                       metrics_data=[create_metric_data(m)], metadata={"task_id": "sum"})
        >>> s = summary_from_evaluation([result("4"), result("5")], [m])
        >>> dict(s.counts), s.metrics["task_success"].value
        ({'sum': (2, 1)}, 0.5)
    """
    results = _results(result)
    shells = _shells(metrics)
    deciding = _check_success(success, results)
    read = _Read()
    for tr in results:
        read.add(tr, shells, deciding, run)
    summary = summary_from_episodes(read.episodes, run=run)
    scored = [ep for ep in read.episodes if ep.success is not None]
    priced = cost_report(
        scored, price=price, prices=prices, successes=[bool(ep.success) for ep in scored]
    )
    unscored = Unscored(len(read.why), len(read.episodes), read.why[0]) if read.why else None
    return replace(
        summary,
        metrics=_metric_summaries(shells, read.per),
        cost=priced.to_dict(),
        pricing=pricing_to_dict(price, prices),
        unscored=unscored,
    )
