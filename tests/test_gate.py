"""The variance-aware agent gate, baselines, and the core scalar gate."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import RunProvenance
from ek.agents.harness import (
    GateRefusedError,
    MetricSummary,
    RunLoadError,
    RunSummary,
    agent_regression_gate,
    load_agent_baseline,
    paired_difference,
    run_suite,
    save_agent_baseline,
)
from ek.base import Score
from ek.harness import (
    load_baseline,
    metric_direction,
    regression_gate,
    save_baseline,
)
from ek.jsonio import from_json_safe, to_json_safe
from ek.stats import newcombe_difference, wilson_interval

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

RUN = RunProvenance(agent="bot", model="m1", suite_version="v1", scaffold="s", simulator="u")


def summary(counts: dict[str, tuple[int, int]], k: int = 1, **kw: Any) -> RunSummary:
    return RunSummary(kw.pop("run", RUN), k=k, counts=counts, **kw)


def flat(n_tasks: int, successes: int, k: int = 1) -> RunSummary:
    """n_tasks tasks of k trials; the first `successes` trials (in task order) succeed."""
    counts = {}
    left = successes
    for i in range(n_tasks):
        c = min(k, left)
        left -= c
        counts[f"t{i}"] = (k, c)
    return summary(counts, k)


# ----------------------------------------------------------------------------- hand-derived


def test_success_rate_check_is_newcombe_of_raw_counts() -> None:
    # 48/60 -> 30/60: Newcombe (current first) from the raw counts
    g = agent_regression_gate(flat(60, 30), flat(60, 48))
    c = g.checks[0]
    ref = newcombe_difference(30, 60, 48, 60)
    assert c.name == "success_rate" and c.interval == ref
    assert (c.current, c.baseline) == (0.5, 0.8)
    assert c.interval.high < 0 and c.verdict == "regression" and not g.passed
    assert c.detail["current"] == [30, 60] and c.detail["baseline"] == [48, 60]


def test_agrees_with_statsmodels() -> None:
    sm = pytest.importorskip("statsmodels.stats.proportion")
    low, high = sm.confint_proportions_2indep(
        41, 60, 50, 60, method="newcomb", compare="diff", alpha=0.10
    )
    c = agent_regression_gate(flat(60, 41), flat(60, 50), confidence=0.90).checks[0]
    assert c.interval.low == pytest.approx(low, abs=1e-10)
    assert c.interval.high == pytest.approx(high, abs=1e-10)


def test_tolerance_moves_the_threshold() -> None:
    # 50/60 -> 45/60: Newcombe high ~ +0.07 (interval contains 0): passes, underpowered
    g = agent_regression_gate(flat(60, 45), flat(60, 50))
    c = g.checks[0]
    assert c.verdict == "underpowered" and g.passed
    assert any("underpowered" in w for w in g.warnings)
    # a big sample with the same rates: the interval excludes 0 ...
    big = agent_regression_gate(flat(3000, 2250), flat(3000, 2500))
    hi = big.checks[0].interval.high
    assert hi < 0 and big.checks[0].verdict == "regression"
    # ... but a tolerance wider than the whole interval's distance from 0 lets it through
    tol = -hi + 0.001
    ok = agent_regression_gate(flat(3000, 2250), flat(3000, 2500), tolerance=tol)
    assert ok.passed and ok.checks[0].verdict == "within_tolerance"


def test_improvement_is_a_clean_pass() -> None:
    g = agent_regression_gate(flat(60, 50), flat(60, 30))
    assert g.passed and g.checks[0].verdict == "pass"
    assert not [w for w in g.warnings if "underpowered" in w]


def test_pass_hat_k_check_uses_difference_interval() -> None:
    from ek.agents.reliability import pass_hat_k
    from ek.stats import difference_interval

    base = summary({"a": (4, 4), "b": (4, 3), "c": (4, 4), "d": (4, 2)}, k=4)
    cur = summary({"a": (4, 2), "b": (4, 1), "c": (4, 4), "d": (4, 0)}, k=4)
    g = agent_regression_gate(cur, base)
    c = g.checks[1]
    assert c.name == "pass^4" and c.kind == "pass_hat_k"
    # pass^4 per task: current (0, 0, 1, 0), baseline (1, 0, 1, 0)
    ref = difference_interval(
        [pass_hat_k(4, x, 4) for x in (2, 1, 4, 0)], [pass_hat_k(4, x, 4) for x in (4, 3, 4, 2)]
    )
    assert c.interval == ref and c.current == 0.25 and c.baseline == 0.5


def test_k_below_two_skips_pass_hat_k_with_a_warning() -> None:
    g = agent_regression_gate(flat(10, 5), flat(10, 5))
    assert [c.name for c in g.checks] == ["success_rate"]
    assert any("pass^k not checked" in w for w in g.warnings)


# ----------------------------------------------------------------------------- refusals


def test_empty_runs_are_refused() -> None:
    empty = summary({"t0": (0, 0)})
    with pytest.raises(GateRefusedError, match="baseline has no trial"):
        agent_regression_gate(flat(5, 3), empty)
    with pytest.raises(GateRefusedError, match="current run has no trial"):
        agent_regression_gate(empty, flat(5, 3))
    with pytest.raises(GateRefusedError):
        agent_regression_gate(summary({}), flat(5, 3))


@pytest.mark.parametrize("key", ["simulator", "suite_version", "scaffold"])
def test_incomparable_runs_are_refused(key: str) -> None:
    other = RunProvenance(**{**RUN.to_dict(), key: "changed"})
    with pytest.raises(GateRefusedError, match=key):
        agent_regression_gate(summary({"t": (1, 1)}, run=other), summary({"t": (1, 1)}))


def test_agent_and_model_changes_are_what_a_gate_compares() -> None:
    other = RunProvenance(**{**RUN.to_dict(), "agent": "bot2", "model": "m2"})
    assert agent_regression_gate(summary({"t": (1, 1)}, run=other), summary({"t": (1, 1)})).passed


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        agent_regression_gate(flat(5, 3), flat(5, 3), tolerance=-0.1)
    with pytest.raises(ValueError):
        agent_regression_gate(flat(5, 3), flat(5, 3), confidence=1.0)
    with pytest.raises(TypeError):
        agent_regression_gate(42, flat(5, 3))


# ----------------------------------------------------------------------------- metrics direction


def _cost_scores(dollars: list[float], ok: list[bool]) -> dict[str, tuple[Score, ...]]:
    return {
        f"t{i}": (Score(d, {"dollars": d, "successes": int(s), "n": 1, "higher_is_better": False}),)
        for i, (d, s) in enumerate(zip(dollars, ok))
    }


def _with_cost(dollars: list[float], ok: list[bool]) -> RunSummary:
    counts = {f"t{i}": (1, int(s)) for i, s in enumerate(ok)}
    scores = _cost_scores(dollars, ok)
    m = MetricSummary("cost_per_success", False, sum(dollars) / sum(ok), scores)
    return summary(counts, metrics={"cost_per_success": m})


def test_cost_regression_is_caught_in_the_right_direction() -> None:
    ok = [True] * 40
    cheap = _with_cost([1.0 + 0.01 * (i % 5) for i in range(40)], ok)
    dear = _with_cost([2.0 + 0.01 * (i % 5) for i in range(40)], ok)
    g = agent_regression_gate(dear, cheap)
    c = next(c for c in g.checks if c.name == "cost_per_success")
    # Cost-of-Pass doubled (1.02 -> 2.02 per success): lower is better, so this is a regression
    assert c.higher_is_better is False and c.verdict == "regression" and not g.passed
    assert c.current == pytest.approx(2.02) and c.baseline == pytest.approx(1.02)
    assert c.detail["exact_aggregate"] is True
    better = agent_regression_gate(cheap, dear)
    assert next(c for c in better.checks if c.name == "cost_per_success").verdict == "pass"


def test_cost_per_success_is_not_in_the_name_table() -> None:
    import ek.harness

    assert "cost_per_success" not in ek.harness.LOWER_IS_BETTER
    assert metric_direction("cost_per_success") is True  # the name alone would be wrong ...
    assert (
        metric_direction("cost_per_success", {"higher_is_better": False}) is False
    )  # ... read the stamp


def test_metric_direction_change_is_refused() -> None:
    a = _with_cost([1.0] * 5, [True] * 5)
    m = a.metrics["cost_per_success"]
    flipped = MetricSummary(m.name, True, m.value, m.scores)
    b = summary(dict(a.counts), metrics={"cost_per_success": flipped})
    with pytest.raises(GateRefusedError, match="direction"):
        agent_regression_gate(b, a)


def test_unregistered_metric_falls_back_with_a_warning() -> None:
    def run_(v: float) -> RunSummary:
        scores = {f"t{i}": (Score(v + 0.01 * (i % 3), {}),) for i in range(30)}
        m = MetricSummary("my_metric", True, v, scores)
        return summary({f"t{i}": (1, 1) for i in range(30)}, metrics={"my_metric": m})

    g = agent_regression_gate(run_(0.5), run_(0.9))
    c = next(c for c in g.checks if c.name == "my_metric")
    assert c.verdict == "regression" and c.detail["exact_aggregate"] is False
    assert any("not registered" in w for w in g.warnings)


# ----------------------------------------------------------------------------- undefined checks


def _nan_cost(n: int = 30) -> RunSummary:
    """A run whose Cost-of-Pass is NaN: one trial's dollars are unknown."""
    ok = [True] * n
    scores = dict(_cost_scores([1.0] * n, ok))
    nan = {"dollars": None, "successes": 1, "n": 1, "higher_is_better": False}
    scores["t0"] = (Score(math.nan, nan),)
    m = MetricSummary("cost_per_success", False, math.nan, scores)
    return summary({f"t{i}": (1, 1) for i in range(n)}, metrics={"cost_per_success": m})


