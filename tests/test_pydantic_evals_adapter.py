"""pydantic-evals as a host, end to end and offline: a real pydantic-ai Agent with three tools,
driven by ``FunctionModel`` (scripted tool calls and usage), instrumented with OpenTelemetry,
run by a pydantic-evals ``Dataset`` with ``repeat=3`` and scored by ``EkEvaluator``.

Every score must equal what the ek metric gives when the same calls are handed over as an
Episode directly, and the report must read back into ek's counts, pass^k, Cost-of-Pass and gate.
Nothing connects out (tests/conftest.py fails any outbound connection); no API key is used.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_evals")
pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.sdk.trace")

from ek.adapters.pydantic_evals import (
    EkEvaluator,
    episode_from_context,
    gold_from_context,
    score_results,
    summary_from_report,
)
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext
from pydantic_evals.otel import SpanTreeRecordingError

from ek.agents.base import Cost, Episode, Step, TaskSpec
from ek.agents.cost import cost_of_pass, per_million
from ek.agents.harness import agent_regression_gate
from ek.agents.metrics import TaskSuccessMetric
from ek.agents.reliability import reliability
from ek.agents.toolcalls import ToolCallMetric, normalize_calls
from ek.agents.trajectory import TrajectoryMetric
from ek.base import Score

ROOT = Path(__file__).resolve().parents[1]

# -- the scripted agent ------------------------------------------------------------------------
#
# SCRIPTS[case][run] is what the model does on that run: a list of turns, each a list of
# (tool, args) calls or a final text, with its usage (input incl. cache reads, output, cache reads).


@dataclass(frozen=True)
class Turn:
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    text: str | None = None
    usage: tuple[int, int, int] = (0, 0, 0)


REFUND_OK = [
    Turn(calls=(("lookup_order", {"order_id": "A1"}),), usage=(100, 10, 20)),
    Turn(calls=(("refund", {"order_id": "A1", "amount": 20}),), usage=(150, 12, 0)),
    Turn(text="refunded 20", usage=(200, 5, 0)),
]
REFUND_WRONG = [  # the amount is wrong, and so is the answer
    Turn(calls=(("lookup_order", {"order_id": "A1"}),), usage=(100, 10, 20)),
    Turn(calls=(("refund", {"order_id": "A1", "amount": 30}),), usage=(150, 12, 0)),
    Turn(text="refunded 30", usage=(200, 5, 0)),
]
STATUS_OK = [
    Turn(calls=(("lookup_order", {"order_id": "B2"}),), usage=(80, 8, 0)),
    Turn(text="shipped", usage=(120, 3, 0)),
]
STATUS_EXTRA = [  # one extra (unrequested) notification, same answer
    Turn(calls=(("lookup_order", {"order_id": "B2"}),), usage=(80, 8, 0)),
    Turn(calls=(("notify", {"email": "a@b.c"}),), usage=(100, 6, 0)),
    Turn(text="shipped", usage=(120, 3, 0)),
]
SCRIPTS: dict[str, list[list[Turn]]] = {
    "refund A1 for 20": [REFUND_OK, REFUND_OK, REFUND_WRONG],
    "status of B2": [STATUS_OK, STATUS_EXTRA, STATUS_OK],
}


class ScriptedAgent:
    """A pydantic-ai Agent whose FunctionModel plays SCRIPTS, one run after another per prompt."""

    def __init__(self, scripts: dict[str, list[list[Turn]]]) -> None:
        self.scripts = scripts
        self.runs: dict[str, int] = {}
        self.agent = Agent(
            FunctionModel(self._respond, model_name="scripted-model"),
            name="shop",
            capabilities=[Instrumentation()],
        )

        @self.agent.tool_plain
        def lookup_order(order_id: str) -> dict[str, str]:
            return {"order_id": order_id, "status": "paid"}

        @self.agent.tool_plain
        def refund(order_id: str, amount: float) -> str:
            return f"refunded {amount:g} on {order_id}"

        @self.agent.tool_plain
        def notify(email: str) -> str:
            return "sent"

    def _respond(self, messages: list[Any], info: AgentInfo) -> ModelResponse:
        prompt = messages[0].parts[-1].content
        turn_no = sum(1 for m in messages if m.kind == "response")
        turn = self.scripts[prompt][self.runs.get(prompt, 0)][turn_no]
        inp, out, cached = turn.usage
        usage = RequestUsage(input_tokens=inp, output_tokens=out, cache_read_tokens=cached)
        if turn.text is not None:
            return ModelResponse(parts=[TextPart(turn.text)], usage=usage)
        parts = [
            ToolCallPart(tool, args, tool_call_id=f"call-{turn_no}-{i}")
            for i, (tool, args) in enumerate(turn.calls)
        ]
        return ModelResponse(parts=parts, usage=usage)

    # A coroutine method, not an async __call__: pydantic-evals before 2.32 awaits a task only
    # when it is a coroutine function (an instance was called and its coroutine dropped).
    async def run(self, prompt: str) -> str:
        result = await self.agent.run(prompt)
        self.runs[prompt] = self.runs.get(prompt, 0) + 1
        return result.output


def _direct_episode(task_id: str, script: list[Turn], model: str = "scripted-model") -> Episode:
    """The same run handed to ek directly: the calls in order, the output, the usage."""
    steps = [Step(tool, args) for t in script for tool, args in t.calls]
    inp = sum(t.usage[0] for t in script)
    cached = sum(t.usage[2] for t in script)
    cost = Cost(
        input_tokens=inp - cached,  # ek's input_tokens are uncached input
        cache_read_tokens=cached,
        output_tokens=sum(t.usage[1] for t in script),
        model=model,
    )
    return Episode(task_id, trajectory=steps, output=script[-1].text, cost=cost)


CASES = [
    Case(
        name="refund",
        inputs="refund A1 for 20",
        expected_output="refunded 20",
        metadata={
            "gold_calls": [
                {"name": "lookup_order", "arguments": {"order_id": "A1"}},
                {"name": "refund", "arguments": {"order_id": "A1", "amount": 20}},
            ]
        },
    ),
    Case(  # gold calls as expected_output; the expected answer in metadata["gold"]
        name="status",
        inputs="status of B2",
        expected_output=[{"lookup_order": {"order_id": "B2"}}],
        metadata={"gold": "shipped"},
    ),
]
GOLD = {
    "refund": TaskSpec(
        "refund", gold="refunded 20", gold_calls=normalize_calls(CASES[0].metadata["gold_calls"])
    ),
    "status": TaskSpec(
        "status", gold="shipped", gold_calls=[Step("lookup_order", {"order_id": "B2"})]
    ),
}
PROMPT = {"refund": "refund A1 for 20", "status": "status of B2"}


@pytest.fixture(scope="module", autouse=True)
def sdk_tracer_provider() -> None:
    """pydantic-evals records ctx.span_tree only under an OpenTelemetry SDK tracer provider."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())


