"""`ek-agents report` and `ek-agents gate`: output, JSON, and exit codes 0 / 1 / 2."""

from __future__ import annotations

import argparse
import io
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from ek.agents import cli
from ek.agents.base import Cost, Episode, RunProvenance, TaskSpec
from ek.agents.cost import per_million
from ek.agents.harness import (
    ProgressEvent,
    RunSummary,
    TrialContext,
    load_run,
    run_suite,
    save_agent_baseline,
)
from ek.agents.metrics import CostPerSuccessMetric

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


# Inspect logs: report / gate on real logs (ek metrics read from the samples, --success-scorer,
# unscored samples, truncated files) are in tests/test_report_hostlogs.py.


def test_a_missing_verdict_is_counted_as_unscored_not_as_a_failure() -> None:
    from ek.agents.harness import summary_from_episodes

    s = summary_from_episodes([Episode("a", success=True, run=RUN), Episode("b", run=RUN)])
    assert dict(s.counts) == {"a": (1, 1)} and s.n_unscored == 1
    assert str(s.unscored) == "1 of 2 samples unscored: episode 'b' trial 0 has no recorded success"


# ----------------------------------------------------------------------------- item 3: undefined


def _spender(tokens: int, *, unpriced: str | None = None, p: float = 0.85) -> Any:
    """Like _agent, spending ``tokens`` per trial; task ``unpriced`` runs on a model no price
    list knows (its dollars are unknown, so the run's Cost-of-Pass is NaN)."""

    def agent(task: TaskSpec, ctx: TrialContext) -> Episode:
        out = task.input if ctx.rng.random() < p else None
        model = "mystery" if task.task_id == unpriced and ctx.trial == 0 else "m"
        return Episode(task.task_id, output=out, cost=(Cost(input_tokens=tokens, model=model),))

    return agent


@pytest.fixture(scope="module")
def spend(tmp_path_factory: Any) -> dict[str, str]:
    d = tmp_path_factory.mktemp("spend")
    metric = [CostPerSuccessMetric(prices={"m": per_million(1.0, 1.0)})]
    out = {}
    for name, agent in (
        ("base", _spender(1000)),
        ("tripled", _spender(3000)),
        ("tripled_unknown", _spender(3000, unpriced="t5")),
        ("never", _spender(1000, p=0.0)),
        ("never_too", _spender(2000, p=0.0)),
    ):
        store = d / f"{name}.jsonl"
        run_suite(agent, TASKS, k=3, run=RUN, store=store, metrics=metric)
        out[name] = str(store)
    return out


def test_gate_fails_on_an_undefined_cost(spend: dict[str, str], capsys: Any) -> None:
    """Regression test: spend tripled and one trial's dollars were unknown, so Cost-of-Pass was
    NaN, the check was 'undefined' and the gate passed (exit 0) with a warning."""
    base = spend["base"]
    # with every price known, the tripled spend is a plain regression
    assert cli.main(["gate", base, spend["tripled"]]) == 1
    capsys.readouterr()
    assert cli.main(["gate", base, spend["tripled_unknown"]]) == 1
    out = capsys.readouterr().out
    assert "FAIL  cost_per_success" in out and "undefined" in out
    assert "current value is undefined (NaN" in out and "--allow-undefined cost_per_success" in out
    assert cli.main(["gate", base, spend["tripled_unknown"], "--json"]) == 1
    res = json.loads(capsys.readouterr().out)
    c = next(c for c in res["checks"] if c["name"] == "cost_per_success")
    assert c["verdict"] == "undefined" and c["failed"] and not c["regression"]
    assert res["passed"] is False
    args = ["gate", base, spend["tripled_unknown"], "--allow-undefined", "cost_per_success"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "WARN  cost_per_success" in out and "allowed by allow_undefined" in out
    assert cli.main(["gate", base, spend["tripled_unknown"], "--allow-undefined", "*"]) == 0


def test_gate_fails_on_inf_minus_inf(spend: dict[str, str], capsys: Any) -> None:
    # neither run has a success: Cost-of-Pass is inf in both, and inf - inf is undefined
    assert cli.main(["gate", spend["never"], spend["never_too"]]) == 1
    out = capsys.readouterr().out
    assert "both runs are inf" in out and "no success in either run" in out
    args = ["gate", spend["never"], spend["never_too"], "--allow-undefined", "cost_per_success"]
    assert cli.main(args) == 0


# ----------------------------------------------------------------------------- item 12: pipes


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["report", "{base}", "--json"], 0),
        (["report", "{base}"], 0),
        (["gate", "{base}", "{worse}"], 1),
    ],
)
def test_output_into_a_closed_pipe_ends_quietly(
    runs: dict[str, Path], argv: list[str], code: int
) -> None:
    """`ek-agents report --json | head` used to end in a BrokenPipeError traceback."""
    import os
    import subprocess
    import sys

    d = runs["dir"]
    args = [a.format(base=d / "base.jsonl", worse=d / "worse.jsonl") for a in argv]
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first byte is written, as after `| head -0`
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ek.agents.cli", *args],
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(w)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.returncode == code  # the command's own exit code survives the closed pipe


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


