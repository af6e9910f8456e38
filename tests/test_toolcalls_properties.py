"""Property tests (hypothesis) for ek.agents.toolcalls."""

from __future__ import annotations

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
