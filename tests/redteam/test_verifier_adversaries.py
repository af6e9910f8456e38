"""Red team (issue 30, items 2 to 6): the hidden-test verifier against its second outside round.

Each test runs attack code of ``redteam/adversaries.py`` (or ``redteam/racer.py``, a real
racing process) against the real checker; item 1's comparison attacks are rows of the
red-team table (``tests/test_verifier_redteam.py``).

* (2) A process the agent left behind swaps workspace entries for symlinks while the checker
  copies: the copy must never contain the hidden tests, and no file outside may change mode.
* (3) Where the tests live: a single test file's ``__pycache__`` sibling (pytest's bytecode
  of it), the command lines of the checker's processes, and the harness's command line that
  names a benchmark file holding the tests.
* (4) Threads count toward ``processes``; the trusted process accepts bounded messages, a
  bounded total, and a bounded amount of printed text.
* (5) Without Landlock, one check's workspace plants bytecode for a concurrent check's
  trusted process.
* (6) An empty workspace path is refused, not read as the harness's own directory.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Episode
from ek.agents.verifier import HiddenTestVerdict, hidden_tests
from ek.agents.verifier._tree import copy_workspace, identity, remove_tree
from ek.agents.verifier._workspace import check_parent
from redteam.adversaries import (
    BENCHMARK_SCRAPER,
    BYTECODE_PLANTER,
    CMDLINE_SPY,
    FLOOD,
    PYCACHE_REPLAY,
    RACER,
    THREADS,
)
from redteam.attacks import HIDDEN_TESTS, RIGHT, WRONG
from redteam.run import landlock_off, write_hidden

pytestmark = pytest.mark.slow


def _write(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def _needs_landlock(v: HiddenTestVerdict) -> None:
    if not (v.detail.get("sandbox") or {}).get("landlock"):
        pytest.skip("no Landlock on this kernel: the workspace process can read every file")


# --------------------------------------------------------------------------- (2) the copy
def _files_under(root: Path) -> list[str]:
    out = []
    for dirpath, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(dirpath, n), root) for n in names]
    return out


def test_a_racing_process_cannot_swap_links_into_the_copy(tmp_path: Path) -> None:
    # The racer exchanges, again and again, a real directory with a symlink to the hidden
    # tests, and a set-user-ID file with a symlink to a 0600 file outside. A copy that lists a
    # name and later opens it by path copies the hidden tests (a directory swapped in) or
    # chmods the outside file to 04777 (a file swapped in before its chmod).
    hidden = write_hidden(tmp_path / "hidden")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the agent's")
    outside.chmod(0o600)
    ws = _write(tmp_path / "ws", {"solution.py": WRONG, "f.txt": "x", "sub/x.py": "X = 1\n"})
    (ws / "f.txt").chmod(0o4777)
    os.symlink(hidden, ws / "sub_link")
    os.symlink(outside, ws / "f_link")
    racer = subprocess.Popen(
        [sys.executable, str(RACER), str(ws), "sub", "sub_link", "f.txt", "f_link"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    leaked, copies, end = [], 0, time.monotonic() + 4.0
    try:
        while copies < 2_000 and time.monotonic() < end:  # bounded; the verdict is "never"
            dst = tmp_path / "copy"
            dst.mkdir()
            copy_workspace(ws, dst, 1_000, 10**6, avoid={identity(os.stat(hidden))})
            leaked += [f for f in _files_under(dst) if f.endswith("test_solution.py")]
            assert stat.S_IMODE(outside.stat().st_mode) == 0o600, "a chmod followed a link"
            remove_tree(dst)
            copies += 1
    finally:
        racer.send_signal(signal.SIGTERM)
        swaps = int(racer.communicate(timeout=60)[0])
    assert swaps > 0 and copies > 0  # the race ran
    assert leaked == [], f"the hidden tests reached the copy: {leaked[:3]}"


# --------------------------------------------------------------------------- (3) the leaks
def test_a_single_test_files_bytecode_is_hidden(tmp_path: Path) -> None:
    # The author ran pytest on the test file: its rewritten bytecode lies in __pycache__
    # beside it. The workspace replays that bytecode with a recording `add` and learns the
    # answers (a wrong solution then passes); the folder is now hidden like the file.
    hidden = write_hidden(tmp_path / "hidden")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(hidden)],
        cwd=tmp_path, env={**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True, timeout=300,
    )  # fmt: skip
    assert list((hidden / "__pycache__").glob("test_solution*.pyc")), "pytest wrote no bytecode"
    replay = PYCACHE_REPLAY.replace("@@HIDDEN@@", str(hidden))
    ws = _write(tmp_path / "ws", {"solution.py": replay})
    v = hidden_tests(hidden / "test_solution.py").verify(ws)
    _needs_landlock(v)
    assert v.status == "failed" and len(v.failed_tests) == 3, v.reason


def test_no_command_line_names_the_hidden_tests(tmp_path: Path) -> None:
    # The workspace process reads its own command line and every other process's it can: the
    # path of the hidden tests (the workspace process's hide list) was on its own.
    hidden = tmp_path / "hidden_tests_xyz"
    test = f"from solution import seen\n\n\ndef test_nothing_named():\n    assert {str(hidden)!r} not in seen()\n"
    _write(hidden, {"test_seen.py": test})
    ws = _write(tmp_path / "ws", {"solution.py": CMDLINE_SPY})
    v = hidden_tests(hidden).verify(ws)
    assert v.status == "passed", v.reason + v.output[-1500:]


_HARNESS = """
import json, sys
from ek.agents.verifier import hidden_tests
with open(sys.argv[1], encoding="utf-8") as f:
    tests = json.load(f)["hidden_tests"]
