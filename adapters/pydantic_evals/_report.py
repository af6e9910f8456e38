"""pydantic-evals reports -> ek: :func:`summary_from_report` (pass^k, Cost-of-Pass, the gate).

``Dataset.evaluate(task, repeat=k)`` (pydantic-evals 2.62) names the runs of a case
``"<case> [i/k]"`` and keeps ``"<case>"`` in ``ReportCase.source_case_name``; a run whose task
raised is a ``ReportCaseFailure`` in ``report.failures``. Each run becomes one ek
:class:`~ek.agents.base.Episode` (task = the case, trial = ``i - 1``), so k runs of a case
give the ``(n, c)`` counts pass^k needs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from ek._validate import as_verdict, is_number
from ek.agents.base import Cost, Episode, RunProvenance
from ek.agents.cost import ModelPrice, cost_report, pricing_to_dict
from ek.agents.harness import (
    MetricSummary,
    RunSummary,
    Unscored,
    metric_aggregator,
    summary_from_episodes,
)
from ek.agents.traces._genai import usage
from ek.base import Score
from ek.harness import metric_direction
from ek.registry import UnknownNameError, resolve

from ._evaluator import NON_FINITE_LABELS, EkEvaluator

__all__ = ["episodes_from_report", "summary_from_report"]

_RUN = re.compile(r" \[(\d+)/(\d+)\]\Z")
_DETAILS = ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
_SOURCE = EkEvaluator.get_serialization_name()

Success = str | Callable[[Any], "bool | None"] | None


def _trial(case: Any, seen: dict[str, int], task_id: str) -> int:
    m = _RUN.search(str(getattr(case, "name", "")))
    if getattr(case, "source_case_name", None) and m:
        return int(m.group(1)) - 1
    i = seen.get(task_id, 0)
    seen[task_id] = i + 1
    return i


def _results(case: Any) -> dict[str, Any]:
    """Every evaluation result of a case, by name (assertions, scores and labels together)."""
    out: dict[str, Any] = {}
    for group in ("assertions", "scores", "labels"):
        out.update(getattr(case, group, None) or {})
    return out


def _ek_scores(case: Any) -> dict[str, Score]:
    """The ek Scores an :class:`EkEvaluator` returned for a case, rebuilt by evaluation name.

    The main result ``<name>`` gives the value and the reason, ``<name>.passed`` the verdict,
    ``<name>.<figure>`` the detail's sums (what the metric's aggregate reads).
    """
    ours = {
        n: r
        for n, r in _results(case).items()
        if getattr(getattr(r, "source", None), "name", None) == _SOURCE
    }
    mains = [n for n in ours if not any(n.startswith(m + ".") for m in ours if m != n)]
    scores: dict[str, Score] = {}
    for name in mains:
        main = ours[name]
        v = main.value
        value = NON_FINITE_LABELS.get(v, math.nan) if isinstance(v, str) else float(v)
        detail: dict[str, Any] = {}
        for n, r in ours.items():
            if n.startswith(name + "."):
                detail[n[len(name) + 1 :]] = r.value
        if main.reason:
            detail["reason"] = main.reason
        scores[name] = Score(value, detail)
    return scores


def _verdict(case: Any, success: Success, scores: Mapping[str, Score]) -> bool | None:
    if callable(success):
        # the one verdict rule (as a store's, as run_suite's): "false", "0" or NaN is refused
        return as_verdict(f"success={_name(success)}", success(case), allow_none=True)
    results = _results(case)
    if success is None:
        verdicts = [r.value for r in results.values() if isinstance(r.value, bool)]
        return all(verdicts) if verdicts else None
    if success in scores:
        return scores[success].passed
    r = results.get(success)
    if r is None or not isinstance(r.value, bool):
        return None
    return r.value


def _name(fn: Any) -> str:
    return str(getattr(fn, "__name__", type(fn).__name__))


def _ek_failures(case: Any) -> list[str]:
    """What each :class:`EkEvaluator` that raised on a run said (``"<name>: <message>"``)."""
    return [
        f"{f.name}: {f.error_message}"
        for f in getattr(case, "evaluator_failures", None) or []
        if getattr(getattr(f, "source", None), "name", None) == _SOURCE
    ]


def _check_not_refused(cases: Iterable[Any], success: str) -> None:
    """An EkEvaluator ``success=`` names that raised on every run is a ValueError quoting why
    (e.g. the agent was not instrumented)."""
    failed = [m for case in cases for m in _ek_failures(case) if m.startswith(success + ":")]
    if failed:
        raise ValueError(f"success={success!r} failed on every run of the report: {failed[0]}")


def _check_success_name(report: Any, success: Success) -> None:
    """A ``success=`` evaluation name no case of the report has, or one that never gives a
    verdict, is a ValueError (it would leave every run unscored: a 0/0 summary)."""
    cases = list(getattr(report, "cases", None) or [])
    if not isinstance(success, str) or not cases:
        return
    names: set[str] = set()
    verdicts: set[str] = set()  # the evaluations that give a verdict (a bool)
    for case in cases:
        for n, r in _results(case).items():
            names.add(n)
            if isinstance(getattr(r, "value", None), bool):
                verdicts.add(n)
        for n, sc in _ek_scores(case).items():
            names.add(n)
            if sc.passed is not None:
                verdicts.add(n)
    if success not in names:
        _check_not_refused(cases, success)
        raise ValueError(
            f"success={success!r} names no evaluation of the report; its evaluations are "
            f"{sorted(names)[:30]}"
        )
    if success not in verdicts:
        raise ValueError(
            f"success={success!r} gives no verdict (its values are scores or labels, not bools: "
            f"every run would be unscored); evaluations with a verdict: {sorted(verdicts)[:30]}"
        )


def _cost(metrics: Mapping[str, Any], model: str | None) -> tuple[Cost, ...]:
    """The case's usage (pydantic-evals' sums of the ``gen_ai.usage.*`` span attributes, with
    the ``gen_ai.usage.`` and ``gen_ai.usage.details.`` prefixes removed) read by ek's span
    reader's token rule (:func:`ek.agents.traces._genai.usage`)."""
    attrs: dict[str, Any] = {}
    for k, v in metrics.items():
        if not is_number(v) or k in ("requests", "cost"):
            continue
        attrs[f"gen_ai.usage.{k}"] = v
        if k in _DETAILS:
            attrs[f"gen_ai.usage.details.{k}"] = v
    u = usage(attrs)
    dollars = metrics.get("cost")
    if is_number(dollars) and math.isfinite(dollars) and dollars >= 0:
        u = replace(u, dollars=float(dollars))
    c = u.to_cost(model)
    return () if c is None else (c,)


