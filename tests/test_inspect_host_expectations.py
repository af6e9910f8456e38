"""Issue 32, items 1-5: Inspect AI as its users expect, through the real host.

Every test runs a real Inspect ``eval()`` (the ``react()`` loop and refund tools of
``examples/inspect_task.py``, driven by a scripted ``mockllm`` with explicit usage: offline, no
API key), or the real ``inspect score`` CLI in a subprocess, and reads the log back with
``ek-agents report`` / ``gate``.

- item 1: the README's scorer list ``[task_success(check="final_state", price=P), tool_calls(),
  trajectory()]`` shows one success figure and one Cost-of-Pass: a scorer never told how to
  decide success has no success column, no Cost-of-Pass, and its explanation starts with its own
  metric's reason;
- item 2: ``report`` / ``gate`` take success from the scorer that decides it, wherever it is in
  the list; scorers that all decide and disagree are refused, naming them; ``--success-scorer``
  still wins;
- item 3: a correct 3-epoch run with ``ek/pass_hat_2`` gives no "NaN on every sample" warning
  (Inspect reduces partial epochs for its live display); k above the epochs warns once, about
  the final result;
- item 4: a run priced through ``task_success(price=...)`` gates its Cost-of-Pass;
- item 5: the README's re-score command runs as written, without a TTY.
"""

from __future__ import annotations

import json
import logging
import math
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from test_inspect_issue_paths import CALL, _copy, _env, _metric, _run, _task, load_example
from test_report_hostlogs import _cli, _report

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

# The scripted agent's model calls per sample (one call = $0.0035, see test_inspect_issue_paths):
#   good agent, every epoch: A1 lookup, refund, submit = 3; A2 lookup, a refund the tool refuses
#   ("thirty-five"), refund, submit = 4; A3 3; B9 a failing lookup, submit = 2 -> 12 calls, and
#   every final state is the goal (4 successes of 4);
#   degraded agent over 3 epochs: A1 and A2 fail their 1st and 3rd epochs (refund 999 without a
#   lookup, submit: 2 calls) and succeed the 2nd (3 and 4 calls); A3, B9 as above -> 30 calls
#   and 8 successes of 12 (A1 1, A2 1, A3 3, B9 3).
GOOD_CALLS, DEGRADED_CALLS, DEGRADED_SUCCESSES = 12, 30, 8


@pytest.fixture(scope="module")
def ex() -> ModuleType:
    return load_example("ek_inspect_example_issue32")


# --------------------------------------------------------------------------- item 1


def test_the_readme_scorer_list_shows_one_success_figure(ex: ModuleType, tmp_path: Path) -> None:
    from ek.adapters.inspect import task_success, tool_calls, trajectory
    from inspect_ai import Epochs

    scorers = [task_success(check="final_state", price=ex.PRICE), tool_calls(), trajectory()]
    log = _run(_task(ex, scorers, epochs=Epochs(3, ["ek/pass_hat_2", "mean"])), tmp_path)
    success = {(s.scorer, s.reducer) for s in log.results.scores if s.name == "success"}
    assert {scorer for scorer, _ in success} == {"task_success"}
    cop = [(s.scorer, m) for s in log.results.scores for m in s.metrics if "cost_of_pass" in m]
    assert cop == [("task_success", "ek/cost_of_pass_metric")]
    # 12 attempts, all succeed; 36 calls x $0.0035 / 12 successes = $0.0105
    got = _metric(log, "task_success", "success", None, "ek/cost_of_pass_metric")
    assert math.isclose(got, 3 * GOOD_CALLS * CALL / 12, rel_tol=1e-12)
    assert _metric(log, "task_success", "success", "mean", "accuracy") == 1.0
    for sample in log.samples:
        for scorer in ("tool_calls", "trajectory"):
            s = sample.scores[scorer]
            assert "success" not in s.value and scorer in s.value, (scorer, s.value)
            # its own metric's reason first; no success verdict, no "dollars unknown"
            assert s.explanation.startswith(f"{scorer}: "), s.explanation
            assert "success:" not in s.explanation and "dollars" not in s.explanation
            assert s.metadata["ek"]["success"] is None
        assert sample.scores["task_success"].explanation.startswith("success: final_state")
    # pass^2 over the epochs is computed for the scorer that decides success only
    reductions = {(r.scorer, r.reducer): r.samples for r in log.reductions}
    for r in reductions["tool_calls", "ek/pass_hat_2"]:
        assert "success" not in r.value and "not computed" in (r.explanation or "")
    assert all(r.value["success"] == 1.0 for r in reductions["task_success", "ek/pass_hat_2"])


