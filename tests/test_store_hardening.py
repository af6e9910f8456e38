"""Issue 18, the run store and the harness: nothing an agent returns can break a run.

Every test goes through the real ``run_suite`` / ``TrialStore`` / ``read_store`` / ``load_run``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import Episode, RunProvenance, Step, TaskSpec, read_episodes, write_episodes
from ek.agents.harness import (
    StoreError,
    StoreLockedError,
    StoreMismatchError,
    TrialStore,
    load_run,
    read_store,
    run_suite,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

ROOT = Path(__file__).resolve().parents[1]
RUN = RunProvenance(agent="a", seed=1)


def _tasks() -> list[TaskSpec]:
    return [TaskSpec("a", input=1, gold=1), TaskSpec("b", input=2, gold=2)]


def _nested(depth: int) -> list[Any]:
    x: list[Any] = []
    for _ in range(depth):
        x = [x]
    return x


def _cyclic() -> list[Any]:
    x: list[Any] = []
    x.append(x)
    return x


class _ArrayLike:
    """Behaves like a numpy array where it hurts: no truth value, elementwise ==."""

    def __bool__(self) -> bool:
        raise ValueError("the truth value of an array with more than one element is ambiguous")

    def __eq__(self, other: object) -> bool:
        raise ValueError("the truth value of an array with more than one element is ambiguous")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "array([1, 2])"


ODD_OUTPUTS = {
    "nan_output": lambda: float("nan"),
    "inf_final_state": lambda: {"output": 1, "final_state": {"x": float("inf")}},
    "nan_metadata": lambda: {"output": 1, "metadata": {"x": float("nan")}},
    "nan_observation": lambda: {
        "output": 1,
        "trajectory": [{"tool": "t", "observation": {"v": float("nan")}}],
    },
    "lone_surrogate": lambda: "\ud800",
    "huge_int": lambda: 10**5000,  # over the 4,300-digit int-to-str limit
    "nested_5000": lambda: _nested(5000),
    "nested_past_reader_limit": lambda: _nested(300),
    "cyclic": _cyclic,
    "array_like": _ArrayLike,
}


@pytest.mark.parametrize("name", sorted(ODD_OUTPUTS))
def test_odd_agent_output_is_that_trials_failure_and_the_store_stays_readable(
    tmp_path: Path, name: str
) -> None:
    make = ODD_OUTPUTS[name]
    p = tmp_path / "run.jsonl"

    def agent(task: TaskSpec) -> Any:
        return make() if task.task_id == "a" else task.input

    res = run_suite(agent, _tasks(), k=2, run=RUN, store=p)  # no HarnessError
    # task a: 2 failed trials (the odd output); task b: 2 correct answers
    assert res.agent_failures == 2
    assert res.verdicts == (False, False, True, True)
    bad = [ep for ep in res.episodes if ep.task_id == "a"]
    assert all(ep.error and "invalid agent result" in ep.error for ep in bad)
    # the same verdicts without a store: storability does not depend on storing
    assert run_suite(agent, _tasks(), k=2, run=RUN).verdicts == res.verdicts
    # the store is readable: resume, read_store and load_run all take it
    again = run_suite(agent, _tasks(), k=2, run=RUN, store=p)
    assert again.resumed == 4 and again.verdicts == res.verdicts
    assert len(read_store(p).records) == 4
    # (n trials, c successes) per task, from the store
    assert dict(load_run(p).counts) == {"a": (2, 0), "b": (2, 2)}


def test_stored_run_reads_back_byte_for_byte(tmp_path: Path) -> None:
    """What the writer accepted, the reader reads back unchanged (strings that spell a
    non-finite float, unicode, big-but-printable ints, nesting within the limit)."""
    out = {"s": "NaN", "u": "é\u2028", "i": 10**300, "n": _nested(150), "f": 0.1}
    p = tmp_path / "run.jsonl"
    res = run_suite(lambda t: out, _tasks(), k=1, run=RUN, store=p, check=lambda e, g: True)
    assert res.agent_failures == 0
    again = run_suite(lambda t: out, _tasks(), k=1, run=RUN, store=p, check=lambda e, g: True)
    assert again.resumed == 2
    assert [ep.output for ep in again.episodes] == [out, out]


def _write(p: Path, *records: dict[str, Any], k: int = 5) -> None:
    header = {"ek_store": 1, "run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": k}
    p.write_text("".join(json.dumps(r) + "\n" for r in (header, *records)), encoding="utf-8")


def _rec(**kw: Any) -> dict[str, Any]:
    r = {"task_id": "t", "trial": 0, "success": True, "episode": {"task_id": "t"}}
    r.update(kw)
    return {k: v for k, v in r.items() if v is not _MISSING}


_MISSING = object()


@pytest.mark.parametrize(
    ("records", "match"),
    [
        ([_rec(success="false")], r"run\.jsonl:2: 'success' must be a JSON bool"),
        ([_rec(success=1)], r":2: 'success' must be a JSON bool"),
        ([_rec(success=_MISSING)], r":2: a trial record needs a 'success' field"),
        ([_rec(trial=99)], r":2: trial must be in \[0, 5\)"),
        ([_rec(trial=-1)], r":2: trial must be in \[0, 5\)"),
        ([_rec(trial=True)], r":2: a trial record needs str task_id and int trial"),
        ([_rec(episode={"task_id": "other"})], r":2: the episode's task_id 'other' differs"),
        ([_rec(), _rec(success=False)], r":3: task 't' trial 0 is recorded twice"),
    ],
)
def test_bad_records_are_refused_on_read_with_file_and_line(
    tmp_path: Path, records: list[dict[str, Any]], match: str
) -> None:
    p = tmp_path / "run.jsonl"
    _write(p, *records)
    with pytest.raises(StoreError, match=match):
        read_store(p)
    with pytest.raises(StoreError, match=match):  # and a resume through TrialStore.open
        TrialStore.open(p, {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 5})


def test_same_trial_twice_with_the_same_verdict_is_kept_once(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    _write(p, _rec(), _rec())
    assert len(read_store(p).records) == 1


def test_bad_record_through_load_run_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    run_suite(lambda t: t.input, _tasks(), k=2, run=RUN, store=p)
    lines = p.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[1])
    rec["success"] = "false"
    lines[1] = json.dumps(rec)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'success' must be a JSON bool"):
        load_run(p)


def test_second_writer_in_the_same_process_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    header = {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 2}
    with TrialStore.open(p, header):
        with pytest.raises(StoreLockedError, match="open for writing by another run"):
            TrialStore.open(p, header)
        with pytest.raises(StoreLockedError):
            run_suite(lambda t: t.input, _tasks(), k=2, run=RUN, store=p)
        assert read_store(p).records == ()  # readers are not blocked
    with TrialStore.open(p, header):  # released on close
        pass


_HOLDER = textwrap.dedent(
    """
    import sys
    from ek.agents.harness import TrialStore
    h = {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 2}
    st = TrialStore.open(sys.argv[1], h)
    print("locked", flush=True)
    sys.stdin.readline()
    st.close()
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl lock on Windows (documented)")
def test_second_writer_in_another_process_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(p)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        header = {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 2}
        with pytest.raises(StoreLockedError):
            TrialStore.open(p, header)
    finally:
        child.communicate("\n", timeout=60)
    assert child.returncode == 0
    with TrialStore.open(p, {"run": {"agent": "a"}, "suite": {"fingerprint": "f"}, "k": 2}):
        pass  # the child released it


