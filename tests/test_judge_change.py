"""The gate refuses runs that different judges decided (issue 38): the checker's identity is
recorded by the real run_suite, saved by save_agent_baseline, read back by load_run from stores
and baselines, and compared by agent_regression_gate and ``ek-agents gate`` (exit 2); labels for
each run, or allow_judge_change / --allow-judge-change, let the comparison through, and a
baseline that does not record its checker is compared with a warning."""

from __future__ import annotations

import hashlib
import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Episode, RunProvenance, TaskSpec
from ek.agents.harness import (
    GateRefusedError,
    RunLoadError,
    RunSummary,
    agent_regression_gate,
    load_agent_baseline,
    load_run,
    run_suite,
    save_agent_baseline,
)
from ek.agents.judge import JudgeMetric

N_TASKS = 60


def _u(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16**12


def agent(task: Any, ctx: Any) -> Episode:
    """Finishes about 60 % of its trials (the same draw in every run: both runs' outputs are
    the same, so the true change between them is exactly 0)."""
    ok = _u(f"{task.task_id}:{ctx.trial}") < 0.6
    return Episode(task.task_id, output=f"{'done' if ok else 'gave up'} #{ctx.trial}")


def lenient(output: str, criteria: str, gold: Any) -> float:
    """Passes 95 % of finishes and 40 % of give-ups: judged about 0.6*0.95 + 0.4*0.4 = 0.73."""
    u = _u(f"lenient:{output}:{gold}")
    return float(u < (0.95 if output.startswith("done") else 0.40))


def strict(output: str, criteria: str, gold: Any) -> float:
    """Passes 80 % of finishes and 5 % of give-ups: judged about 0.6*0.8 + 0.4*0.05 = 0.50."""
    u = _u(f"strict:{output}:{gold}")
    return float(u < (0.80 if output.startswith("done") else 0.05))


def finished(ep: Any, gold: Any) -> bool:
    """A plain checker (an oracle, not a judge)."""
    return bool(ep.output.startswith("done"))


def finished_too(ep: Any, gold: Any) -> bool:
    """Another plain checker, the same verdicts."""
    return bool(ep.output.startswith("done"))


TASKS = [TaskSpec(f"t{i:02d}", input=i, gold=f"g{i}") for i in range(N_TASKS)]
CRITERIA = "did the agent finish the task?"
CHECKERS = {
    "lenient": JudgeMetric(lenient, CRITERIA, threshold=0.5),
    "lenient_again": JudgeMetric(lenient, CRITERIA, threshold=0.5),
    "strict": JudgeMetric(strict, CRITERIA, threshold=0.5),
    "finished": finished,
    "finished_too": finished_too,
}


def _labels(result: Any, n: int, seed: int) -> dict[tuple[str, int], bool]:
    truth = {(ep.task_id, ep.trial): ep.output.startswith("done") for ep in result.episodes}
    return {key: truth[key] for key in random.Random(seed).sample(sorted(truth), n)}


def _write_labels(path: Path, labels: dict[tuple[str, int], bool]) -> str:
    lines = [json.dumps({"task_id": t, "trial": i, "success": y}) for (t, i), y in labels.items()]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("judge_change")
    out: dict[str, Any] = {"dir": d}
    prov = RunProvenance(agent="bot", suite_version="v1")
    for name, check in CHECKERS.items():
        store = d / f"{name}.jsonl"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = run_suite(agent, TASKS, k=2, check=check, store=store, run=prov)
        out[name] = res
        out[f"{name}_store"] = str(store)
        out[f"{name}_labels"] = _labels(res, 60, seed=len(name))
        out[f"{name}_labels_file"] = _write_labels(d / f"{name}.labels.jsonl", out[f"{name}_labels"])  # fmt: skip
    out["baseline"] = str(d / "baseline.json")
    save_agent_baseline(out["lenient"], out["baseline"])  # judged by the lenient judge
    return out


def test_the_checker_is_recorded_saved_and_read_back(runs: dict[str, Any]) -> None:
    res = runs["lenient"]
    assert res.checker["judge"] is True and res.checker["type"] == "ek.agents.judge.JudgeMetric"
    assert res.summary().checker == res.checker
    header = json.loads(Path(runs["lenient_store"]).read_text().splitlines()[0])
    assert header["checker"] == dict(res.checker)  # the store's header: the same identity
    saved = json.loads(Path(runs["baseline"]).read_text())
    assert saved["checker"]["fingerprint"] == res.checker["fingerprint"]
    assert dict(load_agent_baseline(runs["baseline"]).checker) == dict(res.checker)
    assert dict(load_run(runs["lenient_store"], episodes=False).checker) == dict(res.checker)
    # the same judge built twice is the same judge; a plain checker is not a judge
    assert runs["lenient_again"].checker["fingerprint"] == res.checker["fingerprint"]
    assert runs["finished"].checker["judge"] is False
    assert runs["strict"].checker["fingerprint"] != res.checker["fingerprint"]


def test_the_same_judge_is_compared(runs: dict[str, Any]) -> None:
    g = agent_regression_gate(runs["lenient_again_store"], runs["baseline"], metrics=False)
    # the same outputs judged by the same judge: identical counts, no change
    assert g.passed and g.checks[0].interval.point == 0.0
    assert not [w for w in g.warnings if "judge" in w]


def test_different_judges_are_refused_naming_both(runs: dict[str, Any]) -> None:
    for current, baseline in (
        (runs["strict_store"], runs["baseline"]),  # a store against a saved baseline
        (runs["strict"], runs["lenient"]),  # the run_suite results themselves
    ):
        with pytest.raises(GateRefusedError) as e:
            agent_regression_gate(current, baseline)
        msg = str(e.value)
        assert "decided by different judges" in msg
        # both judges named, by the function each calls, and what differs between them
        for fn in (lenient, strict):
            assert f"judged by 'JudgeMetric' (ek.agents.judge.JudgeMetric calling {fn.__module__}.{fn.__name__}, fingerprint" in msg  # fmt: skip
        assert "settings.settings.judge.callable" in msg and "allow_judge_change=True" in msg
        assert runs["lenient"].checker["fingerprint"][:12] in msg
        assert runs["strict"].checker["fingerprint"][:12] in msg


def test_a_plain_checker_against_a_judge_is_refused(runs: dict[str, Any]) -> None:
    with pytest.raises(GateRefusedError, match="checked by 'finished'.*judged by"):
        agent_regression_gate(runs["lenient"], runs["finished"])
    # two plain checkers are not judges: compared as before (their verdicts agree here)
    g = agent_regression_gate(runs["finished_too"], runs["finished"], metrics=False)
    assert g.passed and not [w for w in g.warnings if "judge" in w]


def test_allowed_the_judge_change_reads_as_a_regression(runs: dict[str, Any]) -> None:
    g = agent_regression_gate(
        runs["strict"], runs["lenient"], metrics=False, allow_judge_change=True
    )
    note = next(w for w in g.warnings if "different judges" in w)
    assert "lenient" in note and "strict" in note and "allow_judge_change" in note
    # the same outputs (truly 0.66): the whole drop, 0.81 -> 0.56 judged, is the judges'
    c = g.checks[0]
    assert (c.baseline, c.current) == (97 / 120, 67 / 120)  # measured: 0.808 and 0.558
    assert c.verdict == "regression" and not g.passed


def test_labels_for_each_run_compare_the_corrected_rates(runs: dict[str, Any]) -> None:
    g = agent_regression_gate(
        runs["strict"],
        runs["lenient"],
        metrics=False,
        labels=runs["strict_labels"],
        baseline_labels=runs["lenient_labels"],
    )
    c = g.checks[0]
    assert c.detail["estimand"] == "success rate corrected for the judge's errors"
    assert c.interval.contains(0.0) and g.passed  # the true change is 0
    assert any("different judges" in w and "corrected" in w for w in g.warnings)


def test_a_baseline_without_its_checker_is_compared_with_a_warning(
    runs: dict[str, Any], tmp_path: Path
) -> None:
    data = json.loads(Path(runs["baseline"]).read_text())
    del data["checker"]  # a baseline saved before the checker was recorded
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    assert load_agent_baseline(old).checker is None
    g = agent_regression_gate(runs["strict_store"], str(old), metrics=False)
    note = next(w for w in g.warnings if "does not record which checker" in w)
    assert note.startswith("the baseline does not record") and "strict" in note
    # neither run records it: nothing to say
    s = RunSummary(RunProvenance(agent="a"), 1, {"t": (1, 1)})
    assert not [w for w in agent_regression_gate(s, s).warnings if "checker" in w]


def test_a_corrupt_recorded_checker_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="RunSummary.checker must be a mapping"):
        RunSummary(RunProvenance(agent="a"), 1, {"t": (1, 1)}, checker="judge")  # type: ignore[arg-type]
    data = RunSummary(RunProvenance(agent="a"), 1, {"t": (1, 1)}).to_dict()
    data["checker"] = 5
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(RunLoadError, match="corrupt ek-agents baseline: RunSummary.checker"):
        load_agent_baseline(p)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from ek.agents.cli import main

    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_gate_cli(runs: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    base, cur = runs["baseline"], runs["strict_store"]
    code, out, err = _cli(["gate", base, cur], capsys)
    assert code == 2 and out == ""
    assert "decided by different judges" in err and "--allow-judge-change" in err
    assert "lenient" in err and "strict" in err
    code, out, err = _cli(["gate", base, cur, "--allow-judge-change"], capsys)
    assert code == 1, err  # compared: the judges' difference reads as a regression
    assert "warning: different judges decided the runs" in out
    code, out, err = _cli(["gate", base, runs["lenient_again_store"]], capsys)
    assert code == 0, err + out
    # labels for each run (the stores: the corrected rates need the trials)
    code, out, err = _cli(
        ["gate", runs["lenient_store"], cur, "--labels", runs["strict_labels_file"],
         "--baseline-labels", runs["lenient_labels_file"], "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    j = json.loads(out)
    assert j["checks"][0]["detail"]["estimand"] == "success rate corrected for the judge's errors"
    assert any("different judges" in w for w in j["warnings"])
