"""Issue 22: ``report`` and ``gate`` read a run once, as a stream, keeping per-task summaries.

Every figure must equal what the non-streaming path gives: the reference is every trial as
``load_run(path)`` reads it back (episodes, verdicts and every trial's Scores, aggregated here
over the flat list of Scores, as the report once did) and, for the gate, the task bootstrap written directly below (the tasks in sorted
order, ``random.Random(seed).choices``, every drawn task's per-trial Scores re-aggregated,
``ek.stats.percentile_interval``). Equality is to 1e-12, absolute: per-task sums add the same
numbers in another order.
"""

from __future__ import annotations

import io
import json
import math
import random
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ek.agents import cli
from ek.agents._run.sums import merge_scores, metric_aggregator
from ek.agents._run.tally import MetricTally
from ek.agents.base import Episode, RunProvenance, TaskSpec
from ek.agents.cost import cost_report, pricing_from_dict
from ek.agents.demo import run_demo
from ek.agents.harness import RunSummary, agent_regression_gate, load_run, run_suite
from ek.base import Score
from ek.registry import register, unregister

TOL = 1e-12


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo's two trial stores (30 tasks x k=3, the demo's three metrics, its slices) and the
    baseline it froze (a baseline file as ``save_agent_baseline`` writes it)."""
    folder = tmp_path_factory.mktemp("demo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_demo(folder, k=3, inspect=False, plots=False, stream=io.StringIO(), progress=False)
    return {
        "baseline": folder / "baseline.trials.jsonl",
        "candidate": folder / "candidate.trials.jsonl",
        "frozen": folder / "baseline.json",
    }


def _close(a: Any, b: Any, where: str = "") -> None:
    """Equal JSON-like figures, floats to 1e-12 (NaN equals NaN, inf equals inf)."""
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
    if numbers and (isinstance(a, float) or isinstance(b, float)):
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), where
        elif math.isinf(a) or math.isinf(b):
            assert a == b, where
        else:
            assert abs(a - b) <= TOL, f"{where}: {a!r} != {b!r}"
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        assert set(a) == set(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
        return
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
        return
    assert a == b, f"{where}: {a!r} != {b!r}"


@pytest.mark.parametrize("agent", ["baseline", "candidate"])
def test_streamed_summary_equals_the_full_one(demo: dict[str, Path], agent: str) -> None:
    full = load_run(demo[agent])  # every episode and every trial's Score
    lean = load_run(demo[agent], episodes=False)  # per-task summaries only
    assert full.episodes is not None and lean.episodes is None and lean.verdicts is None
    assert dict(lean.counts) == dict(full.counts) and list(lean.counts) == list(full.counts)
    assert lean.slices == full.slices and lean.k == full.k and lean.infra == full.infra
    assert (
        set(lean.metrics)
        == set(full.metrics)
        == {"cost_per_success", "policy", "tool_calls", "trajectory"}
    )
    for name, m in full.metrics.items():
        agg, exact = metric_aggregator(name)
        flat = [s for ss in m.scores.values() for s in ss]
        assert exact and m.value == agg(flat)  # the full path: aggregate over every trial
        s = lean.metrics[name]
        _close(s.value, m.value, name)
        assert s.higher_is_better == m.higher_is_better
        # one merged Score per task, standing for the task's trials
        assert list(s.scores) == list(m.scores)
        assert all(len(ss) == 1 for ss in s.scores.values())
        assert s.n_scores == m.n_scores == full.n_trials == 90  # 30 tasks x k=3
    price, prices = pricing_from_dict(full.pricing)
    assert full.episodes is not None and full.verdicts is not None
    ref = cost_report(full.episodes, price=price, prices=prices, successes=full.verdicts)
    _close(lean.cost, ref.to_dict(), "cost")
    _close(full.cost, ref.to_dict(), "cost")


def _reference_report(path: Path) -> dict[str, Any]:
    """The report's cost figures as the report computed them before: from the episodes."""
    s = load_run(path)
    assert s.episodes is not None and s.verdicts is not None
    price, prices = pricing_from_dict(s.pricing)
    eps, oks = list(s.episodes), list(s.verdicts)
    slices = {}
    for name, ids in s.slices.items():
        idx = [i for i, e in enumerate(eps) if e.task_id in set(ids)]
        slices[name] = cost_report(
            [eps[i] for i in idx], price=price, prices=prices, successes=[oks[i] for i in idx]
        ).to_dict()
    return {
        "cost": cost_report(eps, price=price, prices=prices, successes=oks).to_dict(),
        "slices": slices,
        "failures": sum(1 for e in eps if e.error is not None),
        "metrics": {n: m.value for n, m in s.metrics.items()},
    }


