"""Issue 16 ("one number, whatever the path"), the Inspect AI adapter's items, end to end.

Each test runs a real Inspect ``eval()``: Inspect's ``react()`` loop with the refund tools of
``examples/inspect_task.py``, driven by a scripted ``mockllm`` with explicit usage (offline, no
API key), scored by the ek scorers; re-scoring goes through the ``inspect score`` CLI in a
subprocess (the network guard's environment).

- item 5: gold calls in Inspect's own ``ToolCall`` shape (``function``/``arguments``), as
  ``ToolCall`` objects, or in OpenAI's shape score like ek's ``tool``/``args``; a shape that is
  none of them is unscored with the accepted shapes listed, never NaN in silence;
- item 7: ``Epochs(2, "ek/pass_hat_5")`` says why it is NaN, per sample in the log and as a
  warning;
- item 8: per-sample Cost-of-Pass after epoch reduction is a ratio of sums over the epochs; a
  scorer without a price never borrows another scorer's dollars (order does not matter);
- item 9: ``inspect score LOG`` with no ``--scorer`` re-scores an ek-scored log;
- item 12: ``-S 'price={input: 2.5e-6, output: 1e-5}'`` (YAML reads ``1e-5`` as a string) works;
  a non-numeric rate is refused with a message naming it.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "inspect_task.py"

#: One model call of the scripted agent: 1000 input x 2.5e-6 + 100 output x 1e-5 = $0.0035.
CALL = 0.0035


def _env(log_dir: Path) -> dict[str, str]:
    env = dict(os.environ)  # conftest's offline settings (telemetry off, caches in scratch)
    env.pop("INSPECT_TELEMETRY", None)  # Inspect reads it as a hook *module name*, not a flag
    env["INSPECT_LOG_DIR"] = str(log_dir)
    env["INSPECT_DISPLAY"] = "none"
    return env


def load_example(name: str) -> ModuleType:
    """``examples/inspect_task.py`` imported as module ``name``."""
    os.environ.pop("INSPECT_TELEMETRY", None)
    spec = importlib.util.spec_from_file_location(name, EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def ex() -> ModuleType:
    return load_example("ek_inspect_example_issue16")


def _run(task: Any, log_dir: Path) -> Any:
    from inspect_ai import eval

    [log] = eval(task, display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    return log


def _task(
    ex: ModuleType,
    scorer: Any,
    *,
    samples: list[Any] | None = None,
    epochs: Any = 1,
    degraded: bool = False,
    policy: Callable[..., Any] | None = None,
) -> Any:
    """The example's refund task, built inline (no ``@task``), with the given scorer(s)."""
    from inspect_ai import Task
    from inspect_ai.agent import AgentSubmit, react
    from inspect_ai.model import get_model

    return Task(
        dataset=samples if samples is not None else ex.samples(),
        solver=react(
            tools=[ex.lookup_order(), ex.refund_order()], submit=AgentSubmit(answer_only=True)
        ),
        scorer=scorer,
        epochs=epochs,
        model=get_model("mockllm/model", custom_outputs=policy or ex.scripted_agent(degraded)),
    )


def _by_sample(log: Any, scorer: str) -> dict[tuple[str, int], Any]:
    return {(str(s.id), s.epoch): s.scores[scorer] for s in log.samples}


def _metric(log: Any, scorer: str, name: str, reducer: str | None, metric: str) -> float:
    for s in log.results.scores:
        if s.scorer == scorer and s.name == name and s.reducer == reducer and metric in s.metrics:
            return float(s.metrics[metric].value)
    raise KeyError((scorer, name, reducer, metric))


def _inspect_score(log: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    cmd = [str(Path(sys.executable).parent / "inspect"), "score", str(log), *args]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(log.parent),
        cwd=log.parent,
        input=stdin,
    )


# --------------------------------------------------------------------------- item 5: gold shapes


