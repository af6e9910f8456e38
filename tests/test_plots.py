"""ek.agents.plots: the Pareto frontier, PlotRun from a run summary, and the two plots."""

from __future__ import annotations

import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ek.agents.base import RunProvenance
from ek.agents.harness import RunSummary
from ek.agents.plots import (
    PLOT_EXTRA_HINT,
    PlotRun,
    pareto_frontier,
    plot_cost_success,
    plot_pass_hat_k,
    plot_report,
    plot_run,
    require_matplotlib,
)

PNG = b"\x89PNG\r\n\x1a\n"


def test_pareto_hand_derived() -> None:
    # a: cheap and weak; b: dear and strong; c: dearer than b and weaker -> dominated by b;
    # d: as cheap as a and stronger -> dominates a.
    runs = [
        PlotRun("a", success=0.5, cost=1.0),
        PlotRun("b", success=0.9, cost=3.0),
        PlotRun("c", success=0.8, cost=4.0),
        PlotRun("d", success=0.6, cost=1.0),
        PlotRun("unpriced", success=1.0, cost=None),
    ]
    assert [r.name for r in pareto_frontier(runs)] == ["d", "b"]
    assert pareto_frontier([]) == []


@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 1)), min_size=1, max_size=12))
def test_pareto_properties(points) -> None:
    runs = [PlotRun(f"r{i}", success=s, cost=c) for i, (c, s) in enumerate(points)]
    front = pareto_frontier(runs)

    def dominates(o: PlotRun, r: PlotRun) -> bool:
        return (
            o.cost <= r.cost
            and o.success >= r.success
            and (o.cost < r.cost or o.success > r.success)
        )

    assert front  # a non-empty finite set always has a non-dominated point
    for r in front:
        assert not any(dominates(o, r) for o in runs)
    for r in runs:
        if r not in front:
            assert any(dominates(o, r) for o in front)
    assert [r.cost for r in front] == sorted(r.cost for r in front)


def test_plot_run_from_summary_hand_derived() -> None:
    # tasks a: 3/3, b: 2/3, c: 0/3. pass^1 = (1 + 2/3 + 0)/3 = 5/9;
    # pass^2 = (1 + C(2,2)/C(3,2) + 0)/3 = (1 + 1/3)/3 = 4/9; pass^3 = (1 + 0 + 0)/3 = 1/3.
    s = RunSummary(
        RunProvenance(agent="bot", model="m"),
        3,
        {"a": (3, 3), "b": (3, 2), "c": (3, 0)},
        cost={"agent_dollars": 0.9, "cost_of_pass": "inf", "n_episodes": 9},
    )
    r = plot_run(s)
    assert r.name == "bot"
    assert r.pass_hat_k[1] == pytest.approx(5 / 9)
    assert r.pass_hat_k[2] == pytest.approx(4 / 9)
    assert r.pass_hat_k[3] == pytest.approx(1 / 3)
    assert r.success == pytest.approx(5 / 9)  # pooled 5 of 9 trials
    assert r.cost == pytest.approx(0.1)  # $0.9 over 9 attempts
    assert math.isinf(r.cost_of_pass)
    lo, hi = r.success_interval
    assert lo < 5 / 9 < hi
    unpriced = plot_run(RunSummary(RunProvenance(), 1, {"a": (1, 1)}), "x")
    assert unpriced.cost is None and unpriced.name == "x"
    with pytest.raises(ValueError, match="no trial"):
        plot_run(RunSummary(RunProvenance(agent="e"), 1, {"a": (0, 0)}))


def test_plotrun_validation() -> None:
    with pytest.raises(ValueError, match="non-empty str"):
        PlotRun("")
    with pytest.raises(ValueError, match="ints >= 1"):
        PlotRun("x", {0: 1.0})
    with pytest.raises(ValueError, match="cost must be a finite number"):
        PlotRun("x", cost=-1.0)
    with pytest.raises(ValueError, match="at least one PlotRun"):
        plot_pass_hat_k([], "x.png")


def test_plots_are_written(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    runs = [
        PlotRun("big", {1: 0.9, 2: 0.8, 3: 0.75}, 0.9, 0.02, (0.85, 0.94), 0.022),
        PlotRun("small", {1: 0.8, 2: 0.7, 3: 0.6}, 0.8, 0.001, (0.7, 0.87), 0.00125),
        PlotRun("unpriced", {1: 0.5, 2: 0.3}, 0.5, None),
    ]
    for fn, name in (
        (plot_pass_hat_k, "p.png"),
        (plot_cost_success, "sub/c.png"),
        (plot_report, "r.png"),
    ):
        out = fn(runs, tmp_path / name)
        with open(out, "rb") as fh:
            assert fh.read(8) == PNG


def test_without_matplotlib_the_error_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install ek-agents\[plot\]"):
        require_matplotlib()
    with pytest.raises(ImportError, match=r"ek-agents\[plot\]"):
        plot_pass_hat_k([PlotRun("a", {1: 1.0})], "never.png")
    assert PLOT_EXTRA_HINT == "pip install ek-agents[plot]"
