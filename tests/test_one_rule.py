"""One implementation per rule: Cost-of-Pass and calling a sync-or-async user callable."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from ek.agents.base import Cost, Episode, TaskSpec
from ek.agents.cost import corpus_cost_of_pass, per_million
from ek.agents.harness import run_suite
from ek.agents.judge import JudgeError, JudgeSignal
from ek.agents.metrics import CostPerSuccessMetric
from ek.calling import CallTimeoutError, EventLoopRunningError, acall, call

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _run(outputs: list[int], tokens: int = 1_000_000) -> object:
    tasks = [TaskSpec(f"t{i}", input=o, gold=1) for i, o in enumerate(outputs)]
    agent = lambda t: Episode(t.task_id, output=t.input, cost=[Cost(input_tokens=tokens)])  # noqa: E731
    return run_suite(agent, tasks, metrics=[CostPerSuccessMetric()], price=per_million(2.0, 0.0))


def test_cost_of_pass_is_one_rule_on_every_path() -> None:
    # three tasks at $2 each (1M input tokens at $2/M), two right: 6 / 2 = 3.0
    res = _run([1, 0, 1])
    direct = CostPerSuccessMetric(price=per_million(2.0, 0.0))
    scores = [direct(ep, t) for ep, t in zip(res.episodes, res.tasks)]  # type: ignore[attr-defined]
    assert res.cost.cost_of_pass == res.metrics["cost_per_success"] == 3.0  # type: ignore[attr-defined]
    assert direct.aggregate(scores) == 3.0
    assert corpus_cost_of_pass([(2.0, 1), (2.0, 0), (2.0, 1)]) == 3.0


def test_cost_of_pass_degenerate_cases_agree() -> None:
    # no success: inf everywhere; an unknown dollar: NaN (aggregate) / None (the report)
    res = _run([0, 0])
    assert res.metrics["cost_per_success"] == res.cost.cost_of_pass == math.inf  # type: ignore[attr-defined]
    assert math.isnan(corpus_cost_of_pass([]))
    assert math.isnan(corpus_cost_of_pass([(1.0, 1), (None, 1)]))
    assert math.isnan(corpus_cost_of_pass([(math.nan, 0)]))


def test_inspect_metric_uses_the_same_rule() -> None:
    pytest.importorskip("inspect_ai")
    from ek.adapters.inspect._metrics import cost_of_pass_value

    recs = [
        {"dollars": 2.0, "successes": 1},
        {"dollars": "2.0", "successes": 0},  # a JSON-safe string number, as read from a log
        {"dollars": 2.0, "successes": 1},
    ]
    assert cost_of_pass_value(recs) == corpus_cost_of_pass([(2.0, 1), (2.0, 0), (2.0, 1)]) == 3.0
    assert cost_of_pass_value([{"dollars": 1.0, "successes": 0}]) == math.inf
    assert math.isnan(cost_of_pass_value([{"dollars": None, "successes": 1}]))
    assert math.isnan(cost_of_pass_value([]))


# ----------------------------------------------------------------------------- ek.calling


def test_call_runs_sync_and_async_callables() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    assert call(add, (1, 2)) == 3
    assert call(lambda a: a * 2, (4,), timeout=5.0) == 8
    assert asyncio.run(acall(add, (2, 3), timeout=5.0)) == 5
    assert asyncio.run(acall(lambda a: -a, (7,))) == -7


def test_time_limit_raises_call_timeout() -> None:
    async def hang() -> None:
        await asyncio.sleep(30)

    with pytest.raises(CallTimeoutError):
        call(hang, timeout=0.05)
    with pytest.raises(CallTimeoutError):
        asyncio.run(acall(hang, timeout=0.05))
    with pytest.raises(CallTimeoutError):
        call(time.sleep, (30,), timeout=0.05)  # a sync callable: abandoned in its thread


def test_async_callable_inside_a_running_loop_is_refused_before_the_call() -> None:
    called: list[int] = []

    async def f() -> int:
        called.append(1)
        return 1

    async def main() -> None:
        with pytest.raises(EventLoopRunningError):
            call(f)

    asyncio.run(main())
    assert called == []


def test_judge_failures_keep_their_kinds() -> None:
    # the judge maps the helper's outcomes onto JudgeError kinds, as before
    async def hang(output: str, criteria: str) -> float:
        await asyncio.sleep(30)
        return 1.0

    def boom(output: str, criteria: str) -> float:
        raise TimeoutError("the judge's own")  # raised by a sync judge: "raised", not "timeout"

    with pytest.raises(JudgeError) as e:
        JudgeSignal(hang, "c", timeout=0.05)("x")
    assert e.value.kind == "timeout"
    with pytest.raises(JudgeError) as e:
        JudgeSignal(boom, "c", timeout=5.0)("x")
    assert e.value.kind == "raised"

    async def main() -> None:
        with pytest.raises(JudgeError) as e:
            JudgeSignal(hang, "c")("x")
        assert e.value.kind == "event-loop"
        with pytest.raises(JudgeError) as e:
            await JudgeSignal(hang, "c", timeout=0.05).acall("x")
        assert e.value.kind == "timeout"

    asyncio.run(main())