EPISODES: list[Episode] = []


@dataclass(repr=False)
class CaptureEpisode(Evaluator):
    """Test helper: keeps the Episode ek builds from the real context (scores nothing)."""

    def evaluate(self, ctx: EvaluatorContext) -> dict[str, bool]:
        EPISODES.append(episode_from_context(ctx))
        return {}


METRICS = [ToolCallMetric(), TrajectoryMetric(), TaskSuccessMetric(check="output")]


@pytest.fixture(scope="module")
def report():
    EPISODES.clear()
    ds = Dataset(
        name="shop",
        cases=CASES,
        evaluators=[*(EkEvaluator(m) for m in METRICS), CaptureEpisode()],
    )
    # max_concurrency=1: the runs execute in order (case by case, run 1..3), as SCRIPTS lists them
    return ds.evaluate_sync(ScriptedAgent(SCRIPTS).run, repeat=3, max_concurrency=1, progress=False)


def test_repeats_are_named_and_grouped_by_case(report):
    assert report.failures == []
    assert [c.name for c in report.cases] == [
        "refund [1/3]", "refund [2/3]", "refund [3/3]",
        "status [1/3]", "status [2/3]", "status [3/3]",
    ]  # fmt: skip
    assert {c.source_case_name for c in report.cases} == {"refund", "status"}


