"""A judged run corrected with labels (issue 38): run_suite with a real JudgeMetric as the
checker, the store read back by load_run, slices, pass^k, Cost-of-Pass, the labels file, and the
paired difference the gate uses."""

from __future__ import annotations

import hashlib
import json
import math
import random
import warnings

import pytest

from ek.agents.base import Cost, Episode, RunProvenance, TaskSpec
from ek.agents.cost import per_million
from ek.agents.harness import RunSummary, load_run, run_suite
from ek.agents.judge import (
    JudgedTrials,
    JudgeMetric,
    corrected_difference,
    corrected_success_rate,
    judged_run,
    load_labels,
)


def _draw(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % 100


def finisher(task, ctx):
    """Finishes 60 % of its trials; says which trial it was, so the judge's draws differ."""
    ok = ctx.rng.random() < 0.6
    cost = Cost(input_tokens=1000, output_tokens=100)
    return Episode(task.task_id, output=f"{'done' if ok else 'gave up'} #{ctx.trial}", cost=cost)


def scripted_judge(output, criteria, gold):
    """A lenient judge with known errors: passes 95 % of real finishes and 40 % of give-ups
    (its expected pass rate at a true 0.6 is 0.6 * 0.95 + 0.4 * 0.4 = 0.73)."""
    h = _draw(f"judge:{output}:{gold}")
    return 1.0 if (output.startswith("done") and h < 95) or (output.startswith("gave") and h < 40) else 0.0  # fmt: skip


TASKS = [TaskSpec(f"t{i:02d}", input=i, gold=f"g{i}", slice="a" if i < 20 else "b") for i in range(40)]  # fmt: skip
JUDGE = JudgeMetric(scripted_judge, "did the agent finish?", threshold=0.5)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store = tmp_path_factory.mktemp("judged") / "run.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_suite(finisher, TASKS, k=3, check=JUDGE, store=store, price=per_million(1, 10))
    truth = {(ep.task_id, ep.trial): ep.output.startswith("done") for ep in result.episodes}
    rng = random.Random(4)
    labels = {key: truth[key] for key in rng.sample(sorted(truth), 40)}
    return result, store, truth, labels


def test_run_suite_with_a_judge_then_labels(run) -> None:
    result, _, truth, labels = run
    j = judged_run(result, labels)
    # the same trials straight into the estimator
    keys = [(ep.task_id, ep.trial) for ep in result.episodes]
    direct = corrected_success_rate(
        list(result.verdicts), [labels.get(k) for k in keys], tasks=[k[0] for k in keys]
    )
    assert j.success == direct and j.success.n_tasks == 40 and j.success.n_labelled == 40
    true_rate = sum(truth.values()) / len(truth)
    raw = sum(result.verdicts) / len(result.verdicts)
    # the lenient judge's rate is far off; the corrected rate's interval holds the truth
    assert raw - true_rate > 0.08
    assert abs(j.success.value - true_rate) < abs(raw - true_rate)
    assert j.success.interval.contains(true_rate)
    assert set(j.slices) == {"a", "b"}
    for r in j.slices.values():
        assert r.n_tasks == 20 and not r.refused
    assert j.pass_hat(1) is j.success
    assert j.pass_hat(3).refused and "label every trial" in j.pass_hat(3).reason
    json.dumps(j.to_dict(), allow_nan=False)


def test_the_store_read_back_gives_the_same(run) -> None:
    result, store, _, labels = run
    read = load_run(store)  # episodes kept
    a, b = judged_run(result, labels), judged_run(read, labels)
    assert a.success == b.success and dict(a.slices) == dict(b.slices)
    assert a.cost_of_pass == b.cost_of_pass


def test_cost_of_pass_uses_the_corrected_rate(run) -> None:
    result, _, _, labels = run
    j = judged_run(result, labels)
    # every trial: 1000 input tokens at $1/M + 100 output at $10/M = $0.002; 120 trials = $0.24
    assert math.isclose(j.agent_dollars, 0.24)
    # E[cost] / P(success) = 0.24 / (corrected rate * 120)
    assert math.isclose(j.cost_of_pass, 0.24 / (j.success.value * 120))
    assert j.judge_dollars is None  # the judge's spend was not recorded


def test_judge_spend_is_reported_beside() -> None:
    eps = tuple(
        Episode(
            f"t{i}",
            trial=0,
            cost=[Cost(input_tokens=10**6), Cost(input_tokens=10**5, role="judge")],
        )
        for i in range(6)
    )
    cost = {"agent_dollars": 6.0, "n_episodes": 6, "by_role": {"judge": {"dollars": 0.6}}}
    summary = RunSummary(RunProvenance(), k=1, counts={}, episodes=eps, cost=cost,
                         verdicts=(True, True, True, False, False, False))  # fmt: skip
    labels = {("t0", 0): True, ("t1", 0): True, ("t2", 0): False, ("t3", 0): False, ("t4", 0): False}  # fmt: skip
    j = judged_run(summary, labels)
    # per verdict: pass 3 labels, 2 true; fail 2 labels, 0 true; W = (1/2, 1/2): 1/3
    assert math.isclose(j.success.value, 1 / 3)
    # E[cost] 1.0 / (1/3) = 3.0 dollars a success; the judge's $0.6 beside it
    assert math.isclose(j.cost_of_pass, 3.0) and j.judge_dollars == 0.6


def test_labels_of_another_run_and_no_trials_are_refused(run) -> None:
    result, _, _, labels = run
    with pytest.raises(ValueError, match="name a trial this run does not have"):
        judged_run(result, {**labels, ("nope", 0): True})
    with pytest.raises(ValueError, match="needs the run's trials"):
        judged_run(RunSummary(RunProvenance(), k=1, counts={"a": (1, 1)}), {})
    with pytest.raises(TypeError, match="a key must be"):
        judged_run(result, {"t00": True})


TWICE = '{"task_id": "a", "trial": 0, "success": true}\n{"task_id": "a", "trial": 0, "success": false}\n'


def test_load_labels(tmp_path) -> None:
    lines = tmp_path / "labels.jsonl"
    lines.write_text('{"task_id": "a", "trial": 0, "success": true}\n\n'
                     '{"task_id": "b", "trial": 2, "success": false}\n')  # fmt: skip
    assert load_labels(lines) == {("a", 0): True, ("b", 2): False}
    array = tmp_path / "labels.json"
    array.write_text(json.dumps([{"task_id": "a", "trial": 1, "success": True}]))
    assert load_labels(array) == {("a", 1): True}
    bad = tmp_path / "bad.jsonl"
    for text, match in [
        ('{"task_id": "a", "trial": 0}\n', "a label is"),
        ('{"task_id": "a", "trial": -1, "success": true}\n', "a key must be"),
        ('{"task_id": "a", "trial": 0, "success": "yes"}\n', "a verdict must be a bool"),
        ("not json\n", "not a JSON record"),
        (
            '{"task_id": "a", "trial": 0, "success": true}\n{"task_id": "a", "trial": 0, "success": false}\n',
            "both ways",
        ),
    ]:
        bad.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_labels(bad)
    with pytest.raises(ValueError, match="cannot be read"):
        load_labels(tmp_path / "missing.jsonl")


# ----------------------------------------------------------------------------- the difference


def _trials(rng: random.Random, rate: float, tasks: int = 60, k: int = 2, labelled: float = 0.4):
    verdicts, labels, ids = [], [], []
    for t in range(tasks):
        easy = rng.random() < rate  # a task's trials move together
        for _ in range(k):
            y = easy if rng.random() < 0.9 else not easy
            v = (rng.random() < 0.85) if y else (rng.random() >= 0.85)
            verdicts.append(v)
            labels.append(y if rng.random() < labelled else None)
            ids.append(f"t{t}")
    return verdicts, labels, ids


def test_difference_of_independent_runs_adds_the_variances() -> None:
    rng = random.Random(1)
    v1, y1, _ = _trials(rng, 0.6)
    v2, y2, _ = _trials(rng, 0.5)
    a, b = corrected_success_rate(v1, y1), corrected_success_rate(v2, y2)
    iv = corrected_difference(JudgedTrials.from_trials(v1, y1), JudgedTrials.from_trials(v2, y2))
    assert math.isclose(iv.point, a.value - b.value)
    se = math.hypot(a.detail["se"], b.detail["se"])  # no task ids: independent samples
    half = iv.high - iv.point
    from ek.stats import two_sided_t

    assert math.isclose(half, two_sided_t(0.95, min(a.detail["df"], b.detail["df"])) * se)
    assert iv.reason == "independent runs"


def test_difference_is_paired_by_task() -> None:
    rng = random.Random(2)
    v, y, ids = _trials(rng, 0.6)
    # the same tasks run again: the same true outcomes, the judge and the labels drawn anew
    v2 = [(rng.random() < 0.85) if truth else (rng.random() >= 0.85) for truth in
          [yy if yy is not None else vv for vv, yy in zip(v, y)]]  # fmt: skip
    y2 = [yy if rng.random() < 0.5 else None for yy in [yy if yy is not None else vv for vv, yy in zip(v, y)]]  # fmt: skip
    paired = corrected_difference(JudgedTrials.from_trials(v, y, ids), JudgedTrials.from_trials(v2, y2, ids))  # fmt: skip
    apart = corrected_difference(JudgedTrials.from_trials(v, y), JudgedTrials.from_trials(v2, y2))
    assert paired.reason == "paired on 60 shared task(s)"
    assert paired.width < apart.width  # shared task effects cancel
    same = JudgedTrials.from_trials(v, y, ids)
    assert corrected_difference(same, same).width == 0.0


def test_difference_refusal_names_the_run() -> None:
    ok = JudgedTrials.from_trials([True, False] * 10, [True, False] * 5 + [None] * 10)
    chance = JudgedTrials.from_trials([True, False, True, False], [True, True, False, False])
    iv = corrected_difference(ok, chance)
    assert not iv.is_defined and iv.reason.startswith("the baseline: refused")


def test_judge_spend_through_run_suite() -> None:
    """Trials that carry the judge's usage under the 'judge' role: the corrected Cost-of-Pass
    counts the agent's spend only, the judge's is reported beside it."""

    def agent(task, ctx):
        ok = ctx.rng.random() < 0.6
        costs = [Cost(input_tokens=1000, output_tokens=100),
                 Cost(input_tokens=500, output_tokens=50, role="judge")]  # fmt: skip
        return Episode(task.task_id, output=f"{'done' if ok else 'gave up'} #{ctx.trial}", cost=costs)  # fmt: skip

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_suite(agent, TASKS, k=2, check=JUDGE, price=per_million(1, 10))
    truth = {(ep.task_id, ep.trial): ep.output.startswith("done") for ep in result.episodes}
    labels = {key: truth[key] for key in random.Random(1).sample(sorted(truth), 40)}
    j = judged_run(result, labels)
    # agent: 1000 * $1/M + 100 * $10/M = $0.002 a trial, 80 trials = $0.16; judge: half, $0.08
    assert math.isclose(j.agent_dollars, 0.16) and math.isclose(j.judge_dollars, 0.08)
    assert math.isclose(j.cost_of_pass, 0.16 / (j.success.value * 80))
