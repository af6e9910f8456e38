"""Hand-derived cases for TrajectoryMetric: every scheme, and the cases that separate them.

Grammar for the worked examples: ``search`` (weight 1), ``lookup`` (weight 1), ``refund``
(destructive: weight 10; ``amount`` importance 5). A step's mass = weight + importance of its
arguments: search(q) = 2, lookup(id) = 2, refund(order) = 11, refund(order, amount) = 16.
Deleting an expected step / inserting an actual one costs its mass (inserts are free in
``in_order`` and ``superset``); a same-tool substitution costs the importance of the differing
arguments. Worst case = all expected masses (+ all actual masses for ``exact`` / ``any_order``).
"""

from __future__ import annotations

import json
import math

import pytest

from ek.agents.base import Episode, Step, TaskSpec, ToolSpec
from ek.agents.trajectory import (
    SCHEMES,
    TrajectoryMetric,
    TrajectoryResult,
    align_trajectory,
    trajectory_score,
)
from ek.evaluate import evaluate
from ek.grammar import GraphGrammar
from ek.registry import resolve

REFUND = ToolSpec(
    "refund",
    parameters={
        "type": "object",
        "properties": {"order": {"type": "integer"}, "amount": {"type": "number"}},
        "required": ["order"],
    },
    importance={"amount": 5.0},
    destructive=True,
)
G = GraphGrammar([REFUND.to_node_type()])
E = [Step("search", {"q": "x"}), Step("refund", {"order": 1})]  # masses 2 + 11 = 13


def run(actual: list[Step], expected: list[Step] = E) -> dict[str, TrajectoryResult]:
    return {s: align_trajectory(actual, expected, scheme=s, grammar=G) for s in SCHEMES}  # type: ignore[arg-type]


def test_swapped_pair() -> None:
    r = run([Step("refund", {"order": 1}), Step("search", {"q": "x"})])
    # exact: keep refund aligned, delete search (2) + insert search (2) = 4; worst 26
    assert (r["exact"].cost, r["exact"].worst_case, r["exact"].passed) == (4.0, 26.0, False)
    assert r["exact"].value == pytest.approx(22 / 26)
    # in_order: delete expected search (2), the re-ordered search is a free insert; worst 13
    assert (r["in_order"].cost, r["in_order"].worst_case, r["in_order"].passed) == (
        2.0,
        13.0,
        False,
    )
    assert [(o.op, o.expected_index, o.actual_index, o.tool) for o in r["in_order"].alignment] == [
        ("delete", 0, None, "search"),
        ("match", 1, 0, "refund"),
        ("insert", None, 1, "search"),
    ]
    # order-free schemes do not care
    assert r["any_order"].value == 1.0 and r["any_order"].passed
    assert r["superset"].value == 1.0 and r["superset"].passed


def test_duplicated_step() -> None:
    r = run([Step("search", {"q": "x"}), Step("search", {"q": "x"}), Step("refund", {"order": 1})])
    # exact / any_order: the duplicate is an extra (2) of worst 13 + 15 = 28
    for s in ("exact", "any_order"):
        assert (r[s].cost, r[s].worst_case, r[s].passed) == (2.0, 28.0, False), s
    # in_order / superset: extras are free
    assert r["in_order"].passed and r["in_order"].value == 1.0
    assert r["superset"].passed and r["superset"].value == 1.0


def test_missing_destructive_step() -> None:
    r = run([Step("search", {"q": "x"})])
    # the refund (11) is missing: exact/any_order 1 - 11/15, in_order/superset 1 - 11/13
    assert r["exact"].value == pytest.approx(4 / 15)
    assert r["any_order"].value == pytest.approx(4 / 15)
    assert r["in_order"].value == pytest.approx(2 / 13)
    assert r["superset"].value == pytest.approx(2 / 13)
    assert not any(x.passed for x in r.values())
    assert "expected step 1 refund missing (cost 11)" in r["in_order"].reason


def test_extra_read_only_step() -> None:
    r = run([Step("search", {"q": "x"}), Step("lookup", {"id": 1}), Step("refund", {"order": 1})])
    # lookup (2) is extra: costs only where extras cost
    assert r["exact"].value == pytest.approx(26 / 28) and not r["exact"].passed
    assert r["any_order"].value == pytest.approx(26 / 28) and not r["any_order"].passed
    assert r["in_order"].passed and r["superset"].passed


def test_argument_error_on_high_importance_field() -> None:
    exp = [Step("search", {"q": "x"}), Step("refund", {"order": 1, "amount": 20})]  # 2 + 16
    hi = run([Step("search", {"q": "x"}), Step("refund", {"order": 1, "amount": 25})], exp)
    lo = run([Step("search", {"q": "x"}), Step("refund", {"order": 2, "amount": 20})], exp)
    # amount (importance 5) wrong: substitution cost 5; order (1) wrong: cost 1
    assert hi["in_order"].cost == 5.0 and lo["in_order"].cost == 1.0
    assert hi["in_order"].value == pytest.approx(13 / 18)
    assert lo["in_order"].value == pytest.approx(17 / 18)
    assert hi["exact"].value == pytest.approx(31 / 36)
    assert hi["any_order"].value == pytest.approx(31 / 36)
    assert hi["superset"].value == pytest.approx(13 / 18)
    op = hi["in_order"].alignment[1]
    assert (op.op, op.expected_index, op.actual_index, op.cost) == ("substitute", 1, 1, 5.0)
    assert [(a["arg"], a["verdict"], a["predicted"], a["expected"]) for a in op.args] == [
        ("amount", "wrong", 25, 20)
    ]
    assert not any(x.passed for x in hi.values())


