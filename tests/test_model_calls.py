"""Issue 32, item 13 (and the reader behind item 6): one contract for reading calls.

A predicted call is model output: ``normalize_call(call)`` (the default) never raises on it, it
returns the ``<malformed call>`` step with the reason; gold is read strictly on request
(``strict=True``). ``Step("refund", '<json text>')`` is a TypeError that says how to fix it.
A call Inspect marked unparsed (``ToolCall.parse_error``, with ``arguments={}``) is read by the
messages bridge as malformed, not as a call with no arguments.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import Step, TaskSpec
from ek.agents.bridge._model_calls import model_calls, read_model_call
from ek.agents.toolcalls import (
    MALFORMED_TOOL,
    CallShapeError,
    ToolCallMetric,
    normalize_call,
    normalize_calls,
)

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_a_predicted_call_never_raises(obj: Any) -> None:
    s = normalize_call(obj)
    assert isinstance(s, Step)
    if s.tool == MALFORMED_TOOL:
        assert s.error and dict(s.args) == {}
        with pytest.raises(CallShapeError):
            normalize_call(obj, strict=True)


@pytest.mark.parametrize(
    "call",
    [
        {"name": "refund", "arguments": '{"order_id": "A1", "amount": }'},
        {"name": "refund", "arguments": "[1, 2]"},
        {"name": "", "arguments": {}},
        "refund(order_id='A1')",
    ],
)
def test_model_output_is_scored_gold_is_refused(call: Any) -> None:
    s = normalize_call(call)
    assert s.tool == MALFORMED_TOOL and s.error
    with pytest.raises(CallShapeError, match="accepted call shapes"):
        normalize_call(call, strict=True)
    with pytest.raises(CallShapeError, match="call 0"):
        normalize_calls([call], strict=True)
    # scored as a wrong (extra) call, never raised on, by the metric too
    gold = TaskSpec("t", gold_calls=[Step("refund", {"order_id": "A1"})])
    score = ToolCallMetric()([call], gold)
    assert score.value == 0.0 and "<malformed call>" in score.reason


def test_inspect_parse_error_is_malformed() -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.tool import ToolCall

    from ek.agents.bridge import trajectory_from_messages

    unparsed = ToolCall(
        id="c1", function="refund", arguments={}, parse_error="Expecting value: line 1 column 31"
    )
    [step] = trajectory_from_messages([ChatMessageAssistant(content="", tool_calls=[unparsed])])
    assert step.tool == MALFORMED_TOOL
    assert "malformed arguments: Expecting value" in (step.error or "")  # the bridge's reading
    ok = ToolCall(id="c2", function="refund", arguments={"order_id": "A1"})
    assert normalize_call(ok) == Step("refund", {"order_id": "A1"})  # parse_error None: fine


def test_step_refuses_json_text_saying_how_to_fix_it() -> None:
    with pytest.raises(TypeError) as e:
        Step("refund", '{"order_id": "A1"}')
    msg = str(e.value)
    assert "got JSON text" in msg and "json.loads" in msg and "normalize_call" in msg
    # what the message says to do works
    assert normalize_call({"name": "refund", "arguments": '{"order_id": "A1"}'}) == Step(
        "refund", {"order_id": "A1"}
    )


def test_read_model_call_decodes_a_call_given_as_json_text() -> None:
    text = json.dumps({"name": "refund", "arguments": {"order_id": "A1"}})
    assert read_model_call(text) == Step("refund", {"order_id": "A1"})
    bad = read_model_call('{"name": "refund", "arguments": ')
    assert bad.tool == MALFORMED_TOOL and "the call is not JSON" in (bad.error or "")
    assert read_model_call('{"name": "f", "arguments": {"x": NaN}}').tool == MALFORMED_TOOL
    with pytest.raises(TypeError, match=r"where must be a list of the model's tool calls"):
        model_calls({"name": "refund"}, "where")
    assert model_calls(None, "where") is None and model_calls((), "where") == []
