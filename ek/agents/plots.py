"""Plots of a comparison of runs: pass^k against k, and success against cost with the Pareto
frontier.

Two pictures a reader of an agent evaluation needs:

* **pass^k against k** for each run (Yao et al., 2024, arXiv:2406.12045): how fast the
  probability that *all* k attempts succeed decays; an agent whose curve falls steeply is
  unreliable even when its pass^1 looks fine.
* **success against cost** per run, with the **Pareto frontier** (the runs no other run beats on
  both: as cheap or cheaper *and* as successful or more; Kapoor et al., 2024, "AI Agents That
  Matter", arXiv:2407.01502, argue that agent results must be reported this way).

Beyond pass^k (:func:`plot_budget`, :func:`plot_robustness`): the **success-against-budget
curve** (:func:`ek.agents.budget_curve`: the success rate each run would have had under a
dollar or token cap, from recorded costs) drawn beside the cost frontier, and the **robustness**
of each run to each injected fault (success under the fault minus clean, with Newcombe's
interval; :mod:`ek.agents._faults`).

matplotlib is imported only when a plot is drawn, through its object-oriented API (no pyplot,
no global backend change); without it :func:`require_matplotlib` raises an ``ImportError`` that
names ``pip install ek-agents[plot]``. :func:`pareto_frontier` needs nothing.

Example:
    >>> a = PlotRun("big", {1: 0.9, 2: 0.82}, success=0.9, cost=0.02)
    >>> b = PlotRun("small", {1: 0.8, 2: 0.66}, success=0.8, cost=0.001)
    >>> c = PlotRun("bad", {1: 0.7, 2: 0.5}, success=0.7, cost=0.03)
    >>> [r.name for r in pareto_frontier([a, b, c])]
    ['small', 'big']
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek.base import ReadOnlyDict

__all__ = [
    "PLOT_EXTRA_HINT",
    "PlotRun",
    "pareto_frontier",
    "plot_budget",
    "plot_cost_success",
    "plot_pass_hat_k",
    "plot_report",
    "plot_robustness",
    "plot_run",
    "plot_runs",
    "require_matplotlib",
]

PLOT_EXTRA_HINT = "pip install ek-agents[plot]"


@dataclass(frozen=True)
class PlotRun:
    """What the plots need of one run.

    Args:
        name: The run's label.
        pass_hat_k: ``{k: pass^k}`` for k = 1..K (NaN values are not drawn).
        success: The success rate (pass^1 over all trials).
        cost: Mean agent dollars per attempt, or ``None`` when unpriced (the run is then left
            out of the cost plot, never drawn at zero).
        success_interval: ``(low, high)`` of the success rate's interval (drawn as an error bar).
        cost_of_pass: Dollars per success (shown in the label when known).
    """

    name: str
    pass_hat_k: Mapping[int, float] = field(default_factory=dict)
    success: float = math.nan
    cost: float | None = None
    success_interval: tuple[float, float] | None = None
    cost_of_pass: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"PlotRun.name must be a non-empty str, got {self.name!r}")
        ks = dict(self.pass_hat_k)
        for k in ks:
            if isinstance(k, bool) or not isinstance(k, int) or k < 1:
                raise ValueError(
                    f"PlotRun {self.name!r}: pass_hat_k keys must be ints >= 1, got {k!r}"
                )
        object.__setattr__(self, "pass_hat_k", ReadOnlyDict(sorted(ks.items())))
        if self.cost is not None and (not math.isfinite(self.cost) or self.cost < 0):
            raise ValueError(
                f"PlotRun {self.name!r}: cost must be a finite number >= 0 or None, got {self.cost!r}"
            )


def _num(x: Any) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    if isinstance(x, str):
        try:
            return float(x)  # CostReport.to_dict() writes an infinite Cost-of-Pass as "inf"
        except ValueError:
            return None
    return float(x) if isinstance(x, (int, float)) else None


def plot_run(run: Any, name: str | None = None, *, confidence: float = 0.95) -> PlotRun:
    """A :class:`PlotRun` from a run: a :class:`~ek.agents.harness.RunSummary` (what
    :func:`~ek.agents.harness.load_run` returns) or anything with a ``summary()`` method (a
    :class:`~ek.agents.harness.SuiteResult`).

    pass^k is the mean over tasks of the tau-bench estimator for k = 1..(smallest per-task
    trial count); success is pooled with a Wilson interval; cost is the agent's dollars per
    attempt from the run's cost report (``None`` when unpriced).

    Args:
        run: The run.
        name: The label (default: the run's agent name, else its model, else ``"run"``).
        confidence: Coverage of the success interval.

    Example:
        >>> from ek.agents.base import RunProvenance
        >>> from ek.agents.harness import RunSummary
        >>> s = RunSummary(RunProvenance(agent="bot"), 2, {"a": (2, 2), "b": (2, 1)},
        ...                cost={"agent_dollars": 0.4, "cost_of_pass": 0.1333, "n_episodes": 4})
        >>> r = plot_run(s)
        >>> r.name, dict(r.pass_hat_k), r.success, r.cost
        ('bot', {1: 0.75, 2: 0.5}, 0.75, 0.1)
    """
    from ek.stats import wilson_interval

    summary = run.summary() if callable(getattr(run, "summary", None)) else run
    counts = {t: nc for t, nc in dict(summary.counts).items() if nc[0] > 0}
    if not counts:
        raise ValueError(f"cannot plot a run with no trial: {name or summary.run.agent!r}")
    n_tot = sum(n for n, _ in counts.values())
    w = wilson_interval(sum(c for _, c in counts.values()), n_tot, confidence)
    cost = dict(summary.cost or {})
    return PlotRun(
        name or summary.run.agent or summary.run.model or "run",
        _pass_hat_curve(counts),
        success=w.point,
        cost=_cost_per_attempt(cost, n_tot),
        success_interval=(w.low, w.high),
        cost_of_pass=_num(cost.get("cost_of_pass")),
    )


def _pass_hat_curve(counts: Mapping[str, tuple[int, int]]) -> dict[int, float]:
    """The mean over tasks of pass^k for k = 1..(the smallest per-task trial count)."""
    from .reliability import pass_hat_k

    kmax = min(n for n, _ in counts.values())
    return {
        k: math.fsum(pass_hat_k(n, c, k) for n, c in counts.values()) / len(counts)
        for k in range(1, kmax + 1)
    }


def _cost_per_attempt(cost: Mapping[str, Any], n_trials: int) -> float | None:
    """The agent's dollars per attempt of a cost report dict (``None`` when unpriced)."""
    dollars = _num(cost.get("agent_dollars"))
    if dollars is None:
        return None
    return dollars / (_num(cost.get("n_episodes")) or float(n_trials))


def pareto_frontier(runs: Sequence[PlotRun]) -> list[PlotRun]:
    """The runs on the cost/success Pareto frontier, cheapest first.

    A run is on the frontier when no other run is at most as costly and at least as successful
    with one of the two strictly better. Runs with unknown cost or NaN success are left out.

    Example:
        >>> same = [PlotRun("a", success=0.5, cost=1.0), PlotRun("b", success=0.5, cost=1.0)]
        >>> [r.name for r in pareto_frontier(same)]     # ties dominate nobody
        ['a', 'b']
    """
    pts = [(r.cost, r.success, r) for r in runs if r.cost is not None and not math.isnan(r.success)]
    front = [
        (c, s, r)
        for c, s, r in pts
        if not any(oc <= c and os_ >= s and (oc < c or os_ > s) for oc, os_, _ in pts)
    ]
    return [r for _, _, r in sorted(front, key=lambda x: (x[0], -x[1]))]


def require_matplotlib() -> Any:
    """Import matplotlib's ``Figure`` class, or raise an ``ImportError`` naming the extra."""
    try:
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - exercised by a test that hides matplotlib
        raise ImportError(
            f"plotting needs matplotlib, which is not installed ({e}); install it with "
            f"`{PLOT_EXTRA_HINT}`"
        ) from None
    return Figure


def _fmt_money(x: float | None) -> str:
    if x is None:
        return "unpriced"
    if math.isinf(x):
        return "inf"
    return f"${x:.4g}"


def _draw_pass_hat_k(ax: Any, runs: Sequence[PlotRun]) -> None:
    kmax = 1
    for r in runs:
        pts = [(k, v) for k, v in r.pass_hat_k.items() if not math.isnan(v)]
        if not pts:
            continue
        kmax = max(kmax, pts[-1][0])
        ax.plot([k for k, _ in pts], [v for _, v in pts], marker="o", label=r.name)
    ax.set_xlabel("k (trials that must all succeed)")
    ax.set_ylabel("pass^k")
    ax.set_title("Reliability: pass^k against k")
    ax.set_ylim(0.0, 1.02)
    ax.set_xticks(list(range(1, kmax + 1)))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left")


def _draw_cost_success(ax: Any, runs: Sequence[PlotRun]) -> None:
    priced = [r for r in runs if r.cost is not None and not math.isnan(r.success)]
    for r in priced:
        yerr = None
        if r.success_interval is not None:
            lo, hi = r.success_interval
            yerr = [[max(0.0, r.success - lo)], [max(0.0, hi - r.success)]]
        ax.errorbar(
            [r.cost],
            [r.success],
            yerr=yerr,
            fmt="o",
            capsize=4,
            label=f"{r.name} (cost/success {_fmt_money(r.cost_of_pass)})",
        )
    front = pareto_frontier(priced)
    if front:
        ax.plot(
            [r.cost for r in front],
            [r.success for r in front],
            linestyle="--",
            color="grey",
            label="Pareto frontier",
        )
    unpriced = [r.name for r in runs if r.cost is None]
    if unpriced:
        ax.text(0.02, 0.02, f"unpriced (not drawn): {', '.join(unpriced)}", transform=ax.transAxes)
    _cost_axes(ax, [r.cost for r in priced if r.cost is not None])


def _cost_axes(ax: Any, costs: Sequence[float]) -> None:
    """The success-against-cost axes: a log cost axis when the costs are an order of magnitude
    apart (a linear one hides the cheap run), else linear from zero."""
    ax.set_xlabel("agent dollars per attempt")
    ax.set_ylabel("success rate")
    ax.set_title("Success against cost")
    ax.set_ylim(0.0, 1.02)
    if costs and min(costs) > 0 and max(costs) / min(costs) > 10:
        ax.set_xscale("log")
    else:
        ax.set_xlim(left=0.0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right")


def _save(fig: Any, path: str | os.PathLike[str]) -> str:
    p = os.fspath(path)
    parent = os.path.dirname(p)
    if parent:
        os.makedirs(parent, exist_ok=True)
    fig.tight_layout()
    fig.savefig(p, dpi=110)
    return p


def _check_runs(runs: Sequence[PlotRun]) -> list[PlotRun]:
    out = list(runs)
    if not out:
        raise ValueError("nothing to plot: expected at least one PlotRun, got none")
    for r in out:
        if not isinstance(r, PlotRun):
            raise TypeError(f"expected PlotRun objects, got {type(r).__name__}: {r!r:.200}")
    return out


def plot_pass_hat_k(runs: Sequence[PlotRun], path: str | os.PathLike[str]) -> str:
    """Draw pass^k against k for each run into ``path`` (format from its extension); returns it."""
    rs = _check_runs(runs)
    fig = require_matplotlib()(figsize=(6, 4.2))
    _draw_pass_hat_k(fig.add_subplot(1, 1, 1), rs)
    return _save(fig, path)


def plot_cost_success(runs: Sequence[PlotRun], path: str | os.PathLike[str]) -> str:
    """Draw success against cost per run, with the Pareto frontier, into ``path``; returns it."""
    rs = _check_runs(runs)
    fig = require_matplotlib()(figsize=(6, 4.2))
    _draw_cost_success(fig.add_subplot(1, 1, 1), rs)
    return _save(fig, path)


def plot_report(runs: Sequence[PlotRun], path: str | os.PathLike[str]) -> str:
    """Both plots side by side in one figure (what ``ek-agents report --plot FILE`` writes)."""
    rs = _check_runs(runs)
    fig = require_matplotlib()(figsize=(12, 4.6))
    _draw_pass_hat_k(fig.add_subplot(1, 2, 1), rs)
    _draw_cost_success(fig.add_subplot(1, 2, 2), rs)
    return _save(fig, path)


def plot_runs(
    paths: Sequence[str | os.PathLike[str]],
    path: str | os.PathLike[str],
    *,
    prices: Mapping[str, Any] | None = None,
) -> str:
    """Load runs (trial stores, baselines, Inspect logs) and draw :func:`plot_report` of them
    into ``path`` (what ``ek-agents report RUN --plot FILE [--compare RUN ...]`` does).

    Args:
        paths: The runs, one curve and one point each (labelled by agent name, else file name).
        path: The image file to write.
        prices: A ``{model: ModelPrice}`` catalogue to price runs that kept their episodes
            (a baseline keeps the cost it was saved with).
    """
    import dataclasses

    from ._run.load import load_run
    from .cost import cost_report

    require_matplotlib()  # fail before loading anything when the extra is missing
    runs = []
    for p in paths:
        s = load_run(p)
        if prices is not None and s.episodes is not None and s.verdicts is not None:
            cost = cost_report(s.episodes, prices=prices, successes=s.verdicts).to_dict()
            s = dataclasses.replace(s, cost=cost)
        label = s.run.agent or os.path.basename(os.fspath(p))
        runs.append(plot_run(s, label))
    return plot_report(runs, path)


def _draw_budget(ax: Any, curves: Mapping[str, Any]) -> None:
    measure = ""
    for name, c in curves.items():
        measure = c.measure
        if not c.caps:
            continue
        xs = [c.caps[0], *c.caps]
        ys = [0.0, *c.rates]
        ax.step(xs, ys, where="post", label=name)
    ax.set_xlabel(f"cap on {measure or 'budget'} per trial")
    ax.set_ylabel("success rate within the cap")
    ax.set_title("Success against budget (from recorded costs)")
    ax.set_ylim(0.0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right")


def plot_budget(
    runs: Sequence[PlotRun], curves: Mapping[str, Any], path: str | os.PathLike[str]
) -> str:
    """The cost frontier of ``runs`` beside each run's success-against-budget curve
    (``{label: BudgetCurve}``, e.g. ``{name: budget_curve(result, "dollars")}``); returns ``path``."""
    rs = _check_runs(runs)
    if not curves:
        raise ValueError("nothing to plot: expected at least one BudgetCurve, got none")
    fig = require_matplotlib()(figsize=(12, 4.6))
    _draw_cost_success(fig.add_subplot(1, 2, 1), rs)
    _draw_budget(fig.add_subplot(1, 2, 2), curves)
    return _save(fig, path)


def plot_robustness(rows: Mapping[str, Sequence[Any]], path: str | os.PathLike[str]) -> str:
    """Success under each fault minus clean, per run (``{label: robustness(result)}``),
    with Newcombe's interval as an error bar; returns ``path``."""
    if not rows or not any(rows.values()):
        raise ValueError("nothing to plot: expected robustness rows, got none")
    fig = require_matplotlib()(figsize=(7, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    faults = sorted({r.fault for rs in rows.values() for r in rs})
    width = 0.8 / max(1, len(rows))
    for j, (name, rs) in enumerate(rows.items()):
        by = {r.fault: r for r in rs}
        xs, ys, lo, hi = [], [], [], []
        for i, f in enumerate(faults):
            r = by.get(f)
            if r is None or math.isnan(r.difference.point):
                continue
            iv = r.difference
            xs.append(i + (j - (len(rows) - 1) / 2) * width)
            ys.append(iv.point)
            lo.append(max(0.0, iv.point - iv.low))
            hi.append(max(0.0, iv.high - iv.point))
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", capsize=4, label=name)
    ax.axhline(0.0, color="grey", linewidth=1)
    ax.set_xticks(list(range(len(faults))))
    ax.set_xticklabels(faults)
    ax.set_ylabel("success under fault − clean")
    ax.set_title("Robustness to injected faults (Newcombe interval)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left")
    return _save(fig, path)
