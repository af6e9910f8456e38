"""Issue 32, items 6 and 9: Ragas as its users expect, through the real ``ragas.evaluate()``
(0.4.3, offline, tracking off).

- item 6: Ragas' ``ToolCall`` refuses arguments that are not a mapping and ``args={}`` reads as
  a well-formed call with no arguments (a false pass); ``AIMessage.metadata["raw_tool_calls"]``
  hands ek the model's own output, scored as malformed;
- item 9: a configured metric's column has a readable name (``ek_tool_calls``, not a repr with
  a grammar digest); ek's reasons reach the data frame (:func:`to_pandas_with_reasons`); a row
  ek cannot score (a later sample without its gold: Ragas validates only the first) is NaN with
  the reason, and ``aggregate`` covers the scored rows and says how many were not, and why.

Task and weights as in ``tests/test_deepeval_host_expectations.py``: ``lookup_order(order_id)``
weighs 1 + 1; the destructive ``refund_order(order_id, amount)`` 10 + 1 + 5.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest

pytest.importorskip("ragas")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from ragas import EvaluationDataset, evaluate
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

from ek.adapters.ragas import (
    EkRagasAggregate,
    EkRagasScore,
    ek_ragas_metric,
    to_pandas_with_reasons,
)
from test_ragas_adapter import no_outbound  # noqa: F401 (the autouse offline fixture)

from ek.agents.base import ToolSpec
from ek.agents.toolcalls import ToolCallMetric
from ek.grammar import FieldSpec

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Length mismatch:UserWarning"),
]

LOOKUP = ToolSpec("lookup_order", [FieldSpec("order_id", "string")])
REFUND = ToolSpec(
    "refund_order",
    [FieldSpec("order_id", "string"), FieldSpec("amount", "number", importance=5.0)],
    destructive=True,
)
GOLD = [
    ToolCall(name="lookup_order", args={"order_id": "A1"}),
    ToolCall(name="refund_order", args={"order_id": "A1", "amount": 20}),
]
RAW_REFUND = {"name": "refund_order", "arguments": '{"order_id": "A1", "amount": }'}


def _sample(refund: ToolCall, *, raw: list[Any] | None = None, gold: bool = True) -> Any:
    ai_md: dict[str, Any] = {} if raw is None else {"raw_tool_calls": raw}
    return MultiTurnSample(
        user_input=[
            HumanMessage(content="Please refund order A1."),
            AIMessage(content="", tool_calls=[GOLD[0]]),
            ToolMessage(content='{"status": "paid", "amount": 20}'),
            AIMessage(content="", tool_calls=[refund], metadata=ai_md or None),
            ToolMessage(content="refunded"),
            AIMessage(
                content="refunded",
                metadata={"tools": [LOOKUP.to_dict(), REFUND.to_dict()]},
            ),
        ],
        reference_tool_calls=GOLD if gold else None,
    )


def _evaluate(samples: list[Any], metrics: list[Any], **kw: Any) -> Any:
    return evaluate(EvaluationDataset(samples=samples), metrics=metrics, show_progress=False, **kw)


# --------------------------------------------------------------------------- item 6


def test_a_malformed_call_handed_over_raw_is_scored_as_malformed() -> None:
    with pytest.raises(Exception, match="args"):
        ToolCall(name="refund_order", args='{"order_id": "A1", "amount": }')
    placeholder = ToolCall(name="refund_order", args={})  # kept: a ToolMessage follows it
    m = ek_ragas_metric(ToolCallMetric())
    res = _evaluate(
        [
            _sample(placeholder),
            _sample(placeholder, raw=[RAW_REFUND]),
            _sample(placeholder, raw=['{"name": "refund_order", "arguments": "not json"}']),
        ],
        [m],
    )
    fallback, raw, raw_text = (row[m.name] for row in res.scores)
    # {}: lookup TP 2, refund matched by name TP 10, its arguments missing FN 1 + 5
    # -> F1 = 2*12 / (2*12 + 6) = 0.8: a pass at 0.75 for a refund that never happened
    assert fallback == pytest.approx(0.8)
    # raw: lookup TP 2, the malformed call is extra (FP 1), the refund missing (FN 16): 4/21
    for v in (raw, raw_text):
        assert v == pytest.approx(4 / 21)
        assert isinstance(v, EkRagasScore) and "<malformed call>" in v.reason


# --------------------------------------------------------------------------- item 9


def test_a_configured_metric_has_a_readable_column() -> None:
    m = ek_ragas_metric(ToolCallMetric(grammar=[LOOKUP, REFUND]))
    assert m.name == "ek_tool_calls"  # was "ek_tool_calls(grammar=GraphGrammar#d4d361d8)"
    res = _evaluate([_sample(GOLD[1])], [m])
    assert list(res.scores[0]) == ["ek_tool_calls"] and res.scores[0]["ek_tool_calls"] == 1.0
    # two metrics that the name no longer tells apart are refused, asking for name=
    other = ek_ragas_metric(ToolCallMetric())
    with pytest.raises(ValueError, match="pass distinct name= values"):
        _evaluate([_sample(GOLD[1])], [m, other])


def test_reasons_reach_the_data_frame_and_unscored_rows_say_why() -> None:
    m = ek_ragas_metric(ToolCallMetric())
    wrong = ToolCall(name="refund_order", args={"order_id": "A1", "amount": 25})
    samples = [_sample(GOLD[1]), _sample(wrong), _sample(GOLD[1], gold=False)]
    res = _evaluate(samples, [m])  # Ragas' default: raise_exceptions=False
    right, wrong_amount, no_gold = (row[m.name] for row in res.scores)
    # wrong amount: lookup TP 2; refund TP 10 + 1, amount wrong FP 5 FN 5 -> 26/36
    assert right == 1.0 and wrong_amount == pytest.approx(26 / 36)
    # Ragas validated the first sample only: the third has no gold. NaN, with ek's reason
    # (it was a bare NaN)
    assert isinstance(no_gold, EkRagasScore) and math.isnan(no_gold) and no_gold.unscored
    assert "needs the sample's 'reference_tool_calls' column" in no_gold.reason
    frame = to_pandas_with_reasons(res)
    assert list(frame.columns[-2:]) == ["ek_tool_calls", "ek_tool_calls_reason"]
    reasons = list(frame["ek_tool_calls_reason"])
    assert reasons[0].startswith("valid") and "wrong arguments" in reasons[1]
    assert reasons[2].startswith("unscored: ")
    assert "ek_tool_calls_reason" not in res.to_pandas().columns  # Ragas' own frame, unchanged
    # the aggregate: micro-F1 of the two scored rows, TP (2 + 16) + 13, FP 5, FN 5 -> 62/72;
    # the unscored row is counted and explained, not refused
    with pytest.warns(UserWarning, match="1 of 3 rows unscored: row 2: unscored: "):
        agg = m.aggregate(res[m.name])
    assert isinstance(agg, EkRagasAggregate) and agg == pytest.approx(62 / 72)
    assert (agg.scored, agg.unscored) == (2, 1) and "reference_tool_calls" in agg.reasons[0]
    # raise_exceptions=True: the same row raises (Ragas' contract)
    with pytest.raises(ValueError, match="needs the sample's 'reference_tool_calls'"):
        _evaluate(samples, [m], raise_exceptions=True)


def test_a_bare_nan_from_ragas_is_counted_with_its_reason() -> None:
    m = ek_ragas_metric(ToolCallMetric())
    res = _evaluate([_sample(GOLD[1])], [m])
    with pytest.warns(UserWarning, match="Ragas recorded NaN without an ek score"):
        agg = m.aggregate([res[m.name][0], float("nan")])
    assert float(agg) == 1.0 and (agg.scored, agg.unscored) == (1, 1)
    with pytest.warns(UserWarning):
        assert math.isnan(m.aggregate([float("nan")]))  # nothing scored: NaN, not an error
    with pytest.raises(TypeError, match="EkRagasScore values this metric returned"):
        m.aggregate([0.5])  # a number that is not ek's: no detail to aggregate


def test_scores_docstring_examples() -> None:
    # adapters/ is outside the doctest testpaths (tests/, ek/): run its examples here.
    import doctest

    import ek.adapters.ragas._names as names
    import ek.adapters.ragas._scores as scores

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    for mod in (scores, names):
        assert doctest.testmod(mod, optionflags=flags).failed == 0, mod.__name__