def test_an_undefined_check_fails_the_gate_and_says_why() -> None:
    cheap = _with_cost([1.0] * 30, [True] * 30)
    g = agent_regression_gate(_nan_cost(), cheap)
    c = next(c for c in g.checks if c.name == "cost_per_success")
    assert c.verdict == "undefined" and c.failed and not c.regression and not c.allowed
    assert "current value is undefined (NaN" in c.reason
    assert "allow_undefined=['cost_per_success']" in c.reason
    assert not g.passed and g.failures == (c,) and g.regressions == ()
    assert "undefined change in ['cost_per_success']" in g.reason
    d = g.to_dict()["checks"][-1]
    assert d["failed"] is True and d["allowed"] is False
    # the baseline side is named too
    c = next(c for c in agent_regression_gate(cheap, _nan_cost()).checks if c.kind == "metric")
    assert "baseline value is undefined" in c.reason


@pytest.mark.parametrize("allow", [True, ["cost_per_success"], ("cost_per_success", "other")])
def test_allow_undefined_passes_with_a_warning(allow: Any) -> None:
    g = agent_regression_gate(
        _nan_cost(), _with_cost([1.0] * 30, [True] * 30), allow_undefined=allow
    )
    c = next(c for c in g.checks if c.name == "cost_per_success")
    assert g.passed and c.verdict == "undefined" and c.allowed and not c.failed
    assert any("allowed by allow_undefined" in w for w in g.warnings)
    if isinstance(allow, tuple):  # a name that is no check of this gate is reported
        assert any("names no check" in w and "other" in w for w in g.warnings)


