"""The assignment's class reduction (issue 22): exact against brute force, at scale, and bounded.

``ek.agents.toolcalls._assign`` solves a large tool group whose gold calls are literal (no AnyOf)
and whose tool has no schema through classes of interchangeable calls and a min-cost flow
instead of the Hungarian on every pair. These tests go through the public paths
(``match_calls``, ``TrajectoryMetric``, ``align_trajectory``); the small-group threshold is
lowered (``_SMALL_GROUP``, patched by name) so that groups small enough to brute-force take the
class path too.
"""

from __future__ import annotations

import itertools
import random
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ek.agents.toolcalls._assign as assign
from ek.agents.base import Step, ToolSpec
from ek.agents.toolcalls import match_calls
from ek.agents.toolcalls._parse import prepare_gold, prepare_predicted
from ek.agents.toolcalls._values import Context
from ek.agents.trajectory import TrajectoryMetric, align_trajectory
from ek.canon import resolve_canonicalizer

# --------------------------------------------------------------------------- brute force

_MISSING = object()


def _pair(g: Step, p: Step, objective: str) -> tuple[float, bool]:
    """(cost, exact) of a pair with unit importances: edit = one per argument that differs;
    f1 = fp + fn: two for a wrong value, one for a missing or an extra argument."""
    cost = 0.0
    for k in set(g.args) | set(p.args):
        a, b = g.args.get(k, _MISSING), p.args.get(k, _MISSING)
        if a is _MISSING or b is _MISSING:
            cost += 1.0
        elif a != b:
            cost += 2.0 if objective == "f1" else 1.0
    return cost, cost == 0.0


def _brute(
    golds: list[Step], preds: list[Step], weight: dict[str, float], objective: str, extra: bool
) -> float:
    """The cost of the best assignment, trying every one: most exact pairs first, then the
    least cost; an unmatched gold call costs its mass (weight + one per argument), an
    unmatched predicted call its mass when ``extra``."""

    def mass(s: Step) -> float:
        return weight.get(s.tool, 1.0) + len(s.args)

    best: tuple[int, float] | None = None
    options = [None, *range(len(preds))]
    for choice in itertools.product(options, repeat=len(golds)):
        used = [j for j in choice if j is not None]
        if len(used) != len(set(used)):
            continue
        n_exact, cost = 0, 0.0
        for g, j in zip(golds, choice):
            if j is None:
                cost += mass(g)
                continue
            if preds[j].tool != g.tool:
                break
            c, ex = _pair(g, preds[j], objective)
            n_exact += ex
            cost += c
        else:
            if extra:
                cost += sum(mass(p) for j, p in enumerate(preds) if j not in used)
            key = (-n_exact, cost)
            best = key if best is None or key < best else best
    assert best is not None
    return best[1]


tools = st.sampled_from(["f", "g"])
values = st.integers(0, 2)
args = st.dictionaries(st.sampled_from(["x", "y", "z"]), values, max_size=3)
calls = st.lists(st.builds(Step, tools, args), max_size=5)
cfg = settings(max_examples=150, deadline=None)


@cfg
@given(calls, calls, st.booleans())
def test_class_path_is_optimal_against_brute_force(
    gold: list[Step], pred: list[Step], destructive: bool
) -> None:
    grammar = [ToolSpec("g", destructive=True)] if destructive else None
    weight = {"g": 10.0} if destructive else {}
    with mock.patch.object(assign, "_SMALL_GROUP", 0):  # every group of 2+ calls by classes
        r = match_calls(pred, gold, grammar=grammar)  # type: ignore[arg-type]
        any_order = align_trajectory(pred, gold, scheme="any_order", grammar=grammar)  # type: ignore[arg-type]
        superset = align_trajectory(pred, gold, scheme="superset", grammar=grammar)  # type: ignore[arg-type]
    assert r.fp + r.fn == _brute(gold, pred, weight, "f1", True)
    assert any_order.cost == _brute(gold, pred, weight, "edit", True)
    assert superset.cost == _brute(gold, pred, weight, "edit", False)
    # the alignment's operations add up to the cost, and every step appears once
    assert sum(o.cost for o in any_order.alignment) == any_order.cost
    assert sorted(o.actual_index for o in any_order.alignment if o.actual_index is not None) == (
        list(range(len(pred)))
    )


@cfg
@given(calls, calls)
def test_class_path_and_hungarian_agree_on_cost(gold: list[Step], pred: list[Step]) -> None:
    with mock.patch.object(assign, "_SMALL_GROUP", 0):
        by_class = [align_trajectory(pred, gold, scheme=s).cost for s in ("any_order", "superset")]
        f1 = match_calls(pred, gold).counts
    with mock.patch.object(assign, "_SMALL_GROUP", 10**9):
        hungarian = [align_trajectory(pred, gold, scheme=s).cost for s in ("any_order", "superset")]
        f1_h = match_calls(pred, gold).counts
    assert by_class == hungarian
    assert f1.fp + f1.fn == f1_h.fp + f1_h.fn


# --------------------------------------------------------------------------- at scale


