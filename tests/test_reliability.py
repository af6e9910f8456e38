"""Reliability estimators and intervals: hand-derived values, reference vectors, properties."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.reliability import (
    DeterministicAgentWarning,
    ReliabilityReport,
    ReliabilityWarning,
    pass_at_k,
    pass_hat_k,
    reliability,
)
from ek.stats import (
    Interval,
    bootstrap_interval,
    difference_interval,
    difference_upper_bound,
    newcombe_difference,
    normal_quantile,
    wilson_interval,
)

VECTORS = Path(__file__).parent / "data" / "vectors"
STATS = json.loads((VECTORS / "stats_reference_vectors.json").read_text())
TAU = json.loads((VECTORS / "tau_bench_gpt4o_airline_rewards_passk.json").read_text())
TOL = 1e-9


# ----------------------------------------------------------------------------- hand-derived


def test_pass_at_k_hand_values() -> None:
    # n=10, c=3, k=2: 1 - C(7,2)/C(10,2) = 1 - 21/45 = 24/45
    assert pass_at_k(10, 3, 2) == pytest.approx(24 / 45, abs=1e-15)
    # n=5, c=1, k=1: 1 - 4/5 = 0.2
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2, abs=1e-15)
    # n - c < k: every k-subset holds a success -> exactly 1
    assert pass_at_k(5, 4, 2) == 1.0
    assert pass_at_k(5, 0, 3) == 0.0


def test_pass_hat_k_hand_values() -> None:
    # C(3,2)/C(10,2) = 3/45
    assert pass_hat_k(10, 3, 2) == pytest.approx(3 / 45, abs=1e-15)
    # C(4,4)/C(4,4) = 1; c < k -> 0
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(4, 1, 2) == 0.0


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
def test_undefined_when_n_below_k_is_nan_not_one(fn) -> None:
    # HumanEval's bare estimator would say 1.0 for (n=2, c=0, k=3); that is spurious
    assert math.isnan(fn(2, 0, 3))
    assert math.isnan(fn(2, 2, 3))
    assert math.isnan(fn(0, 0, 1))


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
@pytest.mark.parametrize(
    "args, exc",
    [((5, 6, 1), ValueError), ((5, -1, 1), ValueError), ((5, 2, 0), ValueError),
     ((-1, 0, 1), ValueError), ((5.5, 2, 1), TypeError), (("5", 2, 1), TypeError),
     ((True, 0, 1), TypeError)],
)  # fmt: skip
def test_estimators_validate(fn, args, exc) -> None:
    with pytest.raises(exc) as e:
        fn(*args)
    assert str(e.value)


def test_estimators_exact_for_n_in_thousands() -> None:
    for n, c, k in [(3000, 1500, 50), (5000, 4990, 7), (2000, 3, 1000), (4000, 3999, 2)]:
        exact_at = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        exact_hat = Fraction(math.comb(c, k), math.comb(n, k))
        assert pass_at_k(n, c, k) == pytest.approx(float(exact_at), abs=1e-12)
        assert pass_hat_k(n, c, k) == float(exact_hat)  # exact ints, one rounding


def test_normal_quantile_against_known_values() -> None:
    # Φ⁻¹(0.975) = 1.959963984540054 (standard tables); symmetric
    assert normal_quantile(0.975) == pytest.approx(1.959963984540054, abs=1e-14)
    assert normal_quantile(0.5) == pytest.approx(0.0, abs=1e-15)
    assert normal_quantile(0.995) == pytest.approx(2.5758293035489004, abs=1e-13)
    assert normal_quantile(1e-10) == pytest.approx(-6.361340902404056, abs=1e-10)
    for bad in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError):
            normal_quantile(bad)


def test_wilson_hand_value() -> None:
    # 8/10, z=1.9599640: denom = 1 + z²/10 = 1.3841459; center = (0.8 + 0.1920729)/denom
    # = 0.7167402; half = z*sqrt(0.016 + 0.0096036)/denom = 0.2265777 -> (0.4901625, 0.9433178)
    iv = wilson_interval(8, 10)
    assert (iv.point, iv.method, iv.confidence) == (0.8, "wilson", 0.95)
    assert iv.low == pytest.approx(0.4901625, abs=1e-7)
    assert iv.high == pytest.approx(0.9433178, abs=1e-7)
    assert wilson_interval(0, 5).low == 0.0 and wilson_interval(5, 5).high == 1.0


def test_wilson_empty_is_nan_point_with_reason() -> None:
    iv = wilson_interval(0, 0)
    assert math.isnan(iv.point) and (iv.low, iv.high) == (0.0, 1.0)
    assert "no trials" in iv.reason
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


def test_newcombe_hand_value_and_empty() -> None:
    # Newcombe (1998) Table II (b): 9/10 - 3/10 -> 0.6 (0.1705, 0.8090)
    iv = newcombe_difference(9, 10, 3, 10)
    assert iv.point == pytest.approx(0.6, abs=1e-15)
    assert (round(iv.low, 4), round(iv.high, 4)) == (0.1705, 0.8090)
    empty = newcombe_difference(0, 0, 3, 10)
    assert math.isnan(empty.point) and (empty.low, empty.high) == (-1.0, 1.0)
    assert "current" in empty.reason
    assert "baseline" in newcombe_difference(1, 2, 0, 0).reason


def test_difference_interval_hand_value() -> None:
    # current [1,1,0,1]: mean .75, s² = .25; baseline [1,0,0,1]: mean .5, s² = 1/3
    # se² = .25/4 + (1/3)/4 = 0.0625 + 0.0833333 = 0.1458333, se = 0.3818813
    # Welch df = se⁴ / (0.0625²/3 + 0.0833333²/3) = 0.0212674 / 0.0036169 = 5.88
    # t(0.975; 5.88) = 2.4590678, half = 0.9390720: [-0.6890720, 1.1890720], high clipped to 1
    iv = difference_interval([1, 1, 0, 1], [1, 0, 0, 1])
    assert iv.point == 0.25
    assert iv.low == pytest.approx(0.25 - 0.9390720, abs=1e-7)
    assert iv.high == 1.0
    assert difference_upper_bound([1, 1, 0, 1], [1, 0, 0, 1]) == iv.high


def test_difference_interval_is_welchs_t_interval() -> None:
    """The reference: scipy's Welch interval (``ttest_ind(equal_var=False)``), unclipped data."""
    stats = pytest.importorskip("scipy.stats")
    cur, base = [0.3, 2.0, 1.1, 0.7, 1.9], [0.1, 0.4, 0.2, 1.5, 0.0, 0.9, 0.3]
    ref = stats.ttest_ind(cur, base, equal_var=False).confidence_interval(0.9)
    iv = difference_interval(cur, base, 0.9)
    assert iv.low == pytest.approx(ref.low, abs=1e-9) and iv.high == pytest.approx(
        ref.high, abs=1e-9
    )


