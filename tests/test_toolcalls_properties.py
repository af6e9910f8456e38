"""Property tests (hypothesis) for ek.agents.toolcalls."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import Step
from ek.agents.toolcalls import AnyOf, GoldCall, ToolCallMetric, match_calls

M = ToolCallMetric()

values = st.one_of(
    st.integers(-2, 2),
    st.sampled_from(["a", "B", "c d"]),
    st.booleans(),
    st.lists(st.integers(0, 2), max_size=2),
)
args = st.dictionaries(st.sampled_from(["x", "y", "z"]), values, max_size=3)
calls = st.lists(st.builds(Step, st.sampled_from(["f", "g", "h"]), args), max_size=6)
settings_ = settings(max_examples=60, deadline=None)


@settings_
@given(calls, calls)
def test_score_in_unit_interval(pred: list[Step], gold: list[Step]) -> None:
    s = M(pred, gold)
    assert 0.0 <= s.value <= 1.0
    assert s.detail["tp"] >= 0 and s.detail["fp"] >= 0 and s.detail["fn"] >= 0
    assert s.passed == (s.detail["fp"] == 0 and s.detail["fn"] == 0)  # unit costs


@settings_
@given(calls)
def test_identity_scores_one_and_is_valid(gold: list[Step]) -> None:
    s = M(list(gold), gold)
    assert s.value == 1.0 and s.passed is True


@settings_
@given(calls, calls, st.randoms(use_true_random=False))
def test_invariant_to_call_order(pred: list[Step], gold: list[Step], rnd: Any) -> None:
    base = M(pred, gold)
    p2, g2 = list(pred), list(gold)
    rnd.shuffle(p2)
    rnd.shuffle(g2)
    s = M(p2, g2)
    assert s.value == base.value
    assert s.passed == base.passed
    assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (
        base.detail["tp"],
        base.detail["fp"],
        base.detail["fn"],
    )


@settings_
@given(calls, calls)
def test_invariant_to_argument_order(pred: list[Step], gold: list[Step]) -> None:
    rev = [Step(c.tool, dict(reversed(list(c.args.items())))) for c in pred]
    assert M(rev, gold).value == M(pred, gold).value


@settings_
@given(calls, calls, args)
def test_an_extra_call_never_raises_the_score(pred: list[Step], gold: list[Step], a: Any) -> None:
    # "extra": a tool no gold call uses, so nothing can be matched to it
    before = M(pred, gold)
    after = M([*pred, Step("unrelated_tool", a)], gold)
    assert after.value <= before.value
    assert after.passed is False


@settings_
@given(calls, st.randoms(use_true_random=False))
def test_any_permutation_of_the_gold_is_valid(gold: list[Step], rnd: Any) -> None:
    pred = list(gold)
    rnd.shuffle(pred)
    assert match_calls(pred, gold).valid


@settings_
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["f", "g"]),
            st.dictionaries(
                st.sampled_from(["x", "y"]),
                st.lists(st.integers(0, 3), min_size=1, max_size=3),
                max_size=2,
            ),
        ),
        max_size=5,
    ),
    st.randoms(use_true_random=False),
)
def test_choosing_any_acceptable_values_in_any_order_is_valid(spec: Any, rnd: Any) -> None:
    # A maximum matching finds a perfect assignment whenever one exists (first-fit may not).
    gold = [GoldCall(t, {k: AnyOf(*vals) for k, vals in a.items()}) for t, a in spec]
    pred = [Step(t, {k: rnd.choice(vals) for k, vals in a.items()}) for t, a in spec]
    rnd.shuffle(pred)
    assert match_calls(pred, gold).valid


# --------------------------------------------------------------------------- f1_score's checks
# (issue 17 speed pass, 2026-12-01) f1_score checks the types first and the signs and the sum
# after; it must accept and refuse exactly what the check of every count did before.


def _f1_before(tp: Any, fp: Any, fn: Any) -> float:
    """The rule before: three finite floats >= 0 go straight through; otherwise each count in
    turn must be a number (not a bool: TypeError) that fits a float, is finite and >= 0
    (ValueError); the error names the count."""
    inf = float("inf")
    if not (
        type(tp) is float
        and type(fp) is float
        and type(fn) is float
        and 0.0 <= tp < inf
        and 0.0 <= fp < inf
        and 0.0 <= fn < inf
    ):
        for label, v in (("tp", tp), ("fp", fp), ("fn", fn)):
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise TypeError(label)
            try:
                x = float(v)
            except OverflowError:
                raise ValueError(label) from None
            if not (math.isfinite(x) and v >= 0):
                raise ValueError(label)
    denom = 2.0 * tp + fp + fn
    return 1.0 if denom == 0 else 2.0 * tp / denom


_COUNT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, 1e308, -0.0, -1.0]),
    st.integers(min_value=-3, max_value=10**400),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        v = fn(*args)
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e).split(" ", 1)[0]  # the kind of error and the count named
    return "ok", "nan" if v != v else v


@settings(max_examples=600, deadline=None)
@given(_COUNT, _COUNT, _COUNT)
def test_f1_score_accepts_and_refuses_as_before(tp: Any, fp: Any, fn: Any) -> None:
    from ek.fields import f1_score

    assert _outcome(f1_score, tp, fp, fn) == _outcome(_f1_before, tp, fp, fn)
