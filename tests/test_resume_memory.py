"""A run with a store keeps its trials in the store (issue 31, resume memory proportional to
tasks): its result reads episodes and Scores back from the file, and equals, item for item and
figure for figure, the result of the same run held in memory. Memory is measured in
``bench/resume.py``, not here."""

from __future__ import annotations

import json
import math
import os
import pickle
import shutil
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ek.agents import Adaptive, Budget, budget_curve, consistency, robustness, trials_saved
from ek.agents._run.stored import StoreChangedError, StoredTrials
from ek.agents.base import Episode, TaskSpec
from ek.agents.demo import baseline_agent, load_tasks, replayed_state_match
from ek.agents.demo._run import DEMO_FAULTS, DEMO_PRICES, demo_metrics
from ek.agents.harness import (
    SuiteResult,
    load_agent_baseline,
    run_suite,
    save_agent_baseline,
)
from ek.base import Score
from ek.jsonio import dumps


class MedianSteps:
    """A metric whose aggregate is no ratio of sums (the median of the values): its Scores are
    read from the store whole."""

    name = "median_steps"
    higher_is_better = False

    def __call__(self, ep: Episode, gold: Any = None) -> Score:
        return Score(float(len(ep.trajectory)), {"steps": len(ep.trajectory), "why": ["a", "b"]})

    def aggregate(self, scores: Sequence[Score]) -> float:
        vals = sorted(s.value for s in scores)
        return vals[len(vals) // 2] if vals else math.nan


def _demo(store: Path | None, **kw: Any) -> SuiteResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_suite(
            baseline_agent(),
            load_tasks(),  # 30 tasks in 5 slices
            k=kw.pop("k", 2),
            seed=7,
            check=replayed_state_match,
            metrics=[*demo_metrics(), MedianSteps()],
            prices=DEMO_PRICES,
            store=store,
            concurrency=3,
            **kw,
        )


def _figures(res: SuiteResult) -> str:
    """Every aggregate a result reports (its to_dict: counts, cost, metrics, slices, reliability,
    robustness, ...), less what tells runs apart (the store, the time, what was resumed)."""
    d = res.to_dict()
    for key in ("store", "elapsed", "resumed"):
        d.pop(key)
    return dumps({**d, "counts": dict(res.counts)})


def _timeless(eps: Sequence[Episode]) -> list[Episode]:
    """The episodes without their wall time (two runs of the same trials differ in it)."""
    return [ep.replace(duration=None) for ep in eps]


def _assert_same(stored: SuiteResult, memory: SuiteResult) -> None:
    assert isinstance(stored.episodes, StoredTrials) and isinstance(memory.episodes, tuple)
    assert stored.episodes == tuple(stored.episodes) and tuple(stored.episodes) == stored.episodes
    assert _timeless(stored.episodes) == _timeless(memory.episodes)
    assert stored.verdicts == memory.verdicts
    assert set(stored.scores) == set(memory.scores)
    for name, ss in memory.scores.items():
        assert isinstance(stored.scores[name], StoredTrials)
        assert stored.scores[name] == ss, name
    assert _figures(stored) == _figures(memory)
    assert stored.reliability == memory.reliability
    # indexing agrees with iterating, from either end
    eps = tuple(stored.episodes)
    assert stored.episodes[-1] == eps[-1] and stored.episodes[3] == eps[3]
    assert stored.episodes[2:9:3] == eps[2:9:3]


def test_a_stored_result_equals_the_same_run_in_memory(tmp_path: Path) -> None:
    memory = _demo(None, faults=DEMO_FAULTS)
    written = _demo(tmp_path / "run.jsonl", faults=DEMO_FAULTS)
    _assert_same(written, memory)
    for name in memory.faults:  # each fault's pass has its own store
        _assert_same(written.faults[name], memory.faults[name])
    resumed = _demo(tmp_path / "run.jsonl", faults=DEMO_FAULTS)  # every trial read back
    assert resumed.resumed == resumed.n_trials == 60  # 30 tasks x k = 2
    _assert_same(resumed, memory)
    assert resumed.episodes == written.episodes  # the same trials, wall times and all
    # the feature reports over a result give the same values stored or in memory
    assert robustness(resumed) == robustness(memory)
    for measure in ("dollars", "steps", "tokens.input_tokens"):
        assert budget_curve(resumed, measure) == budget_curve(memory, measure)
    assert consistency(resumed.counts) == consistency(memory.counts)
    assert repr(resumed.episodes) == "StoredTrials(60 episodes read from the store 'run.jsonl')"


def test_adaptive_and_budget_results_agree(tmp_path: Path) -> None:
    kw: dict[str, Any] = {"k": 4, "adaptive": Adaptive(min_trials=2), "budget": Budget(steps=3)}
    memory = _demo(None, **kw)
    stored = _demo(tmp_path / "run.jsonl", **kw)
    _assert_same(stored, memory)
    assert trials_saved(stored) == trials_saved(memory) > 0
    assert dict(stored.budget_hits) == dict(memory.budget_hits)


def test_a_metric_added_on_resume_is_scored_afresh_and_kept(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    tasks = [TaskSpec(f"t{i}", gold=i, slice="even" if i % 2 else "odd") for i in range(6)]

    def run(metrics: list[Any]) -> SuiteResult:
        return run_suite(lambda t: t.gold, tasks, k=2, seed=1, metrics=metrics, store=p)

    run(["task_success"])
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join(lines[:-3]))  # the last 3 trials lost: run again on the resume
    both = run(["task_success", MedianSteps()])  # median_steps: not in the store's header
    memory = run_suite(
        lambda t: t.gold, tasks, k=2, seed=1, metrics=["task_success", MedianSteps()]
    )
    assert both.resumed == 9
    _assert_same(both, memory)
    # its Scores were scored afresh on the 9 stored episodes (their records hold none) and
    # read from the store for the 3 trials run again
    held = ["median_steps" in json.loads(line)["scores"] for line in p.read_text().splitlines()[1:]]
    assert held == [False] * 9 + [True] * 3


def test_a_torn_store_resumes_to_the_same_result(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    memory = _demo(None)
    _demo(p)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - 40])  # a crash in the middle of the last record's write
    resumed = _demo(p)
    assert resumed.resumed == 59  # 60 trials, the torn one run again
    _assert_same(resumed, memory)