# ----------------------------------------------------------------------------- issue 18: the gate and the CLI


def test_gate_different_task_sets_exit_2_unless_intersect(
    runs: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    small = tmp_path / "small.jsonl"
    run_suite(_agent(0.85), TASKS[:1], k=3, run=RUN, store=small)
    assert cli.main(["gate", str(small), str(runs["dir"] / "same.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "baseline has 1 task, current 40; 1 shared" in err
    assert "--tasks intersect" in err
    code = cli.main(["gate", str(small), str(runs["dir"] / "same.jsonl"), "--tasks", "intersect"])
    out = capsys.readouterr().out
    assert code in (0, 1) and "1 task(s) compared" in out and "39 left out" in out
    cli.main(["gate", str(runs["dir"] / "base.json"), str(runs["dir"] / "same.jsonl"), "--json"])
    assert json.loads(capsys.readouterr().out)["n_tasks"] == 40


def test_baseline_with_non_integer_counts_exits_2(
    runs: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    d = json.loads((runs["dir"] / "base.json").read_text())
    d["counts"]["t0"] = [2.9, 1.9]  # used to be truncated to (2, 1)
    d.pop("n_trials")
    d.pop("n_successes")
    (tmp_path / "b.json").write_text(json.dumps(d))
    assert cli.main(["gate", str(tmp_path / "b.json"), str(runs["dir"] / "same.jsonl")]) == 2
    assert "must be an int >= 0, got 2.9" in capsys.readouterr().err


def _one_error_line(capsys: Any) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ek-agents: error: "), err
    assert "Traceback" not in err
    return err


def test_deeply_nested_json_exits_2_with_one_line(tmp_path: Path, capsys: Any) -> None:
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)  # json raises RecursionError
    assert cli.main(["report", str(p)]) == 2
    assert "RecursionError" in _one_error_line(capsys)
    assert cli.main(["gate", str(p), str(p)]) == 2
    assert "RecursionError" in _one_error_line(capsys)


def test_demo_pointed_at_a_file_exits_2_with_one_line(tmp_path: Path, capsys: Any) -> None:
    f = tmp_path / "a-file"
    f.write_text("x")
    assert cli.main(["demo", str(f), "--no-inspect", "--no-plots", "--quiet"]) == 2
    assert "FileExistsError" in _one_error_line(capsys)


@pytest.mark.parametrize(
    "exc", [OverflowError("int too large"), RecursionError("too deep"), MemoryError()]
)
def test_any_error_of_a_subcommand_exits_2_not_1(
    exc: BaseException, monkeypatch: Any, capsys: Any
) -> None:
    # the dispatcher's contract: exit 1 means "regression" to CI, so every other failure is 2
    def boom(args: argparse.Namespace) -> int:
        raise exc

    monkeypatch.setitem(cli.SUBCOMMANDS, "boom", cli.Subcommand("boom", "", lambda p: None, boom))
    assert cli.main(["boom"]) == 2
    assert type(exc).__name__ in _one_error_line(capsys)


def test_fifo_is_refused_not_read(tmp_path: Path, capsys: Any) -> None:
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    codes: list[int] = []
    t = threading.Thread(target=lambda: codes.append(cli.main(["report", str(fifo)])))
    t.daemon = True  # a regression blocks in open(): do not hang the suite
    t.start()
    t.join(timeout=300)  # a hang guard only, very wide: the refusal is immediate
    if t.is_alive():  # unblock the reader so the thread can end, then fail
        with open(fifo, "w"):
            pass
        pytest.fail("ek-agents report blocked on a FIFO")
    assert codes == [2]
    assert "a FIFO (named pipe)" in _one_error_line(capsys)
    assert cli.main(["gate", str(tmp_path), str(tmp_path)]) == 2  # a directory: refused too
    assert "expected a regular file" in _one_error_line(capsys)


def test_report_plot_dir_prints_the_file_written(
    runs: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "plots"  # no extension: matplotlib writes plots.png
    assert cli.main(["report", str(runs["dir"] / "base.jsonl"), "--plot", str(target)]) == 0
    err = capsys.readouterr().err
    written = tmp_path / "plots.png"
    assert written.is_file()
    assert f"plot written to {written}\n" in err