def test_difference_interval_degenerate_cases() -> None:
    e = difference_interval([], [0.5, 0.5])
    assert math.isnan(e.point) and "current is empty" in e.reason
    one = difference_interval([0.5], [0.2, 0.4])
    assert one.point == pytest.approx(0.2) and (one.low, one.high) == (-1.0, 1.0)
    assert "one task" in one.reason
    # data outside [0,1] is not clipped and a one-task side has NaN bounds
    big = difference_interval([10.0], [1.0, 3.0])
    assert math.isnan(big.high) and big.point == 8.0
    wide = difference_interval([10.0, 30.0], [1.0, 3.0])
    assert wide.high > 1.0
    with pytest.raises(ValueError, match="finite"):
        difference_interval([float("nan")], [1.0])


def test_gate_sees_a_real_drop_and_not_noise() -> None:
    # a 40-point pass^k drop over 30 tasks: the upper bound of the change is clearly negative
    cur = [0.2] * 15 + [0.4] * 15
    base = [0.6] * 15 + [0.8] * 15
    assert difference_upper_bound(cur, base) < -0.3
    # identical runs: the interval straddles 0
    iv = difference_interval(base, base)
    assert iv.low < 0 < iv.high and iv.point == 0.0


def test_bootstrap_seeded_reproducible_and_records_seed() -> None:
    xs = [0.0, 0.25, 0.5, 1.0, 1.0, 0.75]
    a = bootstrap_interval(xs, seed=3)
    b = bootstrap_interval(xs, seed=3)
    c = bootstrap_interval(xs, seed=4)
    assert a == b and a != c
    assert "seed=3" in a.method and "n_resamples=2000" in a.method
    assert a.point == pytest.approx(3.5 / 6)
    assert math.isnan(bootstrap_interval([]).point)
    single = bootstrap_interval([0.4])
    assert (single.low, single.point, single.high) == (0.4, 0.4, 0.4) and single.reason
    med = bootstrap_interval(xs, statistic=lambda v: sorted(v)[len(v) // 2], n_resamples=200)
    assert med.low <= med.point <= med.high
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_interval(xs, n_resamples=0)


def test_interval_roundtrip_and_validation() -> None:
    iv = Interval(float("nan"), 0.0, 1.0, 0.9, "wilson", "no trials")
    d = iv.to_dict()
    assert d["point"] is None and json.loads(json.dumps(d)) == d
    back = Interval.from_dict(d)
    assert math.isnan(back.point) and back.reason == "no trials" and not back.is_defined
    with pytest.raises(ValueError, match="low must be <= high"):
        Interval(0.5, 0.9, 0.1, 0.95, "x")
    with pytest.raises(ValueError, match="confidence"):
        Interval(0.5, 0.1, 0.9, 95, "x")
    with pytest.raises(ValueError, match="method"):
        Interval(0.5, 0.1, 0.9, 0.95, "")


# ----------------------------------------------------------------------------- reference vectors


def test_pass_at_k_and_pass_hat_k_vectors() -> None:
    rows = STATS["pass_at_k_and_pass_hat_k"]
    assert len(rows) == 121
    for v in rows:
        n, c, k = v["n"], v["c"], v["k"]
        assert abs(pass_at_k(n, c, k) - v["pass_at_k_humaneval"]) <= TOL, v
        assert abs(pass_at_k(n, c, k) - v["pass_at_k_exact_comb"]) <= TOL, v
        assert abs(pass_hat_k(n, c, k) - v["pass_hat_k_tau"]) <= TOL, v


def test_wilson_vectors() -> None:
    rows = STATS["wilson"]
    assert len(rows) == 36
    for v in rows:
        iv = wilson_interval(v["count"], v["nobs"], confidence=1 - v["alpha"])
        assert abs(iv.low - v["low"]) <= TOL, v
        assert abs(iv.high - v["upp"]) <= TOL, v


def test_newcombe_vectors() -> None:
    rows = STATS["newcombe_hybrid_score_diff"]
    assert len(rows) == 20
    for v in rows:
        iv = newcombe_difference(
            v["count1"], v["nobs1"], v["count2"], v["nobs2"], confidence=1 - v["alpha"]
        )
        assert abs(iv.point - v["diff"]) <= TOL, v
        assert abs(iv.low - v["low"]) <= TOL, v
        assert abs(iv.high - v["upp"]) <= TOL, v


def test_tau_bench_aggregate_example() -> None:
    ex = STATS["tau_bench_aggregate_example"]
    counts = {f"t{i}": (ex["num_trials"], c) for i, c in enumerate(ex["c_per_task"])}
    rep = reliability(counts, n_resamples=50)
    assert rep.k == 4
    for k, want in ex["pass_hat_k"].items():
        assert abs(rep.pass_hat_k[int(k)].point - want) <= TOL


def _tau_counts() -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for r in TAU["rows"]:
        n, c = counts.get(str(r["task_id"]), (0, 0))
        ok = 1 - 1e-6 <= r["reward"] <= 1 + 1e-6  # tau-bench's success rule
        counts[str(r["task_id"])] = (n + 1, c + int(ok))
    return counts


def test_tau_bench_gpt4o_airline_published_pass_hat_k() -> None:
    rep = reliability(_tau_counts())
    assert rep.n_tasks == 50 and rep.n_trials == 200 and rep.n_successes == 84
    # published (tau-bench paper / display_metrics), rounded as they round
    published = {1: 0.42, 2: 0.273, 3: 0.22, 4: 0.20}
    digits = {1: 2, 2: 3, 3: 2, 4: 2}
    for k, want in published.items():
        assert round(rep.pass_hat_k[k].point, digits[k]) == want
        assert abs(rep.pass_hat_k[k].point - TAU["pass_hat_k"][str(k)]) <= TOL
        assert rep.pass_hat_k[k].low <= rep.pass_hat_k[k].point <= rep.pass_hat_k[k].high
    assert rep.success_rate.point == pytest.approx(TAU["avg_reward"])
    assert rep.warnings == ()


# ----------------------------------------------------------------------------- ReliabilityReport


def test_report_fields_and_json() -> None:
    rep = reliability({"a": (4, 4), "b": (4, 3), "c": (4, 0), "d": (4, 2)}, seed=7)
    assert isinstance(rep, ReliabilityReport)
    # pass^1 = (1 + .75 + 0 + .5)/4 = .5625; pass^2 = (1 + 3/6 + 0 + 1/6)/4 = 5/12
    assert rep.pass_hat_k[1].point == 0.5625
    assert rep.pass_hat_k[2].point == pytest.approx(5 / 12)
    # pass@2 = (1 + 1 + 0 + (1 - 1/6))/4 = 17/24
    assert rep.pass_at_k[2].point == pytest.approx(17 / 24)
    assert rep.success_rate.point == 9 / 16 and rep.success_rate.method == "wilson"
    assert rep.seed == 7 and "seed=7" in rep.pass_hat_k[1].method
    assert rep.task_pass_hat_k(2)["b"] == 0.5
    d = rep.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["pass_hat_k"]["2"]["point"] == pytest.approx(5 / 12) and d["seed"] == 7
    assert reliability(dict(rep.counts), seed=7) == rep  # reproducible


def test_report_slices() -> None:
    counts = {"a": (3, 3), "b": (3, 1), "c": (3, 0), "d": (3, 2)}
    rep = reliability(counts, slices={"easy": ["a", "b"], "hard": ["c", "d"]}, n_resamples=100)
    assert set(rep.slices) == {"easy", "hard"}
    # easy: pass^1 = (1 + 1/3)/2
    assert rep.slices["easy"].pass_hat_k[1].point == pytest.approx(2 / 3)
    assert rep.slices["hard"].n_tasks == 2 and rep.slices["hard"].k == 3
    assert set(rep.to_dict()["slices"]) == {"easy", "hard"}
    with pytest.raises(ValueError, match="unknown task"):
        reliability(counts, slices={"x": ["zzz"]})


def test_unequal_trials_follow_tau2_policy() -> None:
    counts = {"a": (5, 5), "b": (3, 1), "c": (4, 2)}
    with pytest.warns(ReliabilityWarning, match="unequal trial counts"):
        rep = reliability(counts, n_resamples=50)
    assert rep.k == 3  # capped at the smallest per-task n
    # each task uses its own n: pass^2 = (1 + 0 + C(2,2)/C(4,2))/3 = (1 + 1/6)/3
    assert rep.pass_hat_k[2].point == pytest.approx((1 + 1 / 6) / 3)
    with pytest.warns(ReliabilityWarning) as rec:
        rep = reliability(counts, k=5, n_resamples=50)
    assert any("lowered to 3" in str(w.message) for w in rec)
    assert rep.k == 3 and any("lowered" in w for w in rep.warnings)
    assert "tau2-bench" in rep.policy


def test_zero_trial_tasks_dropped_and_empty_is_fatal() -> None:
    with pytest.warns(ReliabilityWarning, match="no trials left out"):
        rep = reliability({"a": (2, 1), "b": (0, 0)}, n_resamples=20)
    assert set(rep.counts) == {"a"}
    with pytest.raises(ValueError, match="at least one task"):
        reliability({})
    with pytest.raises(ValueError, match="at least one task"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reliability({"a": (0, 0)})


@pytest.mark.parametrize(
    "bad, exc",
    [({"a": (2, 3)}, ValueError), ({"a": (2,)}, TypeError), ({1: (2, 1)}, TypeError),
     ({"a": "21"}, TypeError), ([("a", (2, 1))], TypeError)],
)  # fmt: skip
def test_reliability_validates_counts(bad, exc) -> None:
    with pytest.raises(exc):
        reliability(bad)


def test_deterministic_agent_warns_and_records() -> None:
    with pytest.warns(DeterministicAgentWarning, match="pass\\^k equals pass\\^1"):
        rep = reliability({"a": (5, 5), "b": (5, 0), "c": (5, 5)}, n_resamples=50)
    assert rep.deterministic and any("all-pass or all-fail" in w for w in rep.warnings)
    assert rep.pass_hat_k[5].point == rep.pass_hat_k[1].point
    # one trial per task: k = 1, nothing to warn about
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reliability({"a": (1, 1), "b": (1, 0)}, n_resamples=20)


# ----------------------------------------------------------------------------- properties

nck = st.integers(1, 60).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
)


@given(nck)
def test_prop_pass_hat_le_pass1_le_pass_at(t: tuple[int, int, int]) -> None:
    n, c, k = t
    p1 = pass_at_k(n, c, 1)
    assert p1 == pytest.approx(c / n, abs=1e-12) == pytest.approx(pass_hat_k(n, c, 1))
    assert pass_hat_k(n, c, k) <= p1 + 1e-12
    assert p1 <= pass_at_k(n, c, k) + 1e-12
    assert 0.0 <= pass_hat_k(n, c, k) <= 1.0 and 0.0 <= pass_at_k(n, c, k) <= 1.0


@given(nck)
def test_prop_monotone_in_k(t: tuple[int, int, int]) -> None:
    n, c, _ = t
    hats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    ats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(hats))
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(ats))


