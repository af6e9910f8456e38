"""ToolCallMetric's claiming on calls as written (``_claim_written``) against the full path.

``ToolCallMetric()(pred, gold)`` first tries to claim exact pairs without preparing the calls
(:func:`ek.agents._callscore.score_raw`); it must give exactly the Score of preparing everything
(``score_calls(pred, _prepare_gold(gold, ctx), ctx)``): the same value and the same detail, key
for key, including which gold call each predicted call was paired with. The strategies are built
to hit the cases where "equal as written" and "canonically equal" part: ``True`` vs ``1``,
``"Paris"`` vs ``" paris "``, NaN, lists, value-equal duplicates, other call forms and AnyOf.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents._calls import _prepare_gold
from ek.agents._callscore import _claim_written, score_calls
from ek.agents.base import Step
from ek.agents.toolcalls import AnyOf, GoldCall, ToolCallMetric

scalars = st.one_of(
    st.sampled_from([0, 1, 2, 1.0, 2.5, True, False, None, math.nan]),
    st.sampled_from(["Paris", " paris ", "PARIS", "rome", "Straße", "strasse", "1"]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.tuples(scalars))
arg_maps = st.dictionaries(st.sampled_from(["x", "y"]), values, max_size=2)
steps = st.builds(Step, st.sampled_from(["f", "g"]), arg_maps)
dict_calls = st.builds(lambda s: {"name": s.tool, "arguments": dict(s.args)}, steps)
gold_calls = st.one_of(
    steps,
    steps,
    dict_calls,
    st.builds(lambda s: GoldCall(s.tool, {k: AnyOf(v, "rome") for k, v in s.args.items()}), steps),
)


def _both(pred: list[Any], gold: list[Any], canonicalizer: str = "default") -> None:
    m = ToolCallMetric(canonicalizer=canonicalizer)
    try:
        full = score_calls(pred, _prepare_gold(gold, m._ctx), m._ctx)
    except (TypeError, ValueError) as e:  # bad input: the same error, word for word
        with pytest.raises(type(e)) as got:
            m(pred, gold)
        assert str(got.value) == str(e)
        return
    fast = m(pred, gold)
    assert (fast.value == full.value) or (math.isnan(fast.value) and math.isnan(full.value))
    assert list(fast.detail) == list(full.detail)
    assert repr(dict(fast.detail)) == repr(dict(full.detail))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.one_of(steps, steps, dict_calls), max_size=5),
    st.lists(gold_calls, max_size=5),
    st.sampled_from(["default", "bfcl", "raw"]),
)
def test_written_claiming_equals_full_preparation(
    pred: list[Any], gold: list[Any], canonicalizer: str
) -> None:
    _both(pred, gold, canonicalizer)


@settings(max_examples=200, deadline=None)
@given(st.lists(steps, min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_reordered_and_recased_copies(gold: list[Step], rnd: Any) -> None:
    # A prediction made of the gold calls, shuffled, some strings recased: claiming must pick
    # the same gold call for each predicted call as canonical-key claiming does.
    pred = [
        Step(
            s.tool,
            {
                k: (v.upper() if isinstance(v, str) and rnd.random() < 0.5 else v)
                for k, v in s.args.items()
            },
        )
        for s in gold
    ]
    rnd.shuffle(pred)
    _both(pred, gold + gold[:1])


@pytest.mark.parametrize(
    ("pred", "gold"),
    [
        # True == 1 as written, not canonically
        ([Step("f", {"x": True})], [Step("f", {"x": 1})]),
        ([Step("f", {"x": [True]})], [Step("f", {"x": [1]})]),
        # "Paris" and " paris " are canonically equal: the first gold call is the one to claim
        ([Step("f", {"x": " paris "})], [Step("f", {"x": "Paris"}), Step("f", {"x": " paris "})]),
        # NaN is NaN
        ([Step("f", {"x": math.nan})], [Step("f", {"x": float("nan")})]),
        # a tuple and a list are the same sequence canonically
        ([Step("f", {"x": (1, 2)})], [Step("f", {"x": [1, 2]})]),
        # bad values: the same error as the full path
        ([Step("f", {"x": {1, 2}})], [Step("f", {"x": "a"})]),
        ([Step("f", {"x": 1})], [Step("f", {"x": 1}), Step("g", {"x": object()})]),
    ],
)
def test_cases_where_written_and_canonical_equality_part(pred: list[Any], gold: list[Any]) -> None:
    _both(pred, gold)


def test_gives_up_rather_than_guess() -> None:
    m = ToolCallMetric()
    # an earlier gold call with the same argument names and a bool: only the full path knows
    assert _claim_written([Step("f", {"x": 1})], [Step("f", {"x": True})], m._ctx) is None
    # plain calls it settles itself
    s = _claim_written([Step("f", {"x": "A"})], [Step("f", {"x": "a"})], m._ctx)
    assert s is not None and s.value == 1.0


def test_bad_values_raise_as_before() -> None:
    m = ToolCallMetric()
    with pytest.raises(TypeError, match="predicted call 0"):
        m([Step("f", {"x": {1, 2}})], [Step("g", {"x": 1})])
    with pytest.raises(TypeError, match="gold call 1"):
        m([Step("f", {"x": 1})], [Step("f", {"x": 1}), Step("g", {"x": object()})])
