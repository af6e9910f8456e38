"""``ek-agents report`` / ``gate`` on real Inspect AI logs (issue 16, items 6, 7 and 12).

Every log here is made by a real ``inspect_ai.eval()`` run, offline: a ``use_tools`` +
``generate`` loop with one Python tool, driven by a stateless scripted ``mockllm`` with explicit
usage (no tokenizer download, no API key), scored by ``ek_scorer("tool_calls", "trajectory")``
and Inspect's own ``match()``. The report and the gate then read the log from disk through the
same ``load_run`` a user's ``ek-agents`` call goes through.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]

#: 12 countries c0..c11 and their capitals.
CAPITALS = {f"c{i}": f"city{i}" for i in range(12)}
#: USD per token for the ek scorer (illustrative).
PRICE = {"input": 1e-6, "output": 2e-6}
EPOCHS = 2
#: Samples without gold calls in the "gapped" run (the ek scorer cannot score them).
NO_GOLD = ("c3", "c7", "c11")
#: Samples the "wrong_answers" agent answers wrongly.
WRONG = ("c0", "c1", "c2", "c3", "c4")


def _policy(wrong_arg: bool = False, wrong_answer: tuple[str, ...] = ()) -> Callable[..., Any]:
    """A stateless mockllm policy: call ``capital(country)`` once, then answer.

    ``wrong_arg``: on even-numbered countries the call names a wrong country (the tool answers
    "unknown"), but the final answer is still right: success is unchanged, tool calls are not.
    """
    from inspect_ai.model import ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage

    def policy(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        country = next(m for m in input if isinstance(m, ChatMessageUser)).text.split()[-1]
        if not any(isinstance(m, ChatMessageTool) for m in input):
            arg = "x" + country if wrong_arg and int(country[1:]) % 2 == 0 else country
            out = ModelOutput.for_tool_call(
                "mockllm/model", "capital", {"country": arg}, content=""
            )
        else:
            answer = "nowhere" if country in wrong_answer else CAPITALS[country]
            out = ModelOutput.from_content("mockllm/model", answer)
        out.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        return out

    return policy


def _task(*, ek: bool = True, gold_gaps: tuple[str, ...] = (), **policy: Any) -> Any:
    from ek.adapters.inspect import ek_scorer
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import Tool, tool

    @tool
    def capital() -> Tool:
        async def execute(country: str) -> str:
            """The capital of a country.

            Args:
              country: The country code, e.g. c1.
            """
            return CAPITALS.get(country, "unknown")

        return execute

    samples = [
        Sample(
            id=c,
            input=f"What is the capital of {c}",
            target=city,
            metadata={}
            if c in gold_gaps
            else {"gold_calls": [{"tool": "capital", "args": {"country": c}}]},
        )
        for c, city in CAPITALS.items()
    ]
    # check="output": the ek scorer decides success (issue 32: one told no check decides none)
    scorers = (
        [ek_scorer("tool_calls", "trajectory", check="output", price=PRICE), match()]
        if ek
        else [match()]
    )
    return Task(
        dataset=samples,
        solver=[use_tools(capital()), generate()],
        scorer=scorers,
        epochs=EPOCHS,
        model=get_model("mockllm/model", custom_outputs=_policy(**policy)),
        name="capitals",  # one task (suite_version "capitals@0"), run by different agents
    )


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from inspect_ai import eval

    os.environ.pop("INSPECT_TELEMETRY", None)  # Inspect reads it as a hook module name
    d = tmp_path_factory.mktemp("hostlogs")
    tasks = {
        "good": _task(),
        "badcalls": _task(wrong_arg=True),
        "gapped": _task(gold_gaps=NO_GOLD),
        "matchonly": _task(ek=False, wrong_answer=WRONG),
    }
    done = eval(list(tasks.values()), display="none", log_dir=str(d), max_tasks=1)
    out: dict[str, Any] = {"dir": d}
    for name, log in zip(tasks, done):
        assert log.status == "success", (name, log.error)
        out[name] = log
    return out


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from ek.agents.cli import main

    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _report(path: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    code, out, err = _cli(["report", path, "--json", *extra], capsys)
    assert code == 0, err
    return dict(json.loads(out))


def _inspect_aggregate(log: Any, key: str) -> float:
    """The ek aggregate Inspect itself logged for ``key`` (the adapter's ``ek/ek_aggregate``)."""
    for s in log.results.scores:
        if s.scorer == "ek_scorer" and key in s.metrics:
            return float(s.metrics[key].value)
    raise KeyError(key)


# ----------------------------------------------------------------------------- item 6


def test_report_reads_the_ek_metrics_of_an_inspect_log(
    logs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from ek.agents.bridge import episodes_from_inspect_log
    from ek.agents.toolcalls import ToolCallMetric
    from ek.agents.trajectory import TrajectoryMetric

    good = _report(logs["good"].location, capsys)
    bad = _report(logs["badcalls"].location, capsys)
    assert good["n_trials"] == bad["n_trials"] == 24 and good["n_successes"] == 24
    assert bad["n_successes"] == 24  # the answers stay right: success cannot see the drop
    # was {} before issue 16; cost_per_success since issue 32 (item 4): a priced ek scorer that
    # decides success records its Cost-of-Pass, and the report shows the one figure
    assert set(good["metrics"]) == {"tool_calls", "trajectory", "cost_per_success"}
    assert good["metrics"]["cost_per_success"]["value"] == pytest.approx(
        good["cost"]["cost_of_pass"], rel=1e-12
    )
    assert good["metrics"]["cost_per_success"]["higher_is_better"] is False
    assert good["metrics"]["tool_calls"]["value"] == 1.0
    assert good["metrics"]["trajectory"]["value"] == 1.0
    # badcalls, per epoch: 6 even countries call capital(country="x<c>"): the call matches by
    # name (TP 1) with a wrong argument (FP 1, FN 1, importance 1); 6 odd ones are exact (TP 2).
    # Micro-F1 = 2*18 / (2*18 + 6 + 6) = 0.75 (the same per epoch, so over both epochs).
    # Trajectory (in_order, one expected step): a substituted step costs 1 of a worst case of 2
    # -> 1 - (6*1) / (12*2) = 0.75.
    assert bad["metrics"]["tool_calls"]["value"] == pytest.approx(0.75)
    assert bad["metrics"]["trajectory"]["value"] == pytest.approx(0.75)
    assert (
        bad["metrics"]["tool_calls"]["n"] == 24 and bad["metrics"]["tool_calls"]["higher_is_better"]
    )
    assert bad["unscored"] == {"n": 0, "of": 24, "reason": None}
    # one number whatever the path: Inspect's own logged aggregate, and the ek metric classes
    # run directly on the episodes read back from the log, agree with the report
    assert _inspect_aggregate(logs["badcalls"], "tool_calls") == pytest.approx(0.75)
    assert _inspect_aggregate(logs["badcalls"], "trajectory") == pytest.approx(0.75)
    eps = list(episodes_from_inspect_log(logs["badcalls"].location))
    gold = {c: [{"tool": "capital", "args": {"country": c}}] for c in CAPITALS}
    tc, tr = ToolCallMetric(), TrajectoryMetric()
    assert tc.aggregate([tc(e, gold[e.task_id]) for e in eps]) == pytest.approx(0.75)
    assert tr.aggregate([tr(e, gold[e.task_id]) for e in eps]) == pytest.approx(0.75)
    code, text, _ = _cli(["report", logs["badcalls"].location], capsys)
    assert code == 0 and "tool_calls" in text and "0.7500" in text


def test_a_json_log_reports_the_same_metrics(
    logs: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    dst = tmp_path / "badcalls.json"
    write_eval_log(read_eval_log(logs["badcalls"].location), str(dst), format="json")
    a = _report(logs["badcalls"].location, capsys)
    b = _report(str(dst), capsys)
    assert a["metrics"] == b["metrics"] and a["n_successes"] == b["n_successes"]


def test_gate_fails_when_tool_call_f1_drops(
    logs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression test: the gate used to check only success and pass^k on an Inspect log and
    passed this run (exit 0); tool-call F1 and trajectory fell from 1.0 to 0.75."""
    good, bad = logs["good"].location, logs["badcalls"].location
    code, out, err = _cli(["gate", good, bad, "--json"], capsys)
    assert code == 1, err
    res = json.loads(out)
    by = {c["name"]: c for c in res["checks"]}
    assert by["success_rate"]["verdict"] == "pass"  # 24/24 -> 24/24
    assert by["pass^2"]["verdict"] == "pass"
    for name in ("tool_calls", "trajectory"):
        assert by[name]["verdict"] == "regression" and by[name]["failed"]
        assert (by[name]["baseline"], by[name]["current"]) == (1.0, pytest.approx(0.75))
    code, out, _ = _cli(["gate", good, bad], capsys)
    assert code == 1 and "REGRESSION" in out and "tool_calls" in out
    assert _cli(["gate", good, good], capsys)[0] == 0
    assert _cli(["gate", bad, good], capsys)[0] == 0  # an improvement passes


# ----------------------------------------------------------------------------- --success-scorer


def test_a_log_scored_only_by_match_needs_success_scorer(
    logs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = logs["matchonly"].location
    code, _, err = _cli(["report", path], capsys)
    # every sample unscored: the error says so, and how to name the scorer that decides
    assert code == 2 and "24 of 24 samples unscored" in err and "--success-scorer" in err
    assert "'match'" in err
    rep = _report(path, capsys, "--success-scorer", "match")
    # 5 of 12 countries answered wrongly in each of 2 epochs -> 14 of 24 attempts pass
    assert (rep["n_trials"], rep["n_successes"]) == (24, 14)
    assert rep["metrics"] == {} and rep["unscored"]["n"] == 0
    assert _cli(["gate", path, path, "--success-scorer", "match"], capsys)[0] == 0
    code, _, err = _cli(["report", path, "--success-scorer", "includes"], capsys)
    assert code == 2 and "scorer 'includes' did not score it" in err


def test_success_scorer_on_an_ek_scored_log_keeps_task_success_as_a_metric(
    logs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    rep = _report(logs["good"].location, capsys, "--success-scorer", "match")
    assert rep["n_successes"] == 24
    assert set(rep["metrics"]) == {"task_success", "tool_calls", "trajectory", "cost_per_success"}
    assert rep["metrics"]["task_success"]["value"] == 1.0


# ----------------------------------------------------------------------------- item 7


def test_unscored_samples_are_counted_and_the_gate_refuses_them(
    logs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    good, gapped = logs["good"].location, logs["gapped"].location
    rep = _report(gapped, capsys)
    # 3 samples without gold calls x 2 epochs = 6 of 24 attempts the ek scorer could not score
    assert rep["unscored"]["n"] == 6 and rep["unscored"]["of"] == 24
    assert "gold_calls" in rep["unscored"]["reason"]
    assert rep["n_trials"] == 18  # left out of the counts: a missing verdict is not a failure
    code, text, _ = _cli(["report", gapped], capsys)
    assert code == 0 and "6 of 24 samples unscored: " in text
    code, _, err = _cli(["gate", good, gapped], capsys)
    assert code == 2 and "6 of 24 samples unscored" in err and "--allow-unscored" in err
    code, out, _ = _cli(["gate", good, gapped, "--allow-unscored"], capsys)
    assert code == 0 and "gated on the scored samples only" in out
    # match decides success for all 24, but the ek metrics still miss 6 samples: still counted
    rep = _report(gapped, capsys, "--success-scorer", "match")
    assert rep["n_trials"] == 24 and rep["unscored"]["n"] == 6
    assert rep["metrics"]["tool_calls"]["n"] == 18
    assert _cli(["gate", good, gapped, "--success-scorer", "match"], capsys)[0] == 2


# ----------------------------------------------------------------------------- item 12


def test_a_truncated_eval_log_is_named(
    logs: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = Path(logs["good"].location)
    cut = tmp_path / "cut.eval"
    cut.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    code, _, err = _cli(["report", str(cut)], capsys)
    assert code == 2 and str(cut) in err and "truncated" in err
    assert "Traceback" not in err
    whole = tmp_path / "whole.eval"
    shutil.copy(src, whole)
    assert _cli(["gate", str(whole), str(cut)], capsys)[0] == 2
