"""Judged success corrected for the judge's errors (issue 38): hand-computed cases, the n = N
identity, repeated trials as clusters, ppi-python agreement, refusals, label planning."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.judge import (
    JUDGED_METHODS,
    CorrectedRate,
    LabelPlan,
    corrected_success_rate,
    labels_needed,
    trials_to_label,
)
from ek.stats import two_sided_t

# The 10-trial example: the judge passes trials 0-5 and fails 6-9; people labelled trials
# 0, 1, 2 (true: pass, pass, fail) and 6, 7 (true: fail, fail).
JUDGE = [True] * 6 + [False] * 4
HUMAN = [True, True, False, None, None, None, False, False, None, None]


def close(a: float, b: float, tol: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=tol)


def random_run(
    rng: random.Random, n_trials: int, n_labels: int, theta: float, q1: float, q0: float
):
    truth = [rng.random() < theta for _ in range(n_trials)]
    verdicts = [(rng.random() < q1) if y else (rng.random() >= q0) for y in truth]
    chosen = set(rng.sample(range(n_trials), n_labels))
    return verdicts, [y if i in chosen else None for i, y in enumerate(truth)], truth


# ----------------------------------------------------------------------------- hand cases


def test_ppi_hand_case() -> None:
    r = corrected_success_rate(JUDGE, HUMAN)
    assert r.method == "ppi++" and not r.refused and not r.clipped
    # judged rate 6/10; per verdict: pass 3 labels (2 true) of 6 trials, fail 2 labels (0 true)
    # of 4 trials; W = (0.6, 0.4); estimate 0.6 * 2/3 + 0.4 * 0 = 0.4
    assert r.judged_rate == 0.6 and close(r.value, 0.4, 1e-12)
    # PPI++'s lambda = (N_u / N)(ybar_pass - ybar_fail) = (5/10)(2/3 - 0) = 1/3
    assert close(r.detail["lam"], 1 / 3, 1e-12)
    # Cochran: W_s^2 (1 - f_s) s_s^2 / n_s: pass 0.36 * (1 - 3/6) * (1/3) / 3 = 0.02 (s^2 of
    # 1, 1, 0 = (2/9 + 2/9 + 4/9... = 2/3) / 2 = 1/3); fail: s^2 = 0.
    # S^2 = N/(N-1) [sum W v + sum W (ybar - est)^2] = 10/9 [0.6 * 2/9 + 0.6 * (2/3 - 0.4)^2
    #       + 0.4 * 0.4^2] = 10/9 * (0.133333 + 0.042667 + 0.064) = 0.266667; / N = 0.0266667
    var = 0.02 + 0.26666666666666666 / 10
    assert close(r.detail["se"], math.sqrt(var), 1e-12)  # 0.216025
    # Satterthwaite: var^2 / (0.02^2 / 2 + 0.0266667^2 / 9) = 7.81 -> 7
    assert r.detail["df"] == 7.0
    half = two_sided_t(0.95, 7) * math.sqrt(var)  # 2.364624 * 0.216025 = 0.510818
    assert r.interval.low == 0.0 and close(r.interval.high, 0.4 + half, 1e-12)  # 0.9108


def test_rogan_gladen_hand_case() -> None:
    r = corrected_success_rate(JUDGE, HUMAN, method="rogan-gladen")
    # labels: (true, judge) = (pass, pass) x2, (fail, pass) x1, (fail, fail) x2
    # sensitivity 2/2 = 1, specificity 2/3, J = 2/3; judged 0.6: (0.6 + 2/3 - 1) / (2/3) = 0.4
    assert close(r.sensitivity, 1.0) and close(r.specificity, 2 / 3)
    assert close(r.value, 0.4, 1e-12)
    # first order: mean_lab(g) + p/J with g = Y - f/J = Y - 1.5 f: g = -0.5, -0.5, -1.5, 0, 0;
    # deviations from their mean -0.5: 0, 0, -1, 0.5, 0.5 -> sum of squares 1.5;
    # labelled influences (g - gbar)/n: sum of squares 1.5 / 25 = 0.06;
    # judged influences (f - 0.6)/(J N): sum of squares (6 * 0.16 + 4 * 0.36) / (4/9 * 100) = 0.054
    # cross sum over labelled: [(-1)(0.4) + 2 (0.5)(-0.6)] / (5 * 2/3 * 10) = -0.03
    # small-sample factors: labelled (1 - 0.5) * 5/4 + 0.5 * 10/9 = 1.180556, judged 10/9
    c, m = 0.5 * 5 / 4 + 0.5 * 10 / 9, 10 / 9
    var = c * 0.06 + m * 0.054 + 2 * math.sqrt(c * m) * -0.03  # 0.0621151
    assert close(r.detail["se"], math.sqrt(var), 1e-12)  # 0.249229


def test_stratified_hand_case_and_rogan_gladen_weights() -> None:
    # 4 judged pass, 3 labelled (pass, pass, fail); 16 judged fail, 4 labelled (pass, 3 fail)
    verdicts = [True] * 4 + [False] * 16
    labels = [True, True, False, None, True, False, False, False] + [None] * 12
    r = corrected_success_rate(verdicts, labels, sampling="stratified")
    # W = (0.2, 0.8); 0.2 * 2/3 + 0.8 * 1/4 = 1/3
    assert close(r.value, 1 / 3, 1e-12)
    # pass: 0.04 * (1 - 3/4) * (1/3) / 3 = 0.00111111; fail: 0.64 * (1 - 4/16) * 0.25 / 4 = 0.03
    # S^2 = 20/19 [0.2 * 2/9 + 0.8 * 3/16 + 0.2 * (1/3)^2 + 0.8 * (1/12)^2] = 20/19 * 0.222222
    var = 0.04 * 0.25 / 9 + 0.03 + 20 / 19 * (2 / 9) / 20  # 0.0428070
    assert close(r.detail["se"], math.sqrt(var), 1e-12)
    # df = var^2 / (0.00111^2 / 2 + 0.03^2 / 3 + 0.0116959^2 / 19) = 5.95 -> 5
    assert r.detail["df"] == 5.0
    assert close(r.interval.high, 1 / 3 + two_sided_t(0.95, 5) * math.sqrt(var), 1e-12)
    # Rogan-Gladen weighs each label by 1/rate (4/3 and 4): sensitivity (8/3) / (8/3 + 4) = 0.4,
    # specificity 12 / (4/3 + 12) = 0.9, (0.2 + 0.9 - 1) / 0.3 = 1/3: the same estimate
    rg = corrected_success_rate(verdicts, labels, sampling="stratified", method="rogan-gladen")
    assert close(rg.sensitivity, 0.4) and close(rg.specificity, 0.9)
    assert close(rg.value, 1 / 3, 1e-12)
    # read as a random sample it is wrong: sensitivity 2/3, specificity 3/4,
    # (0.2 + 0.75 - 1) / (5/12) = -0.12, clipped to 0
    naive = corrected_success_rate(verdicts, labels, method="rogan-gladen")
    assert naive.clipped and naive.value == 0.0 and close(naive.detail["raw_value"], -0.12)


def test_clipped_case() -> None:
    # labels: (pass, pass), (fail, pass), (fail, fail) x2: sensitivity 1, specificity 2/3;
    # the judge passes only 2 of 10: (0.2 + 2/3 - 1) / (2/3) = -0.2, clipped to 0
    verdicts = [True, True] + [False] * 8
    labels = [True, False, False, False] + [None] * 6
    r = corrected_success_rate(verdicts, labels, method="rogan-gladen")
    assert r.clipped and not r.refused and r.value == 0.0
    assert close(r.detail["raw_value"], -0.2)
    assert "outside [0, 1], clipped to 0" in r.reason
    assert r.interval.low == 0.0 and r.interval.contains(0.0)


@pytest.mark.parametrize(
    "verdicts, labels, method, why",
    [
        # sensitivity 1/2 + specificity 1/2 = 1: no better than chance
        ([True, False, True, False], [True, True, False, False], "ppi++", "no better than chance"),
        ([True, False, True, False], [True, True, False, False], "rogan-gladen", "chance"),
        ([True, False, True, False], [True, True, None, None], "ppi++", "no labelled true fail"),
        ([True, False, True, False], [False, False, None, None], "ppi++", "no labelled true pass"),
        ([True, False, True], [True, None, None], "ppi++", "at least 2"),
        ([True, False, True], [None, None, None], "rogan-gladen", "0 labelled"),
        # one label where the judge failed: PPI++ needs two in each verdict
        (
            [True] * 5 + [False] * 3,
            [True, True, False, True, None, False, None, None],
            "ppi++",
            "2 in each verdict",
        ),
    ],
)
def test_refused(verdicts, labels, method, why) -> None:
    r = corrected_success_rate(verdicts, labels, method=method)
    assert r.refused and math.isnan(r.value) and not r.interval.is_defined
    assert why in r.reason and r.reason.startswith("refused")
    json.dumps(r.to_dict(), allow_nan=False)


# ----------------------------------------------------------------------------- n = N and clusters


@pytest.mark.parametrize("clustered", [False, True])
def test_all_labelled_is_the_labels_alone(clustered: bool) -> None:
    """At n = N the corrected rate is the labelled mean and the interval the labels-only one:
    the judge's noise on labelled trials is not counted twice."""
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        n = rng.randint(6, 80)
        _, _, truth = random_run(rng, n, n, rng.random(), 0.85, 0.8)
        verdicts = [(rng.random() < 0.85) if y else (rng.random() >= 0.8) for y in truth]
        tasks = [rng.randint(0, n // 3) for _ in range(n)] if clustered else None
        alone = corrected_success_rate(verdicts, truth, tasks=tasks, method="labels-only")
        for method in ("ppi++", "rogan-gladen"):
            r = corrected_success_rate(verdicts, truth, tasks=tasks, method=method)
            if r.refused:
                continue
            checked += 1
            assert close(r.value, sum(truth) / n, 1e-12)
            assert close(r.interval.low, alone.interval.low, 1e-12)
            assert close(r.interval.high, alone.interval.high, 1e-12)
    assert checked > 60


def test_repeated_trials_of_a_task_are_one_cluster() -> None:
    """Each trial repeated three times within its task: the clustered interval is exactly the
    one of the trials once; read as independent trials it would shrink by about sqrt(3)."""
    rng = random.Random(11)
    verdicts, labels, _ = random_run(rng, 120, 40, 0.5, 0.85, 0.85)
    tasks = list(range(120))
    for method in ("ppi++", "rogan-gladen"):
        once = corrected_success_rate(verdicts, labels, method=method)
        thrice = corrected_success_rate(verdicts * 3, labels * 3, tasks=tasks * 3, method=method)
        assert close(thrice.value, once.value, 1e-12)
        assert close(thrice.interval.low, once.interval.low, 1e-12)
        assert close(thrice.interval.high, once.interval.high, 1e-12)
        naive = corrected_success_rate(verdicts * 3, labels * 3, method=method)
        assert 0.5 < naive.interval.width / once.interval.width < 0.62  # about 1/sqrt(3) = 0.577
    boot = corrected_success_rate(verdicts * 3, labels * 3, tasks=tasks * 3, method="rogan-gladen-bootstrap", n_resamples=400)  # fmt: skip
    assert boot.detail["labelled_tasks"] == 40


def test_ppi_asymptotic_refuses_repeated_tasks_and_strata() -> None:
    with pytest.raises(ValueError, match="treats every trial as independent"):
        corrected_success_rate(JUDGE, HUMAN, tasks=[0, 0, 1, 1, 2, 2, 3, 3, 4, 4], method="ppi++-asymptotic")  # fmt: skip
    with pytest.raises(ValueError, match="simple random sample"):
        corrected_success_rate(JUDGE, HUMAN, method="ppi++-asymptotic", sampling="stratified")


# ----------------------------------------------------------------------------- ppi-python


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_agrees_with_ppi_python(confidence: float) -> None:
    """method='ppi++-asymptotic' is ppi_py.ppi_mean_ci and ppi_mean_pointestimate (the
    authors' package; its default alpha is 0.1) to 1e-9 on random datasets."""
    ppi_py = pytest.importorskip("ppi_py")
    np = pytest.importorskip("numpy")
    rng = random.Random(5)
    compared = 0
    for _ in range(150):
        big_n = rng.randint(12, 600)
        n = rng.randint(5, big_n - 1)
        verdicts, _, truth = random_run(rng, big_n, n, rng.random(), rng.uniform(0.5, 1), rng.uniform(0.5, 1))  # fmt: skip
        labels = [y if i < n else None for i, y in enumerate(truth)]
        r = corrected_success_rate(verdicts, labels, method="ppi++-asymptotic", confidence=confidence)  # fmt: skip
        if r.refused:
            continue
        y = np.array(truth[:n], dtype=float)
        f = np.array(verdicts[:n], dtype=float)
        fu = np.array(verdicts[n:], dtype=float)
        kwargs = {} if confidence == 0.9 else {"alpha": 1 - confidence}
        lo, hi = ppi_py.ppi_mean_ci(y, f, fu, **kwargs)
        point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f, fu)))
        assert close(r.detail["raw_value"], point)
        assert close(r.detail["low_unclipped"], float(lo[0]))
        assert close(r.detail["high_unclipped"], float(hi[0]))
        assert close(r.interval.low, min(max(float(lo[0]), 0.0), r.value))
        compared += 1
    assert compared > 120