print(json.dumps(hidden_tests(tests).verify(sys.argv[2]).to_dict()))
"""


def test_a_benchmark_file_on_the_harness_command_line_stays_unread(tmp_path: Path) -> None:
    # The harness is started with its benchmark file as an argument and passes the hidden
    # tests to the checker as a mapping: nothing marks that file as hidden. The workspace
    # found it through /proc/<harness>/cmdline; now no other process's /proc entry is readable.
    bench = tmp_path / "benchmark.json"
    bench.write_text(json.dumps({"hidden_tests": HIDDEN_TESTS}), encoding="utf-8")
    ws = _write(tmp_path / "ws", {"solution.py": BENCHMARK_SCRAPER})
    out = subprocess.run(
        [sys.executable, "-c", _HARNESS, str(bench), str(ws)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    v: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if not v["detail"].get("sandbox", {}).get("landlock"):
        pytest.skip("no Landlock on this kernel: every process's /proc entry is readable")
    assert v["status"] == "failed" and len(v["failed_tests"]) == 3, v["reason"]


# --------------------------------------------------------------------------- (4) the limits
def test_threads_count_toward_the_process_limit(tmp_path: Path) -> None:
    # 64 threads against processes=8: as a normal user RLIMIT_NPROC refuses them; as root
    # (no RLIMIT_NPROC) the checker counts every descendant's threads and stops the run.
    tests = {"test_t.py": "from solution import threads\n\n\ndef test_threads():\n"
             "    assert threads(64) == 'refused'\n"}  # fmt: skip
    ws = _write(tmp_path / "ws", {"solution.py": THREADS})
    v = hidden_tests(tests, limits={"processes": 8}, timeout=120).verify(ws)  # 120: hang guard
    if os.getuid() == 0:
        assert v.status == "error" and "too many processes" in v.reason, v.reason
    else:
        assert v.status == "passed", v.reason


def test_one_message_is_bounded(tmp_path: Path) -> None:
    tests = {"test_big.py": "from solution import big\n\n\ndef test_big():\n"
             "    assert len(big()) == 6 << 20\n"}  # fmt: skip
    v = hidden_tests(tests).verify(_write(tmp_path / "ws", {"solution.py": FLOOD}))
    # a 6 MiB string is a message of more than 4 MiB (4194304 bytes)
    assert v.status == "error" and "more than 4194304 bytes" in v.reason, v.reason


def test_a_runs_messages_are_bounded_in_total(tmp_path: Path) -> None:
    tests = {"test_blobs.py": "from solution import blob\n\n\ndef test_blobs():\n"
             "    assert all(len(blob()) == 1 << 20 for _ in range(80))\n"}  # fmt: skip
    v = hidden_tests(tests).verify(_write(tmp_path / "ws", {"solution.py": FLOOD}))
    # 80 answers of 1 MiB pass the default transfer limit of 64 MiB (67108864 bytes)
    assert v.status == "error" and "more than 67108864 bytes" in v.reason, v.reason


def test_printed_text_is_bounded(tmp_path: Path) -> None:
    # 3 MiB of printed text sent by the workspace reach the test session as 1 MiB and a note,
    # not a 3 MiB capture (unbounded: a temporary file of any size in the trusted process).
    tests = {"test_chatty.py": "from solution import chatty\n\n\ndef test_chatty(capsys):\n"
             "    assert chatty() == 3\n    out = capsys.readouterr().out\n"
             "    assert len(out) < (1 << 20) + 1000 and 'the rest is dropped' in out\n"}  # fmt: skip
    v = hidden_tests(tests).verify(_write(tmp_path / "ws", {"solution.py": FLOOD}))
    assert v.status == "passed", v.reason


# --------------------------------------------------------------------------- (5) bytecode
def test_no_bytecode_is_shared_between_checks(tmp_path: Path) -> None:
    # Without Landlock: check 1's workspace keeps planting a valid .pyc of _pytest.reports
    # (which reports test_solution.py as passed) wherever a test process might read bytecode;
    # check 2, of a wrong solution, runs meanwhile. It used to read the shared cache, and pass.
    stop = tmp_path / "stop"
    planter = BYTECODE_PLANTER.replace("@@PARENT@@", str(check_parent()))
    ws1 = _write(tmp_path / "ws1", {"solution.py": planter.replace("@@STOP@@", str(stop))})
    ws2 = _write(tmp_path / "ws2", {"solution.py": WRONG})
    first: list[HiddenTestVerdict] = []
    with landlock_off():
        t = threading.Thread(target=lambda: first.append(hidden_tests(HIDDEN_TESTS).verify(ws1)))
        t.start()
        try:
            for _ in range(1200):  # up to 120 s (a hang guard): until check 1 is planting
                if Path(f"{stop}.planting").exists() or not t.is_alive():
                    break
                time.sleep(0.1)
            second = hidden_tests(HIDDEN_TESTS).verify(ws2)
        finally:
            stop.touch()
            t.join(300)
            remove_tree(check_parent() / "pycache")
    assert second.status != "passed" and first[0].status != "passed", second.reason


# --------------------------------------------------------------------------- (6) empty paths
def test_an_empty_workspace_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Path("") is ".": the harness's own working directory, here a correct solution.
    monkeypatch.chdir(_write(tmp_path / "harness", {"solution.py": RIGHT}))
    check = hidden_tests(HIDDEN_TESTS)
    v = check.verify("")
    assert v.status == "error" and "non-empty path" in v.reason, v.reason
    for empty in ("", Path(""), "."):  # Path("") is Path(".")
        by_callable = hidden_tests(HIDDEN_TESTS, workspace=lambda episode, e=empty: e)
        v = by_callable(Episode("t"), None)
        assert v.status == "error" and "non-empty path" in v.reason, v.reason
    with pytest.raises(ValueError, match="non-empty path"):
        hidden_tests(HIDDEN_TESTS, workspace="")
    with pytest.raises(ValueError, match="empty path"):
        hidden_tests("")
