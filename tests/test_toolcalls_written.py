"""ToolCallMetric's scoring on calls as written (``ek.agents._callwritten``) against the full path.

``ToolCallMetric()(pred, gold)`` first tries to claim exact pairs without preparing the calls
(:func:`ek.agents._callwritten._claim`); it must give exactly the Score of preparing everything
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
from ek.agents._callscore import score_calls
from ek.agents._callwritten import _claim
from ek.agents.base import Step, ToolSpec
from ek.agents.toolcalls import AnyOf, GoldCall, ToolCallMetric
from ek.grammar import FieldSpec, GraphGrammar, NodeType

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


def _both(
    pred: list[Any], gold: list[Any], canonicalizer: str = "default", grammar: Any = None
) -> None:
    m = ToolCallMetric(grammar=grammar, canonicalizer=canonicalizer)
    ref = ToolCallMetric(grammar=grammar, canonicalizer=canonicalizer)  # its own look-up caches
    try:
        full = score_calls(pred, _prepare_gold(gold, ref._ctx), ref._ctx)
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
    # a nested value with the same argument names: only the full path judges it
    assert _claim([Step("f", {"x": {"y": 1}})], [Step("f", {"x": {"y": 1}})], m._ctx) is None
    assert _claim([Step("f", {"x": [[1]]})], [Step("f", {"x": [[1]]})], m._ctx) is None
    # atoms it settles itself: recased strings are equal, a bool is not the number 1
    s = _claim([Step("f", {"x": "A"})], [Step("f", {"x": "a"})], m._ctx)
    assert s is not None and s.value == 1.0
    s = _claim([Step("f", {"x": 1})], [Step("f", {"x": True})], m._ctx)
    # 1 wrong argument: TP = weight 1, FP = FN = 1, F1 = 2 / (2 + 1 + 1) = 0.5
    assert s is not None and s.value == 0.5 and s.detail["wrong_args"][0]["arg"] == "x"


def test_bad_values_raise_as_before() -> None:
    m = ToolCallMetric()
    with pytest.raises(TypeError, match="predicted call 0"):
        m([Step("f", {"x": {1, 2}})], [Step("g", {"x": 1})])
    with pytest.raises(TypeError, match="gold call 1"):
        m([Step("f", {"x": 1})], [Step("f", {"x": 1}), Step("g", {"x": object()})])


# Costs that do not add up exactly in floating point, and one tool with a schema.
ODD_COSTS = GraphGrammar(
    [
        ToolSpec("f", destructive=True).to_node_type(),
        ToolSpec("g", weight=0.7).to_node_type(),
        NodeType("h", (FieldSpec("x", importance=4.0),), weight=2.0),  # a schema: full path
    ],
    default_weight=1.3,
    default_importance=0.1,
)
countable = st.one_of(
    st.sampled_from([0, 1, 2, 1.0, True, False, None, math.nan]),
    st.sampled_from(["Paris", " paris ", "rome", "1"]),
    st.lists(st.sampled_from([1, 1.0, "a", " A", None]), max_size=2),
)
one_call_maps = st.dictionaries(st.sampled_from(["x", "y", "z"]), countable, max_size=3)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["f", "g", "h"]), one_call_maps, max_size=3),
    st.dictionaries(st.sampled_from(["f", "g", "h"]), one_call_maps, max_size=3),
    st.lists(st.sampled_from(["f", "g", "h"]), max_size=2),
    st.booleans(),
)
def test_one_call_per_tool_left_over(
    pred: dict[str, Any], gold: dict[str, Any], copies: list[str], odd: bool
) -> None:
    # At most one call per tool on each side besides exact copies: what _count_left counts.
    p = [Step(t, a) for t, a in pred.items()] + [Step(t, gold[t]) for t in copies if t in gold]
    g = [Step(t, a) for t, a in gold.items()] + [Step(t, gold[t]) for t in copies if t in gold]
    _both(p, g, grammar=ODD_COSTS if odd else None)


def test_whole_number_costs_are_summed_in_any_order_others_in_gold_order() -> None:
    # Default costs are whole numbers: the claimed masses' sum in predicted order is exact.
    m = ToolCallMetric()
    gold = [Step("f", {"x": 1}), Step("g", {"y": "a"}), Step("h", {"z": 2})]
    pred = [gold[2], Step("g", {"y": "b"}), gold[0]]
    _both(pred, gold)
    m(pred, gold)
    assert m._ctx.integral
    # 0.1 + 0.7 + 0.2 depends on the order of addition: these go through gold order.
    odd = GraphGrammar([ToolSpec("g", weight=0.7).to_node_type()], default_importance=0.1)
    m = ToolCallMetric(grammar=odd)
    m(pred, gold)
    assert not m._ctx.integral
    _both(pred, gold, grammar=odd)
