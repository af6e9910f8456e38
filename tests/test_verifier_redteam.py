"""The red-team suite: every attack workspace fails the hidden tests, none is scored a success.

Each attack (tests/redteam/attacks.py) is run twice on fresh copies: by a naive checker
(``python -m pytest`` in the workspace, exit status 0 = success) and by ``hidden_tests``. The
ek checker must reject every one; the naive checker's results are recorded to show what the
isolation buys. ``pytest tests/test_verifier_redteam.py -s`` prints the table (also:
``python tests/redteam/run.py``). Issue 18's round is also run with Landlock switched off in
the workspace process (defence in depth: each attack must still be caught by the mechanism
that does not depend on the kernel). The harness bugs of issue 18 (timeout, deep trees, empty
directories, resource limits, daemons, writes outside the workspace) have a test each below.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from redteam.attacks import (
    ATTACKS,
    DEEP_DIRS,
    FORK_MANY,
    HIDDEN_TESTS,
    LIMITS_PROBE,
    RIGHT,
    SPAWN_DAEMON,
    STDOUT_HOLDER,
    Attack,
)
from redteam.run import Row, format_table, landlock_off, run_all, run_attack

from ek.agents.base import Episode
from ek.agents.metrics import TaskSuccessMetric
from ek.agents.verifier import HiddenTestVerdict, hidden_tests
from ek.agents.verifier._tree import remove_tree

pytestmark = pytest.mark.slow

# Attacks with an unmistakable signature: the verdict must say "tampering", not just "failed".
# (os._exit(0) in the middle of a request; garbage written into the workspace process's pipe;
# an object that claims to equal an opaque object it has never seen.)
TAMPERING = {"os_exit_at_import", "forged_report", "forge_via_proc_fd", "always_equal"}
# Attacks the naive checker certainly falls for (the point of the exercise).
NAIVE_FOOLED = {
    "conftest_root",
    "conftest_subfolder",
    "pytest_ini_deselect",
    "pyproject_plugin",
    "env_PYTEST_ADDOPTS",
    "env_PYTEST_PLUGINS",
    "setup_cfg_skip",
    "tox_ini_ignore",
    "pytest_toml_plugin",
    "env_PYTHONPATH",
    "shadow_pytest",
    "shadow__pytest",
    "shadow_stdlib",
    "dist_info_pytest11",
    "os_exit_at_import",
    "inprocess_rewrite",
    "symlink_to_tests",
    "edit_hidden_tests",
    "rebuild_test_module",
    "rewrite_uncollected",
    "shadow_numpy_testing",
    "always_equal",
    "eq_returns_one",
    "eq_returns_truthy",
    "eq_knows_the_test_types",
    "int_subclass_eq",
}
# Issue 18: each attack that gave a false pass, by the issue's wording.
ISSUE18 = {
    "rebuild_test_module": "(1) solution rebuilds its importing test module in sys.modules",
    "rewrite_uncollected": "(2) several files: uncollected ones rewritten, restored on import",
    "shadow_numpy_testing": "(3) a fake third-party package (numpy/testing.py) shadows the real one",
    "patch_emitter": "canary-aware rewriting: patching the runner's emitter",
    "patch_runtest": "canary-aware rewriting: patching Function.runtest for the importer's tests",
    "inject_pytest_plugins": "canary-aware rewriting: injecting pytest_plugins",
    "forge_via_proc_fd": "canary-aware rewriting: a full report forged into the pipe (/proc/self/fd)",
    "daemon_edits_next_check": "a background process of trial 1 edits the next check's copy",
    "pth_in_site_packages": "a .pth written into the test interpreter's site-packages by trial 1",
    "episode_names_workspace": "the default workspace read from the episode",
}


@pytest.fixture(scope="module")
def rows() -> dict[str, Row]:
    got = run_all(ATTACKS, workers=2)
    print("\n" + format_table(got))
    return {r.attack: r for r in got}


def test_the_suite_covers_the_issue_list() -> None:
    names = {a.name for a in ATTACKS}
    required = {
        "conftest_root", "conftest_subfolder", "pytest_ini_deselect", "pyproject_plugin",
        "setup_cfg_skip", "tox_ini_ignore", "env_PYTEST_ADDOPTS", "env_PYTEST_PLUGINS",
        "env_PYTHONPATH", "env_PYTHONSTARTUP", "shadow_pytest", "shadow__pytest",
        "shadow_stdlib", "sitecustomize", "usercustomize", "pth_file", "dist_info_pytest11",
        "os_exit_at_import", "sys_exit_at_import", "forged_report", "symlink_to_tests",
        "symlink_to_report", "edit_hidden_tests",
    }  # fmt: skip
    assert required <= names and len(names) == len(ATTACKS)
    assert set(ISSUE18) == {a.name for a in ATTACKS if a.issue18}


# An attack that shadows an installed third-party package means something only where that
# package is installed in the test interpreter (the core-only venv has no numpy): there, a name
# the hidden tests import that is installed nowhere resolves to the workspace (a documented
# residual risk in docs/verifier_isolation.md).
NEEDS_INSTALLED = {"shadow_numpy_testing": "numpy"}


def _shadowed_is_installed(name: str) -> bool:
    import importlib.util

    return (
        name not in NEEDS_INSTALLED or importlib.util.find_spec(NEEDS_INSTALLED[name]) is not None
    )


@pytest.mark.parametrize("name", [a.name for a in ATTACKS])
def test_ek_checker_rejects(rows: dict[str, Row], name: str) -> None:
    if not _shadowed_is_installed(name):
        pytest.skip(f"{name} shadows {NEEDS_INSTALLED[name]}, which is not installed here")
    row = rows[name]
    for v in (*row.earlier, row.verdict):  # every trial of a multi-check attack
        assert not v.passed and v.status != "passed", f"{name} beat the checker: {v.reason}"
        assert v.status in {"failed", "tampering", "collection_error", "error"}, v.reason
    if name in TAMPERING:
        assert row.verdict.status == "tampering", row.verdict.reason


def test_episode_workspace_is_refused_with_a_clear_message(rows: dict[str, Row]) -> None:
    v = rows["episode_names_workspace"].verdict
    assert v.status == "error" and "pass workspace=" in v.reason


# Issue 30, item 1: each of these results claims to equal 5 while the opaque probe sees nothing;
# the trusted process now compares the object's plain value (an int subclass's int) or refuses.
COMPARISONS = {
    "eq_returns_one": "derives from no built-in data type",
    "eq_returns_truthy": "derives from no built-in data type",
    "eq_knows_the_test_types": "derives from no built-in data type",
    "int_subclass_eq": "assert 42 == 5",  # compared here as the int it is
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_are_decided_in_the_trusted_process(rows: dict[str, Row], name: str) -> None:
    v = rows[name].verdict
    assert v.status == "failed" and len(v.failed_tests) == 3, v.reason
    why = v.detail["longrepr"]["test_solution.py::test_add_small"]
    assert COMPARISONS[name] in why, why


def test_naive_checker_is_fooled(rows: dict[str, Row]) -> None:
    fooled = {n for n, r in rows.items() if r.naive_fooled}
    assert fooled >= NAIVE_FOOLED, sorted(NAIVE_FOOLED - fooled)


def test_control_honest_workspace_passes_both(tmp_path: Path) -> None:
    # Without this, "naive not fooled" could mean a broken naive harness.
    row = run_attack(Attack("control", "a correct solution", {"solution.py": RIGHT}), tmp_path)
    assert row.naive_fooled and row.naive_exit == 0  # "fooled" here = it said success, rightly
    assert row.verdict.passed and row.verdict.status == "passed"


def test_control_honest_workspace_passes_every_trial_and_interpreter(tmp_path: Path) -> None:
    # The multi-check and throwaway-interpreter harness paths judge honestly: trial 1 (a
    # correct solution) passes; trial 2 is always the plain wrong solution, and fails.
    honest = Attack("control2", "correct", {"solution.py": RIGHT}, trials=2, throwaway_python=True)
    row = run_attack(honest, tmp_path)
    assert [v.status for v in (*row.earlier, row.verdict)] == ["passed", "failed"]


# --------------------------------------------------------------------------- defence in depth
@pytest.fixture
def no_landlock() -> Iterator[None]:
    """The workspace process as on a kernel without Landlock (the child's own source edited)."""
    with landlock_off():
        yield


def test_issue18_attacks_are_caught_without_landlock(no_landlock: None) -> None:
    # Landlock hides the checker's folders and site-packages from the workspace process. Each
    # attack must also be caught by what does not need it: tests compiled from the verified
    # in-memory copy, the workspace code in its own process, a signed report, the subreaper
    # that kills daemons, the site-packages baseline.
    got = run_all(
        [
            a
            for a in ATTACKS
            if (a.issue18 or a.name == "edit_hidden_tests") and _shadowed_is_installed(a.name)
        ]
    )
    print("\n" + format_table(got))
    for row in got:
        for v in (*row.earlier, row.verdict):
            assert not v.passed, f"{row.attack} beat the checker without Landlock: {v.reason}"
            sandbox = v.detail.get("sandbox")
            assert sandbox is None or sandbox["landlock"] == 0
    by_name = {r.attack: r for r in got}
    pth = by_name["pth_in_site_packages"]
    # trial 1 wrote the .pth: seen right after its run, and again before trial 2 runs
    assert pth.earlier[0].status == "tampering" and "ek_rt_evil" in pth.earlier[0].reason
    assert pth.verdict.status == "tampering" and "ek_rt_evil" in pth.verdict.reason


# --------------------------------------------------------------------------- harness bugs
def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def _pid_in(output: str) -> int:
    for line in output.splitlines():
        if line.startswith("EK_PID="):
            return int(line.split("=", 1)[1])
    raise AssertionError(f"no EK_PID= line in the output: {output[-500:]!r}")


def _gone(pid: int) -> bool:
    """The process no longer exists (or is a zombie: dead, not yet reaped by init)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


def test_timeout_holds_when_a_background_process_keeps_stdout_open(tmp_path: Path) -> None:
    # Issue 18: with timeout=5 the check took 45 s (unbounded in general) because it waited for
    # the end of an output pipe that a background process held open. The background process
    # here would hold it for 10 minutes; the check must come back with "timeout" (the thread's
    # generous 300 s join only keeps a regression from hanging the suite) and the process dies.
    ws = _write(tmp_path / "ws", {"solution.py": STDOUT_HOLDER})
    got: list[HiddenTestVerdict] = []
    t = threading.Thread(
        # 10 s: room for both test processes to start (no bytecode) on a loaded machine
        target=lambda: got.append(hidden_tests(HIDDEN_TESTS, timeout=10).verify(ws))
    )
    t.start()
    t.join(300)
    assert not t.is_alive(), "the check waited for the background process's stdout"
    assert got[0].status == "timeout"
    assert _gone(_pid_in(got[0].output))


def test_daemons_do_not_outlive_the_check(tmp_path: Path) -> None:
    # Issue 18: a setsid() daemon escapes a process-group kill. The runner is the child
    # subreaper of everything the workspace starts and kills it all at the end.
    ws = _write(tmp_path / "ws", {"solution.py": SPAWN_DAEMON})
    v = hidden_tests(HIDDEN_TESTS).verify(ws)
    assert v.status == "passed", v.reason
    assert _gone(_pid_in(v.output))


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The checker's temp folder, watched: what a check leaves behind is seen here."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _nest(root: Path, depth: int) -> None:
    """``root/n/n/.../n``, ``depth`` levels, made without recursion (os.makedirs recurses)."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("n", dir_fd=fd)
        nfd = os.open("n", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(fd)


def test_deep_trees_are_copied_and_cleaned_up(tmp_path: Path, private_tmp: Path) -> None:
    # Issue 18: 1,200 nested directories raised RecursionError in cleanup and left the hidden
    # tests in the temp folder. Here both the workspace and what its code creates are that deep.
    ws = _write(tmp_path / "ws", {"solution.py": DEEP_DIRS})
    _nest(ws, 1200)
    try:
        v = hidden_tests(HIDDEN_TESTS).verify(ws)
    finally:
        remove_tree(ws)  # pytest's own tmp_path cleanup would recurse too deep
    assert v.status == "passed", v.reason
    (parent,) = private_tmp.iterdir()  # ek-verifier-<uid>: nothing stays (no bytecode cache)
    assert sorted(p.name for p in parent.iterdir()) == []


def test_many_empty_directories_hit_the_copy_limit(tmp_path: Path, private_tmp: Path) -> None:
    # Issue 18: 50,000 empty directories took 29 s to copy (max_files counted files only).
    # 2,001 empty directories and one file: past max_files=2,000 now that directories count.
    ws = _write(tmp_path / "ws", {"solution.py": RIGHT})
    for i in range(2_001):
        os.mkdir(ws / f"d{i}")
    v = hidden_tests(HIDDEN_TESTS, max_files=2_000).verify(ws)
    assert v.status == "error" and "files and directories" in v.reason
    (parent,) = private_tmp.iterdir()
    assert [p.name for p in parent.iterdir()] == []


_LIMIT_TESTS = {
    "test_limits.py": (
        "import pytest\n"
        "from solution import alloc, big_file, spin\n\n\n"
        "def test_1_memory():\n    assert alloc() == 'refused'\n\n\n"
        "def test_2_file_size():\n    assert big_file() == 'refused'\n\n\n"
        "def test_3_cpu():\n"
        "    with pytest.raises(Exception, match='killed by signal'):\n"
        "        spin()\n"
    ),
}


def test_memory_cpu_and_file_size_limits(tmp_path: Path) -> None:
    # Issue 18: no memory, CPU or process limits. The workspace process runs under
    # resource.setrlimit: a 1 GiB allocation under a 512 MiB address-space limit fails, a 4 MiB
    # file under a 1 MiB limit fails, and an endless loop is killed (SIGXCPU) after 2 CPU
    # seconds, long before the 120 s timeout.
    ws = _write(tmp_path / "ws", {"solution.py": LIMITS_PROBE})
    limits = {"memory": 512 << 20, "file_size": 1 << 20, "cpu": 2}
    check = hidden_tests(_LIMIT_TESTS, timeout=120, limits=limits, workspace=ws)
    score = TaskSuccessMetric(check=check)(Episode("t"), None)  # as a harness calls it
    v = check.last_verdict
    assert v is not None and v.status == "passed" and score.value == 1.0, v.reason
    assert {k: v.detail["sandbox"]["limits"][k] for k in limits} == limits


def test_process_limit(tmp_path: Path) -> None:
    # 40 processes against a limit of 8: as a normal user RLIMIT_NPROC refuses the fork; as
    # root (where Linux ignores RLIMIT_NPROC) the checker counts descendants and kills them all.
    tests = {"test_p.py": "from solution import forks\n\n\ndef test_forks():\n"
             "    assert forks(40) == 'refused'\n"}  # fmt: skip
    ws = _write(tmp_path / "ws", {"solution.py": FORK_MANY})
    v = hidden_tests(tests, limits={"processes": 8}).verify(ws)
    if os.getuid() == 0:
        assert v.status == "error" and "too many processes" in v.reason
    else:
        assert v.status == "passed", v.reason


def test_files_outside_the_workspace_are_not_writable(tmp_path: Path) -> None:
    # Issue 18: the workspace's code could write anywhere its user can. With Landlock it may
    # write only its workspace copy and scratch folder.
    outside = tmp_path / "outside.txt"
    tests = {"test_w.py": "from solution import write_inside, write_outside\n\n\n"
             f"def test_inside():\n    assert write_inside() == 'allowed'\n\n\n"
             f"def test_outside():\n    assert write_outside({str(outside)!r}) == 'refused'\n"}  # fmt: skip
    ws = _write(tmp_path / "ws", {"solution.py": LIMITS_PROBE})
    v = hidden_tests(tests).verify(ws)
    if v.detail.get("sandbox", {}).get("landlock", 0) == 0:
        pytest.skip("this kernel has no Landlock: writes outside the workspace are not blocked")
    assert v.status == "passed", v.reason
    assert not outside.exists() and not (ws / "inside.txt").exists()  # only the copy was written
