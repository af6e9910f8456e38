"""Issue 31: intervals by the right method, in one canonical task order.

* Student's t quantile (pure Python) against scipy and table values;
* the cluster-robust interval (tasks as clusters) against hand-derived values and statsmodels'
  cluster-robust OLS (the mean of the trials' 0/1 outcomes, clusters = tasks, CR1, t(G - 1));
* every interval of a report and a gate is a function of the trials, not of the order the tasks
  are listed in (the issue's six-task example: 0.7778 vs 0.7222 before);
* ``interval="auto" | "bootstrap" | "clustered"`` and the cross-check beside;
* a metric's clustered interval (each task's influence by deletion) against the linearised
  ratio estimator written out by hand.
"""

from __future__ import annotations

import math
import random
import warnings
from typing import Any

import pytest

from ek.agents._run.resample import MetricDifference
from ek.agents.base import RunProvenance
from ek.agents.harness import MetricSummary, RunSummary, agent_regression_gate
from ek.agents.reliability import pass_hat_k, reliability
from ek.base import Score
from ek.stats import (
    BOOTSTRAP_MAX_TASKS,
    choose_interval,
    clustered_se,
    expanded_tail,
    mean,
    mean_interval,
    percentile_interval,
    quantile,
    ratio_interval,
    student_t_cdf,
    student_t_quantile,
    two_sided_t,
    welch_df,
)

# ----------------------------------------------------------------------------- Student's t


def test_t_quantile_table_values() -> None:
    # two-sided 95 % critical values from any t table (scipy.stats.t.ppf(0.975, df))
    table = {1: 12.706204736174698, 2: 4.302652729749464, 5: 2.570581835636314,
             29: 2.045229642132703, 1000: 1.9623390808264074}  # fmt: skip
    for df, t in table.items():
        assert student_t_quantile(0.975, df) == pytest.approx(t, rel=1e-12, abs=0)
        assert two_sided_t(0.95, df) == pytest.approx(t, rel=1e-12, abs=0)
        assert student_t_cdf(t, df) == pytest.approx(0.975, abs=1e-14)
    assert student_t_quantile(0.5, 7) == 0.0
    assert student_t_quantile(0.975, math.inf) == pytest.approx(1.959963984540054, abs=1e-15)


def test_t_quantile_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for df in (0.5, 1, 1.5, 2, 3, 7.3, 29, 299, 2999, 39_999):
        for p in (1e-6, 0.025, 0.1, 0.6, 0.95, 0.995, 0.999999):
            want = float(stats.t.ppf(p, df))
            assert student_t_quantile(p, df) == pytest.approx(want, rel=1e-9, abs=1e-12), (df, p)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "3", True])
def test_t_quantile_refuses_bad_degrees_of_freedom(bad: Any) -> None:
    with pytest.raises(ValueError, match="df"):
        student_t_quantile(0.9, bad)


# ----------------------------------------------------------------------------- clustered


def test_clustered_se_of_a_mean_is_sd_over_sqrt_m() -> None:
    # x = (1, 1, 0, 0): sd = sqrt(1/3) = 0.577350 (n - 1), se = sd / 2 = 0.288675
    assert clustered_se([x / 4 for x in (1, 1, 0, 0)]) == pytest.approx(math.sqrt(1 / 3) / 2)
    assert math.isnan(clustered_se([0.3]))  # one cluster: nothing to estimate a spread from


