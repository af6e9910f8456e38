"""ek scorers for Inspect: an Inspect sample -> Episode -> ek metrics -> one dict-valued Score.

Every scorer here is async, returns a dict value with the dict form of ``metrics=``, and puts
the ek reasons in ``explanation`` and the sums (and an episode summary) in ``metadata["ek"]``
(see :mod:`._meta`). The value has these keys, plus one per ek metric (its value)::

    success   1.0 / 0.0: the task-success ``check`` against the gold; only in a scorer that
              decides success (see below)
    dollars   the agent's dollars for this attempt (NaN: unknown; never a fabricated 0.0)
    tokens    the agent's tokens (all kinds)

**Which scorer decides success.** ``task_success`` and ``cost_of_pass`` always do (``check``
defaults to ``"output"``); ``tool_calls``, ``trajectory`` and ``ek_scorer`` only when given a
``check``. A scorer never told how to decide success has no ``success`` key, so no success
column and no Cost-of-Pass in Inspect's results, and its explanation starts with its own
metric's reason: one success figure per task, from the scorer that was given the checker.
``ek-agents report`` and ``gate`` take the verdict from that scorer. A scorer that decides
success and was given a price (``price``/``prices``) also records its Cost-of-Pass sums
(``cost_per_success`` in ``metadata["ek"]["scores"]``), so the report and the gate check the
run's Cost-of-Pass.

Cost comes from the transcript's model events, so it is right when re-scoring a log too (where
``TaskState.token_usage`` is 0). Each scorer's dollars come from its own ``price``/``prices``,
else from what Inspect itself recorded (``ModelUsage.total_cost``, when the run had model cost
data), never from another scorer's record on the sample: scorer order does not change them. A
rate may be a numeric string (``-S 'price={output: 1e-5}'``: YAML reads ``1e-5`` as text); any
other string is a TypeError naming the rate. An ek metric that raises never errors the eval:
the sample gets ``Score.unscored(reason="scoring_failed")`` with the ek reason, and metrics and
reducers skip it.

**Gold.** Each ek metric reads its gold from the sample, by metric name. Default: the sample
metadata's ``"ek_task"`` (a :class:`~ek.agents.base.TaskSpec` dict, which carries gold, gold
calls and tools) when present; else the target (``task_success``, ``cost_per_success``) or the
metadata's ``"gold_calls"`` (``tool_calls``, ``trajectory``). ``gold=`` overrides: ``"target"``,
``"metadata.<key>"``, ``"ek_task"``, or a ``{metric_name: spec}`` mapping (``"*"`` = the rest).
Gold calls are read with :func:`~ek.agents.toolcalls.normalize_calls`: any host's call shape
(see the package docstring); an unknown shape leaves the sample unscored with the accepted
shapes listed.
"""

from __future__ import annotations

import inspect as _pyinspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from ek._validate import short_repr
from ek.adapters._shell import json_safe, resolve_metric, run_metric
from ek.agents.base import Episode, TaskSpec, ToolSpec, Trajectory
from ek.agents.bridge import cost_from_inspect_events, from_inspect_sample
from ek.agents.cost import ModelPrice, episode_dollars, load_prices
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import normalize_calls
from ek.base import Score as EkScore

from ._meta import EK
from ._metrics import LIVE_METRICS, cost_of_pass_metric, ek_aggregate, micro_f1
from ._names import qualified, register_bare_alias

__all__ = [
    "SCORER_NAMES",
    "EkScoring",
    "cost_of_pass",
    "ek_scorer",
    "episode_from_state",
    "task_success",
    "tool_calls",
    "trajectory",
]

#: The registered scorer names.
SCORER_NAMES = (
    "ek/ek_scorer",
    "ek/task_success",
    "ek/cost_of_pass",
    "ek/tool_calls",
    "ek/trajectory",
)

_CALL_GOLD = frozenset({"tool_calls", "trajectory"})


def episode_from_state(state: TaskState) -> Episode:
    """The live sample as an :class:`~ek.agents.base.Episode` (cost from the transcript's events).

    The cost is the transcript's model usage only, with Inspect's own ``total_cost`` when it
    priced the model: never dollars another scorer recorded on the sample, so what a scorer
    prices does not depend on which scorers ran before it.
    """
    events = list(transcript().events)
    episode = from_inspect_sample(state, events=events)
    return replace(episode, cost=cost_from_inspect_events(events))


