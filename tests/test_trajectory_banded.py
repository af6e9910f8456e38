"""The banded Needleman-Wunsch (issue 22) gives the full table's cost, alignment and Score.

``exact`` / ``in_order`` align on a band of diagonals, widened until no path leaving it can cost
as much as the band's optimum (Ukkonen's O(n·d) idea). The oracle here is an independent full
O(n·m) table written out below with the module's documented tie rule (from the last cell back:
diagonal, then delete, then insert), on unit costs (no grammar: a step's mass is 1 + its
arguments, a same-tool substitution costs one per argument that differs). The band's first
width is patched small (``_BAND_START``) so that small inputs go through several banded passes.
"""

from __future__ import annotations

import math
import random
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ek.agents.trajectory as trajectory
from ek.agents.base import Step
from ek.agents.trajectory import MAX_CELLS, MAX_STEPS, TrajectoryMetric, align_trajectory

_MISSING = object()


def _sub(e: Step, a: Step) -> float:
    if e.tool != a.tool:
        return math.inf
    keys = set(e.args) | set(a.args)
    return float(sum(e.args.get(k, _MISSING) != a.args.get(k, _MISSING) for k in keys))


def _full_table(a: list[Step], e: list[Step], scheme: str) -> tuple[float, list[Any]]:
    """The full DP and its traceback: (cost, [(op, expected index, actual index)])."""
    n, m = len(e), len(a)
    dels = [1.0 + len(s.args) for s in e]
    ins = [1.0 + len(s.args) if scheme == "exact" else 0.0 for s in a]
    d = [[0.0] * (m + 1) for _ in range(n + 1)]
    for j in range(1, m + 1):
        d[0][j] = d[0][j - 1] + ins[j - 1]
    for i in range(1, n + 1):
        d[i][0] = d[i - 1][0] + dels[i - 1]
        for j in range(1, m + 1):
            d[i][j] = min(
                d[i - 1][j - 1] + _sub(e[i - 1], a[j - 1]),
                d[i - 1][j] + dels[i - 1],
                d[i][j - 1] + ins[j - 1],
            )
    ops = []
    i, j = n, m
    while i > 0 or j > 0:
        diag = d[i - 1][j - 1] + _sub(e[i - 1], a[j - 1]) if i and j else math.inf
        up = d[i - 1][j] + dels[i - 1] if i else math.inf
        if i and j and diag <= up and diag <= d[i][j - 1] + ins[j - 1]:
            kind = "match" if _sub(e[i - 1], a[j - 1]) == 0.0 else "substitute"
            ops.append((kind, i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i and (not j or up <= d[i][j - 1] + ins[j - 1]):
            ops.append(("delete", i - 1, None))
            i -= 1
        else:
            ops.append(("insert", None, j - 1))
            j -= 1
    return d[n][m], ops[::-1]


def _ops(r: Any) -> list[Any]:
    return [(o.op, o.expected_index, o.actual_index) for o in r.alignment]


tools = st.sampled_from(["a", "b", "c"])
args = st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2), max_size=2)
step = st.builds(Step, tools, args)


@st.composite
def near_pair(draw: Any) -> tuple[list[Step], list[Step]]:
    """An expected trajectory and an actual one made from it by a few edits (or unrelated)."""
    e = draw(st.lists(step, max_size=40))
    if draw(st.booleans()) and e:
        a = list(e)
        for _ in range(draw(st.integers(0, 6))):
            kind = draw(st.sampled_from(["del", "ins", "sub"]))
            at = draw(st.integers(0, max(0, len(a) - 1)))
            if kind == "ins" or not a:
                a.insert(at, draw(step))
            elif kind == "del":
                a.pop(at)
            else:
                a[at] = Step(a[at].tool, draw(args))
        return e, a
    return e, draw(st.lists(step, max_size=40))


cfg = settings(max_examples=200, deadline=None)