@pytest.mark.parametrize("agent", ["baseline", "candidate"])
def test_report_figures_equal_the_episode_path(
    demo: dict[str, Path], agent: str, capsys: Any
) -> None:
    assert cli.main(["report", str(demo[agent]), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = _reference_report(demo[agent])
    _close(got["cost"], json.loads(json.dumps(ref["cost"])), "cost")
    assert set(got["slices"]) == set(ref["slices"]) and got["slices"]
    for name, sd in got["slices"].items():
        _close(sd["cost"], json.loads(json.dumps(ref["slices"][name])), f"slice {name}")
    assert got["agent_failures"] == ref["failures"]
    for name, value in ref["metrics"].items():
        _close(got["metrics"][name]["value"], value, name)
        assert got["metrics"][name]["n"] == got["n_trials"]


def _direct_bootstrap(
    agg: Callable[[Sequence[Score]], float],
    cur: Mapping[str, Sequence[Score]],
    base: Mapping[str, Sequence[Score]],
    shared: Sequence[str] | None,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> tuple[float, float, float]:
    """The gate's metric bootstrap written directly (its point, low, high): the tasks in sorted
    order, drawn with ``random.Random(seed).choices`` (the current run's, then the baseline's,
    or the shared tasks once), every drawn task's per-trial Scores re-aggregated."""
    from ek.stats import percentile_interval

    def flat(scores: Mapping[str, Sequence[Score]], ids: Sequence[str]) -> list[Score]:
        return [s for t in ids for s in scores[t]]

    cur_ids = sorted(shared if shared is not None else cur)
    base_ids = sorted(shared if shared is not None else base)
    point = agg(flat(cur, cur_ids)) - agg(flat(base, base_ids))
    rng = random.Random(seed)
    reps = []
    for _ in range(n_resamples):
        dc = rng.choices(cur_ids, k=len(cur_ids))
        db = dc if shared is not None else rng.choices(base_ids, k=len(base_ids))
        reps.append(agg(flat(cur, dc)) - agg(flat(base, db)))
    n = min(len(cur_ids), len(base_ids))  # the expanded percentile interval's tasks
    iv = percentile_interval(point, reps, confidence, "direct", n=n)
    return iv.point, iv.low, iv.high


@pytest.mark.parametrize("stratified", [False, True])
def test_gate_intervals_equal_the_trial_level_bootstrap(
    demo: dict[str, Path], stratified: bool
) -> None:
    """Same seed, same draws: resampling tasks from per-task sums gives the intervals a direct
    bootstrap gives by re-aggregating every drawn task's trials (to 1e-12)."""
    full_b, full_c = load_run(demo["baseline"]), load_run(demo["candidate"])
    lean_b = load_run(demo["baseline"], episodes=False)
    lean_c = load_run(demo["candidate"], episodes=False)
    kw: dict[str, Any] = {"stratified": stratified, "allow_undefined": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g_full = agent_regression_gate(full_c, full_b, **kw)
        g_lean = agent_regression_gate(lean_c, lean_b, **kw)
    assert [c.name for c in g_full.checks] == [c.name for c in g_lean.checks]
    metric_checks = [c for c in g_lean.checks if c.kind == "metric"]
    assert {c.name for c in metric_checks} == set(full_b.metrics)
    for a, b in zip(g_full.checks, g_lean.checks):
        assert a.verdict == b.verdict, a.name
        _close(
            (a.interval.point, a.interval.low, a.interval.high),
            (b.interval.point, b.interval.low, b.interval.high),
            a.name,
        )
    assert g_full.passed == g_lean.passed and g_full.warnings == g_lean.warnings
    shared = None
    if stratified:
        shared = sorted(set(full_b.counts) & set(full_c.counts))  # as the gate pairs them
    for check in metric_checks:
        agg, _ = metric_aggregator(check.name)
        # every trial's Scores, read once (a store's are read back from its file each time
        # they are iterated, and the direct bootstrap iterates them 2,000 times)
        mc, mb = (
            {t: tuple(ss) for t, ss in run.metrics[check.name].scores.items()}
            for run in (full_c, full_b)
        )
        want = _direct_bootstrap(agg, mc, mb, shared, 0.95, 2000, 0)
        got = (check.interval.point, check.interval.low, check.interval.high)
        _close(got, want, check.name)


def test_a_baseline_written_before_reads_and_gates_the_same(
    demo: dict[str, Path], tmp_path: Path
) -> None:
    """A baseline file with every trial's Scores (as written before) and one with merged
    per-task Scores gate a run identically."""
    full_b = load_run(demo["baseline"])
    old = tmp_path / "old.json"
    old.write_text(json.dumps(full_b.to_dict()))
    new = tmp_path / "new.json"
    new.write_text(json.dumps(load_run(demo["baseline"], episodes=False).to_dict()))
    a, b = load_run(old), load_run(new)
    assert all(len(ss) == 3 for ss in a.metrics["tool_calls"].scores.values())
    assert all(len(ss) == 1 for ss in b.metrics["tool_calls"].scores.values())
    assert b.metrics["tool_calls"].n_scores == a.metrics["tool_calls"].n_scores == 90
    cur = load_run(demo["candidate"], episodes=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ga = agent_regression_gate(cur, a, allow_undefined=True)
        gb = agent_regression_gate(cur, b, allow_undefined=True)
    for x, y in zip(ga.checks, gb.checks):
        _close(
            (x.interval.point, x.interval.low, x.interval.high),
            (y.interval.point, y.interval.low, y.interval.high),
            x.name,
        )


class MedianOfTrials:
    """A registered custom metric whose aggregate is no ratio of sums: the median."""

    name = "g1_median_of_trials"
    higher_is_better = True

    def __call__(self, pred: Any, gold: Any) -> Score:
        return Score(float(len(str(pred.output))), {"passed": True})

    def aggregate(self, scores: Sequence[Score]) -> float:
        vals = sorted(s.value for s in scores)
        if not vals:
            return math.nan
        mid = len(vals) // 2
        return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


@pytest.fixture
def median_registered() -> Iterator[None]:
    # registered only for the test that needs it: a metric left in the registry would join
    # every registry-driven test collected after this module (the fuzz and invariant tests)
    register("metrics", MedianOfTrials.name, MedianOfTrials())
    try:
        yield
    finally:
        unregister("metrics", MedianOfTrials.name)


@pytest.mark.usefixtures("median_registered")
def test_a_custom_metric_keeps_its_scores(tmp_path: Path) -> None:
    """Not a declared ratio of sums: its Scores are kept whole, its aggregate is its own."""
    store = tmp_path / "s.jsonl"

    def agent(task: TaskSpec, context: Any) -> str:
        return "x" * (1 + context.rng.randrange(9))

    tasks = [TaskSpec(f"t{i}", gold="x") for i in range(4)]
    run_suite(
        agent, tasks, k=5, metrics=[MedianOfTrials(), "task_success"], store=str(store), seed=3
    )
    full, lean = load_run(store), load_run(store, episodes=False)
    m, s = full.metrics[MedianOfTrials.name], lean.metrics[MedianOfTrials.name]
    assert all(len(ss) == 5 for ss in s.scores.values())  # kept, not merged
    assert s == m and s.value == MedianOfTrials().aggregate(
        [x for ss in m.scores.values() for x in ss]
    )
    # the merged metrics beside it still merge
    assert all(len(ss) == 1 for ss in lean.metrics["task_success"].scores.values())


def test_metric_tally_is_per_task_whatever_the_trials() -> None:
    """Memory: a task's 1,000 trials of tool-call Scores become one merged Score."""
    t = MetricTally("tool_calls")
    for i in range(1000):
        # tp alternates 2 and 1: sum 1500; fp 1 every 4th trial: 250; fn 0
        t.add("a", {"value": 0.0, "detail": {"tp": 2 - i % 2, "fp": int(i % 4 == 0), "fn": 0}})
    m = t.summary()
    (merged,) = m.scores["a"]
    assert merged.detail["tp"] == 1500.0 and merged.detail["fp"] == 250.0
    assert m.n_scores == 1000
    assert m.value == 2 * 1500 / (2 * 1500 + 250 + 0)  # micro-F1 = 2tp / (2tp + fp + fn)


def test_merge_keeps_an_unknown_cost_unknown() -> None:
    fields = {"dollars": None, "successes": None}
    s = merge_scores(
        [
            Score(1.0, {"dollars": 1.0, "successes": 1}),
            Score(1.0, {"dollars": None, "successes": 1}),
        ],
        fields,
    )
    assert s.detail["dollars"] is None and s.detail["successes"] == 2.0
    agg, _ = metric_aggregator("cost_per_success")
    assert math.isnan(agg([s]))  # an unknown part makes the total unknown


def test_inspect_style_summary_streams_too() -> None:
    """Episodes that carry their verdicts (an Inspect log, a trace file) summarise through the
    same tally: counts, cost and failures as from a store."""
    from ek.agents.harness import summary_from_episodes

    eps = [
        Episode("a", success=True),
        Episode("a", trial=1, success=False, error="budget: steps"),
        Episode("b"),
    ]
    s = summary_from_episodes(eps, run=RunProvenance(agent="x"))
    assert dict(s.counts) == {"a": (2, 1)} and s.agent_failures == 1
    assert s.budget_hits == {"steps": 1} and s.unscored is not None and s.unscored.n == 1
    assert isinstance(s, RunSummary) and s.cost is not None and s.cost["n_episodes"] == 2


# ---------------------------------------------------------------- issue 31: the plain bootstrap


def _direct_reliability_intervals(
    counts: Mapping[str, tuple[int, int]], k: int, n_resamples: int, seed: int, confidence: float
) -> dict[str, list[tuple[float, float, float]]]:
    """The bootstrap of ``reliability()`` written directly: the tasks sorted by id, drawn with
    ``random.Random(seed).choices``, every curve point the mean of the drawn tasks' own
    estimates (no grouping by counts), ``ek.stats.percentile_interval`` expanded for ``m``."""
    from ek.agents.reliability import pass_at_k, pass_hat_k
    from ek.stats import mean, percentile_interval

    ids = sorted(counts)
    rng = random.Random(seed)
    draws = [rng.choices(ids, k=len(ids)) for _ in range(n_resamples)]
    out: dict[str, list[tuple[float, float, float]]] = {"at": [], "hat": []}
    for name, fn in (("at", pass_at_k), ("hat", pass_hat_k)):
        for j in range(1, k + 1):
            point = mean([fn(*counts[t], j) for t in ids])
            reps = [mean([fn(*counts[t], j) for t in drawn]) for drawn in draws]
            iv = percentile_interval(point, reps, confidence, "direct", n=len(ids))
            out[name].append((iv.point, iv.low, iv.high))
    return out


def _counts_case(case: str) -> dict[str, tuple[int, int]]:
    rng = random.Random(case)
    if case == "one task":
        return {"a": (5, 2)}
    if case == "three tasks":
        return {"a": (4, 4), "b": (4, 1), "c": (4, 1)}
    if case == "300 tasks, k = 10":
        return {f"t{i}": (10, rng.choice([0, 10, rng.randint(0, 10)])) for i in range(300)}
    return {f"t{i}": (6 + i % 3, rng.randint(0, 6)) for i in range(257)}  # unequal n


@pytest.mark.parametrize(
    ("case", "n_resamples", "seed", "confidence"),
    [
        ("one task", 50, 0, 0.95),
        ("three tasks", 1, 3, 0.95),
        ("three tasks", 7, 2**40 + 1, 0.5),
        ("300 tasks, k = 10", 200, 11, 0.99),
        ("unequal n", 100, 2, 0.8),
    ],
)
def test_reliability_intervals_are_the_direct_bootstraps(
    case: str, n_resamples: int, seed: int, confidence: float
) -> None:
    """reliability() counts each resample's draws by (n, c) and sums per distinct count: every
    bound must equal the direct bootstrap's (to 1e-12: a product c * v for c drawn copies
    rounds where c additions of v round differently)."""
    from ek.agents.reliability import reliability

    counts = _counts_case(case)
    k = min(n for n, _ in counts.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = reliability(
            counts, k, confidence=confidence, n_resamples=n_resamples, seed=seed,
            interval="bootstrap",
        )  # fmt: skip
    want = _direct_reliability_intervals(counts, k, n_resamples, seed, confidence)
    _close([(iv.point, iv.low, iv.high) for iv in rep.pass_at_k.values()], want["at"], "at")
    _close([(iv.point, iv.low, iv.high) for iv in rep.pass_hat_k.values()], want["hat"], "hat")


def test_cost_tally_sums_dollars_exactly_in_any_order() -> None:
    """CostTally keeps token sums and dollars per (role, model): the report must equal a plain
    per-group summation of tokens and the exactly rounded sum (math.fsum) of dollars, the same
    in any order and when halves of the episodes are tallied apart and merged."""
    from ek.agents.base import Cost
    from ek.agents.cost import CostTally, per_million

    prices = {"m1": per_million(1.0, 4.0, cache_read=0.1), "m2": per_million(0.3, 0.7)}
    rng = random.Random(22)
    episodes = []
    for i in range(300):
        costs = []
        for _ in range(rng.randint(0, 3)):
            model = rng.choice(["m1", "m2", "m3", None])  # m3 and None: no rate
            role = rng.choice(["agent", "agent", "judge", "simulator"])
            costs.append(
                Cost(input_tokens=rng.randint(0, 5000), output_tokens=rng.randint(0, 900),
                     cache_read_tokens=rng.randint(0, 300), model=model, role=role)
            )  # fmt: skip
        episodes.append((tuple(costs), i % 3 == 0))
    tally = CostTally(prices=prices)
    for costs, ok in episodes:
        tally.add(costs, ok)
    got = tally.report()
    # the reference: every group's dollars summed exactly (math.fsum of its costs' dollars)
    groups: dict[str, dict[str, Any]] = {}
    for costs, _ in episodes:
        priced = tally.price(costs)
        for c, pc in zip(costs, priced):
            for g in ("total", f"role:{c.role}", f"model:{c.model or '<unknown>'}"):
                acc = groups.setdefault(g, {"n": 0, "dollars": [], "in": 0, "out": 0})
                acc["n"] += 1
                acc["in"] += c.input_tokens
                acc["out"] += c.output_tokens
                acc["dollars"] = (
                    None if acc["dollars"] is None or pc.dollars is None
                    else [*acc["dollars"], pc.dollars]
                )  # fmt: skip
    shown = {"total": got.total}
    shown.update({f"role:{r}": u for r, u in got.by_role.items()})
    shown.update({f"model:{m}": u for m, u in got.by_model.items()})
    assert set(shown) == set(groups)
    for g, u in shown.items():
        want = groups[g]
        usd = None if want["dollars"] is None else math.fsum(want["dollars"])
        assert (u.n_costs, u.dollars) == (want["n"], usd), g
        assert (u.tokens["input_tokens"], u.tokens["output_tokens"]) == (want["in"], want["out"])
    assert got.n_episodes == 300 and got.successes == 100
    # exact sums do not depend on the order, nor on how the episodes were split and merged
    rng.shuffle(episodes)
    halves = [CostTally(prices=prices), CostTally(prices=prices)]
    for i, (costs, ok) in enumerate(episodes):
        halves[i % 2].add(costs, ok)
    assert CostTally.merged(halves).report() == got


def test_load_run_refuses_a_huge_path_and_deep_json_with_a_value_error(tmp_path: Path) -> None:
    """Regression (fuzz contract): a 10 MB path was a FileNotFoundError carrying all of it, and
    a file of 100,000 '[' a RecursionError; both are now the project's ValueError, short."""
    from ek.agents.harness import RunLoadError

    with pytest.raises(RunLoadError) as e:
        load_run("x" * 10**7)
    assert len(str(e.value)) < 300
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(RunLoadError, match="RecursionError"):
        load_run(deep)
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_run(tmp_path / "missing.jsonl")
    with pytest.raises(RunLoadError, match="expected a regular file, got a directory"):
        load_run(tmp_path)


# ---------------------------------------------------------------- issue 31: declared sums


def test_every_built_in_metric_declares_its_sums() -> None:
    """Each metric class declares the detail fields its aggregate sums (no table elsewhere):
    a subclass defined anywhere, under any name, is tallied the same way."""
    from ek.agents._run.sums import declared_sums
    from ek.agents.judge import JudgeMetric
    from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
    from ek.agents.toolcalls import ToolCallMetric
    from ek.agents.trajectory import TrajectoryMetric

    assert declared_sums(TaskSuccessMetric()) == {"successes": None, "n": 1.0}
    assert declared_sums(CostPerSuccessMetric()) == {"dollars": None, "successes": None}
    assert declared_sums(ToolCallMetric()) == {"tp": None, "fp": None, "fn": None}
    assert declared_sums(TrajectoryMetric()) == {"cost": None, "worst_case": None}
    judge = JudgeMetric(lambda o, c, g: 1.0, "same?")
    assert declared_sums(judge) == {"n_scored": 0.0, "score_sum": 0.0}

    class Moved(ToolCallMetric):  # another module path than the class's
        name = "moved_tool_calls"

    register("metrics", Moved.name, Moved())
    try:
        t = MetricTally(Moved.name)
        t.add("a", Score(1.0, {"tp": 2, "fp": 0, "fn": 1}))
        assert t.summed and t.summary().scores["a"][0].detail["tp"] == 2.0
    finally:
        unregister("metrics", Moved.name)
    with pytest.raises(TypeError, match="sums must be a tuple"):
        declared_sums(type("Bad", (), {"sums": "tp"})())


def test_tallies_merge_by_adding_the_declared_sums() -> None:
    """Parts of a run that saw the same task merge by adding its sums: the merged tally is the
    tally of all the trials (the generic merge; what a shard's tally would need)."""
    rows = [{"tp": i % 3, "fp": i % 2, "fn": (i * 7) % 4} for i in range(12)]
    whole = MetricTally("tool_calls")
    parts = [MetricTally("tool_calls"), MetricTally("tool_calls")]
    for i, det in enumerate(rows):
        task = "ab"[i % 2]
        whole.add(task, Score(0.0, det))
        parts[i // 6].add(task, Score(0.0, det))
    merged = MetricTally.merged(parts).summary()
    assert merged.scores == whole.summary().scores and merged.value == whole.summary().value
    assert merged.n_scores == 12