def test_the_episode_from_the_span_tree_is_the_run(report):
    """The calls and usage read from ctx.span_tree are exactly the scripted ones."""
    assert len(EPISODES) == 6
    for ep, case in zip(EPISODES, report.cases):
        run = int(case.name[-4]) - 1
        want = _direct_episode(case.source_case_name, SCRIPTS[PROMPT[ep.task_id]][run])
        assert ep.task_id == want.task_id
        assert [(s.tool, dict(s.args)) for s in ep.trajectory] == [
            (s.tool, dict(s.args)) for s in want.trajectory
        ]
        assert all(s.observation is not None and s.id for s in ep.trajectory)
        assert ep.output == want.output
        assert ep.agent_cost.tokens() == want.agent_cost.tokens()
        assert len(ep.metadata["trace"]["trace_id"]) == 32  # the scored trace (for results out)
    # refund run 1 by hand: input 100+150+200 = 450 of which 20 cache reads -> 430 uncached;
    # output 10+12+5 = 27
    c = EPISODES[0].agent_cost
    assert (c.input_tokens, c.cache_read_tokens, c.output_tokens) == (430, 20, 27)


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.name)
def test_scores_equal_ek_on_the_same_calls_handed_over_directly(report, metric):
    for case in report.cases:
        task = case.source_case_name
        run = int(case.name[-4]) - 1
        direct = metric(_direct_episode(task, SCRIPTS[PROMPT[task]][run]), GOLD[task])
        results = {**case.scores, **case.labels, **case.assertions}
        want = score_results(metric.name, direct)
        got = {
            n: r for n, r in results.items() if n == metric.name or n.startswith(metric.name + ".")
        }
        assert set(got) == set(want)
        for name, w in want.items():
            value, reason = (w.value, w.reason) if isinstance(w, EvaluationReason) else (w, None)
            assert got[name].value == value and type(got[name].value) is type(value)
            assert got[name].reason == reason
            assert got[name].source.name == "EkEvaluator"


def test_hand_derived_values(report):
    by_name = {c.name: c for c in report.cases}
    # refund run 3: lookup matches (tool 1 + order_id 1 = 2 TP); refund's tool and order_id match
    # (2 TP) but amount is wrong (1 FP + 1 FN): F1 = 2*4 / (2*4 + 1 + 1) = 0.8, not valid
    r3 = by_name["refund [3/3]"]
    assert r3.scores["tool_calls"].value == pytest.approx(0.8)
    assert r3.assertions["tool_calls.passed"].value is False
    assert r3.assertions["task_success.passed"].value is False
    # status run 2: lookup matches (2 TP); the extra notify call costs its mass (tool 1 + email 1
    # = 2 FP): F1 = 2*2 / (2*2 + 2) = 0.6667
    s2 = by_name["status [2/3]"]
    assert s2.scores["tool_calls"].value == pytest.approx(4 / 6)
    assert (s2.scores["tool_calls.fp"].value, s2.scores["tool_calls.fn"].value) == (2.0, 0.0)
    assert "extra" in s2.scores["tool_calls"].reason
    assert s2.assertions["task_success.passed"].value is True


def test_the_report_reads_back_into_counts_pass_k_metrics_and_cost_of_pass(report):
    price = per_million(1.0, 4.0, cache_read=0.5)
    s = summary_from_report(report, success="task_success", price=price, model="scripted-model")
    # task_success: refund passes runs 1, 2 (run 3 answers "refunded 30"); status passes all 3
    assert dict(s.counts) == {"refund": (3, 2), "status": (3, 3)} and s.k == 3
    assert s.source == report.name

    rel = reliability(s.counts, 3)
    # pass^1 = mean(2/3, 3/3) = 5/6; pass^3 = mean(C(2,3)/C(3,3) = 0, 1) = 1/2
    assert rel.pass_hat_k[1].point == pytest.approx(5 / 6)
    assert rel.pass_hat_k[3].point == pytest.approx(0.5)

    # each metric's corpus value is ek's ratio-of-sums aggregate over the six direct scores
    for metric in METRICS:
        direct = [
            metric(_direct_episode(t, SCRIPTS[PROMPT[t]][r]), GOLD[t])
            for t in ("refund", "status")
            for r in range(3)
        ]
        ms = s.metrics[metric.name]
        assert ms.value == pytest.approx(metric.aggregate(direct))
        assert ms.higher_is_better is True
        got = [x for t in ("refund", "status") for x in ms.scores[t]]
        assert [x.value for x in got] == pytest.approx([d.value for d in direct])
        assert [x.passed for x in got] == [d.passed for d in direct]

    # Cost-of-Pass = total agent dollars / successes, priced the same way as the direct episodes
    direct_eps = [
        _direct_episode(t, SCRIPTS[PROMPT[t]][r]) for t in ("refund", "status") for r in range(3)
    ]
    from ek.agents.cost import dollars

    total = math.fsum(dollars(ep.agent_cost, price) for ep in direct_eps)
    assert s.cost["cost_of_pass"] == pytest.approx(cost_of_pass(total, 5))
    assert s.pricing == {"price": price.to_dict()}


