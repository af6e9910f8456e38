"""``load_run`` of a store with its trials (the default, ``episodes=True``): the episodes, the
verdicts and every trial's Scores are read back from the store by offset when used, never held,
and equal what the store's records hold, in the store's task order and trial order.

The reference is the file itself: :func:`ek.agents.harness.read_store`'s records (the first
record of each trial, an infrastructure error left out), decoded one by one.
"""

from __future__ import annotations

import gc
import io
import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from ek.agents._run.stored import ReadEpisode, StoreChangedError, StoredTrials, read_scores
from ek.agents.base import Episode
from ek.agents.demo import run_demo
from ek.agents.harness import RunLoadError, load_run, read_store


@pytest.fixture(scope="module")
def demo(tmp_path_factory: Any) -> Path:
    folder = tmp_path_factory.mktemp("ek-demo-load-trials")
    run_demo(folder, k=3, inspect=None, plots=False, stream=io.StringIO(), progress=False)
    return Path(folder)


def _reference(path: Path) -> list[dict[str, Any]]:
    """The store's trial records in the store's task order (the header's tasks, then the others
    as first seen), each task's in trial order."""
    snap = read_store(path)
    rank = {t: i for i, t in enumerate(snap.header.get("tasks") or {})}
    recs = [r for r in snap.records if not r.get("infra_error")]
    for r in recs:
        rank.setdefault(r["task_id"], len(rank))
    return sorted(recs, key=lambda r: (rank[r["task_id"]], r["trial"]))


@pytest.mark.parametrize("name", ["candidate.trials.jsonl", "baseline.trials.jsonl"])
def test_the_trials_are_the_stores_own_read_back_by_offset(demo: Path, name: str) -> None:
    path = demo / name
    s = load_run(path)
    ref = _reference(path)
    run = read_store(path).header["run"]
    assert isinstance(s.episodes, StoredTrials) and s.verdicts is not None
    assert list(s.episodes) == [ReadEpisode(run)(r) for r in ref]
    assert list(s.verdicts) == [bool(r["success"]) for r in ref]
    # a task's trials stand together, the tasks in the order of the counts
    tasks = [ep.task_id for ep in s.episodes]
    assert list(dict.fromkeys(tasks)) == [t for t, (n, _) in s.counts.items() if n]
    # every trial's Score of every metric, per task in trial order
    for metric, m in s.metrics.items():
        expected: dict[str, list[Any]] = {}
        for r in ref:
            if metric in (r.get("scores") or {}):
                expected.setdefault(r["task_id"], []).append(read_scores(r)[metric])
        assert {t: list(ss) for t, ss in m.scores.items()} == expected
        assert all(isinstance(ss, StoredTrials) for ss in m.scores.values())
        assert m.n_scores == sum(map(len, expected.values()))
    # the figures are the report's (the same tally, whether the trials are kept or not)
    lean = load_run(path, episodes=False)
    assert s.counts == lean.counts and s.cost == lean.cost and s.infra == lean.infra
    assert {n: m.value for n, m in s.metrics.items()} == {
        n: m.value for n, m in lean.metrics.items()
    }


def test_no_episode_is_held_after_the_read(demo: Path) -> None:
    gc.collect()
    before = sum(isinstance(o, Episode) for o in gc.get_objects())
    s = load_run(demo / "candidate.trials.jsonl")
    gc.collect()
    after = sum(isinstance(o, Episode) for o in gc.get_objects())
    assert len(s.episodes or ()) == 90 and after == before  # 30 tasks x k=3, none in memory


def test_tasks_the_header_does_not_list_keep_their_trials_together(
    demo: Path, tmp_path: Path
) -> None:
    with open(demo / "candidate.trials.jsonl", encoding="utf-8") as fh:
        lines = fh.readlines()
    header = json.loads(lines[0])
    header["tasks"] = {}  # no task listed: they are ordered as first seen
    body = lines[1:]
    # the trials of two tasks interleaved in the file, later trials first
    body = sorted(body, key=lambda line: -json.loads(line)["trial"])
    path = tmp_path / "unlisted.trials.jsonl"
    path.write_text(json.dumps(header) + "\n" + "".join(body), encoding="utf-8")
    s = load_run(path)
    eps = list(s.episodes or ())
    tasks = [ep.task_id for ep in eps]
    order = list(s.counts)  # the tasks as first seen in the file
    assert tasks == sorted(tasks, key=order.index)  # each task's trials together, in that order
    for t in s.counts:
        trials = [ep.trial for ep in eps if ep.task_id == t]
        assert trials == sorted(trials) and len(trials) == s.counts[t][0]


def test_a_corrupt_trial_is_refused_when_the_run_is_read(demo: Path, tmp_path: Path) -> None:
    with open(demo / "candidate.trials.jsonl", encoding="utf-8") as fh:
        lines = fh.readlines()
    rec = json.loads(lines[5])
    rec["episode"]["trajectory"] = "not a trajectory"
    lines[5] = json.dumps(rec) + "\n"
    path = tmp_path / "corrupt.trials.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RunLoadError, match="corrupt trial store"):
        load_run(path)


def test_the_file_must_stay_the_one_read(demo: Path, tmp_path: Path) -> None:
    path = tmp_path / "run.trials.jsonl"
    path.write_bytes((demo / "candidate.trials.jsonl").read_bytes())
    s = load_run(path)
    first = s.episodes[0] if s.episodes is not None else None
    # a run still being written appends: what was read is where it was
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n")
    assert s.episodes is not None and s.episodes[0] == first
    # another file put in its place is refused, with what changed
    other = tmp_path / "other.trials.jsonl"
    other.write_bytes(path.read_bytes())
    os.replace(other, path)
    with pytest.raises(StoreChangedError, match="another file was put in its place"):
        list(s.episodes)


def test_the_summary_pickles_as_the_path_and_the_offsets(demo: Path) -> None:
    s = load_run(demo / "candidate.trials.jsonl")
    blob = pickle.dumps(s)
    assert len(blob) < 64_000  # offsets and per-task sums, not 90 episodes
    back = pickle.loads(blob)
    assert list(back.episodes) == list(s.episodes or ()) and back.verdicts == s.verdicts
    assert back.metrics == s.metrics