def test_ratio_interval_hand_value() -> None:
    # tasks (successes, trials): (4, 4), (0, 4), (3, 4), (1, 4), (2, 4), (2, 4)
    # R = 12/24 = 0.5; u_t = (c_t - 0.5 n_t) / 24 = (2, -2, 1, -1, 0, 0) / 24
    # sum u^2 = 10 / 576 = 0.0173611; x m/(m-1) = 6/5: 0.0208333; se = 0.1443376
    # t(0.975; 5) = 2.5705818; half = 0.3710315: [0.1289685, 0.8710315]
    iv = ratio_interval([4, 0, 3, 1, 2, 2], [4] * 6)
    assert iv.point == 0.5 and iv.method == "clustered-t(df=5)"
    assert iv.low == pytest.approx(0.5 - 0.3710315, abs=1e-7)
    assert iv.high == pytest.approx(0.5 + 0.3710315, abs=1e-7)
    # the same as the mean of the per-task rates when every task has the same trials
    same = mean_interval([1, 0, 0.75, 0.25, 0.5, 0.5])
    assert (same.low, same.high) == pytest.approx((iv.low, iv.high), abs=1e-15)


def test_ratio_interval_is_statsmodels_cluster_robust_ols() -> None:
    """The pooled success rate is the mean of the trials' 0/1 outcomes: its cluster-robust
    interval (clusters = tasks) is statsmodels' OLS on a constant with ``cov_type="cluster"``
    (CR1: G/(G-1) (N-1)/(N-K), K = 1) and t(G - 1), for unequal trial counts too."""
    np = pytest.importorskip("numpy")
    sm = pytest.importorskip("statsmodels.api")
    counts = [(4, 4), (6, 1), (3, 3), (5, 0), (4, 2), (2, 1), (7, 5)]
    y = [float(i < c) for n, c in counts for i in range(n)]
    groups = [g for g, (n, _) in enumerate(counts) for _ in range(n)]
    fit = sm.OLS(np.array(y), np.ones((len(y), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": np.array(groups)}, use_t=True
    )
    low, high = fit.conf_int(0.05)[0]
    iv = ratio_interval([c for _, c in counts], [n for n, _ in counts])
    assert iv.point == pytest.approx(fit.params[0], abs=1e-15)
    assert (iv.low, iv.high) == pytest.approx((low, high), abs=1e-12)


def test_welch_df_limits() -> None:
    # equal standard errors over 30 tasks each: (2 v)^2 / (2 v^2 / 29) = 58
    assert welch_df(0.1, 30, 0.1, 30) == pytest.approx(58.0)
    assert welch_df(0.1, 30, 0.0, 5) == pytest.approx(29.0)
    assert welch_df(0.0, 30, 0.0, 30) == math.inf


def test_choose_interval() -> None:
    assert choose_interval("auto", BOOTSTRAP_MAX_TASKS) == "bootstrap"
    assert choose_interval("auto", BOOTSTRAP_MAX_TASKS + 1) == "clustered"
    assert choose_interval("bootstrap", 10**6) == "bootstrap"
    with pytest.raises(ValueError, match="interval must be one of"):
        choose_interval("wald", 3)


def test_expanded_percentile_interval() -> None:
    """Hesterberg's expanded percentile interval: the tail Φ(-sqrt(n/(n-1)) t(1-α/2; n-1))."""
    # n = 30: t(0.975; 29) = 2.0452296, x sqrt(30/29) = 1.0170952: 2.0801934; Φ(-2.0801934)
    # = 0.0187539 (scipy.stats.norm.cdf)
    assert expanded_tail(0.95, 30) == pytest.approx(0.0187539, abs=1e-7)
    assert expanded_tail(0.95, 1) == pytest.approx(0.025)  # no degrees of freedom: plain
    assert expanded_tail(0.95, 10**6) == pytest.approx(0.025, abs=1e-6)
    reps = [i / 1000 for i in range(1001)]  # quantile q of 0, 0.001, ..., 1 is q itself
    plain = percentile_interval(0.5, reps, 0.95, "demo")
    wide = percentile_interval(0.5, reps, 0.95, "demo", n=30)
    assert (plain.low, plain.high) == pytest.approx((0.025, 0.975))
    assert (wide.low, wide.high) == pytest.approx((0.0187539, 0.9812461), abs=1e-7)


def test_one_percentile_rule_with_infinite_and_undefined_replicates() -> None:
    # between an infinite order statistic and another there is nothing to interpolate
    assert quantile([1.0, 2.0, math.inf], 0.9) == math.inf
    assert quantile([1.0, 2.0, math.inf], 0.6) == 2.0
    assert quantile([-math.inf, math.inf], 0.5) == math.inf  # nearer: half way rounds up
    # more than alpha/2 of the replicates undefined: the bounds are undefined
    iv = percentile_interval(0.5, [0.1] * 97 + [math.nan] * 3, 0.95, "demo")
    assert math.isnan(iv.low) and "3 of 100 replicates undefined" in iv.reason
    iv = percentile_interval(0.5, [0.1] * 98 + [math.nan] * 2, 0.95, "demo")
    assert iv.low == 0.1 and iv.high == 0.5  # widened to the point


# ----------------------------------------------------------------------------- task order

# The issue's six-task example (k = 3 trials each): the same trials listed in two orders.
SIX = {"a": (3, 1), "b": (3, 1), "c": (3, 3), "d": (3, 2), "e": (3, 3), "f": (3, 1)}
SIX_OTHER_ORDER = {t: SIX[t] for t in ("c", "e", "a", "b", "f", "d")}


def _order_following_bootstrap_high(counts: dict[str, tuple[int, int]]) -> float:
    """The pass^2 upper bound as the bootstrap computed it before issue 31: the tasks drawn in
    the order they were listed."""
    vals = [pass_hat_k(n, c, 2) for n, c in counts.values()]
    rng = random.Random(0)
    reps = [mean([vals[i] for i in rng.choices(range(6), k=6)]) for _ in range(2000)]
    return percentile_interval(mean(vals), reps, 0.95, "old").high


def test_six_task_example_from_the_issue() -> None:
    # before: 0.7778 in one order, 0.7222 in the other
    assert round(_order_following_bootstrap_high(SIX), 4) == 0.7778
    assert round(_order_following_bootstrap_high(SIX_OTHER_ORDER), 4) == 0.7222
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = reliability(SIX, 3, seed=0), reliability(SIX_OTHER_ORDER, 3, seed=0)
    assert a.interval == "bootstrap"
    for curve in ("pass_at_k", "pass_hat_k"):
        assert getattr(a, curve) == getattr(b, curve)
    assert a.cross_check == b.cross_check and a.success_rate_clustered == b.success_rate_clustered


def test_report_intervals_do_not_depend_on_task_order() -> None:
    """A suite listed in an Inspect-log-like completion order (shuffled) and sorted: the same
    report, slices included, by either method."""
    rng = random.Random(5)
    counts = {f"task-{i:03d}": (4, rng.randint(0, 4)) for i in range(40)}
    shuffled = dict(rng.sample(list(counts.items()), len(counts)))
    slices = {"even": [t for t in counts if int(t[-1]) % 2 == 0]}
    for interval in ("bootstrap", "clustered"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = reliability(counts, slices=slices, n_resamples=300, interval=interval)
            b = reliability(shuffled, slices=slices, n_resamples=300, interval=interval)
        assert a.to_dict()["pass_hat_k"] == b.to_dict()["pass_hat_k"]
        assert a.to_dict()["cross_check"] == b.to_dict()["cross_check"]
        assert a.slices["even"].pass_hat_k == b.slices["even"].pass_hat_k


def _summary(counts: dict[str, tuple[int, int]]) -> RunSummary:
    """A run whose task_success metric holds one Score per trial."""
    scores = {
        t: tuple(Score(float(i < c), {"successes": int(i < c), "n": 1}) for i in range(n))
        for t, (n, c) in counts.items()
    }
    m = MetricSummary("task_success", True, 0.0, scores)
    return RunSummary(RunProvenance(agent="bot"), k=4, counts=counts, metrics={"task_success": m})


@pytest.mark.parametrize("stratified", [False, True])
def test_gate_intervals_do_not_depend_on_task_order(stratified: bool) -> None:
    import ek.agents.metrics  # noqa: F401  (registers task_success)

    rng = random.Random(9)
    base = {f"t{i}": (4, rng.randint(1, 4)) for i in range(25)}
    cur = {t: (4, max(0, c - rng.randint(0, 1))) for t, (_, c) in base.items()}
    shuffled = dict(rng.sample(list(cur.items()), len(cur)))
    for interval in ("bootstrap", "clustered"):
        kw: dict[str, Any] = {"stratified": stratified, "n_resamples": 300, "interval": interval}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g1 = agent_regression_gate(_summary(cur), _summary(base), **kw)
            g2 = agent_regression_gate(_summary(shuffled), _summary(base), **kw)
        assert [c.to_dict() for c in g1.checks] == [c.to_dict() for c in g2.checks]


# ----------------------------------------------------------------------------- methods


def test_report_auto_cross_check_and_request() -> None:
    counts = {f"t{i}": (3, i % 4) for i in range(12)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = reliability(counts, n_resamples=200)
        asked = reliability(counts, n_resamples=200, interval="clustered")
    # small suite: the bootstrap, with the clustered intervals beside
    assert small.interval == "bootstrap" and "percentile-bootstrap" in small.pass_hat_k[2].method
    assert small.cross_check["pass_hat_k"][2] == asked.pass_hat_k[2]
    # asked for the clustered one: the bootstrap (cheap here) beside
    assert asked.cross_check["pass_hat_k"][2] == small.pass_hat_k[2]
    # the clustered pass^2 interval is mean_interval of the per-task estimates
    want = mean_interval([pass_hat_k(n, c, 2) for n, c in counts.values()], bounds=(0.0, 1.0))
    assert asked.pass_hat_k[2] == want
    with pytest.raises(ValueError, match="interval must be one of"):
        reliability(counts, interval="normal")


def test_report_above_the_bootstrap_limit_is_clustered_without_a_bootstrap() -> None:
    rng = random.Random(1)
    counts = {f"t{i}": (2, rng.randint(0, 2)) for i in range(BOOTSTRAP_MAX_TASKS + 1)}
    r = reliability(counts)
    assert r.interval == "clustered" and r.cross_check == {}
    assert r.pass_hat_k[2].method == f"clustered-t(df={BOOTSTRAP_MAX_TASKS})"
    assert r.to_dict()["cross_check"] == {}


def test_success_rate_clustered_beside_wilson() -> None:
    counts = {"a": (4, 4), "b": (4, 0), "c": (4, 3), "d": (4, 1), "e": (4, 2), "f": (4, 2)}
    r = reliability(counts, n_resamples=50)
    assert r.success_rate.method == "wilson"
    assert r.success_rate_clustered == ratio_interval(
        [4, 0, 3, 1, 2, 2], [4] * 6, bounds=(0.0, 1.0)
    )
    # the trials of a task are correlated here: the clustered interval is the wider one
    assert r.success_rate_clustered.width > r.success_rate.width
    assert r.to_dict()["success_rate_clustered"]["method"] == "clustered-t(df=5)"


# ----------------------------------------------------------------------------- metrics


def _tool_scores(rows: list[tuple[int, int, int]]) -> dict[str, list[Score]]:
    return {
        f"t{i}": [Score(0.0, {"tp": tp, "fp": fp, "fn": fn})] for i, (tp, fp, fn) in enumerate(rows)
    }


def test_metric_clustered_interval_is_the_linearised_ratio_estimator() -> None:
    """Tool-call micro-F1 = A / B with a = 2 tp, b = 2 tp + fp + fn per task. Deleting task t
    gives the influence (m-1)/m (R - (A - a_t)/(B - b_t)) = (m-1)/m (a_t - R b_t)/(B - b_t),
    written out here; its SE is within O(1/m) of the linearised (a_t - R b_t)/B's."""
    import ek.agents.toolcalls  # noqa: F401  (registers tool_calls)

    cur_rows = [(3, 1, 0), (2, 0, 2), (5, 0, 0), (1, 2, 1), (4, 1, 1), (0, 1, 3)]
    base_rows = [(3, 0, 0), (3, 0, 1), (5, 0, 0), (2, 1, 0), (4, 0, 1), (1, 1, 2)]
    d = MetricDifference("tool_calls", _tool_scores(cur_rows), _tool_scores(base_rows), None)

    def by_hand(rows: list[tuple[int, int, int]]) -> tuple[float, float, float]:
        a = [2 * tp for tp, _, _ in rows]
        b = [2 * tp + fp + fn for tp, fp, fn in rows]
        m, big_a, big_b = len(rows), sum(a), sum(b)
        r = big_a / big_b
        jack = [(m - 1) / m * (x - r * y) / (big_b - y) for x, y in zip(a, b)]
        lin = [(x - r * y) / big_b for x, y in zip(a, b)]
        return r, clustered_se(jack), clustered_se(lin)

    rc, se_c, lin_c = by_hand(cur_rows)
    rb, se_b, lin_b = by_hand(base_rows)
    assert d.values == pytest.approx((rc, rb), abs=1e-15)
    iv = d.clustered(0.95)
    se = math.hypot(se_c, se_b)
    half = two_sided_t(0.95, welch_df(se_c, 6, se_b, 6)) * se
    assert (iv.low, iv.high) == pytest.approx((rc - rb - half, rc - rb + half), abs=1e-12)
    assert se_c == pytest.approx(lin_c, rel=0.25) and se_b == pytest.approx(lin_b, rel=0.25)


def test_metric_clustered_equals_the_closed_form_with_equal_task_sizes() -> None:
    """With the same trials per task, deleting a task is exactly the linearised ratio
    estimator: the task_success metric's paired clustered interval is the paired t interval
    of the per-task rates."""
    import ek.agents.metrics  # noqa: F401

    rng = random.Random(3)
    base = {f"t{i}": (5, rng.randint(0, 5)) for i in range(30)}
    cur = {t: (5, rng.randint(0, 5)) for t in base}
    d = MetricDifference(
        "task_success", _summary(cur).metrics["task_success"].scores,
        _summary(base).metrics["task_success"].scores, sorted(base),
    )  # fmt: skip
    diffs = [cur[t][1] / 5 - base[t][1] / 5 for t in sorted(base)]
    want = mean_interval(diffs, bounds=None)
    iv = d.clustered(0.95)
    assert iv.point == pytest.approx(want.point, abs=1e-15)
    assert (iv.low, iv.high) == pytest.approx((want.low, want.high), abs=1e-12)


def test_gate_reports_the_other_method_beside() -> None:
    import ek.agents.metrics  # noqa: F401

    rng = random.Random(4)
    base = {f"t{i}": (4, rng.randint(0, 4)) for i in range(20)}
    cur = {t: (4, rng.randint(0, 4)) for t in base}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boot = agent_regression_gate(_summary(cur), _summary(base), n_resamples=200)
        clus = agent_regression_gate(
            _summary(cur), _summary(base), n_resamples=200, interval="clustered"
        )
    (mb,) = [c for c in boot.checks if c.kind == "metric"]
    (mc,) = [c for c in clus.checks if c.kind == "metric"]
    assert mb.detail["method"].startswith("task-bootstrap-independent")
    assert mc.detail["method"].startswith("task-clustered-independent")
    assert mb.detail["cross_check"] == mc.interval.to_dict()
    assert mc.detail["cross_check"] == mb.interval.to_dict()
    with pytest.raises(ValueError, match="interval must be one of"):
        agent_regression_gate(_summary(cur), _summary(base), interval="jackknife")
