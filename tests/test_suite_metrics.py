"""run_suite(metrics=[...]) gives the numbers the metrics give directly (issue 16 items 1, 2).

Item 1: a tool-call or trajectory metric inside ``run_suite`` scores each task with the task's
own Layer-A weights, exactly as ``metric(episode, task)`` does; before the fix the suite set
``m.grammar`` on a copy whose cost context had been built without it, and every weight fell
back to 1 (tool-call aggregate 0.9022 in the suite against 0.9069 direct on the demo).

Item 2: one run reports one Cost-of-Pass: ``SuiteResult.cost.cost_of_pass`` and
``SuiteResult.metrics["cost_per_success"]`` are the same figure (same verdicts, same prices),
and a metric whose checker or prices differ from the suite's is refused.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ek.agents.base import Cost, Episode, Step, TaskSpec, ToolSpec
from ek.agents.cost import per_million
from ek.agents.demo import DEMO_PRICES, baseline_agent, candidate_agent, load_tasks
from ek.agents.demo import replayed_state_match as demo_check
from ek.agents.harness import run_suite
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric
from ek.grammar import GraphGrammar

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


# ----------------------------------------------------------------------------- item 1: grammar


def _assert_suite_equals_direct(res: Any, tasks: list[TaskSpec], metrics: list[Any]) -> None:
    by_id = {t.task_id: t for t in tasks}
    for m in metrics:
        direct = [m(ep, by_id[ep.task_id]) for ep in res.episodes]
        inside = res.scores[m.name]
        assert len(inside) == len(direct) == len(res.episodes)
        for a, b in zip(inside, direct):
            assert a.value == pytest.approx(b.value, abs=1e-12, rel=0)
        assert res.metrics[m.name] == pytest.approx(m.aggregate(direct), abs=1e-12, rel=0)


@pytest.mark.parametrize("scheme", ["in_order", "exact", "any_order", "superset"])
@pytest.mark.parametrize("agent", [baseline_agent, candidate_agent])
def test_demo_suite_tool_call_and_trajectory_equal_direct(agent: Any, scheme: Any) -> None:
    # The acceptance test: the real metrics inside the real run_suite on the embedded demo suite.
    tasks = load_tasks()
    metrics = [ToolCallMetric(), TrajectoryMetric(scheme=scheme)]
    res = run_suite(agent(), tasks, k=2, seed=0, check=demo_check, metrics=metrics)
    _assert_suite_equals_direct(res, tasks, metrics)


def test_demo_suite_issue_numbers() -> None:
    # The figures the issue quotes (baseline agent, k=2, seed 0): the suite now reads what the
    # direct call reads, 0.9069 / 0.9537, not the weightless 0.9022 / 0.9309.
    tasks = load_tasks()
    res = run_suite(
        baseline_agent(),
        tasks,
        k=2,
        seed=0,
        check=demo_check,
        metrics=[ToolCallMetric(), TrajectoryMetric()],
    )
    assert round(res.metrics["tool_calls"], 4) == 0.9069
    assert round(res.metrics["trajectory"], 4) == 0.9537


def _refund_task() -> TaskSpec:
    refund = ToolSpec(
        "refund",
        parameters={
            "type": "object",
            "properties": {"amount": {"type": "number"}},
            "required": ["amount"],
        },
        importance={"amount": 5.0},
        destructive=True,
    )
    return TaskSpec(
        "t",
        gold="done",
        tools=[refund],
        gold_calls=[Step("search"), Step("refund", {"amount": 20})],
    )


def test_missing_destructive_call_costs_its_weight_inside_the_suite() -> None:
    # The agent searches and never refunds. Masses: search = 1 (unit weight, no args);
    # refund = 10 (destructive) + 5 (amount) = 15.
    # tool calls: tp = 1, fn = 15 -> F1 = 2*1 / (2*1 + 15) = 2/17
    # trajectory (in_order): cost = 15 (refund deleted) of worst case 16 -> 1 - 15/16 = 1/16
    task = _refund_task()
    res = run_suite(
        lambda t: Episode(t.task_id, trajectory=[Step("search")], output="done"),
        [task],
        metrics=[ToolCallMetric(), TrajectoryMetric()],
    )
    tc, tr = res.scores["tool_calls"][0], res.scores["trajectory"][0]
    assert (tc.detail["tp"], tc.detail["fn"]) == (1.0, 15.0)
    assert tc.value == pytest.approx(2 / 17, abs=1e-12)
    assert (tr.detail["cost"], tr.detail["worst_case"]) == (15.0, 16.0)
    assert tr.value == pytest.approx(1 / 16, abs=1e-12)


def test_explicit_grammar_is_kept_inside_the_suite() -> None:
    # A metric built with a grammar keeps it in the suite (and directly): unit costs here, so
    # the missing refund costs 1 + 1 (amount) = 2: F1 = 2*1 / (2*1 + 2) = 0.5.
    task = _refund_task()
    unit = ToolCallMetric(grammar=GraphGrammar())
    res = run_suite(
        lambda t: Episode(t.task_id, trajectory=[Step("search")], output="done"),
        [task],
        metrics=[unit],
    )
    assert res.scores["tool_calls"][0].detail["fn"] == 2.0
    assert res.metrics["tool_calls"] == pytest.approx(0.5, abs=1e-12)
    _assert_suite_equals_direct(res, [task], [unit])


def test_tasks_with_different_tool_declarations_each_use_their_own() -> None:
    # Task a declares "drop" destructive (10), task b declares it plain (1), task c declares no
    # tools (unit costs). No union grammar exists; each task is scored as directly.
    drop_d, drop_p = ToolSpec("drop", destructive=True), ToolSpec("drop")
    tasks = [
        TaskSpec("a", gold=0, tools=[drop_d], gold_calls=[Step("drop")]),
        TaskSpec("b", gold=0, tools=[drop_p], gold_calls=[Step("drop")]),
        TaskSpec("c", gold=0, gold_calls=[Step("drop")]),
    ]
    metrics = [ToolCallMetric(), TrajectoryMetric()]
    res = run_suite(lambda t: 0, tasks, metrics=metrics)
    assert [s.detail["fn"] for s in res.scores["tool_calls"]] == [10.0, 1.0, 1.0]
    _assert_suite_equals_direct(res, tasks, metrics)


def test_resumed_trials_are_scored_like_fresh_ones(tmp_path: Any) -> None:
    # Scores of a metric added on resume are computed by the restore path: same numbers.
    tasks = load_tasks("refund")
    store = tmp_path / "s.jsonl"
    run_suite(baseline_agent(), tasks, k=2, seed=0, check=demo_check, store=store)
    metrics = [ToolCallMetric(), TrajectoryMetric()]
    res = run_suite(
        baseline_agent(), tasks, k=2, seed=0, check=demo_check, store=store, metrics=metrics
    )
    assert res.resumed == len(res.episodes) == 2 * len(tasks)
    _assert_suite_equals_direct(res, tasks, metrics)


def test_with_grammar_builds_a_new_metric_with_its_own_caches() -> None:
    # The tool-call metric caches the prepared gold of a TaskSpec; a metric rebuilt for another
    # grammar must not reuse it (weights 10 + 5 vs unit 1 + 1 for the missing refund).
    task = _refund_task()
    ep = Episode("t", trajectory=[Step("search")])
    for m, key in ((ToolCallMetric(), "fn"), (TrajectoryMetric(), "cost")):
        assert m(ep, task).detail[key] == 15.0  # caches now hold the task's prepared gold
        unit = m.with_grammar(GraphGrammar())
        assert unit is not m and m.grammar is None
        assert unit(ep, task).detail[key] == 2.0
        assert m(ep, task).detail[key] == 15.0
        assert m.with_grammar(None)(ep, task).detail[key] == 15.0


def test_user_metric_objects_are_not_modified() -> None:
    metrics = [ToolCallMetric(), TrajectoryMetric(), TaskSuccessMetric(), CostPerSuccessMetric()]
    before = [repr(m) for m in metrics]
    run_suite(
        lambda t: Episode(t.task_id, output="done"),
        [_refund_task()],
        check="output",
        metrics=metrics,
        price=per_million(1.0, 1.0),
    )
    assert [repr(m) for m in metrics] == before
    assert metrics[2].check is None and metrics[3].price is None


# ----------------------------------------------------------------------------- item 2: one figure


def _priced_tasks() -> list[TaskSpec]:
    return [TaskSpec(f"t{i}", input=i, gold={"done": i}) for i in range(4)]


def _state_agent(task: TaskSpec) -> Episode:
    # Right final state on t0 and t1 only; "output" is never right (it is None).
    state = {"done": task.input} if task.input < 2 else {"done": -1}
    return Episode(task.task_id, final_state=state, cost=Cost(input_tokens=1_000_000))


P = per_million(1.0, 2.0)  # $1 per million input tokens: each episode costs $1


def test_issue_example_one_cost_of_pass() -> None:
    # The issue's run: check="final_state" with the metric built as the reference page shows.
    # 4 episodes x $1 = $4 over 2 final-state successes -> $2 per success, in both places
    # (before: the metric kept "output", found no success and read inf).
    res = run_suite(
        _state_agent,
        _priced_tasks(),
        check="final_state",
        metrics=[CostPerSuccessMetric(price=P), TaskSuccessMetric()],
        price=P,
    )
    assert res.cost.cost_of_pass == res.metrics["cost_per_success"] == 2.0
    assert res.metrics["task_success"] == res.success_rate == 0.5
    assert {s.detail["checker"] for s in res.scores["cost_per_success"]} == {"final_state"}
    assert [s.detail["success"] for s in res.scores["cost_per_success"]] == list(res.verdicts)


@pytest.mark.parametrize(
    ("metric_kw", "suite_kw"),
    [
        ({"price": P}, {}),  # priced metric only: the run's cost report uses its price
        ({}, {"price": P}),  # priced suite only: the metric adopts it
        ({"prices": {"m": P}}, {"prices": {"m": P}}),  # the same catalogue on both
    ],
)
def test_one_price_setting_per_run(metric_kw: dict[str, Any], suite_kw: dict[str, Any]) -> None:
    def agent(task: TaskSpec) -> Episode:
        ep = _state_agent(task)
        return ep.replace(cost=(Cost(input_tokens=1_000_000, model="m"),))

    res = run_suite(
        agent,
        _priced_tasks(),
        check="final_state",
        metrics=[CostPerSuccessMetric(**metric_kw)],
        **suite_kw,
    )
    # $4 over 2 successes, as above
    assert res.cost.cost_of_pass == res.metrics["cost_per_success"] == 2.0


def test_registered_name_takes_the_suites_checker_and_price() -> None:
    res = run_suite(
        _state_agent, _priced_tasks(), check="final_state", metrics=["cost_per_success"], price=P
    )
    assert res.cost.cost_of_pass == res.metrics["cost_per_success"] == 2.0


def test_no_success_is_inf_in_both_places() -> None:
    res = run_suite(
        _state_agent, _priced_tasks(), check="output", metrics=[CostPerSuccessMetric()], price=P
    )
    assert res.cost.cost_of_pass == res.metrics["cost_per_success"] == math.inf


def test_metric_with_another_checker_is_refused() -> None:
    with pytest.raises(ValueError, match=r"check='output'.*check='final_state'"):
        run_suite(
            _state_agent,
            _priced_tasks(),
            check="final_state",
            metrics=[CostPerSuccessMetric("output", price=P)],
        )
    with pytest.raises(ValueError, match=r"'task_success'.*check='recorded'.*check='output'"):
        run_suite(_state_agent, _priced_tasks(), metrics=[TaskSuccessMetric("recorded")])


def test_metric_with_the_same_checker_reads_the_suites_verdict() -> None:
    # A user checker that compares with the raw gold: the suite calls it with task.gold, a
    # metric called directly would hand it the TaskSpec. Inside the suite the metric reads the
    # suite's verdict, and the checker runs once per trial.
    calls = []

    def same_state(ep: Any, gold: Any) -> bool:
        calls.append(ep.task_id)
        return bool(ep.final_state == gold)

    res = run_suite(
        _state_agent,
        _priced_tasks(),
        check=same_state,
        metrics=[TaskSuccessMetric(same_state), CostPerSuccessMetric(same_state, price=P)],
        price=P,
    )
    assert len(calls) == 4  # once per trial, not once per metric
    assert res.metrics["task_success"] == res.success_rate == 0.5
    assert res.cost.cost_of_pass == res.metrics["cost_per_success"] == 2.0
    assert {s.detail["checker"] for s in res.scores["task_success"]} == {"same_state"}


def test_metric_priced_differently_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'cost_per_success'.*price=.*but the run is priced"):
        run_suite(
            _state_agent,
            _priced_tasks(),
            check="final_state",
            metrics=[CostPerSuccessMetric(price=per_million(3.0, 3.0))],
            price=P,
        )


def test_demo_cost_of_pass_is_one_figure() -> None:
    from ek.agents.demo._run import demo_metrics

    res = run_suite(
        baseline_agent(),
        load_tasks(),
        k=2,
        seed=0,
        check=demo_check,
        metrics=demo_metrics(),
        prices=DEMO_PRICES,
    )
    assert res.cost.cost_of_pass is not None and math.isfinite(res.cost.cost_of_pass)
    assert res.metrics["cost_per_success"] == pytest.approx(res.cost.cost_of_pass, abs=1e-12, rel=0)
