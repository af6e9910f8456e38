"""ek metrics inside the real DeepEval (4.3.1), offline: evaluate() async and sync, assert_test(),
metric re-instantiation, concurrency, lower-is-better success, round trips.

The proof cases are ones where DeepEval's own ``ToolCorrectnessMetric`` (deterministic scoring,
built with a stub model that fails if called) is wrong: a duplicated call, an extra call, a
reordering, and the duplicate-expected bug (confident-ai/deepeval#3141).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import math
import socket
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import _offline
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("deepeval")

from deepeval import assert_test, evaluate
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig, ErrorConfig
from deepeval.metrics import ToolCorrectnessMetric
from deepeval.metrics.utils import copy_metrics
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import ConversationalTestCase, LLMTestCase, ToolCall, Turn
from ek.adapters.deepeval import (
    EkConversationalMetric,
    EkMetric,
    from_deepeval_test_case,
    to_deepeval_test_case,
)

from ek.adapters._shell import EkAdapterError
from ek.agents.base import Cost, Episode, Step, TaskSpec, Trajectory
from ek.agents.cost import per_million
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

# --------------------------------------------------------------------------- offline guard


@pytest.fixture(autouse=True)
def no_outbound(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    """Fail the test if anything *tries* a non-local connection (even if the caller swallowed
    the guard's error, as telemetry clients do), and run it in an empty cwd that must stay empty
    (DEEPEVAL_FILE_SYSTEM=READ_ONLY: no ./.deepeval files)."""
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


# --------------------------------------------------------------------------- helpers


class NoLLM(DeepEvalBaseLLM):
    """A stub judge: DeepEval's ToolCorrectnessMetric needs a model object even for its
    deterministic scoring; this one fails the test if it is ever called."""

    def __init__(self) -> None:
        super().__init__("no-llm")

    def load_model(self, *args: Any, **kwargs: Any) -> NoLLM:
        return self

    def generate(self, *args: Any, **kwargs: Any) -> str:
        raise AssertionError("the stub LLM was called")

    async def a_generate(self, *args: Any, **kwargs: Any) -> str:
        raise AssertionError("the stub LLM was called")

    def get_model_name(self, *args: Any, **kwargs: Any) -> str:
        return "no-llm"


def quiet_evaluate(cases: list[Any], metrics: list[Any], *, run_async: bool = True) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return evaluate(
            cases,
            metrics,
            async_config=AsyncConfig(run_async=run_async),
            display_config=DisplayConfig(show_indicator=False, print_results=False),
        )


def by_name(result: Any) -> dict[str, dict[str, Any]]:
    """{test case name: {metric name: MetricData}}."""
    return {t.name: {m.name: m for m in t.metrics_data} for t in result.test_results}


A1, A2, B1, C1 = Step("A", {"x": 1}), Step("A", {"x": 2}), Step("B", {"y": "q"}), Step("C", {})

# (actual calls, expected calls). Unit costs: a call's mass = 1 (tool) + 1 per argument.
PROOF = {
    "duplicate": ([A1, A1, B1], [A1, B1]),
    "extra": ([A1, B1, C1], [A1, B1]),
    "reorder": ([B1, A1], [A1, B1]),
    "dup_expected": ([A1, A1], [A1, A1]),
}


def proof_cases() -> list[LLMTestCase]:
    return [
        to_deepeval_test_case(
            Episode(k, input=f"task {k}", trajectory=pred, output="ok"),
            TaskSpec(k, gold="ok", gold_calls=gold),
        )
        for k, (pred, gold) in PROOF.items()
    ]


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("run_async", [True, False])
def test_evaluate_tool_calls_and_trajectory_where_deepeval_is_wrong(run_async: bool) -> None:
    tc = EkMetric(ToolCallMetric(), threshold=0.9)
    traj = EkMetric(TrajectoryMetric("exact"), threshold=0.9)
    theirs = ToolCorrectnessMetric(model=NoLLM(), include_reason=False, threshold=0.9)
    res = by_name(quiet_evaluate(proof_cases(), [tc, traj, theirs], run_async=run_async))
    ek_tc, ek_tr, de = tc.__name__, traj.__name__, theirs.__name__

    # duplicate A: ek tool calls TP 4 (A and B, mass 2 each), FP 2 -> 8/10 = 0.8;
    # exact trajectory: one insertion of mass 2 over worst case 4 + 6 -> 1 - 2/10 = 0.8.
    # DeepEval's default mode does not penalise the duplicate: 1.0, success.
    assert res["duplicate"][ek_tc].score == pytest.approx(0.8)
    assert res["duplicate"][ek_tr].score == pytest.approx(0.8)
    assert res["duplicate"][ek_tc].success is False
    assert res["duplicate"][de].score == 1.0 and res["duplicate"][de].success is True

    # extra C(): FP 1 -> 8/9; exact trajectory 1 - 1/9. DeepEval: 1.0.
    assert res["extra"][ek_tc].score == pytest.approx(8 / 9)
    assert res["extra"][ek_tr].score == pytest.approx(1 - 1 / 9)
    assert res["extra"][de].score == 1.0

    # reorder [B, A]: the calls are all right (multiset F1 1.0, valid) but the exact order is
    # not: NW cost 4 of worst case 8 -> 0.5, failing. DeepEval's default says 1.0.
    assert res["reorder"][ek_tc].score == 1.0 and res["reorder"][ek_tc].success is True
    assert res["reorder"][ek_tr].score == pytest.approx(0.5)
    assert res["reorder"][ek_tr].success is False
    assert res["reorder"][de].score == 1.0

    # expected [A, A], called [A, A]: perfect. DeepEval's set-based matching says 0.5 (#3141).
    assert res["dup_expected"][ek_tc].score == 1.0
    assert res["dup_expected"][ek_tr].score == 1.0
    assert res["dup_expected"][de].score == 0.5

    # ek's reason and detail arrive intact; the cases give no tools (metadata["tools"]), so the
    # reason also says the weights were unit ones (issue 32, item 7).
    md = res["duplicate"][ek_tc]
    direct = ToolCallMetric()([A1, A1, B1], TaskSpec("d", gold_calls=[A1, B1])).reason
    assert md.reason == f"{direct}; " + (
        "unit weights: the task gives no tools (metadata['tools']: the task's ToolSpec dicts), "
        "so every tool and every argument weighs 1"
    )
    detail = json.loads(md.verbose_logs)
    assert (detail["tp"], detail["fp"], detail["fn"], detail["passed"]) == (4.0, 2.0, 0.0, False)
    assert md.evaluation_model.startswith("ek-agents")


def test_original_instance_untouched_and_copies_rebuilt() -> None:
    # The async path measures copies built from vars() ∩ __init__ params: all must be stored.
    m = EkMetric(
        "cost_per_success",
        threshold=0.05,
        price=per_million(1.0, 1.0),
        check="output",
        name="cop",
        include_reason=False,
        use_trace=False,
    )
    (copy,) = copy_metrics([m])
    assert type(copy) is EkMetric and copy is not m
    for attr in ("metric", "threshold", "check", "price", "name", "include_reason", "use_trace"):
        assert getattr(copy, attr) == getattr(m, attr), attr
    assert copy.__name__ == m.__name__ == "cop"
    quiet_evaluate(proof_cases()[:1], [m])
    assert m.score is None  # DeepEval never measured the original


def test_lower_is_better_cost_of_pass_success() -> None:
    price = per_million(1.0, 1.0)  # $1 per million tokens, input and output
    m = EkMetric(CostPerSuccessMetric(price=price), threshold=0.01)
    cheap = Episode("cheap", input="q", output="a", cost=Cost(input_tokens=1000))  # $0.001
    costly = Episode("costly", input="q", output="a", cost=Cost(input_tokens=100_000))  # $0.1
    failed = Episode("failed", input="q", output="b", cost=Cost(input_tokens=1000))  # cheap, wrong
    unknown = Episode("unknown", input="q", output="a", cost=Cost(input_tokens=10, model="m"))
    cases = [to_deepeval_test_case(e, "a") for e in (cheap, costly, failed)]
    res = by_name(quiet_evaluate(cases, [m]))
    name = m.__name__
    assert res["cheap"][name].score == pytest.approx(0.001) and res["cheap"][name].success
    assert res["costly"][name].score == pytest.approx(0.1) and not res["costly"][name].success
    # A failed task has an infinite cost per success: never passes, however cheap.
    assert not res["failed"][name].success
    # Unknown dollars (no price for the model): NaN, a reason, a failure.
    m2 = EkMetric(CostPerSuccessMetric(prices={}), threshold=0.01)
    assert math.isnan(m2.measure(to_deepeval_test_case(unknown, "a")))
    assert m2.is_successful() is False and "dollars unknown" in m2.reason
    assert json.loads(m2.verbose_logs)["dollars"] is None


def test_unique_name_per_configuration() -> None:
    names = {
        EkMetric(TrajectoryMetric(s), threshold=0.5).__name__
        for s in ("exact", "in_order", "any_order", "superset")
    }
    names |= {
        EkMetric(TaskSuccessMetric(c), threshold=1).__name__ for c in ("output", "final_state")
    }
    assert len(names) == 6
    assert all(n.startswith("ek:") for n in names)
    same = EkMetric(TrajectoryMetric("exact"), threshold=0.5).__name__
    assert same in names  # deterministic: no addresses, no counters


def test_assert_test_in_plain_pytest() -> None:
    passing, failing = proof_cases()[3], proof_cases()[0]
    m = EkMetric(ToolCallMetric(), threshold=0.9)
    assert_test(passing, [m])
    with pytest.raises(AssertionError) as e:
        assert_test(failing, [EkMetric(ToolCallMetric(), threshold=0.9)])
    # DeepEval's message carries ek's score and reason: F1 0.8 with the extra A named.
    assert "score: 0.8" in str(e.value) and "extra A" in str(e.value)


def test_conversational_metric_end_to_end() -> None:
    ep = Episode("conv", input="hi", trajectory=[A1, A1, B1], output="done")
    case = to_deepeval_test_case(
        ep, TaskSpec("conv", gold="done", gold_calls=[A1, B1]), conversational=True
    )
    assert isinstance(case, ConversationalTestCase)
    m = EkConversationalMetric(ToolCallMetric(), threshold=0.9)
    res = by_name(quiet_evaluate([case], [m]))
    assert res["conv"][m.__name__].score == pytest.approx(0.8)  # as in the duplicate case
    with pytest.raises(ValueError, match="not a valid metric"):
        quiet_evaluate([case], [EkMetric(ToolCallMetric(), threshold=0.9)])


def test_turn_level_conventions() -> None:
    case = ConversationalTestCase(
        turns=[
            Turn(role="user", content="refund A1"),
            Turn(
                role="assistant",
                content="",
                tools_called=[
                    ToolCall(name="lookup", input_parameters={"id": "A1"}, output="paid")
                ],
                metadata={"step_errors": ["slow"], "cost": {"input_tokens": 5, "output_tokens": 1}},
            ),
            Turn(role="assistant", content="refunded"),
        ],
        expected_outcome="refunded",
        metadata={"task_id": "r1", "expected_tools": [{"name": "lookup", "args": {"id": "A1"}}]},
    )
    ep, gold = from_deepeval_test_case(case)
    assert (ep.task_id, ep.input, ep.output) == ("r1", "refund A1", "refunded")
    assert ep.trajectory[0] == Step("lookup", {"id": "A1"}, observation="paid", error="slow")
    assert ep.agent_cost.total_tokens == 6 and gold.gold_calls.tools == ("lookup",)


def test_errors_become_runtime_errors_and_run_once() -> None:
    calls = []

    def boom(ep: Any, gold: Any) -> bool:
        calls.append(ep.task_id)
        raise TypeError("checker bug")

    m = EkMetric(TaskSuccessMetric(check=boom), threshold=1.0)
    case = LLMTestCase(input="q", actual_output="a", metadata={"task_id": "t"})
    with contextlib.redirect_stdout(io.StringIO()):
        res = evaluate(
            [case],
            [m],
            async_config=AsyncConfig(run_async=False),
            display_config=DisplayConfig(show_indicator=False, print_results=False),
            error_config=ErrorConfig(ignore_errors=True),
        )
    md = res.test_results[0].metrics_data[0]
    assert md.success is False and "checker bug" in md.error
    assert calls == ["t"]  # a TypeError would have made DeepEval call measure() twice
    with pytest.raises(EkAdapterError, match="checker bug"):
        m.measure(case)


def test_constructor_validation() -> None:
    with pytest.raises(TypeError, match="threshold must be a number"):
        EkMetric(TaskSuccessMetric(), threshold="high")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        EkMetric(TaskSuccessMetric(), threshold=math.inf)
    with pytest.raises(ValueError, match="pass them to its constructor"):
        EkMetric(TaskSuccessMetric(), threshold=1, check="final_state")
    with pytest.raises(TypeError, match="does not take"):
        EkMetric(TaskSuccessMetric, threshold=1, price=per_million(1, 1))
    with pytest.raises(ValueError, match="lower-is-better"):
        EkMetric(CostPerSuccessMetric(), threshold=1, strict_mode=True)
    with pytest.raises(EkAdapterError, match="use_trace=True needs a DeepEval trace"):
        EkMetric(TaskSuccessMetric(), threshold=1, use_trace=True).measure(
            LLMTestCase(input="q", actual_output="a")
        )


def test_strict_mode_is_binary() -> None:
    m = EkMetric(ToolCallMetric(), threshold=0.5, strict_mode=True)
    assert m.threshold == 1.0
    assert m.measure(proof_cases()[0]) == 0.0 and m.success is False  # 0.8 -> 0 under strict
    assert json.loads(m.verbose_logs)["tp"] == 4.0  # ek's own numbers are still there


def test_concurrent_copies_share_no_state() -> None:
    # 40 copies measured at once, on an event loop and on threads: each keeps its own result.
    cases = proof_cases() * 10
    want = [EkMetric(ToolCallMetric(), threshold=0.9).measure(c) for c in cases]
    base = EkMetric(ToolCallMetric(), threshold=0.9)

    async def run_all() -> list[float]:
        copies = copy_metrics([base] * len(cases))
        await asyncio.gather(*(m.a_measure(c) for m, c in zip(copies, cases)))
        return [m.score for m in copies]

    assert asyncio.run(run_all()) == want
    copies = copy_metrics([base] * len(cases))
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda mc: mc[0].measure(mc[1]), zip(copies, cases)))
    assert [m.score for m in copies] == want
    assert base.score is None


def test_import_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for mod in [m for m in sys.modules if m.startswith("ek.adapters.deepeval")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "deepeval", None)
    with pytest.raises(ImportError, match=r"pip install ek-agents\[deepeval\]"):
        import ek.adapters.deepeval  # noqa: F401


# --------------------------------------------------------------------------- round trips

from test_bridge_deepeval import episodes, steps  # noqa: E402  (shared strategies)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ep=episodes, gold_calls=st.lists(steps, max_size=3), conversational=st.booleans())
def test_round_trip_episode_deepeval_episode(
    ep: Episode, gold_calls: list[Step], conversational: bool
) -> None:
    gold = TaskSpec(ep.task_id, gold="answer", gold_calls=gold_calls)
    case = to_deepeval_test_case(ep, gold, conversational=conversational)
    back, gold_back = from_deepeval_test_case(case)
    assert back == ep  # names, args, observations, errors, ids, token counts by kind, ...
    assert gold_back.gold == "answer"
    assert [(s.tool, dict(s.args)) for s in gold_back.gold_calls] == [
        (s.tool, dict(s.args)) for s in gold_calls
    ]


def test_round_trip_token_views() -> None:
    # DeepEval's own counts are totals: input = uncached + cache reads + cache writes.
    ep = Episode(
        "t",
        cost=Cost(
            input_tokens=100,
            cache_read_tokens=50,
            cache_write_tokens=5,
            output_tokens=20,
            reasoning_tokens=8,
            dollars=0.5,
        ),
    )
    case = to_deepeval_test_case(ep)
    assert from_deepeval_test_case(case)[0].cost == ep.cost  # the breakdown rides in metadata
    if "input_token_count" not in LLMTestCase.model_fields:
        pytest.skip("DeepEval before 4.0.9 has no token-count fields (ek's counts: metadata)")
    assert (case.input_token_count, case.output_token_count, case.token_cost) == (155, 20, 0.5)
    # Without the breakdown, DeepEval's counts read as uncached input and output.
    bare = LLMTestCase(input="q", actual_output="a", input_token_count=155, output_token_count=20)
    assert from_deepeval_test_case(bare)[0].cost == (Cost(input_tokens=155, output_tokens=20),)


def test_gold_shapes() -> None:
    ep = Episode("g", input="q", output={"answer": 4})
    case = to_deepeval_test_case(ep, Trajectory([A1]))
    assert case.expected_tools == [ToolCall(name="A", input_parameters={"x": 1})]
    case = to_deepeval_test_case(ep, {"o1": "refunded"})
    assert json.loads(case.expected_output) == {"o1": "refunded"}
    back, gold = from_deepeval_test_case(case)
    assert gold.gold == {"o1": "refunded"} and back.output == {"answer": 4}
    with pytest.raises(TypeError, match="expects an Episode"):
        to_deepeval_test_case("not an episode")  # type: ignore[arg-type]


def test_adapter_docstring_examples() -> None:
    # adapters/ is outside the doctest testpaths (tests/, ek/): run its examples here.
    import doctest

    import ek.adapters.deepeval._convert as conv
    import ek.adapters.deepeval._metric as met

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    for mod in (sys.modules["ek.adapters.deepeval"], conv, met):
        assert doctest.testmod(mod, optionflags=flags).failed == 0, mod.__name__