@cfg
@given(near_pair(), st.sampled_from([1, 2, 4, 16]), st.sampled_from(["exact", "in_order"]))
def test_banded_equals_full_table(pair: Any, start: int, scheme: str) -> None:
    e, a = pair
    want_cost, want_ops = _full_table(a, e, scheme)
    with mock.patch.object(trajectory, "_BAND_START", start):
        r = align_trajectory(a, e, scheme=scheme)  # type: ignore[arg-type]
        score = TrajectoryMetric(scheme)(a, e)  # type: ignore[arg-type]
    assert r.cost == min(want_cost, r.worst_case)
    assert _ops(r) == want_ops
    # the Score's detail is the full table's too (the band never shows)
    with mock.patch.object(trajectory, "_BAND_START", 10**9):  # straight to the full table
        full = TrajectoryMetric(scheme)(a, e)  # type: ignore[arg-type]
    assert score.value == full.value and dict(score.detail) == dict(full.detail)


def _near(n: int, rate: float, seed: int) -> tuple[list[Step], list[Step]]:
    rnd = random.Random(seed)
    tools_ = [f"t{i}" for i in range(10)]
    e = [
        Step(rnd.choice(tools_), {"x": rnd.randrange(10**6), "m": rnd.choice("ab")})
        for _ in range(n)
    ]
    a: list[Step] = []
    for s in e:
        r = rnd.random()
        if r < rate / 3:
            continue
        if r < 2 * rate / 3:
            a.append(Step(s.tool, {"x": rnd.randrange(10**6), "m": s.args["m"]}))
            continue
        a.append(s)
        if r < rate:
            a.append(Step(rnd.choice(tools_), {"x": 1, "m": "a"}))
    return e, a


@pytest.mark.parametrize("scheme", ["exact", "in_order"])
def test_near_identical_600_steps_against_full_table(scheme: str) -> None:
    e, a = _near(600, 0.05, 22)
    want_cost, want_ops = _full_table(a, e, scheme)
    r = align_trajectory(a, e, scheme=scheme)  # type: ignore[arg-type]
    assert (r.cost, _ops(r)) == (want_cost, want_ops)


def test_longer_than_the_old_limit_aligns_when_near_identical() -> None:
    # 4,000 steps (the limit was 2,000 before the band): 5 % edits keep the band narrow
    e, a = _near(4000, 0.05, 4)
    assert max(len(e), len(a)) > 2000 and max(len(e), len(a)) <= MAX_STEPS
    s = TrajectoryMetric("exact")(a, e)
    assert 0.9 < s.value < 1.0 and s.detail["alignment"]


def test_long_and_unrelated_is_refused_within_the_cell_budget() -> None:
    # 2,500 x 2,500 = 6.25e6 cells > MAX_CELLS and nothing in common: no narrow band is
    # proven optimal, so the metric scores 0 with the reason and align() raises
    rnd = random.Random(1)
    e = [Step("a", {"x": rnd.randrange(10**6)}) for _ in range(2500)]
    a = [Step("b", {"x": rnd.randrange(10**6)}) for _ in range(2500)]
    assert len(e) * len(a) > MAX_CELLS
    s = TrajectoryMetric("exact")(a, e)
    assert s.value == 0.0 and not s.passed and s.detail["cost"] == s.detail["worst_case"]
    assert "differ too much to align within 4,000,000 cells" in s.reason
    with pytest.raises(ValueError, match="differ too much"):
        align_trajectory(a, e, scheme="exact")


def test_old_limit_still_aligns_when_unrelated() -> None:
    # 2,000 x 2,000 unrelated steps (4e6 cells = MAX_CELLS): the full table, as before
    rnd = random.Random(2)
    e = [Step("a", {"x": rnd.randrange(10**6)}) for _ in range(2000)]
    a = [Step("b", {"x": rnd.randrange(10**6)}) for _ in range(2000)]
    r = align_trajectory(a, e, scheme="in_order")
    # nothing can be substituted: every expected step deleted (mass 2), the actual ones free
    assert r.cost == r.worst_case == 2 * 2000
