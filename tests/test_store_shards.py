"""Issue 22: a large store read by several processes, one shard of its tasks each.

``load_run(path, episodes=False, workers=n)`` must give the summary one reader gives, figure
for figure and in the same order (tasks, slices, metrics, costs, infrastructure errors, budget
stops): a task's records all fall in one shard, the merge puts what one reader orders as it
reads back in file order, and dollars are summed exactly (the same in any order). The store
here is written by the real ``run_suite`` (four metrics, slices, an agent that sometimes raises
and sometimes stops on a budget), then extended by hand with what a store can also hold: a
task the header does not list, a trial recorded twice, an infrastructure error, a record in
another writer's key order and task ids that need escaping in JSON.
"""

from __future__ import annotations

import io
import json
import re
import warnings
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from ek.agents import cli
from ek.agents._run.load import _read_store as _REAL_READ
from ek.agents._run.store import task_shard
from ek.agents.base import Cost, Episode, RunProvenance, Step, TaskSpec, Trajectory
from ek.agents.cost import per_million
from ek.agents.harness import RunLoadError, iter_store, load_run, run_suite
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

PRICE = {"m": per_million(1.1, 4.3, cache_read=0.07), "judge-m": per_million(0.3, 0.9)}


def _agent(task: Any) -> Episode:
    n = int(task.task_id.rsplit("-", 1)[-1])
    if n % 7 == 3:
        raise RuntimeError("the agent crashed")  # an agent failure, recorded as a trial
    steps = (Step("get_order", {"order_id": "A1"}), Step("refund", {"amount": 10 + n % 3}))
    costs = (
        Cost(input_tokens=1000 + 37 * n, output_tokens=90 + n, cache_read_tokens=n, model="m"),
        Cost(input_tokens=200 + n, output_tokens=11, model="judge-m", role="judge"),
    )
    error = "budget: steps" if n % 11 == 5 else None
    return Episode(
        task.task_id, trajectory=Trajectory(steps), output=f"out-{n % 2}", cost=costs, error=error
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shards") / "run.jsonl"
    gold = Trajectory((Step("get_order", {"order_id": "A1"}), Step("refund", {"amount": 10})))
    names = ("refunds", "lookups", "exchanges")
    tasks = [
        TaskSpec(f"task-{i}", gold="out-0", gold_calls=gold, slice=names[i % 3]) for i in range(40)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_suite(
            _agent,
            tasks,
            k=3,
            metrics=[
                TaskSuccessMetric(),
                ToolCallMetric(),
                TrajectoryMetric(),
                CostPerSuccessMetric(prices=PRICE),
            ],
            prices=PRICE,
            run=RunProvenance(agent="shards", model="m", seed=3),
            store=path,
        )
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.startswith('{"task_id"')]
    first = records[0]

    def like(task: str, trial: int, **changes: Any) -> dict[str, Any]:
        rec = json.loads(json.dumps(first))
        rec.update(task_id=task, trial=trial, **changes)
        rec["episode"]["task_id"], rec["episode"]["trial"] = task, trial
        return rec

    extra = [
        like("unlisted-b", 0),  # tasks the header does not list: counted in file order
        like('quote"d', 0, success=False),  # a task id JSON escapes (its line is parsed)
        like("unlisted-a", 1),
        dict(records[5]),  # a trial recorded twice: the first record counts
        {"trial": 2, **like("unlisted-a", 2)},  # another writer's key order (parsed)
        like("ünï-cödé", 0),  # non-ASCII, written as UTF-8 (read from its first bytes)
        like("unlisted-b", 1, infra_error="worker lost", retries=2),  # not a trial
    ]
    with path.open("a", encoding="utf-8") as fh:
        for rec in extra:
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


def _figures(path: Path, workers: int) -> dict[str, Any]:
    s = load_run(path, episodes=False, workers=workers)
    return {
        "counts": list(s.counts.items()),
        "slices": s.slices,
        "metrics": {
            name: (
                m.value,
                m.higher_is_better,
                m.n_scores,
                [(t, [x.detail for x in v]) for t, v in m.scores.items()],
            )
            for name, m in s.metrics.items()
        },
        "cost": s.cost,
        "slice_cost": s.slice_cost,
        "slice_order": list(s.slice_cost or {}),
        "infra": s.infra,
        "agent_failures": s.agent_failures,
        "budget_hits": s.budget_hits,
    }


_WHOLE_READS: list[str] = []  # reads of a whole store in this process (by _spy)


def _spy(p: str, keep: bool, prices: Any, shard: Any = None) -> Any:
    """The store reader, noting each read of the whole file (a module-level function: the
    readers' processes get it by name)."""
    if shard is None:
        _WHOLE_READS.append(p)
    return _REAL_READ(p, keep, prices, shard)


@pytest.mark.parametrize("workers", [2, 3])
def test_several_readers_give_one_readers_figures(
    store: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ek.agents._run.load as runs

    whole = _WHOLE_READS
    whole.clear()
    monkeypatch.setattr(runs, "_read_store", _spy)
    one = _figures(store, 1)
    assert whole == [str(store)]
    whole.clear()
    # the hand-written records are all there: 40 listed tasks, then the unlisted in file order
    assert [t for t, _ in one["counts"]][40:] == ["unlisted-b", 'quote"d', "unlisted-a", "ünï-cödé"]
    assert dict(one["counts"])["unlisted-a"] == (2, 2) and dict(one["counts"])["unlisted-b"] == (
        1,
        1,
    )
    assert one["infra"] == {"unlisted-b": (1, 2)} and one["agent_failures"] > 0
    assert one["budget_hits"] and one["cost"]["total"]["dollars"] > 0
    assert _figures(store, workers) == one  # every figure identical, in the same order
    assert whole == []  # read by the shards, not by one reader after a failure


def test_shards_yield_every_record_once(store: Path) -> None:
    with iter_store(store) as st:
        whole = [(r["task_id"], r["trial"]) for r in st]
    for n in (2, 3, 5):
        seen: list[tuple[str, int]] = []
        for i in range(n):
            with iter_store(store, shard=(i, n)) as st:
                part = [(r["task_id"], r["trial"]) for r in st]
            assert all(task_shard(t, n) == i for t, _ in part)
            seen += part
        assert sorted(seen) == sorted(whole) and len(seen) == len(set(seen))


def test_a_corrupt_line_is_reported_as_one_reader_reports_it(store: Path, tmp_path: Path) -> None:
    lines = store.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    # two corrupt records, likely in different shards: the file's first one is reported
    bad.write_bytes(
        b"".join(
            [
                *lines[:20],
                b'{"task_id":"task-1","trial":0,"succ\n',
                *lines[20:30],
                b"{oops\n",
                *lines[30:],
            ]
        )
    )
    with pytest.raises(RunLoadError) as one:
        load_run(bad, episodes=False, workers=1)
    with pytest.raises(RunLoadError) as two:
        load_run(bad, episodes=False, workers=2)
    assert str(two.value) == str(one.value) and ":21: corrupt line" in str(one.value)


def test_workers_must_be_a_positive_int(store: Path) -> None:
    with pytest.raises(TypeError, match="workers must be an int >= 1 or None, got '2'"):
        load_run(store, episodes=False, workers="2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workers must be an int >= 1, got 0"):
        load_run(store, episodes=False, workers=0)
    with pytest.raises(ValueError, match=r"shard index must be an int in \[0, 2\), got 2"):
        iter_store(store, shard=(2, 2))


def test_the_report_command_prints_the_same_with_several_readers(store: Path) -> None:
    outs = []
    for workers in ("1", "2"):
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert cli.main(["report", str(store), "--json", "--workers", workers]) == 0
        outs.append(json.loads(buf.getvalue()))
    assert outs[0] == outs[1] and outs[0]["n_trials"] == 40 * 3 + 5


@pytest.mark.parametrize("episodes", [True, False])
def test_a_record_whose_episode_is_null_is_refused_on_both_paths(
    tmp_path: Path, episodes: bool
) -> None:
    from ek.agents.harness import TrialStore

    path = tmp_path / "null.jsonl"
    with TrialStore.open(
        path, {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 1}
    ) as st:
        st.append({"task_id": "t", "trial": 0, "success": True, "episode": None})
    with pytest.raises(RunLoadError, match="'episode' must be a JSON object, got None"):
        load_run(path, episodes=episodes)


@pytest.mark.parametrize("episodes", [True, False])
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("scores", [1], "'scores' must be a JSON object, got [1]"),
        ("scores", {"tool_calls": {"value": 1, "detail": [1, 2]}}, "must be a mapping, got list"),
    ],
)
def test_a_record_with_malformed_scores_is_refused_on_both_paths(
    tmp_path: Path, episodes: bool, field: str, value: Any, message: str
) -> None:
    from ek.agents.harness import TrialStore

    path = tmp_path / "bad.jsonl"
    rec = {"task_id": "t", "trial": 0, "success": True, "episode": {"task_id": "t"}, field: value}
    with TrialStore.open(
        path, {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 1}
    ) as st:
        st.append(rec)
    with pytest.raises(RunLoadError, match=re.escape(message)):
        load_run(path, episodes=episodes)