def test_allow_undefined_must_name_checks() -> None:
    base = _with_cost([1.0] * 30, [True] * 30)
    with pytest.raises(TypeError, match=r"write \['cost_per_success'\]"):
        agent_regression_gate(_nan_cost(), base, allow_undefined="cost_per_success")
    with pytest.raises(TypeError, match="non-empty str"):
        agent_regression_gate(_nan_cost(), base, allow_undefined=[1])  # type: ignore[list-item]


def test_inf_minus_inf_is_undefined() -> None:
    # nothing succeeded in either run: Cost-of-Pass = sum(dollars) / 0 = inf on both sides
    ok = [False] * 30
    scores = _cost_scores([1.0] * 30, ok)
    m = MetricSummary("cost_per_success", False, math.inf, scores)
    run = summary({f"t{i}": (1, 0) for i in range(30)}, metrics={"cost_per_success": m})
    g = agent_regression_gate(run, run)
    c = next(c for c in g.checks if c.name == "cost_per_success")
    assert c.verdict == "undefined" and c.failed and "both runs are inf" in c.reason
    assert agent_regression_gate(run, run, allow_undefined=["cost_per_success"]).passed


def test_the_two_gates_agree_on_undefined_changes() -> None:
    # the scalar gate: a NaN side, and inf - inf, fail unless allowed (as the agent gate does)
    for cur, base in ((math.nan, 1.0), (1.0, math.nan), (math.inf, math.inf)):
        r = regression_gate({"cost": cur}, {"cost": base})
        assert not r.passed and "undefined (NaN) change" in r.checks[0].reason
        assert "allow_undefined=['cost']" in r.checks[0].reason
        ok = regression_gate({"cost": cur}, {"cost": base}, allow_undefined=["cost"])
        assert ok.passed and "allowed by allow_undefined" in ok.checks[0].reason
        assert regression_gate({"cost": cur}, {"cost": base}, allow_undefined=True).passed
    assert not regression_gate({"cost": math.nan}, {"cost": 1.0}, allow_undefined=["f1"]).passed
    with pytest.raises(TypeError, match="collection of check names"):
        regression_gate({"a": 1.0}, {"a": 1.0}, allow_undefined="a")


