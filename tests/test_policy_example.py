"""Issue 34: examples/policy_audit.py audits tau-bench-format conversations it wrote itself."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "policy_audit.py"


def test_policy_audit_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    figs = runpy.run_path(str(EXAMPLE))["main"](tmp_path)
    # 8 conversations; violated: cancel-unconfirmed, book-unconfirmed, change-reconfirm-missing,
    # cancel-wrong-reservation, two-certificates -> 5/8. Successes (reward 1): 6, of which the
    # near-misses are cancel-unconfirmed, book-unconfirmed and two-certificates -> 3/6.
    assert (figs["violated"], figs["n"], figs["violation_rate"]) == (5.0, 8.0, 0.625)
    assert (figs["near_misses"], figs["successes"], figs["near_miss_share"]) == (3.0, 6.0, 0.5)
    out = capsys.readouterr().out
    assert "two-certificates           reward 1  near-miss" in out
    assert "call 2 of send_certificate, at most 1 allowed" in out
    saved = json.loads((tmp_path / "tau_results.json").read_text(encoding="utf-8"))
    assert {"task_id", "trial", "reward", "traj"} <= set(saved[0])  # tau-bench's results shape