def episodes_from_report(
    report: Any,
    *,
    success: Success = None,
    model: str | None = None,
    run: RunProvenance | None = None,
) -> tuple[list[Episode], dict[str, dict[str, list[tuple[int, Score]]]]]:
    """One Episode per run of a pydantic-evals report, and the ek scores of each.

    Args:
        report: An ``EvaluationReport`` (from ``Dataset.evaluate``).
        success: How a run's verdict is decided (see :func:`summary_from_report`).
        model: The model the usage belongs to (pydantic-evals' per-case metrics do not name it).
        run: The provenance stamped on every episode.

    Returns:
        ``(episodes, scores)`` with ``scores[metric][task_id] = [(trial, Score), ...]``.

    Raises:
        ValueError: ``success`` names no evaluation of the report.
        TypeError: a ``success`` callable returned something other than a bool or ``None``
            (the one verdict rule, :func:`ek._validate.as_verdict`).
    """
    _check_success_name(report, success)
    episodes: list[Episode] = []
    per: dict[str, dict[str, list[tuple[int, Score]]]] = {}
    seen: dict[str, int] = {}
    for case in getattr(report, "cases", None) or []:
        task_id = str(case.source_case_name or case.name)
        trial = _trial(case, seen, task_id)
        scores = _ek_scores(case)
        for name, s in scores.items():
            per.setdefault(name, {}).setdefault(task_id, []).append((trial, s))
        episodes.append(
            Episode(
                task_id,
                output=case.output,
                cost=_cost(case.metrics or {}, model),
                success=_verdict(case, success, scores),
                trial=trial,
                duration=max(float(case.task_duration), 0.0),
                run=run,
                metadata={**_ids(case), **_failed(case)},
            )
        )
    for fail in getattr(report, "failures", None) or []:
        task_id = str(fail.source_case_name or fail.name)
        episodes.append(
            Episode(
                task_id,
                trial=_trial(fail, seen, task_id),
                error=str(fail.error_message),
                success=False,  # the task raised: a failed trial, as in run_suite
                run=run,
                metadata=_ids(fail),
            )
        )
    episodes.sort(key=lambda ep: (ep.task_id, ep.trial))
    return episodes, per


def _failed(case: Any) -> dict[str, Any]:
    """``{"ek_evaluator_failures": [...]}`` when an EkEvaluator raised on the run, else ``{}``."""
    failures = _ek_failures(case)
    return {"ek_evaluator_failures": failures} if failures else {}