def test_gold_calls_in_any_host_shape_score_like_ek_steps(ex: ModuleType, tmp_path: Path) -> None:
    from ek.adapters.inspect import tool_calls
    from inspect_ai.dataset import Sample
    from inspect_ai.tool import ToolCall

    a1 = {"order_id": "A1"}, {"order_id": "A1", "amount": 20}
    shapes: dict[str, Any] = {
        "ek": [{"tool": "lookup_order", "args": a1[0]}, {"tool": "refund_order", "args": a1[1]}],
        "inspect": [
            {"function": "lookup_order", "arguments": a1[0]},
            {"function": "refund_order", "arguments": a1[1]},
        ],
        "inspect-objects": [
            ToolCall(id="g1", function="lookup_order", arguments=a1[0]),
            ToolCall(id="g2", function="refund_order", arguments=a1[1]),
        ],
        "openai": [
            {
                "type": "function",
                "function": {"name": "lookup_order", "arguments": '{"order_id": "A1"}'},
            },
            {
                "type": "function",
                "function": {
                    "name": "refund_order",
                    "arguments": '{"order_id": "A1", "amount": 20}',
                },
            },
        ],
        "bad": [{"fn": "lookup_order", "params": a1[0]}],
    }
    # Same input for every sample (the scripted agent reads the order id from it): lookup A1,
    # refund A1 20, submit. Against the gold (lookup, refund) every call matches: F1 = 1.
    samples = [
        Sample(id=k, input="Please refund order A1.", target="refunded", metadata={"gold_calls": v})
        for k, v in shapes.items()
    ]
    log = _run(_task(ex, tool_calls(), samples=samples), tmp_path)
    got = _by_sample(log, "tool_calls")
    for k in ("ek", "inspect", "inspect-objects", "openai"):
        assert got[(k, 1)].value["tool_calls"] == 1.0, (k, got[(k, 1)].explanation)
        # issue 32, item 1: tool_calls() was given no check, so it decides no success
        assert "success" not in got[(k, 1)].value
    bad = got[("bad", 1)]
    assert bad.reason == "scoring_failed" and math.isnan(bad.value)
    assert "accepted call shapes" in bad.explanation and "function/arguments" in bad.explanation


def test_gold_shape_is_documented() -> None:
    import ek.adapters.inspect as eki

    doc = eki.__doc__ or ""
    assert 'metadata["gold_calls"]' in doc and "function" in doc and "arguments" in doc


# --------------------------------------------------------------------------- item 7: k > epochs