_TEXT_FIELDS = frozenset({"model", "source", "extra"})


def _rate(key: str, v: Any) -> Any:
    """A rate from a price dict; a numeric string counts (``-S price={output: 1e-5}``: YAML 1.1
    reads ``1e-5`` as a string). Any other string is refused with a TypeError, not a ValueError,
    which Inspect's scorer loader would swallow into "couldn't be loaded"."""
    if not isinstance(v, str):
        return v
    try:
        return float(v.strip())
    except ValueError:
        raise TypeError(
            f"price[{short_repr(key)}] must be a number (USD per token) or a numeric string, got {short_repr(v)}"
        ) from None


def _price(price: Any) -> ModelPrice | None:
    if price is None or isinstance(price, ModelPrice):
        return price
    if isinstance(price, Mapping):
        return ModelPrice.from_dict(
            {k: v if k in _TEXT_FIELDS else _rate(str(k), v) for k, v in price.items()}
        )
    raise TypeError(
        f"price must be a ModelPrice or its dict (USD per token: input, output, ...), got {short_repr(price)}"
    )


def _prices(prices: Any) -> Mapping[str, ModelPrice] | None:
    if prices is None:
        return None
    if isinstance(prices, str):
        return load_prices(prices)  # a LiteLLM price JSON file
    if isinstance(prices, Mapping):
        return {str(k): _price(v) for k, v in prices.items()}  # type: ignore[misc]
    raise TypeError(
        f"prices must be a {{model: ModelPrice}} mapping or a LiteLLM price-file path, got {short_repr(prices)}"
    )


def _grammar(grammar: Any) -> Any:
    if isinstance(grammar, (list, tuple)):
        return [g if isinstance(g, ToolSpec) else ToolSpec.from_dict(g) for g in grammar]
    if isinstance(grammar, Mapping):
        return TaskSpec.from_dict(grammar)
    return grammar


def _options(metric: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options a metric class (or registered name) accepts, others dropped."""
    if not isinstance(metric, (str, type)):
        return {}
    from ek.adapters._shell import load_metric_registrations
    from ek.registry import resolve

    load_metric_registrations()
    cls = resolve("metrics", metric) if isinstance(metric, str) else metric
    if not isinstance(cls, type):  # a registered default instance: its class takes the options
        cls = type(cls)
    try:
        params = _pyinspect.signature(cls).parameters
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in options.items() if v is not None and k in params}


def _gold_value(spec: str, calls: bool, state: TaskState, target: Target) -> Any:
    """The gold ``spec`` names; for a tool-call or trajectory metric (``calls``), a list of
    calls in any host's shape is read through :func:`~ek.agents.toolcalls.normalize_calls`."""
    raw = _raw_gold(spec, state, target)
    if calls and isinstance(raw, (list, tuple, Mapping, Trajectory)):
        # gold is read strictly: an unknown shape is a ValueError listing the accepted ones
        return normalize_calls(raw, strict=True)
    return raw


def _raw_gold(spec: str, state: TaskState, target: Target) -> Any:
    md = state.metadata or {}
    if spec == "target":
        t = list(target.target)
        return t[0] if len(t) == 1 else t
    if spec == "ek_task":
        if "ek_task" not in md:
            raise ValueError("gold 'ek_task' asked for, but the sample metadata has no 'ek_task'")
        raw = md["ek_task"]
        return raw if isinstance(raw, TaskSpec) else TaskSpec.from_dict(raw)
    if spec.startswith("metadata."):
        key = spec[len("metadata.") :]
        if key not in md:
            raise ValueError(
                f"gold {short_repr(spec)}: the sample metadata has no {short_repr(key)} (keys: {sorted(md)})"
            )
        return md[key]
    raise ValueError(
        f"gold spec must be 'target', 'ek_task' or 'metadata.<key>', got {short_repr(spec)}"
    )


def _episode_summary(episode: Episode) -> dict[str, Any]:
    return {
        "task_id": episode.task_id,
        "trial": episode.trial,
        "steps": len(episode.trajectory),
        "tools": list(episode.trajectory.tools),
        "failed_steps": len(episode.trajectory.errors),
        "error": episode.error,
        "cost": [c.to_dict() for c in episode.cost],
    }


def _resolve(metric: Any, opts: Mapping[str, Any]) -> Any:
    if metric is None:  # a TypeError: Inspect's scorer loader would swallow a ValueError
        raise TypeError(
            "an ek metric given as an instance is recorded as None and cannot be rebuilt "
            "from an Inspect log; re-score with a registered name (e.g. --scorer "
            "ek/tool_calls) or a task file's scorer (--scorer task.py@name)"
        )
    return resolve_metric(metric, **_options(metric, opts))


def _names(metrics: Sequence[Any]) -> list[str]:
    """The metrics' names (the value keys): distinct, and none of the scorer's own keys."""
    names = [getattr(m, "name", type(m).__name__) for m in metrics]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"two ek metrics share the name(s) {dup}; one of each per scorer")
    reserved = sorted(set(names) & {"success", "dollars", "tokens"})
    if reserved:
        raise ValueError(f"ek metric names {reserved} collide with the scorer's own keys")
    return names