# ----------------------------------------------------------------------------- unscored samples


def test_a_run_with_unscored_samples_is_refused_unless_allowed() -> None:
    from ek.agents.harness import Unscored

    base = flat(30, 27)
    cur = summary(
        dict(flat(30, 27).counts), unscored=Unscored(3, 33, "scorer 'match' did not score it")
    )
    with pytest.raises(GateRefusedError, match=r"current run has 3 of 33 samples unscored: scorer"):
        agent_regression_gate(cur, base)
    with pytest.raises(GateRefusedError, match="baseline has 3 of 33 samples unscored"):
        agent_regression_gate(base, cur)
    g = agent_regression_gate(cur, base, allow_unscored=True)
    assert g.passed and any("3 of 33 samples unscored" in w for w in g.warnings)
    assert g.to_dict()["current"]["unscored"] == {
        "n": 3,
        "of": 33,
        "reason": "scorer 'match' did not score it",
    }
    # a run with nothing scored is refused even when unscored samples are allowed
    nothing = summary({}, unscored=Unscored(5, 5, "no ek scorer recorded a verdict"))
    with pytest.raises(GateRefusedError, match="5 of 5 samples unscored"):
        agent_regression_gate(nothing, base, allow_unscored=True)


def test_unscored_and_metric_alias_survive_a_baseline(tmp_path: Path) -> None:
    from ek.agents.harness import Unscored

    scores = {"t0": (Score(1.0, {"tp": 2.0, "fp": 0.0, "fn": 0.0}),)}
    m = MetricSummary("ek_scorer:tool_calls", True, 1.0, scores, metric="tool_calls")
    s = summary(
        {"t0": (1, 1)},
        metrics={m.name: m},
        unscored=Unscored(1, 2, "ek scoring failed: no gold"),
    )
    p = tmp_path / "b.json"
    save_agent_baseline(s, p)
    back = load_agent_baseline(p)
    assert back == s and back.unscored == s.unscored and back.n_unscored == 1
    assert back.metrics[m.name].aggregated_as == "tool_calls"
    c = agent_regression_gate(back, back, allow_unscored=True).checks[-1]
    assert c.name == "ek_scorer:tool_calls" and c.detail["exact_aggregate"] is True
    with pytest.raises(ValueError, match="exceeds"):
        Unscored(3, 2, "x")


# ----------------------------------------------------------------------------- stratified


def test_paired_difference_hand_derived() -> None:
    # d = (0, -0.5, -0.5, 0): mean -0.25, sd = sqrt(1/12) = 0.288675, se = 0.144338
    iv = paired_difference([1.0, 0.5, 0.0, 1.0], [1.0, 1.0, 0.5, 1.0])
    assert iv.point == -0.25
    # the paired t interval: t(0.975; 3 df) = 3.182446305284263 (scipy.stats.t.ppf)
    assert iv.high == pytest.approx(-0.25 + 3.182446305284263 * 0.14433756729740643, abs=1e-12)
    assert paired_difference([0.5], [0.0]).low == -1.0  # one pair: maximally uncertain
    with pytest.raises(ValueError):
        paired_difference([1.0], [1.0, 0.0])


def test_stratified_gate_uses_shared_tasks() -> None:
    base = summary({"a": (2, 2), "b": (2, 1), "c": (2, 0), "d": (2, 2)}, k=2)
    cur = summary({"a": (2, 1), "b": (2, 1), "c": (2, 0), "e": (2, 2)}, k=2)
    g = agent_regression_gate(cur, base, stratified=True)
    c = g.checks[0]
    # shared a, b, c: rates current (0.5, 0.5, 0) vs baseline (1, 0.5, 0)
    assert c.interval == paired_difference([0.5, 0.5, 0.0], [1.0, 0.5, 0.0])
    assert c.detail["tasks"] == 3 and g.stratified
    assert any("left out" in w for w in g.warnings)


