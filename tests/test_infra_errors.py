"""Infrastructure errors are not agent failures (issue 21).

Simulated agents with a known success probability and a known infrastructure-failure rate go
through the real ``run_suite`` (and a real store, the real ``load_run`` and the real gate).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from ek.agents import InfraError, RetryPolicy
from ek.agents.base import RunProvenance, TaskSpec
from ek.agents.harness import (
    GateRefusedError,
    SuiteConfig,
    TrialContext,
    agent_regression_gate,
    load_run,
    run_suite,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _tasks(n: int = 6) -> list[TaskSpec]:
    return [TaskSpec(f"t{i}", gold="ok") for i in range(n)]


def _sim(p_success: float, p_infra: float, exc: type[Exception] = ConnectionError) -> Any:
    """Each attempt draws from its own seeded stream: infrastructure fails with ``p_infra``;
    otherwise the verdict is decided by the trial's seed alone (so it does not depend on how
    many attempts the infrastructure needed)."""
    attempts: dict[tuple[str, int], int] = {}

    def agent(task: TaskSpec, ctx: TrialContext) -> str:
        key = (task.task_id, ctx.trial)
        a = attempts[key] = attempts.get(key, -1) + 1
        if random.Random(f"{ctx.seed}/{a}").random() < p_infra:
            raise exc("connection reset by peer")
        return "ok" if ctx.rng.random() < p_success else "wrong"

    return agent


def test_infra_errors_never_change_pass_hat_k() -> None:
    # Same seeds, same verdict draws: an agent whose infrastructure fails 40% of the attempts
    # (retried up to 10 times, so every trial gets through) gives exactly the counts and the
    # pass^k of the same agent on perfect infrastructure.
    clean = run_suite(_sim(0.6, 0.0), _tasks(), k=4, seed=3)
    flaky = run_suite(
        _sim(0.6, 0.4), _tasks(), k=4, seed=3, retry_on=ConnectionError, max_retries=10,
        retry_backoff=0,
    )  # fmt: skip
    assert dict(flaky.counts) == dict(clean.counts)
    assert flaky.reliability.pass_hat_k[4].point == clean.reliability.pass_hat_k[4].point
    assert flaky.agent_failures == 0
    assert sum(flaky.retries.values()) > 0 and flaky.n_infra_errors == 0


def test_exhausted_retries_leave_the_trial_out_not_failed() -> None:
    # Infrastructure always down for task t0: after max_retries=2 (3 attempts) the trial is an
    # infrastructure error, counted per task, not a failure, not in counts or pass^k.
    calls: list[str] = []

    def agent(task: TaskSpec) -> str:
        calls.append(task.task_id)
        if task.task_id == "t0":
            raise InfraError("sandbox did not start")
        return "ok"

    res = run_suite(agent, _tasks(3), k=2, max_retries=2, retry_backoff=0)
    assert dict(res.counts) == {"t0": (0, 0), "t1": (2, 2), "t2": (2, 2)}
    assert dict(res.infra_errors) == {"t0": 2}
    assert dict(res.retries) == {"t0": 4}  # 2 trials x 2 retries
    assert calls.count("t0") == 6  # 2 trials x 3 attempts
    assert res.agent_failures == 0 and res.success_rate == 1.0
    assert res.summary().infra_share == 2 / 6


def test_an_undeclared_exception_is_an_agent_failure() -> None:
    def agent(task: TaskSpec) -> str:
        raise ConnectionError("not declared as infrastructure")

    res = run_suite(agent, _tasks(1), k=2, retry_backoff=0)
    assert res.agent_failures == 2 and res.n_infra_errors == 0 and not res.retries


def test_retries_persist_and_survive_a_resume(tmp_path: Path) -> None:
    store = tmp_path / "s.jsonl"

    def down(task: TaskSpec) -> str:
        if task.task_id == "t1":
            raise TimeoutError("upstream 504")
        return "ok"

    opts: dict[str, Any] = {
        "k": 2,
        "retry_on": (TimeoutError,),
        "max_retries": 1,
        "retry_backoff": 0,
    }
    first = run_suite(down, _tasks(2), store=store, **opts)
    recs = [json.loads(x) for x in store.read_text().splitlines()[1:]]
    assert sorted((r["task_id"], r.get("infra_error") is not None, r.get("retries")) for r in recs) == [
        ("t0", False, None), ("t0", False, None), ("t1", True, 1), ("t1", True, 1)
    ]  # fmt: skip
    # a resume runs nothing and remembers the infrastructure errors
    again = run_suite(
        lambda t: pytest.fail("nothing should re-run"), _tasks(2), store=store, **opts
    )
    assert again.resumed == 4 and dict(again.infra_errors) == dict(first.infra_errors) == {"t1": 2}
    assert dict(again.counts) == dict(first.counts)
    summary = load_run(store)  # the report of the store agrees
    assert dict(summary.counts) == {"t0": (2, 2), "t1": (0, 0)}
    assert dict(summary.infra) == {"t1": (2, 2)}


def test_ek_timeout_is_the_agents_failure_even_with_timeouterror_declared() -> None:
    import time

    res = run_suite(
        lambda t: time.sleep(0.5), _tasks(1), k=1, timeout=0.05, retry_on=TimeoutError,
        retry_backoff=0,
    )  # fmt: skip
    assert res.agent_failures == 1 and res.n_infra_errors == 0


def test_gate_refuses_a_run_with_too_many_infrastructure_errors() -> None:
    def agent(task: TaskSpec) -> str:
        if task.task_id in ("t0", "t1"):
            raise InfraError("rate limited")
        return "ok"

    run = RunProvenance(agent="a")
    base = run_suite(lambda t: "ok", _tasks(), k=2, run=run)
    cur = run_suite(agent, _tasks(), k=2, run=run, max_retries=0, retry_backoff=0)
    # 4 of 12 attempted trials ended in an infrastructure error: a share of 1/3
    with pytest.raises(GateRefusedError, match=r"current run.*33\.3% .*max_infra_share=0\.1"):
        agent_regression_gate(cur, base, max_infra_share=0.1, tasks="intersect")
    g = agent_regression_gate(cur, base, max_infra_share=0.5, tasks="intersect")
    assert g.passed


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"retry_on": "TimeoutError"}, TypeError),
        ({"retry_on": [ValueError, 3]}, TypeError),
        ({"retry_on": int}, TypeError),
        ({"max_retries": -1}, ValueError),
        ({"retry_backoff": float("nan")}, ValueError),
        ({"retry_backoff": -0.5}, ValueError),
    ],
)
def test_bad_retry_options_are_refused(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error, match="retry_on|max_retries|backoff"):
        SuiteConfig(**kwargs)


def test_backoff_is_exponential_capped_and_jittered() -> None:
    p = RetryPolicy(backoff=1.0, max_backoff=5.0, jitter=0.0)
    assert [p.delay(a, random.Random(0)) for a in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    j = RetryPolicy(backoff=1.0, max_backoff=5.0, jitter=1.0)
    d = [j.delay(2, random.Random(s)) for s in range(50)]
    assert all(0.0 <= x <= 4.0 for x in d) and len(set(d)) == 50


def test_cli_report_counts_infra_errors_and_gate_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ek.agents import cli

    def agent(task: TaskSpec, ctx: TrialContext) -> str:
        if task.task_id == "t0":
            raise InfraError("rate limited")
        return "ok" if ctx.rng.random() < 0.5 else "no"

    store = tmp_path / "s.jsonl"
    run_suite(agent, _tasks(4), k=3, store=store, max_retries=1, retry_backoff=0)
    assert cli.main(["report", str(store)]) == 0
    out = capsys.readouterr().out
    # t0: 3 trials lost, 1 retry each; 3 of the 12 trials attempted
    assert "infrastructure errors 3 (25.0% of trials attempted; not counted as trials)" in out
    assert "t0 3 (3 retries)" in out and "consistent tasks" in out
    assert cli.main(["gate", str(store), str(store), "--tasks", "intersect",
                     "--max-infra-share", "0.2"]) == 2  # fmt: skip
    assert "max_infra_share=0.2" in capsys.readouterr().err