def test_default_success_is_every_assertion_and_a_callable_works(report):
    s = summary_from_report(report)  # all assertions: tool_calls/trajectory/task_success passed
    # refund: runs 1, 2 pass everything, run 3 fails; status: run 2 has an extra call
    # (tool_calls not valid, trajectory in_order still passes), runs 1 and 3 pass
    assert dict(s.counts) == {"refund": (3, 2), "status": (3, 2)}
    s = summary_from_report(report, success=lambda case: case.output == "shipped")
    assert dict(s.counts) == {"refund": (3, 0), "status": (3, 3)}
    with pytest.raises(TypeError, match="success must be None, an evaluation name or a callable"):
        summary_from_report(report, success=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="report must be a pydantic-evals EvaluationReport"):
        summary_from_report({"cases": []}.items())


def test_the_gate_sees_a_real_regression_between_two_reports(tmp_path):
    tasks = [f"status of order {i}" for i in range(8)]

    def scripts(answer: str) -> dict[str, list[list[Turn]]]:
        run = [
            Turn(calls=(("lookup_order", {"order_id": "X"}),), usage=(50, 5, 0)),
            Turn(text=answer, usage=(60, 2, 0)),
        ]
        return {t: [run, run, run] for t in tasks}

    cases = [Case(name=f"t{i}", inputs=t, expected_output="shipped") for i, t in enumerate(tasks)]
    ds = Dataset(
        name="gate", cases=cases, evaluators=[EkEvaluator("task_success", use_spans=False)]
    )
    good = ds.evaluate_sync(ScriptedAgent(scripts("shipped")).run, repeat=3, progress=False)
    bad = ds.evaluate_sync(ScriptedAgent(scripts("lost")).run, repeat=3, progress=False)
    baseline = summary_from_report(good, success="task_success")
    current = summary_from_report(bad, success="task_success")
    assert baseline.n_successes == 24 and current.n_successes == 0
    result = agent_regression_gate(current, baseline)
    assert result.regressions and not result.passed
    assert agent_regression_gate(baseline, baseline).passed

    # saved as baselines, the two reports go through `ek-agents report` and `ek-agents gate`
    from ek.agents.cli import main
    from ek.agents.harness import save_agent_baseline

    save_agent_baseline(baseline, tmp_path / "base.json")
    save_agent_baseline(current, tmp_path / "new.json")
    assert main(["report", str(tmp_path / "base.json")]) == 0
    assert main(["gate", str(tmp_path / "base.json"), str(tmp_path / "new.json")]) == 1
    assert main(["gate", str(tmp_path / "base.json"), str(tmp_path / "base.json")]) == 0


def test_a_failed_task_run_is_a_failed_trial():
    calls = {"n": 0}

    async def flaky(prompt: str) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("tool backend down")
        return "shipped"

    ds = Dataset(
        name="flaky",
        cases=[Case(name="s", inputs="status", expected_output="shipped")],
        evaluators=[EkEvaluator(TaskSuccessMetric(check="output"), use_spans=False)],
    )
    rep = ds.evaluate_sync(flaky, repeat=3, max_concurrency=1, progress=False)
    s = summary_from_report(rep, success="task_success")
    assert dict(s.counts) == {"s": (3, 2)}
    failed = [ep for ep in s.episodes if ep.error]
    assert len(failed) == 1 and "tool backend down" in failed[0].error and failed[0].trial == 1


def _context(**kw: Any) -> EvaluatorContext:
    base: dict[str, Any] = {
        "name": "c",
        "inputs": "q",
        "metadata": None,
        "expected_output": None,
        "output": "a",
        "duration": 0.5,
        "_span_tree": SpanTreeRecordingError("no tracer provider"),
        "attributes": {},
        "metrics": {},
    }
    base.update(kw)
    return EvaluatorContext(**base)