def test_a_store_changed_after_the_run_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    res = run_suite(
        lambda t: t.gold, [TaskSpec("a", gold=1)], k=3, store=p, metrics=["task_success"]
    )
    assert res.episodes[0].output == 1
    with p.open("ab") as f:  # someone appends to it
        f.write(b"\n")
    with pytest.raises(StoreChangedError, match=r"run\.jsonl: the store changed .*size went from"):
        list(res.episodes)
    with pytest.raises(StoreChangedError, match="size went from"):
        res.scores["task_success"][0]
    # a record rewritten in place at the same size (output 1 -> 7): the size and the inode hold,
    # the modification time does not (set one second later: the clock's tick can be coarser
    # than this test)
    q = tmp_path / "other.jsonl"
    edited = run_suite(lambda t: t.gold, [TaskSpec("a", gold=1)], k=3, store=q)
    data = q.read_bytes()
    assert data.count(b'"output":1') == 3
    before = q.stat().st_mtime_ns
    with q.open("r+b") as f:
        f.write(data.replace(b'"output":1', b'"output":7', 1))
    os.utime(q, ns=(before + 10**9, before + 10**9))
    with pytest.raises(StoreChangedError, match="its modification time changed"):
        edited.episodes[0]
    shutil.copy(p, tmp_path / "copy.jsonl")
    os.replace(tmp_path / "copy.jsonl", p)  # another file in its place
    with pytest.raises(StoreChangedError, match="another file was put in its place"):
        res.episodes[1]
    p.unlink()
    with pytest.raises(StoreChangedError, match="it was removed"):
        res.episodes[1]
    # what the result holds in memory is still there
    assert res.verdicts == (True, True, True) and dict(res.counts) == {"a": (3, 3)}


def test_a_stored_result_pickles_as_path_and_offsets(tmp_path: Path) -> None:
    res = _demo(tmp_path / "run.jsonl")
    back = pickle.loads(pickle.dumps(res))
    assert isinstance(back.episodes, StoredTrials)
    assert back.episodes == res.episodes and back.scores["tool_calls"] == res.scores["tool_calls"]
    assert _figures(back) == _figures(res)
    # the pickle holds offsets, not the trials: smaller than the store's records
    assert len(pickle.dumps(res.episodes)) < os.path.getsize(tmp_path / "run.jsonl") / 10


def test_equality_length_and_errors_of_a_stored_sequence(tmp_path: Path) -> None:
    res = run_suite(lambda t: t.gold, [TaskSpec("a", gold=1), TaskSpec("b", gold=2)], k=2,
                    store=tmp_path / "run.jsonl")  # fmt: skip
    eps = res.episodes
    assert len(eps) == 4 and [e.task_id for e in eps] == ["a", "a", "b", "b"]
    assert eps == list(eps) and eps != tuple(eps)[:3] and eps != "abcd"
    assert eps.index(eps[2]) == 2 and eps[-4] == eps[0]
    with pytest.raises(IndexError, match="index 4 out of range for 4 episodes"):
        eps[4]
    with pytest.raises(TypeError):
        hash(eps)


def test_a_baseline_of_a_stored_result_equals_one_of_the_run_in_memory(tmp_path: Path) -> None:
    memory = _demo(None)
    stored = _demo(tmp_path / "run.jsonl")
    a = save_agent_baseline(stored, tmp_path / "stored.json")
    b = save_agent_baseline(memory, tmp_path / "memory.json")
    assert a == b
    assert load_agent_baseline(tmp_path / "stored.json") == load_agent_baseline(
        tmp_path / "memory.json"
    )
