"""Judged runs in the gate and the CLI (issue 38): a judge that errs differently on two agents'
outputs, run through the real run_suite with a JudgeMetric checker; the gate on the raw judged
rates against the gate on the rates corrected with each run's labels; ``ek-agents report`` and
``gate`` with label files."""

from __future__ import annotations

import hashlib
import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Cost, Episode, TaskSpec
from ek.agents.cost import per_million
from ek.agents.harness import GateRefusedError, agent_regression_gate, run_suite
from ek.agents.judge import JudgeMetric

N_TASKS = 80


def _u(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16**12


def make_agent(rate: float, give_up: str):
    """Finishes a task with probability ``rate`` (the same draw for every run of it), else
    replies ``give_up``."""

    def agent(task: Any, ctx: Any) -> Episode:
        ok = _u(f"{task.task_id}:{ctx.trial}:{rate}") < rate
        out = f"done #{ctx.trial}" if ok else f"{give_up} #{ctx.trial}"
        return Episode(task.task_id, output=out, cost=Cost(input_tokens=1000, output_tokens=100))

    return agent


def judge_fn(output: str, criteria: str, gold: Any) -> float:
    """A judge with known errors: passes 95 % of real finishes, 10 % of plain give-ups, and
    70 % of the replies that claim to be finished without being so ("finished (unchecked)")."""
    u = _u(f"judge:{output}:{gold}")
    if output.startswith("done"):
        return float(u < 0.95)
    if output.startswith("finished"):
        return float(u < 0.70)
    return float(u < 0.10)


TASKS = [TaskSpec(f"t{i:02d}", input=i, gold=f"g{i}") for i in range(N_TASKS)]
JUDGE = JudgeMetric(judge_fn, "did the agent finish the task?", threshold=0.5)


def _labels(result: Any, n: int, seed: int) -> dict[tuple[str, int], bool]:
    truth = {(ep.task_id, ep.trial): ep.output.startswith("done") for ep in result.episodes}
    return {key: truth[key] for key in random.Random(seed).sample(sorted(truth), n)}


def _write(path: Path, labels: dict[tuple[str, int], bool]) -> str:
    path.write_text(
        "".join(
            json.dumps({"task_id": t, "trial": i, "success": y}) + "\n"
            for (t, i), y in labels.items()
        )
    )
    return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("judged_gate")
    out: dict[str, Any] = {"dir": d}
    # the baseline finishes 70 % and says so honestly; the candidate finishes 45 % and claims
    # the rest finished too: judged about 0.70 * 0.95 + 0.30 * 0.10 = 0.695 vs
    # 0.45 * 0.95 + 0.55 * 0.70 = 0.81, a true change of about -0.25
    for name, agent in (
        ("base", make_agent(0.70, "gave up")),
        ("cur", make_agent(0.45, "finished (unchecked)")),
    ):
        store = d / f"{name}.jsonl"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = run_suite(agent, TASKS, k=2, check=JUDGE, store=store, price=per_million(1, 10))
        out[name] = res
        out[f"{name}_store"] = str(store)
        out[f"{name}_labels"] = _labels(res, 80, seed=len(name))
        out[f"{name}_labels_file"] = _write(d / f"{name}.labels.jsonl", out[f"{name}_labels"])
    return out


def _truth(result: Any) -> float:
    return sum(ep.output.startswith("done") for ep in result.episodes) / len(result.episodes)


def test_gate_on_corrected_rates_finds_what_the_judge_hides(runs: dict[str, Any]) -> None:
    base, cur = runs["base"], runs["cur"]
    true_change = _truth(cur) - _truth(base)
    assert true_change < -0.15
    raw = agent_regression_gate(cur, base, metrics=False)
    assert raw.passed and raw.checks[0].interval.point > 0  # the judge's leniency wins
    g = agent_regression_gate(
        cur, base, metrics=False, labels=runs["cur_labels"], baseline_labels=runs["base_labels"]
    )
    c = g.checks[0]
    assert c.name == "success_rate" and c.verdict == "regression" and not g.passed
    assert c.detail["estimand"] == "success rate corrected for the judge's errors"
    assert c.detail["pairing"] == f"paired on {N_TASKS} shared task(s)"
    assert c.interval.contains(true_change)
    assert c.detail["current"]["n_labelled"] == 80 and c.detail["baseline"]["n_labelled"] == 80
    assert [ch.name for ch in g.checks] == ["success_rate"]  # no pass^k for judged runs
    assert any("pass^k not checked" in w for w in g.warnings)
    json.dumps(g.to_dict(), allow_nan=False)


def test_labels_for_one_run_only_are_refused(runs: dict[str, Any]) -> None:
    with pytest.raises(GateRefusedError, match="labels for the current run only"):
        agent_regression_gate(runs["cur"], runs["base"], labels=runs["cur_labels"])
    with pytest.raises(GateRefusedError, match="labels for the baseline only"):
        agent_regression_gate(runs["cur"], runs["base"], baseline_labels=runs["base_labels"])


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from ek.agents.cli import main

    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_report_with_labels(runs: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(
        ["report", runs["cur_store"], "--labels", runs["cur_labels_file"], "--json"], capsys
    )
    assert code == 0, err
    j = json.loads(out)["judged"]
    from ek.agents.judge import judged_run

    direct = judged_run(runs["cur"], runs["cur_labels"]).to_dict()
    assert j["success"] == json.loads(json.dumps(direct["success"]))
    assert j["success"]["judged_rate"] > 0.75 and j["success"]["value"] < 0.6
    # Cost-of-Pass on the corrected rate: $0.002 a trial / corrected rate
    assert j["cost_of_pass"] == pytest.approx(0.002 / j["success"]["value"])
    code, text, err = _cli(["report", runs["cur_store"], "--labels", runs["cur_labels_file"]], capsys)  # fmt: skip
    assert code == 0, err
    assert "corrected success" in text and "pass^k for k > 1 is not corrected" in text
    code, out, _ = _cli(["report", runs["cur_store"], "--json"], capsys)
    assert code == 0 and json.loads(out)["judged"] is None


def test_report_refuses_labels_of_another_run(
    runs: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _write(tmp_path / "other.jsonl", {("zz", 0): True})
    code, _, err = _cli(["report", runs["cur_store"], "--labels", bad], capsys)
    assert code == 2 and "does not have" in err


def test_gate_cli_with_labels(runs: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    base, cur = runs["base_store"], runs["cur_store"]
    code, out, err = _cli(["gate", base, cur], capsys)
    assert code == 0, err + out  # the raw judged rates: the candidate looks better
    code, out, err = _cli(
        ["gate", base, cur, "--labels", runs["cur_labels_file"],
         "--baseline-labels", runs["base_labels_file"], "--json"],
        capsys,
    )  # fmt: skip
    assert code == 1, err
    check = json.loads(out)["checks"][0]
    assert check["verdict"] == "regression" and check["detail"]["pairing"].startswith("paired")
    code, _, err = _cli(["gate", base, cur, "--labels", runs["cur_labels_file"]], capsys)
    assert code == 2 and "labels for the current run only" in err
