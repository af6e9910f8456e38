"""Property tests (hypothesis) for TrajectoryMetric, plus a brute-force cross-check of the DP."""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ek.agents.base import Step
from ek.agents.trajectory import SCHEMES, align_trajectory

tools = st.sampled_from(["a", "b", "c"])
args = st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2), max_size=2)
steps = st.lists(st.builds(Step, tools, args), max_size=7)
cfg = settings(max_examples=60, deadline=None)


def all_schemes(a: list[Step], e: list[Step]) -> dict[str, Any]:
    return {s: align_trajectory(a, e, scheme=s) for s in SCHEMES}  # type: ignore[arg-type]


@cfg
@given(steps, steps)
def test_scores_in_unit_interval_and_implications(a: list[Step], e: list[Step]) -> None:
    r = all_schemes(a, e)
    for s, x in r.items():
        assert 0.0 <= x.value <= 1.0, s
        assert 0.0 <= x.cost <= x.worst_case or x.worst_case == 0.0
    if r["exact"].passed:
        assert r["in_order"].passed and r["any_order"].passed and r["superset"].passed
    if r["any_order"].passed:
        assert r["superset"].passed
    if r["in_order"].passed:
        assert r["superset"].passed
    # with unit costs a scheme passes exactly when it costs nothing
    for s, x in r.items():
        assert x.passed == (x.cost == 0.0), s


@cfg
@given(steps)
def test_identity_scores_one(e: list[Step]) -> None:
    for s, x in all_schemes(list(e), e).items():
        assert x.value == 1.0 and x.passed, s


@cfg
@given(steps, steps, st.permutations(["p", "q", "r"]))
def test_invariant_to_consistent_tool_renaming(
    a: list[Step], e: list[Step], names: list[str]
) -> None:
    ren = dict(zip(["a", "b", "c"], names))

    def rename(xs: list[Step]) -> list[Step]:
        return [Step(ren[x.tool], x.args) for x in xs]

    before = all_schemes(a, e)
    after = all_schemes(rename(a), rename(e))
    for s in SCHEMES:
        assert after[s].value == before[s].value and after[s].passed == before[s].passed
        assert [(o.op, o.expected_index, o.actual_index) for o in after[s].alignment] == [
            (o.op, o.expected_index, o.actual_index) for o in before[s].alignment
        ]


@cfg
@given(steps, steps)
def test_deterministic(a: list[Step], e: list[Step]) -> None:
    for s in SCHEMES:
        assert align_trajectory(a, e, scheme=s) == align_trajectory(a, e, scheme=s)  # type: ignore[arg-type]


def _reference_cost(a: list[Step], e: list[Step], free_inserts: bool) -> float:
    """Plain recursive edit distance with the same unit costs (an independent oracle)."""

    def mass(s: Step) -> float:
        return 1.0 + len(s.args)

    def sub(x: Step, y: Step) -> float:
        if x.tool != y.tool:
            return float("inf")
        keys = set(x.args) | set(y.args)
        return float(sum(1 for k in keys if x.args.get(k, object()) != y.args.get(k, object())))

    @cache
    def d(i: int, j: int) -> float:
        if i == 0 and j == 0:
            return 0.0
        best = float("inf")
        if i > 0 and j > 0:
            best = d(i - 1, j - 1) + sub(e[i - 1], a[j - 1])
        if i > 0:
            best = min(best, d(i - 1, j) + mass(e[i - 1]))
        if j > 0:
            best = min(best, d(i, j - 1) + (0.0 if free_inserts else mass(a[j - 1])))
        return best

    return d(len(e), len(a))


@cfg
@given(steps, steps)
def test_needleman_wunsch_is_optimal(a: list[Step], e: list[Step]) -> None:
    assert align_trajectory(a, e, scheme="exact").cost == _reference_cost(a, e, False)
    assert align_trajectory(a, e, scheme="in_order").cost == _reference_cost(a, e, True)
    # the traceback's operation costs add up to the total
    r = align_trajectory(a, e, scheme="exact")
    assert sum(o.cost for o in r.alignment) == r.cost