def test_stratified_needs_two_shared_tasks() -> None:
    with pytest.raises(GateRefusedError, match="at least 2"):
        agent_regression_gate(summary({"a": (1, 1)}), summary({"b": (1, 1)}), stratified=True)


def _simulate(reps: int, seed: int = 0) -> dict[str, tuple[float, float]]:
    """False-alarm rate (no change) and power (15-point drop) on 60 heterogeneous tasks."""
    rng = random.Random(seed)
    hits = {m: [0, 0] for m in ("gate", "stratified", "ci_vs_point", "overlap")}
    for _ in range(reps):
        p = [rng.betavariate(1.2, 0.8) for _ in range(60)]
        mean = sum(p) / 60
        for j, scale in enumerate((1.0, 1 - 0.15 / mean)):
            base = {f"t{i}": (1, int(rng.random() < pi)) for i, pi in enumerate(p)}
            cur = {f"t{i}": (1, int(rng.random() < pi * scale)) for i, pi in enumerate(p)}
            b, c = summary(base), summary(cur)
            hits["gate"][j] += not agent_regression_gate(c, b).passed
            hits["stratified"][j] += not agent_regression_gate(c, b, stratified=True).passed
            wc, wb = wilson_interval(c.n_successes, 60), wilson_interval(b.n_successes, 60)
            hits["ci_vs_point"][j] += wc.high < wb.point
            hits["overlap"][j] += wc.high < wb.low
    return {m: (fa / reps, pw / reps) for m, (fa, pw) in hits.items()}


def test_power_simulation_fast_version() -> None:
    # the full version, with its table, is bench/gate_power.py; loose bounds here
    r = _simulate(150)
    assert r["gate"][0] <= 0.10 and r["stratified"][0] <= 0.10
    assert r["gate"][1] >= 1.5 * r["overlap"][1]
    assert r["stratified"][1] >= r["gate"][1] - 0.05
    assert r["ci_vs_point"][0] > r["gate"][0]  # the "our CI vs their point" method cries wolf


# ----------------------------------------------------------------------------- baselines


def test_baseline_roundtrip(tmp_path: Path) -> None:
    def agent(task: Any, ctx: Any) -> Any:
        return task.input if ctx.rng.random() < 0.6 else None

    from ek.agents.base import TaskSpec
    from ek.agents.metrics import TaskSuccessMetric

    tasks = [TaskSpec(f"t{i}", input=i, gold=i, slice="s" if i % 2 else None) for i in range(8)]
    res = run_suite(agent, tasks, k=3, run=RUN, metrics=[TaskSuccessMetric()])
    p = tmp_path / "b.json"
    saved = save_agent_baseline(res, p)
    loaded = load_agent_baseline(p)
    assert loaded == saved
    assert loaded.counts == res.counts and loaded.n_successes == sum(res.verdicts)
    assert loaded.run == res.run and loaded.slices == {"s": ("t1", "t3", "t5", "t7")}
    assert loaded.metrics["task_success"].value == res.metrics["task_success"]
    assert agent_regression_gate(res, loaded).passed  # a run against itself


def test_zero_trial_baseline_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="zero trials"):
        save_agent_baseline(summary({"t": (0, 0)}), tmp_path / "b.json")
    assert not (tmp_path / "b.json").exists()


def test_load_agent_baseline_refuses_other_files(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"format": "something-else"}')
    with pytest.raises(RunLoadError):
        load_agent_baseline(p)


def test_inconsistent_baseline_is_refused(tmp_path: Path) -> None:
    d = flat(4, 2).to_dict()
    d["n_successes"] = 3
    with pytest.raises(ValueError, match="inconsistent"):
        RunSummary.from_dict(d)


# ----------------------------------------------------------------------------- core scalar gate


def test_scalar_gate_directions() -> None:
    r = regression_gate(
        {"accuracy": 0.80, "wer": 0.12, "latency": 1.0},
        {"accuracy": 0.82, "wer": 0.10, "latency": 2.0},
        tolerance={"accuracy": 0.05},
    )
    by = {c.name: c for c in r.checks}
    assert not by["accuracy"].regressed  # -0.02 within 0.05
    assert by["wer"].regressed and not by["wer"].higher_is_better  # lower is better: +0.02
    assert not by["latency"].regressed  # halved
    assert not r.passed


