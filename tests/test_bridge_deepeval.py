"""The duck-typed DeepEval bridge without DeepEval: plain objects and dicts stand in for
``LLMTestCase`` / ``ConversationalTestCase`` / ``ToolCall`` and DeepEval's trace dict. Also holds
the hypothesis strategies for episodes shared by the adapter round-trip tests."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ek.agents.base import Cost, Episode, RunProvenance, Step
from ek.agents.bridge import from_deepeval_test_case, from_deepeval_trace

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), _text)
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=6,
)
steps = st.builds(
    Step,
    tool=st.sampled_from(["search", "lookup", "refund"]),
    args=st.dictionaries(_text, _json, max_size=3),
    observation=_json,
    error=st.one_of(st.none(), _text),
    id=st.one_of(st.none(), st.from_regex(r"call_[0-9]{1,3}", fullmatch=True)),
)


@st.composite
def _costs(draw: Any) -> Cost:
    out = draw(st.integers(0, 10_000))
    return Cost(
        input_tokens=draw(st.integers(0, 10_000)),
        output_tokens=out,
        cache_read_tokens=draw(st.integers(0, 10_000)),
        cache_write_tokens=draw(st.integers(0, 100)),
        reasoning_tokens=draw(st.integers(0, out)),
        model=draw(st.one_of(st.none(), st.sampled_from(["gpt-x", "claude-y"]))),
        role=draw(st.sampled_from(["agent", "judge"])),
        dollars=draw(st.one_of(st.none(), st.floats(0, 5, allow_nan=False))),
    )


episodes = st.builds(
    Episode,
    task_id=st.from_regex(r"t[0-9]{1,4}", fullmatch=True),
    trajectory=st.lists(steps, max_size=4),
    output=_json,
    final_state=_json,
    cost=st.lists(_costs(), max_size=2),
    success=st.one_of(st.none(), st.booleans()),
    trial=st.integers(0, 4),
    input=_json,
    error=st.one_of(st.none(), _text),
    duration=st.one_of(st.none(), st.floats(0, 100, allow_nan=False)),
    metadata=st.dictionaries(_text, _json, max_size=2),
    run=st.one_of(
        st.none(), st.builds(RunProvenance, agent=st.just("bot"), seed=st.integers(0, 9))
    ),
)


def case(**kw: Any) -> NS:
    base = dict(
        input="q",
        actual_output="a",
        expected_output=None,
        tools_called=None,
        expected_tools=None,
        input_token_count=None,
        output_token_count=None,
        token_cost=None,
        completion_time=None,
        name=None,
        metadata=None,
        tags=None,
    )
    base.update(kw)
    return NS(**base)


def test_llm_test_case_fields_and_metadata_conventions() -> None:
    calls = [
        NS(name="lookup", input_parameters={"id": "A1"}, output={"status": "paid"}),
        NS(name="refund", input_parameters=None, output=None),
    ]
    tc = case(
        tools_called=calls,
        expected_tools=calls[:1],
        expected_output="done",
        input_token_count=120,
        output_token_count=30,
        token_cost=0.25,
        completion_time=2.0,
        name="named",
        tags=["refund"],
        metadata={
            "task_id": "t1",
            "step_errors": [None, "denied"],
            "step_ids": ["c1", None],
            "model": "gpt-x",
            "final_state": {"A1": "paid"},
            "success": False,
            "trial": 2,
            "run": {"agent": "bot", "seed": 1},
            "tools": [{"name": "refund", "destructive": True}],
            "note": "kept",
        },
    )
    ep, gold = from_deepeval_test_case(tc)
    assert ep.task_id == "t1"  # metadata wins over the test case name
    assert ep.trajectory.steps == (
        Step("lookup", {"id": "A1"}, {"status": "paid"}, None, "c1"),
        Step("refund", {}, None, "denied", None),
    )
    # DeepEval's counts become one agent Cost (input read as uncached), with the reported dollars.
    assert ep.cost == (Cost(input_tokens=120, output_tokens=30, model="gpt-x", dollars=0.25),)
    assert (ep.final_state, ep.success, ep.trial, ep.duration) == ({"A1": "paid"}, False, 2, 2.0)
    assert ep.run == RunProvenance(agent="bot", seed=1, ek_version=ep.run.ek_version)
    assert ep.metadata == {"note": "kept"}
    assert (gold.gold, gold.gold_calls.tools, gold.tags) == ("done", ("lookup",), ("refund",))
    assert gold.grammar().weight("refund") == 10.0  # destructive tool from metadata["tools"]


def test_task_id_fallbacks() -> None:
    assert from_deepeval_test_case(case(name="n"))[0].task_id == "n"
    a = from_deepeval_test_case(case(input="same"))[0].task_id
    b = from_deepeval_test_case(case(input="same"))[0].task_id
    assert a == b and a.startswith("deepeval-")
    assert from_deepeval_test_case(case(name="n"), task_id="x")[0].task_id == "x"


def test_misaligned_step_errors_raise() -> None:
    tc = case(
        tools_called=[NS(name="a", input_parameters={}, output=None)],
        metadata={"step_errors": [None, "x"]},
    )
    with pytest.raises(ValueError, match="one entry per tool call"):
        from_deepeval_test_case(tc)


TRACE = {
    "name": "agent",
    "type": "agent",
    "input": {"question": "weather?"},
    "output": "20C",
    "tools_called": [NS(name="search", input_parameters={"q": "x"}, output="r")],
    "children": [
        {
            "name": "think",
            "type": "llm",
            "model": "m",
            "input_token_count": 50,
            "output_token_count": 5,
            "children": [],
        },
        {
            "name": "search",
            "type": "tool",
            "input": {"q": "x"},
            "output": "r",
            "children": [
                {"name": "inner", "type": "tool", "input": "raw", "output": 1, "children": []}
            ],
        },
        {
            "name": "flaky",
            "type": "tool",
            "input": {"x": 3},
            "error": "tool failed",
            "children": [],
        },
        {
            "name": "think2",
            "type": "llm",
            "model": "m",
            "input_token_count": 10,
            "output_token_count": 1,
            "children": [],
        },
    ],
}


def test_trace_dict() -> None:
    # Tool spans depth-first in call order (the auto-filled tools_called list is not doubled);
    # a non-dict tool input is kept under "input"; each LLM span is one agent Cost.
    ep = from_deepeval_trace(TRACE, task_id="w")
    assert ep.trajectory.tools == ("search", "inner", "flaky")
    assert ep.trajectory[1].args == {"input": "raw"} and ep.trajectory[2].error == "tool failed"
    assert ep.agent_cost.input_tokens == 60 and ep.agent_cost.output_tokens == 6
    assert (ep.input, ep.output) == ({"question": "weather?"}, "20C")
    # Through a test case: auto-detected; use_trace=False ignores it.
    tc = case(input="{'question': 'weather?'}", actual_output="20C", metadata={"task_id": "w"})
    tc._trace_dict = TRACE
    assert from_deepeval_test_case(tc)[0].trajectory.tools == ("search", "inner", "flaky")
    assert len(from_deepeval_test_case(tc, use_trace=False)[0].trajectory) == 0
    # No tool spans: fall back to the spans' tools_called.
    bare = {"name": "agent", "type": "agent", "tools_called": TRACE["tools_called"], "children": []}
    assert from_deepeval_trace(bare, task_id="b").trajectory.tools == ("search",)
    with pytest.raises(TypeError, match="span tree"):
        from_deepeval_trace([], task_id="x")  # type: ignore[arg-type]


def test_conversational_duck_typed() -> None:
    tc = NS(
        turns=[
            NS(role="user", content="hi", tools_called=None, metadata=None),
            NS(
                role="assistant",
                content="",
                metadata={"step_errors": ["e"]},
                tools_called=[{"name": "a", "input_parameters": {"k": 1}, "output": 2}],
            ),
            NS(role="assistant", content="bye", tools_called=None, metadata=None),
        ],
        expected_outcome="bye",
        name=None,
        metadata=None,
        tags=None,
    )
    ep, gold = from_deepeval_test_case(tc)
    assert ep.trajectory.steps == (Step("a", {"k": 1}, 2, "e"),)
    assert (ep.input, ep.output, gold.gold, gold.gold_calls) == ("hi", "bye", "bye", None)
    assert ep.task_id.startswith("deepeval-")


@given(episodes)
def test_strategy_builds_valid_episodes(ep: Episode) -> None:
    assert Episode.from_dict(ep.to_dict()) == ep
