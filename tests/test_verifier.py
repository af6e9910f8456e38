"""Unit tests of ek.agents.verifier: the verdict, construction, the judge, copying, honest runs.

The red-team suite (every attack workspace) is in test_verifier_redteam.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redteam.attacks import HIDDEN_TESTS, RIGHT, WRONG

from ek.agents.base import Episode
from ek.agents.metrics import TaskSuccessMetric
from ek.agents.verifier import (
    VERDICT_STATUSES,
    HiddenTestChecker,
    HiddenTestVerdict,
    hidden_tests,
    run_hidden_tests,
)
from ek.agents.verifier._checker import _workspace_of
from ek.agents.verifier._process import Bounded as _Bounded
from ek.agents.verifier._tree import WorkspaceError as _WorkspaceError
from ek.agents.verifier._tree import copy_workspace as _copy_workspace
from ek.agents.verifier._tree import remove_tree as _remove_tree
from ek.agents.verifier._verdict import decide_lines as _decide_lines
from ek.agents.verifier._verdict import sign as _sign
from ek.agents.verifier._workspace import digest as _digest
from ek.agents.verifier._workspace import discover as _discover
from ek.registry import resolve

CP, CF = "test_c.py::test_p", "test_c.py::test_f"  # canary ids used with the pure judge
EXP = ("test_s.py::test_a", "test_s.py::test_b")
KEY = b"k" * 32  # the run's HMAC key for the pure judge

Rec = dict[str, Any]


def _rec(event: str, **kw: Any) -> Rec:
    return {"event": event, **kw}


def _test(
    nodeid: str, outcome: str = "passed", *, phases: tuple[str, ...] = ("setup", "call", "teardown")
) -> list[Rec]:
    out = []
    for when in phases:
        o = outcome if when == "call" else "passed"
        out.append(_rec("test", nodeid=nodeid, when=when, outcome=o))
    return out


def _session(*tests: list[Rec], finish: int = 1, extra: tuple[Rec, ...] = ()) -> list[Rec]:
    body = [r for t in tests for r in t]
    return [
        _rec("start", pytest="9"),
        *body,
        *extra,
        _rec("finish", exitstatus=finish),
        _rec("exit", rc=finish),
    ]


def _honest(*more: list[Rec]) -> list[Rec]:
    return _session(_test(CP), _test(CF, "failed"), *more)


def _signed(lines: list[Rec | bytes]) -> list[bytes]:
    """Sign records in order (sequence number = position); raw bytes pass as written."""
    return [_sign(KEY, r, i) if isinstance(r, dict) else r for i, r in enumerate(lines)]


def judge(
    lines: list[Rec | bytes], exit_code: int | None = 1, expected: tuple[str, ...] = EXP
) -> tuple[str, str, tuple[str, ...]]:
    status, reason, failed, _ = _decide_lines(
        _signed(lines), exit_code=exit_code, expected=expected, canary_pass=CP, canary_fail=CF,
        key=KEY,
    )  # fmt: skip
    return status, reason, failed


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return folder


# --------------------------------------------------------------------------- the verdict
def test_verdict_is_bool_like_and_serialises() -> None:
    v = HiddenTestVerdict(
        False, "failed", "1 failed", failed_tests=["a::b"], detail={"x": Path("/p")}
    )
    assert not v and v.failed_tests == ("a::b",)
    d = v.to_dict()
    assert json.loads(json.dumps(d)) == d and d["detail"] == {"x": "/p"}
    assert bool(HiddenTestVerdict(True, "passed", "ok")) is True
    with pytest.raises(Exception):  # frozen
        v.passed = True  # type: ignore[misc]


@pytest.mark.parametrize(
    ("passed", "status", "reason"),
    [
        (True, "failed", "x"),
        (False, "passed", "x"),
        (False, "bogus", "x"),
        (False, "failed", ""),
        (1, "passed", "x"),
    ],
)
def test_verdict_rejects_inconsistent_fields(passed: Any, status: str, reason: str) -> None:
    with pytest.raises((TypeError, ValueError)):
        HiddenTestVerdict(passed, status, reason)


def test_status_vocabulary() -> None:
    assert VERDICT_STATUSES == (
        "passed",
        "failed",
        "timeout",
        "tampering",
        "collection_error",
        "error",
    )


# --------------------------------------------------------------------------- construction
def test_registered_as_a_factory() -> None:
    assert resolve("checker_factories", "hidden_tests") is hidden_tests
    assert isinstance(hidden_tests(HIDDEN_TESTS), HiddenTestChecker)


def test_discovery_hand_listed() -> None:
    files = {
        "test_a.py": b"def test_x(): pass\nasync def test_y(): pass\ndef helper(): pass\n"
        b"class TestK:\n    def test_m(self): pass\n    def other(self): pass\nclass Nope:\n    def test_n(self): pass\n",
        "sub/check_test.py": b"def testz(): pass\n",
        "helpers.py": b"def test_not_collected(): pass\n",
    }
    # test_* functions (sync and async) and Test* class methods of test_*.py / *_test.py files;
    # helper modules and non-Test classes are not collected by pytest's default rules.
    assert _discover(files) == (
        "sub/check_test.py::testz",
        "test_a.py::test_x",
        "test_a.py::test_y",
        "test_a.py::TestK::test_m",
    )


def test_reads_file_dir_and_mapping(tmp_path: Path) -> None:
    d = _write(tmp_path / "h", {**HIDDEN_TESTS, "data/input.txt": "x", "__pycache__/junk.pyc": "y"})
    by_dir, by_file, by_map = (
        hidden_tests(d),
        hidden_tests(d / "test_solution.py"),
        hidden_tests(HIDDEN_TESTS),
    )
    assert (
        by_dir.expected
        == by_file.expected
        == by_map.expected
        == (
            "test_solution.py::test_add_small",
            "test_solution.py::test_add_negative",
            "test_solution.py::test_add_mixed",
        )
    )
    assert (
        by_file.digest == by_map.digest != by_dir.digest
    )  # the directory also holds data/input.txt
    assert "input.txt" not in repr(by_dir) and "HiddenTestChecker" in repr(by_dir)


@pytest.mark.parametrize(
    ("tests", "kw", "match"),
    [
        (42, {}, "path"),
        ("/nonexistent/ek/tests", {}, "existing"),
        ({"conftest.py": "", **HIDDEN_TESTS}, {}, "conftest"),
        ({"helpers.py": "def f(): pass\n"}, {}, "no hidden tests"),
        ({"test_bad.py": "def test_x(:\n"}, {}, "does not parse"),
        ({"../escape.py": "x"}, {}, "relative"),
        ({}, {}, "at least one"),
        (HIDDEN_TESTS, {"timeout": 0}, "timeout"),
        (HIDDEN_TESTS, {"timeout": float("inf")}, "finite"),
        (HIDDEN_TESTS, {"timeout": True}, "timeout"),
        (HIDDEN_TESTS, {"env": {"PYTHONPATH": "/x"}}, "PYTHONPATH"),
        (HIDDEN_TESTS, {"env": {"pytest_addopts": "-p x"}}, "pytest_addopts"),
        (HIDDEN_TESTS, {"plugins": ["x y"]}, "plugin"),
        (HIDDEN_TESTS, {"expected": "test_a.py::test_b"}, "iterable"),
        (HIDDEN_TESTS, {"expected": ["test_b"]}, "node ids"),
        (HIDDEN_TESTS, {"max_output": 0}, "max_output"),
        (HIDDEN_TESTS, {"workspace": 3}, "workspace"),
        (HIDDEN_TESTS, {"limits": {"memory": 0}}, "memory"),
        (HIDDEN_TESTS, {"limits": {"disk": 1}}, "limits keys"),
        (HIDDEN_TESTS, {"limits": [1]}, "mapping"),
        (HIDDEN_TESTS, {"workspace_from_episode": "yes"}, "bool"),
    ],
)
def test_construction_errors_name_what_was_expected(
    tests: Any, kw: dict[str, Any], match: str
) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        hidden_tests(tests, **kw)


# --------------------------------------------------------------------------- workspace resolution
def test_workspace_from_episode_shapes(tmp_path: Path) -> None:
    p = str(tmp_path)
    assert _workspace_of(p) == p and _workspace_of(tmp_path) == tmp_path
    assert _workspace_of(Episode("t", final_state=p)) == p
    assert _workspace_of(Episode("t", final_state={"workspace": p, "db": 1})) == p
    assert _workspace_of(Episode("t", metadata={"workspace": p})) == p
    assert _workspace_of(Episode("t", final_state={"db": 1})) is None


def test_the_workspace_is_named_by_the_caller_not_the_episode(tmp_path: Path) -> None:
    # Issue 18: an agent can point final_state["workspace"] at another, correct workspace; the
    # checker refuses to read it from the episode unless the caller opts in explicitly.
    check = hidden_tests(HIDDEN_TESTS)
    elsewhere = Episode("t", final_state={"workspace": str(tmp_path)})
    with pytest.raises(ValueError, match="pass workspace="):
        check(elsewhere, None)
    with pytest.raises(ValueError, match="pass workspace="):
        TaskSuccessMetric(check=check)(elsewhere, None)  # the real path a harness calls


def test_checks_before_running_need_no_subprocess(tmp_path: Path) -> None:
    hidden = _write(tmp_path / "hidden", HIDDEN_TESTS)
    check = hidden_tests(hidden, workspace_from_episode=True)
    v = check(Episode("t", final_state={"db": 1}), None)
    assert (v.status, v.passed) == ("error", False) and "no workspace" in v.reason
    assert check.last_verdict is v
    assert check.verify(tmp_path / "missing").status == "error"
    # the agent names the hidden tests (or a folder holding them) as its workspace
    assert check.verify(hidden).status == "tampering"
    assert check.verify(tmp_path).status == "tampering"
    # the hidden tests are edited after the checker was built
    (hidden / "test_solution.py").write_text("def test_add_small():\n    pass\n")
    ws = _write(tmp_path / "ws2" / "ws", {"solution.py": RIGHT})
    v = check.verify(ws)
    assert v.status == "tampering" and "changed since the checker was built" in v.reason


# --------------------------------------------------------------------------- the judge (pure)
def test_judge_honest_outcomes() -> None:
    assert judge(_honest(_test(EXP[0]), _test(EXP[1])))[0] == "passed"
    # one of two expected fails: failed, naming it
    s, r, f = judge(_honest(_test(EXP[0]), _test(EXP[1], "failed")))
    assert (s, f) == ("failed", (EXP[1],)) and "1 failed" in r
    # one expected test never ran: failed, "not run"
    s, r, f = judge(_honest(_test(EXP[0])))
    assert (s, f) == ("failed", (EXP[1],)) and "1 not run" in r
    # parametrised ids count for their base name
    assert (
        judge(_honest(_test(EXP[0] + "[1-2]"), _test(EXP[0] + "[3]"), _test(EXP[1])))[0] == "passed"
    )
    # skipped and xfailed are not passes
    skip = [_rec("test", nodeid=EXP[1], when="setup", outcome="skipped")]
    assert judge(_honest(_test(EXP[0]), skip))[2] == (EXP[1],)
    xfail = [_rec("test", nodeid=EXP[1], when="call", outcome="skipped", xfail=True)]
    assert judge(_honest(_test(EXP[0]), xfail))[0] == "failed"
    # a collection error of a hidden module
    ce = _session(
        _test(CP),
        _test(CF, "failed"),
        extra=(_rec("collect_error", nodeid="test_s.py", longrepr="E   ImportError: no solution"),),
    )
    s, r, f = judge(ce)
    assert s == "collection_error" and "ImportError" in r and f == EXP


@pytest.mark.parametrize(
    ("lines", "exit_code", "status", "match"),
    [
        # the must-fail canary passed: outcomes are being rewritten
        (_session(_test(CP), _test(CF), _test(EXP[0]), _test(EXP[1])), 0, "tampering", "must fail"),
        # canaries deselected
        (_session(_test(EXP[0]), _test(EXP[1]), finish=0), 0, "tampering", "did not run"),
        # the must-pass canary failed
        (
            _session(_test(CP, "failed"), _test(CF, "failed"), _test(EXP[0]), _test(EXP[1])),
            1,
            "tampering",
            "must pass",
        ),
        # a second session (re-executed process) or forged records
        (
            [_rec("start"), *_honest(_test(EXP[0]), _test(EXP[1]))],
            0,
            "tampering",
            "more than one session",
        ),
        ([*_honest(_test(EXP[0])), *_test(EXP[1])], 0, "tampering", "out of order"),
        (
            _honest(_test(EXP[0]), _test(EXP[0], "failed"), _test(EXP[1])),
            1,
            "tampering",
            "duplicate",
        ),
        ([*_honest(_test(EXP[0]), _test(EXP[1]))[:-1], b"{not json"], 0, "tampering", "signature"),
        (
            [_sign(KEY, {"event": "start"}, 0).replace(b"start", b"stArt")],
            0,
            "tampering",
            "signature",
        ),
        # a record signed with another key (forged by something that does not hold this run's)
        ([_sign(b"x" * 32, {"event": "start"}, 0)], 0, "tampering", "signature"),
        # a genuine record replayed: its sequence number no longer fits
        (
            [*_honest(_test(EXP[0]), _test(EXP[1]))[:3], _sign(KEY, _rec("start"), 0)],
            0,
            "tampering",
            "out of sequence",
        ),
        ([_sign(KEY, {"x": 1}, 0)], 0, "tampering", "malformed"),
        # the runner saw the workspace process misbehave
        (
            [_rec("start"), _rec("tamper", reason="malformed message"), *_honest()[1:]],
            1,
            "tampering",
            "misbehaved",
        ),
        (
            [_rec("boot_error", error="hidden test file changed", tampered=True)],
            3,
            "tampering",
            "changed",
        ),
        # the process left early
        ([_rec("start"), *_test(CP)], 0, "tampering", "status 0 before the test session finished"),
        ([], 0, "tampering", "before the test session started"),
        ([_rec("start"), *_test(CP)], -9, "error", "died"),
        ([], 1, "error", "died"),
        (
            [_rec("boot_error", error="ModuleNotFoundError: pytest")],
            3,
            "error",
            "cannot run pytest",
        ),
        (_session(finish=3), 3, "error", "internal error"),
    ],
)
def test_judge_rejects(lines: list[Any], exit_code: int, status: str, match: str) -> None:
    s, r, _ = judge(lines, exit_code)
    assert s == status and match in r


def test_judge_overflow_and_no_tests() -> None:
    s, _, _, _ = _decide_lines(
        [], exit_code=0, expected=EXP, canary_pass=CP, canary_fail=CF, overflow=True, key=KEY
    )
    assert s == "error"
    assert judge(_honest(), expected=())[0:2] == ("failed", "no hidden test ran")


_OUTCOME = st.sampled_from(["passed", "failed", "skipped", "absent"])


@given(a=_OUTCOME, b=_OUTCOME, cp=_OUTCOME, cf=_OUTCOME, exit_code=st.sampled_from([0, 1, 2, 5]))
@settings(max_examples=300, deadline=None)
def test_property_passed_iff_all_pass_and_canaries_behave(
    a: str, b: str, cp: str, cf: str, exit_code: int
) -> None:
    tests = [
        _test(n, o) for n, o in ((EXP[0], a), (EXP[1], b), (CP, cp), (CF, cf)) if o != "absent"
    ]
    s, _, failed = judge(_session(*tests, finish=exit_code), exit_code)
    aborted = exit_code == 2  # pytest's "interrupted"
    assert (s == "passed") == (a == b == cp == "passed" and cf == "failed" and not aborted)
    if cf not in ("failed", "absent") or cp not in ("passed", "absent"):
        assert s == "tampering"  # a canary ran and misbehaved: whatever the exit code says
    elif cf == "absent" or cp == "absent":
        assert s == ("error" if aborted else "tampering")
    elif s == "failed" and not aborted:
        assert set(failed) == {n for n, o in ((EXP[0], a), (EXP[1], b)) if o != "passed"}


# --------------------------------------------------------------------------- helpers
@given(chunks=st.lists(st.binary(max_size=300), max_size=30), limit=st.integers(2, 500))
@settings(max_examples=200, deadline=None)
def test_property_bounded_output(chunks: list[bytes], limit: int) -> None:
    b = _Bounded(limit)
    for c in chunks:
        b.add(c)
    data = b"".join(chunks)
    kept = bytes(b.head) + bytes(b.tail)
    assert len(kept) <= limit and len(kept) + b.dropped == len(data)
    assert data.startswith(bytes(b.head)) and data.endswith(bytes(b.tail))


@given(
    a=st.dictionaries(st.text("ab/", min_size=1, max_size=4), st.binary(max_size=4), max_size=4),
    b=st.dictionaries(st.text("ab/", min_size=1, max_size=4), st.binary(max_size=4), max_size=4),
)
def test_property_digest_separates_contents(a: dict[str, bytes], b: dict[str, bytes]) -> None:
    assert (_digest(a) == _digest(b)) == (a == b)


def test_copy_workspace_skips_links_out_special_files_and_bytecode(tmp_path: Path) -> None:
    src = _write(
        tmp_path / "ws",
        {
            "solution.py": RIGHT,
            "pkg/mod.py": "X = 1\n",
            "__pycache__/solution.cpython-311.pyc": "x",
            "old.pyc": "x",
        },
    )
    outside = _write(tmp_path / "outside", {"secret.py": "S = 1\n"})
    os.symlink(src / "pkg" / "mod.py", src / "alias.py")  # inside the workspace: copied as a file
    os.symlink(outside / "secret.py", src / "secret.py")  # leaves the workspace: skipped
    os.symlink(outside, src / "linkdir")  # directory link: skipped
    os.mkfifo(src / "pipe")  # would block a naive copy: skipped
    dst = tmp_path / "copy"
    dst.mkdir()
    skipped = _copy_workspace(src, dst, 100, 10_000)
    got = sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*") if p.is_file())
    assert got == ["alias.py", "pkg/mod.py", "solution.py"]
    assert not any(p.is_symlink() for p in dst.rglob("*"))
    assert len(skipped) == 5 and any(s.startswith("secret.py (symlink") for s in skipped)
    (tmp_path / "copy2").mkdir()
    with pytest.raises(_WorkspaceError, match="max_files=1"):
        _copy_workspace(src, tmp_path / "copy2", 1, 10_000)


def test_directories_count_toward_the_copy_limit(tmp_path: Path) -> None:
    # Issue 18: 50,000 empty directories took 29 s to copy because max_files counted files only.
    src = tmp_path / "ws"
    for i in range(30):
        (src / f"d{i}").mkdir(parents=True)
    (tmp_path / "copy").mkdir()
    with pytest.raises(_WorkspaceError, match="files and directories"):
        _copy_workspace(src, tmp_path / "copy", 20, 10_000)  # 30 directories > 20


def test_remove_tree_handles_any_depth(tmp_path: Path) -> None:
    # Issue 18: a workspace of 1,200 nested directories raised RecursionError in cleanup. Built
    # with relative mkdir/chdir so that no path is longer than one component; 5,000 levels go
    # past both the recursion limit and PATH_MAX (4096 bytes at 2 bytes a level).
    root = tmp_path / "deep"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(5_000):
            os.mkdir("d", dir_fd=fd)
            nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        with open(os.open("f.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as f:
            f.write("x = 1\n")
    finally:
        os.close(fd)
    (root / "d").chmod(0o500)  # a read-only directory on the way is no obstacle either
    _remove_tree(root)
    assert not root.exists()


# --------------------------------------------------------------------------- honest runs (subprocesses)
@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write(tmp_path_factory.mktemp("hidden"), HIDDEN_TESTS)


@pytest.mark.slow
def test_correct_solution_passes_and_metric_agrees(hidden: Path, tmp_path: Path) -> None:
    ws = _write(tmp_path / "ws", {"solution.py": RIGHT})
    check = hidden_tests(hidden, workspace_from_episode=True)  # the explicit opt-in
    metric = TaskSuccessMetric(check=check)
    score = metric(Episode("t1", final_state={"workspace": str(ws)}), None)
    assert score.value == 1.0 and score.detail["passed"] is True
    v = check.last_verdict
    assert v is not None and (v.status, v.failed_tests) == ("passed", ())
    assert v.reason == "all 3 hidden test(s) passed"
    assert v.detail["canaries"] == {"must_pass": "passed", "must_fail": "failed"}
    assert v.duration > 0
    sandbox = v.detail["sandbox"]  # what the workspace process applied to itself, reported
    assert sandbox["limits"]["memory"] == 4 << 30 and sandbox["limits"]["file_size"] == 100_000_000


@pytest.mark.slow
def test_wrong_solution_fails_with_the_failed_test_names(hidden: Path, tmp_path: Path) -> None:
    # add(a, b) = |a| + |b|: right for small (2+3=5); negative gives |-2|+|-3| = 5 != -5, mixed
    # gives |-7|+|10| = 17 != 3
    ws = _write(tmp_path / "ws", {"solution.py": "def add(a, b):\n    return abs(a) + abs(b)\n"})
    v = run_hidden_tests(hidden, ws)
    assert (v.passed, v.status) == (False, "failed")
    assert v.failed_tests == (
        "test_solution.py::test_add_mixed",
        "test_solution.py::test_add_negative",
    )
    assert "2 hidden test(s) did not pass (2 failed)" in v.reason
    assert "assert 5 == -5" in v.detail["longrepr"]["test_solution.py::test_add_negative"]


@pytest.mark.slow
def test_missing_module_is_a_collection_error(hidden: Path, tmp_path: Path) -> None:
    v = hidden_tests(hidden).verify(_write(tmp_path / "ws", {"other.py": "x = 1\n"}))
    assert v.status == "collection_error" and "ModuleNotFoundError" in v.reason
    assert len(v.failed_tests) == 3


def _pid_in(output: str, tag: str) -> int:
    """The pid that a workspace wrote as ``<tag>=<pid>`` to its (bounded) output."""
    for line in output.splitlines():
        if line.startswith(f"{tag}="):
            return int(line.split("=", 1)[1])
    raise AssertionError(f"no {tag}= line in the output: {output[-500:]!r}")


@pytest.mark.slow
def test_timeout_kills_the_process_group(hidden: Path, tmp_path: Path) -> None:
    spin = (
        "import os, subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "os.write(2, f'EK_PID={p.pid}\\n'.encode())\n"
        "def add(a, b):\n    while True:\n        pass\n"
    )
    # 10 s: the timeout must outlast the start of both test processes (they compile every
    # module from source, no bytecode is read) on a loaded machine, so that the grandchild runs
    v = hidden_tests(hidden, timeout=10).verify(_write(tmp_path / "ws", {"solution.py": spin}))
    assert (v.passed, v.status) == (False, "timeout") and "10 s" in v.reason
    pid = _pid_in(v.output, "EK_PID")
    # the grandchild was in the killed process group; reap-or-gone within a short grace period
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        threading.Event().wait(0.1)
    else:
        pytest.fail(f"grandchild {pid} survived the timeout")


@pytest.mark.slow
def test_threads_keep_their_own_last_verdict(hidden: Path, tmp_path: Path) -> None:
    check = hidden_tests(hidden, workspace=lambda ep: ep.metadata["workspace"])
    wss = {
        "right": _write(tmp_path / "r", {"solution.py": RIGHT}),
        "wrong": _write(tmp_path / "w", {"solution.py": WRONG}),
    }
    seen: dict[str, tuple[bool, bool]] = {}

    def work(name: str) -> None:
        v = check(Episode("t", metadata={"workspace": str(wss[name])}), None)
        seen[name] = (bool(v), check.last_verdict is v)

    threads = [threading.Thread(target=work, args=(n,)) for n in wss]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"right": (True, True), "wrong": (False, True)}


@pytest.mark.slow
def test_parametrised_tests_classes_and_workspace_callable(tmp_path: Path) -> None:
    tests = {
        "test_p.py": "import pytest\nfrom solution import add\n\n"
        "@pytest.mark.parametrize('a,b,c', [(1, 2, 3), (0, 0, 0)])\n"
        "def test_param(a, b, c):\n    assert add(a, b) == c\n\n"
        "class TestAdd:\n    def test_comm(self):\n        assert add(1, 2) == add(2, 1)\n",
    }
    ws = _write(tmp_path / "ws", {"solution.py": RIGHT, "pytest.ini": "[pytest]\naddopts = -x\n"})
    check = hidden_tests(tests, workspace=lambda ep: ws)
    assert check.expected == ("test_p.py::test_param", "test_p.py::TestAdd::test_comm")
    v = check(Episode("t"), None)
    assert v.status == "passed" and sorted(v.detail["outcomes"]) == [
        "test_p.py::TestAdd::test_comm",
        "test_p.py::test_param[0-0-0]",
        "test_p.py::test_param[1-2-3]",
    ]


@pytest.mark.slow
def test_output_is_bounded(hidden: Path, tmp_path: Path) -> None:
    noisy = "def add(a, b):\n    print('x' * 200_000)\n    return 0\n"
    v = hidden_tests(hidden, max_output=2_000).verify(
        _write(tmp_path / "ws", {"solution.py": noisy})
    )
    assert v.status == "failed" and len(v.output) < 2_200 and "bytes of output dropped" in v.output


@pytest.mark.slow
def test_interpreter_problems_are_errors(hidden: Path, tmp_path: Path) -> None:
    ws = _write(tmp_path / "ws", {"solution.py": RIGHT})
    v = hidden_tests(hidden, python=str(tmp_path / "no-python")).verify(ws)
    assert v.status == "error" and "cannot start" in v.reason
    bare = "/usr/bin/python3"
    if (
        not os.path.exists(bare)
        or subprocess.run([bare, "-I", "-c", "import pytest"], capture_output=True).returncode == 0
    ):
        pytest.skip("no interpreter without pytest available")
    v = hidden_tests(hidden, python=bare).verify(ws)
    assert v.status == "error" and "cannot run pytest" in v.reason


def test_sys_executable_default() -> None:
    assert hidden_tests(HIDDEN_TESTS).python == sys.executable


_STACK = """
class StackEmpty(ValueError):
    pass