def _gold_option(gold: Any) -> Mapping[str, str] | str | None:
    if isinstance(gold, str) or gold is None:
        return gold
    if isinstance(gold, Mapping):
        return dict(gold)
    raise TypeError(
        f"gold must be a spec string or a {{metric: spec}} mapping, got {short_repr(gold)}"
    )


class EkScoring:
    """The work behind every ek scorer (a plain object, so it can be tested without Inspect).

    Args:
        metrics: ek metric instances, classes or registered names.
        check: The task-success checker (name or callable) behind ``success``.
        decides: Whether this scorer decides success (``success`` key, verdict, Cost-of-Pass);
            default: when a ``check`` is given.
        price: One :class:`~ek.agents.cost.ModelPrice` (or its dict) for every model.
        prices: A ``{model: ModelPrice}`` catalogue, or a LiteLLM price-file path.
        grammar: The tool grammar for tool-call / trajectory metrics (``GraphGrammar``,
            ``TaskSpec`` or list of ``ToolSpec`` s, or their dicts).
        gold: Where each metric's gold comes from (see the module docstring).
        options: Extra constructor options for metrics given by name (e.g. ``scheme=``).
    """

    def __init__(
        self,
        metrics: Sequence[Any],
        *,
        check: Any = None,
        price: Any = None,
        prices: Any = None,
        grammar: Any = None,
        gold: str | Mapping[str, str] | None = None,
        options: Mapping[str, Any] | None = None,
        decides: bool | None = None,
    ) -> None:
        self.decides = check is not None if decides is None else decides
        self.price = _price(price)
        self.prices = _prices(prices)
        self.src: Any = self.price if self.price is not None else self.prices
        g = _grammar(grammar)
        opts = {
            "check": check,
            "price": self.price,
            "prices": self.prices,
            "grammar": g,
            **dict(options or {}),
        }
        self.metrics = [_resolve(m, opts) for m in metrics]
        self.names = _names(self.metrics)
        for n, m in zip(self.names, self.metrics):
            LIVE_METRICS[n] = m
        self.success = TaskSuccessMetric(check)
        # Priced and deciding: the run's Cost-of-Pass sums are recorded for report and gate.
        self.cost: CostPerSuccessMetric | None = None
        if self.decides and self.src is not None and "cost_per_success" not in self.names:
            self.cost = CostPerSuccessMetric(
                check, price=self.price, prices=None if self.price is not None else self.prices
            )
        self.gold = _gold_option(gold)

    def _spec(self, name: str, state: TaskState) -> str:
        g = self.gold
        if isinstance(g, Mapping):
            spec = g.get(name, g.get("*"))
            if spec is not None:
                return spec
        elif isinstance(g, str):
            return g
        if "ek_task" in (state.metadata or {}):
            return "ek_task"
        return "metadata.gold_calls" if name in _CALL_GOLD else "target"

    def score(self, state: TaskState, target: Target, episode: Episode) -> Score:
        """Score one episode (sync; the scorers await nothing else)."""
        summary = _episode_summary(episode)
        golds: dict[tuple[str, bool], Any] = {}  # each gold read once per sample

        def gold(name: str) -> Any:
            key = (self._spec(name, state), name in _CALL_GOLD)
            if key not in golds:
                golds[key] = _gold_value(*key, state, target)
            return golds[key]

        try:
            results = self._run(episode, gold)
        except Exception as e:  # never an errored eval: unscored, with the reason
            why = str(e) or type(e).__name__
            return Score.unscored(
                reason="scoring_failed",
                explanation=f"ek scoring failed: {why}",
                metadata={EK: {"error": why, "episode": summary}},
            )
        dollars = episode_dollars(episode, self.src)
        out = episode.output
        return Score(
            value=self._value(results, dollars, episode.agent_cost.total_tokens),
            answer=out if isinstance(out, str) else (None if out is None else str(out)),
            explanation=self._explanation(results, dollars),
            metadata={EK: self._record(results, dollars, episode, summary)},
        )

    def _run(self, episode: Episode, gold: Any) -> dict[str, EkScore]:
        """Every ek Score of the episode: ``task_success`` (when deciding) first, then the
        metrics, then the recorded ``cost_per_success`` (when deciding and priced)."""
        results: dict[str, EkScore] = {}
        if self.decides:
            results["task_success"] = run_metric(self.success, episode, gold("task_success"))
        for n, m in zip(self.names, self.metrics):
            results[n] = run_metric(m, episode, gold(n))
        if self.cost is not None:
            results["cost_per_success"] = run_metric(self.cost, episode, gold("task_success"))
        return results

    def _passed(self, results: Mapping[str, EkScore]) -> bool | None:
        ok = results.get("task_success")
        return None if ok is None else bool(ok.detail.get("passed"))

    def _value(
        self, results: Mapping[str, EkScore], dollars: float | None, tokens: int
    ) -> dict[str, float]:
        value: dict[str, float] = {}
        passed = self._passed(results)
        if passed is not None:
            value["success"] = 1.0 if passed else 0.0
        value["dollars"] = math.nan if dollars is None else float(dollars)
        value["tokens"] = float(tokens)
        for n in self.names:
            value[n] = results[n].value
        return value

    def _explanation(self, results: Mapping[str, EkScore], dollars: float | None) -> str:
        parts = [f"success: {results['task_success'].reason}"] if self.decides else []
        parts += [f"{n}: {results[n].reason}" for n in self.names if n not in ("task_success",)]
        if dollars is not None:
            parts.append(f"${dollars:.6g}")
        elif self.src is not None or self.decides:  # priced, or Cost-of-Pass needs dollars
            parts.append("dollars unknown")
        return "; ".join(parts)

    def _record(
        self,
        results: Mapping[str, EkScore],
        dollars: float | None,
        episode: Episode,
        summary: Mapping[str, Any],
    ) -> dict[str, Any]:
        passed = self._passed(results)
        record: dict[str, Any] = {"success": passed}
        if passed is not None:
            record["successes"] = int(passed)
        record.update(
            {
                "n": 1,
                "dollars": dollars,
                "tokens": episode.agent_cost.total_tokens,
                "scores": {
                    n: {"value": json_safe(s.value), "detail": json_safe(dict(s.detail))}
                    for n, s in results.items()
                },
                "episode": summary,
            }
        )
        return record

    async def __call__(self, state: TaskState, target: Target) -> Score:
        try:
            episode = episode_from_state(state)
        except Exception as e:
            why = f"could not build the episode: {type(e).__name__}: {e}"
            return Score.unscored(
                reason="scoring_failed", explanation=why, metadata={EK: {"error": why}}
            )
        return self.score(state, target, episode)