def test_empty_cases() -> None:
    for s in SCHEMES:
        r = align_trajectory([], [], scheme=s)  # type: ignore[arg-type]
        assert (r.value, r.passed, r.cost, r.worst_case) == (1.0, True, 0.0, 0.0)
    # nothing expected, something done: free in in_order / superset, all wrong in exact / any_order
    assert align_trajectory([Step("a")], [], scheme="in_order").value == 1.0
    assert align_trajectory([Step("a")], [], scheme="exact").value == 0.0
    assert align_trajectory([], [Step("a")], scheme="superset").value == 0.0


def test_tie_breaking_is_documented_and_deterministic() -> None:
    # E = [a], A = [a, a] under exact: matching either copy costs 1. From the end, a diagonal
    # move is preferred, so the last copy is matched and the first is the insert.
    r = align_trajectory([Step("a"), Step("a")], [Step("a")], scheme="exact")
    assert [(o.op, o.expected_index, o.actual_index) for o in r.alignment] == [
        ("insert", None, 0),
        ("match", 0, 1),
    ]
    # delete is preferred over insert on a tie
    r = align_trajectory([Step("b")], [Step("a")], scheme="exact")
    assert [o.op for o in r.alignment] == ["insert", "delete"]
    again = align_trajectory([Step("b")], [Step("a")], scheme="exact")
    assert again == r


def test_different_tools_never_substitute() -> None:
    r = align_trajectory([Step("b", {"x": 1})], [Step("a", {"x": 1})], scheme="exact")
    # delete a (2) + insert b (2) = 4 = worst case
    assert r.cost == 4.0 and r.value == 0.0


def test_metric_shell_detail_and_aggregate() -> None:
    task = TaskSpec("t", tools=[REFUND], gold_calls=E)
    m = TrajectoryMetric()
    s1 = m(Episode("t", trajectory=[Step("search", {"q": "x"})]), task)  # cost 11 / 13
    s2 = m([Step("search", {"q": "X"}), Step("refund", {"order": 1})], task)  # 0 / 13
    for k in ("cost", "worst_case", "passed", "alignment", "reason", "higher_is_better"):
        assert k in s1.detail
    json.dumps(dict(s1.detail))
    assert s1.detail["higher_is_better"] is True
    # ratio of sums: 1 - 11/26, not the mean of 2/13 and 1
    assert m.aggregate([s1, s2]) == pytest.approx(1 - 11 / 26)
    assert math.isnan(m.aggregate([]))
    r = evaluate(m, [[Step("search", {"q": "x"})]], [task])
    assert r.metric == "trajectory" and r.value == pytest.approx(2 / 13)
    assert trajectory_score(align_trajectory([], [])).value == 1.0


def test_registered_and_validated() -> None:
    m = resolve("metrics", "trajectory")  # a default instance, usable as registered
    assert type(m) is TrajectoryMetric and m.scheme == "in_order" and m.grammar is None
    assert m([Step("a")], [Step("a")]).value == 1.0
    assert type(m)(scheme="exact").scheme == "exact"
    with pytest.raises(ValueError, match="scheme must be one of"):
        TrajectoryMetric(scheme="strict")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scheme must be one of"):
        align_trajectory([], [], scheme="unordered")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no tool name"):  # malformed gold is refused
        TrajectoryMetric()([], [{"args": {}}])
    # A malformed predicted call is untrusted model output: scored as an extra step (mass 1:
    # unit weight, no arguments), never raised on.
    s = TrajectoryMetric(scheme="exact")([{"args": {}}], [])
    assert (s.value, s.passed, s.detail["cost"]) == (0.0, False, 1.0)


def test_long_alignment_is_exact_on_a_structured_case() -> None:
    # 300 expected steps; the actual one drops every 10th and inserts a stray lookup after every
    # 7th: in_order cost = 30 deleted steps * mass 2; inserts free.
    exp = [Step(f"t{i % 5}", {"i": i}) for i in range(300)]
    act = []
    for i, s in enumerate(exp):
        if i % 10 == 0:
            continue
        act.append(s)
        if i % 7 == 0:
            act.append(Step("lookup", {"i": i}))
    r = align_trajectory(act, exp)
    assert r.cost == 60.0 and r.worst_case == 600.0
    assert sum(o.op == "delete" for o in r.alignment) == 30
    assert all(o.op in ("match", "delete", "insert") for o in r.alignment)
