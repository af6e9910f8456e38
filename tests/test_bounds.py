"""Issue 18 ("bad input everywhere"): bounded estimators, documented size limits, error kinds.

Every refused input is refused by a check that runs before any alignment, matching or
resampling, so these tests finish quickly by construction (no timing assertions).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from ek.agents.base import Cost, Episode, Step, TaskSpec, ToolSpec
from ek.agents.cost import dollars, episode_dollars, per_million
from ek.agents.judge import JudgeSignal
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.reliability import MAX_K, pass_at_k, pass_hat_k, reliability
from ek.agents.toolcalls import MAX_CALLS, ToolCallMetric, match_calls
from ek.agents.trajectory import MAX_STEPS, TrajectoryMetric, align_trajectory
from ek.stats import MAX_COUNT, MAX_RESAMPLES, bootstrap_interval, wilson_interval

# ----------------------------------------------------------------------------- estimators


def test_pass_at_k_huge_n_closed_form() -> None:
    # pass@1 = c / n exactly: 10**11 / 10**12 = 0.1 (was a loop over 10**11 successes)
    assert pass_at_k(10**12, 10**11, 1) == pytest.approx(0.1, rel=1e-12)
    assert pass_hat_k(10**12, 10**11, 1) == pytest.approx(0.1, rel=1e-12)
    # k = 3 at n = 2**53, c = n/2: pass^3 = (c/n)((c-1)/(n-1))((c-2)/(n-2)) ~ 1/8, pass@3 ~ 7/8
    assert pass_hat_k(MAX_COUNT, MAX_COUNT // 2, 3) == pytest.approx(0.125, rel=1e-12)
    assert pass_at_k(MAX_COUNT, MAX_COUNT // 2, 3) == pytest.approx(0.875, rel=1e-12)


def test_pass_hat_k_stirling_form_against_log_sum() -> None:
    # both factorisations longer than the loop bound: the closed form; reference
    # C(c,k)/C(n,k) = prod_{j < n-c} (1 - k/(n-j)) summed in logs (10**6 + 5 terms)
    n, k = 10**13, 2 * 10**6
    c = n - 10**6 - 5
    ref = math.exp(math.fsum(math.log1p(-k / (n - j)) for j in range(n - c)))
    assert pass_hat_k(n, c, k) == pytest.approx(ref, rel=1e-6)
    assert pass_at_k(n, n - c, k) == pytest.approx(1.0 - ref, rel=1e-6)


def test_estimators_exact_just_over_the_integer_range() -> None:
    # n above the exact-binomial range (10,000) still matches the exact rational value
    for n, c, k in [(20000, 15000, 30), (20000, 5, 300), (300000, 200000, 3)]:
        exact_hat = Fraction(math.comb(c, k), math.comb(n, k))
        exact_at = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        assert pass_hat_k(n, c, k) == pytest.approx(float(exact_hat), rel=1e-12, abs=1e-300)
        assert pass_at_k(n, c, k) == pytest.approx(float(exact_at), abs=1e-12)


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
def test_estimators_refuse_counts_over_the_limit(fn) -> None:
    with pytest.raises(ValueError, match="must be <= 9007199254740992, got an int of 1329 bits"):
        fn(10**400, 1, 1)


def test_reliability_huge_counts_refused() -> None:
    with pytest.raises(ValueError, match=r"counts\['a'\] n must be <= "):
        reliability({"a": (2**63, 0)})


def test_reliability_default_k_over_max_k_asks_for_k() -> None:
    with pytest.raises(ValueError, match=f"over the limit MAX_K={MAX_K}"):
        reliability({"a": (10**6, 3)})
    with pytest.raises(ValueError, match=f"k must be <= {MAX_K}"):
        reliability({"a": (10**6, 3)}, k=MAX_K + 1)
    # an explicit k within the limit works on a huge n: pass^1 = 3 / 10**6
    r = reliability({"a": (10**6, 3)}, k=2, n_resamples=10)
    assert r.pass_hat_k[1].point == pytest.approx(3e-6)


def test_n_resamples_limit() -> None:
    with pytest.raises(ValueError, match=f"n_resamples must be <= {MAX_RESAMPLES}"):
        bootstrap_interval([1.0, 2.0], n_resamples=10**12)
    with pytest.raises(ValueError, match=f"n_resamples must be <= {MAX_RESAMPLES}"):
        reliability({"a": (2, 1)}, n_resamples=MAX_RESAMPLES + 1)


def test_wilson_interval_huge_n_is_value_error() -> None:
    with pytest.raises(ValueError, match="n must be <= "):
        wilson_interval(1, 10**400)
    assert wilson_interval(1, MAX_COUNT).point == 1 / MAX_COUNT


# ----------------------------------------------------------------------------- size limits


def _calls(n: int, tool: str = "f") -> list[Step]:
    return [Step(tool, {"x": i}) for i in range(n)]


@pytest.mark.parametrize("scheme", ["in_order", "exact"])
def test_trajectory_long_prediction_scored_zero(scheme: str) -> None:
    gold = _calls(3)
    s = TrajectoryMetric(scheme)(_calls(10_000)[::-1], gold)
    assert s.value == 0.0 and s.passed is False
    assert s.reason == f"prediction has 10000 steps, over the limit {MAX_STEPS}"
    # cost = worst case (unit masses: 3 gold + 10,000 actual), so the corpus aggregate counts it
    assert s.detail["cost"] == s.detail["worst_case"] > 0
    assert TrajectoryMetric(scheme).aggregate([s]) == 0.0


@pytest.mark.parametrize("scheme", ["in_order", "any_order"])
def test_trajectory_long_gold_is_value_error(scheme: str) -> None:
    task = TaskSpec("t", gold_calls=_calls(10_000))
    with pytest.raises(ValueError, match="gold has 10000 steps, over the limit"):
        TrajectoryMetric(scheme)([], task)
    with pytest.raises(ValueError, match="gold has 10000 steps"):
        align_trajectory([], _calls(10_000), scheme=scheme)


def test_trajectory_at_the_limit_still_aligns() -> None:
    # exactly MAX_CALLS steps under any_order (its limit) are matched, not refused
    s = TrajectoryMetric("any_order")(_calls(MAX_CALLS)[::-1], _calls(MAX_CALLS))
    assert s.value == 1.0 and s.passed


def test_trajectory_unordered_limit_is_the_step_limit() -> None:
    # issue 22: any_order / superset share MAX_STEPS (their assignment is solved by classes)
    s = TrajectoryMetric("superset")(_calls(MAX_STEPS + 1), _calls(2))
    assert s.value == 0.0 and not s.passed
    assert s.reason == f"prediction has {MAX_STEPS + 1} steps, over the limit {MAX_STEPS}"
    with pytest.raises(ValueError, match=f"prediction has {MAX_STEPS + 1} steps"):
        TrajectoryMetric("superset").align(_calls(MAX_STEPS + 1), _calls(2))


def test_tool_calls_long_prediction_scored_invalid() -> None:
    m = ToolCallMetric()
    s = m(_calls(10_000)[::-1], _calls(2))
    assert s.value == 0.0 and s.passed is False and s.detail["valid"] is False
    assert s.reason == f"prediction has 10000 calls, over the limit {MAX_CALLS}"
    assert s.detail["tp"] == 0.0 and s.detail["fn"] > 0 and s.detail["fp"] > 0
    assert m.aggregate([s]) == 0.0


def test_tool_calls_long_gold_is_value_error() -> None:
    task = TaskSpec("t", gold_calls=_calls(MAX_CALLS + 1))
    with pytest.raises(ValueError, match=f"gold has {MAX_CALLS + 1} calls, over the limit"):
        ToolCallMetric()([], task)
    with pytest.raises(ValueError, match="gold has 501 calls"):
        match_calls([], _calls(MAX_CALLS + 1))
    with pytest.raises(ValueError, match="prediction has 501 calls"):
        match_calls(_calls(MAX_CALLS + 1), [])


# ----------------------------------------------------------------------------- error kinds


def test_cost_overflow_is_value_error() -> None:
    with pytest.raises(ValueError, match="Cost.dollars must be finite, got an int of 1329 bits"):
        Cost(dollars=10**400)
    with pytest.raises(ValueError, match="Cost.input_tokens must be <= 2\\*\\*53"):
        Cost(input_tokens=10**400)  # so dollars(Cost(input_tokens=10**400), ...) cannot overflow
    assert dollars(Cost(input_tokens=2**53), per_million(1, 1)) == pytest.approx(2**53 / 1e6)


def test_judge_scale_mapping_is_value_error() -> None:
    with pytest.raises(ValueError, match="scale must be"):
        JudgeSignal(lambda out, crit: 1, "criteria", scale={})


@pytest.mark.parametrize(
    "tool, exc",
    [({}, ValueError), ({"function": {}}, ValueError), ("x", TypeError),
     ({"function": "x"}, TypeError)],
)  # fmt: skip
def test_tool_spec_from_openai_bad_input(tool, exc) -> None:
    with pytest.raises(exc):
        ToolSpec.from_openai(tool)


@pytest.mark.parametrize("metric", [TaskSuccessMetric(), CostPerSuccessMetric()])
def test_metric_aggregate_of_non_scores_is_type_error(metric) -> None:
    with pytest.raises(TypeError, match="item 0 is str"):
        metric.aggregate(["x"])


def test_episode_dollars_of_non_episode_is_type_error() -> None:
    with pytest.raises(TypeError, match="expects an Episode, got str"):
        episode_dollars("x", per_million(1, 1))  # type: ignore[arg-type]
    assert episode_dollars(Episode("t", cost=Cost(input_tokens=10**6)), per_million(1, 1)) == 1.0
