"""The tool-call scoring rule lives in one function, ``ek.agents.toolcalls._compare.charge``
(issue 31): the metric's counts, a trajectory's substitution cost and the assignment's pair
costs are all sums of its charges.

Costs with a grammar: tool ``f`` of weight 1 with importances a = 2, b = 3, c = 5 (any other
argument 1). A match earns its importance as TP; a wrong argument costs it as FP and FN; a
missing one as FN; an extra one as FP; the edit cost counts each argument that differs once.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import Step, ToolSpec
from ek.agents.toolcalls import ToolCallMetric, match_calls
from ek.agents.toolcalls._compare import charge
from ek.agents.trajectory import TrajectoryMetric
from ek.grammar import FieldSpec, GraphGrammar

F = ToolSpec(
    "f",
    [
        FieldSpec("a", importance=2.0),
        FieldSpec("b", importance=3.0),
        FieldSpec("c", importance=5.0),
    ],
)
GRAMMAR = [F, ToolSpec("g")]


def test_charge_is_the_rule() -> None:
    assert charge("match", 2.0) == (2.0, 0.0, 0.0, 0.0)
    assert charge("wrong", 2.0) == (0.0, 2.0, 2.0, 2.0)
    assert charge("missing", 2.0) == (0.0, 0.0, 2.0, 2.0)
    assert charge("extra", 2.0) == (0.0, 2.0, 0.0, 2.0)
    with pytest.raises(ValueError, match="verdict must be 'match', 'wrong', 'missing' or 'extra'"):
        charge("partial", 1.0)


def test_one_pair_hand_derived_on_every_path() -> None:
    # pred f(a=1, b=9, d=7) against gold f(a=1, b=2, c=4): a match (2), b wrong (3), c missing
    # (5), d extra (1, the default importance; f has a schema, so d is "not a parameter").
    pred, gold = [Step("f", {"a": 1, "b": 9, "d": 7})], [Step("f", {"a": 1, "b": 2, "c": 4})]
    s = ToolCallMetric(GRAMMAR)(pred, gold)
    # TP = weight 1 + a 2 = 3; FP = b 3 + d 1 = 4; FN = b 3 + c 5 = 8; F1 = 6 / (6 + 12) = 1/3
    assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (3.0, 4.0, 8.0)
    assert math.isclose(s.value, 1 / 3)
    # Trajectory, in_order: the substitution costs b 3 + c 5 + d 1 = 9 (less than deleting the
    # gold step, its mass 1 + 2 + 3 + 5 = 11); score 1 - 9/11.
    t = TrajectoryMetric("in_order", GRAMMAR)(pred, gold)
    assert (t.detail["cost"], t.detail["worst_case"]) == (9.0, 11.0)
    (op,) = t.detail["alignment"]
    assert op["op"] == "substitute" and [a["arg"] for a in op["args"]] == ["b", "c", "d"]
    # any_order: the same substitution; worst case = gold mass 11 + predicted mass
    # (1 + a 2 + b 3 + d 1 = 7) = 18; score 1 - 9/18 = 0.5.
    u = TrajectoryMetric("any_order", GRAMMAR)(pred, gold)
    assert (u.detail["cost"], u.detail["worst_case"], u.value) == (9.0, 18.0, 0.5)


names = st.sampled_from(["a", "b", "c", "d"])
calls = st.lists(
    st.builds(
        Step, st.sampled_from(["f", "g"]), st.dictionaries(names, st.integers(0, 2), max_size=4)
    ),
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(calls, calls, st.booleans())
def test_every_count_is_a_sum_of_charges(pred: list[Step], gold: list[Step], schema: bool) -> None:
    grammar = GRAMMAR if schema else None
    r = match_calls(pred, gold, grammar=grammar)  # type: ignore[arg-type]
    weight = 1.0
    tp = fp = fn = 0.0
    for m in r.matched:
        charges = [charge(a.verdict, a.importance) for a in m.args]
        assert m.tp == weight + math.fsum(c.tp for c in charges)
        assert (m.fp, m.fn, m.cost) == tuple(
            math.fsum(getattr(c, k) for c in charges) for k in ("fp", "fn", "cost")
        )
        tp, fp, fn = tp + m.tp, fp + m.fp, fn + m.fn
    # a missing (extra) call costs its mass: what it would have earned matched exactly
    fn += math.fsum(u.cost for u in r.missing)
    fp += math.fsum(u.cost for u in r.extra)
    assert math.isclose(r.tp, tp) and math.isclose(r.fp, fp) and math.isclose(r.fn, fn)
    s = ToolCallMetric(grammar)(pred, gold)  # type: ignore[arg-type]
    assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (r.tp, r.fp, r.fn)


@settings(max_examples=100, deadline=None)
@given(calls)
def test_a_call_matched_exactly_earns_its_mass(pred: list[Step]) -> None:
    # Pairs claimed as identical (tools without a schema) are counted by the predicted call's
    # mass without spelling out their verdicts: each call's mass (what it costs as an extra
    # call) must be what its match charges add up to, with costs that are not whole numbers.
    odd = GraphGrammar(default_weight=0.3, default_importance=0.1)
    for grammar in (None, odd, GraphGrammar([ToolSpec("f", destructive=True).to_node_type()])):
        r = match_calls(pred, list(pred), grammar=grammar)
        assert r.valid and r.fp == r.fn == 0.0
        mass = {u.index: u.cost for u in match_calls(pred, [], grammar=grammar).extra}
        assert {m.pred_index: m.tp for m in r.matched} == mass