class Stack:
    LIMIT = 3

    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)
        return self

    def pop(self):
        if not self.items:
            raise StackEmpty("empty stack")
        return self.items.pop()

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(list(self.items))

    def __eq__(self, other):
        return isinstance(other, Stack) and other.items == self.items


def apply(f, xs):
    return [f(x) for x in xs]


def greet(name):
    print("hello", name)
    return {"name": name, "tags": ("a", "b"), "raw": b"x", "n": {1, 2}}


def read(p):
    return open(p).read()
"""

_STACK_TESTS = """
import pytest
from solution import Stack, StackEmpty, apply, greet, read


def test_objects_methods_and_operators():
    s = Stack()
    s.push(1).push(2)
    assert len(s) == 2 and list(s) == [1, 2] and s.pop() == 2
    assert isinstance(s, Stack) and Stack.LIMIT == 3 and s.items == [1]
    t = Stack()
    t.push(1)
    assert s == t


def test_workspace_exceptions():
    with pytest.raises(StackEmpty, match="empty"):
        Stack().pop()
    with pytest.raises(ValueError):  # its built-in base
        Stack().pop()


def test_callbacks_and_plain_values(capsys):
    assert apply(lambda x: x * 2, [1, 2]) == [2, 4]
    assert greet("bob") == {"name": "bob", "tags": ("a", "b"), "raw": b"x", "n": {1, 2}}
    assert "hello bob" in capsys.readouterr().out


