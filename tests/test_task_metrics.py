"""TaskSuccessMetric, CostPerSuccessMetric, the built-in checkers, and the no-third-party import rule."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ek.agents.base import Cost, Episode, TaskSpec
from ek.agents.cost import ModelPrice, per_million
from ek.agents.metrics import (
    CostPerSuccessMetric,
    TaskSuccessMetric,
    final_state_match,
    output_match,
    recorded_success,
)
from ek.base import Score
from ek.evaluate import evaluate
from ek.registry import UnknownNameError, register, resolve, unregister


def test_seed_example() -> None:
    ep = Episode(task_id="t1", output="42", cost=Cost(input_tokens=1_000_000))
    assert TaskSuccessMetric()(ep, "42").value == 1.0
    m = CostPerSuccessMetric(price=per_million(2.0, 6.0))
    assert round(m(ep, "42").value, 4) == 2.0


def test_cost_per_success_stamps_lower_is_better() -> None:
    # Pinned: without this stamp the regression gate would invert direction and wave a cost
    # regression through (cost_per_success is not in ek.harness.LOWER_IS_BETTER).
    m = CostPerSuccessMetric(price=per_million(1, 1))
    s = m(Episode("t", output="x", cost=Cost(input_tokens=10)), "x")
    assert s.detail["higher_is_better"] is False
    assert m.higher_is_better is False
    assert TaskSuccessMetric()(Episode("t", output="x"), "x").detail["higher_is_better"] is True


class TestCheckers:
    def test_output_match_canonicalised(self) -> None:
        assert output_match(Episode("t", output="  The Answer\n"), "the answer")
        assert output_match(Episode("t", output=42), "42")
        assert not output_match(Episode("t", output="41"), "42")
        assert output_match(Episode("t", output="x"), TaskSpec("t", gold="X"))

    def test_final_state_exact(self) -> None:
        goal = {"orders": {"A1": "refunded"}, "stock": [1, 2]}
        assert final_state_match(
            Episode("t", final_state={"orders": {"A1": "refunded"}, "stock": (1, 2)}), goal
        )
        assert not final_state_match(
            Episode("t", final_state={"orders": {"A1": "Refunded"}, "stock": [1, 2]}), goal
        )
        assert not final_state_match(Episode("t"), goal)  # no state recorded: not a success

    def test_recorded(self) -> None:
        assert recorded_success(Episode("t", success=True), None)
        assert not recorded_success(Episode("t", success=False), None)
        with pytest.raises(ValueError, match="has no recorded success"):
            recorded_success(Episode("t"), None)

    def test_registry(self) -> None:
        assert resolve("checkers", "final_state") is final_state_match
        assert TaskSuccessMetric("final_state")(Episode("t", final_state=1), 1).value == 1.0
        with pytest.raises(UnknownNameError, match="unknown checkers name 'db'"):
            TaskSuccessMetric("db")
        # The registry holds metrics (default instances), usable as registered.
        ts, cps = resolve("metrics", "task_success"), resolve("metrics", "cost_per_success")
        assert type(ts) is TaskSuccessMetric and type(cps) is CostPerSuccessMetric
        assert ts(Episode("t", output="4"), "4").value == 1.0
        assert ts.check is None and cps.check is None and cps.price is None

    def test_checker_factory_name_says_how_to_build(self) -> None:
        register("checker_factories", "doc_factory_only", lambda **kw: output_match)
        try:
            with pytest.raises(UnknownNameError, match="'doc_factory_only' is a checker factory"):
                TaskSuccessMetric("doc_factory_only")
        finally:
            unregister("checker_factories", "doc_factory_only")

    def test_any_callable(self) -> None:
        def even_output(ep: Episode, gold: object) -> bool:
            return ep.output % 2 == 0

        s = TaskSuccessMetric(even_output)(Episode("t", output=4), None)
        assert s.passed is True and s.detail["checker"] == "even_output"


def test_agent_error_is_failure_without_calling_checker() -> None:
    def boom(ep: Episode, gold: object) -> bool:
        raise AssertionError("checker must not run for an errored episode")

    s = TaskSuccessMetric(boom)(Episode("t", error="timeout after 30s"), None)
    assert s.value == 0.0 and s.reason == "agent error: timeout after 30s"


def test_non_episode_rejected() -> None:
    with pytest.raises(TypeError, match="expects an Episode"):
        TaskSuccessMetric()("42", "42")
    with pytest.raises(TypeError, match="price must be a ModelPrice or None, got dict"):
        CostPerSuccessMetric(price={"m": per_million(1, 1)})  # type: ignore[arg-type]


class TestAggregates:
    def test_success_rate(self) -> None:
        eps = [Episode("a", output="1"), Episode("b", output="2"), Episode("c", output="0")]
        r = evaluate(TaskSuccessMetric(), eps, ["1", "2", "3"])
        assert r.value == pytest.approx(2 / 3)
        assert math.isnan(TaskSuccessMetric().aggregate([]))

    def test_cost_of_pass_is_ratio_of_sums(self) -> None:
        # episode dollars: $1 (success), $3 (fail), $2 (success) -> 6 / 2 = $3 per success.
        # A mean of per-episode ratios would be meaningless (inf for the failure).
        p = ModelPrice(input=1.0, output=1.0)
        eps = [
            Episode("a", output="y", cost=Cost(input_tokens=1)),
            Episode("b", output="n", cost=Cost(input_tokens=3)),
            Episode("c", output="y", cost=Cost(input_tokens=2)),
        ]
        r = evaluate(CostPerSuccessMetric(price=p), eps, ["y", "y", "y"])
        assert r.value == pytest.approx(3.0)
        assert r.values == [1.0, 3.0, 2.0]
        assert r.higher_is_better is False

    def test_cost_of_pass_infinite_and_unknown(self) -> None:
        p = ModelPrice(input=1.0, output=1.0)
        m = CostPerSuccessMetric(price=p)
        fail = m(Episode("a", output="n", cost=Cost(input_tokens=1)), "y")
        assert m.aggregate([fail]) == math.inf
        unpriced = CostPerSuccessMetric()(
            Episode("a", output="y", cost=Cost(input_tokens=1, model="m")), "y"
        )
        assert unpriced.detail["dollars"] is None and math.isnan(unpriced.value)
        assert "dollars unknown" in unpriced.reason
        assert math.isnan(m.aggregate([fail, unpriced]))
        assert math.isnan(m.aggregate([]))

    def test_prices_catalogue_per_model(self) -> None:
        cat = {"cheap": per_million(1, 1), "dear": per_million(10, 10)}
        m = CostPerSuccessMetric(prices=cat)
        s = m(
            Episode(
                "a",
                output="y",
                cost=[
                    Cost(input_tokens=10**6, model="cheap"),
                    Cost(input_tokens=10**6, model="dear"),
                ],
            ),
            "y",
        )
        assert s.value == pytest.approx(11.0)

    @given(st.lists(st.tuples(st.integers(0, 10**6), st.booleans()), min_size=1, max_size=30))
    def test_property_aggregate_matches_definition(self, items: list[tuple[int, bool]]) -> None:
        p = ModelPrice(input=1e-6, output=1e-6)
        m = CostPerSuccessMetric(price=p)
        scores = [
            m(Episode("t", output="y" if ok else "n", cost=Cost(input_tokens=n)), "y")
            for n, ok in items
        ]
        total = sum(n for n, _ in items) * 1e-6
        succ = sum(ok for _, ok in items)
        expected = math.inf if succ == 0 else total / succ
        got = m.aggregate(scores)
        assert got == expected or got == pytest.approx(expected)
        assert all(isinstance(s, Score) for s in scores)


def _importtime_modules(code: str) -> set[str]:
    """Top-level names that `-X importtime` reports AND that really ended up in sys.modules
    (importtime also lists failed probes, such as copy.py's Jython check for `org.python`)."""
    code += "; import sys; print(' '.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
    )
    loaded = {m.split(".")[0] for m in out.stdout.split()}
    timed = {
        line.split("|")[-1].strip().split(".")[0]
        for line in out.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return timed & loaded


def test_import_ek_agents_loads_no_third_party_module() -> None:
    # `python -X importtime -c "import ek.agents"` must show only the standard library and ek
    # (beyond what the interpreter itself imports at start-up, measured with `pass`).
    startup = _importtime_modules("pass")
    loaded = _importtime_modules(
        "import ek.agents, ek.agents.cost, ek.agents.metrics, ek.agents.base"
    )
    stdlib = set(sys.stdlib_module_names)
    offenders = sorted(
        m for m in loaded - startup if m not in stdlib and m != "ek" and not m.startswith("_")
    )
    assert "ek" in loaded
    assert offenders == [], f"import ek.agents pulled in third-party modules: {offenders}"


def test_rich_verdict_reason_and_detail_are_kept() -> None:
    class Verdict:
        def __init__(self, ok: bool) -> None:
            self.ok = ok
            self.reason = "2 of 3 hidden tests failed" if not ok else "all passed"

        def __bool__(self) -> bool:
            return self.ok

        def to_dict(self) -> dict[str, object]:
            return {"passed": self.ok, "reason": self.reason}

    def hidden(ep: Episode, gold: object) -> Verdict:
        return Verdict(False)

    s = TaskSuccessMetric(hidden)(Episode("t"), None)
    assert s.value == 0.0 and s.reason == "hidden check failed: 2 of 3 hidden tests failed"
    assert s.detail["verdict"] == {"passed": False, "reason": "2 of 3 hidden tests failed"}