def _worst(n_a: int, n_b: int, m_a: int, m_b: int) -> tuple[list[Step], list[Step]]:
    """One tool; every ``x`` distinct (no pair agrees on it), ``mode`` a or b."""
    gold = [Step("f", {"x": i, "mode": "a" if i < n_a else "b"}) for i in range(n_a + n_b)]
    pred = [Step("f", {"x": 10**6 + j, "mode": "a" if j < m_a else "b"}) for j in range(m_a + m_b)]
    random.Random(7).shuffle(pred)
    return gold, pred


def test_worst_case_group_hand_derived() -> None:
    # 100 gold calls (60 mode a, 40 b) against 100 predicted (45 a, 55 b), no x in common.
    # Every pair costs x (1) plus 1 when the modes differ; leaving a call out costs its mass 3,
    # so all 100 are paired: 45 a-a, 40 b-b and 15 gold-a with predicted-b pairs.
    # any_order cost = 100 * 1 + 15 * 1 = 115; worst case = 100 * 3 + 100 * 3 = 600.
    gold, pred = _worst(60, 40, 45, 55)
    r = align_trajectory(pred, gold, scheme="any_order")
    assert (r.cost, r.worst_case) == (115.0, 600.0)
    subs = [o for o in r.alignment if o.op == "substitute"]
    assert len(subs) == 100 and sum(len(o.args) == 2 for o in subs) == 15
    # superset: the same pairs (extra steps would be free, but there are none left over)
    assert align_trajectory(pred, gold, scheme="superset").cost == 115.0
    # ToolCallMetric's f1 objective: a wrong x costs fp + fn = 2, a wrong mode 2 more
    r2 = match_calls(pred, gold)
    assert r2.fp + r2.fn == 2 * 100 + 2 * 15


def test_worst_case_unequal_sizes_and_scale() -> None:
    # 300 gold (200 a, 100 b) against 250 predicted (50 a, 200 b): 250 pairs (50 a-a, 100 b-b,
    # 100 mixed: each pair costs at most 2 < a missing call's 3), 50 gold calls missing.
    # any_order = 250 * 1 + 100 * 1 + 50 * 3 = 500.
    gold, pred = _worst(200, 100, 50, 200)
    r = TrajectoryMetric("any_order")(pred, gold)
    assert r.detail["cost"] == 500.0
    assert sum(o["op"] == "delete" for o in r.detail["alignment"]) == 50


def test_many_classes_agree_with_hungarian() -> None:
    # x drawn from 20 values on both sides: the calls fall into ~40 classes a side, the flow
    # solves it; the Hungarian (forced by a huge small-group threshold) must find the same cost.
    rnd = random.Random(3)
    gold = [Step("f", {"x": rnd.randrange(20), "m": rnd.choice("ab")}) for _ in range(80)]
    pred = [Step("f", {"x": rnd.randrange(20), "m": rnd.choice("ab")}) for _ in range(70)]
    costs = {}
    for name, small in (("class", 0), ("hungarian", 10**9)):
        with mock.patch.object(assign, "_SMALL_GROUP", small):
            costs[name] = [
                align_trajectory(pred, gold, scheme=s).cost for s in ("any_order", "superset")
            ] + [match_calls(pred, gold).fn]
    assert costs["class"] == costs["hungarian"]


def test_hashed_claiming_claims_the_first_equal_call() -> None:
    # 40 gold and 60 predicted calls over 5 argument values (more than the scan limit on both
    # sides): each gold call, in gold order, claims the first unclaimed equal predicted call.
    gold = [Step("f", {"x": i % 5}) for i in reversed(range(40))]
    pred = [Step("f", {"x": i % 5}) for i in range(60)]
    free = list(range(60))
    want = []
    for gi, g in enumerate(gold):
        j = next(j for j in free if pred[j].args == g.args)
        free.remove(j)
        want.append((gi, j))
    r = match_calls(pred, gold)
    assert [(m.gold_index, m.pred_index) for m in r.matched] == want
    assert all(m.exact for m in r.matched) and len(r.extra) == 20


def test_assignment_budget_is_a_clear_error() -> None:
    # with the class path off, the Hungarian; a budget below the group's cells refuses it
    # (40 x (40 + 40) = 3,200 cells: the matrix has a "missing" column per gold call)
    gold = [Step("f", {"x": i}) for i in range(40)]
    pred = [Step("f", {"x": i + 1000}) for i in range(40)]
    ctx = Context(None, resolve_canonicalizer("default"))
    g, p = prepare_gold(gold, ctx), prepare_predicted(pred, ctx)
    with mock.patch.object(assign, "_CLASS_LIMIT", 0):  # no class path: the Hungarian
        with pytest.raises(assign.AssignmentTooLarge, match=r"tool 'f': 40 expected and 40"):
            assign.match(p, g, ctx, max_cells=100)
        ok = assign.match(p, g, ctx, max_cells=40 * 80)  # exactly enough
    assert len(ok.matched) == 40


def _result_key(r: Any) -> Any:
    return [(o.op, o.expected_index, o.actual_index, o.cost) for o in r.alignment]


def test_deterministic() -> None:
    gold, pred = _worst(60, 40, 45, 55)
    a = align_trajectory(pred, gold, scheme="any_order")
    b = align_trajectory(list(pred), list(gold), scheme="any_order")
    assert _result_key(a) == _result_key(b)