def _metric_dict(extra: Mapping[str, list[Any]] | None = None) -> dict[str, list[Any]]:
    d: dict[str, list[Any]] = {"success": [accuracy(), stderr(), cost_of_pass_metric()]}
    d.update(extra or {})
    return d


def _wrap(scoring: EkScoring) -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return await scoring(state, target)

    return score


@scorer(metrics=[_metric_dict(), ek_aggregate()], name=qualified("ek_scorer"))
def ek_scorer(
    *metrics: Any,
    check: Any = None,
    price: Any = None,
    prices: Any = None,
    grammar: Any = None,
    gold: Any = None,
    **replay: Any,
) -> Scorer:
    """An Inspect scorer running any ek metrics on each sample's episode.

    ``Task(..., scorer=ek_scorer("tool_calls", TrajectoryMetric("exact"), check="final_state",
    price=per_million(2.5, 10)))``. Metrics: ``success`` (accuracy, stderr, and Cost-of-Pass over
    every attempt) when it decides success, and every ek metric's own ratio-of-sums aggregate
    (``ek/ek_aggregate``).

    Args:
        *metrics: ek metric instances, classes or registered names (``"tool_calls"``, ...).
        check: The task-success checker behind ``success``; without one this scorer decides no
            success (no ``success`` column, no Cost-of-Pass).
        price: A ``ModelPrice`` (or its dict, USD per token) for every model.
        prices: A ``{model: ModelPrice}`` catalogue or a LiteLLM price-file path.
        grammar: The tool grammar for metrics given by name.
        gold: Where the gold comes from (see the module docstring).
    """
    if "metrics" in replay and not metrics:  # re-created from a log's recorded options
        metrics = tuple(replay.pop("metrics") or ())
    if replay:
        raise TypeError(f"ek_scorer got unexpected keyword argument(s) {sorted(replay)}")
    return _wrap(
        EkScoring(metrics, check=check, price=price, prices=prices, grammar=grammar, gold=gold)
    )


