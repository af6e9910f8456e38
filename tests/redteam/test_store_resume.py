"""Red team (issue 30, item 8): resuming a store with another checker under the same name.

A resumed store was refused only when the checker's *name* changed, so each of these resumed
and mixed two checkers' verdicts in one run: ``hidden_tests`` of other test files, a
``functools.partial`` with other keywords, a lambda closing over another threshold. The store
now records the checker's configuration (:mod:`ek.agents._fingerprint`) and refuses any change,
naming it; a checker that cannot be described in full is resumed only on an explicit opt-in;
the agent's identity is recorded too, and a resume with another agent warns.
"""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Episode, TaskSpec
from ek.agents.harness import StoreMismatchError, read_store, run_suite
from ek.agents.verifier import hidden_tests

TASKS = [TaskSpec(f"t{i}", gold=0.6) for i in range(3)]


def _agent(task: TaskSpec) -> Episode:
    return Episode(task.task_id, output=0.6)


def _run(store: Path, check: Any, agent: Any = _agent, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_suite(agent, TASKS, k=2, check=check, store=store, **kw)


def _half_run(store: Path, check: Any) -> None:
    """The first trial of every task stored, as a crash would leave it (then resumed)."""
    _run(store, check)
    lines = store.read_text().splitlines()
    store.write_text("\n".join(lines[:1] + lines[1::2]) + "\n")


def _close(ep: Any, gold: Any, tol: float = 0.0) -> bool:
    return abs(ep.output - gold) <= tol


def _at_least(threshold: float) -> Any:
    return lambda ep, gold: ep.output >= threshold


def test_a_partial_with_other_keywords_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "run.jsonl"
    _half_run(store, functools.partial(_close, tol=0.5))
    with pytest.raises(StoreMismatchError, match=r"keywords\.tol: 0\.5 -> 0\.0"):
        _run(store, functools.partial(_close, tol=0.0))
    assert _run(store, functools.partial(_close, tol=0.5)).resumed == 3  # the same one resumes


def test_a_lambda_closing_over_another_threshold_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "run.jsonl"
    _half_run(store, _at_least(0.5))
    with pytest.raises(StoreMismatchError, match=r"closure\.threshold: 0\.5 -> 0\.9"):
        _run(store, _at_least(0.9))
    assert _run(store, _at_least(0.5)).resumed == 3


HIDDEN_A = "from solution import f\n\ndef test_f():\n    assert f() == 1\n"
HIDDEN_B = "from solution import f\n\ndef test_f():\n    assert f() == 2\n"


def test_hidden_tests_of_other_files_are_refused(tmp_path: Path) -> None:
    """Two hidden-test checkers with the same name and test ids, other test files: the store
    records the tests' digest. (No test runs: every trial's agent raised, so no verdict was
    asked of the checker, which is what the resume is about, not what it would say.)"""
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, text in ((a, HIDDEN_A), (b, HIDDEN_B)):
        folder.mkdir()
        (folder / "test_f.py").write_text(text)
    ws = str(tmp_path / "ws")
    check_a = hidden_tests(a / "test_f.py", workspace=ws)
    check_b = hidden_tests(b / "test_f.py", workspace=ws)
    assert check_a.expected == check_b.expected and check_a.__name__ == check_b.__name__
    store = tmp_path / "run.jsonl"

    def crashing(task: TaskSpec) -> Episode:
        raise RuntimeError("no solution")  # a failed trial: the checker is never run

    _run(store, check_a, agent=crashing)
    with pytest.raises(StoreMismatchError, match=r"checker 'hidden_tests': .*config\.tests: "):
        _run(store, check_b, agent=crashing)
    header = read_store(store).header
    assert header["checker"]["settings"]["config"]["tests"] == check_a.digest
    assert _run(store, check_a, agent=crashing).resumed == 6


class _Opaque:
    """An object whose settings cannot be read (its argument is not kept as an attribute)."""

    def __init__(self, level: float) -> None:
        self._level = level


def _judged_by(client: _Opaque) -> Any:
    return lambda ep, gold: ep.output >= client._level


def test_a_checker_that_cannot_be_described_resumes_only_on_opt_in(tmp_path: Path) -> None:
    store = tmp_path / "run.jsonl"
    _half_run(store, _judged_by(_Opaque(0.5)))
    header = read_store(store).header
    assert header["checker"]["undescribed"], header["checker"]  # it says what it cannot read
    with pytest.raises(StoreMismatchError, match="cannot be compared in full.*level"):
        _run(store, _judged_by(_Opaque(0.9)))  # could be another checker: refused
    res = _run(store, _judged_by(_Opaque(0.5)), resume_undescribed_checker=True)
    assert res.resumed == 3


def test_a_store_that_records_its_checker_by_name_only_resumes_only_on_opt_in(
    tmp_path: Path,
) -> None:
    store = tmp_path / "run.jsonl"
    _half_run(store, _at_least(0.5))
    lines = store.read_text().splitlines()
    header = json.loads(lines[0])
    del header["checker"]  # what a store written before this looks like
    store.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(StoreMismatchError, match="records its checker by name only"):
        _run(store, _at_least(0.5))
    assert _run(store, _at_least(0.5), resume_undescribed_checker=True).resumed == 3


class _Agent:
    def __init__(self, temperature: float) -> None:
        self.temperature = temperature

    def __call__(self, task: TaskSpec) -> Episode:
        return Episode(task.task_id, output=0.6)


def test_the_agent_is_recorded_and_a_resume_with_another_warns(tmp_path: Path) -> None:
    store = tmp_path / "run.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the first run and a same-agent resume do not warn
        run_suite(_Agent(0.0), TASKS[:1], k=1, check=_at_least(0.5), store=store)
        run_suite(_Agent(0.0), TASKS[:1], k=1, check=_at_least(0.5), store=store)
    agent = read_store(store).header["agent"]
    assert agent["settings"]["settings"] == {"temperature": 0.0}
    with pytest.warns(UserWarning, match=r"another agent .*temperature: 0\.0 -> 0\.7"):
        run_suite(_Agent(0.7), TASKS[:1], k=1, check=_at_least(0.5), store=store)


def test_the_option_is_a_bool() -> None:
    with pytest.raises(TypeError, match="resume_undescribed_checker must be a bool"):
        run_suite(_agent, TASKS, resume_undescribed_checker="yes")


def test_a_registered_name_is_described_by_the_function_it_names(tmp_path: Path) -> None:
    """``check="lenient"`` after ``"lenient"`` was registered again to another function: the
    same name, another checker."""
    from ek.registry import register, unregister

    def strict(ep: Any, gold: Any) -> bool:
        return bool(ep.output == gold)

    def lenient(ep: Any, gold: Any) -> bool:
        return True

    store = tmp_path / "run.jsonl"
    name = "redteam-resume-check"
    try:  # registered only for this test (the registry-driven fuzz must not see it)
        register("checkers", name, strict)
        _half_run(store, name)
        register("checkers", name, lenient)  # re-registering replaces it
        with pytest.raises(StoreMismatchError, match=rf"checker '{name}': .*lenient"):
            _run(store, name)
    finally:
        unregister("checkers", name)


def test_a_resume_with_another_time_limit_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "run.jsonl"
    _run(store, _at_least(0.5), timeout=30.0)
    with pytest.raises(StoreMismatchError, match=r"timeout: store has 30\.0, run has 0\.001"):
        _run(store, _at_least(0.5), timeout=0.001)  # trials past it would fail: other verdicts
    assert _run(store, _at_least(0.5), timeout=30.0).resumed == 6
