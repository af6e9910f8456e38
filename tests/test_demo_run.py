"""The demo job end to end into a tmp dir: stores, baseline, gate, report, plots, Inspect part,
and the `ek-agents demo` / `report --plot` commands."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys

import pytest

from ek.agents.cli import main
from ek.agents.demo import DEMO_PRICES, run_demo
from ek.agents.demo._run import ProgressBar
from ek.agents.harness import ProgressEvent, load_run

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    # k=5 (the default) so the gate has the power to see the candidate's regression.
    folder = tmp_path_factory.mktemp("ek-demo-run")
    out = io.StringIO()
    res = run_demo(folder, k=5, inspect=False, plots=None, stream=out, progress=False)
    return res, out.getvalue(), folder


def test_outputs_are_written(demo) -> None:
    _res, text, folder = demo
    for name in (
        "baseline.trials.jsonl",
        "candidate.trials.jsonl",
        "baseline.json",
        "gate.json",
        "report.txt",
    ):
        assert (folder / name).is_file(), name
    assert (folder / "report.txt").read_text(encoding="utf-8") == text
    plots = ("pass_hat_k.png", "cost_vs_success.png")
    if importlib.util.find_spec("matplotlib") is None:  # the core alone: said in one line
        assert "plots skipped: matplotlib is not installed (pip install ek-agents[plot])" in text
        assert not any((folder / name).exists() for name in plots)
    else:
        for name in plots:
            assert (folder / name).read_bytes()[:8] == PNG


def test_stores_read_back_and_agree(demo) -> None:
    res, _, folder = demo
    for name, r in (("baseline", res.baseline), ("candidate", res.candidate)):
        s = load_run(folder / f"{name}.trials.jsonl")
        assert dict(s.counts) == dict(r.counts)
        assert s.n_trials == 150 == r.n_trials  # 30 tasks x 5 trials
        assert s.run.agent == name and s.run.suite_version == "ek-demo-retail/1"


def test_report_content(demo) -> None:
    _res, text, _ = demo
    assert "ILLUSTRATIVE demo prices, not any provider's real prices" in text
    for needle in ("success rate", "pass@k", "pass^k", "Cost-of-Pass", "tool_calls", "trajectory"):
        assert needle in text, needle
    for sl in ("easy", "hard", "refund", "lookup"):
        assert f"\n   {sl} " in text, sl
    assert "regression gate: candidate vs baseline -> REGRESSION" in text
    assert "Inspect part skipped (--no-inspect)" in text


def test_gate_finds_the_candidate_regression(demo) -> None:
    res, _, folder = demo
    assert not res.gate.passed
    checks = {c.name: c for c in res.gate.checks}
    assert checks["success_rate"].verdict == "regression"
    # the candidate is cheaper per success: that check is a pass, direction read correctly
    assert checks["cost_per_success"].verdict == "pass"
    assert checks["cost_per_success"].higher_is_better is False
    saved = json.loads((folder / "gate.json").read_text(encoding="utf-8"))
    assert saved["passed"] is False
    # the candidate's loss is on the refund slice
    b, c = res.baseline.slices, res.candidate.slices
    drop = {s: b[s].n_successes - c[s].n_successes for s in ("refund", "lookup")}
    assert drop["refund"] >= 15 and drop["lookup"] <= 5, drop


def test_cost_is_priced_and_by_kind(demo) -> None:
    res, _, _ = demo
    for r, model in ((res.baseline, "demo-large"), (res.candidate, "demo-small")):
        assert r.cost.agent_dollars is not None and r.cost.agent_dollars > 0
        assert list(r.cost.by_model) == [model]
        tok = r.cost.total.tokens
        assert tok["input_tokens"] and tok["cache_read_tokens"] and tok["output_tokens"]
    assert res.baseline.cost.total.tokens["reasoning_tokens"] > 0
    assert set(DEMO_PRICES) == {"demo-large", "demo-small"}
    assert all("ILLUSTRATIVE" in (p.source or "") for p in DEMO_PRICES.values())


def test_deterministic_for_a_seed_and_resumable(tmp_path) -> None:
    kw = {"k": 2, "inspect": False, "plots": False, "progress": False}
    one = run_demo(tmp_path / "a", stream=io.StringIO(), **kw)
    two = run_demo(tmp_path / "b", stream=io.StringIO(), **kw)
    assert [e.trajectory for e in one.baseline.episodes] == [
        e.trajectory for e in two.baseline.episodes
    ]
    assert [e.cost for e in one.candidate.episodes] == [e.cost for e in two.candidate.episodes]
    assert dict(one.candidate.counts) == dict(two.candidate.counts)
    resumed = run_demo(tmp_path / "a", resume=True, stream=io.StringIO(), **kw)
    assert resumed.baseline.resumed == 60 and resumed.candidate.resumed == 60
    assert dict(resumed.baseline.counts) == dict(one.baseline.counts)


def test_cli_demo_and_report_plot(tmp_path, capsys) -> None:
    folder = tmp_path / "run"
    code = main(["demo", str(folder), "-k", "2", "--no-inspect", "--no-plots", "--quiet"])
    assert code == 0
    assert "ek-agents demo: 30 tasks" in capsys.readouterr().out
    pytest.importorskip("matplotlib")
    png = tmp_path / "cmp.png"
    code = main(
        [
            "report",
            str(folder / "baseline.json"),
            "--compare",
            str(folder / "candidate.trials.jsonl"),
            "--plot",
            str(png),
        ]
    )
    assert code == 0 and png.read_bytes()[:8] == PNG


def test_progress_bar_off_a_terminal_prints_once() -> None:
    s = io.StringIO()
    bar = ProgressBar("x", stream=s, width=4)
    bar(ProgressEvent(done=1, total=2, skipped=0, agent_failures=0, elapsed=0.1))
    assert s.getvalue() == ""
    bar(ProgressEvent(done=2, total=2, skipped=1, agent_failures=0, elapsed=0.2))
    assert s.getvalue() == "  x [####] 2/2 trials (1 resumed)\n"


@pytest.mark.slow
def test_inspect_part(tmp_path) -> None:
    pytest.importorskip("inspect_ai")
    res = run_demo(tmp_path, k=2, inspect=True, plots=False, stream=io.StringIO(), progress=False)
    assert res.inspect is not None
    assert os.path.isfile(res.inspect["log"]) and res.inspect["log"].endswith(".eval")
    assert res.inspect["n_trials"] == 60  # 30 samples x 2 epochs
    # mockllm replays the baseline's trials: the Inspect log agrees with run_suite task by task
    assert res.inspect["agrees_with_harness"] is True
    s = load_run(res.inspect["log"])
    assert s.n_successes == sum(c for _, c in res.baseline.counts.values())
    assert "== Inspect AI" in res.report


def test_without_the_inspect_extra_the_inspect_part_is_one_line(tmp_path, monkeypatch) -> None:
    # As on `pip install ek-agents` (no [inspect]): inspect_ai cannot be imported.
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    out = io.StringIO()
    res = run_demo(tmp_path, k=1, plots=False, stream=out, progress=False)
    note = "Inspect part skipped: inspect-ai is not installed (pip install ek-agents[inspect])"
    assert res.inspect is None and res.inspect_note == note
    assert note in out.getvalue().splitlines()
    assert not (tmp_path / "inspect").exists()


def test_an_inspect_adapter_that_fails_to_import_is_skipped_unless_required(
    tmp_path, monkeypatch
) -> None:
    pytest.importorskip("inspect_ai")
    # The Inspect part lives in the adapter (ek.adapters.inspect.demo), imported only here.
    monkeypatch.setitem(sys.modules, "ek.adapters.inspect.demo", None)
    res = run_demo(tmp_path, k=1, plots=False, stream=io.StringIO(), progress=False)
    assert res.inspect is None
    assert res.inspect_note.startswith("Inspect part skipped: ")
    assert "\n" not in res.inspect_note and "ek.adapters.inspect.demo" in res.inspect_note
    with pytest.raises(ImportError, match="ek.adapters.inspect.demo"):
        run_demo(tmp_path, k=1, inspect=True, plots=False, stream=io.StringIO(), progress=False)