def test_pass_hat_with_k_above_the_epochs_says_so(
    ex: ModuleType, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from ek.adapters.inspect import task_success
    from inspect_ai import Epochs

    caplog.set_level(logging.WARNING, logger="ek.adapters.inspect._reducers")
    task = _task(
        ex, task_success(check="final_state", price=ex.PRICE), epochs=Epochs(2, "ek/pass_hat_5")
    )
    log = _run(task, tmp_path)
    assert math.isnan(_metric(log, "task_success", "success", "ek/pass_hat_5", "accuracy"))
    [red] = [r for r in log.reductions if r.reducer == "ek/pass_hat_5"]
    for s in red.samples:  # in the log, per sample: why it is NaN and what to do
        assert "needs at least k=5 epochs, but the evaluation ran 2" in (s.explanation or "")
        assert "Epochs(5, ...)" in (s.explanation or "")
    assert any("needs at least k=5 epochs" in r.getMessage() for r in caplog.records)


# ------------------------------------------------- item 8: Cost-of-Pass per sample and dollars


def test_per_sample_cost_of_pass_after_reduction_is_a_ratio_of_sums(
    ex: ModuleType, tmp_path: Path
) -> None:
    from ek.adapters.inspect import cost_of_pass
    from inspect_ai import Epochs

    task = _task(
        ex,
        cost_of_pass(check="final_state", price=ex.PRICE),
        epochs=Epochs(3, ["ek/pass_hat_2"]),
        degraded=True,
    )
    log = _run(task, tmp_path)
    [red] = [r for r in log.reductions if r.reducer == "ek/pass_hat_2"]
    got = {str(s.sample_id): s.value for s in red.samples}
    # Degraded agent, per sample over its 3 attempts (one model call = $0.0035):
    #   A1: two failed attempts (refund 999, submit: 2 calls = $0.007) and one success
    #       (lookup, refund, submit: 3 calls = $0.0105) -> $0.0245 / 1 success = 0.0245
    #       (the mean per attempt would be 0.0245 / 3 = 0.00817: the bug)
    #   A2: two failed ($0.007 each) and one success (lookup, a failing refund, refund,
    #       submit: 4 calls = $0.014) -> $0.028 / 1 = 0.028
    #   A3: three successes of $0.0105 -> 0.0315 / 3 = 0.0105
    #   B9: three successes of 2 calls (failing lookup, submit) -> 0.021 / 3 = 0.007
    want = {
        "refund-A1": (7 * CALL) / 1,
        "refund-A2": (8 * CALL) / 1,
        "refund-A3": (9 * CALL) / 3,
        "refund-B9": (6 * CALL) / 3,
    }
    for tid, cop in want.items():
        assert math.isclose(got[tid]["cost_per_success"], cop, rel_tol=1e-12), tid
    # ``dollars`` stays dollars per attempt (documented: a mean by definition)
    assert math.isclose(got["refund-A1"]["dollars"], 7 * CALL / 3, rel_tol=1e-12)
    # and the corpus figure over all 12 attempts is one number: 30 calls x $0.0035 / 8 successes
    corpus = 30 * CALL / 8
    for name in ("success", "cost_per_success"):
        v = _metric(log, "cost_of_pass", name, None, "ek/cost_of_pass_metric")
        assert math.isclose(v, corpus, rel_tol=1e-12)


def test_a_scorer_without_a_price_never_borrows_dollars(ex: ModuleType, tmp_path: Path) -> None:
    from ek.adapters.inspect import task_success, tool_calls, trajectory

    # before, between and after a priced scorer: the unpriced ones stay unknown (NaN), in both
    # orders; the priced one is $0.0105 for A1 (3 calls) whatever ran before it
    orders = {
        "priced-middle": [
            tool_calls(check="final_state"),
            task_success(check="final_state", price=ex.PRICE),
            trajectory(check="final_state"),
        ],
        "priced-first": [
            task_success(check="final_state", price=ex.PRICE),
            trajectory(check="final_state"),
            tool_calls(check="final_state"),
        ],
    }
    for name, scorers in orders.items():
        log = _run(_task(ex, scorers), tmp_path / name)
        for (tid, _), sc in _by_sample(log, "task_success").items():
            calls = {"refund-A2": 4, "refund-B9": 2}.get(tid, 3)
            assert math.isclose(sc.value["dollars"], calls * CALL, rel_tol=1e-12), (name, tid)
        for scorer in ("tool_calls", "trajectory"):
            for key, sc in _by_sample(log, scorer).items():
                assert math.isnan(sc.value["dollars"]), (name, scorer, key, sc.value)
                assert sc.metadata["ek"]["dollars"] is None
            assert math.isnan(_metric(log, scorer, "success", None, "ek/cost_of_pass_metric"))


def test_dollars_inspect_recorded_are_the_same_for_every_scorer(
    ex: ModuleType, tmp_path: Path
) -> None:
    """The task's own price (Inspect's ``total_cost`` on the model usage) prices every scorer
    that has no price of its own, in whatever order."""
    from ek.adapters.inspect import task_success, tool_calls

    base = ex.scripted_agent()

    def priced(*args: Any) -> Any:
        out = base(*args)
        out.usage.total_cost = 0.002  # what Inspect records when it knows the model's price
        return out

    log = _run(
        _task(
            ex, [tool_calls(check="final_state"), task_success(check="final_state")], policy=priced
        ),
        tmp_path,
    )
    for scorer in ("tool_calls", "task_success"):
        for (tid, _), sc in _by_sample(log, scorer).items():
            calls = {"refund-A2": 4, "refund-B9": 2}.get(tid, 3)
            assert math.isclose(sc.value["dollars"], calls * 0.002, rel_tol=1e-12), (scorer, tid)


# ------------------------------------------------- items 9 and 12: re-scoring with the CLI


@pytest.fixture(scope="module")
def scored_log(ex: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from ek.adapters.inspect import ek_scorer, task_success, tool_calls
    from inspect_ai import Epochs

    task = _task(
        ex,
        [
            task_success(check="final_state", price=ex.PRICE),
            tool_calls(check="final_state", price=ex.PRICE),
            ek_scorer("trajectory", check="final_state", price=ex.PRICE),
        ],
        epochs=Epochs(2, ["ek/pass_hat_2", "mean"]),
    )
    return _run(task, tmp_path_factory.mktemp("scored"))


def _copy(log: Any, tmp_path: Path) -> Path:
    src = Path(log.location)
    dst = tmp_path / src.name
    dst.write_bytes(src.read_bytes())
    return dst


def test_rescore_with_no_flags_reloads_the_recorded_ek_scorers(
    scored_log: Any, tmp_path: Path
) -> None:
    from inspect_ai.log import read_eval_log

    # the task was built inline (no @task): no task file to fall back on, only the names
    assert [s.name for s in scored_log.eval.scorers] == ["task_success", "tool_calls", "ek_scorer"]
    log = _copy(scored_log, tmp_path)
    # no flags at all: Inspect asks "append or overwrite?" and where to write; the defaults
    # (append; a new "-scored" file) are taken
    r = _inspect_score(log, stdin="\n\n\n")
    assert r.returncode == 0, r.stdout + r.stderr
    [out] = [p for p in tmp_path.glob("*.eval") if p != log]
    rescored = read_eval_log(str(out))
    for sample in rescored.samples:
        for name in ("task_success", "tool_calls", "ek_scorer"):
            before, after = sample.scores[name], sample.scores[f"{name}1"]
            assert after.value == before.value, (sample.id, name)
            assert after.metadata["ek"]["dollars"] == before.metadata["ek"]["dollars"]
    # and the recorded metrics are recomputed from the re-scored samples
    assert math.isclose(
        _metric(rescored, "tool_calls", "tool_calls", None, "ek/micro_f1"),
        _metric(scored_log, "tool_calls", "tool_calls", None, "ek/micro_f1"),
        rel_tol=1e-12,
    )


def test_rescore_with_a_yaml_price_of_numeric_strings(scored_log: Any, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    log = _copy(scored_log, tmp_path)
    r = _inspect_score(
        log,
        "--scorer",
        "ek/cost_of_pass",
        "-S",
        "price={input: 2.5e-6, output: 1e-5}",  # YAML 1.1: both are strings, not floats
        "-S",
        "check=final_state",
        "--action",
        "append",
        "--overwrite",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rescored = read_eval_log(str(log))
    for sample in rescored.samples:
        calls = {"refund-A2": 4, "refund-B9": 2}.get(str(sample.id), 3)
        cop = sample.scores["cost_of_pass"]
        assert math.isclose(cop.value["dollars"], calls * CALL, rel_tol=1e-12), sample.id
    # 2 epochs x (3 + 4 + 3 + 2) calls x $0.0035 / 8 successes
    want = 2 * 12 * CALL / 8
    got = _metric(rescored, "cost_of_pass", "cost_per_success", None, "ek/cost_of_pass_metric")
    assert math.isclose(got, want, rel_tol=1e-12)


def test_rescore_refuses_a_non_numeric_rate_by_name(scored_log: Any, tmp_path: Path) -> None:
    log = _copy(scored_log, tmp_path)
    r = _inspect_score(
        log, "--scorer", "ek/cost_of_pass", "-S", "price={output: cheap}", "--overwrite"
    )
    assert r.returncode != 0
    assert "price['output'] must be a number (USD per token) or a numeric string, got 'cheap'" in (
        r.stdout + r.stderr
    )


def test_price_strings_in_python() -> None:
    from ek.adapters.inspect import cost_of_pass

    cost_of_pass(price={"input": "2.5e-6", "output": " 1e-5 "})  # accepted
    with pytest.raises(TypeError, match=r"price\['input'\] must be a number .* got 'x'"):
        cost_of_pass(price={"input": "x"})
    with pytest.raises(TypeError, match=r"price\['output'\] must be a number .* got 'abc'"):
        cost_of_pass(prices={"mockllm/model": {"output": "abc"}})