# --------------------------------------------------------------------------- item 2


@pytest.fixture(scope="module")
def degraded_logs(ex: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Degraded agent, 3 epochs: the success scorer last; and two scorers that both decide."""
    from ek.adapters.inspect import task_success, tool_calls, trajectory
    from inspect_ai import Epochs

    d = tmp_path_factory.mktemp("issue32-item2")
    last = [tool_calls(), trajectory(), task_success(check="final_state", price=ex.PRICE)]
    both = [tool_calls(check="output"), task_success(check="final_state")]
    return {
        "last": _run(_task(ex, last, epochs=Epochs(3), degraded=True), d / "last"),
        "both": _run(_task(ex, both, epochs=Epochs(3), degraded=True), d / "both"),
    }


def test_report_takes_success_from_the_scorer_that_decides_it(
    degraded_logs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    # was 0 of 12 (tool_calls, first in the list, checked the output by default: the truth for
    # none of these final-state tasks); the final-state verdict is 8 of 12
    rep = _report(degraded_logs["last"].location, capsys)
    assert (rep["n_trials"], rep["n_successes"]) == (12, DEGRADED_SUCCESSES)
    assert rep["unscored"]["n"] == 0


def test_scorers_that_disagree_are_refused_naming_them(
    degraded_logs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = degraded_logs["both"].location
    for cmd in (["report", path], ["gate", path, path]):
        code, _, err = _cli(cmd, capsys)
        assert code == 2, err
        assert "['task_success', 'tool_calls'] all decide success and disagree" in err
        assert "--success-scorer NAME" in err and "\n" not in err.strip()
    # --success-scorer still wins: the final state, 8 of 12; the output check compares the
    # answer with the task's gold, which is the goal state here, so it fails all 12 (the
    # 0-of-N report of the issue, now only on request)
    assert _report(path, capsys, "--success-scorer", "task_success")["n_successes"] == 8
    assert _report(path, capsys, "--success-scorer", "tool_calls")["n_successes"] == 0


# --------------------------------------------------------------------------- item 3


def test_a_correct_multi_epoch_run_does_not_warn(
    ex: ModuleType, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from ek.adapters.inspect import task_success
    from inspect_ai import Epochs

    caplog.set_level(logging.WARNING, logger="ek.adapters.inspect._reducers")
    scorer = task_success(check="final_state", price=ex.PRICE)
    log = _run(_task(ex, scorer, epochs=Epochs(3, "ek/pass_hat_2"), degraded=True), tmp_path)
    # Inspect reduced partial epochs for its live display (1 of 3 epochs done): the old reducer
    # warned "pass^2 is NaN on every sample ... the evaluation ran 1" here
    assert not [r for r in caplog.records if "NaN on every sample" in r.getMessage()]
    # pass^2 per sample over 3 epochs, C(c, 2) / C(3, 2): A1 and A2 (c = 1) 0, A3 and B9 1
    reduced = {
        str(s.sample_id): s.value["success"]
        for r in log.reductions
        if r.reducer == "ek/pass_hat_2"
        for s in r.samples
    }
    assert reduced == {"refund-A1": 0.0, "refund-A2": 0.0, "refund-A3": 1.0, "refund-B9": 1.0}


def test_k_above_the_epochs_warns_once_about_the_final_result(
    ex: ModuleType, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from ek.adapters.inspect import task_success
    from inspect_ai import Epochs

    caplog.set_level(logging.WARNING, logger="ek.adapters.inspect._reducers")
    scorer = task_success(check="final_state")
    _run(_task(ex, scorer, epochs=Epochs(2, ["ek/pass_hat_5", "ek/pass_at_2"])), tmp_path)
    said = [r.getMessage() for r in caplog.records if "NaN on every sample" in r.getMessage()]
    assert said == [
        "ek reducer pass^5 is NaN on every sample: pass^5 needs at least k=5 epochs, but the "
        "evaluation ran 2: use Epochs(5, ...) or more, or a k of at most 2"
    ]


# --------------------------------------------------------------------------- item 4


@pytest.fixture(scope="module")
def priced_logs(ex: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Baseline (good agent) and current (degraded), 3 epochs, success priced in task_success."""
    from ek.adapters.inspect import task_success, tool_calls
    from inspect_ai import Epochs

    d = tmp_path_factory.mktemp("issue32-item4")
    out = {}
    for name, degraded in (("baseline", False), ("current", True)):
        scorers = [task_success(check="final_state", price=ex.PRICE), tool_calls()]
        task = _task(ex, scorers, epochs=Epochs(3), degraded=degraded)
        out[name] = _run(task, d / name).location
    return out


def test_a_priced_run_gates_its_cost_of_pass(
    priced_logs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    base = 3 * GOOD_CALLS * CALL / 12  # $0.126 / 12 successes = 0.0105
    cur = DEGRADED_CALLS * CALL / DEGRADED_SUCCESSES  # $0.105 / 8 = 0.013125
    for path, want in ((priced_logs["baseline"], base), (priced_logs["current"], cur)):
        rep = _report(path, capsys)
        assert math.isclose(rep["cost"]["cost_of_pass"], want, rel_tol=1e-12)
        # the same figure as a metric, which the gate checks (lower is better)
        m = rep["metrics"]["cost_per_success"]
        assert math.isclose(m["value"], want, rel_tol=1e-12) and m["higher_is_better"] is False
    code, out, err = _cli(
        ["gate", priced_logs["baseline"], priced_logs["current"], "--json"], capsys
    )
    assert code in (0, 1), err
    [check] = [c for c in json.loads(out)["checks"] if c["name"] == "cost_per_success"]
    assert math.isclose(check["baseline"], base, rel_tol=1e-12)
    assert math.isclose(check["current"], cur, rel_tol=1e-12)
    assert check["higher_is_better"] is False


# --------------------------------------------------------------------------- item 5


def _readme_rescore_command() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^#?\s*(inspect score LOG --scorer ek/trajectory[^\n(#]*)", text, re.M)
    assert m is not None, "the README's re-score command is gone"
    return m.group(1).split()


def test_the_readme_rescore_command_runs_as_written_without_a_tty(
    priced_logs: dict[str, str], tmp_path: Path
) -> None:
    from inspect_ai.log import read_eval_log

    cmd = _readme_rescore_command()
    assert "-S" not in cmd  # no checker needed for a scorer that decides no success
    log = _copy(read_eval_log(priced_logs["baseline"], header_only=True), tmp_path)
    argv = [str(Path(sys.executable).parent / "inspect"), *cmd[1:]]
    argv[argv.index("LOG")] = str(log)
    r = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,  # no TTY: a prompt would fail here
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rescored = read_eval_log(str(log))
    for sample in rescored.samples:
        s = sample.scores["trajectory"]
        assert "success" not in s.value and s.value["trajectory"] == 1.0  # the good agent
        assert "task_success" in sample.scores  # appended: the old scores are kept
    names = {(s.scorer, s.name) for s in rescored.results.scores}
    assert ("trajectory", "trajectory") in names and ("trajectory", "success") not in names