def test_without_a_span_tree_the_evaluator_says_how_to_get_one():
    ctx = _context()
    with pytest.raises(RuntimeError, match=r"set_tracer_provider\(TracerProvider\(\)\)"):
        episode_from_context(ctx)
    ep = episode_from_context(ctx, use_spans=False)  # output-only metrics need no spans
    assert (ep.task_id, ep.output, len(ep.trajectory), ep.duration) == ("c", "a", 0, 0.5)


def test_gold_from_metadata_and_expected_output():
    g = gold_from_context(
        _context(metadata={"task_id": "T", "gold_calls": [{"a": {"x": 1}}]}, expected_output="ok")
    )
    assert (g.task_id, g.gold, g.gold_calls.tools) == ("T", "ok", ("a",))
    g = gold_from_context(_context(expected_output=[{"name": "a", "arguments": {}}]))
    assert (g.gold, g.gold_calls.tools) == (None, ("a",))
    g = gold_from_context(_context(expected_output=[{"not": "a call", "too": "many keys"}]))
    assert g.gold_calls is None and g.gold == [{"not": "a call", "too": "many keys"}]
    from ek.agents.toolcalls import CallShapeError

    with pytest.raises(CallShapeError):
        gold_from_context(_context(metadata={"gold_calls": {"a": {}}}))  # one call, not a list


def test_non_finite_values_become_labels_and_read_back():
    r = score_results("cost_per_success", Score(math.inf, {"passed": False, "successes": 0}))
    assert r["cost_per_success"].value == "inf" and r["cost_per_success.successes"] == 0
    assert score_results("j", Score(math.nan))["j"].value == "undefined"


def test_bad_evaluator_arguments_are_refused():
    with pytest.raises(ValueError, match="scope must be one of"):
        EkEvaluator("tool_calls", scope="mine")
    with pytest.raises(TypeError, match="metric must be an ek metric"):
        EkEvaluator(42)
    assert EkEvaluator("tool_calls").as_spec().arguments == ("tool_calls",)


def test_importing_without_the_extra_names_it():
    code = textwrap.dedent(
        """
        import importlib.abc, sys
        class _NoPydanticEvals(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] == "pydantic_evals":
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None
        sys.meta_path.insert(0, _NoPydanticEvals())
        try:
            import ek.adapters.pydantic_evals
        except ImportError as e:
            print("ImportError:", e)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert "pip install ek-agents[pydantic-evals]" in proc.stdout, proc.stdout


@pytest.mark.slow
def test_the_example_runs_offline():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "pydantic_evals_example.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    # refund runs 1, 2 right; run 3 refunds 200 instead of 20: tool calls F1 = 2*4/(2*4+1+1)
    assert "refund-A1 [3/3]        0.800      0.800  FAIL" in out
    assert "counts            {'refund-A1': (3, 2), 'status-B2': (3, 3)}" in out
    # pass^3 = mean(C(2,3)/C(3,3) = 0, 1) = 0.5
    assert any(line.startswith("pass^3            0.500") for line in out)
    # micro-F1: TP 5+5+4+2+2+2 = 20, FP 1, FN 1 -> 40/42 = 0.9524
    assert "tool_calls        0.9524" in out
    # dollars per refund run: inputs 1200+1500+1800 = 4500 at $2.5/M + outputs 3*60 at $10/M =
    # 0.01305; per status run: 2700 and 120 -> 0.00795; (3*0.01305 + 3*0.00795) / 5 successes
    assert "Cost-of-Pass      $0.012600 per successful task" in out


def test_an_uninstrumented_task_is_refused_not_scored():
    async def plain(prompt: str) -> str:  # no agent, no spans
        return "shipped"

    ds = Dataset(
        name="plain",
        cases=[Case(name="s", inputs="q", metadata={"gold_calls": [{"lookup_order": {}}]})],
        evaluators=[EkEvaluator("tool_calls")],
    )
    (case,) = ds.evaluate_sync(plain, progress=False).cases
    # no 0.0 (the one gold call "missed"): the run's evaluator failure says to instrument it
    assert case.scores == {}
    (failure,) = case.evaluator_failures
    assert failure.error_message.startswith("NoAgentRunError: case 's': ctx.span_tree holds no")
    assert "instrument the agent" in failure.error_message
