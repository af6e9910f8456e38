"""Invariants every metric keeps: a scikit-learn-style common test (issue 17 item 7).

Walks every metric registered in the ``"metrics"`` namespace (whatever registers one is imported
first, so a new registered metric is covered without touching this file) plus the configurations
a user builds through the public constructors that registration does not cover (the four
trajectory schemes, the ``bfcl`` canonicaliser, a priced Cost-of-Pass, the ``output`` and
``final_state`` checkers), and checks on real demo episodes and on hypothesis-generated calls and
episodes:

1. bounds: a higher-is-better value is in [0, 1]; a lower-is-better one (a cost) is >= 0 or
   ``inf``; NaN only with a reason; the corpus aggregate obeys the same bounds;
2. determinism: the same inputs scored twice, by a freshly built instance and by a deep copy of
   the used metric, give equal Scores;
3. verdicts: the metric's verdict is a bool (a pass of a higher-is-better metric scores 1.0),
   ``higher_is_better`` is the metric's, and ``reason`` is a non-empty str;
4. ``aggregate([s]) == s.value`` (or what the metric documents instead, derived in a comment);
5. the aggregate is a ratio of sums read from the details, not a mean of values;
6. order-free metrics (tool calls, ``any_order``, ``superset``) ignore the order of the calls;
7. a Score survives pickle, deepcopy, ``dataclasses.asdict`` and the JSON codec for non-finite
   floats;
8. malformed predicted calls (untrusted model output) are scored as failures, never raised on.

A registered metric for which this file has no input material fails every test with a message
saying how to add it (:data:`MATERIAL`), rather than being skipped.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
import math
import pickle
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ek
import ek.agents
from ek.agents.base import Cost, Episode, RunProvenance, Step, TaskSpec, ToolSpec
from ek.agents.cost import per_million
from ek.agents.demo import baseline_agent, candidate_agent, load_tasks
from ek.agents.harness import TrialContext
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.policy import PolicyMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import SCHEMES, TrajectoryMetric
from ek.base import Score
from ek.grammar import FieldSpec
from ek.jsonio import from_json_safe, to_json_safe  # the one JSON codec for non-finite floats
from ek.registry import registered, resolve

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# ----------------------------------------------------------------------------- registration

_REGISTERS_METRIC = re.compile(r"""register\(\s*["']metrics["']""")


def _import_metric_registrations() -> None:
    """Import every core module whose source registers a metric (``import ek.agents`` covers
    today's; a module it does not import would otherwise be missed). Adapters are left out: they
    import their host frameworks and register no metric."""
    root = Path(ek.__file__).parent
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        if "adapters" in rel.parts or not _REGISTERS_METRIC.search(path.read_text("utf-8")):
            continue
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        importlib.import_module(".".join(parts))


_import_metric_registrations()

# ----------------------------------------------------------------------------- material


def _f1_from_sums(scores: Sequence[Score]) -> float:
    # Micro-F1 from the summed weighted counts: 2·TP / (2·TP + FP + FN); 1.0 when all are 0.
    tp, fp, fn = (math.fsum(float(s.detail[k]) for s in scores) for k in ("tp", "fp", "fn"))
    denom = 2.0 * tp + fp + fn
    return 1.0 if denom == 0 else 2.0 * tp / denom


def _trajectory_from_sums(scores: Sequence[Score]) -> float:
    # 1 - sum(cost) / sum(worst_case); 1.0 when nothing could cost (empty against empty).
    cost = math.fsum(float(s.detail["cost"]) for s in scores)
    worst = math.fsum(float(s.detail["worst_case"]) for s in scores)
    if worst == 0:
        return 1.0 if cost == 0 else 0.0
    return 1.0 - cost / worst


def _rate_from_sums(scores: Sequence[Score]) -> float:
    # The success rate: sum(successes) / sum(n).
    return sum(float(s.detail["successes"]) for s in scores) / sum(
        float(s.detail["n"]) for s in scores
    )


def _cost_of_pass_from_sums(scores: Sequence[Score]) -> float:
    # Cost-of-Pass: sum(dollars) / sum(successes); inf with no success; NaN when any dollars are
    # unknown (an unknown part makes the total unknown).
    ds = [s.detail["dollars"] for s in scores]
    if any(d is None for d in ds):
        return math.nan
    succ = sum(float(s.detail["successes"]) for s in scores)
    return math.inf if succ == 0 else math.fsum(float(d) for d in ds) / succ


def _cost_of_pass_of_one(s: Score) -> float:
    # CostPerSuccessMetric documents that a score's value is that episode's dollars (NaN when
    # unknown) while the aggregate is sum(dollars) / sum(successes). For one score d / successes:
    #   success (successes = 1): d / 1 = d = s.value;
    #   failure (successes = 0): d / 0 = inf ("inf when nothing succeeded"), not s.value = d;
    #   dollars unknown: NaN = s.value.
    if s.detail["dollars"] is None:
        return math.nan
    return s.value if s.detail["successes"] == 1 else math.inf


def _compliance_from_sums(scores: Sequence[Score]) -> float:
    # PolicyMetric: sum(compliance) / sum(n); an episode whose policies could not be checked has
    # compliance None, which makes the total unknown (NaN).
    cs = [s.detail["compliance"] for s in scores]
    if any(c is None for c in cs):
        return math.nan
    return math.fsum(float(c) for c in cs) / sum(float(s.detail["n"]) for s in scores)


def _value(s: Score) -> float:
    return s.value


def _never(metric: Any) -> bool:
    return False


@dataclass(frozen=True)
class Material:
    """What this file knows about a metric class: its inputs and its documented arithmetic.

    Args:
        kind: ``"calls"`` (predicted calls / episodes against gold calls) or ``"episodes"``
            (an episode against a task's gold).
        sums: The detail keys the aggregate sums.
        from_sums: The corpus aggregate recomputed from those sums.
        verdict: The detail key of the per-item verdict (a bool).
        mean_can_differ: Whether the ratio of sums can differ from the mean of the values.
        of_one: What ``aggregate([s])`` documents itself to be.
        order_free: Whether the metric (as configured) ignores the order of the calls.
    """

    kind: str
    sums: tuple[str, ...]
    from_sums: Callable[[Sequence[Score]], float]
    verdict: str
    mean_can_differ: bool = True
    of_one: Callable[[Score], float] = _value
    order_free: Callable[[Any], bool] = _never


#: Input material and arithmetic by metric class. A new metric class needs an entry here.
MATERIAL: dict[type, Material] = {
    ToolCallMetric: Material(
        "calls", ("tp", "fp", "fn"), _f1_from_sums, "passed", order_free=lambda m: True
    ),
    TrajectoryMetric: Material(
        "calls",
        ("cost", "worst_case"),
        _trajectory_from_sums,
        "passed",
        order_free=lambda m: m.scheme in ("any_order", "superset"),
    ),
    # Every task-success score has n = 1, so its rate sum(successes) / sum(n) IS the mean of the
    # 0/1 values: there is no input on which they differ.
    TaskSuccessMetric: Material(
        "episodes", ("successes", "n"), _rate_from_sums, "passed", mean_can_differ=False
    ),
    # Cost-of-Pass scores carry the task verdict as ``success`` (their value is dollars, not a
    # verdict), the flag whose count is the aggregate's denominator.
    CostPerSuccessMetric: Material(
        "episodes",
        ("dollars", "successes", "n"),
        _cost_of_pass_from_sums,
        "success",
        of_one=_cost_of_pass_of_one,
    ),
    # Every policy score has n = 1 and its value is its compliance, so the ratio of sums is the
    # mean of the values (an unchecked episode: NaN in both).
    PolicyMetric: Material(
        "episodes", ("compliance", "n"), _compliance_from_sums, "passed", mean_can_differ=False
    ),
}


def _lookup(metric: Any) -> Material | None:
    for cls in type(metric).__mro__:
        if cls in MATERIAL:
            return MATERIAL[cls]
    return None


def material(metric: Any) -> Material:
    """The material for ``metric``; fails (never skips) when there is none."""
    mat = _lookup(metric)
    if mat is None:
        pytest.fail(
            f"no input material for metric {getattr(metric, 'name', '?')!r} "
            f"({type(metric).__module__}.{type(metric).__qualname__}): add an entry for its class "
            f"to MATERIAL in tests/test_metric_invariants.py (kind 'calls' or 'episodes', the "
            f"detail keys its aggregate sums, the aggregate recomputed from them, its verdict key)"
        )
    return mat


# The prices of the priced configuration: the demo agents' cache reads get a rate too, so their
# dollars are known.
PRICE = per_million(2.0, 6.0, cache_read=0.2)


def _scheme(s: Any) -> Callable[[], Any]:
    return lambda: TrajectoryMetric(s)


#: Configurations a user reaches through the public constructors, beyond the registered ones:
#: how to build each (the determinism test builds a second, fresh one).
CONFIGURED: dict[str, Callable[[], Any]] = {
    **{f"trajectory[{s}]": _scheme(s) for s in SCHEMES},
    "tool_calls[bfcl]": lambda: ToolCallMetric(canonicalizer="bfcl"),
    "cost_per_success[priced,final_state]": lambda: CostPerSuccessMetric(
        "final_state", price=PRICE
    ),
    "task_success[output]": lambda: TaskSuccessMetric("output"),
    "task_success[final_state]": lambda: TaskSuccessMetric("final_state"),
}

CASES: dict[str, Any] = {
    **{f"registered/{n}": resolve("metrics", n) for n in registered("metrics")},
    **{name: build() for name, build in CONFIGURED.items()},
}


def case_name(metric: Any) -> str:
    """The id under which ``metric`` is tested."""
    return next(n for n, m in CASES.items() if m is metric)


def fresh_instance(metric: Any) -> Any:
    """A new instance configured as ``metric``, built through its public constructor.

    A registered metric is rebuilt as its class's default when that is how it is configured
    (same ``repr``); otherwise (a registered configured instance) it is deep-copied.
    """
    build = CONFIGURED.get(case_name(metric))
    if build is not None:
        return build()
    try:
        new = type(metric)()
    except TypeError:  # a class that needs configuration
        new = None
    return new if new is not None and repr(new) == repr(metric) else copy.deepcopy(metric)


ALL = [pytest.param(m, id=name) for name, m in CASES.items()]


def _cases_where(pred: Callable[[Any, Material], bool]) -> list[Any]:
    out = []
    for name, m in CASES.items():
        mat = _lookup(m)
        if mat is None or pred(m, mat):  # no material: kept, so that it fails
            out.append(pytest.param(m, id=name))
    return out


ORDER_FREE = _cases_where(lambda m, mat: mat.order_free(m))
CALLS = _cases_where(lambda m, mat: mat.kind == "calls")

# ----------------------------------------------------------------------------- demo material


@cache
def demo_pairs() -> tuple[tuple[Episode, TaskSpec], ...]:
    """Real episodes of the embedded demo: both scripted agents, two seeded trials, every task."""
    tasks = load_tasks()
    return tuple(
        (agent(task, TrialContext(task.task_id, seed, seed, RunProvenance(seed=seed), k=2)), task)
        for agent in (baseline_agent(), candidate_agent())
        for seed in (0, 1)
        for task in tasks
    )


@cache
def episode_pairs() -> tuple[tuple[Episode, Any], ...]:
    """Demo episodes against their TaskSpec and against answer strings, plus variants: an agent
    error, no recorded usage, dollars recorded by the source."""
    pairs: list[tuple[Episode, Any]] = []
    for i, (ep, task) in enumerate(demo_pairs()):
        pairs.append((ep, task))
        pairs.append((ep, ep.output if i % 2 else "not what it said"))
        if i % 10 == 0:
            pairs.append((ep.replace(error="agent timed out after 30 s"), task))
            pairs.append((ep.replace(cost=()), ep.output))
        if i % 5 == 1:
            billed = Cost(output_tokens=1000, model="billed-model", dollars=0.01 * (i + 1))
            pairs.append((ep.replace(cost=(billed,)), ep.output if i % 3 else task))
    return tuple(pairs)


def fixed_pairs(metric: Any) -> Sequence[tuple[Any, Any]]:
    """The fixed (non-generated) inputs for ``metric``."""
    return demo_pairs() if material(metric).kind == "calls" else episode_pairs()


@cache
def _fixed_scores(name: str) -> tuple[Score, ...]:
    m = CASES[name]
    return tuple(m(p, g) for p, g in fixed_pairs(m))


def fixed_scores(metric: Any) -> tuple[Score, ...]:
    """The metric's scores of its fixed inputs (computed once per case)."""
    return _fixed_scores(case_name(metric))


# ----------------------------------------------------------------------------- generated material

MALFORMED = (
    [{"": {"x": 1}}],
    [{"name": 3}],
    [{"name": "f", "arguments": "{bad"}],
    [42],
)

_TOOLS = ("search", "lookup", "refund")
_values = st.one_of(
    st.integers(-2, 3),
    st.sampled_from(["a", "B ", "c  d", "Ünïcode"]),
    st.booleans(),
    st.floats(-2, 2, allow_nan=False).map(lambda x: round(x, 1)),
    st.lists(st.integers(0, 2), max_size=2),
)
_args = st.dictionaries(st.sampled_from(["x", "y", "z"]), _values, max_size=3)
_steps = st.builds(Step, st.sampled_from(_TOOLS), _args)
_pred_call = st.one_of(
    _steps,
    _steps.map(lambda s: {"name": s.tool, "arguments": json.dumps(dict(s.args))}),  # OpenAI
    _steps.map(lambda s: {s.tool: dict(s.args)}),  # BFCL
    st.sampled_from([c for m in MALFORMED for c in m]),
)
_GRAMMAR = (
    ToolSpec("search", [FieldSpec("x", required=False, importance=2.0)]),
    ToolSpec("lookup", [FieldSpec("y", required=False, importance=0.5)], weight=1.5),
    ToolSpec("refund", [FieldSpec("z", required=False, importance=3.0)], destructive=True),
)
_gold_lists = st.lists(_steps, max_size=4)
_golds = st.one_of(
    _gold_lists,
    _gold_lists.map(lambda g: TaskSpec("generated", tools=_GRAMMAR, gold_calls=g)),
)


@st.composite
def call_pairs(draw: Any) -> tuple[Any, Any]:
    """A prediction (a list of calls in several shapes, malformed ones included, or an Episode)
    and a gold (a list of Steps, or a TaskSpec with weighted tools)."""
    gold = draw(_golds)
    calls = draw(st.lists(_pred_call, max_size=5))
    if calls and all(isinstance(c, Step) for c in calls) and draw(st.booleans()):
        return Episode("generated", trajectory=calls), gold
    return calls, gold


_costs = st.builds(
    Cost,
    input_tokens=st.integers(0, 2_000_000),
    output_tokens=st.integers(0, 2_000_000),
    cache_read_tokens=st.sampled_from([0, 0, 5000]),
    model=st.sampled_from(["demo-large", "unknown-model"]),
    role=st.sampled_from(["agent", "agent", "judge"]),
    dollars=st.one_of(st.none(), st.floats(0, 5, allow_nan=False, allow_infinity=False)),
)
_answers = st.sampled_from(["42", " Paris ", "paris", 42, 4.5, "", None])
_states = st.sampled_from([None, {"o1": "refunded"}, {"o1": "open"}])


@st.composite
def episode_pairs_generated(draw: Any) -> tuple[Episode, Any]:
    """An episode (answer, final state, usage in several roles and models, maybe an agent
    error) and a gold: an answer, a state, or a TaskSpec holding one."""
    ep = Episode(
        "generated",
        output=draw(_answers),
        final_state=draw(_states),
        cost=draw(st.lists(_costs, max_size=2)),
        error=draw(st.sampled_from([None, None, "agent raised RuntimeError"])),
    )
    gold = draw(st.one_of(_answers, _states))
    if draw(st.booleans()):
        gold = TaskSpec("generated", gold=gold)
    return ep, gold


def strategy(metric: Any) -> Any:
    """The hypothesis strategy of (prediction, gold) pairs for ``metric``."""
    return call_pairs() if material(metric).kind == "calls" else episode_pairs_generated()


GENERATED = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _pairs(data: Any, metric: Any, n: int = 2) -> list[tuple[Any, Any]]:
    return data.draw(st.lists(strategy(metric), min_size=1, max_size=n), label="pairs")


# ----------------------------------------------------------------------------- helpers


def same(a: float, b: float) -> bool:
    """Equal floats, NaN equal to NaN, within a few ulps (a sum taken in another order)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def check_bounds(metric: Any, s: Score, where: Any) -> None:
    """Invariant 1 for one score."""
    assert isinstance(s, Score), f"{where}: returned {type(s).__name__}"
    assert type(s.value) is float, f"{where}: value {s.value!r} is not a float"
    hib = s.detail.get("higher_is_better")
    assert hib is metric.higher_is_better, (
        f"{where}: detail['higher_is_better'] = {hib!r}, metric says {metric.higher_is_better!r}"
    )
    if math.isnan(s.value):
        assert s.reason.strip(), f"{where}: NaN without a reason: {dict(s.detail)!r:.300}"
    elif hib:
        assert 0.0 <= s.value <= 1.0, f"{where}: higher-is-better value {s.value} not in [0, 1]"
    else:
        assert s.value >= 0.0, f"{where}: cost {s.value} is negative"


def check_aggregate_bounds(metric: Any, scores: Sequence[Score], where: str) -> None:
    """Invariant 1 for a corpus aggregate: bounded as the values are; NaN only from a NaN."""
    agg = metric.aggregate(list(scores))
    assert isinstance(agg, float), f"{where}: aggregate {agg!r} is not a float"
    if math.isnan(agg):
        assert not scores or any(math.isnan(s.value) for s in scores), (
            f"{where}: aggregate NaN although every value is defined"
        )
    elif metric.higher_is_better:
        assert 0.0 <= agg <= 1.0, f"{where}: aggregate {agg} not in [0, 1]"
    else:
        assert agg >= 0.0, f"{where}: aggregate cost {agg} is negative"


def check_verdict(metric: Any, s: Score, where: Any) -> None:
    """Invariant 3 for one score."""
    mat = material(metric)
    v = s.detail.get(mat.verdict)
    assert isinstance(v, bool), f"{where}: detail[{mat.verdict!r}] = {v!r} is not a bool"
    p = s.detail.get("passed")
    assert p is None or isinstance(p, bool), f"{where}: detail['passed'] = {p!r}"
    if metric.higher_is_better and p is True:
        assert s.value == 1.0, f"{where}: passed with a score of {s.value}"
    r = s.detail.get("reason")
    assert isinstance(r, str) and r.strip(), f"{where}: reason {r!r} is not a non-empty str"
    assert s.detail.get("higher_is_better") is metric.higher_is_better, where


def check_one(metric: Any, s: Score, where: Any) -> None:
    """Invariant 4: ``aggregate([s])`` is what the metric documents (``s.value`` as a rule)."""
    got, want = metric.aggregate([s]), material(metric).of_one(s)
    assert same(got, want), f"{where}: aggregate([s]) = {got!r}, documented {want!r}"


def check_ratio_of_sums(metric: Any, scores: Sequence[Score], where: Any) -> None:
    """Invariant 5: the aggregate is recomputed from the summed details."""
    got, want = metric.aggregate(list(scores)), material(metric).from_sums(scores)
    assert same(got, want), (
        f"{where}: aggregate {got!r} != ratio of the summed "
        f"{material(metric).sums} {want!r} for {[dict(s.detail) for s in scores]!r:.500}"
    )


def decoded(s: Score) -> Score:
    """``s`` through ``to_dict`` and a strict JSON round trip with the project's codec."""
    text = json.dumps(to_json_safe(s.to_dict()), allow_nan=False)
    back = from_json_safe(json.loads(text))
    return Score(back["value"], back["detail"])


def check_round_trips(s: Score, where: Any) -> None:
    """Invariant 7 for one score."""
    assert pickle.loads(pickle.dumps(s)) == s, f"{where}: pickle round trip differs"
    assert copy.deepcopy(s) == s, f"{where}: deepcopy differs"
    assert copy.copy(s) == s, f"{where}: copy differs"
    d = dataclasses.asdict(s)
    assert set(d) == {"value", "detail"}, where
    assert Score(**d) == s, f"{where}: Score(**asdict(s)) differs"
    back = decoded(s)
    assert same(back.value, s.value), f"{where}: JSON value {back.value!r} != {s.value!r}"
    assert back == s, f"{where}: JSON detail differs: {dict(back.detail)!r:.300}"


def permuted(pred: Any, order: Sequence[int]) -> Any:
    """``pred`` with its calls in ``order`` (an Episode keeps everything else)."""
    if isinstance(pred, Episode):
        steps = list(pred.trajectory)
        return pred.replace(trajectory=[steps[i] for i in order])
    return [pred[i] for i in order]


def _calls_of(pred: Any) -> int:
    return len(pred.trajectory) if isinstance(pred, Episode) else len(pred)


def check_permutation(metric: Any, pred: Any, gold: Any, order: Sequence[int], where: Any) -> None:
    """Invariant 6: the value and the summed counts do not depend on the calls' order."""
    a, b = metric(pred, gold), metric(permuted(pred, order), gold)
    assert a.value == b.value, f"{where}: order {list(order)} changed {a.value} to {b.value}"
    for k in material(metric).sums:
        assert a.detail[k] == b.detail[k], (
            f"{where}: order {list(order)} changed {k} {a.detail[k]} to {b.detail[k]}"
        )
    assert a.detail[material(metric).verdict] == b.detail[material(metric).verdict], where


def _labelled(metric: Any) -> Iterator[tuple[str, Any, Any, Score]]:
    for i, ((p, g), s) in enumerate(zip(fixed_pairs(metric), fixed_scores(metric))):
        yield f"fixed #{i} ({getattr(p, 'task_id', 'calls')})", p, g, s


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("name", registered("metrics"))
def test_every_registered_metric_has_material(name: str) -> None:
    # A new registered metric fails here (and in every invariant below) until it has material.
    material(resolve("metrics", name))


def test_cases_cover_every_scheme_and_registered_metric() -> None:
    assert {f"trajectory[{s}]" for s in SCHEMES} <= set(CASES)
    assert {f"registered/{n}" for n in registered("metrics")} <= set(CASES)
    assert len(fixed_scores(CASES["registered/trajectory"])) == len(demo_pairs()) == 120


# 1. bounds


@pytest.mark.parametrize("metric", ALL)
def test_values_within_declared_bounds(metric: Any) -> None:
    for where, _, _, s in _labelled(metric):
        check_bounds(metric, s, where)
    check_aggregate_bounds(metric, fixed_scores(metric), "fixed corpus")


@pytest.mark.parametrize("metric", ALL)
@GENERATED
@given(data=st.data())
def test_values_within_declared_bounds_generated(metric: Any, data: Any) -> None:
    pairs = _pairs(data, metric)
    scores = [metric(p, g) for p, g in pairs]
    for (p, g), s in zip(pairs, scores):
        check_bounds(metric, s, (p, g))
    check_aggregate_bounds(metric, scores, "generated corpus")


# 2. determinism


@pytest.mark.parametrize("metric", ALL)
def test_deterministic(metric: Any) -> None:
    # Scored again, in reverse order, by the same metric and by a fresh instance (no state
    # leaks from one call to the next through the metric's caches).
    pairs = list(fixed_pairs(metric))
    first = fixed_scores(metric)
    fresh = fresh_instance(metric)
    again = [metric(p, g) for p, g in reversed(pairs)][::-1]
    other = [fresh(p, g) for p, g in reversed(pairs)][::-1]
    for i, (s, a, b) in enumerate(zip(first, again, other)):
        assert a == s, f"fixed #{i}: scored twice, {a!r:.300} != {s!r:.300}"
        assert b == s, f"fixed #{i}: a fresh instance gives {b!r:.300} != {s!r:.300}"


@pytest.mark.parametrize("metric", ALL)
@GENERATED
@given(data=st.data())
def test_deterministic_generated(metric: Any, data: Any) -> None:
    fresh = fresh_instance(metric)
    for p, g in _pairs(data, metric):
        s = metric(p, g)
        assert metric(p, g) == s
        assert fresh(p, g) == s


# Every ek object a used metric holds (a ModelPrice, a TaskSpec's grammar in its cache) keeps
# its read-only mappings as ek.base.ReadOnlyDict, which deep-copies and pickles as itself.
DEEPCOPY = [pytest.param(m, id=name) for name, m in CASES.items()]


@pytest.mark.parametrize("metric", DEEPCOPY)
def test_a_deep_copy_of_a_used_metric_scores_the_same(metric: Any) -> None:
    first = fixed_scores(metric)  # the metric has been used: its caches are warm
    twin = copy.deepcopy(metric)
    assert repr(twin) == repr(metric)
    for i, ((p, g), s) in enumerate(zip(fixed_pairs(metric), first)):
        assert twin(p, g) == s, f"fixed #{i}: the deep copy scores otherwise"


# 3. verdicts and reasons


@pytest.mark.parametrize("metric", ALL)
def test_verdict_is_bool_and_reason_is_given(metric: Any) -> None:
    for where, _, _, s in _labelled(metric):
        check_verdict(metric, s, where)
    verdicts = {s.detail[material(metric).verdict] for s in fixed_scores(metric)}
    assert len(verdicts) == 2, f"the fixed material gives only {verdicts}: add a case"


@pytest.mark.parametrize("metric", ALL)
@GENERATED
@given(data=st.data())
def test_verdict_is_bool_and_reason_is_given_generated(metric: Any, data: Any) -> None:
    for p, g in _pairs(data, metric):
        check_verdict(metric, metric(p, g), (p, g))


# 4. aggregate of one


@pytest.mark.parametrize("metric", ALL)
def test_aggregate_of_one_is_its_value(metric: Any) -> None:
    for where, _, _, s in _labelled(metric):
        check_one(metric, s, where)


@pytest.mark.parametrize("metric", ALL)
@GENERATED
@given(data=st.data())
def test_aggregate_of_one_is_its_value_generated(metric: Any, data: Any) -> None:
    for p, g in _pairs(data, metric):
        check_one(metric, metric(p, g), (p, g))


# 5. ratio of sums


def _discriminating_pair(metric: Any) -> tuple[Score, Score] | None:
    """Two fixed scores whose ratio of sums differs from the mean of their values."""
    scores = fixed_scores(metric)
    for i, a in enumerate(scores):
        for b in scores[i + 1 :]:
            agg = metric.aggregate([a, b])
            mean = (a.value + b.value) / 2
            if math.isfinite(mean) and not same(agg, mean):
                return a, b
    return None


@pytest.mark.parametrize("metric", ALL)
def test_aggregate_is_a_ratio_of_sums(metric: Any) -> None:
    scores = fixed_scores(metric)
    rnd = random.Random(17)
    for _ in range(200):
        pair = rnd.sample(scores, 2)
        check_ratio_of_sums(metric, pair, "fixed pair")
    check_ratio_of_sums(metric, scores, "fixed corpus")
    pair = _discriminating_pair(metric)
    if material(metric).mean_can_differ:
        # The test discriminates: on this pair the mean of the values is another number.
        assert pair is not None, "no fixed pair where the mean differs from the ratio: add one"
        a, b = pair
        assert not same(metric.aggregate([a, b]), (a.value + b.value) / 2)
        check_ratio_of_sums(metric, pair, "discriminating pair")
    else:
        assert pair is None, "the metric documents the ratio and the mean as equal"


@pytest.mark.parametrize("metric", ALL)
@GENERATED
@given(data=st.data())
def test_aggregate_is_a_ratio_of_sums_generated(metric: Any, data: Any) -> None:
    a, b = data.draw(strategy(metric)), data.draw(strategy(metric))
    check_ratio_of_sums(metric, [metric(*a), metric(*b)], (a, b))


def test_ratio_of_sums_differs_from_mean_hand_derived() -> None:
    # Tool calls, unit costs. Pair 1: one right call of two gold (tp 2 = weight + arg, fn 2):
    # F1 = 4 / (4 + 2) = 2/3. Pair 2: nothing predicted, one gold call (fn 2): F1 = 0.
    # Micro-F1 = 2·2 / (2·2 + 0 + 4) = 0.5; the mean of the values is 1/3.
    m = ToolCallMetric()
    s1 = m([Step("f", {"x": 1})], [Step("f", {"x": 1}), Step("g", {"y": 2})])
    s2 = m([], [Step("h", {"z": 3})])
    assert (s1.value, s2.value) == (pytest.approx(2 / 3), 0.0)
    assert m.aggregate([s1, s2]) == 0.5
    # Trajectory, exact: pair 1 costs 2 (g missing) of worst 6 (delete f, g = 4; insert f = 2);
    # pair 2 costs 2 of 2. 1 - 4/8 = 0.5; the mean of 2/3 and 0 is 1/3.
    t = TrajectoryMetric("exact")
    a = t([Step("f", {"x": 1})], [Step("f", {"x": 1}), Step("g", {"y": 2})])
    b = t([], [Step("h", {"z": 3})])
    assert (a.detail["cost"], a.detail["worst_case"]) == (2.0, 6.0)
    assert (b.detail["cost"], b.detail["worst_case"]) == (2.0, 2.0)
    assert t.aggregate([a, b]) == 0.5
    # Cost-of-Pass: a success for $1 and a failure for $3: (1 + 3) / 1 = $4 per success; the
    # mean of the per-episode dollars is $2.
    c = CostPerSuccessMetric("output")
    won = c(Episode("a", output="yes", cost=Cost(output_tokens=1, dollars=1.0)), "yes")
    lost = c(Episode("b", output="no", cost=Cost(output_tokens=1, dollars=3.0)), "yes")
    assert c.aggregate([won, lost]) == 4.0
    assert (won.value + lost.value) / 2 == 2.0


# 6. permutation invariance


@pytest.mark.parametrize("metric", ORDER_FREE)
def test_order_free_metrics_ignore_call_order(metric: Any) -> None:
    rnd = random.Random(6)
    for where, p, g, _ in _labelled(metric):
        order = list(range(_calls_of(p)))
        for _ in range(2):
            rnd.shuffle(order)
            check_permutation(metric, p, g, order, where)


@pytest.mark.parametrize("metric", ORDER_FREE)
@GENERATED
@given(data=st.data())
def test_order_free_metrics_ignore_call_order_generated(metric: Any, data: Any) -> None:
    p, g = data.draw(strategy(metric))
    order = data.draw(st.permutations(range(_calls_of(p))), label="order")
    check_permutation(metric, p, g, order, (p, g))


# 7. round trips


@pytest.mark.parametrize("metric", ALL)
def test_scores_round_trip(metric: Any) -> None:
    for where, _, _, s in _labelled(metric):
        check_round_trips(s, where)


@pytest.mark.parametrize("metric", ALL)
@GENERATED
@given(data=st.data())
def test_scores_round_trip_generated(metric: Any, data: Any) -> None:
    for p, g in _pairs(data, metric):
        check_round_trips(metric(p, g), (p, g))


def test_non_finite_values_round_trip() -> None:
    # The codec's reason to exist: a NaN value (dollars unknown) and infinities.
    m = CostPerSuccessMetric()
    s = m(Episode("t", output="x"), "x")  # no usage recorded: dollars unknown, NaN
    assert math.isnan(s.value) and s.detail["dollars"] is None and s.reason
    check_round_trips(s, "NaN value")
    inf = Score(math.inf, {"reason": "no success", "higher_is_better": False, "x": -math.inf})
    check_round_trips(inf, "infinite value")


# 8. malformed predictions


@pytest.mark.parametrize("bad", MALFORMED, ids=["empty-name", "int-name", "bad-json", "int-call"])
@pytest.mark.parametrize("metric", CALLS)
def test_malformed_predictions_are_scored_not_raised(metric: Any, bad: list[Any]) -> None:
    mat = material(metric)
    task = demo_pairs()[0][1]
    golds = [[Step("f", {"x": 1})], [Step("f", {"x": 1}), Step("g", {"y": "a"})], task]
    for gold in golds:
        s = metric(bad, gold)
        where = (bad, gold)
        check_bounds(metric, s, where)
        check_verdict(metric, s, where)
        assert s.detail[mat.verdict] is False, f"{where}: a malformed call passed"
        if metric.higher_is_better:
            assert s.value < 1.0, f"{where}: a malformed call scored {s.value}"
        check_round_trips(s, where)
        # Beside a correct call it is still scored (in_order and superset allow extras).
        mixed = metric([*bad, *list(_gold_calls(gold))], gold)
        check_bounds(metric, mixed, ("mixed", where))
        check_verdict(metric, mixed, ("mixed", where))


def _gold_calls(gold: Any) -> Sequence[Step]:
    return list(gold.gold_calls or ()) if isinstance(gold, TaskSpec) else gold
