"""Regression tests for the bad-input bugs the fuzz contract found (issue 18).

Each test calls the public entry point a user calls (the real metric, the real ``run_suite``,
the real readers) with the input that used to raise the wrong kind of exception, hang, or build
a message from a full ``repr`` of an enormous value. ``tests/test_fuzz_contract.py`` keeps the
whole API to the contract; these pin each fixed case by name.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest

from ek._validate import short_repr
from ek.agents.base import (
    Cost,
    Episode,
    RunProvenance,
    Step,
    TaskSpec,
    ToolSpec,
    read_episodes,
    write_episodes,
)
from ek.agents.bridge import cost_from_usage, episodes_from_inspect_log, from_inspect_sample
from ek.agents.cost import cost_of_pass, load_prices, per_million, resolve_price
from ek.agents.harness import StoreMismatchError, run_suite
from ek.agents.judge import JudgeError, JudgeMetric, JudgeSignal, mean_position_bias
from ek.agents.metrics import (
    CostPerSuccessMetric,
    TaskSuccessMetric,
    check_name,
    final_state_match,
    output_match,
    recorded_success,
)
from ek.base import Score
from ek.canon import bfcl_standardize
from ek.fields import f1_score
from ek.harness import metric_direction
from ek.jsonio import read_json
from ek.quality import IsotonicCalibrator
from ek.stats import (
    Interval,
    check_int,
    difference_interval,
    mean,
    quantile,
    two_sided_z,
    wilson_interval,
)

BIG_STR = "x" * 10_000_000


def _deep(depth: int = 100_000) -> list[Any]:
    v: list[Any] = []
    for _ in range(depth):
        v = [v]
    return v


# ----------------------------------------------------------------------------- messages


def test_short_repr_never_reprs_an_enormous_value() -> None:
    assert short_repr(10**5000) == "an int of 16610 bits"  # repr would raise ValueError
    assert short_repr(_deep(), 12) == "[[[[[[[[[[[["  # repr would raise RecursionError
    assert len(short_repr(BIG_STR)) == 200
    assert short_repr({"a": (1, None)}) == repr({"a": (1, None)})  # small values: exactly repr


@pytest.mark.parametrize(
    "value",
    [_deep(), 10**5000, BIG_STR, {BIG_STR: 1}],
    ids=["deep", "huge_int", "big_str", "big_key"],
)
def test_messages_are_short_for_enormous_values(value: Any) -> None:
    # each used to raise RecursionError / ValueError while building its message, or to carry
    # the whole 10 MB value in it
    calls = [
        lambda: check_int("n", value, 0, 10),
        lambda: Episode("t", success=value),
        lambda: Cost(input_tokens=value),
        lambda: Step("f", {}, id=1, error=value) if isinstance(value, str) else Step(value, {}),
        lambda: TaskSpec.from_dict({"task_id": "t", BIG_STR: value}),
        lambda: ToolSpec.from_openai({"function": {BIG_STR: value}}),
    ]
    for call in calls:
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        assert 0 < len(str(info.value)) <= 2_000


# ----------------------------------------------------------------------------- huge numbers


def test_ints_too_large_for_a_float_are_value_errors() -> None:
    # float(10**400) raises OverflowError; each entry point now says what it expected
    with pytest.raises(ValueError, match="Score.value must fit in a float, got an int of 1329"):
        Score(10**400)
    with pytest.raises(ValueError, match="Interval.point must fit in a float"):
        Interval(10**400, 0.0, 1.0, 0.95, "wilson")
    with pytest.raises(ValueError, match="tp must fit in a float"):
        f1_score(10**400, 0, 0)
    with pytest.raises(ValueError, match="confidence must be in"):
        two_sided_z(10**400)
    with pytest.raises(ValueError, match="successes must fit in a float"):
        cost_of_pass(1.0, 10**400)
    with pytest.raises(ValueError, match="must be finite, got an int of 1329 bits"):
        per_million(10**400, 1)
    with pytest.raises(ValueError, match="n must be <= "):
        wilson_interval(1, 10**400)


def test_judge_returning_a_huge_int_is_an_invalid_judgement() -> None:
    # float() of the judge's 10**400 overflowed; now it is off the scale like any other number
    with pytest.raises(JudgeError, match="outside its scale"):
        JudgeSignal(lambda output, criteria: 10**400, "criteria")("out")
    m = JudgeMetric(lambda output, criteria, gold: 10**400, "criteria", on_error="record")
    s = m(Episode("t", output="o"), TaskSpec("t", gold="g"))
    assert math.isnan(s.value) and "outside its scale" in s.reason


def test_usage_with_a_huge_total_cost_is_not_used() -> None:
    c = cost_from_usage({"input_tokens": 3, "total_cost": 10**400}, model="m")
    assert c.dollars is None and c.input_tokens == 3
    with pytest.raises(TypeError, match="model must be a str or None, got list"):
        cost_from_usage({"input_tokens": 3}, model=_deep())


# ----------------------------------------------------------------------------- estimators


def test_difference_interval_of_huge_values_does_not_overflow() -> None:
    # (x - m) ** 2 raised OverflowError for |x| ~ 1e200; the variance is now inf
    iv = difference_interval([1e200, -1e200, 3.0], [0.0, 1.0])
    assert iv.high == math.inf and iv.low == -math.inf


def test_quantile_and_mean_refuse_or_say_undefined() -> None:
    with pytest.raises(ValueError, match=r"q must be a number in \[0, 1\], got inf"):
        quantile([0.0, 1.0], math.inf)  # was OverflowError from math.floor(inf)
    with pytest.raises(ValueError, match="at least one value"):
        quantile([], 0.5)  # was IndexError
    assert math.isnan(mean([]))  # was ZeroDivisionError


# ----------------------------------------------------------------------------- wrong types


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="detail must be a mapping or None, got list"):
        metric_direction("accuracy", [1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bfcl_standardize expects a str, got list"):
        bfcl_standardize([1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="item 0 is int"):
        mean_position_bias([1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="model must be a str or None, got tuple"):
        resolve_price(("gpt",), {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an Inspect sample id must be a str or an int, got list"):
        from_inspect_sample({"id": [1], "messages": []})


def test_calibrator_from_dict_checks_its_fields() -> None:
    with pytest.raises(ValueError, match=r"missing required field\(s\) \['xs', 'ys'\]"):
        IsotonicCalibrator.from_dict({})  # was KeyError
    with pytest.raises(ValueError, match=r"IsotonicCalibrator.xs\[0\] must be finite"):
        IsotonicCalibrator.from_dict({"xs": [math.nan], "ys": [0.5]})
    c = IsotonicCalibrator.from_dict({"xs": [0.0, 1.0], "ys": [0.2, 0.8], "n": 4})
    assert IsotonicCalibrator.from_dict(c.to_dict()) == c


@pytest.mark.parametrize("checker", [output_match, final_state_match, recorded_success])
def test_checkers_refuse_a_non_episode(checker: Any) -> None:
    with pytest.raises(TypeError, match="expects an Episode"):
        checker(["not", "an", "episode"], "gold")  # was AttributeError


def test_checkers_score_unreadable_model_output_as_no_match() -> None:
    # model output nested past the limit is a failed match, never a crash of the run
    deep = _deep(300)
    assert output_match(Episode("t", output=deep), "x") is False
    assert final_state_match(Episode("t", final_state={"a": deep}), {"a": 1}) is False
    assert output_match(Episode("t", output=10**5000), "1") is False  # str() would raise
    with pytest.raises(ValueError, match="nested deeper than 200"):
        output_match(Episode("t", output="x"), deep)  # malformed gold is the user's: refused


@pytest.mark.parametrize(
    "metric, keys",
    [(TaskSuccessMetric(), "successes"), (CostPerSuccessMetric(), "dollars")],
)
def test_aggregate_refuses_another_metrics_score(metric: Any, keys: str) -> None:
    with pytest.raises(TypeError, match="item 0 is str"):
        metric.aggregate(["x"])
    with pytest.raises(ValueError, match=f"score 0 has no detail '{keys}'"):
        metric.aggregate([Score(1.0, {"tp": 1.0})])  # was KeyError


def test_judge_metric_aggregate_refuses_non_scores() -> None:
    m = JudgeMetric(lambda output, criteria, gold: 1.0, "criteria")
    with pytest.raises(TypeError, match="JudgeMetric.aggregate expects Scores, item 0 is str"):
        m.aggregate(["x"])


# ----------------------------------------------------------------------------- files


def _special_paths(tmp_path: Path) -> list[tuple[str, str]]:
    out = [(str(tmp_path), "a directory")]
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        out.append((str(fifo), "a FIFO"))  # opening it for reading would block forever
    return out


def test_readers_refuse_fifos_directories_and_impossible_paths(tmp_path: Path) -> None:
    for path, kind in _special_paths(tmp_path):
        for read in (load_prices, read_json, lambda p: list(read_episodes(p))):
            with pytest.raises(ValueError, match=f"expected a regular file, got {kind}"):
                read(path)
        with pytest.raises(ValueError, match=f"got {kind}"):
            list(episodes_from_inspect_log(path))
    with pytest.raises(ValueError, match="got a path of 10000000 characters"):
        load_prices(BIG_STR)  # was OSError(ENAMETOOLONG) carrying the 10 MB name
    with pytest.raises(FileNotFoundError, match="no file at this path"):
        load_prices(tmp_path / "missing.json")
    with pytest.raises(TypeError, match="got bool"):
        load_prices(True)  # open(True) would read file descriptor 1


def test_writers_refuse_a_directory_or_fifo(tmp_path: Path) -> None:
    for path, kind in _special_paths(tmp_path):
        with pytest.raises(ValueError, match=f"got {kind}"):
            write_episodes(path, [Episode("a")])


def test_deeply_nested_files_are_value_errors(tmp_path: Path) -> None:
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ValueError, match="nested too deeply"):
        read_json(p)
    with pytest.raises(ValueError, match="nested too deeply"):
        list(read_episodes(p))  # was RecursionError
    with pytest.raises(ValueError, match="not a JSON price file"):
        load_prices(p)


def test_deeply_nested_or_odd_inspect_logs_are_value_errors(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")  # reading an Inspect log needs the [inspect] extra
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ValueError, match="not a readable Inspect log"):
        list(episodes_from_inspect_log(p))  # Inspect's own reader ran out of memory on it
    q = tmp_path / "list.json"
    q.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="not a readable Inspect log"):
        list(episodes_from_inspect_log(q))  # was AttributeError: list has no .get


# ----------------------------------------------------------------------------- checker names


@pytest.mark.filterwarnings("ignore::ek.agents.reliability.DeterministicAgentWarning")
def test_two_lambda_checkers_are_not_the_same_checker(tmp_path: Path) -> None:
    first = lambda ep, gold: ep.output == gold  # noqa: E731
    second = lambda ep, gold: True  # noqa: E731
    assert check_name(first) != check_name(second)
    assert check_name(first).startswith(f"<lambda> in {__name__}, code ")
    same_body = lambda ep, gold: True  # noqa: E731  (written elsewhere, same code: same checker)
    assert check_name(same_body) == check_name(second)
    # through the real store: resuming with another lambda is refused (both were "<lambda>")
    tasks = [TaskSpec("a", input=1, gold=1)]
    run = RunProvenance(agent="a", seed=1)
    p = tmp_path / "run.jsonl"
    run_suite(lambda t: -1, tasks, k=2, run=run, store=p, check=first)
    with pytest.raises(StoreMismatchError, match="check: store has '<lambda> in "):
        run_suite(lambda t: -1, tasks, k=2, run=run, store=p, check=second)
    assert run_suite(lambda t: -1, tasks, k=2, run=run, store=p, check=first).resumed == 2


def test_cost_report_refuses_successes_that_are_not_a_sequence() -> None:
    # found by the fuzz contract test: a dict of the right length was indexed by position
    from ek.agents.cost import cost_report

    with pytest.raises(TypeError, match="successes must be a sequence of bools"):
        cost_report([Episode("t")], successes={"t": True})