def test_scalar_gate_refusals_and_nan() -> None:
    with pytest.raises(ValueError, match="no metric"):
        regression_gate({"a": 1.0}, {})
    with pytest.raises(ValueError, match="not current"):
        regression_gate({"a": 1.0}, {"b": 1.0})
    r = regression_gate({"a": math.nan}, {"a": 1.0})
    assert not r.passed and "NaN" in r.checks[0].reason
    assert regression_gate({"a": 1.0}, {"a": 1.0}, higher_is_better={"a": False}).passed


def test_scalar_baseline_file(tmp_path: Path) -> None:
    p = tmp_path / "b.json"
    save_baseline(p, {"f1": 0.9, "cost": math.inf}, higher_is_better={"f1": True})
    d = load_baseline(p)
    assert d["values"] == {"f1": 0.9, "cost": math.inf}
    with pytest.raises(ValueError):
        save_baseline(p, {})
    (tmp_path / "o.json").write_text("{}")
    with pytest.raises(ValueError, match="scalar baseline"):
        load_baseline(tmp_path / "o.json")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_json_safe_roundtrip(value: Any) -> None:
    import json

    text = json.dumps(to_json_safe(value), allow_nan=False)  # strict JSON always
    assert _same(from_json_safe(json.loads(text)), value)


# ----------------------------------------------------------------------------- the one JSON codec


class _EchoMetric:
    """Scores 1.0 and keeps the agent's output in its detail (a string the model chose)."""

    name = "echo"
    higher_is_better = True

    def __call__(self, pred: Any, gold: Any) -> Score:
        return Score(1.0, {"said": pred.output, "higher_is_better": True})

    def aggregate(self, scores: Any) -> float:
        return float(len(scores))


def test_baseline_keeps_nan_strings_and_infinite_cost(tmp_path: Path) -> None:
    # The model answers the *string* "NaN" and never succeeds (gold is 1), so Cost-of-Pass is
    # inf (priced dollars / 0 successes). Both must come back from the baseline file as they
    # went in: the string as a string, the float as inf.
    from ek.agents.base import Cost, Episode, TaskSpec
    from ek.agents.cost import per_million
    from ek.agents.metrics import CostPerSuccessMetric

    tasks = [TaskSpec("t0", gold=1), TaskSpec("t1", gold=1)]
    agent = lambda task: Episode(task.task_id, output="NaN", cost=[Cost(input_tokens=10)])  # noqa: E731
    res = run_suite(
        agent,
        tasks,
        k=2,
        metrics=[_EchoMetric(), CostPerSuccessMetric()],
        price=per_million(1.0, 1.0),
    )
    assert res.metrics["cost_per_success"] == math.inf
    path = tmp_path / "b.json"
    saved = save_agent_baseline(res, path)
    text = path.read_text()
    assert '"Infinity"' in text and '"$str": "NaN"' in text  # one spelling, string escaped
    back = load_agent_baseline(path)
    assert back == saved
    said = [s.detail["said"] for ss in back.metrics["echo"].scores.values() for s in ss]
    assert said == ["NaN"] * 4 and all(isinstance(x, str) for x in said)
    assert back.metrics["cost_per_success"].value == math.inf


def test_reads_the_older_float_tags(tmp_path: Path) -> None:
    # a baseline written before the one codec spelled inf as {"$float": "inf"}
    import json

    old = RunSummary(RUN, k=1, counts={"t": (1, 0)}).to_dict()
    old["metrics"] = {
        "cost_per_success": {
            "name": "cost_per_success",
            "higher_is_better": False,
            "value": {"$float": "inf"},
            "scores": {"t": [{"value": {"$float": "inf"}, "detail": {"dollars": 0.5}}]},
        }
    }
    (tmp_path / "old.json").write_text(json.dumps(old))
    m = load_agent_baseline(tmp_path / "old.json").metrics["cost_per_success"]
    assert m.value == math.inf and m.scores["t"][0].value == math.inf


def test_store_resume_keeps_a_nan_string_output(tmp_path: Path) -> None:
    # resuming reads every stored episode back: an output "NaN" is a string, not a float NaN
    # (which an Episode refuses), so the resumed run is the same run
    from ek.agents.base import TaskSpec

    tasks = [TaskSpec("t0", gold="NaN"), TaskSpec("t1", gold="x")]
    store = tmp_path / "s.jsonl"
    first = run_suite(lambda t: "NaN", tasks, k=2, store=store)
    again = run_suite(lambda t: "NaN", tasks, k=2, store=store)
    assert again.resumed == 4
    assert [e.output for e in again.episodes] == ["NaN"] * 4
    assert again.verdicts == first.verdicts == (True, True, False, False)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, "NaN", "Infinity", "-Infinity"])
