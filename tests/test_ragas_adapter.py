"""ek metrics inside the real Ragas (0.4.3), offline: evaluate(), aevaluate(), an @experiment,
declared columns, NaN with a reason, and round trips.

The proof cases are ones where Ragas' own metrics are wrong: ``ToolCallF1`` collapses duplicates
(a repeated call scores 1.0) and under-penalises extras; ``ToolCallAccuracy`` (strict order)
gives 0.0 to every case with a duplicate, an extra or a reordering, however close.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import _offline
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ragas")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from ragas import Dataset, EvaluationDataset, aevaluate, evaluate, experiment
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
    from ragas.metrics import ToolCallAccuracy, ToolCallF1

from ek.adapters.ragas import (
    EkCollectionsMetric,
    EkRagasMetric,
    EkRagasScore,
    ek_ragas_metric,
    from_ragas_sample,
    to_ragas_sample,
)
from test_bridge_deepeval import episodes  # the Episode strategy (shared)

from ek.agents.base import Cost, Episode, Step, TaskSpec
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Length mismatch:UserWarning"),
]


@pytest.fixture(autouse=True)
def no_outbound(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    """Fail on any attempted non-local connection (telemetry swallows the guard's error), and
    run in an empty cwd that must stay empty."""
    attempts: list[Any] = []
    real_connect, real_gai = socket.socket.connect, socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        if not _offline._is_local(address):
            attempts.append(address)
        return real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        h = host.decode() if isinstance(host, bytes) else host
        if h is not None and not _offline._is_local((h,)) and h != socket.gethostname():
            attempts.append(h)
        return real_gai(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.chdir(tmp_path)
    yield
    assert not attempts, f"network connection attempted: {attempts}"
    assert list(tmp_path.iterdir()) == [], f"files written: {list(tmp_path.iterdir())}"


A1, B1, C1 = Step("A", {"x": 1}), Step("B", {"y": "q"}), Step("C", {})
PROOF = {  # (actual, expected); unit costs: a call's mass = 1 + 1 per argument
    "duplicate": ([A1, A1, B1], [A1, B1]),
    "extra": ([A1, B1, C1], [A1, B1]),
    "reorder": ([B1, A1], [A1, B1]),
}


def proof_samples() -> list[MultiTurnSample]:
    return [
        to_ragas_sample(
            Episode(k, input=f"task {k}", trajectory=p, output="ok"), TaskSpec(k, gold_calls=g)
        )
        for k, (p, g) in PROOF.items()
    ]


def check_proof_rows(rows: dict[str, dict[str, float]], tc: str, tr: str) -> None:
    # duplicate: ek TP 4, FP 2 -> 0.8 (exact trajectory 1 - 2/10); Ragas F1 1.0, TCA 0.0.
    assert rows["duplicate"][tc] == pytest.approx(0.8)
    assert rows["duplicate"][tr] == pytest.approx(0.8)
    # extra C(): ek 8/9 (mass 1 extra); Ragas F1 set-based 2/(2+1) P... = 0.8, TCA 0.0.
    assert rows["extra"][tc] == pytest.approx(8 / 9)
    assert rows["extra"][tr] == pytest.approx(1 - 1 / 9)
    # reorder: the calls are right (1.0); the exact order is not (NW cost 4 of 8 -> 0.5).
    assert rows["reorder"][tc] == 1.0
    assert rows["reorder"][tr] == pytest.approx(0.5)


def test_evaluate_where_ragas_is_wrong() -> None:
    tc = ek_ragas_metric(ToolCallMetric())
    tr = ek_ragas_metric(TrajectoryMetric("exact"), name="ek_trajectory_exact")
    res = evaluate(
        EvaluationDataset(samples=proof_samples()),
        metrics=[tc, tr, ToolCallF1(), ToolCallAccuracy()],
        show_progress=False,
    )
    rows = dict(zip(PROOF, res.scores))
    check_proof_rows(rows, "ek_tool_calls", "ek_trajectory_exact")
    assert rows["duplicate"]["tool_call_f1"] == 1.0  # Ragas: the duplicate is invisible
    assert rows["extra"]["tool_call_f1"] == pytest.approx(0.8)
    assert [r["tool_call_accuracy"] for r in res.scores] == [0.0, 0.0, 0.0]
    # ek's reason and detail ride on the number.
    s = rows["duplicate"]["ek_tool_calls"]
    assert isinstance(s, EkRagasScore) and s.task_id == "duplicate"
    assert "extra A" in s.reason and (s.detail["tp"], s.detail["fp"]) == (4.0, 2.0)
    assert res.to_pandas()["ek_tool_calls"].tolist() == pytest.approx([0.8, 8 / 9, 1.0])


def test_aevaluate() -> None:
    tc = ek_ragas_metric("tool_calls")
    tr = ek_ragas_metric("trajectory", name="ek_trajectory_exact", grammar=None)
    tr_exact = EkRagasMetric(name="ek_trajectory_exact", metric=TrajectoryMetric("exact"))

    async def main() -> Any:
        return await aevaluate(
            EvaluationDataset(samples=proof_samples()), metrics=[tc, tr_exact], show_progress=False
        )

    res = asyncio.run(main())
    check_proof_rows(dict(zip(PROOF, res.scores)), "ek_tool_calls", "ek_trajectory_exact")
    assert tr.name == "ek_trajectory_exact"


def test_experiment() -> None:
    tc = ek_ragas_metric(ToolCallMetric(), api="experiment")
    tr = ek_ragas_metric(TrajectoryMetric("exact"), api="experiment", name="ek_trajectory_exact")
    assert isinstance(tc, EkCollectionsMetric)
    ds = Dataset(name="proof", backend="inmemory")
    for k, s in zip(PROOF, proof_samples()):
        ds.append(
            {
                "task_id": k,
                "user_input": s.user_input,
                "reference_tool_calls": s.reference_tool_calls,
            }
        )

    @experiment()
    async def run(row: dict[str, Any]) -> dict[str, Any]:
        kw = {
            "user_input": row["user_input"],
            "reference_tool_calls": row["reference_tool_calls"],
            "task_id": row["task_id"],
        }
        a, b = await tc.ascore(**kw), await tr.ascore(**kw)
        assert a.traces["input"]["task_id"] == row["task_id"]
        return {"task_id": row["task_id"], tc.name: a.value, tr.name: b.value, "why": a.reason}

    exp = asyncio.run(run.arun(ds, name="ek_proof"))
    rows = {r["task_id"]: r for r in exp.to_pandas().to_dict("records")}  # completion order
    check_proof_rows(rows, "ek_tool_calls", "ek_trajectory_exact")
    assert "extra A" in rows["duplicate"]["why"]


def test_declared_columns_survive_column_stripping() -> None:
    # Ragas rebuilds the sample with only the declared columns: reference must be declared
    # for an output check to see it.
    m = ek_ragas_metric(TaskSuccessMetric())
    assert m.get_required_columns(with_optional=True)["MULTI_TURN"] == {
        "user_input",
        "reference",
        "reference_tool_calls",
    }
    good = to_ragas_sample(Episode("a", input="q", output="4"), "4")
    bad = to_ragas_sample(Episode("b", input="q", output="5"), "4")
    res = evaluate(EvaluationDataset(samples=[good, bad]), metrics=[m], show_progress=False)
    assert res["ek_task_success"] == [1.0, 0.0]


def test_nan_with_reason_for_undefined_values() -> None:
    # No price for the model: the dollars are unknown -> NaN, and the reason says why.
    m = ek_ragas_metric(CostPerSuccessMetric(prices={}))
    sample = to_ragas_sample(
        Episode("c", input="q", output="4", cost=Cost(input_tokens=10, model="m")), "4"
    )
    v = m.multi_turn_score(sample)
    assert math.isnan(v) and "dollars unknown" in v.reason
    res = evaluate(EvaluationDataset(samples=[sample]), metrics=[m], show_progress=False)
    assert math.isnan(res.scores[0][m.name])
    r = ek_ragas_metric(CostPerSuccessMetric(prices={}), api="experiment").score(
        user_input=sample.user_input, reference="4"
    )
    assert math.isnan(r.value) and "dollars unknown" in r.reason
    assert r.traces["output"]["dollars"] is None


def test_score_pickles_and_factory_validates() -> None:
    import pickle

    s = EkRagasScore(0.5, "half", {"tp": 1.0}, "t")
    back = pickle.loads(pickle.dumps(s))
    assert (back, back.reason, dict(back.detail), back.task_id) == (0.5, "half", {"tp": 1.0}, "t")
    with pytest.raises(ValueError, match="api must be"):
        ek_ragas_metric(ToolCallMetric(), api="legacy")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs metric="):
        EkRagasMetric()
    assert not hasattr(ek_ragas_metric(ToolCallMetric()), "mode")  # would rename the column


def test_import_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for mod in [m for m in sys.modules if m.startswith("ek.adapters.ragas")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "ragas", None)
    with pytest.raises(ImportError, match=r"pip install ek-agents\[ragas\]"):
        import ek.adapters.ragas  # noqa: F401


# --------------------------------------------------------------------------- round trips


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ep=episodes, gold_calls=st.lists(st.sampled_from([A1, B1, C1]), max_size=3))
def test_round_trip_episode_ragas_episode(ep: Episode, gold_calls: list[Step]) -> None:
    sample = to_ragas_sample(ep, TaskSpec(ep.task_id, gold="answer", gold_calls=gold_calls))
    back, gold = from_ragas_sample(sample)
    assert back == ep  # names, args, observations, errors, ids, token counts by kind, ...
    assert gold.gold == "answer" and list(gold.gold_calls) == gold_calls
    # The same through Ragas' own serialisation (model_dump -> dicts).
    back2, _ = from_ragas_sample(MultiTurnSample(**sample.model_dump()))
    assert back2 == ep


def test_positional_pairing_of_parallel_calls() -> None:
    msgs = [
        HumanMessage(content="compare"),
        AIMessage(
            content="",
            tool_calls=[
                ToolCall(name="price", args={"s": "A"}),
                ToolCall(name="price", args={"s": "B"}),
            ],
            metadata={"usage": {"input_tokens": 10, "cache_read_tokens": 90, "output_tokens": 5}},
        ),
        ToolMessage(content="1"),
        ToolMessage(content="boom", metadata={"error": "rate limited"}),
        AIMessage(content="A is cheaper", metadata={"task_id": "p1", "success": True}),
    ]
    ep, gold = from_ragas_sample(MultiTurnSample(user_input=msgs))
    # FIFO: the first result answers the first call, the second the second.
    assert [(s.args["s"], s.observation, s.error) for s in ep.trajectory] == [
        ("A", "1", None),
        ("B", "boom", "rate limited"),
    ]
    assert (ep.task_id, ep.output, ep.success, ep.input) == ("p1", "A is cheaper", True, "compare")
    assert ep.agent_cost.cache_read_tokens == 90 and gold.gold_calls is None
    # An explicit tool_call_id pairs out of order.
    msgs2 = [
        AIMessage(
            content="",
            tool_calls=[ToolCall(name="a", args={}), ToolCall(name="b", args={})],
            metadata={"tool_call_ids": ["c1", "c2"]},
        ),
        ToolMessage(content="for b", metadata={"tool_call_id": "c2"}),
        ToolMessage(content="for a"),
    ]
    ep2, _ = from_ragas_sample(msgs2)
    assert [s.observation for s in ep2.trajectory] == ["for a", "for b"]


def test_bridge_errors() -> None:
    with pytest.raises(ValueError, match="no pending tool call"):
        from_ragas_sample(
            [
                {"type": "ai", "content": "", "tool_calls": [{"name": "a", "args": {}}]},
                {"type": "tool", "content": "1"},
                {"type": "tool", "content": "2"},
            ]
        )
    with pytest.raises(ValueError, match="human, ai or tool"):
        from_ragas_sample([{"type": "system", "content": "x"}])
    with pytest.raises(TypeError, match="user_input"):
        from_ragas_sample({"messages": []})
    with pytest.raises(ValueError, match="one id per tool call"):
        from_ragas_sample(
            [
                {
                    "type": "ai",
                    "content": "",
                    "tool_calls": [{"name": "a", "args": {}}],
                    "metadata": {"tool_call_ids": []},
                }
            ]
        )


def test_reference_is_json_for_state_checks() -> None:
    ep = Episode("s", input="refund", output="ok", final_state={"o1": "refunded"})
    sample = to_ragas_sample(ep, {"o1": "refunded"})
    assert json.loads(sample.reference) == {"o1": "refunded"}
    m = ek_ragas_metric(TaskSuccessMetric, check="final_state", reference_is_json=True)
    assert m.multi_turn_score(sample) == 1.0


def test_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import runpy
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "ragas_example.py"
    runpy.run_path(str(example), run_name="__main__")
    out = capsys.readouterr().out
    # double refund: ek 0.8 (extra refund, mass 2: 8/10), Ragas ToolCallF1 1.0.
    assert "'run': 'double_refund', 'ek_tool_calls': 0.8" in out
    assert "'tool_call_f1': 1.0, 'tool_call_accuracy': 0.0" in out
    # refund first: exact trajectory cost 4 of worst case 8.
    assert "'run': 'refund_first', 'ek_trajectory_exact': 0.5" in out


def test_adapter_docstring_examples() -> None:
    # adapters/ is outside the doctest testpaths (tests/, ek/): run its examples here.
    import doctest

    import ek.adapters.ragas._convert as conv
    import ek.adapters.ragas._metric as met

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    for mod in (sys.modules["ek.adapters.ragas"], conv, met):
        assert doctest.testmod(mod, optionflags=flags).failed == 0, mod.__name__
