"""`ek-agents report` and `ek-agents gate`: output, JSON, and exit codes 0 / 1 / 2."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ek.agents import cli
from ek.agents.base import Cost, Episode, RunProvenance, TaskSpec
from ek.agents.cost import per_million
from ek.agents.harness import (
    ProgressEvent,
    TrialContext,
    load_run,
    run_suite,
    save_agent_baseline,
)
from ek.agents.metrics import CostPerSuccessMetric
from ek.agents.summary import RunSummary

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

RUN = RunProvenance(agent="bot", suite_version="v1", seed=2)
TASKS = [
    TaskSpec(f"t{i}", input=i, gold=i, slice="even" if i % 2 == 0 else "odd") for i in range(40)
]


def _agent(p: float) -> Any:
    def agent(task: TaskSpec, ctx: TrialContext) -> Episode:
        out = task.input if ctx.rng.random() < p else None
        return Episode(task.task_id, output=out, cost=Cost(input_tokens=1000, model="m"))

    return agent


@pytest.fixture(scope="module")
def runs(tmp_path_factory: Any) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    metric = [CostPerSuccessMetric(price=per_million(1.0, 1.0))]
    base = run_suite(_agent(0.85), TASKS, k=3, run=RUN, store=d / "base.jsonl", metrics=metric)
    save_agent_baseline(base, d / "base.json")
    run_suite(_agent(0.85), TASKS, k=3, run=RUN, store=d / "same.jsonl", metrics=metric)
    run_suite(_agent(0.45), TASKS, k=3, run=RUN, store=d / "worse.jsonl", metrics=metric)
    other = RunProvenance(agent="bot", suite_version="v2", seed=2)
    run_suite(_agent(0.85), TASKS, k=3, run=other, store=d / "v2.jsonl")
    prices = {"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}
    (d / "prices.json").write_text(json.dumps(prices))
    return {p.stem: p for p in d.iterdir()} | {"dir": d}


def test_report_text(runs: dict[str, Path], capsys: Any) -> None:
    assert cli.main(["report", str(runs["base"].with_suffix(".jsonl"))]) == 0
    out = capsys.readouterr().out
    for needle in ("success", "pass@k", "pass^k", "cost by role", "Cost-of-Pass", "even", "odd"):
        assert needle in out
    assert "cost_per_success" in out and "lower is better" in out


def test_report_json_with_prices(runs: dict[str, Path], capsys: Any) -> None:
    store = str(runs["dir"] / "base.jsonl")
    assert cli.main(["report", store, "--json", "--k", "2", "--prices", str(runs["prices"])]) == 0
    d = json.loads(capsys.readouterr().out)
    s = load_run(store)
    assert d["n_trials"] == 120 and d["n_successes"] == s.n_successes
    assert set(d["reliability"]["pass_hat_k"]) == {"1", "2"}
    # 120 episodes x 1000 input tokens x $1e-6 = $0.12 of agent spend
    assert d["cost"]["agent_dollars"] == pytest.approx(0.12)
    assert d["cost"]["cost_of_pass"] == pytest.approx(0.12 / s.n_successes)
    assert set(d["slices"]) == {"even", "odd"}


def test_report_on_a_baseline(runs: dict[str, Path], capsys: Any) -> None:
    assert cli.main(["report", str(runs["dir"] / "base.json"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["n_trials"] == 120 and d["agent_failures"] is None


@pytest.mark.parametrize("content", [None, "not json at all", '{"format": "x"}', "[1, 2]"])
def test_report_unreadable_exits_2(tmp_path: Path, capsys: Any, content: str | None) -> None:
    p = tmp_path / "f.json"
    if content is not None:
        p.write_text(content)
    assert cli.main(["report", str(p)]) == 2
    assert "ek-agents: error:" in capsys.readouterr().err


def test_gate_pass(runs: dict[str, Path], capsys: Any) -> None:
    d = runs["dir"]
    assert cli.main(["gate", str(d / "base.json"), str(d / "same.jsonl")]) == 0
    out = capsys.readouterr().out
    assert (
        "success_rate" in out
        and "pass^3" in out
        and out.rstrip().splitlines()[-1].startswith("PASS")
    )


def test_gate_regression(runs: dict[str, Path], capsys: Any) -> None:
    d = runs["dir"]
    assert cli.main(["gate", str(d / "base.json"), str(d / "worse.jsonl")]) == 1
    assert "REGRESSION" in capsys.readouterr().out
    assert (
        cli.main(["gate", str(d / "base.json"), str(d / "worse.jsonl"), "--json", "--stratified"])
        == 1
    )
    res = json.loads(capsys.readouterr().out)
    assert res["passed"] is False and res["stratified"] is True
    assert {c["name"] for c in res["checks"]} >= {"success_rate", "pass^3", "cost_per_success"}


def test_gate_refusals_exit_2(runs: dict[str, Path], tmp_path: Path, capsys: Any) -> None:
    d = runs["dir"]
    assert cli.main(["gate", str(d / "base.json"), str(d / "v2.jsonl")]) == 2
    assert "suite_version" in capsys.readouterr().err
    empty = RunSummary(RUN, 1, {"t0": (0, 0)}).to_dict()
    (tmp_path / "empty.json").write_text(json.dumps(empty))
    assert cli.main(["gate", str(tmp_path / "empty.json"), str(d / "same.jsonl")]) == 2
    assert "no trial" in capsys.readouterr().err
    assert cli.main(["gate", str(tmp_path / "missing.json"), str(d / "same.jsonl")]) == 2
    assert cli.main(["gate", str(d / "base.json")]) == 2  # usage error


def test_inspect_logs_go_through_the_bridge(tmp_path: Path, monkeypatch: Any) -> None:
    import ek.agents.bridge as bridge

    def fake(path: Any) -> Any:
        yield Episode("a", success=True, trial=0, run=RUN)
        yield Episode("a", success=False, trial=1, run=RUN)

    monkeypatch.setattr(bridge, "episodes_from_inspect_log", fake, raising=False)
    p = tmp_path / "log.json"
    p.write_text(json.dumps({"eval": {}, "samples": []}))
    s = load_run(p)
    assert dict(s.counts) == {"a": (2, 1)} and s.run == RUN and s.k == 2


def test_inspect_log_without_verdicts_is_refused(tmp_path: Path, monkeypatch: Any) -> None:
    import ek.agents.bridge as bridge

    monkeypatch.setattr(
        bridge, "episodes_from_inspect_log", lambda p: iter([Episode("a")]), raising=False
    )
    p = tmp_path / "log.eval"
    p.write_bytes(b"PK")
    assert cli.main(["report", str(p)]) == 2


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_progress_draws_only_on_a_tty() -> None:
    assert cli.terminal_progress(io.StringIO()) is None
    tty = _Tty()
    bar = cli.terminal_progress(tty, width=10)
    assert bar is not None
    bar(ProgressEvent(5, 10, 0, 1, 0.5))
    bar(ProgressEvent(10, 10, 0, 1, 1.0))
    out = tty.getvalue()
    assert "[#####-----] 5/10" in out and "1 failed" in out and out.endswith("\n")


def test_subcommand_table_is_open() -> None:
    calls: list[str] = []

    def configure(p: argparse.ArgumentParser) -> None:
        p.add_argument("--x", default="1")

    def run(a: argparse.Namespace) -> int:
        calls.append(a.x)
        return 0

    cli.add_subcommand(cli.Subcommand("hello", "say hello", configure, run))
    try:
        assert cli.main(["hello", "--x", "2"]) == 0 and calls == ["2"]
    finally:
        cli.SUBCOMMANDS.pop("hello")
    assert list(cli.SUBCOMMANDS)[:2] == ["report", "gate"]


def test_no_command_prints_help(capsys: Any) -> None:
    assert cli.main([]) == 0
    assert "report" in capsys.readouterr().out