# ----------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_seeded_and_ignores_trial_order() -> None:
    rng = random.Random(3)
    verdicts, labels, _ = random_run(rng, 200, 60, 0.6, 0.9, 0.8)
    a = corrected_success_rate(verdicts, labels, method="rogan-gladen-bootstrap", n_resamples=300, seed=4)  # fmt: skip
    order = list(range(200))
    rng.shuffle(order)
    b = corrected_success_rate([verdicts[i] for i in order], [labels[i] for i in order], method="rogan-gladen-bootstrap", n_resamples=300, seed=4)  # fmt: skip
    assert a.interval == b.interval and a.interval.contains(a.value)
    assert a.interval.method == "rogan-gladen-bootstrap(n_resamples=300, seed=4)"
    linear = corrected_success_rate(verdicts, labels, method="rogan-gladen")
    assert close(a.value, linear.value, 1e-12)
    assert 0.7 < a.interval.width / linear.interval.width < 1.4


# ----------------------------------------------------------------------------- input


@pytest.mark.parametrize(
    "verdicts, labels, kwargs, exc, match",
    [
        (["yes", False], [True, None], {}, TypeError, r"verdicts\[0\]: a verdict must be a bool"),
        ([True, False], [1, None], {}, TypeError, r"labels\[0\]"),
        ([True, False], [True], {}, ValueError, "one entry"),
        ([True, False], [True, None], {"tasks": [1]}, ValueError, "one task per judged trial"),
        ([True, False], [True, None], {"method": "rg"}, ValueError, "method must be one of"),
        ([True, False], [True, None], {"sampling": "quota"}, ValueError, "sampling must be"),
        ([True, False], [True, None], {"confidence": 95}, ValueError, "confidence"),
        ("TF", [True, None], {}, TypeError, "verdicts must be a sequence"),
    ],
)
def test_bad_input(verdicts, labels, kwargs, exc, match) -> None:
    with pytest.raises(exc, match=match):
        corrected_success_rate(verdicts, labels, **kwargs)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), st.sampled_from([True, False, None]), st.integers(0, 6)),
        min_size=0,
        max_size=40,
    ),
    st.sampled_from(JUDGED_METHODS),
    st.booleans(),
)
def test_never_raises_on_valid_input(rows, method, clustered) -> None:
    verdicts = [r[0] for r in rows]
    labels = [r[1] for r in rows]
    tasks = [r[2] for r in rows] if clustered else None
    if method == "ppi++-asymptotic" and clustered and len(set(tasks or [])) < len(rows):
        return
    r = corrected_success_rate(verdicts, labels, tasks=tasks, method=method, n_resamples=50)
    assert isinstance(r, CorrectedRate)
    json.dumps(r.to_dict(), allow_nan=False)
    if r.refused:
        assert math.isnan(r.value) and r.reason.startswith("refused")
    else:
        assert 0.0 <= r.value <= 1.0
        if r.interval.is_defined:
            assert 0.0 <= r.interval.low <= r.value <= r.interval.high <= 1.0


