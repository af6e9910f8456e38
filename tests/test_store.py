"""The trial store: append/flush, group-commit fsync, resume, refusal, torn-line repair, SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import RunProvenance, TaskSpec
from ek.agents.harness import (
    StoreError,
    StoreMismatchError,
    TrialContext,
    TrialStore,
    read_store,
    run_suite,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

ROOT = Path(__file__).resolve().parents[1]
HEADER = {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 1000}


def _rec(t: str, i: int, ok: bool = True) -> dict[str, Any]:
    return {"task_id": t, "trial": i, "success": ok, "episode": {"task_id": t, "trial": i}}


def test_create_append_reopen(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with TrialStore.open(p, HEADER) as s:
        s.append(_rec("a", 0))
        s.append(_rec("a", 1, False))
    lines = p.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["ek_store"] == 1
    with TrialStore.open(p, HEADER) as s:
        assert s.finished == {("a", 0), ("a", 1)}
        assert [r["success"] for r in s] == [True, False]
        assert not s.repaired


def test_lines_are_flushed_before_close(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    s = TrialStore.open(p, HEADER, fsync_every=1000, fsync_interval=1000)
    s.append(_rec("a", 0))
    # another reader sees the line at once (flushed to the OS, not sitting in a buffer)
    assert len(read_store(p).records) == 1
    s.close()


def test_group_commit_counts_fsyncs(tmp_path: Path) -> None:
    s = TrialStore.open(
        tmp_path / "s.jsonl", HEADER, fsync_every=3, fsync_interval=1e9, background_fsync=False
    )
    for i in range(7):
        s.append(_rec("t", i))
    assert s.n_fsyncs == 2  # after the 3rd and the 6th append
    s.close()
    assert s.n_fsyncs == 3  # the 7th on close
    s.close()  # idempotent


def test_background_group_commit(tmp_path: Path) -> None:
    s = TrialStore.open(tmp_path / "s.jsonl", HEADER, fsync_every=3, fsync_interval=1e9)
    for i in range(7):
        s.append(_rec("t", i))
    s.close()  # waits for the background fsync and syncs the rest
    assert s.n_fsyncs >= 2 and s._pending == 0
    assert len(read_store(tmp_path / "s.jsonl").records) == 7


def test_failed_background_fsync_is_raised(tmp_path: Path) -> None:
    s = TrialStore.open(tmp_path / "s.jsonl", HEADER, fsync_every=1, fsync_interval=1e9)

    def broken(fd: int) -> None:
        raise OSError(5, "EIO")

    s._fsync = broken  # type: ignore[method-assign]
    s.append(_rec("t", 0))
    with pytest.raises(OSError, match="EIO"):
        s.close()


@pytest.mark.parametrize("field", ["run", "suite", "k"])
def test_other_experiment_is_refused(tmp_path: Path, field: str) -> None:
    p = tmp_path / "s.jsonl"
    TrialStore.open(p, HEADER).close()
    other = dict(HEADER)
    other[field] = {"x": 1} if field != "k" else 3
    with pytest.raises(StoreMismatchError, match=field):
        TrialStore.open(p, other)


def test_torn_last_line_is_repaired(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with TrialStore.open(p, HEADER) as s:
        s.append(_rec("a", 0))
        s.append(_rec("b", 0))
    with open(p, "ab") as fh:
        fh.write(b'{"task_id":"c","tri')  # crash in the middle of a write
    assert read_store(p).torn_tail and len(read_store(p).records) == 2  # read-only: no repair
    with TrialStore.open(p, HEADER) as s:
        assert s.repaired and s.finished == {("a", 0), ("b", 0)}
        s.append(_rec("c", 0))
    snap = read_store(p)
    assert not snap.torn_tail and [r["task_id"] for r in snap.records] == ["a", "b", "c"]


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with TrialStore.open(p, HEADER) as s:
        s.append(_rec("a", 0))
    p.write_bytes(p.read_bytes() + json.dumps(_rec("b", 0)).encode())
    with TrialStore.open(p, HEADER) as s:
        assert s.finished == {("a", 0), ("b", 0)}
        s.append(_rec("c", 0))
    assert len(read_store(p).records) == 3


def test_corrupt_middle_line_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with TrialStore.open(p, HEADER) as s:
        s.append(_rec("a", 0))
    p.write_text(p.read_text() + "garbage\n" + json.dumps(_rec("b", 0)) + "\n")
    with pytest.raises(StoreError, match=":3: corrupt"):
        TrialStore.open(p, HEADER)


def test_not_a_store(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"task_id": "a"}\n')
    with pytest.raises(StoreError, match="no header"):
        read_store(p)


def test_bad_policy_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="fsync_every"):
        TrialStore.open(tmp_path / "s", HEADER, fsync_every=0)
    with pytest.raises(ValueError, match="fsync_interval"):
        TrialStore.open(tmp_path / "s", HEADER, fsync_interval=0)
    with pytest.raises(ValueError, match="header"):
        TrialStore.open(tmp_path / "s", {"run": {}})


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 6), cut=st.floats(0.0, 1.0))
def test_any_truncation_keeps_every_complete_line(
    tmp_path_factory: Any, n: int, cut: float
) -> None:
    p = tmp_path_factory.mktemp("trunc") / "s.jsonl"
    with TrialStore.open(p, HEADER) as s:
        for i in range(n):
            s.append(_rec("t", i))
    data = p.read_bytes()
    header_end = data.index(b"\n") + 1
    pos = header_end + int(cut * (len(data) - header_end))
    p.write_bytes(data[:pos])
    body = data[header_end:pos]
    # expected: every record whose JSON text is fully inside the prefix
    expected = 0
    for line in data[header_end:].split(b"\n")[:-1]:
        if len(body) >= len(line):
            expected += 1
            body = body[len(line) + 1 :]
        else:
            break
    with TrialStore.open(p, HEADER) as s:
        assert len(list(s)) == expected
        s.append(_rec("u", 0))
    snap = read_store(p)
    assert len(snap.records) == expected + 1 and not snap.torn_tail


# ----------------------------------------------------------------------------- resume


def _tasks(n: int) -> list[TaskSpec]:
    return [TaskSpec(f"t{i}", input=i, gold=i) for i in range(n)]


def flaky(task: TaskSpec, ctx: TrialContext) -> int:
    return task.input if ctx.rng.random() < 0.7 else -1


def test_resume_skips_finished_trials(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    run = RunProvenance(agent="a", seed=3)
    first = run_suite(flaky, _tasks(5), k=2, run=run, store=p)
    calls: list[tuple[str, int]] = []

    def agent(task: TaskSpec, ctx: TrialContext) -> int:
        calls.append((task.task_id, ctx.trial))
        return flaky(task, ctx)

    again = run_suite(agent, _tasks(5), k=2, run=run, store=p)
    assert calls == [] and again.resumed == 10
    assert again.verdicts == first.verdicts
    assert len(read_store(p).records) == 10


def test_resume_with_other_provenance_or_suite_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    run_suite(flaky, _tasks(2), run=RunProvenance(agent="a", seed=1), store=p)
    with pytest.raises(StoreMismatchError, match="run"):
        run_suite(flaky, _tasks(2), run=RunProvenance(agent="b", seed=1), store=p)
    with pytest.raises(StoreMismatchError, match="suite"):
        run_suite(flaky, _tasks(3), run=RunProvenance(agent="a", seed=1), store=p)


_CHILD = textwrap.dedent(
    """
    import sys, time, warnings
    warnings.simplefilter("ignore")
    from ek.agents.base import RunProvenance, TaskSpec
    from ek.agents.harness import run_suite

    def agent(task, ctx):
        if task.task_id == "t29" and ctx.trial == 2:
            time.sleep(600)  # never finishes: the parent kills the run before the end
        time.sleep(0.002)
        return task.input if ctx.rng.random() < 0.7 else -1

    tasks = [TaskSpec(f"t{i}", input=i, gold=i) for i in range(30)]
    run_suite(agent, tasks, k=3, run=RunProvenance(agent="kill", seed=4), store=sys.argv[1],
              concurrency=4, fsync_every=16)
    """
)


@pytest.mark.slow
def test_sigkill_mid_suite_then_resume(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(p)], env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 600  # a hang guard only, very wide
        while time.monotonic() < deadline:
            if p.exists() and p.read_bytes().count(b"\n") >= 41:
                break
            if child.poll() is not None:
                pytest.fail(f"the child exited early with {child.returncode}")
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait(300)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    with open(p, "ab") as fh:  # and, for good measure, a write torn by the crash
        fh.write(b'{"task_id":"t5","trial":2,"succ')
    before = {(r["task_id"], r["trial"]): r["success"] for r in read_store(p).records}
    assert 40 <= len(before) < 90

    calls: list[tuple[str, int]] = []

    def agent(task: TaskSpec, ctx: TrialContext) -> int:
        calls.append((task.task_id, ctx.trial))
        return flaky(task, ctx)

    run = RunProvenance(agent="kill", seed=4)
    res = run_suite(agent, _tasks(30), k=3, run=run, store=p, concurrency=4)
    keys = [(r["task_id"], r["trial"]) for r in read_store(p).records]
    everything = {(f"t{i}", j) for i in range(30) for j in range(3)}
    assert len(keys) == 90 and set(keys) == everything  # none lost, none duplicated
    assert set(calls).isdisjoint(before) and set(calls) | set(before) == everything
    assert len(calls) == len(set(calls)) == 90 - len(before)
    assert res.resumed == len(before)
    for ep in res.episodes:  # finished trials kept their verdicts
        if (ep.task_id, ep.trial) in before:
            assert ep.success == before[(ep.task_id, ep.trial)]
    # seeds are deterministic, so the interrupted run equals an uninterrupted one
    fresh = run_suite(flaky, _tasks(30), k=3, run=run)
    assert fresh.verdicts == res.verdicts
