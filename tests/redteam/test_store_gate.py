"""Red team (issue 30, item 9): the gate compared runs whose metrics measure different things.

A baseline whose Cost-of-Pass was priced at 1/2 dollars per million tokens, against a run
priced at 100/200, exited 1 with a "regression" although both store headers record different
metric fingerprints: the same agent, the same tokens, only the prices changed. The gate now
refuses (exit 2) naming what changed, unless told to compare anyway
(``allow_metric_changes=True``, ``ek-agents gate --allow-metric-changes``).
"""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from ek.agents import cli
from ek.agents.base import Cost, Episode, TaskSpec
from ek.agents.cost import per_million
from ek.agents.harness import (
    GateRefusedError,
    agent_regression_gate,
    load_agent_baseline,
    load_run,
    run_suite,
    save_agent_baseline,
)
from ek.agents.metrics import CostPerSuccessMetric

TASKS = [TaskSpec(f"t{i}", gold="ok") for i in range(20)]


def _agent(task: TaskSpec) -> Episode:
    return Episode(
        task.task_id, output="ok", cost=[Cost(input_tokens=1000, output_tokens=500, model="m")]
    )


def _run(store: Path | None, inp: float, out: float) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_suite(
            _agent,
            TASKS,
            k=2,
            metrics=[CostPerSuccessMetric()],
            price=per_million(inp, out),
            store=store,
        )


def _gate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["gate", *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def stores(tmp_path: Path) -> tuple[Path, Path]:
    base, cur = tmp_path / "base.jsonl", tmp_path / "cur.jsonl"
    _run(base, 1, 2)  # $0.002 a trial: 1000 x $1/M + 500 x $2/M
    _run(cur, 100, 200)  # $0.2 a trial: the same tokens at other prices
    return base, cur


def test_metrics_priced_differently_are_refused_naming_the_change(
    stores: tuple[Path, Path],
) -> None:
    base, cur = stores
    code, out, err = _gate(str(base), str(cur))
    assert code == cli.EXIT_REFUSED, out  # was 1, "regression in ['cost_per_success']"
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "'cost_per_success': settings.price.value.input: 1e-06 -> 0.0001" in err
    assert "--allow-metric-changes" in err
    with pytest.raises(GateRefusedError, match="configured differently"):
        agent_regression_gate(load_run(cur, episodes=False), load_run(base, episodes=False))


def test_the_opt_in_compares_anyway_with_a_warning(stores: tuple[Path, Path]) -> None:
    base, cur = stores
    code, out, _ = _gate(str(base), str(cur), "--allow-metric-changes")
    assert code == cli.EXIT_REGRESSION  # compared as asked: 100x the dollars per success
    assert "warning: metrics configured differently, compared anyway" in out
    g = agent_regression_gate(load_run(cur), load_run(base), allow_metric_changes=True)
    assert any("configured differently" in w for w in g.warnings)


def test_a_saved_baseline_and_an_in_memory_run_carry_the_configurations(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    base, cur = stores
    saved = tmp_path / "baseline.json"
    save_agent_baseline(load_run(base), saved)
    assert load_agent_baseline(saved).metric_configs == load_run(base).metric_configs
    code, _, err = _gate(str(saved), str(cur))
    assert code == cli.EXIT_REFUSED and "configured differently" in err
    with pytest.raises(GateRefusedError, match="settings.price.value.output: 2e-06 -> 0.0002"):
        agent_regression_gate(_run(None, 100, 200), saved)  # a SuiteResult, not a store


def test_the_same_configuration_is_gated_as_before(stores: tuple[Path, Path]) -> None:
    base, _ = stores
    again = base.with_name("again.jsonl")
    _run(again, 1, 2)
    code, out, _ = _gate(str(base), str(again))
    assert code == cli.EXIT_OK, out
    assert "configured differently" not in out


def test_a_baseline_is_never_saved_over_a_store(stores: tuple[Path, Path]) -> None:
    """``save_agent_baseline(run, "runs/current.jsonl")`` (or ``--ek-save-baseline`` naming a
    store) replaced the store's trials with a baseline, and a run still writing it wrote on
    into a file no longer there."""
    base, _ = stores
    before = base.read_bytes()
    with pytest.raises(ValueError, match="is a trial store; a baseline written over it"):
        save_agent_baseline(load_run(base), base)
    assert base.read_bytes() == before
