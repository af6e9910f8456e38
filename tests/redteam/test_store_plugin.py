"""Red team (issue 30, items 11 and 13): the pytest plugin beside another writer, and misuse.

* ``--ek-store`` wrote a temporary file and renamed it over the path without the store's lock:
  a ``run_suite`` writing the same store reported 30 trials done and the file then held the
  plugin's 2 records. Here a real ``run_suite`` in another process holds the store while a real
  pytest session ends: the session must leave the store alone (one line, exit 4) and the run's
  trials must all be there afterwards. A store that ``run_suite`` wrote and closed is not the
  plugin's to replace either; the plugin's own earlier store is.
* An unwritable ``--ek-store`` was a traceback at the session's end; junk written into the
  ``ek_episode`` fixture was an INTERNALERROR. Each is now one clear line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ek.agents.harness import StoreLockedError, TrialStore, load_run, read_store

pytest_plugins = ["pytester"]

PLUGIN = ("-p", "ek.agents.pytest_plugin")

TWO_TRIALS = """
import pytest

@pytest.mark.ek(trials=2)
def test_agent(ek_episode):
    assert True
"""

# A run_suite in another process: 30 trials, the agent holding its first trial until the test
# creates the release file (no sleep decides anything: the order is forced).
RUN_SUITE = """
import os, sys, time
from ek.agents.base import Episode, TaskSpec
from ek.agents.harness import run_suite

store, started, release = sys.argv[1:4]

def agent(task):
    if not os.path.exists(started):
        open(started, "w").close()  # the store is open and locked by now
    deadline = time.monotonic() + 600  # very wide: only a broken test waits this long
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.01)
    return Episode(task.task_id, output="ok")

tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(10)]
res = run_suite(agent, tasks, k=3, store=store, concurrency=1)
print(res.n_trials)
"""


@pytest.fixture
def pt(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    return pytester


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 600  # very wide headroom; normally a second
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate()
            pytest.fail(f"the run_suite process did not start its trials: {out} {err}")
        time.sleep(0.01)


def _no_traceback(res: pytest.RunResult) -> None:
    text = "\n".join(res.outlines + res.errlines)
    assert "Traceback" not in text and "INTERNALERROR" not in text, text


@pytest.mark.slow
def test_the_session_leaves_a_store_another_process_is_writing(pt: pytest.Pytester) -> None:
    store, started, release = pt.path / "run.jsonl", pt.path / "started", pt.path / "release"
    script = pt.path / "writer.py"
    script.write_text(RUN_SUITE)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(store), str(started), str(release)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(started, proc)
        pt.makepyfile(test_two=TWO_TRIALS)
        res = pt.runpytest(*PLUGIN, "--ek-store", str(store))
        res.assert_outcomes(passed=1)
        assert res.ret == pytest.ExitCode.USAGE_ERROR
        res.stdout.fnmatch_lines(
            [f"ek: trials NOT written to {store}: *open for writing by another run*"]
        )
        _no_traceback(res)
    finally:
        release.touch()
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert out.split() == ["30"]
    run = load_run(store)
    assert run.n_trials == 30 and len(run.counts) == 10  # every trial of the run is there
    assert read_store(store).header.get("source") is None  # run_suite's header, not the plugin's


def test_a_store_run_suite_wrote_is_not_replaced(pt: pytest.Pytester) -> None:
    store = pt.path / "run.jsonl"
    header = {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 1, "check": "output"}
    with TrialStore.open(store, header) as st:
        st.append({"task_id": "t", "trial": 0, "success": True, "episode": {"task_id": "t"}})
    before = store.read_bytes()
    pt.makepyfile(test_two=TWO_TRIALS)
    res = pt.runpytest(*PLUGIN, "--ek-store", str(store))
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stdout.fnmatch_lines(
        [f"ek: trials NOT written to {store}: *replacing it would lose its trials*"]
    )
    _no_traceback(res)
    assert store.read_bytes() == before


def test_the_plugins_own_store_is_replaced_by_the_next_session(pt: pytest.Pytester) -> None:
    store = pt.path / "run.jsonl"
    pt.makepyfile(test_two=TWO_TRIALS)
    for _ in range(2):
        res = pt.runpytest(*PLUGIN, "--ek-store", str(store))
        assert res.ret == 0
        res.stdout.fnmatch_lines([f"ek: trials written to {store} *"])
    assert load_run(store).n_trials == 2  # the second session's two trials, not four


def test_a_store_replaced_while_being_opened_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interleaving the lock alone does not cover: a writer opens the old file, another
    renames a new store over the path and releases its lock, then the first locks the old
    (now unlinked) file. Its trials would go nowhere: it must be refused."""
    import ek.agents._run.store as store_module

    path = tmp_path / "run.jsonl"
    header = {"run": {}, "suite": {"fingerprint": "f"}, "k": 1}
    with TrialStore.open(path, header):
        pass
    real = store_module.open_regular_file

    def open_then_replaced(owner: str, p: str, *, write: bool = False) -> object:
        fh = real(owner, p, write=write)
        new = tmp_path / "new.jsonl"
        new.write_text(path.read_text())
        os.replace(new, path)  # another writer's rename, between this open and its lock
        return fh

    monkeypatch.setattr(store_module, "open_regular_file", open_then_replaced)
    with pytest.raises(StoreLockedError, match="was replaced by another writer"):
        TrialStore.open(path, header)


