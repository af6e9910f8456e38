"""ek.quality: cost-ordered signals, isotonic calibration, and estimate_quality's refusals."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.judge import JudgeSignal
from ek.quality import (
    JUDGE_COST_TIER,
    IsotonicCalibrator,
    QualityEstimate,
    UncalibratedScoreError,
    estimate_quality,
    fit_isotonic,
    is_judge,
    isotonic_regression,
    order_signals,
)


class Sig:
    def __init__(self, name: str, tier: int, value: float, log: list[str] | None = None):
        self.name, self.cost_tier, self.value, self.log = name, tier, value, log

    def __call__(self, output):
        if self.log is not None:
            self.log.append(self.name)
        return self.value


# ----------------------------------------------------------------------------- PAVA / isotonic


def test_pava_hand_values() -> None:
    # [1, 3, 2, 4]: 3 > 2 violates -> pool to 2.5
    assert isotonic_regression([1, 3, 2, 4]) == [1.0, 2.5, 2.5, 4.0]
    # [3, 2, 1]: everything pools to the mean 2
    assert isotonic_regression([3, 2, 1]) == [2.0, 2.0, 2.0]
    # weights: [0 (w=3), 1 (w=1)] is fine; [1 (w=3), 0 (w=1)] pools to 3/4
    assert isotonic_regression([1, 0], [3, 1]) == [0.75, 0.75]
    assert isotonic_regression([]) == []
    with pytest.raises(ValueError, match="weights"):
        isotonic_regression([1, 2], [1, 0])


def test_fit_isotonic_hand_value_and_interpolation() -> None:
    # scores 1..5 labels 0 1 0 1 1: PAVA pools (1, 0) at x=2,3 -> .5 .5
    cal = fit_isotonic([1, 2, 3, 4, 5], [0, 1, 0, 1, 1], signal="judge")
    assert cal.xs == (1.0, 2.0, 3.0, 4.0, 5.0) and cal.ys == (0.0, 0.5, 0.5, 1.0, 1.0)
    assert cal(3.5) == 0.75  # linear between (3, .5) and (4, 1)
    assert cal(-10) == 0.0 and cal(99) == 1.0  # clipped
    # ties pooled before PAVA: x=2 has labels 0 and 1 -> .5
    assert fit_isotonic([2, 2, 3], [0, 1, 1]).ys == (0.5, 1.0)
    dec = fit_isotonic([1, 2, 3], [1, 0, 0], increasing=False)
    assert dec(1) == 1.0 and dec(3) == 0.0
    assert IsotonicCalibrator.from_dict(json.loads(json.dumps(cal.to_dict()))) == cal


@pytest.mark.parametrize(
    "scores, labels, match",
    [([], [], "at least one"), ([1, 2], [1], "equal length"), ([1], [2], r"\[0, 1\]"),
     ([float("nan")], [1], "finite")],
)  # fmt: skip
def test_fit_isotonic_validates(scores, labels, match) -> None:
    with pytest.raises(ValueError, match=match):
        fit_isotonic(scores, labels)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.sampled_from([0.0, 1.0]), st.integers(1, 3)),
        min_size=1,
        max_size=40,
    ),
    st.booleans(),
)
def test_isotonic_matches_sklearn(rows, increasing) -> None:
    iso = pytest.importorskip("sklearn.isotonic")  # test oracle only
    x = [float(r[0]) for r in rows]
    y = [r[1] for r in rows]
    w = [float(r[2]) for r in rows]
    cal = fit_isotonic(x, y, weights=w, increasing=increasing)
    ref = iso.IsotonicRegression(out_of_bounds="clip", increasing=increasing)
    ref.fit(x, y, sample_weight=w)
    grid = [v / 2 for v in range(-2, 44)]
    want = ref.predict(grid)
    for g, expected in zip(grid, want):
        assert cal(g) == pytest.approx(float(expected), abs=1e-9)


@given(st.lists(st.floats(-100, 100), max_size=50))
def test_prop_pava_monotone_and_mean_preserving(ys) -> None:
    fit = isotonic_regression(ys)
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(fit))
    assert sum(fit) == pytest.approx(sum(ys), abs=1e-6)


# ----------------------------------------------------------------------------- signals


def test_signals_run_cheapest_first() -> None:
    log: list[str] = []
    sigs = [Sig("judge", 5, 0.9, log), Sig("regex", 1, 0.2, log), Sig("nli", 3, 0.5, log)]
    assert [s.name for s in order_signals(sigs)] == ["regex", "nli", "judge"]
    q = estimate_quality("out", sigs)
    assert log == ["regex", "nli", "judge"] and q.order == ("regex", "nli", "judge")
    assert q.probability is None and q.passed is None and "not a probability" in q.reason
    assert dict(q.raw) == {"judge": 0.9, "regex": 0.2, "nli": 0.5}


def test_judge_detection() -> None:
    assert JUDGE_COST_TIER == 5
    assert is_judge(JudgeSignal(lambda o, c: 1.0, "c"))
    assert is_judge(Sig("x", 5, 0)) and not is_judge(Sig("x", 2, 0))


@pytest.mark.parametrize(
    "sigs, exc, match",
    [([Sig("a", 1, 0), Sig("a", 2, 0)], ValueError, "unique"),
     ([Sig("a", 0, 0)], ValueError, "cost_tier"), (["nope"], TypeError, "Signal")],
)  # fmt: skip
def test_order_signals_validates(sigs, exc, match) -> None:
    with pytest.raises(exc, match=match):
        order_signals(sigs)


# ----------------------------------------------------------------------------- refusals


def test_refuses_to_gate_a_raw_judge_before_calling_it() -> None:
    calls: list[str] = []
    judge = JudgeSignal(lambda o, c: calls.append(o) or 4.0, "helpful?", scale=(1, 5))
    with pytest.raises(UncalibratedScoreError, match="raw judge score is not a probability"):
        estimate_quality("out", judge, threshold=0.5)
    assert calls == []  # refused before any judge spend
    # a mapping that calibrates other signals but not the judge is refused too
    cheap = Sig("len", 1, 0.5)
    cal = fit_isotonic([0, 1], [0, 1], signal="len")
    with pytest.raises(UncalibratedScoreError, match=r"\['judge'\] has no calibrator"):
        estimate_quality("out", [cheap, judge], calibrator={"len": cal}, threshold=0.5)
    # any raw signal without a calibrator is not gateable
    with pytest.raises(UncalibratedScoreError, match="raw signal is not a probability"):
        estimate_quality("out", [cheap], threshold=0.5)


def test_refuses_to_mix_judge_and_other_signals_under_one_calibrator() -> None:
    judge = JudgeSignal(lambda o, c: 4.0, "helpful?", scale=(1, 5))
    logprob = Sig("logprob", 2, -0.3)
    cal = fit_isotonic([1, 2, 3, 4, 5], [0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="refusing to mix judge"):
        estimate_quality("out", [logprob, judge], calibrator=cal)
    # the judge alone under one calibrator is fine
    q = estimate_quality("out", [judge], calibrator=cal, threshold=0.5)
    assert q.probability == 1.0 and q.passed is True and q.decided_by == "judge"


def test_one_calibrator_over_non_judge_signals_calibrates_the_mean() -> None:
    cal = fit_isotonic([0.0, 0.5, 1.0], [0, 0.5, 1])
    q = estimate_quality("x", [Sig("a", 1, 0.2), Sig("b", 2, 0.4)], calibrator=cal)
    # mean raw = .3 -> interpolated .3
    assert q.probability == pytest.approx(0.3) and q.decided_by == "mean"
    with pytest.raises(ValueError, match="escalate"):
        estimate_quality("x", [Sig("a", 1, 0.2)], calibrator=cal, escalate=(0.1, 0.9))


# ----------------------------------------------------------------------------- per-signal mode


def test_per_signal_calibration_and_escalation() -> None:
    log: list[str] = []
    cheap = Sig("cheap", 1, 0.95, log)
    judge = JudgeSignal(lambda o, c: log.append("judge") or 0.2, "ok?")
    cals = {
        "cheap": fit_isotonic([0, 1], [0, 1], signal="cheap"),
        "judge": fit_isotonic([0, 1], [0, 1], signal="judge"),
    }
    # cheap is decisive (.95 >= .9): the judge is never called
    q = estimate_quality("x", [judge, cheap], calibrator=cals, threshold=0.5, escalate=(0.1, 0.9))
    assert log == ["cheap"] and q.skipped == ("judge",) and q.decided_by == "cheap"
    assert q.passed is True and "skipped" in q.reason
    # not decisive: escalate to the judge, which decides
    log.clear()
    cheap.value = 0.5
    q = estimate_quality("x", [judge, cheap], calibrator=cals, threshold=0.5, escalate=(0.1, 0.9))
    assert log == ["cheap", "judge"] and q.decided_by == "judge"
    assert q.probability == pytest.approx(0.2) and q.passed is False
    assert set(q.calibrated) == {"cheap", "judge"}
    assert isinstance(q, QualityEstimate) and json.loads(json.dumps(q.to_dict())) == q.to_dict()


def test_per_signal_mode_validation() -> None:
    s = Sig("a", 1, 0.5)
    cal_b = fit_isotonic([0, 1], [0, 1], signal="b")
    with pytest.raises(ValueError, match="unknown signal"):
        estimate_quality("x", [s], calibrator={"b": cal_b})
    with pytest.raises(ValueError, match="fitted for signal 'b'"):
        estimate_quality("x", [s], calibrator={"a": cal_b})
    with pytest.raises(TypeError, match="calibrator"):
        estimate_quality("x", [s], calibrator=[cal_b])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold"):
        estimate_quality("x", [s], calibrator={"a": fit_isotonic([0], [1])}, threshold=2)
    with pytest.raises(ValueError, match="escalate"):
        estimate_quality("x", [s], calibrator={"a": fit_isotonic([0], [1])}, escalate=(0.9, 0.1))
    with pytest.raises(TypeError, match="must return a number"):
        estimate_quality("x", [Sig("a", 1, "high")])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one signal"):
        estimate_quality("x", [])


def test_calibrated_judge_end_to_end() -> None:
    # a judge on a 1-5 scale, validated elsewhere, calibrated on human accept/reject labels
    rng = random.Random(0)
    raw = [rng.randint(1, 5) for _ in range(200)]
    human = [int(rng.random() < (r - 1) / 4) for r in raw]  # P(accept) rises with the score
    cal = fit_isotonic(raw, human, signal="judge")
    assert all(a <= b for a, b in itertools.pairwise(cal.ys))
    judge = JudgeSignal(lambda o, c: 5.0 if "good" in o else 1.0, "ok?", scale=(1, 5))
    hi = estimate_quality("good answer", judge, calibrator={"judge": cal}, threshold=0.5)
    lo = estimate_quality("bad answer", judge, calibrator={"judge": cal}, threshold=0.5)
    assert hi.passed is True and lo.passed is False
    assert 0.0 <= lo.probability < hi.probability <= 1.0