def _exact(ep: Episode, gold: Any) -> bool:
    return bool(ep.output == gold)


def _always(ep: Episode, gold: Any) -> bool:
    return True


def test_resume_with_another_checker_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    run_suite(lambda t: -1, _tasks(), k=2, run=RUN, store=p, check=_exact)
    with pytest.raises(StoreMismatchError, match="check: store has '_exact', run has '_always'"):
        run_suite(lambda t: -1, _tasks(), k=2, run=RUN, store=p, check=_always)
    # the same checker resumes
    assert run_suite(lambda t: -1, _tasks(), k=2, run=RUN, store=p, check=_exact).resumed == 4


@pytest.mark.parametrize("bad", [True, False, 1, 0, 1.5, None])
def test_non_path_arguments_are_refused(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(TypeError, match="got"):
        read_episodes(bad)
    with pytest.raises(TypeError, match="got"):
        write_episodes(bad, [Episode("a")])
    with pytest.raises(TypeError, match="got"):
        read_store(bad)
    with pytest.raises(TypeError, match="got"):
        TrialStore.open(bad, {"run": {}, "suite": {}, "k": 1})
    os.fstat(1)  # stdout still open


# -- write_episodes / read_episodes: what the writer accepts, the reader reads back

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**4000, max_value=10**4400)  # around the int-to-str limit
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None), max_size=8)  # lone surrogates included
    | st.sampled_from(["NaN", "Infinity", "-Infinity", "$str", ""])
)
_JSONISH = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    output=_JSONISH,
    final_state=_JSONISH,
    metadata=st.dictionaries(st.text(max_size=4), _JSONISH, max_size=2),
    observation=_JSONISH,
    depth=st.sampled_from([0, 1, 150, 250]),
)
def test_write_then_read_episodes_round_trips_everything_episode_accepts(
    tmp_path_factory: pytest.TempPathFactory,
    output: Any,
    final_state: Any,
    metadata: dict[str, Any],
    observation: Any,
    depth: int,
) -> None:
    p = tmp_path_factory.mktemp("eps") / "eps.jsonl"
    ep = Episode(
        "t",
        output=_wrap(output, depth),
        final_state=final_state,
        metadata=metadata,
        trajectory=[Step("tool", {"a": 1}, observation=observation)],
    )
    try:
        write_episodes(p, [ep])
    except ValueError as e:
        assert "cannot be written as JSON that reads back" in str(e)
        assert p.read_bytes() == b""  # nothing unreadable was left behind
        return
    assert list(read_episodes(p)) == [ep]


def _wrap(x: Any, depth: int) -> Any:
    for _ in range(depth):
        x = [x]
    return x


def test_write_episodes_refuses_what_the_reader_refuses_and_keeps_the_file_readable(
    tmp_path: Path,
) -> None:
    p = tmp_path / "eps.jsonl"
    good = Episode("a", output={"s": "NaN", "x": 1.5})
    with pytest.raises(ValueError, match="cannot be written"):
        write_episodes(p, [good, Episode("b", output=float("nan"))])
    assert list(read_episodes(p)) == [good]  # the lines written before are readable