# ----------------------------------------------------------------------------- misuse, one line


def test_an_unwritable_store_path_is_a_usage_error_before_any_test(pt: pytest.Pytester) -> None:
    pt.makepyfile(test_two=TWO_TRIALS)
    (pt.path / "a_file").write_text("x")
    cases = [
        ("a_file/run.jsonl", "--ek-store a_file/run.jsonl: cannot write a store there*"),
        (".", "--ek-store: expected a regular file, got a directory: ."),
    ]
    for path, message in cases:
        res = pt.runpytest(*PLUGIN, "--ek-store", path)
        assert res.ret == pytest.ExitCode.USAGE_ERROR, path
        res.stderr.fnmatch_lines([f"ERROR: {message}"])
        _no_traceback(res)


def test_a_store_folder_that_vanishes_during_the_session_is_one_line(pt: pytest.Pytester) -> None:
    pt.makepyfile(
        test_vanish="""
        import os, pytest

        @pytest.mark.ek(trials=2)
        def test_agent(ek_episode):
            if os.path.isdir("out"):
                os.rmdir("out")
                open("out", "w").close()  # the folder is now a file: the store cannot be written
        """
    )
    (pt.path / "out").mkdir()
    res = pt.runpytest(*PLUGIN, "--ek-store", "out/run.jsonl")
    res.assert_outcomes(passed=1)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stdout.fnmatch_lines(["ek: trials NOT written to out/run.jsonl: *"])
    _no_traceback(res)


JUNK = """
import pytest
from ek.agents.base import Episode

@pytest.mark.ek(trials=2)
def test_payload_junk(ek_episode):
    ek_episode.record(Episode("x"))
    ek_episode._payload = {"episode": object(), "scores": 5}

@pytest.mark.ek(trials=2)
def test_payload_replaced(ek_episode):
    ek_episode.payload = lambda: {"episode": {"task_id": 1}, "scores": {"m": {"value": "x"}}}

@pytest.mark.ek(trials=2)
def test_attributes(ek_episode):
    ek_episode.trial = "first"
    ek_episode.trials = None

@pytest.mark.ek(trials=2)
def test_clean(ek_episode):
    ek_episode.record(Episode("y"))
"""


@pytest.mark.parametrize("xdist", [False, True])
def test_junk_written_into_ek_episode_fails_that_test_in_one_line(
    pt: pytest.Pytester, xdist: bool
) -> None:
    if xdist:
        pytest.importorskip("xdist")
    pt.makepyfile(test_junk=JUNK)
    args = [*PLUGIN, "--ek-store", "run.jsonl"]
    if xdist:
        args += ["-p", "xdist.plugin", "-n", "2"]
    res = pt.runpytest(*args)
    _no_traceback(res)
    # the tampered tests fail, with the reason; the clean one passes; the store is written
    res.assert_outcomes(passed=2, failed=2)
    res.stdout.fnmatch_lines(["*ek_episode*not what record() wrote*"])
    assert load_run(pt.path / "run.jsonl").n_trials == 8
    names = {
        json.loads(line)["task_id"] for line in (pt.path / "run.jsonl").read_text().splitlines()[1:]
    }
    assert names == {
        f"test_junk.py::test_{n}"
        for n in ("payload_junk", "payload_replaced", "attributes", "clean")
    }
