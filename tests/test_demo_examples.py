"""The examples this part ships: examples/own_harness.py runs offline; examples/ci_gate.yml is a
valid GitHub Actions job whose gate step runs `ek-agents gate`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.slow
def test_own_harness_runs_and_the_gate_fails_the_candidate(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent)}
    p = subprocess.run(
        [sys.executable, str(EXAMPLES / "own_harness.py"), str(tmp_path), "--ci"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    # --ci: exit 1 because the candidate's success-rate drop is a real regression
    assert p.returncode == 1, p.stderr
    assert "gate: REGRESSION" in p.stdout
    assert "success_rate" in p.stdout and "cost_per_success" in p.stdout
    for name in ("baseline.jsonl", "candidate.jsonl", "baseline.json"):
        assert (tmp_path / name).is_file()


def test_ci_gate_workflow_is_valid() -> None:
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load((EXAMPLES / "ci_gate.yml").read_text(encoding="utf-8"))
    steps = doc["jobs"]["gate"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert any(r.startswith("ek-agents gate ") for r in runs)
    assert any("pip install ek-agents" in r for r in runs)
