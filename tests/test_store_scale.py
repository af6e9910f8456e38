"""Issue 22: the store's header scales with the suite.

A suite of 50,000 tasks used to be written and then refused on read: its header line (the whole
task list) exceeded the reader's 1 MiB line limit. The task list now follows the header on lines
of its own (``TASKS_PER_LINE`` tasks a line) and no reader limits a line's length, so a store
written before (its whole task list on the header line) still reads.

The round trip here uses 6,000 tasks (six task lines: what the layout does is the same at any
size); the 10^5- and 10^6-task stores are measured in ``bench/scale.py``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from ek.agents import cli
from ek.agents._run.store import TASKS_PER_LINE, header_bytes
from ek.agents.base import RunProvenance, TaskSpec
from ek.agents.harness import StoreError, TrialStore, iter_store, load_run, read_store, run_suite

N_TASKS = 6_000  # six task lines of TASKS_PER_LINE (1,000)
RUN = RunProvenance(agent="echo", model="none", seed=1)


def _agent(task: TaskSpec) -> Any:
    return task.input  # right on even tasks (gold = input), wrong on odd ones


def _tasks(n: int) -> list[TaskSpec]:
    return [
        TaskSpec(f"task-{i:06d}", input=i, gold=i if i % 2 == 0 else -1, slice=f"s{i % 3}")
        for i in range(n)
    ]


@pytest.mark.slow
def test_a_many_task_suite_round_trips(tmp_path: Path, capsys: Any) -> None:
    """run_suite writes it (k=1), then resume, load_run and report all read it back."""
    store = tmp_path / "big.jsonl"
    tasks = _tasks(N_TASKS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = run_suite(_agent, tasks, k=1, run=RUN, store=str(store), concurrency=64)
    assert first.n_trials == N_TASKS
    with open(store, "rb") as fh:
        lines = fh.read().split(b"\n")
    assert max(len(line) for line in lines) < 1 << 16  # no line grows with the suite
    head = json.loads(lines[0])
    assert head["task_lines"] == N_TASKS // TASKS_PER_LINE and "tasks" not in head
    # resume: every trial is already there, none runs again
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = run_suite(_agent, tasks, k=1, run=RUN, store=str(store), concurrency=64)
    assert again.resumed == N_TASKS and sum(again.verdicts) == sum(first.verdicts) == N_TASKS // 2
    # load_run, streamed and whole
    lean = load_run(store, episodes=False)
    assert lean.n_tasks == N_TASKS and lean.n_successes == N_TASKS // 2
    assert list(lean.counts)[:2] == ["task-000000", "task-000001"]  # the suite's order
    # slice s0 holds the tasks with i % 3 == 0: 6,000 / 3 = 2,000
    assert sorted(lean.slices) == ["s0", "s1", "s2"] and len(lean.slices["s0"]) == 2_000
    # the report (every task has k=1: pass^1 only)
    assert cli.main(["report", str(store), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["n_tasks"] == N_TASKS and rep["reliability"]["success_rate"]["point"] == 0.5


def test_the_task_list_leaves_the_header_line_of_a_large_suite(tmp_path: Path) -> None:
    store = tmp_path / "s.jsonl"
    n = 2 * TASKS_PER_LINE + 1  # three task lines: 1000, 1000 and 1 tasks
    h = {
        "run": RUN.to_dict(),
        "suite": {"fingerprint": "f", "n_tasks": n},
        "k": 2,
        "tasks": {f"t{i}": [f"s{i % 2}"] for i in range(n)},
    }
    with TrialStore.open(store, h) as st:
        st.append({"task_id": "t0", "trial": 0, "success": True, "episode": {"task_id": "t0"}})
    raw = store.read_bytes().split(b"\n")
    assert len(raw) == 1 + 3 + 1 + 1  # header, 3 task lines, 1 trial, the final newline
    assert json.loads(raw[0])["task_lines"] == 3
    assert len(json.loads(raw[3])["ek_tasks"]) == 1
    snap = read_store(store)
    assert snap.header["tasks"] == h["tasks"] and list(snap.header["tasks"])[-1] == f"t{n - 1}"
    assert "task_lines" not in snap.header and len(snap.records) == 1
    # resume: the header reads back whole, so the same experiment is accepted
    with TrialStore.open(store, h) as st:
        assert st.finished == {("t0", 0)} and st.header["tasks"] == h["tasks"]
    s = load_run(store, episodes=False)
    assert (
        len(s.counts) == n
        and s.counts["t0"] == (1, 1)
        and len(s.slices["s0"]) == TASKS_PER_LINE + 1
    )


def test_a_small_suite_is_written_as_before(tmp_path: Path) -> None:
    h = {"run": RUN.to_dict(), "suite": {"fingerprint": "f"}, "k": 1, "tasks": {"a": []}}
    assert header_bytes({"ek_store": 1, **h}).count(b"\n") == 1
    store = tmp_path / "s.jsonl"
    TrialStore.open(store, h).close()
    assert json.loads(store.read_bytes())["tasks"] == {"a": []}


def test_an_old_store_with_a_header_line_over_1_mib_reads(tmp_path: Path, capsys: Any) -> None:
    """Written before the task lines existed: the whole task list on the header line."""
    n = 60_000  # ~1.9 MB of header line: over the old reader's 1 MiB limit
    store = tmp_path / "old.jsonl"
    header = {
        "ek_store": 1,
        "run": RUN.to_dict(),
        "suite": {"fingerprint": "f", "n_tasks": n},
        "k": 1,
        "tasks": {f"a-rather-long-task-identifier-{i:06d}": ["s"] for i in range(n)},
    }
    first = json.dumps(header, separators=(",", ":"))
    assert len(first) > 1 << 20
    recs = [
        {"task_id": f"a-rather-long-task-identifier-{i:06d}", "trial": 0, "success": i < 3}
        for i in range(5)
    ]
    for r in recs:
        r["episode"] = {"task_id": r["task_id"]}
    store.write_text(first + "\n" + "".join(json.dumps(r) + "\n" for r in recs))
    s = load_run(store)
    assert s.n_tasks == 5 and s.n_successes == 3 and len(s.counts) == n
    with TrialStore.open(store, {k: v for k, v in header.items() if k != "ek_store"}) as st:
        assert len(st.finished) == 5  # resume takes it
    assert cli.main(["report", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_trials"] == 5


def test_a_torn_task_line_is_an_unfinished_header(tmp_path: Path) -> None:
    """A crash while the header was written: reading refuses it, opening starts afresh."""
    h = {
        "run": RUN.to_dict(),
        "suite": {"fingerprint": "f"},
        "k": 1,
        "tasks": {f"t{i}": [] for i in range(TASKS_PER_LINE + 5)},
    }
    data = header_bytes({"ek_store": 1, **h})
    store = tmp_path / "torn.jsonl"
    store.write_bytes(data[: len(data) - 20])  # the last task line cut short
    with pytest.raises(StoreError, match="incomplete"):
        read_store(store)
    with TrialStore.open(store, h) as st:
        assert st.repaired and not st.finished
    assert store.read_bytes() == data


def test_a_task_line_that_is_not_one_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "bad.jsonl"
    head = {"ek_store": 1, "run": {}, "suite": {"fingerprint": "f"}, "k": 1, "task_lines": 1}
    store.write_text(
        json.dumps(head) + "\n" + json.dumps({"task_id": "a", "trial": 0, "success": True}) + "\n"
    )
    with pytest.raises(StoreError, match="expected a task line"):
        read_store(store)


def test_iter_store_streams_and_refuses_a_conflicting_duplicate(tmp_path: Path) -> None:
    store = tmp_path / "dup.jsonl"
    head = {"ek_store": 1, "run": {}, "suite": {"fingerprint": "f"}, "k": 2}
    rows = [
        {"task_id": "a", "trial": 0, "success": True},
        {"task_id": "a", "trial": 0, "success": True},  # the same verdict twice: kept once
        {"task_id": "a", "trial": 1, "success": False},
        {"task_id": "a", "trial": 1, "success": True},  # another verdict: refused
    ]
    store.write_text("".join(json.dumps(x) + "\n" for x in [head, *rows]))
    with iter_store(store) as s:
        it = iter(s)
        assert next(it)["trial"] == 0 and next(it)["trial"] == 1
        with pytest.raises(StoreError, match="twice with different verdicts"):
            next(it)