def test_paths(tmp_path):
    (tmp_path / "f.txt").write_text("data")
    assert read(tmp_path / "f.txt") == "data"
"""


@pytest.mark.slow
def test_workspace_code_behind_the_bridge_keeps_test_semantics(tmp_path: Path) -> None:
    # The hidden tests run in the trusted process and the workspace's code in another; what a
    # test does with it still works: classes and isinstance, methods, operators, iteration,
    # workspace exceptions under pytest.raises, lambdas passed in, plain values back, print
    # seen by capsys, and tmp_path files readable by the workspace.
    ws = _write(tmp_path / "ws", {"solution.py": _STACK})
    v = hidden_tests({"test_stack.py": _STACK_TESTS}).verify(ws)
    assert v.status == "passed", v.reason + v.output[-2000:]


_VALUES = """
import collections, enum

Point = collections.namedtuple("Point", "x y")


class Meters(float):
    pass


class Color(enum.IntEnum):
    RED = 1


class Box:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, Box) and other.v == self.v

    def __lt__(self, other):
        return self.v < other.v

    def __hash__(self):
        return hash(self.v)


class Truthy:
    def __bool__(self):
        return True


class Fuzzy:
    def __eq__(self, other):
        return Truthy()

    __hash__ = object.__hash__


def point():
    return Point(1, 2)


