"""Issue 34: the ek_policy scorer in a real Inspect eval (offline, scripted mockllm), and the
policy metric read back from the log by ``load_run`` (what ``ek-agents report``/``gate`` read)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from ek.agents.harness import load_run
from ek.agents.policy import Order, PolicyMetric, UserNamed, as_policies, policies_to_list

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "inspect_task.py"


def _example() -> ModuleType:
    os.environ.pop("INSPECT_TELEMETRY", None)  # Inspect reads it as a hook module name
    spec = importlib.util.spec_from_file_location("ek_inspect_example_policy", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ek_policy_scorer_in_a_real_eval(tmp_path: Path) -> None:
    from ek.adapters.inspect.policy import ek_policy
    from inspect_ai import eval, task_with

    ex = _example()
    rules = [
        Order("lookup_order", "refund_order", same=("order_id",)),
        UserNamed("refund_order", "order_id"),  # read from the sample's user turn
    ]
    task = task_with(
        ex.refunds(degraded=True, epochs=2),
        scorer=[ek_policy(rules, check="final_state")],
        epochs=2,
    )
    [log] = eval(task, display="none", log_dir=str(tmp_path))
    assert log.status == "success"
    scores = [s.scores["ek_policy"] for s in log.samples or []]
    # 4 samples x 2 epochs. The degraded agent's first attempt on A1 and on A2 refunds before
    # any look-up: 2 episodes violate the Order rule (value 0), 6 are clean (the user named every
    # refunded order): compliance 6/8 = 0.75.
    values = sorted(s.value["policy"] for s in scores)
    assert values == [0.0, 0.0] + [1.0] * 6
    bad = [s for s in scores if s.value["policy"] == 0.0]
    for s in bad:
        assert (
            "refund_order at step 0 before any successful lookup_order with the same order_id"
            in (s.explanation or "")
        )
    metric: Any = {m.name: m for m in log.results.scores}["policy"] if log.results else None
    assert metric is not None and metric.metrics["ek/ek_aggregate"].value == 0.75
    run = load_run(log.location)
    assert run.metrics["policy"].value == 0.75  # the report's and the gate's figure
    # the log's episodes audited afterwards, without the scorer: the same values (the Order rule
    # reads the calls; the user turns are not in a log's episodes, so only the call rules)
    from ek.agents.bridge import episodes_from_inspect_log

    eps = list(episodes_from_inspect_log(log.location))
    again = sorted(PolicyMetric([rules[0]], check="recorded")(ep, None).value for ep in eps)
    assert again == values
    # Inspect records the rule objects as dataclass dicts (their kind included): a re-score
    # from the log rebuilds the same rules
    recorded = log.eval.scorers[0].options["policies"]
    assert as_policies(recorded) == tuple(rules)
    assert as_policies(policies_to_list(rules)) == tuple(rules)
