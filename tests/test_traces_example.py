"""examples/traces_example.py runs offline, both ways it makes its trace file (real pydantic-ai
instrumentation, and spans built by hand), and prints the same scores both ways; the evaluation
results it writes land on the scored runs' own trace and span."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from ek.agents.traces import read_spans

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "traces_example.py"
INSTRUMENTED = all(find_spec(m) for m in ("pydantic_ai", "opentelemetry.sdk"))

#: The lines both ways print (everything but the trace file's origin and the trace ids).
SCORES = [
    "run               tool_calls  valid  tokens in/out",
    "refund-A1 #0           1.000  yes    4500/180",
    "refund-A1 #1           1.000  yes    4500/180",
    # the third trial refunds 200, not 20: lookup_order matches (tool + order_id = 2 TP),
    # refund's tool and order_id match (2 TP), its amount is wrong (1 FP + 1 FN):
    # F1 = 2*4 / (2*4 + 1 + 1) = 0.8, not valid
    "refund-A1 #2           0.800  NO     4500/180",
    # tokens per refund run: inputs 1200 + 1500 + 1800 = 4500, outputs 3 * 60 = 180;
    # per status run: 1200 + 1500 = 2700 and 2 * 60 = 120
    "status-B2 #0           1.000  yes    2700/120",
    "status-B2 #1           1.000  yes    2700/120",
    "status-B2 #2           1.000  yes    2700/120",
    # micro-F1: TP 5 + 5 + 4 + 2 + 2 + 2 = 20, FP 1, FN 1 -> 40 / 42 = 0.9524
    "tool_calls        0.9524 (micro-F1 over all runs)",
    # the checker "output": refund trials 0, 1 answer right; status all three
    "counts            {'refund-A1': (3, 2), 'status-B2': (3, 3)}",
    # pass^3 = mean(C(2,3)/C(3,3) = 0, C(3,3)/C(3,3) = 1) = 0.5
    "pass^3            0.500",
    # dollars per refund run: 4500 * $2.5/M + 180 * $10/M = 0.01305; per status run:
    # 2700 * $2.5/M + 120 * $10/M = 0.00795; (3 * 0.01305 + 3 * 0.00795) / 5 successes = 0.0126
    "Cost-of-Pass      $0.012600 per successful task",
    "evaluation file   evals.jsonl: 6 gen_ai.evaluation.result events; the first:",
    "                  tool_calls = 1.0 (pass)",
]


def run_example(out: Path, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), str(out), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def scores_of(lines: list[str]) -> list[str]:
    return [ln for ln in lines if not ln.startswith(("trace file", "                  trace "))]


def check_evaluation_results(out: Path) -> None:
    """Each written event is attached to one run's own ``invoke_agent`` span in the trace
    file, and names that run's task and trial."""
    agent_spans = {
        (s.trace_id, s.span_id): s
        for s in read_spans(out / "traces.jsonl")
        if s.attributes.get("gen_ai.operation.name") == "invoke_agent"
    }
    trials = {
        s.trace_id: (s.attributes["ek.task_id"], s.attributes["ek.trial"])
        for s in read_spans(out / "traces.jsonl")
        if "ek.task_id" in s.attributes
    }
    records = []
    with open(out / "evals.jsonl", encoding="utf-8") as f:
        for line in f:
            for rl in json.loads(line)["resourceLogs"]:
                for sl in rl["scopeLogs"]:
                    records += sl["logRecords"]
    assert len(records) == 6
    seen = set()
    for rec in records:
        attrs = {a["key"]: next(iter(a["value"].values())) for a in rec["attributes"]}
        assert rec["eventName"] == "gen_ai.evaluation.result"
        assert (rec["traceId"], rec["spanId"]) in agent_spans
        assert (attrs["ek.task_id"], int(attrs["ek.trial"])) == trials[rec["traceId"]]
        seen.add(rec["traceId"])
    assert len(seen) == 6  # one event per run


@pytest.mark.slow
@pytest.mark.skipif(not INSTRUMENTED, reason="needs pydantic-ai and opentelemetry-sdk (dev extra)")
def test_the_example_traces_a_real_pydantic_ai_agent(tmp_path: Path) -> None:
    out = run_example(tmp_path)
    assert out[0] == (
        "trace file        traces.jsonl: 36 spans from pydantic-ai's OpenTelemetry instrumentation"
    )
    assert scores_of(out) == SCORES
    check_evaluation_results(tmp_path)


def test_the_example_by_hand_needs_only_the_core(tmp_path: Path) -> None:
    out = run_example(tmp_path, "--by-hand")
    # per run: the harness span, invoke_agent, one chat span per turn, one execute_tool per
    # call: refund 1 + 1 + 3 + 2 = 7, status 1 + 1 + 2 + 1 = 5; 3 * 7 + 3 * 5 = 36
    assert out[0] == (
        "trace file        traces.jsonl: 36 spans built by hand (standing in for a Collector's file)"
    )
    assert scores_of(out) == SCORES
    check_evaluation_results(tmp_path)
