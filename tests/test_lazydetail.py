"""LazyDetail: a perfect tool-call Score writes its explanation on first use and is, as a
read-only mapping, indistinguishable from the eagerly built detail."""

from __future__ import annotations

import json
import pickle
import threading
from types import MappingProxyType

import pytest

from ek.agents._lazydetail import LazyDetail
from ek.agents.base import Step
from ek.agents.toolcalls import ToolCallMetric, match_calls, tool_call_score

GOLD = [Step("search", {"q": "refund policy"}), Step("lookup", {"id": 7})]
PRED = [Step("lookup", {"id": 7}), Step("search", {"q": "refund policy"})]


def _lazy_and_eager() -> tuple[object, object]:
    lazy = ToolCallMetric()(PRED, GOLD)
    eager = tool_call_score(match_calls(PRED, GOLD))
    return lazy, eager


def test_perfect_score_detail_is_lazy_and_equal_to_the_eager_one() -> None:
    lazy, eager = _lazy_and_eager()
    assert type(lazy.detail) is MappingProxyType  # type: ignore[attr-defined]
    assert lazy.value == eager.value == 1.0  # type: ignore[attr-defined]
    assert lazy.detail["tp"] == 4.0  # type: ignore[attr-defined]  # 2 calls x (weight 1 + 1 arg)
    assert lazy == eager
    assert list(lazy.detail) == list(eager.detail)  # type: ignore[attr-defined]  # same key order
    assert lazy.reason == eager.reason  # type: ignore[attr-defined]
    assert lazy.detail["matched"] == [  # type: ignore[attr-defined]
        {"gold": 0, "pred": 1, "tool": "search", "exact": True},
        {"gold": 1, "pred": 0, "tool": "lookup", "exact": True},
    ]


@pytest.mark.parametrize(
    "read",
    [
        lambda d: d["reason"],
        lambda d: list(d),
        lambda d: len(d),
        lambda d: "matched" in d,
        lambda d: d.get("extra"),
        lambda d: list(d.keys()),
        lambda d: list(d.items()),
        lambda d: list(d.values()),
        lambda d: d.copy(),
        lambda d: dict(d),
        lambda d: {**d},
        lambda d: repr(d),
        lambda d: list(reversed(d)),
        lambda d: d | {},
    ],
)
def test_every_read_sees_the_complete_detail(read: object) -> None:
    lazy, eager = _lazy_and_eager()
    got = read(lazy.detail)  # type: ignore[attr-defined, operator]
    want = read(eager.detail)  # type: ignore[attr-defined, operator]
    assert got == want


def test_fill_runs_once_and_only_for_keys_beyond_the_eager_ones() -> None:
    calls: list[int] = []

    def fill() -> dict[str, object]:
        calls.append(1)
        return {"reason": "r", "rows": [1]}

    d = MappingProxyType(LazyDetail({"tp": 1.0, "passed": True}, fill))
    assert (d["tp"], d["passed"], calls) == (1.0, True, [])
    assert d["rows"] == [1] and calls == [1]
    assert dict(d) == {"tp": 1.0, "passed": True, "reason": "r", "rows": [1]} and calls == [1]
    with pytest.raises(KeyError):
        d["nope"]
    assert d.get("nope", 3) == 3


def test_a_filled_detail_serialises_like_a_dict() -> None:
    lazy, eager = _lazy_and_eager()
    assert json.dumps(dict(lazy.detail)) == json.dumps(dict(eager.detail))  # type: ignore[attr-defined]
    raw = LazyDetail({"tp": 1.0}, lambda: {"reason": "r"})
    back = pickle.loads(pickle.dumps(raw))
    assert type(back) is dict and back == {"tp": 1.0, "reason": "r"}


def test_concurrent_first_reads_all_see_the_complete_detail() -> None:
    for _ in range(50):
        d = MappingProxyType(LazyDetail({"tp": 1.0}, lambda: {"a": 1, "b": 2, "c": 3}))
        seen: list[dict[str, object]] = []

        def read(d: object = d, seen: list[dict[str, object]] = seen) -> None:
            seen.append(dict(d))  # type: ignore[call-overload]

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen == [{"tp": 1.0, "a": 1, "b": 2, "c": 3}] * 4


def test_aggregate_reads_only_eager_keys() -> None:
    m = ToolCallMetric()
    scores = [m(PRED, GOLD) for _ in range(3)]
    assert m.aggregate(scores) == 1.0


def test_explanation_read_later_shows_the_calls_as_scored() -> None:
    # The detail is built on first read; what it shows was copied at scoring time: the gold
    # list and the argument mappings of missing and extra calls.
    gold = [Step("search", {"q": "refund policy"}), Step("lookup", {"id": 7})]
    pred = [Step("search", {"q": "refund policy"}), Step("cancel", {"id": 7})]
    want = ToolCallMetric()(list(pred), list(gold)).detail  # read at once
    s = ToolCallMetric()(pred, gold)
    gold[0] = Step("other", {})
    gold.append(Step("late", {}))
    pred[1].args["id"] = 8  # type: ignore[index]  # (a Step's own mapping, mutated in place)
    gold[1].args["id"] = 9  # type: ignore[index]
    assert dict(s.detail) == dict(want)
    assert s.detail["missing"][0]["args"] == {"id": 7}
    assert s.detail["extra"][0]["args"] == {"id": 7}
