"""Red team (issue 30, item 10): trial counts that would run until memory runs out.

``run_suite(k=2**63)``, ``pytest --ek-trials 1000000000`` and ``@pytest.mark.ek(trials=10**9)``
were accepted: every trial is kept (an episode in memory and in the store, or a pytest item),
so each ran until the machine ran out of memory. The number of trials per task is capped at a
documented maximum (:data:`ek._validate.MAX_TRIALS`), checked before any work with an error
that names the limit. The pytest sessions run in a child process with an address-space limit,
so that a regression fails the test instead of exhausting the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ek._validate import MAX_TRIALS
from ek.agents.base import Episode, TaskSpec
from ek.agents.harness import SuiteConfig, run_suite


class _Ran(BaseException):
    """Raised by the agent: the run started (a BaseException, so no trial swallows it)."""


def _agent(task: TaskSpec) -> Episode:
    raise _Ran(task.task_id)


@pytest.mark.parametrize("k", [2**63, MAX_TRIALS + 1, 10**400])
def test_run_suite_refuses_k_over_the_limit_before_any_trial(k: int, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at most 10000"):
        SuiteConfig(k=k)  # the options are checked when built, before run_suite does anything
    with pytest.raises(ValueError, match=f"k must be at most {MAX_TRIALS}"):
        run_suite(_agent, [TaskSpec("a", gold="ok")], k=k, store=tmp_path / "run.jsonl")
    assert not (tmp_path / "run.jsonl").exists()  # no store was opened either


def test_the_limit_itself_is_accepted() -> None:
    assert SuiteConfig(k=MAX_TRIALS).k == MAX_TRIALS  # 10,000 trials a task: documented maximum


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A pytest session in a child with at most 2 GiB of address space (and a very wide
    timeout: a refusal takes a second; 10**9 items would exhaust the limit instead)."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ek.agents.pytest_plugin", "-q", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=limit if sys.platform.startswith("linux") else None,
        check=False,
    )


_TEST = """
import pytest

@pytest.mark.ek(trials={trials})
def test_agent(ek_episode):
    assert True
"""


@pytest.mark.slow
def test_a_marker_over_the_limit_is_a_collection_error(tmp_path: Path) -> None:
    (tmp_path / "test_huge.py").write_text(_TEST.format(trials="10**9"))
    res = _pytest(tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode == pytest.ExitCode.INTERRUPTED, out  # a collection error: exit 2
    assert f"trials must be at most {MAX_TRIALS}" in out, out
    assert "MemoryError" not in out and "Traceback" not in out, out


@pytest.mark.slow
def test_ek_trials_over_the_limit_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "test_small.py").write_text(_TEST.format(trials=2))
    res = _pytest(tmp_path, "--ek-trials", "1000000000")
    out = res.stdout + res.stderr
    assert res.returncode == pytest.ExitCode.USAGE_ERROR, out
    assert f"--ek-trials must be at most {MAX_TRIALS}" in out, out
    assert "Traceback" not in out, out
