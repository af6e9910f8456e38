"""Per-trial budgets and the success-against-budget curve (issue 21), through the real run_suite."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest

from ek.agents import Budget, budget_curve
from ek.agents._budget import usage_curve
from ek.agents.base import Cost, Episode, Step, TaskSpec
from ek.agents.cost import per_million
from ek.agents.harness import StoreMismatchError, SuiteConfig, TrialContext, run_suite

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _tasks(n: int = 4) -> list[TaskSpec]:
    # task i needs i + 1 tool calls, each model call costs 1000 output tokens
    return [TaskSpec(f"t{i}", input=i + 1, gold="done") for i in range(n)]


def _worker(task: TaskSpec) -> Episode:
    n = task.input
    return Episode(
        task.task_id,
        trajectory=[Step("work", {"i": i}) for i in range(n)],
        cost=[Cost(input_tokens=500, output_tokens=1000, model="m") for _ in range(n)],
        output="done",
    )


def test_step_token_turn_and_dollar_limits_stop_the_right_trials() -> None:
    # steps: tasks needing 3 and 4 calls cross steps=2
    res = run_suite(_worker, _tasks(), k=1, budget=Budget(steps=2))
    assert [ep.error for ep in res.episodes] == [None, None, "budget: steps", "budget: steps"]
    assert res.verdicts == (True, True, False, False) and res.agent_failures == 2
    assert res.budget_hits == {"steps": 2}
    # output tokens: 1000 per call, cap 3000 -> only the 4-call task crosses
    res = run_suite(_worker, _tasks(), k=1, budget=Budget(tokens={"output_tokens": 3000}))
    assert res.budget_hits == {"tokens.output_tokens": 1}
    # turns = model calls: cap 1 -> three tasks cross
    assert run_suite(_worker, _tasks(), k=1, budget=Budget(turns=1)).budget_hits == {"turns": 3}
    # dollars: a call is 500 in at $1/M + 1000 out at $2/M = $0.0025; cap $0.006 admits 2 calls
    price = per_million(1.0, 2.0)
    res = run_suite(_worker, _tasks(), k=1, budget=Budget(dollars=0.006), price=price)
    assert res.budget_hits == {"dollars": 2}
    assert res.verdicts == (True, True, False, False)


def test_sync_agent_reads_what_is_left_from_its_context() -> None:
    # A careful agent stops calling tools when the step budget would be crossed, and fails on
    # its own terms ("gave up") instead of being stopped by the harness.
    def careful(task: TaskSpec, ctx: TrialContext) -> Any:
        steps: list[Step] = []
        for i in range(task.input):
            if ctx.remaining(trajectory=[*steps, Step("work")])["steps"] < 0:
                return {"output": "gave up", "trajectory": steps}
            steps.append(Step("work", {"i": i}))
        assert ctx.time_left() is not None and ctx.time_left() > 0
        return {"output": "done", "trajectory": steps}

    res = run_suite(careful, _tasks(), k=1, budget=Budget(steps=2, wall_time=30))
    assert [ep.output for ep in res.episodes] == ["done", "done", "gave up", "gave up"]
    assert res.budget_hits == {} and res.agent_failures == 0


def test_async_agent_is_cancelled_at_the_wall_time_limit() -> None:
    cancelled: list[str] = []

    async def slow(task: TaskSpec) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(task.task_id)
            raise
        return "done"

    res = run_suite(slow, _tasks(2), k=1, budget=Budget(wall_time=0.05), timeout=60)
    assert [ep.error for ep in res.episodes] == ["budget: wall_time"] * 2
    assert sorted(cancelled) == ["t0", "t1"]


def test_success_against_budget_curve_from_recorded_costs() -> None:
    # Run once with no budget; the curve says what a cap would have given, without re-running.
    # Trials use 1, 2, 3, 4 steps and all succeed, so the success rate under a cap of x steps is
    # (trials with <= x steps) / 4: 1/4, 2/4, 3/4, 4/4.
    res = run_suite(_worker, _tasks(), k=1)
    curve = budget_curve(res, "steps")
    assert curve.caps == (1.0, 2.0, 3.0, 4.0)
    assert curve.rates == (0.25, 0.5, 0.75, 1.0)
    # and the curve at the cap equals the success rate of an actual run under that cap
    capped = run_suite(_worker, _tasks(), k=1, budget=Budget(steps=2))
    assert curve.rate_at(2) == capped.success_rate == 0.5
    # dollars under the run's price: $0.0025 per call
    priced = run_suite(_worker, _tasks(), k=1, price=per_million(1.0, 2.0))
    d = budget_curve(priced, "dollars")
    assert [round(c, 6) for c in d.caps] == [0.0025, 0.005, 0.0075, 0.01]
    assert d.rate_at(0.0074) == 0.5


def test_unpriced_trials_are_unknown_in_a_dollar_curve() -> None:
    c = usage_curve([Episode("a", cost=[Cost(output_tokens=5)])], [True], "dollars")
    assert c.n_unknown == 1 and c.caps == () and c.rate_at(1e9) == 0.0


def test_a_resume_with_another_budget_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "s.jsonl"
    run_suite(_worker, _tasks(), k=1, store=store, budget=Budget(steps=2))
    with pytest.raises(StoreMismatchError, match="budget"):
        run_suite(_worker, _tasks(), k=1, store=store, budget=Budget(steps=3))
    with pytest.raises(StoreMismatchError, match="budget"):
        run_suite(_worker, _tasks(), k=1, store=store)
    assert run_suite(_worker, _tasks(), k=1, store=store, budget=Budget(steps=2)).resumed == 4


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"dollars": -1.0}, ValueError, "dollars must be a finite number >= 0"),
        ({"dollars": math.nan}, ValueError, "dollars must be a finite number >= 0"),
        ({"steps": -3}, ValueError, "steps"),
        ({"wall_time": math.inf}, ValueError, "wall_time"),
        ({"turns": "5"}, TypeError, "turns must be a number"),
        ({"tokens": {"output_tokens": -1}}, ValueError, "output_tokens"),
        ({"tokens": {"outptu_tokens": 5}}, ValueError, "keys must be in"),
        ({"tokens": 5}, TypeError, "mapping"),
    ],
)
def test_bad_budgets_are_refused(
    kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        Budget(**kwargs)


def test_budget_option_must_be_a_budget() -> None:
    with pytest.raises(TypeError, match="budget must be an ek.agents._budget.Budget"):
        SuiteConfig(budget={"steps": 2})  # type: ignore[arg-type]


def test_budget_curve_is_plotted_beside_the_cost_frontier(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from ek.agents.plots import plot_budget, plot_run

    price = per_million(1.0, 2.0)
    res = run_suite(_worker, _tasks(), k=1, price=price)
    out = plot_budget([plot_run(res, "a")], {"a": budget_curve(res, "dollars")}, tmp_path / "b.png")
    assert Path(out).read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="BudgetCurve"):
        plot_budget([plot_run(res, "a")], {}, tmp_path / "c.png")


def test_unused_options_leave_the_store_as_it_was(tmp_path: Path) -> None:
    # New fields are optional: a run without the new options writes no new record field and
    # no budget/adaptive/fault header key (an older reader sees the store it always saw).
    store = tmp_path / "s.jsonl"
    run_suite(_worker, _tasks(), k=2, store=store)
    lines = [json.loads(x) for x in store.read_text().splitlines()]
    assert not {"budget", "adaptive", "fault"} & set(lines[0])
    for rec in lines[1:]:
        assert set(rec) == {"task_id", "trial", "success", "agent_error", "episode", "scores"}