# ----------------------------------------------------------------------------- label planning


def test_labels_needed_hand_case() -> None:
    verdicts = [True] * 300 + [False] * 700
    pilot = [True] * 8 + [False] * 2 + [None] * 290 + [False] * 10 + [None] * 690
    plan = labels_needed(verdicts, pilot, 0.1)
    assert isinstance(plan, LabelPlan) and plan.reachable and plan.sampling == "stratified"
    # Laplace: pass share (8 + 1) / (10 + 2) = 0.75, fail share 1/12; spreads 0.1875, 0.0764
    # Neyman weights 0.3 * sqrt(0.1875) = 0.1299, 0.7 * sqrt(0.0764) = 0.1935 -> 40 % to pass
    assert plan.n_labels == 188 and dict(plan.by_verdict) == {"pass": 76, "fail": 112}
    # rate 0.3 * 0.75 + 0.7/12 = 0.28333, S^2 = 0.20306; var = 0.09 (1/76 - 1/300) 0.1875
    #   + 0.49 (1/112 - 1/700) 0.076389 + 0.20306/1000 = 0.00064993 -> 2 * 1.96 * 0.025494
    assert close(plan.predicted_width, 0.09993, 1e-4) and plan.predicted_width <= 0.1
    random_plan = labels_needed(verdicts, pilot, 0.1, sampling="random")
    assert random_plan.n_labels > plan.n_labels  # Neyman allocation needs fewer


