"""pydantic-evals as its users expect (issue 32, items 10 and 11), through the real host.

A real pydantic-ai ``Agent`` driven by ``FunctionModel`` (scripted calls, offline), a real
``Dataset.evaluate`` with ``EkEvaluator``, a real OpenTelemetry SDK tracer provider:

- (10) the agent of one case is not instrumented: its span tree holds no agent run, so ek
  cannot know its calls. ``EkEvaluator`` refuses it (the run's evaluator failure, saying to
  instrument the agent) instead of scoring every gold call missed: no 0.0 reaches
  pydantic-evals' averages or ek's aggregate, and ``summary_from_report`` counts the run
  unscored with the refusal as the reason.
- (11) reasons are shown by ``report.print(include_reasons=True)`` (the README says so), and the
  ``[pydantic-evals]`` extra installs every distribution ``examples/pydantic_evals_example.py``
  imports (opentelemetry-sdk was only in ``dev``).
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from _installs import extra_distributions, normalise

pytest.importorskip("pydantic_evals")
pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.sdk.trace")

from ek.adapters.pydantic_evals import EkEvaluator, NoAgentRunError, summary_from_report
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_evals import Case, Dataset
from rich.console import Console

from ek.agents.metrics import TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric

ROOT = Path(__file__).resolve().parents[1]
GOLD_CALLS = [{"lookup_order": {"order_id": "A1"}}, {"refund": {"order_id": "A1", "amount": 20}}]


def _model(messages: list[Any], info: AgentInfo) -> ModelResponse:
    """Lookup, then refund 20, then answer: both gold calls made, the right answer."""
    turn = sum(1 for m in messages if m.kind == "response")
    if turn == 0:
        return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": "A1"}, "c0")])
    if turn == 1:
        return ModelResponse(parts=[ToolCallPart("refund", {"order_id": "A1", "amount": 20}, "c1")])
    return ModelResponse(parts=[TextPart("refunded 20")])


def _agent(instrumented: bool) -> Agent[None, str]:
    caps = [Instrumentation()] if instrumented else []
    agent: Agent[None, str] = Agent(FunctionModel(_model), name="shop", capabilities=caps)

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        return "paid"

    @agent.tool_plain
    def refund(order_id: str, amount: float) -> str:
        return f"refunded {amount:g}"

    return agent


@pytest.fixture(scope="module", autouse=True)
def sdk_tracer_provider() -> None:
    """The user set a tracer provider (what pydantic-evals needs to record ctx.span_tree)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())


@pytest.fixture(scope="module")
def report() -> Any:
    """Case "seen" runs an instrumented agent, case "unseen" the same agent uninstrumented."""
    agents = {"seen": _agent(True), "unseen": _agent(False)}

    async def task(case: str) -> str:
        return (await agents[case].run("refund $20 on A1")).output

    ds = Dataset(
        name="refunds",
        cases=[
            Case(
                name=c, inputs=c, expected_output="refunded 20", metadata={"gold_calls": GOLD_CALLS}
            )
            for c in agents
        ],
        evaluators=[EkEvaluator(ToolCallMetric()), EkEvaluator(TaskSuccessMetric(check="output"))],
    )
    return ds.evaluate_sync(task, progress=False)


def _case(report: Any, name: str) -> Any:
    (case,) = [c for c in report.cases if c.name == name]
    return case


def test_an_uninstrumented_agent_is_refused_with_the_fix_not_scored(report):
    unseen = _case(report, "unseen")
    assert unseen.scores == {} and unseen.assertions == {}  # no 0.0, no False
    messages = {f.name: f.error_message for f in unseen.evaluator_failures}
    assert set(messages) == {"tool_calls", "task_success"}
    for message in messages.values():
        assert message.startswith(f"{NoAgentRunError.__name__}: case 'unseen': ")
        assert "instrument the agent" in message and "Instrumentation()" in message
    # the instrumented case scores as the metric does on the same calls: both gold calls made
    seen = _case(report, "seen")
    assert seen.scores["tool_calls"].value == 1.0 and seen.evaluator_failures == []


def test_the_refused_run_stays_out_of_both_hosts_aggregates(report):
    # pydantic-evals' average is the instrumented run's 1.0, not (1.0 + 0.0) / 2 = 0.5
    assert report.averages().scores["tool_calls"] == 1.0
    summary = summary_from_report(report, success="task_success")
    assert summary.metrics["tool_calls"].value == 1.0  # micro-F1 over the one scored run
    assert dict(summary.counts) == {"seen": (1, 1)}
    assert summary.unscored is not None and (summary.unscored.n, summary.unscored.of) == (1, 2)
    assert summary.unscored.reason.startswith("run 'unseen' trial 0: EkEvaluator task_success: ")
    assert "instrument the agent" in summary.unscored.reason


def test_a_verdict_refused_on_every_run_is_said_so(report):
    unseen_only = type(report)(
        name=report.name, cases=[_case(report, "unseen")], failures=[]
    )  # the report of a run where nothing was instrumented
    with pytest.raises(ValueError, match="success='task_success' failed on every run") as e:
        summary_from_report(unseen_only, success="task_success")
    assert "instrument the agent" in str(e.value)


def test_reasons_show_with_include_reasons_as_the_readme_says(report):
    def printed(**kw: Any) -> str:
        console = Console(record=True, width=400)
        report.print(console=console, **kw)
        return console.export_text()

    reason = _case(report, "seen").scores["tool_calls"].reason
    assert reason and reason not in printed()
    assert reason in printed(include_reasons=True)
    readme = (ROOT / "README.md").read_text()
    assert "include_reasons=True" in readme


def _imported_modules(path: Path) -> set[str]:
    """The modules a file imports (``from a import b`` is ``a.b`` when b is a module)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if _spec(sub) is not None else node.module)
    return out


def _spec(module: str) -> Any:
    try:
        return importlib.util.find_spec(module)
    except ModuleNotFoundError:
        return None


def _owner(module: str) -> str | None:
    """The distribution whose files hold the module (a namespace package spans several)."""
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top in ("ek", "__future__"):
        return None
    origin = Path(_spec(module).origin).resolve()
    for dist in md.packages_distributions()[top]:
        for f in md.distribution(dist).files or []:
            if Path(f.locate()).resolve() == origin:
                return normalise(dist)
    raise AssertionError(f"no installed distribution holds {module} ({origin})")


def test_the_extra_installs_what_the_example_imports():
    installed = extra_distributions("pydantic-evals")
    modules = _imported_modules(ROOT / "examples" / "pydantic_evals_example.py")
    needed = {d for d in map(_owner, modules) if d is not None}
    assert {"opentelemetry-sdk", "pydantic-ai-slim", "pydantic-evals"} <= needed  # it checks
    assert needed <= installed, f"the example imports {sorted(needed - installed)}, not installed"
