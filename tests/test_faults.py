"""Fault injection and robustness with Newcombe's interval (issue 21), through the real
run_suite, the real demo agents and the real gate."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest

from ek.agents import FAULT_KINDS, Fault, FaultPlan, ToolFault, robustness, wrap_tool
from ek.agents._faults import corrupt
from ek.agents.base import RunProvenance, TaskSpec
from ek.agents.demo import DEMO_PRICES, baseline_agent, candidate_agent, load_tasks
from ek.agents.demo import replayed_state_match as demo_check
from ek.agents.demo._run import DEMO_FAULTS
from ek.agents.harness import SuiteConfig, TrialContext, agent_regression_gate, load_run, run_suite
from ek.stats import newcombe_difference

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _lookup(order_id: str) -> dict[str, Any]:
    return {"order_id": order_id, "total": 40, "items": ["a", "b"], "paid": True}


# ----------------------------------------------------------------------------- the wrappers


def test_each_kind_does_what_it_says() -> None:
    def w(kind: str, **kw: Any) -> Any:
        return wrap_tool(_lookup, Fault(kind, **kw), "lookup_order", seed=0)

    with pytest.raises(ToolFault, match="injected fault: lookup_order failed"):
        w("error")("O1")
    with pytest.raises(TimeoutError, match="timed out"):
        w("timeout")("O1")
    assert w("latency", latency=0.001)("O1") == _lookup("O1")
    assert w("truncate")("O1") == {"order_id": "O1", "total": 40}
    bad = w("malformed")("O1")
    assert isinstance(bad, str)
    with pytest.raises(ValueError):
        json.loads(bad)
    wrong = w("wrong_value")("O1")
    # same keys and types, wrong values: the int +1, the bool flipped, strings kept
    assert wrong == {"order_id": "O1", "total": 41, "items": ["a", "b"], "paid": False}
    assert set(FAULT_KINDS) == {
        "error",
        "timeout",
        "latency",
        "truncate",
        "malformed",
        "wrong_value",
    }


def test_faults_hit_only_their_tools_and_are_seeded() -> None:
    f = Fault("error", tools=["lookup_order"], rate=0.5)
    assert wrap_tool(_lookup, f, "other_tool") is _lookup

    def pattern(seed: int) -> list[bool]:
        fn = wrap_tool(_lookup, f, "lookup_order", seed=seed)
        out = []
        for _ in range(200):
            try:
                fn("O1")
                out.append(False)
            except ToolFault:
                out.append(True)
        return out

    assert pattern(1) == pattern(1) != pattern(2)
    assert 70 < sum(pattern(1)) < 130  # rate 0.5 of 200 calls


def test_async_tools_stay_async() -> None:
    async def alookup(order_id: str) -> dict[str, Any]:
        return _lookup(order_id)

    fn = wrap_tool(alookup, Fault("truncate"), "lookup_order")
    assert asyncio.iscoroutinefunction(fn)
    assert asyncio.run(fn("O2")) == {"order_id": "O2", "total": 40}


def test_corrupt_never_raises_on_odd_results() -> None:
    for kind in FAULT_KINDS:
        for value in (None, 3, 2.5, "x", b"yz", [], {}, object()):
            corrupt(kind, value)


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: Fault("error", rate=1.5), ValueError, r"rate must be a probability in \[0, 1\]"),
        (lambda: Fault("error", rate=-0.1), ValueError, "rate must be a probability"),
        (lambda: Fault("error", rate=math.nan), ValueError, "rate must be a probability"),
        (lambda: Fault("error", rate="0.5"), TypeError, "rate must be a number"),
        (lambda: Fault("explode"), ValueError, "kind must be one of"),
        (lambda: Fault("latency", latency=-1), ValueError, "latency must be a finite number"),
        (lambda: Fault("error", tools="get_order"), TypeError, "not a str"),
        (lambda: FaultPlan([]), ValueError, "at least one Fault"),
        (lambda: FaultPlan([Fault("error"), Fault("error")]), ValueError, "unique"),
        (lambda: FaultPlan(["error"]), TypeError, "must be Faults"),
        (lambda: SuiteConfig(faults=[Fault("error")]), TypeError, "FaultPlan"),
        (
            lambda: SuiteConfig(faults=FaultPlan([Fault("error")]), fault=Fault("error")),
            ValueError,
            "not both",
        ),
    ],
)
def test_bad_fault_input(build: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        build()


# ----------------------------------------------------------------------------- run_suite


def _sensitive(p_clean: float, p_faulted: float) -> Any:
    """Succeeds with p_clean; when its look-up fails it recovers only with p_faulted."""

    def agent(task: TaskSpec, ctx: TrialContext) -> str:
        rng = ctx.rng
        lookup = ctx.tool("lookup_order", _lookup)
        try:
            lookup(task.task_id)
        except ToolFault:
            return "ok" if rng.random() < p_faulted else "no"
        return "ok" if rng.random() < p_clean else "no"

    return agent


def test_each_task_runs_clean_and_under_each_fault() -> None:
    tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(20)]
    plan = FaultPlan([Fault("error", tools=["lookup_order"]), Fault("latency", latency=0.0)])
    res = run_suite(_sensitive(0.9, 0.2), tasks, k=4, seed=1, faults=plan)
    assert set(res.faults) == {"error:lookup_order", "latency"}
    assert res.n_trials == 80 and all(r.n_trials == 80 for r in res.faults.values())
    rows = {r.fault: r for r in robustness(res)}
    err = rows["error:lookup_order"]
    # the row is Newcombe's interval on (under fault) - (clean), from the raw counts
    assert err.difference == newcombe_difference(err.c_fault, 80, err.c_clean, 80)
    assert err.difference.high < 0  # 0.2 vs 0.9: clearly less robust
    # latency does not change this agent's verdicts at all (same trial seeds: paired)
    assert dict(res.faults["latency"].counts) == dict(res.counts)
    assert rows["latency"].difference.point == 0.0
    summary = res.summary()
    assert summary.faults is not None and dict(summary.faults["latency"]) == dict(res.counts)


def test_fault_passes_have_their_own_resumable_stores(tmp_path: Path) -> None:
    tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(3)]
    store = tmp_path / "run.jsonl"
    plan = FaultPlan([Fault("error", tools=["lookup_order"], rate=0.5)])
    first = run_suite(_sensitive(1.0, 0.0), tasks, k=2, store=store, faults=plan)
    side = tmp_path / "run.fault-error_lookup_order.jsonl"
    assert json.loads(side.read_text().splitlines()[0])["fault"]["kind"] == "error"
    assert dict(load_run(side).counts) == dict(first.faults["error:lookup_order"].counts)
    again = run_suite(_sensitive(1.0, 0.0), tasks, k=2, store=store, faults=plan)
    assert again.resumed == 6 and again.faults["error:lookup_order"].resumed == 6
    assert robustness(again) == robustness(first)


def test_demo_candidate_is_less_robust_to_a_failing_order_lookup() -> None:
    # The retail world's order look-up (get_order) fails on half its calls. The baseline
    # retries a failed look-up (no_retry 5%); the candidate, careless on refunds, mostly does
    # not (no_retry 60% on the refund slice), so its refunds fail under the fault.
    tasks = load_tasks()
    out = {}
    for agent in (baseline_agent(), candidate_agent()):
        run = RunProvenance(agent=agent.name, scaffold="s", suite_version="v")
        out[agent.name] = run_suite(
            agent, tasks, k=5, check=demo_check, prices=DEMO_PRICES, faults=DEMO_FAULTS, run=run,
        )  # fmt: skip
    (b,), (c,) = robustness(out["baseline"]), robustness(out["candidate"])
    assert c.difference.high < 0 < b.difference.high  # the candidate's drop is significant
    assert c.difference.point < b.difference.point
    # the clean runs are the demo's usual figures (the fault pass does not touch them)
    clean = run_suite(candidate_agent(), tasks, k=5, check=demo_check, prices=DEMO_PRICES)
    assert dict(clean.counts) == dict(out["candidate"].counts)
    # the gate holds robustness: the candidate's success under the fault regressed
    g = agent_regression_gate(out["candidate"], out["baseline"], robustness=True, metrics=False)
    check = {x.name: x for x in g.checks}["success_rate[fault=error:get_order]"]
    assert check.regression and check.kind == "robustness"


def test_robustness_interval_covers_a_known_difference() -> None:
    # 40 tasks x 5 trials; clean p=0.8, under the fault p=0.5: true difference -0.3.
    tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(40)]
    plan = FaultPlan([Fault("error", tools=["lookup_order"])])
    res = run_suite(_sensitive(0.8, 0.5), tasks, k=5, seed=4, faults=plan)
    (row,) = robustness(res)
    assert row.difference.low <= -0.3 <= row.difference.high


# ----------------------------------------------------------------------------- Inspect AI


def test_inspect_tool_faults_end_to_end(tmp_path: Path) -> None:
    # A real Inspect eval (mockllm, offline): the look-up tool fails on every call under the
    # fault; the model sees a tool error (the sample goes on and is scored), never a crash.
    pytest.importorskip("inspect_ai")
    import doctest

    import ek.adapters.inspect.faults as inspect_faults
    from ek.adapters.inspect.faults import faulty_tool
    from inspect_ai import Task, eval
    from inspect_ai.agent import AgentSubmit, react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, accuracy, scorer
    from inspect_ai.solver import TaskState
    from inspect_ai.tool import tool

    assert doctest.testmod(inspect_faults, optionflags=doctest.ELLIPSIS).failed == 0

    @tool
    def lookup():  # type: ignore[no-untyped-def]
        async def execute(key: str) -> str:
            """Look up the country of a city.

            Args:
                key: The city.
            """
            return {"paris": "france", "rome": "italy"}[key]

        return execute

    def scripted(input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        msgs = [m for m in input if isinstance(m, ChatMessageTool)]
        key = next(m for m in input if m.role == "user").text.split()[-1].lower()
        if not msgs:
            out = ModelOutput.for_tool_call("mockllm/model", "lookup", {"key": key})
        else:
            last = msgs[-1]
            answer = "error" if last.error else last.text
            out = ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": answer})
        out.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
        return out

    @scorer(metrics=[accuracy()])
    def match():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            ok = state.output.completion.strip().endswith(target.text)
            return Score(value=1.0 if ok else 0.0, answer=state.output.completion)

        return score

    samples = [
        Sample(id="s1", input="Which country is paris", target="france"),
        Sample(id="s2", input="Which country is rome", target="italy"),
    ]

    def run(t: Any) -> float:
        task = Task(
            dataset=samples,
            solver=react(tools=[t], submit=AgentSubmit(answer_only=True)),
            scorer=match(),
        )
        model = get_model("mockllm/model", custom_outputs=scripted)
        log = eval(task, model=model, display="none", log_dir=str(tmp_path))[0]
        assert log.status == "success"
        return float(log.results.scores[0].metrics["accuracy"].value)

    assert run(lookup()) == 1.0
    assert run(faulty_tool(lookup(), Fault("error"), seed=1)) == 0.0
    assert run(faulty_tool(lookup(), Fault("wrong_value", tools=["other"]))) == 1.0


def test_robustness_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from ek.agents.plots import plot_robustness

    tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(10)]
    plan = FaultPlan([Fault("error", tools=["lookup_order"])])
    res = run_suite(_sensitive(0.9, 0.2), tasks, k=3, faults=plan)
    out = plot_robustness({"agent": robustness(res)}, tmp_path / "r.png")
    assert Path(out).read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="robustness rows"):
        plot_robustness({"agent": ()}, tmp_path / "x.png")
