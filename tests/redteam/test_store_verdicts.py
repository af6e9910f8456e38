"""Red team (issue 30, items 12 and 13): one verdict rule at every entry point, and adapter
misuse that must be one clear line.

The pydantic-evals adapter counted a ``success=`` callable's ``"false"``, ``"0"`` or NaN as a
success (``bool("false")`` is True), while the store refused such a record; ``run_suite`` and
``TaskSuccessMetric`` read a checker's result by its truthiness too. Every entry point now
applies the store's rule (:func:`ek._validate.as_verdict`): a verdict is a bool (a rich
verdict's bool ``passed``, a numpy bool); anything else is refused, naming it. Misuse that was
silent: a misspelt ``success=`` name (an empty 0/0 summary), ``EkEvaluator(use_spans="yes")``
(accepted), a NaN threshold in ``ek/pass_hat`` (every epoch a failure: a silent 0.0).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Episode, TaskSpec
from ek.agents.harness import HarnessError, StoreError, read_store, run_suite
from ek.agents.metrics import TaskSuccessMetric

# what a careless checker returns: each must be refused, never read by its truthiness
NOT_VERDICTS = ["false", "0", "", math.nan, 0.0, 1, 0, [], {"passed": True}, object()]


class _Rich:
    """A rich verdict (as HiddenTestVerdict): a bool ``passed`` and a reason."""

    def __init__(self, passed: bool) -> None:
        self.passed, self.reason = passed, "because"


def _verdict_of(check: Any) -> Any:
    def agent(task: TaskSpec) -> Episode:
        return Episode(task.task_id, output="x")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_suite(agent, [TaskSpec("t", gold="x")], k=1, check=check).verdicts[0]


@pytest.mark.parametrize("bad", NOT_VERDICTS, ids=[f"v{i}" for i in range(len(NOT_VERDICTS))])
def test_run_suite_and_task_success_refuse_what_is_not_a_verdict(bad: Any) -> None:
    with pytest.raises(HarnessError, match="a verdict must be a bool, got"):
        _verdict_of(lambda ep, gold: bad)  # was: "false" a success
    with pytest.raises(TypeError, match="a verdict must be a bool, got"):
        TaskSuccessMetric(lambda ep, gold: bad)(Episode("t", output="x"), "x")


def test_what_is_a_verdict_is_accepted_everywhere() -> None:
    np = pytest.importorskip("numpy")
    for good, want in ((True, True), (False, False), (_Rich(False), False), (np.bool_(True), True)):
        assert _verdict_of(lambda ep, gold, v=good: v) is want
        assert TaskSuccessMetric(lambda ep, gold, v=good: v)(Episode("t"), None).passed is want


def test_the_store_applies_the_same_rule(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    header = {"ek_store": 1, "run": {}, "suite": {"fingerprint": "f"}, "k": 1}
    for bad in ("false", "0", "NaN", 1, 0.0, None):
        rec = {"task_id": "t", "trial": 0, "success": bad}
        p.write_text(json.dumps(header) + "\n" + json.dumps(rec) + "\n")
        with pytest.raises(StoreError, match="'success' must be a JSON bool"):
            read_store(p)


# ----------------------------------------------------------------------------- pydantic-evals


@pytest.fixture(scope="module")
def report() -> Any:
    pytest.importorskip("pydantic_evals")
    from ek.adapters.pydantic_evals import EkEvaluator
    from pydantic_evals import Case, Dataset

    async def task(prompt: str) -> str:
        return "shipped"

    ds = Dataset(
        name="verdicts",
        cases=[Case(name="s", inputs="status", expected_output="shipped")],
        evaluators=[EkEvaluator(TaskSuccessMetric(check="output"), use_spans=False)],
    )
    return ds.evaluate_sync(task, repeat=2, max_concurrency=1, progress=False)


@pytest.mark.parametrize("bad", ["false", "0", math.nan, 0, 1.0], ids=repr)
def test_a_success_callable_follows_the_one_rule(report: Any, bad: Any) -> None:
    from ek.adapters.pydantic_evals import summary_from_report

    with pytest.raises(TypeError, match="a verdict must be a bool \\(or None: no verdict\\)"):
        summary_from_report(report, success=lambda case: bad)  # was 2 of 2 successes


def test_a_success_callable_may_say_unscored_or_decide(report: Any) -> None:
    from ek.adapters.pydantic_evals import summary_from_report

    assert dict(summary_from_report(report, success=lambda case: False).counts) == {"s": (2, 0)}
    s = summary_from_report(report, success=lambda case: None)
    assert s.n_trials == 0 and s.unscored is not None and s.unscored.n == 2


def test_a_misspelt_success_name_is_refused_naming_the_evaluations(report: Any) -> None:
    from ek.adapters.pydantic_evals import summary_from_report

    assert dict(summary_from_report(report, success="task_success").counts) == {"s": (2, 2)}
    with pytest.raises(
        ValueError, match=r"success='task_sucess' names no evaluation.*'task_success'"
    ):
        summary_from_report(report, success="task_sucess")  # was an empty 0/0 summary


@pytest.mark.parametrize("flag", ["use_spans", "figures"])
@pytest.mark.parametrize("value", ["yes", "no", 0, 1, None])
def test_evaluator_flags_must_be_bools(flag: str, value: Any) -> None:
    pytest.importorskip("pydantic_evals")
    from ek.adapters.pydantic_evals import EkEvaluator

    with pytest.raises(TypeError, match=f"{flag} must be a bool"):
        EkEvaluator("tool_calls", **{flag: value})


# ----------------------------------------------------------------------------- Inspect reducers


@pytest.mark.parametrize("threshold", [math.nan, math.inf, "0.5", None])
def test_a_reducer_threshold_must_be_a_finite_number(threshold: Any) -> None:
    pytest.importorskip("inspect_ai")
    import ek.adapters.inspect as eki

    for reducer in (eki.pass_hat, eki.pass_at):
        with pytest.raises((TypeError, ValueError), match="threshold must be"):
            reducer(2, threshold=threshold)  # NaN was accepted: every epoch a failure, 0.0
    with pytest.raises(TypeError, match="k must be an int"):
        eki.pass_hat("3")


def test_a_success_name_that_gives_no_verdict_is_refused(report: Any) -> None:
    from ek.adapters.pydantic_evals import summary_from_report

    # "task_success.n" is one of the figures EkEvaluator returns: a number, never a verdict
    with pytest.raises(ValueError, match=r"success='task_success.n' gives no verdict"):
        summary_from_report(report, success="task_success.n")  # was an empty 0/0 summary
