"""ek.adapters.inspect without running an eval: reducers, metrics, registry, converters."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("inspect_ai")

import ek.adapters.inspect as eki
from ek.adapters.inspect._metrics import cost_of_pass_value
from inspect_ai.scorer import SampleScore, Score, pass_at, pass_k

from ek.agents.base import Episode, Step
from ek.agents.bridge import trajectory_from_messages


def _ek_score(
    success: bool, dollars: float | None, tp: float = 0, fp: float = 0, fn: float = 0
) -> Score:
    rec = {
        "success": success,
        "successes": int(success),
        "n": 1,
        "dollars": dollars,
        "tokens": 10,
        "scores": {"tool_calls": {"value": 0.0, "detail": {"tp": tp, "fp": fp, "fn": fn}}},
    }
    value = {
        "success": float(success),
        "dollars": math.nan if dollars is None else dollars,
        "tokens": 10.0,
        "tool_calls": 0.0,
    }
    return Score(value=value, metadata={"ek": rec})


# --------------------------------------------------------------------------- reducers


def test_pass_hat_and_pass_at_hand_derived_and_carry_cost() -> None:
    # epochs 1,0,1,0 -> n=4, c=2. pass^2 = C(2,2)/C(4,2) = 1/6; pass@2 = 1 - C(2,2)/C(4,2) = 5/6
    eps = [_ek_score(True, 1.0), _ek_score(False, 2.0), _ek_score(True, 3.0), _ek_score(False, 4.0)]
    r = eki.pass_hat(2)(eps)
    assert math.isclose(r.value["success"], 1 / 6)
    assert r.value["dollars"] == 2.5  # mean per attempt: (1+2+3+4)/4
    rec = r.metadata["ek"]
    # summed over epochs, so Cost-of-Pass after reduction = 10 / 2 = 5 (ratio of sums)
    assert (rec["successes"], rec["n"], rec["dollars"]) == (2, 4, 10.0)
    assert cost_of_pass_value([rec]) == 5.0
    assert math.isclose(eki.pass_at(2)(eps).value["success"], 5 / 6)


def test_reducer_skips_unscored_epochs_and_is_nan_below_k() -> None:
    eps = [_ek_score(True, 1.0), Score.unscored(reason="scoring_failed"), _ek_score(True, None)]
    r = eki.pass_hat(2)(eps)
    assert r.value["success"] == 1.0  # n=2 scored, c=2
    assert math.isnan(r.value["dollars"])  # one attempt's dollars unknown: mean unknown
    assert r.metadata["ek"]["dollars"] is None
    r3 = eki.pass_hat(3)(eps)
    assert math.isnan(r3.value["success"]) and "fewer than k=3" in (r3.explanation or "")
    assert math.isnan(eki.pass_hat(1)([Score.unscored()]).value)
    with pytest.raises(ValueError, match="k must be >= 1"):
        eki.pass_hat(0)


def test_reduced_ek_metric_keys_are_their_own_ratio_of_sums() -> None:
    def cop(success: bool, dollars: float, tp: float, fp: float) -> Score:
        s = _ek_score(success, dollars, tp=tp, fp=fp)
        rec = s.metadata["ek"]
        rec["scores"]["cost_per_success"] = {
            "value": dollars,
            "detail": {"dollars": dollars, "successes": int(success), "n": 1},
        }
        return Score(value={**s.value, "cost_per_success": dollars}, metadata={"ek": rec})

    # 3 attempts at $0.007, one success: Cost-of-Pass = 0.021 / 1 (the mean would be 0.007).
    # tool_calls: (tp, fp) = (2, 0), (0, 2), (0, 0) -> micro-F1 = 2*2 / (2*2 + 2 + 0) = 2/3
    # (the mean of the per-epoch F1s would be (1 + 0 + value of 0/0) / 3)
    r = eki.pass_hat(1)([cop(True, 0.007, 2, 0), cop(False, 0.007, 0, 2), cop(False, 0.007, 0, 0)])
    assert math.isclose(r.value["cost_per_success"], 0.021, rel_tol=1e-12)
    assert math.isclose(r.value["tool_calls"], 2 / 3, rel_tol=1e-12)
    assert math.isclose(r.value["dollars"], 0.007, rel_tol=1e-12)  # dollars per attempt
    assert math.isclose(r.value["success"], 1 / 3)  # pass^1 = c / n
    # no success: inf per success, written as strict JSON in the record
    r0 = eki.pass_hat(1)([cop(False, 0.007, 0, 0)])
    assert r0.value["cost_per_success"] == math.inf
    assert r0.metadata["ek"]["scores"]["cost_per_success"]["value"] == "Infinity"


def test_too_few_epochs_for_k_is_explained() -> None:
    r = eki.pass_hat(5)([_ek_score(True, 1.0), _ek_score(True, 1.0)])
    assert math.isnan(r.value["success"])
    assert "needs at least k=5 epochs, but the evaluation ran 2" in (r.explanation or "")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["C", "I"]), min_size=1, max_size=8), st.integers(1, 4))
def test_scalar_values_agree_with_inspect_builtins(values: list[str], k: int) -> None:
    scores = [Score(value=v) for v in values]
    for ours, theirs in ((eki.pass_hat(k), pass_k(k)), (eki.pass_at(k), pass_at(k))):
        a, b = ours(scores).value, theirs(scores).value
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, abs_tol=1e-12)


# --------------------------------------------------------------------------- metrics


def _ss(score: Score, i: int) -> SampleScore:
    return SampleScore(score=score, sample_id=i)


def test_micro_f1_is_not_a_mean_of_f1s() -> None:
    # sample 1: tp=1, fn=0 -> F1 1.0; sample 2: tp=0, fp=9 -> F1 0.
    # mean of F1s = 0.5; micro-F1 = 2*1 / (2*1 + 9 + 0) = 2/11
    scores = [_ss(_ek_score(True, 1.0, tp=1), 1), _ss(_ek_score(False, 1.0, fp=9), 2)]
    assert math.isclose(eki.micro_f1("tool_calls")(scores), 2 / 11)
    assert math.isclose(eki.ek_aggregate("tool_calls")(scores), 2 / 11)
    assert eki.ek_aggregate()(scores) == pytest.approx({"tool_calls": 2 / 11})


def test_cost_of_pass_metric() -> None:
    # (1 + 3) dollars / 1 success = 4; mean of per-sample dollars-per-success would be undefined
    ok = [_ss(_ek_score(True, 1.0), 1), _ss(_ek_score(False, 3.0), 2)]
    assert eki.cost_of_pass_metric()(ok) == 4.0
    assert eki.cost_of_pass_metric()([_ss(_ek_score(False, 3.0), 1)]) == math.inf
    assert math.isnan(eki.cost_of_pass_metric()([*ok, _ss(_ek_score(True, None), 3)]))
    assert math.isnan(eki.cost_of_pass_metric()([]))


# --------------------------------------------------------------------------- registry


def test_names_resolve_through_the_inspect_registry() -> None:
    from inspect_ai._util.registry import registry_info
    from inspect_ai.scorer._reducer import create_reducers
    from inspect_ai.util import registry_create

    s = registry_create("scorer", "ek/tool_calls", check="final_state")
    assert registry_info(s).name == "ek/tool_calls"
    # the bare name Inspect records in a log (``log.eval.scorers``) resolves too, with the
    # same scorer behind it (so ``inspect score LOG`` needs no --scorer)
    bare = registry_create("scorer", "tool_calls", check="final_state")
    assert registry_info(bare).name == "tool_calls"
    assert registry_info(bare).metadata["metrics"] == registry_info(s).metadata["metrics"]
    [r] = create_reducers("ek/pass_hat_3")  # the _3 suffix is k
    assert registry_info(r).name == "ek/pass_hat"
    assert set(eki._registry.REGISTERED) >= {"ek/ek_scorer", "ek/pass_hat", "ek/micro_f1"}


def test_entry_point_is_declared_and_light() -> None:
    from importlib.metadata import entry_points

    [ep] = [e for e in entry_points(group="inspect_ai") if e.name == "ek"]
    assert ep.value == "ek.adapters.inspect._registry"
    r = subprocess.run(
        [sys.executable, "-c", "import ek.adapters.inspect._registry"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert r.returncode == 0, r.stderr


def test_import_without_inspect_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['inspect_ai'] = None\n"
        "try:\n    import ek.adapters.inspect\n"
        "except ImportError as e:\n    print(e); sys.exit(0)\nsys.exit(1)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "pip install ek-agents[inspect]" in r.stdout, r.stdout + r.stderr


def test_bad_scorer_arguments_fail_at_construction() -> None:
    with pytest.raises(TypeError, match="price must be"):
        eki.task_success(price=3)
    with pytest.raises(TypeError, match="unexpected keyword"):
        eki.ek_scorer("tool_calls", nonsense=1)
    with pytest.raises(TypeError, match=r"price\['output'\] must be a number"):
        eki.task_success(price={"input": "1e-6", "output": "one cent"})
    with pytest.raises(TypeError, match="rebuilt from an Inspect log"):
        eki.ek_scorer(metrics=[None])


# --------------------------------------------------------------------------- converters


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["lookup", "refund"]), st.integers(0, 5), st.booleans()),
        max_size=5,
    )
)
def test_episode_to_messages_round_trips_the_trajectory(calls: list[tuple[str, int, bool]]) -> None:
    steps = [
        Step(
            t, {"n": n}, observation=None if e else f"r{n}", error="boom" if e else None, id=f"c{i}"
        )
        for i, (t, n, e) in enumerate(calls)
    ]
    ep = Episode("t", trajectory=steps, output="done", input="go")
    msgs = eki.episode_to_messages(ep)
    assert list(trajectory_from_messages(msgs)) == steps
    assert msgs[0].text == "go" and msgs[-1].text == "done"


def test_to_inspect_sample_carries_the_task() -> None:
    from ek.agents.base import TaskSpec

    t = TaskSpec(
        "t1", input="refund A1", gold={"A1": "refunded"}, gold_calls=[Step("refund", {"id": "A1"})]
    )
    s = eki.to_inspect_sample(t, target="refunded")
    assert (s.id, s.input, s.target) == ("t1", "refund A1", "refunded")
    assert TaskSpec.from_dict(s.metadata["ek_task"]) == t


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("INSPECT_TELEMETRY", None)  # an Inspect hook module name, not a flag
    return env
