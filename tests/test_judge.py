"""LLM-judge seams: signals, metrics, pairwise bias, validation, failure handling."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import random
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ek.agents.base import Episode
from ek.agents.judge import (
    KRIPPENDORFF_CITATION,
    JudgeError,
    JudgeMetric,
    JudgeSignal,
    JudgeValidation,
    PairwiseResult,
    apairwise_judge,
    judge_validation,
    mean_position_bias,
    pairwise_judge,
)
from ek.base import Metric, Score, Signal
from ek.evaluate import evaluate
from ek.iaa import krippendorff_alpha


def const(v):
    return lambda *args: v


# ----------------------------------------------------------------------------- JudgeSignal


def test_signal_protocol_and_criteria_binding() -> None:
    seen = []

    def judge(output, criteria):
        seen.append((output, criteria))
        return 3

    s = JudgeSignal(judge, "Is it polite?", scale=(1, 5), name="polite")
    assert isinstance(s, Signal) and s.cost_tier == 5 and s.is_judge
    assert s("hello") == 3.0 and isinstance(s("hi"), float)
    assert seen == [("hello", "Is it polite?"), ("hi", "Is it polite?")]
    assert "polite" in repr(s)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"criteria": ""}, "criteria"),
        ({"criteria": None}, "criteria"),
        ({"criteria": "c", "scale": (5, 1)}, "scale"),
        ({"criteria": "c", "scale": (0, float("inf"))}, "scale"),
        ({"criteria": "c", "timeout": 0}, "timeout"),
        ({"criteria": "c", "name": ""}, "name"),
    ],
)
def test_signal_validates_in_constructor(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        JudgeSignal(const(1), **kwargs)
    with pytest.raises(TypeError, match="callable"):
        JudgeSignal("not a judge", "c")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "ret, kind, match",
    [
        ("0.7", "invalid", "must return a number"),
        (None, "invalid", "must return a number"),
        (True, "invalid", "must return a number"),
        (float("nan"), "invalid", "outside its scale"),
        (1.5, "invalid", "outside its scale"),
        (-0.1, "invalid", "outside its scale"),
    ],
)
def test_bad_judge_output_is_a_clear_error_never_zero(ret, kind, match) -> None:
    s = JudgeSignal(const(ret), "c")
    with pytest.raises(JudgeError, match=match) as e:
        s("x")
    assert e.value.kind == kind and e.value.judge == "judge"


def test_judge_that_raises_is_wrapped_with_cause() -> None:
    def boom(output, criteria):
        raise ConnectionError("rate limited")

    with pytest.raises(JudgeError, match="raised ConnectionError: rate limited") as e:
        JudgeSignal(boom, "c")("x")
    assert e.value.kind == "raised" and isinstance(e.value.__cause__, ConnectionError)


def test_sync_judge_timeout() -> None:
    release = threading.Event()

    def slow(output, criteria):
        release.wait(5)
        return 0.5

    try:
        with pytest.raises(JudgeError, match="timed out") as e:
            JudgeSignal(slow, "c", timeout=0.05)("x")
        assert e.value.kind == "timeout"
    finally:
        release.set()
    # with a timeout a fast sync judge still answers (it runs in a worker thread)
    assert JudgeSignal(const(0.25), "c", timeout=5)("x") == 0.25
    # and an exception inside the worker thread is still wrapped
    with pytest.raises(JudgeError, match="ZeroDivisionError"):
        JudgeSignal(lambda o, c: 1 / 0, "c", timeout=5)("x")


def test_async_judge_from_sync_code_and_timeout() -> None:
    async def judge(output, criteria):
        await asyncio.sleep(0)
        return 0.9

    assert JudgeSignal(judge, "c")("x") == 0.9

    async def hang(output, criteria):
        await asyncio.sleep(10)
        return 0.9

    with pytest.raises(JudgeError, match="timed out") as e:
        JudgeSignal(hang, "c", timeout=0.05)("x")
    assert e.value.kind == "timeout"

    async def bad(output, criteria):
        return "great"

    with pytest.raises(JudgeError, match="must return a number"):
        JudgeSignal(bad, "c")("x")

    class AsyncCallable:
        async def __call__(self, output, criteria):
            raise ValueError("parse error")

    with pytest.raises(JudgeError, match="ValueError: parse error"):
        JudgeSignal(AsyncCallable(), "c")("x")


def test_async_judge_inside_running_loop_needs_acall() -> None:
    calls = []

    async def judge(output, criteria):
        calls.append(output)
        return 0.4

    s = JudgeSignal(judge, "c")

    async def main():
        with pytest.raises(JudgeError, match="event loop is already running") as e:
            s("x")
        assert e.value.kind == "event-loop"
        assert calls == []  # refused before calling: no spend
        return await s.acall("y")

    assert asyncio.run(main()) == 0.4 and calls == ["y"]


def test_acall_runs_sync_judges_and_checks_them() -> None:
    async def main():
        ok = await JudgeSignal(const(0.3), "c").acall("x")
        with pytest.raises(JudgeError, match="outside its scale"):
            await JudgeSignal(const(3), "c").acall("x")
        with pytest.raises(JudgeError, match="timed out"):

            async def hang(o, c):
                await asyncio.sleep(10)

            await JudgeSignal(hang, "c", timeout=0.05).acall("x")
        return ok

    assert asyncio.run(main()) == 0.3


def test_sync_callable_returning_a_coroutine_is_awaited() -> None:
    async def inner():
        return 0.6

    assert JudgeSignal(lambda o, c: inner(), "c")("x") == 0.6


# ----------------------------------------------------------------------------- JudgeMetric


def test_metric_uses_gold_and_episode_output() -> None:
    seen = []

    def judge(output, criteria, gold):
        seen.append((output, gold))
        return 1.0 if output == gold else 0.0

    m = JudgeMetric(judge, "same final answer?", threshold=0.5)
    assert isinstance(m, Metric) and m.higher_is_better
    ep = Episode(task_id="t1", output="Paris")
    s = m(ep, "Paris")
    assert seen == [("Paris", "Paris")]
    assert s.value == 1.0 and s.passed is True and s.detail["higher_is_better"] is True
    assert "threshold" in s.reason
    miss = m("Lyon", "Paris")
    assert miss.passed is False
    # aggregate = sum(score_sum)/sum(n_scored) = (1 + 0)/2
    res = evaluate(m, [ep, "Lyon"], ["Paris", "Paris"])
    assert res.value == 0.5
    custom = JudgeMetric(judge, "c", extract=lambda p: p.upper())
    assert custom("paris", "PARIS").value == 1.0
    assert "passed" not in custom("a", "b").detail  # no threshold -> no verdict


def test_metric_failures_raise_or_are_recorded_never_zero() -> None:
    def boom(o, c, g):
        raise TimeoutError("upstream")

    with pytest.raises(JudgeError, match="upstream"):
        JudgeMetric(boom, "c")("x", "y")
    m = JudgeMetric(boom, "c", on_error="record", threshold=0.5)
    s = m("x", "y")
    assert s.is_nan and s.detail["failed"] and s.detail["error_kind"] == "raised"
    assert s.passed is False and "judge failed" in s.reason
    ok = JudgeMetric(const(0.8), "c", on_error="record")("x", "y")
    # failed items are excluded from the aggregate and counted, not scored 0
    assert m.aggregate([s, ok]) == 0.8
    assert math.isnan(m.aggregate([s]))
    with pytest.raises(ValueError, match="on_error"):
        JudgeMetric(boom, "c", on_error="ignore")
    with pytest.raises(ValueError, match="threshold"):
        JudgeMetric(boom, "c", threshold=2)


def test_metric_async_variant() -> None:
    async def judge(o, c, g):
        return 0.7

    m = JudgeMetric(judge, "c")

    async def main():
        return await m.acall("x", "y")

    assert asyncio.run(main()).value == 0.7
    assert m("x", "y").value == 0.7  # no loop running: asyncio.run


# ----------------------------------------------------------------------------- pairwise


def _position_biased_judge(quality: dict[str, float], bias: float):
    """A fake judge: P(first better) = 0.5 + (q_first - q_second)/2 + bias (linear, no clipping)."""
    calls = []

    def judge(first, second, criteria):
        calls.append((first, second))
        return 0.5 + (quality[first] - quality[second]) / 2 + bias

    return judge, calls


def test_position_bias_is_measured_and_cancelled() -> None:
    quality = {"good": 0.7, "poor": 0.5}
    judge, calls = _position_biased_judge(quality, bias=0.2)
    r = pairwise_judge(judge, "good", "poor", "helpfulness")
    assert calls == [("good", "poor"), ("poor", "good")]  # both orders asked
    # ab = .5 + .1 + .2 = .8; ba = .5 - .1 + .2 = .6
    assert r.ab == pytest.approx(0.8) and r.ba == pytest.approx(0.6)
    # preference = (.8 + (1 - .6))/2 = .6 = the unbiased .5 + (.7 - .5)/2: bias cancelled
    assert r.preference == pytest.approx(0.6) and r.winner == "a"
    # bias = (.8 + .6)/2 - .5 = .2: measured exactly
    assert r.position_bias == pytest.approx(0.2)
    # with poor shown first the bias (+.2) outweighs the quality gap (.1): the verdict flipped
    assert r.disagreed and "disagree" in r.reason
    small, _ = _position_biased_judge(quality, bias=0.05)
    assert not pairwise_judge(small, "good", "poor", "h").disagreed  # .55 vs .45: a both times
    # a single order would have reported .8 (a 20-point error)
    unbiased, _ = _position_biased_judge(quality, bias=0.0)
    assert pairwise_judge(unbiased, "good", "poor", "h").preference == pytest.approx(r.preference)


def test_position_bias_over_many_pairs_and_flip_detection() -> None:
    rng = random.Random(0)
    items = {f"o{i}": rng.uniform(0.3, 0.7) for i in range(20)}
    judge, _ = _position_biased_judge(items, bias=0.15)
    unbiased, _ = _position_biased_judge(items, bias=0.0)
    names = list(items)
    results = [pairwise_judge(judge, a, b, "c") for a, b in itertools.pairwise(names)]
    clean = [pairwise_judge(unbiased, a, b, "c") for a, b in itertools.pairwise(names)]
    assert mean_position_bias(results) == pytest.approx(0.15)
    assert mean_position_bias(clean) == pytest.approx(0.0, abs=1e-12)
    for r, c in zip(results, clean):
        assert r.preference == pytest.approx(c.preference)
    # close pairs flip with position: the verdict disagreed between orders
    flipped = [r for r in results if r.disagreed]
    assert flipped and all("disagree" in r.reason for r in flipped)
    assert math.isnan(mean_position_bias([]))


def test_always_first_judge_is_a_tie_with_full_bias() -> None:
    r = pairwise_judge(const("A"), "x", "y", "c")
    assert (r.preference, r.winner, r.position_bias, r.disagreed) == (0.5, "tie", 0.5, True)
    assert isinstance(r, PairwiseResult) and json.loads(json.dumps(r.to_dict())) == r.to_dict()
    assert pairwise_judge(const("tie"), "x", "y", "c").winner == "tie"


def test_pairwise_invalid_answers() -> None:
    with pytest.raises(JudgeError, match="expected a preference"):
        pairwise_judge(const("maybe"), "x", "y", "c")
    with pytest.raises(JudgeError, match="outside its scale"):
        pairwise_judge(const(2.0), "x", "y", "c")


def test_apairwise_runs_both_orders() -> None:
    quality = {"a": 0.6, "b": 0.4}

    async def judge(first, second, criteria):
        await asyncio.sleep(0)
        return 0.5 + (quality[first] - quality[second]) / 2 + 0.1

    r = asyncio.run(apairwise_judge(judge, "a", "b", "c"))
    assert r.preference == pytest.approx(0.6) and r.position_bias == pytest.approx(0.1)


@given(st.floats(0, 1), st.floats(0, 1))
def test_prop_pairwise_symmetry(ab: float, ba: float) -> None:
    answers = iter([ab, ba])
    r = pairwise_judge(lambda f, s, c: next(answers), "a", "b", "c")
    answers2 = iter([ba, ab])
    swapped = pairwise_judge(lambda f, s, c: next(answers2), "b", "a", "c")
    assert 0 <= r.preference <= 1 and -0.5 <= r.position_bias <= 0.5
    assert r.preference == pytest.approx(1 - swapped.preference)
    assert r.position_bias == pytest.approx(swapped.position_bias)


# ----------------------------------------------------------------------------- validation


def _humans(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(1, 5) for _ in range(n)]


def test_good_judge_passes_noisy_judge_fails() -> None:
    human = _humans(80, 1)
    rng = random.Random(2)
    good = [min(5, max(1, h + rng.choice([0, 0, 0, 0, 1, -1]))) for h in human]
    noisy = [min(5, max(1, h + rng.choice([-3, -2, 0, 2, 3]))) for h in human]
    v_good = judge_validation(good, human, n_resamples=300)
    v_noisy = judge_validation(noisy, human, n_resamples=300)
    assert isinstance(v_good, JudgeValidation)
    assert v_good.passed and v_good.alpha >= 0.667 and "validated" in v_good.reason
    assert not v_noisy.passed and v_noisy.alpha < 0.667 and "NOT validated" in v_noisy.reason
    # alpha agrees with ek.iaa on the same two-coder data
    assert v_good.alpha == pytest.approx(krippendorff_alpha([good, human], "interval"))
    assert v_good.alpha_interval.low <= v_good.alpha <= v_good.alpha_interval.high
    assert v_good.kappa_weights == "quadratic" and v_good.kappa > v_noisy.kappa
    assert v_good.agreement > v_noisy.agreement and v_good.n == 80
    assert v_good.citation == KRIPPENDORFF_CITATION and "0.667" not in v_good.citation
    assert ".667" in v_good.citation
    d = v_good.to_dict()
    assert json.loads(json.dumps(d)) == d and d["passed"] is True


def test_validation_interval_matches_oracle_statistic_and_is_seeded() -> None:
    human = _humans(40, 3)
    rng = random.Random(4)
    judge = [h + rng.gauss(0, 0.8) for h in human]  # continuous scores
    a = judge_validation(judge, human, n_resamples=200, seed=5)
    b = judge_validation(judge, human, n_resamples=200, seed=5)
    assert a == b and "seed=5" in a.alpha_interval.method
    # continuous scores: kappa is not meaningful and says so
    assert math.isnan(a.kappa) and "continuous" in a.detail["kappa_reason"]
    # the fast interval path agrees with the generic alpha on resampled data
    assert a.alpha == pytest.approx(krippendorff_alpha([judge, human], "interval"), abs=1e-12)
    loose = judge_validation(judge, human, n_resamples=200, tolerance=1.0)
    assert loose.agreement > a.agreement


def test_validation_lower_bound_and_threshold() -> None:
    human = _humans(12, 7)
    judge = [min(5, h + (i % 3 == 0)) for i, h in enumerate(human)]
    point = judge_validation(judge, human, threshold=0.667, n_resamples=300)
    strict = judge_validation(
        judge, human, threshold=0.667, n_resamples=300, require_lower_bound=True
    )
    assert point.passed
    assert strict.alpha_interval.low < point.alpha
    assert strict.passed == (strict.alpha_interval.low >= 0.667)
    assert "lower bound" in strict.reason
    assert not judge_validation(judge, human, threshold=0.999, n_resamples=50).passed


def test_validation_counts_failed_judge_calls() -> None:
    human = [1, 2, 3, 4, 5, 1, 2, 3]
    failed = Score(float("nan"), {"failed": True})
    judge = [1, 2, None, 4, float("nan"), 1, failed, JudgeError("x", kind="timeout", judge="j")]
    v = judge_validation(judge, human, n_resamples=50)
    assert v.n == 4 and v.n_missing == 4 and "4 unit(s)" in v.reason


def test_validation_nominal_labels() -> None:
    human = ["pass", "fail", "pass", "pass", "fail", "fail", "pass", "fail"]
    judge = ["pass", "fail", "pass", "fail", "fail", "fail", "pass", "fail"]
    v = judge_validation(judge, human, level="nominal", n_resamples=100)
    assert v.kappa_weights is None and v.agreement == 7 / 8
    assert v.alpha == pytest.approx(krippendorff_alpha([judge, human], "nominal"))


def test_validation_undefined_and_bad_input() -> None:
    v = judge_validation([3, 3, 3], [3, 3, 3], n_resamples=20)
    assert math.isnan(v.alpha) and not v.passed and "undefined" in v.reason
    assert v.to_dict()["alpha"] is None
    e = judge_validation([None], [1], n_resamples=20)
    assert e.n == 0 and not e.passed
    with pytest.raises(ValueError, match="same units"):
        judge_validation([1, 2], [1])
    with pytest.raises(ValueError, match="level"):
        judge_validation([1], [1], level="fuzzy")
    with pytest.raises(ValueError, match="threshold"):
        judge_validation([1], [1], threshold=2)