def test_one_spelling_in_every_writer(value: Any) -> None:
    # ek's files and the adapters' host payloads write the same JSON for the same value
    import json

    from ek.adapters._shell import detail_json, json_safe
    from ek.jsonio import dumps, loads

    assert json.dumps(json_safe({"v": value})) == json.dumps(to_json_safe({"v": value}))
    assert detail_json(Score(0.0, {"v": value})) == dumps({"v": value})
    assert _same(loads(dumps({"v": value})), {"v": value})
    assert _same(from_json_safe(to_json_safe(to_json_safe({"v": value}))), {"v": value})


# ----------------------------------------------------------------------------- issue 18: task sets


def test_different_task_sets_are_refused_unless_intersect() -> None:
    # a 1-task baseline against a 30-task run: a different experiment, refused by default
    base = flat(1, 1)
    cur = flat(30, 30)
    with pytest.raises(GateRefusedError) as e:
        agent_regression_gate(cur, base)
    msg = str(e.value)
    assert "baseline has 1 task, current 30; 1 shared" in msg and "--tasks intersect" in msg
    # intersect: too few shared tasks to say anything, but it compares and says how many
    g = agent_regression_gate(cur, base, tasks="intersect")
    assert g.n_tasks == 1 and g.to_dict()["n_tasks"] == 1
    assert any("compared the 1 task both runs ran; 29 left out" in w for w in g.warnings)
    # the success check used the shared task only: 1/1 vs 1/1
    assert g.checks[0].detail["current"] == [1, 1] and g.checks[0].detail["baseline"] == [1, 1]


def test_same_task_sets_report_the_count_and_bad_policy_is_refused() -> None:
    g = agent_regression_gate(flat(20, 15), flat(20, 16))
    assert g.n_tasks == 20
    with pytest.raises(ValueError, match="tasks must be one of"):
        agent_regression_gate(flat(20, 15), flat(20, 16), tasks="union")


def test_intersect_with_no_shared_task_is_refused() -> None:
    a = summary({"a": (1, 1), "b": (1, 0)})
    b = summary({"c": (1, 1), "d": (1, 0)})
    with pytest.raises(GateRefusedError, match="share no task"):
        agent_regression_gate(a, b, tasks="intersect")


def test_intersect_restricts_metric_scores_to_shared_tasks() -> None:
    # metric values: shared tasks t0..t9 score 1.0 in both runs; the baseline's extra tasks
    # score 0.0, which would read as an "improvement" if they were not left out
    def run(n: int, extra: float) -> RunSummary:
        scores = {f"t{i}": (Score(1.0 if i < 10 else extra),) for i in range(n)}
        m = MetricSummary("m", True, 1.0, scores)
        return summary({f"t{i}": (1, 1) for i in range(n)}, metrics={"m": m})

    g = agent_regression_gate(run(10, 0.0), run(20, 0.0), tasks="intersect")
    m = next(c for c in g.checks if c.name == "m")
    assert g.n_tasks == 10 and m.baseline == 1.0 and m.current == 1.0


def test_stratified_still_pairs_shared_tasks_without_intersect() -> None:
    # documented: stratified implies comparing the shared tasks (with a warning), no refusal
    cur = summary({f"t{i}": (2, 1) for i in range(12)})
    base = summary({f"t{i}": (2, 1) for i in range(2, 10)})
    g = agent_regression_gate(cur, base, stratified=True)
    assert g.n_tasks == 8 and any("left out" in w for w in g.warnings)


@pytest.mark.parametrize("bad", [[2.9, 1.9], ["4", 1], [3, 1.0]])
def test_baseline_non_integer_counts_are_refused(tmp_path: Path, bad: list[Any]) -> None:
    d = summary({"t": (3, 1)}).to_dict()
    d["counts"] = {"t": bad}
    d.pop("n_trials")
    d.pop("n_successes")
    with pytest.raises(ValueError, match=r"must be an int >= 0, got"):
        RunSummary.from_dict(d)
    p = tmp_path / "b.json"
    p.write_text(json.dumps(d))
    with pytest.raises(RunLoadError, match="must be an int"):
        agent_regression_gate(str(p), str(p))
