"""pytest as its users expect (issue 32, items 12 and 17), through real pytest runs.

- (12) a failing ek test shows each failed trial's ek reasons (what ``ek_episode.record``
  scored) under that trial's assertion line, in pytest's own failure report; a refused gate
  exits 2 in pytest as in ``ek-agents gate`` (the one rule, said in the plugin's docstring and
  the README; the refusal itself is tested in ``tests/test_pytest_plugin.py``).
- (17) ``make demo``'s closing hint says what ``pytest examples/test_agent_with_pytest.py``
  gives (its failures are by design), and the example gives exactly that.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ek.agents.pytest_plugin as plugin

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "test_agent_with_pytest.py"


@pytest.fixture(scope="module")
def example_run() -> subprocess.CompletedProcess[str]:
    """The example as a user runs it (the plugin loaded by its entry point), in order."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(EXAMPLE), "-p", "no:randomly", "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=ROOT, timeout=1800,  # a hang guard only
    )  # fmt: skip


def _hint() -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_demo_hint_says_what_the_example_gives(example_run):
    hint = _hint()
    said = re.search(r"expect (\d+) passed, (\d+) failed \(exit (\d)\), by design", hint)
    assert said, hint
    passed, failed, code = map(int, said.groups())
    assert f"{failed} failed, {passed} passed" in example_run.stdout.splitlines()[-1]
    assert example_run.returncode == code
    assert "pip install pytest" in hint  # make demo installs .[inspect,plot], without pytest


def test_a_failed_trial_shows_ek_reasons_under_its_assertion_line(example_run):
    out = example_run.stdout
    # every failed test lists its failed trials, each followed by the ek reasons of that trial
    blocks = re.findall(
        r"\n(\s+)(?:failures\s+)?trial (\d+): AssertionError: final state differs[^\n]*\n((?:\s+ek [^\n]*\n)+)",
        out,
    )
    assert len(blocks) >= 15, out[-3000:]
    for _indent, _trial, reasons in blocks:
        names = re.findall(r"^\s+ek (\w+): ", reasons, flags=re.M)
        # the example records tool calls, trajectory and cost (priced): each reason is there
        assert names == ["cost_per_success", "tool_calls", "trajectory"], reasons
    # e.g. a wrong refund: the tool-call reason names the argument that differs
    assert re.search(r"ek tool_calls: invalid: .*wrong arguments: refund_order\.\w+", out)


TWO_TRIALS = """
import pytest
from ek.agents.base import Episode, Step, TaskSpec

GOLD = TaskSpec("refund-A1", gold_calls=[Step("refund", {"order_id": "A1"})])

@pytest.mark.ek(trials=2)
def test_refund(ek_episode):
    order = "A1" if ek_episode.trial == 0 else "B2"  # trial 2 refunds the wrong order
    ep = Episode("refund-A1", trajectory=[Step("refund", {"order_id": order})])
    ek_episode.record(ep, gold=GOLD)
    assert order == "A1", "refunded the wrong order"
"""


def test_only_the_failed_trials_reasons_show(tmp_path):
    (tmp_path / "test_two.py").write_text(TWO_TRIALS)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "test_two.py", "-p", "no:randomly", "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-3000:]
    out = proc.stdout
    # trial 1 matched (its reason "valid: ..." stays out); trial 2's reasons sit under its line
    failure = re.search(
        r"trial 2: AssertionError: refunded the wrong order[^\n]*\n((?:\s+ek [^\n]*\n)+)", out
    )
    assert failure, out[-3000:]
    assert re.findall(r"ek (\w+): ", failure.group(1)) == ["tool_calls", "trajectory"]
    assert "refund.order_id" in failure.group(1)  # the wrong argument, named
    assert "trial 1:" not in out


def test_the_exit_rule_is_documented():
    doc = plugin.__doc__ or ""
    readme = (ROOT / "README.md").read_text()
    assert "2 when the\ngate refuses" in doc and "4 when the gate refuses" not in doc
    assert "2 when the gate refuses runs that are\nnot comparable" in readme
