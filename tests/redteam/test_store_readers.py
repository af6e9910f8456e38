"""Red team (issue 30, items 7 and 10): what a hostile store file does to its readers.

* A record whose JSON names a key twice (``"task_id"`` twice) was refused by one reader and
  counted by the other: the sharded reader (what ``ek-agents report`` picks by itself for a
  large store) routes a line by the ``task_id`` in its first bytes and parsed the other one,
  so a duplicate of a finished trial landed in a shard that had not seen it (81 trials for
  80). Both readers now apply one rule: a JSON object with a duplicate key is a corrupt line,
  refused with the file and line.
* A FIFO (or a directory, or a device) where a store should be: ``run_suite(store=fifo)``
  blocked forever in ``open`` waiting for a reader, and ``iter_store(fifo)`` waited for a
  writer. A store must be a regular file (or absent, for a writer), checked before any work.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
import zlib
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Episode, TaskSpec
from ek.agents.harness import (
    RunLoadError,
    StoreError,
    TrialStore,
    iter_store,
    load_run,
    read_store,
    run_suite,
)


def _agent(task: TaskSpec) -> Episode:
    n = int(task.task_id[1:])
    return Episode(task.task_id, output="ok" if n % 3 else "no")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(40)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_suite(_agent, tasks, k=2, store=path)  # 40 tasks x 2 = 80 trials
    return path


def _shard(task_id: str, n: int) -> int:
    return zlib.crc32(task_id.encode()) % n


def _records(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith('{"task_id"')]


def _duplicate_key_line(path: Path, shards: int) -> str:
    """A copy of a finished trial's record whose line begins with another task's id (in
    another shard) and names ``task_id`` a second time, the finished trial's."""
    line = _records(path)[0]
    real = json.loads(line)["task_id"]
    decoy = next(f"t{i}" for i in range(40) if _shard(f"t{i}", shards) != _shard(real, shards))
    return '{"task_id":"' + decoy + '",' + line[1:]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_duplicate_key_is_refused_by_every_reader(store: Path, workers: int) -> None:
    assert load_run(store, episodes=False, workers=workers).n_trials == 80
    with store.open("a") as fh:
        fh.write(_duplicate_key_line(store, 2) + "\n")
    line = 1 + 80 + 1  # the header, the 80 records, then the hostile line
    with pytest.raises(RunLoadError, match=rf"run\.jsonl:{line}: .*duplicate key 'task_id'"):
        load_run(store, episodes=False, workers=workers)  # was 81 trials with two readers
    with pytest.raises(RunLoadError, match="duplicate key 'task_id'"):
        load_run(store)  # the episodes path: the same rule
    with pytest.raises(StoreError, match=f":{line}: .*duplicate key"):
        read_store(store)
    for shard in (0, 1):  # whichever shard parses the line refuses it
        try:
            with iter_store(store, shard=(shard, 2)) as s:
                list(s)
        except StoreError as e:
            assert "duplicate key 'task_id'" in str(e)
            break
    else:
        pytest.fail("no shard refused the line")


def test_a_duplicate_key_nested_in_a_record_is_refused(store: Path) -> None:
    line = _records(store)[0]
    hostile = line.replace('"episode":{', '"episode":{"output":"ok","output":"no",', 1)
    with store.open("a") as fh:
        fh.write(hostile + "\n")
    with pytest.raises(RunLoadError, match="duplicate key 'output'"):
        load_run(store, episodes=False, workers=2)


def test_a_duplicate_key_in_the_header_is_refused(store: Path) -> None:
    text = store.read_text()
    store.write_text(text.replace('{"ek_store":1,', '{"ek_store":1,"k":9,', 1))
    with pytest.raises(StoreError, match=r"run\.jsonl:1: .*duplicate key 'k'"):
        read_store(store)
    with pytest.raises(StoreError, match="duplicate key 'k'"):  # a writer refuses it too
        TrialStore.open(store, {"run": {}, "suite": {"fingerprint": "f"}, "k": 2})


# ----------------------------------------------------------------------------- not a file


def _in_thread(fn: Any) -> BaseException | None:
    """Run ``fn`` in a thread; the exception it raised. A call that blocks (a FIFO's open)
    fails the test after a very wide wait instead of hanging the suite."""
    out: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()
            out.append(None)
        except BaseException as e:
            out.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(300)  # a refusal takes milliseconds; only a blocked open waits this long
    if t.is_alive():
        pytest.fail("the call blocked (it opened the FIFO)")
    return out[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_store_is_refused_before_any_work(tmp_path: Path) -> None:
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    ran: list[str] = []

    def agent(task: TaskSpec) -> Episode:
        ran.append(task.task_id)
        return Episode(task.task_id, output="ok")

    err = _in_thread(lambda: run_suite(agent, [TaskSpec("a", gold="ok")], store=fifo))
    assert isinstance(err, ValueError) and "FIFO" in str(err), err
    assert ran == []  # refused before the first trial
    header = {"run": {}, "suite": {"fingerprint": "f"}, "k": 1}
    err = _in_thread(lambda: TrialStore.open(fifo, header))
    assert isinstance(err, ValueError) and "FIFO" in str(err), err
    err = _in_thread(lambda: iter_store(fifo))
    assert isinstance(err, ValueError) and "FIFO" in str(err), err


def test_a_directory_or_a_device_is_no_store(tmp_path: Path) -> None:
    header = {"run": {}, "suite": {"fingerprint": "f"}, "k": 1}
    for where in (tmp_path, Path(os.devnull)):
        with pytest.raises(ValueError, match="expected a regular file"):
            TrialStore.open(where, header)
        with pytest.raises(ValueError, match="expected a regular file"):
            read_store(where)


@pytest.mark.parametrize("k", ["3", 2.0, True, 0, 10**9, None])
def test_a_header_k_no_run_could_have_is_refused(tmp_path: Path, k: Any) -> None:
    """``k`` is what run_suite accepts (an int in [1, MAX_TRIALS]): a string, a float or 10**9
    read as a number by one reader and not another, or sized every reader's memory."""
    p = tmp_path / "run.jsonl"
    header = {"ek_store": 1, "run": {}, "suite": {"fingerprint": "f"}, "k": k}
    rec = {"task_id": "a", "trial": 0, "success": True, "episode": {"task_id": "a"}}
    p.write_text(json.dumps(header) + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(StoreError, match=r"run\.jsonl:1: the store header's k must be"):
        read_store(p)
    with pytest.raises(RunLoadError, match="the store header's k must be"):
        load_run(p, episodes=False, workers=2)
    with pytest.raises(ValueError, match="the store header's k must be"):
        TrialStore.open(tmp_path / "new.jsonl", {"run": {}, "suite": {"fingerprint": "f"}, "k": k})
