"""Hand-derived values, peer-bug regressions, BFCL rules and bad input for ek.agents.toolcalls.

Cost conventions (module docstring): a matched call earns TP = tool weight + importance of each
argument it got right; a wrong argument adds its importance to FP and FN; a missing (extra)
argument adds it to FN (FP); a missing (extra) call costs its mass = weight + importance of its
arguments as FN (FP). Unit weights and importances unless a grammar says otherwise.
"""

from __future__ import annotations

import json
import math

import pytest

from ek.agents.base import Episode, Step, TaskSpec, ToolSpec, Trajectory
from ek.agents.toolcalls import (
    MALFORMED_TOOL,
    AnyOf,
    GoldCall,
    MatchResult,
    ToolCallMetric,
    match_calls,
    normalize_call,
    tool_call_score,
)
from ek.agents.trajectory import TrajectoryMetric
from ek.base import Score
from ek.evaluate import evaluate
from ek.grammar import FieldSpec, GraphGrammar, NodeType
from ek.registry import resolve


def S(tool: str, **args: object) -> Step:
    return Step(tool, args)


M = ToolCallMetric()

# --------------------------------------------------------------------------- hand-derived


def test_identical_single_call() -> None:
    s = M([S("search", q="refund policy")], [S("search", q="refund policy")])
    # TP = weight 1 + q 1 = 2; FP = FN = 0 -> F1 = 1
    assert (s.value, s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (1.0, 2.0, 0.0, 0.0)
    assert s.passed is True and s.detail["valid"] is True


def test_wrong_argument_counts_fp_and_fn() -> None:
    s = M([S("f", a=1, b=9)], [S("f", a=1, b=2)])
    # TP = 1 (weight) + 1 (a); b wrong: FP 1, FN 1 -> F1 = 2*2 / (2*2 + 1 + 1) = 4/6
    assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (2.0, 1.0, 1.0)
    assert s.value == pytest.approx(4 / 6)
    assert s.passed is False
    (w,) = s.detail["wrong_args"]
    assert (w["arg"], w["verdict"], w["predicted"], w["expected"]) == ("b", "wrong", 9, 2)


def test_missing_and_extra_arguments() -> None:
    s = M([S("f", a=1, c=3)], [S("f", a=1, b=2)])
    # TP = 1 + 1 (a); b missing: FN 1; c extra: FP 1 -> F1 = 4/6
    assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (2.0, 1.0, 1.0)
    verdicts = {w["arg"]: w["verdict"] for w in s.detail["wrong_args"]}
    assert verdicts == {"b": "missing", "c": "extra"}


def test_missing_call_costs_its_mass() -> None:
    s = M([S("a", x=1)], [S("a", x=1), S("b", y=2, z=3)])
    # TP = 2 (a + x); b missing: FN = 1 + 2 args = 3 -> F1 = 4 / (4 + 3) = 4/7
    assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (2.0, 0.0, 3.0)
    assert s.value == pytest.approx(4 / 7)
    assert s.detail["missing"] == [{"gold": 1, "tool": "b", "args": {"y": 2, "z": 3}, "cost": 3.0}]


def test_weighted_costs_from_grammar() -> None:
    refund = ToolSpec(
        "refund",
        parameters={
            "type": "object",
            "properties": {"amount": {"type": "number"}, "order": {"type": "string"}},
            "required": ["amount", "order"],
        },
        importance={"amount": 5.0},
        destructive=True,
    )
    task = TaskSpec("t", tools=[refund], gold_calls=[S("refund", amount=20, order="A1")])
    m = ToolCallMetric()
    # missing destructive call: FN = 10 (weight) + 5 (amount) + 1 (order) = 16
    s = m([], task)
    assert (s.value, s.detail["fn"]) == (0.0, 16.0)
    # wrong amount: TP = 10 + 1 (order) = 11, FP = FN = 5 -> F1 = 22 / 32
    s = m([S("refund", amount=25, order="A1")], task)
    assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (11.0, 5.0, 5.0)
    assert s.value == pytest.approx(22 / 32)
    # an explicit grammar overrides the task's own
    s = ToolCallMetric(grammar=GraphGrammar())([], task)
    assert s.detail["fn"] == 3.0  # unit weight + 2 unit arguments


def test_partial_matches_use_maximum_weight_assignment() -> None:
    gold = [S("f", a=1, b=2, c=3), S("f", a=9, b=8, c=7)]
    pred = [S("f", a=9, b=8, c=0), S("f", a=1, b=2, c=0)]
    r = match_calls(pred, gold)
    # Optimal: gold 0 <-> pred 1 and gold 1 <-> pred 0, each pair 2 args right, c wrong:
    # TP = 2 * (1 + 2) = 6, FP = FN = 2 -> F1 = 12/16. Positional pairing would give 4/16.
    assert [(m.gold_index, m.pred_index) for m in r.matched] == [(0, 1), (1, 0)]
    assert r.counts.as_dict() == {"tp": 6.0, "fp": 2.0, "fn": 2.0}
    assert r.value == pytest.approx(0.75)


def test_empty_against_empty() -> None:
    s = M([], [])
    assert s.value == 1.0 and s.passed is True
    s = M([S("a")], [])
    assert s.value == 0.0 and s.passed is False and s.detail["fp"] == 1.0


# --------------------------------------------------------------------------- peer bugs


def test_deepeval_3141_value_equal_duplicates_both_credited() -> None:
    # DeepEval's unordered mode keeps matched calls in a set: [A, A] vs [A, A] scores 0.5.
    s = M([S("a", x=1), S("a", x=1)], [S("a", x=1), S("a", x=1)])
    assert s.value == 1.0 and s.passed is True and s.detail["tp"] == 4.0
    s = M([S("a", x=1)], [S("a", x=1), S("a", x=1)])
    # one of two found: TP 2, FN 2 -> 4/6
    assert s.value == pytest.approx(4 / 6) and s.passed is False


def test_ragas_1893_extra_calls_lower_the_score() -> None:
    base = M([S("a", x=1)], [S("a", x=1)])
    s = M([S("a", x=1), S("b", y=2)], [S("a", x=1)])
    # extra call b: FP = 1 + 1 -> F1 = 4/6 < 1
    assert s.value == pytest.approx(4 / 6)
    assert s.value < base.value
    assert s.passed is False and s.detail["extra"][0]["tool"] == "b"


def test_ragas_2079_repeats_never_push_above_one() -> None:
    s = M([S("a", x=1)] * 5, [S("a", x=1)])
    # one matched (TP 2), four extras (FP 8) -> 4/12
    assert s.value == pytest.approx(4 / 12)
    assert s.value <= 1.0
    assert len(s.detail["extra"]) == 4


def test_reordering_that_first_fit_fails() -> None:
    # Greedy first-fit (BFCL, agentevals): gold 0 claims pred 0 (Paris), gold 1 then finds nothing.
    gold = [GoldCall("w", {"city": AnyOf("Paris", "London")}), GoldCall("w", {"city": "Paris"})]
    pred = [S("w", city="Paris"), S("w", city="London")]
    r = match_calls(pred, gold)
    assert r.valid
    assert [(m.gold_index, m.pred_index) for m in r.matched] == [(0, 1), (1, 0)]


def test_exact_matches_are_claimed_before_partial_ones() -> None:
    gold = [S("f", a=1, b=2), S("f", a=1, b=3)]
    pred = [S("f", a=1, b=3), S("f", a=1, b=9)]
    r = match_calls(pred, gold)
    # pred 0 is exact for gold 1; pred 1 is a partial match for gold 0
    assert [(m.gold_index, m.pred_index, m.exact) for m in r.matched] == [
        (0, 1, False),
        (1, 0, True),
    ]


# --------------------------------------------------------------------------- gold patterns


def test_anyof_and_optional_arguments() -> None:
    gold = [GoldCall("w", {"city": AnyOf("Paris", "Paris, FR"), "unit": AnyOf("C", optional=True)})]
    assert match_calls([S("w", city="paris, fr")], gold).valid  # unit omitted, case folded
    assert match_calls([S("w", city="Paris", unit="C")], gold).valid
    r = match_calls([S("w", city="Paris", unit="F")], gold)
    assert not r.valid and r.wrong_args[0][1].verdict == "wrong"
    r = match_calls([S("w")], gold)  # city is not optional
    assert [a.verdict for _, a in r.wrong_args] == ["missing"]


def test_must_be_omitted() -> None:
    gold = [GoldCall("f", {"debug": AnyOf(optional=True)})]
    assert match_calls([S("f")], gold).valid
    assert not match_calls([S("f", debug=True)], gold).valid
    with pytest.raises(ValueError, match="at least one"):
        AnyOf()


def test_nested_dicts_and_lists() -> None:
    gold = [
        GoldCall(
            "q",
            {
                "filters": {"color": AnyOf("red", "crimson"), "size": AnyOf("M", optional=True)},
                "ids": [1, 2],
            },
        )
    ]
    assert match_calls([S("q", filters={"color": "Crimson"}, ids=[1, 2])], gold).valid
    assert not match_calls([S("q", filters={"color": "blue"}, ids=[1, 2])], gold).valid
    assert not match_calls([S("q", filters={"color": "red", "x": 1}, ids=[1, 2])], gold).valid
    # element order inside a list is relevant
    assert not match_calls([S("q", filters={"color": "red"}, ids=[2, 1])], gold).valid


def test_argument_order_is_irrelevant_and_bool_is_not_int() -> None:
    assert match_calls([Step("f", {"b": 2, "a": 1})], [Step("f", {"a": 1, "b": 2})]).valid
    assert match_calls([S("f", x=1.0)], [S("f", x=1)]).valid  # numbers compare by value
    assert not match_calls([S("f", x=True)], [S("f", x=1)]).valid


def test_canonicalizers() -> None:
    pred, gold = [S("f", city="  New   YORK ")], [S("f", city="new york")]
    assert match_calls(pred, gold).valid  # default: NFC, casefold, whitespace folded
    assert not match_calls(pred, gold, canonicalizer="raw").valid
    assert match_calls(
        [S("f", c="San_Francisco, CA")], [S("f", c="san francisco ca")], canonicalizer="bfcl"
    ).valid
    assert match_calls(
        [S("f", c="ABC")],
        [S("f", c="xyz")],
        canonicalizer=lambda v: "same" if isinstance(v, str) else v,
    ).valid


# --------------------------------------------------------------------------- BFCL type rules


def _grammar(props: dict[str, dict[str, object]], required: list[str]) -> GraphGrammar:
    t = ToolSpec("f", parameters={"type": "dict", "properties": props, "required": required})
    return GraphGrammar([t.to_node_type()])


def test_bfcl_type_rules_with_schema() -> None:
    g = _grammar(
        {"n": {"type": "integer"}, "x": {"type": "float"}, "ok": {"type": "boolean"}}, ["n"]
    )

    def valid(**args: object) -> bool:
        gold = [
            GoldCall(
                "f", {"n": 3, "x": AnyOf(2.0, optional=True), "ok": AnyOf(True, optional=True)}
            )
        ]
        return match_calls([Step("f", args)], gold, grammar=g).valid

    assert valid(n=3)
    assert valid(n=3, x=2)  # an int is accepted for a float
    assert not valid(n=3.0)  # a float is not an int
    assert not valid(n=True)  # a bool is not an int
    assert not valid(n=3, ok=1)  # an int is not a bool
    assert not valid(n="3")


def test_bfcl_required_and_unexpected_parameters() -> None:
    g = _grammar({"a": {"type": "string"}, "b": {"type": "string"}}, ["a", "b"])
    # b is optional in the gold but required by the schema: omitting it fails (BFCL missing_required)
    gold = [GoldCall("f", {"a": "x", "b": AnyOf("y", optional=True)})]
    r = match_calls([S("f", a="x")], gold, grammar=g)
    assert not r.valid and r.wrong_args[0][1].reason == "required by the tool's schema"
    # a parameter the schema does not declare is rejected even if the gold lists it
    g2 = _grammar({"a": {"type": "string"}}, ["a"])
    gold2 = [GoldCall("f", {"a": "x", "z": 1})]
    r = match_calls([S("f", a="x", z=1)], gold2, grammar=g2)
    assert not r.valid and r.wrong_args[0][1].verdict == "extra"


def test_bfcl_variable_rule_and_nested_array_types() -> None:
    g = _grammar({"n": {"type": "integer"}, "v": {"type": "array", "items": {"type": "float"}}}, [])
    # a str possible answer for an integer param is a variable name: compared as given
    gold = [GoldCall("f", {"n": AnyOf("count")})]
    assert match_calls([S("f", n="count")], gold, grammar=g).valid
    assert not match_calls([S("f", n="Count")], gold, grammar=g).valid  # no standardisation
    # int elements in a float array fail (BFCL type_error:nested); the conversion is top level only
    gold = [GoldCall("f", {"v": AnyOf([1.0, 3.0])})]
    assert match_calls([S("f", v=[1.0, 3.0])], gold, grammar=g).valid
    assert not match_calls([S("f", v=[1, 3])], gold, grammar=g).valid


# --------------------------------------------------------------------------- inputs and outputs


def test_accepted_input_forms() -> None:
    gold = [S("f", x=1)]
    ep = Episode("t", trajectory=[S("f", x=1)])
    forms = [
        ep,
        Trajectory([S("f", x=1)]),
        [{"tool": "f", "args": {"x": 1}}],
        [{"name": "f", "arguments": '{"x": 1}'}],
        [{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}],
        [{"f": {"x": 1}}],
    ]
    for f in forms:
        assert M(f, gold).passed, f
    assert M([S("f", x=1)], Trajectory(gold)).passed
    assert M([S("f", x=1)], [{"name": "f", "args": {"x": AnyOf(1, 2)}}]).passed


def test_detail_is_complete_and_json_ready() -> None:
    s = M([S("a", x=1), S("c")], [S("a", x=2), S("b")])
    for k in (
        "tp",
        "fp",
        "fn",
        "passed",
        "valid",
        "higher_is_better",
        "reason",
        "matched",
        "missing",
        "extra",
        "wrong_args",
    ):
        assert k in s.detail, k
    assert s.detail["higher_is_better"] is True
    json.dumps(dict(s.detail))
    assert "missing b" in s.reason and "extra c" in s.reason and "a.x" in s.reason


def test_match_result_is_frozen_with_value_reason_breakdown() -> None:
    r = match_calls([S("a", x=1)], [S("a", x=1)])
    assert isinstance(r, MatchResult) and r.value == 1.0 and r.reason.startswith("valid")
    with pytest.raises(AttributeError):
        r.matched = ()  # type: ignore[misc]
    assert tool_call_score(r).value == 1.0


def test_aggregate_is_micro_f1_ratio_of_sums() -> None:
    s1 = M([S("a", x=1)], [S("a", x=1)])  # tp 2
    s2 = M([S("b", y=1)], [S("b", y=2), S("c")])  # tp 1, fp 1, fn 2
    # micro: tp 3, fp 1, fn 2 -> 6 / (6 + 3) = 2/3; the mean of per-item F1s would differ
    assert M.aggregate([s1, s2]) == pytest.approx(6 / 9)
    assert (s1.value + s2.value) / 2 != pytest.approx(6 / 9)
    assert math.isnan(M.aggregate([]))
    r = evaluate(M, [[S("a", x=1)], [S("b", y=1)]], [[S("a", x=1)], [S("b", y=2), S("c")]])
    assert r.value == pytest.approx(6 / 9) and r.metric == "tool_calls"


def test_registered_and_protocol() -> None:
    m = resolve("metrics", "tool_calls")  # a default instance, usable as registered
    assert type(m) is ToolCallMetric and m.grammar is None
    assert m.name == "tool_calls" and m.higher_is_better is True
    assert m([S("a")], [S("a")]).value == 1.0


def test_grammar_accepts_taskspec_and_tool_list() -> None:
    t = ToolSpec("x", destructive=True)
    assert ToolCallMetric(grammar=[t])([], [S("x")]).detail["fn"] == 10.0
    assert ToolCallMetric(grammar=TaskSpec("t", tools=[t]))([], [S("x")]).detail["fn"] == 10.0
    g = GraphGrammar([NodeType("x", (FieldSpec("q", importance=4.0),), weight=2.0)])
    assert ToolCallMetric(grammar=g)([], [S("x", q=1)]).detail["fn"] == 6.0
    with pytest.raises(TypeError, match="grammar must be"):
        ToolCallMetric(grammar="nope")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- bad input


def test_call_without_a_name() -> None:
    # gold is trusted input: a malformed gold call raises, naming the accepted shapes
    with pytest.raises(ValueError, match="gold call 0: no tool name.*accepted call shapes"):
        match_calls([], [{"name": "", "args": {}}])
    with pytest.raises(ValueError, match="reserved for malformed predicted calls"):
        match_calls([], [S(MALFORMED_TOOL)])
    with pytest.raises(ValueError, match="reserved for malformed predicted calls"):
        M([], [S(MALFORMED_TOOL)])


def test_non_mapping_arguments() -> None:
    with pytest.raises(TypeError, match="args must be a mapping"):
        match_calls([], [{"name": "f", "args": [1, 2]}])
    with pytest.raises(ValueError, match="not JSON"):
        match_calls([], [{"name": "f", "arguments": "{x: 1"}])
    with pytest.raises(TypeError, match="must be a mapping"):
        GoldCall("f", [1])  # type: ignore[arg-type]


# Issue 16 item 4: a malformed *prediction* is model output; it is scored as a wrong call (an
# extra call of MALFORMED_TOOL: FP = its mass, the default weight 1; BFCL verdict invalid) with
# the reason, never raised on (a raise would drop the worst samples out of a host's mean).
MALFORMED_PREDICTIONS = [
    ({"": {"base": 10}}, "no tool name"),  # a real model output
    ({"name": 7, "args": {"x": 1}}, "no tool name"),
    ({"args": {"x": 1}}, "no tool name"),
    ({"name": "f", "args": [1, 2]}, "args must be a mapping"),
    ({"name": "f", "arguments": '"x"'}, "args must be a mapping"),
    ({"name": "f", "arguments": "{x: 1"}, "not JSON"),
    ({"type": "function", "function": {"name": "f", "arguments": "{"}}, "not JSON"),
    (42, "must be a mapping or an object"),
]


@pytest.mark.parametrize(("call", "why"), MALFORMED_PREDICTIONS)
def test_malformed_prediction_is_scored_not_raised(call: object, why: str) -> None:
    gold = [S("f", x=1)]
    for s in (M([call], gold), M([call], TaskSpec("t", gold_calls=gold))):
        # gold f(x=1) missing: FN = 1 + 1 = 2; the malformed call extra: FP = 1 (no arguments)
        assert s.value == 0.0 and (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (0, 1, 2)
        assert s.detail["valid"] is False and s.detail["passed"] is False
        (row,) = s.detail["extra"]
        assert row["tool"] == MALFORMED_TOOL and row["cost"] == 1.0 and why in row["reason"]
        assert "malformed call" in s.reason and why in s.reason
    # next to a correct call: TP 2 (f matched), FP 1 -> F1 = 2*2 / (2*2 + 1) = 0.8
    s = M([S("f", x=1), call], gold)
    assert s.value == 0.8 and s.detail["valid"] is False
    assert s.detail["extra"][0]["pred"] == 1
    r = match_calls([call], gold)
    assert not r.valid and r.counts.fp == 1.0 and r.extra[0].tool == MALFORMED_TOOL
    assert why in r.to_dict()["extra"][0]["reason"] and why in r.reason
    # the corpus aggregate counts it (it is not dropped): micro-F1 over [1.0, 0.0] episodes
    # = 2*2 / (2*2 + 1 + 2) = 4/7
    scores = [M([S("f", x=1)], gold), M([call], gold)]
    assert M.aggregate(scores) == pytest.approx(4 / 7)


def test_malformed_prediction_from_a_bridge_keeps_its_reason() -> None:
    # a bridge turns a malformed call into Step(MALFORMED_TOOL, error=why): the same score
    step = normalize_call({"name": "f", "arguments": "{x"}, strict=False)
    s = M([step], [S("f", x=1)])
    assert (s.value, s.detail["fp"], s.detail["valid"]) == (0.0, 1.0, False)
    assert "not JSON" in s.detail["extra"][0]["reason"]
    # the trajectory metric cannot match it either
    assert TrajectoryMetric()([step], [S("f", x=1)]).value < 1.0


def test_unhashable_or_exotic_values() -> None:
    with pytest.raises(TypeError, match="JSON-like"):
        match_calls([S("f", x={1, 2})], [S("f", x=1)])
    with pytest.raises(TypeError, match="JSON-like"):
        match_calls([S("f", x=1)], [S("f", x=object())])
    with pytest.raises(TypeError, match="keys must be str"):
        match_calls([S("f", x={1: "a"})], [])


def test_cyclic_values() -> None:
    a: list[object] = [1]
    a.append(a)
    with pytest.raises(ValueError, match="cyclic"):
        match_calls([S("f", x=a)], [])
    d: dict[str, object] = {}
    d["self"] = d
    with pytest.raises(ValueError, match="cyclic"):
        match_calls([], [S("f", x=d)])


def test_wrong_container_types() -> None:
    with pytest.raises(TypeError, match="list of calls"):
        match_calls("f(x=1)", [])
    with pytest.raises(TypeError, match="list of calls"):
        match_calls([], {"tool": "f"})
    with pytest.raises(TypeError, match="must be a mapping or an object"):
        match_calls([], [42])
    with pytest.raises(ValueError, match="no gold_calls"):
        M([], TaskSpec("t"))


# --------------------------------------------------------------------------- issue 17: one path

# Calls that exercise every branch of the matcher: claimed copies (recased, reordered arguments),
# a wrong argument, a missing and an extra call, AnyOf / optional gold, a malformed prediction,
# nested values, value-equal duplicates, and a schema tool.
ONE_PATH_CASES = [
    ([S("f", x=1, y="A ")], [S("f", y="a", x=1)]),
    ([S("f", x=1), S("f", x=2)], [S("f", x=2), S("f", x=3), S("g")]),
    ([S("f", x=True)], [S("f", x=1)]),
    (
        [S("w", city="paris, fr")],
        [GoldCall("w", {"city": AnyOf("Paris", "paris, fr"), "u": AnyOf("C", optional=True)})],
    ),
    ([{"name": "f", "arguments": "{x"}, S("f", x=[1, {"a": None}])], [S("f", x=[1, {"a": None}])]),
    ([S("f", x=1), S("f", x=1)], [S("f", x=1.0), S("f", x=1)]),
]


@pytest.mark.parametrize(("pred", "gold"), ONE_PATH_CASES)
def test_the_metric_is_tool_call_score_of_the_match(pred: list[object], gold: list[object]) -> None:
    # ToolCallMetric.__call__ = tool_call_score(match(...)): the same Score, key for key, as the
    # functional form and as the metric's own MatchResult, for a list gold and a TaskSpec gold.
    schema = ToolSpec("f", parameters={"type": "object", "properties": {"x": {"type": "integer"}}})
    for grammar in (None, GraphGrammar([schema.to_node_type()])):
        m = ToolCallMetric(grammar=grammar)
        s = m(pred, gold)
        for other in (
            tool_call_score(match_calls(pred, gold, grammar=grammar)),
            tool_call_score(m.match(pred, gold)),
            m(pred, gold),  # warm caches
        ):
            assert other == s and list(other.detail) == list(s.detail)
            assert repr(other) == repr(s)
    task = TaskSpec("t", gold_calls=[g for g in gold if isinstance(g, Step)])
    assert M(pred, task) == tool_call_score(match_calls(pred, task))


def test_a_match_result_spells_out_claimed_pairs_when_read() -> None:
    # A pair claimed as identical is counted from its mass; its verdicts (every argument a
    # match, in the predicted call's argument order) are built when `matched` is first read.
    r = match_calls([S("f", b=2, a="X"), S("g", z=1)], [S("f", a="x", b=2), S("h")])
    (m,) = r.matched
    assert r.matched is r.matched  # built once
    assert (m.gold_index, m.pred_index, m.exact, m.tp) == (0, 0, True, 3.0)  # 1 + 1 + 1
    assert [(a.arg, a.verdict, a.predicted, a.expected) for a in m.args] == [
        ("b", "match", 2, 2),
        ("a", "match", "X", "x"),
    ]
    assert [(u.index, u.tool, u.cost) for u in r.missing] == [(1, "h", 1.0)]
    assert [(u.index, u.tool, dict(u.args), u.cost) for u in r.extra] == [(1, "g", {"z": 1}, 2.0)]
    assert r.counts.as_dict() == {"tp": 3.0, "fp": 2.0, "fn": 1.0} and r.wrong_args == ()
    assert r == match_calls([S("f", b=2, a="X"), S("g", z=1)], [S("f", a="x", b=2), S("h")])
    assert repr(r).startswith("MatchResult(pairs=((ExpectedCall(index=0, tool='f'")
    with pytest.raises(AttributeError):
        r.tp = 0.0  # type: ignore[misc]


def test_scores_do_not_follow_a_gold_changed_after_scoring_and_rescoring_does() -> None:
    # Issue 17: a Score is what was scored then, and re-scoring sees the gold as it is now
    # (since issue 31 every gold, a TaskSpec's too, is prepared on each call: no cache).
    gold = [Step("search", {"q": "refund policy"}), Step("lookup", {"id": 7})]
    pred = [Step("search", {"q": "refund policy"}), Step("cancel", {"id": 7})]
    m = ToolCallMetric()
    s = m(pred, gold)
    want = dict(ToolCallMetric()(list(pred), list(gold)).detail)
    gold[0] = Step("other", {})
    gold.append(Step("late", {}))
    pred[1].args["id"] = 8  # type: ignore[index]  # (a Step's own mapping, mutated in place)
    gold[1].args["id"] = 9  # type: ignore[index]
    assert dict(s.detail) == want  # the Score is what was scored then
    assert s.detail["missing"][0]["args"] == {"id": 7} and s.detail["extra"][0]["args"] == {"id": 7}
    assert m(pred, gold) == ToolCallMetric()(pred, gold)  # re-scoring sees the new gold
    assert m(pred, gold).detail["fn"] == 2.0 + 1.0 + 1.0  # lookup(id) + other + late

    task = TaskSpec("t", gold_calls=[Step("f", {"x": 1})])
    assert m([S("f", x=1)], task).passed
    assert m([S("f", x=1)], task).passed  # (the same TaskSpec again)
    task.gold_calls[0].args["x"] = True  # type: ignore[index]
    assert not m([S("f", x=1)], task).passed  # True is not 1: the change is seen
    assert m([S("f", x=True)], task).passed


def test_canonical_equality_edges_through_the_metric() -> None:
    # True is not 1 (BFCL): one wrong argument, TP = weight 1, FP = FN = 1 -> F1 = 2/4
    s = M([S("f", x=True)], [S("f", x=1)])
    assert s.value == 0.5 and s.detail["wrong_args"][0]["arg"] == "x"
    # " paris " and "Paris" are canonically equal: the first gold call is the one claimed
    s = M([S("f", x=" paris ")], [S("f", x="Paris"), S("f", x=" paris ")])
    assert s.detail["matched"] == [{"gold": 0, "pred": 0, "tool": "f", "exact": True}]
    assert M([S("f", x=math.nan)], [S("f", x=float("nan"))]).passed  # NaN is NaN
    assert M([S("f", x=(1, 2))], [S("f", x=[1, 2])]).passed  # a tuple is the same sequence
    assert M([S("f", x=1.0)], [S("f", x=1)]).passed  # numbers compare by value


def test_bad_values_raise_naming_the_call() -> None:
    with pytest.raises(TypeError, match=r"predicted call 0 \('f'\) argument 'x'"):
        M([S("f", x={1, 2})], [S("g", x=1)])
    with pytest.raises(TypeError, match=r"gold call 1 \('g'\) argument 'x'"):
        M([S("f", x=1)], [S("f", x=1), S("g", x=object())])


def test_the_package_imports_no_private_names_and_has_no_type_checking_edges() -> None:
    # Issue 17: no module imports another module's _private names; no TYPE_CHECKING back-edges.
    import ast
    from pathlib import Path

    import ek.agents.toolcalls as pkg
    import ek.agents.trajectory as traj

    files = [*Path(pkg.__file__).parent.glob("*.py"), Path(traj.__file__)]
    assert {f.name for f in files} >= {
        "_gold.py",
        "_parse.py",
        "_values.py",
        "_bfcl.py",
        "_compare.py",
    }
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert "TYPE_CHECKING" not in text, f.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ek"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, (f.name, node.module, private)


def test_nan_or_infinity_in_argument_json_is_a_malformed_call() -> None:
    # Python's json reader takes NaN/Infinity; JSON does not (issue 18): the call is malformed,
    # scored as an extra <malformed call> of unit mass, never as a call with a NaN argument.
    gold = [{"name": "f", "arguments": {"x": 1}}]
    for text in ('{"x": NaN}', '{"x": Infinity}', '{"x": [1, -Infinity]}'):
        s = ToolCallMetric()([{"name": "f", "arguments": text}], gold)
        # gold f with one argument: mass 1 + 1 = 2 missing; the malformed call: mass 1 extra
        assert (s.value, s.detail["fp"], s.detail["fn"], s.passed) == (0.0, 1.0, 2.0, False)
        assert "is not a JSON value" in s.detail["extra"][0]["reason"]
    with pytest.raises(ValueError, match="is not a JSON value"):  # gold is read strictly
        ToolCallMetric()([], [{"name": "f", "arguments": '{"x": NaN}'}])


def test_argument_json_too_deep_or_too_long_is_a_malformed_call() -> None:
    gold = [{"name": "f", "arguments": {"x": 1}}]
    for text in ("[" * 100_000, '{"x": 1' + "0" * 5000 + "}"):
        s = ToolCallMetric()([{"name": "f", "arguments": text}], gold)
        assert s.value == 0.0 and s.detail["extra"][0]["tool"] == "<malformed call>"
        assert len(s.reason) < 1000  # the text is cut before it is quoted


def test_aggregate_refuses_what_is_not_a_tool_call_score() -> None:
    m = ToolCallMetric()
    with pytest.raises(TypeError, match="expects Scores, item 0 is str"):
        m.aggregate(["x"])
    with pytest.raises(ValueError, match="no detail 'tp'"):
        m.aggregate([Score(1.0)])


# --------------------------------------------------------------------------- issue 17 speed pass
# (2026-12-01) Each cheaper step must leave results and errors as they were; these go through
# the real metric.


def test_exact_claiming_takes_first_unclaimed_equal_call_across_tools() -> None:
    # Claiming scans the unclaimed predicted calls (all tools, index order). Gold 0 = a(x=1)
    # claims pred 1 (the first a(x=1); pred 0 is another tool), gold 1 = b(x=1) claims pred 0,
    # pred 2 = a(x=1) is left extra. TP = 2 calls x (1 + 1) = 4, FP = mass 2, FN 0:
    # F1 = 2*4 / (2*4 + 2) = 0.8.
    pred = [S("b", x=1), S("a", x=1), S("a", x=1)]
    gold = [S("a", x=1), S("b", x=1)]
    r = match_calls(pred, gold)
    assert [(m.gold_index, m.pred_index, m.exact) for m in r.matched] == [
        (0, 1, True),
        (1, 0, True),
    ]
    assert [e.index for e in r.extra] == [2]
    s = M(pred, gold)
    assert (s.value, s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (0.8, 4.0, 2.0, 0.0)


@pytest.mark.parametrize("side", ["pred", "gold"])
def test_cyclic_list_after_strings_still_refused(side: str) -> None:
    # A list is entered (cycle check) at its first element that is not a known string: a
    # cycle behind two strings is refused with the same message as before.
    loop: list[object] = ["a", "b"]
    loop.append(loop)
    calls = [S("f", x=loop)]
    pred, gold = (calls, []) if side == "pred" else ([], calls)
    who = "predicted" if side == "pred" else "gold"
    with pytest.raises(
        ValueError, match=rf"^{who} call 0 \('f'\) argument 'x': the value is cyclic"
    ):
        M(pred, gold)


def test_list_of_strings_depth_limit_unchanged() -> None:
    # A list of strings at nesting level 100 (99 lists around it) is frozen; one level deeper
    # is refused, as before the lazy entering.
    deep: object = ["s"]
    for _ in range(99):
        deep = [deep]
    assert M([S("f", x=deep)], []).value == 0.0  # scored: one extra call
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        M([S("f", x=[deep])], [])


def test_reason_quotes_values_cut_as_short_repr() -> None:
    # The wrong-argument text quotes the predicted value with short_repr(v, 40): a short
    # string whole, a long one cut to 40 characters, a huge int by its size.
    long = "y" * 50
    s = M([S("f", a="xx", b=long, c=10**2000)], [S("f", a="z", b="w", c=1)])
    reason = s.reason
    assert "f.a (call #0 vs gold #0) got 'xx', expected 'z'" in reason
    assert "got '" + "y" * 39 + ", expected 'w'" in reason  # "'" + 39 characters = 40
    assert "got an int of 6644 bits, expected 1" in reason  # 10**2000 has 6644 bits


# --------------------------------------------------------------------------- the value alone


def test_match_result_is_what_the_score_is_built_from() -> None:
    # The README and bench offer metric.match(...).value as "the value alone": it must be the
    # Score's value, verdict, reason and rows, on every kind of the bench mix and on a schema
    # task with a destructive tool and a wrong argument (F1 = 2*12 / (2*12 + 8 + 8) = 0.6).
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    try:
        from toolcalls import make_cases  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    refund = ToolSpec("refund", [FieldSpec("order_id", "string", importance=8.0)], destructive=True)
    task = TaskSpec(
        "t1",
        tools=[refund, ToolSpec("lookup")],
        gold_calls=[S("lookup", order_id="A1"), S("refund", order_id="A1")],
    )
    cases = [(p, g) for _, p, g in make_cases(180, seed=3)]
    cases.append(([S("lookup", order_id="A1"), S("refund", order_id="B2")], task))
    m = ToolCallMetric()
    for pred, gold in cases:
        r = m.match(pred, gold)
        s = m(pred, gold)
        assert r.value == s.value
        assert r.valid is s.detail["passed"] is s.detail["valid"]
        assert (r.tp, r.fp, r.fn) == (s.detail["tp"], s.detail["fp"], s.detail["fn"])
        assert r.reason == s.reason
        assert {k: s.detail[k] for k in ("matched", "missing", "extra", "wrong_args")} == (
            r.to_dict()
        )
    assert round(r.value, 3) == 0.6 and not r.valid