def _unscored(
    unscored: Unscored | None, episodes: Iterable[Episode], success: Success
) -> Unscored | None:
    """The unscored runs, the reason naming an EkEvaluator's failure where one left a run
    without a verdict (e.g. an agent that was not instrumented): the ``success=`` one's first."""
    if unscored is None:
        return None
    for ep in episodes:
        failures = ep.metadata.get("ek_evaluator_failures") or []
        if ep.success is None and failures:
            first = [
                f for f in failures if isinstance(success, str) and f.startswith(success + ":")
            ]
            reason = f"run {ep.task_id!r} trial {ep.trial}: EkEvaluator {(first or failures)[0]}"
            return replace(unscored, reason=reason)
    return unscored


def _ids(case: Any) -> dict[str, Any]:
    return {
        k: v
        for k, v in (("trace_id", case.trace_id), ("span_id", case.span_id))
        if isinstance(v, str) and v
    }


def _direction(name: str, scores: Iterable[Score]) -> bool:
    try:
        declared = getattr(resolve("metrics", name), "higher_is_better", None)
    except UnknownNameError:
        declared = None
    first = next(iter(scores), None)
    return metric_direction(name, None if first is None else first.detail, declared)


def _metric_summaries(
    per: Mapping[str, Mapping[str, list[tuple[int, Score]]]],
) -> dict[str, MetricSummary]:
    out: dict[str, MetricSummary] = {}
    for name, by_task in per.items():
        ordered = {
            t: tuple(s for _, s in sorted(xs, key=lambda x: x[0])) for t, xs in by_task.items()
        }
        flat = [s for ss in ordered.values() for s in ss]
        agg, _exact = metric_aggregator(name)
        out[name] = MetricSummary(name, _direction(name, flat), agg(flat), ordered)
    return out


def summary_from_report(
    report: Any,
    *,
    success: Success = None,
    price: ModelPrice | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
    model: str | None = None,
    run: RunProvenance | None = None,
) -> RunSummary:
    """A pydantic-evals report as an ek :class:`~ek.agents.harness.RunSummary`.

    What ``ek-agents report`` and :func:`ek.agents.harness.agent_regression_gate` take: per-case
    ``(n, c)`` counts (pass@k and pass^k with intervals through
    :func:`ek.agents.reliability.reliability`), every :class:`EkEvaluator` metric with its
    ratio-of-sums aggregate (rebuilt from the figures it returned), and the cost report
    (Cost-of-Pass) from the usage pydantic-evals recorded per run.

    Args:
        report: The ``EvaluationReport`` of ``Dataset.evaluate(task, repeat=k)``.
        success: A run's verdict. ``None`` (default): every assertion of the run passed (no
            assertion: unscored). A str: the ``EkEvaluator`` evaluation whose verdict decides
            (e.g. ``"task_success"``), or the name of any assertion (a name no case has is a
            ``ValueError``). A callable: ``(ReportCase) -> bool | None`` (anything else, such
            as ``"false"`` or NaN, is a ``TypeError``). A run whose task raised is a failed
            trial.
        price: One price for all usage (wins over ``prices``).
        prices: ``{model: ModelPrice}``; with ``model``.
        model: The model the usage is attributed to (the report does not record it).
        run: The run's provenance (the gate compares its ``suite_version``, ``scaffold``...).

    Returns:
        The summary; ``source`` is the report's name, ``episodes`` one per scored run. A run an
        :class:`EkEvaluator` refused (``ReportCase.evaluator_failures``, e.g. an agent not
        instrumented) has no ek score in the aggregates; when that leaves it without a
        verdict it is unscored, and ``unscored.reason`` quotes the refusal.
    """
    if success is not None and not isinstance(success, str) and not callable(success):
        raise TypeError(
            f"success must be None, an evaluation name or a callable, got {type(success).__name__}"
        )
    if not hasattr(report, "cases"):
        raise TypeError(
            f"report must be a pydantic-evals EvaluationReport, got {type(report).__name__}"
        )
    episodes, per = episodes_from_report(report, success=success, model=model, run=run)
    summary = summary_from_episodes(episodes, run=run, source=getattr(report, "name", None))
    scored = [ep for ep in episodes if ep.success is not None]
    priced = cost_report(
        scored, price=price, prices=prices, successes=[bool(ep.success) for ep in scored]
    )
    return replace(
        summary,
        metrics=_metric_summaries(per),
        cost=priced.to_dict(),
        pricing=pricing_to_dict(price, prices),
        unscored=_unscored(summary.unscored, episodes, success),
    )
