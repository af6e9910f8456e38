"""ek metrics in Ragas: ``evaluate()`` and an ``@experiment`` (offline, no API key, no LLM).

Run it:

    RAGAS_DO_NOT_TRACK=true python examples/ragas_example.py

(``RAGAS_DO_NOT_TRACK`` must be exactly ``true`` to switch Ragas' telemetry off.) It scores three
agent runs against the same gold calls with ek's tool-call and trajectory metrics next to Ragas'
own ``ToolCallF1`` and ``ToolCallAccuracy``, which mis-score duplicates, extras and reorderings.
"""

from __future__ import annotations

import asyncio
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)  # Ragas 0.4 deprecates evaluate()
warnings.filterwarnings("ignore", message="Length mismatch", category=UserWarning)

from ek.adapters.ragas import ek_ragas_metric, to_pandas_with_reasons, to_ragas_sample
from ragas import Dataset, EvaluationDataset, evaluate, experiment
from ragas.metrics import ToolCallAccuracy, ToolCallF1

from ek.agents.base import Episode, Step, TaskSpec
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric

LOOKUP, REFUND = Step("lookup", {"order_id": "A1"}), Step("refund", {"order_id": "A1"})
SEARCH = Step("search", {"q": "refund policy"})
RUNS = {
    "double_refund": [LOOKUP, REFUND, REFUND],  # Ragas ToolCallF1: 1.0 (duplicates collapse)
    "extra_search": [LOOKUP, SEARCH, REFUND],
    "refund_first": [REFUND, LOOKUP],  # right calls, wrong order
}
GOLD = [LOOKUP, REFUND]


def samples() -> list:
    """One Ragas MultiTurnSample per run (ek episode -> sample; reference_tool_calls = gold)."""
    return [
        to_ragas_sample(
            Episode(name, input="Refund order A1", trajectory=calls, output="done"),
            TaskSpec(name, gold_calls=GOLD),
        )
        for name, calls in RUNS.items()
    ]


def with_evaluate() -> list[dict]:
    """Classic API: ragas.evaluate() with ek's classic MultiTurnMetric wrappers."""
    tool_calls = ek_ragas_metric(ToolCallMetric())  # column "ek_tool_calls"
    metrics = [
        tool_calls,
        ek_ragas_metric(TrajectoryMetric("exact"), name="ek_trajectory_exact"),
        ToolCallF1(),
        ToolCallAccuracy(),
    ]
    result = evaluate(EvaluationDataset(samples=samples()), metrics=metrics, show_progress=False)
    rows = []
    for name, scores in zip(RUNS, result.scores):
        # Each ek score is a float that also carries ek's reason and detail.
        rows.append({"run": name, **{k: round(float(v), 3) for k, v in scores.items()}})
        rows[-1]["ek_reason"] = scores["ek_tool_calls"].reason
    # The same reasons as data-frame columns ("<column>_reason"), and ek's corpus figure: the
    # micro-F1 of all the runs' counts, not Ragas' mean of the rows.
    frame = to_pandas_with_reasons(result)
    print("reason columns:", [c for c in frame.columns if c.endswith("_reason")])
    print("ek_tool_calls micro-F1:", round(tool_calls.aggregate(result["ek_tool_calls"]), 3))
    return rows


def with_experiment() -> list[dict]:
    """Collections API: ek's collections metric inside a Ragas @experiment."""
    metric = ek_ragas_metric(TrajectoryMetric("exact"), api="experiment")
    ds = Dataset(name="ek_example", backend="inmemory")
    for name, s in zip(RUNS, samples()):
        ds.append(
            {
                "run": name,
                "user_input": s.user_input,
                "reference_tool_calls": s.reference_tool_calls,
            }
        )

    @experiment()
    async def score(row: dict) -> dict:
        r = await metric.ascore(
            user_input=row["user_input"],
            reference_tool_calls=row["reference_tool_calls"],
            task_id=row["run"],
        )
        return {"run": row["run"], "ek_trajectory_exact": r.value, "reason": r.reason}

    exp = asyncio.run(score.arun(ds, name="ek_example"))
    # Rows come back in completion order: sort by run name.
    return sorted(exp.to_pandas().to_dict("records"), key=lambda r: r["run"])


def main() -> None:
    print("ragas.evaluate():")
    for row in with_evaluate():
        print(" ", row)
    print("@experiment:")
    for row in with_experiment():
        print(" ", row)


if __name__ == "__main__":
    main()