def test_labels_needed_unreachable_and_errors() -> None:
    plan = labels_needed([True, False] * 10, [None] * 20, 0.05)
    assert not plan.reachable and plan.n_labels == 20 and "judge more trials" in plan.reason
    with pytest.raises(ValueError, match="one verdict to every trial"):
        labels_needed([True] * 5, [None] * 5, 0.2)
    with pytest.raises(ValueError, match="target_width"):
        labels_needed([True, False], [None, None], 0)


def test_trials_to_label_completes_the_plan() -> None:
    rng = random.Random(2)
    verdicts = [rng.random() < 0.3 for _ in range(1000)]
    pilot = [True if i < 20 else None for i in range(1000)]
    plan = labels_needed(verdicts, pilot, 0.12)
    picked = trials_to_label(verdicts, pilot, plan, seed=9)
    assert picked == trials_to_label(verdicts, pilot, plan, seed=9)
    assert all(pilot[i] is None for i in picked)
    done = [True if (pilot[i] is not None or i in set(picked)) else None for i in range(1000)]
    for verdict, name in ((True, "pass"), (False, "fail")):
        have = sum(1 for v, y in zip(verdicts, done) if y is not None and v is verdict)
        assert have == plan.by_verdict[name]
    with pytest.raises(TypeError, match="LabelPlan"):
        trials_to_label(verdicts, pilot, {"n_labels": 3})
