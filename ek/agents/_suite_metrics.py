"""The metrics of one suite run, prepared once: each resolved and validated, given the suite's
verdict and the run's one price setting, and rebuilt per task for the task's own grammar.

One number whatever the path: a metric gives, per trial, what ``metric(episode, task)`` gives
called directly (see :func:`~ek.agents.harness.run_suite`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek.base import ReadOnlyDict
from ek.registry import resolve

from ._spec import TaskSpec
from .cost import ModelPrice
from .metrics import check_name, resolve_checker

__all__ = ["SuiteMetrics", "prepare_metrics"]


def _instantiate(cls: type, **kw: Any) -> Any:
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return cls()
    accepted = {
        k: v
        for k, v in kw.items()
        if v is not None and (k in params or any(p.kind == p.VAR_KEYWORD for p in params.values()))
    }
    return cls(**accepted)


class _SuiteVerdict:
    """The suite checker's verdict on a trial, read back from the judged episode.

    What a success-checking metric (:class:`~ek.agents.metrics.TaskSuccessMetric`,
    :class:`~ek.agents.metrics.CostPerSuccessMetric`) checks with inside ``run_suite``: the
    verdict the suite's checker gave on ``task.gold`` (the checker runs once per trial, and a
    metric cannot disagree with ``SuiteResult.verdicts``). Named after the suite's checker.
    """

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __call__(self, episode: Any, gold: Any) -> bool:
        return bool(episode.success)

    def ek_config(self) -> dict[str, Any]:
        """Its configuration (:mod:`ek.agents._fingerprint`): the suite checker it stands for."""
        return {"checker": self.__name__}


@dataclass(frozen=True)
class SuiteMetrics:
    """The suite's metrics: as reported, per task (grammar-bound), and the run's one pricing."""

    reported: tuple[Any, ...]
    per_task: Mapping[str, tuple[Any, ...]]
    price: ModelPrice | None
    prices: Mapping[str, ModelPrice] | None


def _as_metric(m: Any, **kw: Any) -> Any:
    if isinstance(m, str):
        m = resolve("metrics", m)
    if isinstance(m, type):
        m = _instantiate(m, **kw)
    missing = [a for a in ("name", "higher_is_better", "aggregate") if not hasattr(m, a)]
    if missing or not callable(m):
        raise TypeError(
            f"metrics must be Metrics (name, higher_is_better, __call__, aggregate) or "
            f"registered names; {type(m).__name__} lacks {missing or ['__call__']}"
        )
    return m


def _align_check(m: Any, check: Any, checker: Callable[[Any, Any], Any]) -> Any:
    """A metric with its own success checker gives the suite's verdict, or is refused."""
    with_check = getattr(m, "with_check", None)
    if not callable(with_check) or not hasattr(m, "check"):
        return m
    own = m.check
    if own is not None and resolve_checker(own) is not checker:
        raise ValueError(
            f"metric {m.name!r} was built with check={check_name(own)!r} but run_suite checks "
            f"with check={check_name('output' if check is None else check)!r}: one run has one "
            f"verdict per trial (and one Cost-of-Pass); build the metric without check= (it then "
            f"adopts the suite's checker) or give run_suite the same checker"
        )
    return with_check(_SuiteVerdict(check_name("output" if check is None else check)))


def _pricing_of(m: Any) -> tuple[Any, Any] | None:
    if not callable(getattr(m, "with_prices", None)):
        return None
    price, prices = getattr(m, "price", None), getattr(m, "prices", None)
    return None if price is None and prices is None else (price, prices)


def _show_pricing(p: tuple[Any, Any] | None) -> str:
    if p is None:
        return "no price"
    return f"price={p[0]!r}" if p[0] is not None else f"prices={sorted(p[1])}"


def _one_pricing(
    mets: Sequence[Any], price: ModelPrice | None, prices: Mapping[str, ModelPrice] | None
) -> tuple[list[Any], ModelPrice | None, Mapping[str, ModelPrice] | None]:
    """One price setting for the run: the suite's, else the one its priced metrics share.

    A metric without a price adopts it; a metric priced differently is refused, so
    ``SuiteResult.cost.cost_of_pass`` and a Cost-of-Pass metric are the same figure.
    """
    run: tuple[Any, Any] | None = None if price is None and prices is None else (price, prices)
    for m in mets:
        own = _pricing_of(m)
        if own is None:
            continue
        if run is None:
            run = own
        elif own[0] != run[0] or (own[1] is not None and dict(own[1]) != dict(run[1] or {})):
            raise ValueError(
                f"metric {m.name!r} was built with {_show_pricing(own)} but the run is priced "
                f"with {_show_pricing(run)}: one run has one Cost-of-Pass; build the metric "
                f"without price=/prices= (it then adopts the run's) or give both the same"
            )
    if run is None:
        return list(mets), None, None
    out = [
        m.with_prices(run[0], run[1])
        if callable(getattr(m, "with_prices", None)) and _pricing_of(m) is None
        else m
        for m in mets
    ]
    return out, run[0], run[1]


def _per_task(mets: Sequence[Any], tasks: Sequence[TaskSpec]) -> dict[str, tuple[Any, ...]]:
    """The metrics that score each task: a metric without a grammar of its own that offers
    ``with_grammar`` gets the task's own grammar (the task's tools' Layer-A weights), built once
    per distinct grammar; the value equals ``metric(episode, task)`` called directly."""
    built: list[tuple[int, Any, Any]] = []  # (metric index, grammar, bound metric)

    def bound(i: int, m: Any, task: TaskSpec) -> Any:
        if not task.tools or getattr(m, "grammar", True) is not None:
            return m
        with_grammar = getattr(m, "with_grammar", None)
        if not callable(with_grammar):
            return m
        g = task.grammar()
        for j, gram, bm in built:
            if j == i and gram == g:
                return bm
        bm = with_grammar(g)
        built.append((i, g, bm))
        return bm

    return {t.task_id: tuple(bound(i, m, t) for i, m in enumerate(mets)) for t in tasks}


def prepare_metrics(
    metrics: Iterable[Any] | None,
    tasks: Sequence[TaskSpec],
    *,
    check: Any,
    checker: Callable[[Any, Any], Any],
    price: ModelPrice | None,
    prices: Mapping[str, ModelPrice] | None,
) -> SuiteMetrics:
    if metrics is None:
        metrics = []
    elif isinstance(metrics, (str, bytes)) or not isinstance(metrics, Iterable):
        metrics = [metrics]
    mets = [_as_metric(m, check=check, price=price, prices=prices) for m in metrics]
    names = [str(m.name) for m in mets]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"metric names must be unique, got {dup} twice")
    mets = [_align_check(m, check, checker) for m in mets]
    mets, price, prices = _one_pricing(mets, price, prices)
    return SuiteMetrics(tuple(mets), ReadOnlyDict(_per_task(mets, tasks)), price, prices)
