"""Issue 34: PolicyMetric as a pydantic-evals evaluator (EkEvaluator), the calls read from the
real pydantic-ai Agent's spans (offline, FunctionModel), and read back by summary_from_report."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_evals")
pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.sdk.trace")

from ek.adapters.pydantic_evals import EkEvaluator, summary_from_report
from pydantic_evals import Dataset
from test_pydantic_evals_adapter import (  # noqa: F401 (sdk_tracer_provider: the autouse fixture)
    CASES,
    SCRIPTS,
    ScriptedAgent,
    sdk_tracer_provider,
)

from ek.agents.policy import Forbid, Order, PolicyMetric

RULES = [Order("lookup_order", "refund", same=("order_id",)), Forbid("notify")]


def test_policy_evaluator_and_near_misses() -> None:
    ds = Dataset(name="shop", cases=CASES, evaluators=[EkEvaluator(PolicyMetric(RULES))])
    rep = ds.evaluate_sync(ScriptedAgent(SCRIPTS).run, repeat=3, max_concurrency=1, progress=False)
    values = {c.name: c.scores["policy"].value for c in rep.cases}
    # every refund run looks the order up first; status run 2 sends an unrequested notify
    assert values == {
        "refund [1/3]": 1.0, "refund [2/3]": 1.0, "refund [3/3]": 1.0,
        "status [1/3]": 1.0, "status [2/3]": 0.0, "status [3/3]": 1.0,
    }  # fmt: skip
    status2 = next(c for c in rep.cases if c.name == "status [2/3]")
    reason = status2.scores["policy"].reason or ""
    # its answer "shipped" is the expected one: a near-miss
    assert "notify at step 1: forbidden (notify)" in reason and "near-miss" in reason
    run = summary_from_report(rep, success="policy")
    assert run.metrics["policy"].value == 5 / 6  # compliance: 5 of 6 runs clean