conf = st.sampled_from([0.8, 0.9, 0.95, 0.99])


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), conf)
def test_prop_wilson_contains_point_in_unit(t: tuple[int, int], cl: float) -> None:
    c, n = t
    iv = wilson_interval(c, n, cl)
    assert 0.0 <= iv.low <= iv.point <= iv.high <= 1.0


counts2 = st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(counts2, counts2, conf)
def test_prop_newcombe_contains_point_in_range(a: tuple[int, int], b: tuple[int, int], cl) -> None:
    iv = newcombe_difference(a[0], a[1], b[0], b[1], cl)
    assert -1.0 <= iv.low <= iv.point <= iv.high <= 1.0


unit_lists = st.lists(st.floats(0, 1), min_size=1, max_size=40)


@given(unit_lists, unit_lists, conf)
def test_prop_difference_interval_contains_point(cur: list[float], base: list[float], cl) -> None:
    iv = difference_interval(cur, base, cl)
    assert -1.0 <= iv.low <= iv.point + 1e-12 and iv.point - 1e-12 <= iv.high <= 1.0
    assert difference_upper_bound(cur, base, cl) == iv.high


@settings(max_examples=40)
@given(unit_lists, st.integers(0, 2**31))
def test_prop_bootstrap_contains_point(xs: list[float], seed: int) -> None:
    iv = bootstrap_interval(xs, n_resamples=100, seed=seed)
    assert 0.0 <= iv.low <= iv.point <= iv.high <= 1.0


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.integers(2, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
        min_size=1,
        max_size=12,
    )
)
def test_prop_report_intervals_ordered(pairs: list[tuple[int, int]]) -> None:
    counts = {f"t{i}": p for i, p in enumerate(pairs)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = reliability(counts, n_resamples=60)
    for k in range(1, rep.k + 1):
        hat, at = rep.pass_hat_k[k], rep.pass_at_k[k]
        assert 0.0 <= hat.low <= hat.point <= hat.high <= 1.0
        assert 0.0 <= at.low <= at.point <= at.high <= 1.0
        assert hat.point <= rep.pass_hat_k[1].point + 1e-12 <= at.point + 2e-12
        if k > 1:
            assert hat.point <= rep.pass_hat_k[k - 1].point + 1e-12


# --------------------------------------------------------------------------- ek.stats

_ESTIMATORS = (
    "Interval",
    "bootstrap_interval",
    "difference_interval",
    "difference_upper_bound",
    "newcombe_difference",
    "normal_quantile",
    "wilson_interval",
)


def test_the_core_estimators_have_one_path() -> None:
    import importlib

    import ek.agents
    import ek.stats

    # one import path per name (issue 31): ek.stats, not re-exported by reliability or the root
    rel = importlib.import_module("ek.agents.reliability")
    for name in _ESTIMATORS:
        assert name in ek.stats.__all__, name
        assert name not in rel.__all__ and name not in ek.agents.__all__, name


def test_stats_is_core_and_imports_no_agent_code() -> None:
    import subprocess
    import sys

    code = (
        "import sys, ek.stats; "
        "bad = sorted(m for m in sys.modules if m == 'ek.agents' or m.startswith('ek.agents.')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