@scorer(metrics=_metric_dict(), name=qualified("task_success"))
def task_success(
    check: Any = None, price: Any = None, prices: Any = None, gold: Any = None
) -> Scorer:
    """Task success by an injected checker (``"output"``, ``"final_state"``, ... or a callable).

    ``success`` gets accuracy, stderr and Cost-of-Pass (with ``price``/``prices``). Always decides
    success (``check`` defaults to ``"output"``); priced, it also records the Cost-of-Pass sums
    that ``ek-agents report`` and ``gate`` check.
    """
    return _wrap(
        EkScoring(
            ["task_success"], check=check, price=price, prices=prices, gold=gold, decides=True
        )
    )


@scorer(
    metrics=_metric_dict({"cost_per_success": [cost_of_pass_metric()]}),
    name=qualified("cost_of_pass"),
)
def cost_of_pass(
    check: Any = None, price: Any = None, prices: Any = None, gold: Any = None
) -> Scorer:
    """Cost-of-Pass: the agent's dollars per successful attempt (lower is better).

    Needs rates (``price`` or ``prices``) unless the log recorded Inspect's own ``total_cost``;
    without any, dollars are unknown (NaN), never 0.
    """
    return _wrap(
        EkScoring(
            ["cost_per_success"], check=check, price=price, prices=prices, gold=gold, decides=True
        )
    )


@scorer(
    metrics=_metric_dict({"tool_calls": [micro_f1("tool_calls")]}),
    name=qualified("tool_calls"),
)
def tool_calls(
    check: Any = None,
    price: Any = None,
    prices: Any = None,
    grammar: Any = None,
    gold: Any = None,
    canonicalizer: str | None = None,
) -> Scorer:
    """Weighted tool-call F1 (BFCL AST semantics) against the gold calls; corpus micro-F1.

    Decides success (``success`` column, Cost-of-Pass) only when given a ``check``.
    """
    return _wrap(
        EkScoring(
            ["tool_calls"],
            check=check,
            price=price,
            prices=prices,
            grammar=grammar,
            gold=gold,
            options={"canonicalizer": canonicalizer},
        )
    )


@scorer(
    metrics=_metric_dict({"trajectory": [ek_aggregate("trajectory")]}),
    name=qualified("trajectory"),
)
def trajectory(
    scheme: str = "in_order",
    check: Any = None,
    price: Any = None,
    prices: Any = None,
    grammar: Any = None,
    gold: Any = None,
) -> Scorer:
    """Trajectory match (Needleman-Wunsch; ``exact``, ``in_order``, ``any_order``, ``superset``).

    Decides success (``success`` column, Cost-of-Pass) only when given a ``check``.
    """
    return _wrap(
        EkScoring(
            ["trajectory"],
            check=check,
            price=price,
            prices=prices,
            grammar=grammar,
            gold=gold,
            options={"scheme": scheme},
        )
    )


for _factory in (ek_scorer, task_success, cost_of_pass, tool_calls, trajectory):
    register_bare_alias(_factory)  # so `inspect score LOG` reloads what the log recorded
