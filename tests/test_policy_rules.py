"""Issue 34: each policy rule on hand-written trajectories that satisfy it and that violate it
(with the expected reason), serialisation, bad input, and the invariants (unrelated steps never
change a verdict; reordering the calls changes only the ordering rules' verdicts)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import Step
from ek.agents.policy import (
    Confirm,
    Custom,
    Forbid,
    MaxCalls,
    Observed,
    Order,
    PolicyInputError,
    Record,
    Rule,
    Turn,
    UserNamed,
    Violation,
    check_policies,
    policies_from_list,
    policies_to_list,
    rule_from_dict,
)
from ek.registry import UnknownNameError, register


def reasons(rule: Rule, record: Record) -> list[tuple[int | None, str]]:
    return [(v.step, v.reason) for v in rule.check(record)]


# ----------------------------------------------------------------------------- Order


def test_order_satisfied_and_violated() -> None:
    rule = Order("verify_identity", "refund")
    ok = Record((Step("verify_identity"), Step("lookup"), Step("refund")))
    assert reasons(rule, ok) == []
    bad = Record((Step("refund"), Step("verify_identity"), Step("refund")))
    # the first refund (step 0) precedes the verification; the second (step 2) follows it
    assert reasons(rule, bad) == [(0, "refund at step 0 before any successful verify_identity")]


def test_order_a_failed_guard_does_not_count() -> None:
    rule = Order("verify_identity", "refund")
    rec = Record((Step("verify_identity", error="wrong date of birth"), Step("refund")))
    assert reasons(rule, rec) == [(1, "refund at step 1 before any successful verify_identity")]


def test_order_same_arguments() -> None:
    rule = Order("get_order", "refund_order", same=("order_id",))
    ok = Record((Step("get_order", {"order_id": "O1"}), Step("refund_order", {"order_id": "O1"})))
    assert reasons(rule, ok) == []
    other = Record(
        (Step("get_order", {"order_id": "O2"}), Step("refund_order", {"order_id": "O1"}))
    )
    assert reasons(rule, other) == [
        (1, "refund_order at step 1 before any successful get_order with the same order_id ('O1')")
    ]


# ----------------------------------------------------------------------------- Confirm


def confirm_record(*events: Any) -> Record:
    """Steps and turns from ("call", tool) / (role, text) events, turns placed where they fall."""
    steps: list[Step] = []
    turns: list[Turn] = []
    for kind, value in events:
        if kind == "call":
            steps.append(Step(value))
        else:
            turns.append(Turn(kind, value, len(steps)))
    return Record(tuple(steps), tuple(turns))


def test_confirm_satisfied() -> None:
    rule = Confirm("cancel", describe="cancel")
    rec = confirm_record(
        ("user", "please cancel R1"),
        ("assistant", "I will cancel reservation R1 (refund $200). Shall I go ahead?"),
        ("user", "Yes."),
        ("call", "cancel"),
    )
    assert reasons(rule, rec) == []


def test_confirm_without_agreement() -> None:
    rule = Confirm("cancel", describe="cancel")
    rec = confirm_record(
        ("assistant", "Cancel R1?"), ("user", "what would the fee be?"), ("call", "cancel")
    )
    assert reasons(rule, rec) == [
        (0, "cancel at step 0: no user turn agreed after the agent's description 'Cancel R1?'")
    ]


def test_confirm_agreement_before_the_last_description_does_not_count() -> None:
    # the user agreed to the first description; the agent then described a changed action
    rule = Confirm("cancel", describe="cancel")
    rec = confirm_record(
        ("assistant", "Cancel R1?"),
        ("user", "yes"),
        ("assistant", "Actually I should cancel R1 and R2, ok?"),
        ("call", "cancel"),
    )
    assert [s for s, _ in reasons(rule, rec)] == [0]


def test_confirm_never_described() -> None:
    rule = Confirm("cancel", describe="cancel")
    rec = confirm_record(("user", "yes, cancel it"), ("call", "cancel"))
    assert reasons(rule, rec) == [
        (0, "cancel at step 0: the agent did not describe it to the user before the call")
    ]


def test_confirm_each_call_and_the_calls_own_message_is_not_a_description() -> None:
    rule = Confirm("book")  # describe=None: the agent's last turn
    msgs = [
        {"role": "assistant", "content": "Book flight HAT001 for $120?"},
        {"role": "user", "content": "yes"},
        {
            "role": "assistant",
            "content": "Booking now.",  # said in the message that makes the call
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "book", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "b", "type": "function", "function": {"name": "book", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": "ok"},
    ]
    rec = Record.from_messages(msgs)
    # step 0: the last description before it (not its own message's text) is the question, and
    # the user said yes after it. step 1: the last description is now "Booking now." (an
    # earlier message), and no user turn follows it.
    assert reasons(rule, rec) == [
        (1, "book at step 1: no user turn agreed after the agent's description 'Booking now.'")
    ]


def test_confirm_custom_agree_pattern() -> None:
    rule = Confirm("cancel", agree=r"^\s*confirm\b")
    rec = confirm_record(("assistant", "Cancel R1?"), ("user", "yes"), ("call", "cancel"))
    assert [s for s, _ in reasons(rule, rec)] == [0]  # "yes" is not this suite's agreement
    rec = confirm_record(("assistant", "Cancel R1?"), ("user", "CONFIRM"), ("call", "cancel"))
    assert reasons(rule, rec) == []


def test_confirm_without_conversation() -> None:
    rec = Record((Step("cancel"),))
    assert reasons(Confirm("cancel"), rec) == [
        (0, "cancel at step 0: the agent did not describe it to the user before the call")
    ]


# ----------------------------------------------------------------------------- Observed


def test_observed_at_most_the_order_total() -> None:
    rule = Observed("refund", "amount", "<=", "get_order", path=("total",), same=("order_id",))
    ok = Record(
        (
            Step("get_order", {"order_id": "O1"}, observation={"total": 30.0}),
            Step("refund", {"order_id": "O1", "amount": 30}),
        )
    )
    assert reasons(rule, ok) == []
    bad = Record(
        (
            Step("get_order", {"order_id": "O1"}, observation={"total": 30.0}),
            Step("refund", {"order_id": "O1", "amount": 45}),
        )
    )
    assert reasons(rule, bad) == [
        (1, "refund at step 1: amount 45 is not <= 30.0 (total of get_order at step 0)")
    ]


def test_observed_needs_an_earlier_successful_result() -> None:
    rule = Observed("refund", "amount", "<=", "get_order", path=("total",))
    rec = Record(
        (Step("get_order", error="not found"), Step("refund", {"amount": 5}), Step("get_order"))
    )
    assert reasons(rule, rec) == [
        (1, "refund at step 1: no earlier successful get_order to check amount against")
    ]


def test_observed_missing_path_argument_and_incomparable_values() -> None:
    rule = Observed("refund", "amount", "<=", "get_order", path=("total",))
    no_path = Record((Step("get_order", observation={"sum": 1}), Step("refund", {"amount": 1})))
    assert reasons(rule, no_path) == [
        (1, "refund at step 1: the result of get_order at step 0 has no total")
    ]
    no_arg = Record((Step("get_order", observation={"total": 1}), Step("refund")))
    assert reasons(rule, no_arg) == [(1, "refund at step 1: no argument 'amount'")]
    text = Record((Step("get_order", observation={"total": 1}), Step("refund", {"amount": "1"})))
    assert reasons(rule, text) == [
        (1, "refund at step 1: amount '1' is not <= 1 (total of get_order at step 0)")
    ]


def test_observed_reads_json_text_results_and_membership() -> None:
    # tau-bench tools return JSON text
    rule = Observed("cancel", "reservation_id", "in", "get_user", path=("reservations",))
    result = json.dumps({"reservations": ["R1", "R2"]})
    ok = Record((Step("get_user", observation=result), Step("cancel", {"reservation_id": "R2"})))
    assert reasons(rule, ok) == []
    bad = Record((Step("get_user", observation=result), Step("cancel", {"reservation_id": "R9"})))
    assert reasons(rule, bad) == [
        (
            1,
            "cancel at step 1: reservation_id 'R9' is not in ['R1', 'R2'] (reservations of get_user at step 0)",
        )
    ]


# ----------------------------------------------------------------------------- UserNamed


def test_user_named() -> None:
    rule = UserNamed("cancel", "reservation_id")
    said = (Turn("user", "Please cancel reservation ZFA04Y", 0),)
    ok = Record((Step("cancel", {"reservation_id": "zfa04y"}),), said)
    assert reasons(rule, ok) == []  # compared casefolded
    bad = Record((Step("cancel", {"reservation_id": "Q1"}),), said)
    assert reasons(rule, bad) == [
        (0, "cancel at step 0: reservation_id 'Q1' was not named by the user before the call")
    ]
    late = Record((Step("cancel", {"reservation_id": "Q1"}),), (Turn("user", "Q1", 1),))
    assert [s for s, _ in reasons(rule, late)] == [0]  # named after the call: too late


# ----------------------------------------------------------------------------- counts


def test_max_calls() -> None:
    rule = MaxCalls("send_email", 1)
    assert reasons(rule, Record((Step("send_email"), Step("lookup")))) == []
    rec = Record((Step("send_email"), Step("send_email"), Step("send_email")))
    assert reasons(rule, rec) == [
        (1, "send_email at step 1: call 2 of send_email, at most 1 allowed"),
        (2, "send_email at step 2: call 3 of send_email, at most 1 allowed"),
    ]


def test_max_calls_with_arguments() -> None:
    rule = MaxCalls("send_email", 1, {"to": "boss"})
    rec = Record(
        (
            Step("send_email", {"to": "boss"}),
            Step("send_email", {"to": "me"}),
            Step("send_email", {"to": "boss", "cc": "x"}),
        )
    )
    assert reasons(rule, rec) == [
        (2, "send_email at step 2: call 2 of send_email with to='boss', at most 1 allowed")
    ]


def test_forbid_tool_and_combination() -> None:
    assert reasons(Forbid("drop_table"), Record((Step("select"),))) == []
    assert reasons(Forbid("drop_table"), Record((Step("select"), Step("drop_table")))) == [
        (1, "drop_table at step 1: forbidden (drop_table)")
    ]
    rule = Forbid("transfer", {"currency": "BTC"})
    rec = Record((Step("transfer", {"currency": "EUR"}), Step("transfer", {"currency": "BTC"})))
    assert reasons(rule, rec) == [
        (1, "transfer at step 1: forbidden (transfer with currency='BTC')")
    ]


# ----------------------------------------------------------------------------- Custom


def _weekend_refunds(record: Record) -> list[Any]:
    return [
        (i, "refund on a weekend")
        for i, s in enumerate(record.steps)
        if s.tool == "refund" and s.args.get("day") in ("sat", "sun")
    ]


register("policies", "test_weekend_refunds", _weekend_refunds)


def test_custom_callable() -> None:
    rule = Custom("test_weekend_refunds", severity=0.25)
    rec = Record((Step("refund", {"day": "mon"}), Step("refund", {"day": "sun"})))
    assert [v.to_dict() for v in rule.check(rec)] == [
        {
            "rule": "test_weekend_refunds",
            "step": 1,
            "reason": "refund on a weekend",
            "severity": 0.25,
        }
    ]
    assert rule_from_dict(rule.to_dict()) == rule


def test_custom_bad_function_output_is_a_clear_error() -> None:
    register("policies", "test_bad_output", lambda record: [(99, "x")])
    with pytest.raises(TypeError, match=r"returned \(99, 'x'\): expected a \(step, reason\) pair"):
        Custom("test_bad_output").check(Record((Step("a"),)))
    with pytest.raises(UnknownNameError):
        Custom("no-such-policy")


# ----------------------------------------------------------------------------- together


def test_check_policies_orders_violations_and_weights_severity() -> None:
    rules = [MaxCalls("refund", 1, severity=0.25), Order("lookup", "refund", severity=0.5)]
    rec = Record((Step("refund"), Step("refund")))
    res = check_policies(rec, rules)
    # step 0: Order (0.5); step 1: MaxCalls (0.25) then Order (0.5) -> 1 - 1.25 -> 0
    assert [(v.step, v.rule) for v in res.violations] == [
        (0, "lookup before refund"),
        (1, "refund at most 1"),
        (1, "lookup before refund"),
    ]
    assert res.value == 0.0
    one = check_policies(Record((Step("lookup"), Step("refund"), Step("refund"))), rules)
    assert one.value == 0.75  # one MaxCalls violation of severity 0.25
    assert (
        one.reason
        == "1 violation, first at step 2: refund at step 2: call 2 of refund, at most 1 allowed"
    )
    assert check_policies(rec, []).reason == "no policy applies"


ALL_RULES: list[Rule] = [
    Order("a", "b", same=("x",), severity=0.5, name="a first"),
    Confirm("b", agree="^ok", describe="b"),
    Observed("b", "x", "<=", "a", path=("n", 0)),
    UserNamed("b", "x"),
    MaxCalls("c", 2, {"x": 1}),
    Forbid("d"),
    Custom("test_weekend_refunds"),
]


def test_every_rule_round_trips_as_json() -> None:
    data = json.loads(json.dumps(policies_to_list(ALL_RULES)))
    assert policies_from_list(data) == tuple(ALL_RULES)
    assert data[0] == {
        "kind": "order",
        "first": "a",
        "then": "b",
        "same": ["x"],
        "severity": 0.5,
        "name": "a first",
    }


def test_a_rule_recorded_as_a_dataclass_dict_reads_back() -> None:
    # hosts record arguments with dataclasses.asdict (Inspect's scorer options): kind included
    from dataclasses import asdict

    assert [rule_from_dict(json.loads(json.dumps(asdict(r)))) for r in ALL_RULES] == ALL_RULES


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: Order("", "b"), ValueError, "Order.first"),
        (
            lambda: Order("a", "b", same="x"),
            TypeError,
            r"Order.same must be a list of str, got 'x'",
        ),
        (lambda: MaxCalls("a", -1), ValueError, "MaxCalls.limit"),
        (lambda: Observed("a", "x", "~", "b"), ValueError, r"Observed.op must be one of"),
        (lambda: Observed("a", "x", "<", "b", path="total"), TypeError, "Observed.path"),
        (lambda: Confirm("a", agree="("), ValueError, "Confirm.agree must be a regular expression"),
        (lambda: Forbid("a", {"x": float("nan")}), ValueError, "Forbid.args"),
        (
            lambda: Order("a", "b", severity=0),
            ValueError,
            r"Order.severity must be in \(0, 1\], got 0",
        ),
        (lambda: Order("a", "b", severity=2.0), ValueError, "severity"),
        (lambda: rule_from_dict({"kind": "sometimes"}), ValueError, "kind must be one of"),
        (lambda: rule_from_dict({"kind": "order", "first": "a"}), ValueError, "then"),
        (
            lambda: rule_from_dict({"kind": "order", "first": "a", "then": "b", "x": 1}),
            ValueError,
            "x",
        ),
        (lambda: rule_from_dict("order"), TypeError, "a policy rule must be a mapping"),
        (lambda: Violation("r", -1, "why"), TypeError, "Violation.step"),
    ],
)
def test_bad_input_is_a_clear_error(make: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        make()


def test_a_conversation_that_disagrees_with_the_calls_is_refused() -> None:
    with pytest.raises(PolicyInputError, match=r"Record.turns\[0\] is placed after 2 calls"):
        Record((Step("a"),), (Turn("user", "hi", 2),))


# ----------------------------------------------------------------------------- properties

TOOLS = ["a", "b", "c", "d"]  # named by ALL_RULES; "u..." tools are unrelated to every rule
steps_st = st.builds(
    lambda tool, x, n, err: Step(tool, {"x": x}, observation={"n": [n]}, error=err),
    st.sampled_from(TOOLS),
    st.integers(0, 2),
    st.integers(0, 2),
    st.sampled_from([None, None, "boom"]),
)
turn_st = st.tuples(
    st.sampled_from(["user", "assistant"]), st.sampled_from(["ok", "b 1", "x", "1"])
)
events_st = st.lists(st.one_of(steps_st, turn_st), max_size=12)


def record_of(events: list[Any]) -> Record:
    steps: list[Step] = []
    turns: list[Turn] = []
    for e in events:
        if isinstance(e, Step):
            steps.append(e)
        else:
            turns.append(Turn(e[0], e[1], len(steps)))
    return Record(tuple(steps), tuple(turns))


def verdicts(record: Record) -> list[int]:
    return [len(r.check(record)) for r in ALL_RULES]


@settings(max_examples=300, deadline=None)
@given(
    events_st, st.lists(st.tuples(st.integers(0, 50), st.sampled_from(["u1", "u2"])), max_size=5)
)
def test_unrelated_steps_never_change_a_verdict(
    events: list[Any], extra: list[tuple[int, str]]
) -> None:
    before = verdicts(record_of(events))
    more = list(events)
    for at, tool in extra:
        more.insert(at % (len(more) + 1), Step(tool, {"x": 1}, observation={"n": [9]}))
    assert verdicts(record_of(more)) == before


ORDER_FREE = [r for r in ALL_RULES if isinstance(r, (MaxCalls, Forbid, Custom))]


@settings(max_examples=300, deadline=None)
@given(st.lists(steps_st, max_size=10), st.randoms(use_true_random=False))
def test_reordering_changes_only_ordering_rules(steps: list[Step], rnd: random.Random) -> None:
    shuffled = list(steps)
    rnd.shuffle(shuffled)
    a, b = Record(tuple(steps)), Record(tuple(shuffled))
    for rule in ORDER_FREE:
        assert len(rule.check(a)) == len(rule.check(b)), rule


def test_record_from_anthropic_messages() -> None:
    # an assistant message with text and a tool_use block; the result comes back in a user
    # message made only of a tool_result block (not a user turn)
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "cancel R1 please"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Cancel R1 for a $20 fee?"}]},
        {"role": "user", "content": "yes"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Cancelling."},
                {"type": "tool_use", "id": "t1", "name": "cancel", "input": {"id": "R1"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
    ]
    rec = Record.from_messages(msgs)
    assert [(t.role, t.text, t.at, t.calls) for t in rec.turns] == [
        ("user", "cancel R1 please", 0, ()),
        ("assistant", "Cancel R1 for a $20 fee?", 0, ()),
        ("user", "yes", 0, ()),
        ("assistant", "Cancelling.", 0, (0,)),  # said with the call: the call's own message
    ]
    assert (rec.steps[0].tool, rec.steps[0].observation) == ("cancel", "ok")
    assert reasons(Confirm("cancel", describe="cancel"), rec) == []
    assert reasons(UserNamed("cancel", "id"), rec) == []