def meters():
    return Meters(2.5)


def color():
    return Color.RED


def bag():
    return collections.Counter("aab")


def boxes():
    return [Box(3), Box(1), Box(2)]


def box(v):
    return Box(v)


def fuzzy():
    return Fuzzy()
"""

_VALUES_TESTS = """
from solution import Color, bag, box, boxes, color, fuzzy, meters, point


def test_named_tuple_compares_as_its_tuple():
    assert point() == (1, 2) and point() != (2, 1) and point().x == 1


def test_float_subclass_compares_as_its_float():
    assert meters() == 2.5 and meters() < 3 and 2 < meters()


def test_int_enum_compares_as_its_int():
    assert color() == 1 and color() == Color.RED


def test_dict_subclass_compares_as_its_dict():
    assert "a" in bag() and bag() == {"a": 2, "b": 1}


def test_workspace_objects_compare_in_the_workspace():
    assert sorted(boxes()) == [box(1), box(2), box(3)]


def test_no_plain_value_no_comparison():
    assert box(1) == 1


def test_a_comparison_answers_a_bool():
    assert fuzzy() == fuzzy()
"""


@pytest.mark.slow
def test_comparisons_with_the_tests_values_are_made_in_the_trusted_process(tmp_path: Path) -> None:
    # Issue 30: a workspace object compared with a test's value is compared as the plain value
    # of the built-in type it derives from (a named tuple as a tuple, a float subclass as a
    # float, an IntEnum as an int, a Counter as a dict), never by its own __eq__; one that
    # derives from none cannot be compared with the test's values. Two workspace objects are
    # compared by the workspace, and the answer must be a bool.
    ws = _write(tmp_path / "ws", {"solution.py": _VALUES})
    v = hidden_tests({"test_values.py": _VALUES_TESTS}).verify(ws)
    bad = ("test_values.py::test_a_comparison_answers_a_bool",
           "test_values.py::test_no_plain_value_no_comparison")  # fmt: skip
    assert v.status == "failed" and v.failed_tests == bad, v.reason + v.output[-2000:]
    assert sum(o == "passed" for o in v.detail["outcomes"].values()) == 5  # the other five
    why = v.detail["longrepr"]
    assert "not a bool" in why[bad[0]] and "derives from no built-in data type" in why[bad[1]]
