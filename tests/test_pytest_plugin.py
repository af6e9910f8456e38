"""The ek pytest plugin (ek.agents.pytest_plugin), run through pytest's own ``pytester``.

Every inner run has plugin autoloading off and names its plugins with ``-p``, so what runs is
the same whatever else is installed (and whether or not ek-agents' ``pytest11`` entry point is).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from ek.agents.cli import main as ek_agents
from ek.agents.harness import load_run, trial_seed
from ek.agents.reliability import pass_hat_k
from ek.stats import wilson_interval

pytest_plugins = ["pytester"]

PLUGIN = ("-p", "ek.agents.pytest_plugin")

# A seeded flaky agent test. random.Random(i).random() for trials i = 0..4 draws
# 0.844, 0.134, 0.956, 0.238, 0.236, so `< 0.6` fails trials 1 and 3 (1-based) and passes the
# other three: n = 5, c = 3.
FLAKY = """
import random
import pytest

@pytest.mark.ek(trials=5, pass_hat_k=2, at_least=0.3)
def test_agent(ek_episode):
    assert random.Random(ek_episode.trial).random() < 0.6, "the agent slipped"

@pytest.mark.ek(trials=5, pass_hat_k=2, at_least=0.31)
def test_agent_strict(ek_episode):
    assert random.Random(ek_episode.trial).random() < 0.6, "the agent slipped"
"""


@pytest.fixture
def pt(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester with plugin autoloading off (every plugin named with -p)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    return pytester


def _table(result: pytest.RunResult) -> list[str]:
    """The plugin's session table (its header line through the pooled line)."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if "ek: one outcome per test" in line)
    end = next(i for i in range(start, len(lines)) if "ek test(s)" in lines[i])
    return lines[start : end + 1]


def _row(result: pytest.RunResult, test: str) -> list[str]:
    row = next(line for line in _table(result) if line.startswith(test + " "))
    return re.split(r"\s{2,}", row.strip())


def _no_plugin_traceback(result: pytest.RunResult) -> None:
    text = "\n".join(result.outlines + result.errlines)
    assert "Traceback" not in text
    assert "pytest_plugin/" not in text and "pytest_plugin\\" not in text


# ----------------------------------------------------------------------------- the verdict


def test_seeded_flaky_test_gives_the_exact_pass_hat_k_and_interval(pt: pytest.Pytester) -> None:
    pt.makepyfile(test_flaky=FLAKY)
    res = pt.runpytest(*PLUGIN)
    # One outcome per test, though 10 trial items ran: pass^2 = C(3,2)/C(5,2) = 3/10 = 0.3.
    # test_agent: 0.3 >= 0.3 passes; test_agent_strict: 0.3 < 0.31 fails.
    res.assert_outcomes(passed=1, failed=1)
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    assert pass_hat_k(5, 3, 2) == 0.3
    # Wilson 95% for 3/5 (z = 1.959964, z^2 = 3.841459): centre (0.6 + z^2/10) / (1 + z^2/5)
    # = 0.984146 / 1.768292 = 0.556546, half-width z*sqrt(0.6*0.4/5 + z^2/100) / 1.768292
    # = 1.959964 * 0.293964 / 1.768292 = 0.325828: [0.230724, 0.882379].
    iv = wilson_interval(3, 5)
    assert math.isclose(iv.low, 0.230724, abs_tol=1e-6)
    assert math.isclose(iv.high, 0.882379, abs_tol=1e-6)
    row = _row(res, "test_flaky.py::test_agent")
    assert row == [
        "test_flaky.py::test_agent",
        "5",
        "3",
        "0.600 [0.231, 0.882]",
        "pass^2 0.300",
        "pass^2 >= 0.3",
        "passed",
    ]
    assert _row(res, "test_flaky.py::test_agent_strict")[-2:] == ["pass^2 >= 0.31", "failed"]
    out = res.stdout.str()
    assert "3 of 5 trials passed; pass^2 0.300 < 0.31" in out
    # the failed trials' first assertion lines, then the first failure in full
    assert "trial 1: AssertionError: the agent slipped" in out
    assert "trial 3: AssertionError: the agent slipped" in out
    assert "first failing trial (1 of 5):" in out
    assert "2 ek test(s) (1 passed, 1 failed); 10 trials, 6 passed" in out


def test_wilson_and_every_trial_criteria(pt: pytest.Pytester) -> None:
    pt.makepyfile(
        test_w="""
        import pytest

        @pytest.mark.ek(trials=20, at_least=0.7)
        def test_wilson_pass(ek_episode):
            assert ek_episode.trial != 0          # 19 of 20

        @pytest.mark.ek(trials=10, at_least=0.7)
        def test_wilson_fail(ek_episode):
            assert ek_episode.trial != 0          # 9 of 10

        @pytest.mark.ek(trials=3)
        def test_every_trial(ek_episode):
            assert ek_episode.trial != 2
        """
    )
    res = pt.runpytest(*PLUGIN)
    # Wilson 95% lower bounds (z^2 = 3.841459):
    # 19/20: centre (0.95 + 0.096036) / 1.192073 = 0.877493, half-width
    #   1.959964 * sqrt(0.002375 + 0.002401) / 1.192073 = 0.113625 -> 0.763868 >= 0.7 passes;
    # 9/10: centre (0.9 + 0.192073) / 1.384146 = 0.788985, half-width
    #   1.959964 * sqrt(0.009 + 0.009604) / 1.384146 = 0.193137 -> 0.595848 < 0.7 fails.
    assert math.isclose(wilson_interval(19, 20).low, 0.763868, abs_tol=1e-5)
    assert math.isclose(wilson_interval(9, 10).low, 0.595848, abs_tol=1e-5)
    res.assert_outcomes(passed=1, failed=2)
    assert _row(res, "test_w.py::test_wilson_pass")[-1] == "passed"
    assert _row(res, "test_w.py::test_wilson_fail")[-1] == "failed"
    assert _row(res, "test_w.py::test_every_trial")[-2:] == ["every trial passes", "failed"]
    res.stdout.fnmatch_lines(["*9 of 10 trials passed; 95% Wilson lower bound 0.596 < 0.7*"])


def test_one_progress_step_per_item_and_one_line_per_trial_in_verbose(
    pt: pytest.Pytester,
) -> None:
    pt.makepyfile(test_flaky=FLAKY)
    res = pt.runpytest(*PLUGIN)
    res.stdout.fnmatch_lines(["collected 10 items", "test_flaky.py .F * [[]100%[]]"])
    res = pt.runpytest(*PLUGIN, "-v")
    res.stdout.fnmatch_lines(
        [
            "*test_agent[[]ek-trial-1-of-5[]] trial failed*",
            "*test_agent[[]ek-trial-2-of-5[]] trial passed*",
            "*test_flaky.py::test_agent PASSED*[[] 50%[]]",
            "*test_flaky.py::test_agent_strict FAILED*[[]100%[]]",
        ]
    )


def test_fresh_function_fixtures_each_trial_and_setup_errors_count_as_failures(
    pt: pytest.Pytester,
) -> None:
    pt.makepyfile(
        test_fx="""
        import pytest

        SETUPS = {"module": 0, "function": 0}

        @pytest.fixture(scope="module")
        def shared():
            SETUPS["module"] += 1
            return SETUPS["module"]

        @pytest.fixture
        def fresh(ek_episode):
            SETUPS["function"] += 1
            if ek_episode.trial == 1:
                raise RuntimeError("the sandbox did not start")
            return []

        @pytest.mark.ek(trials=4, pass_hat_k=1, at_least=0.5)
        def test_fixtures(shared, fresh):
            assert fresh == [] and shared == 1
            fresh.append(1)

        def test_counts_after():
            assert SETUPS == {"module": 1, "function": 4}
        """
    )
    res = pt.runpytest(*PLUGIN)
    # 3 of 4 trials pass (the setup error of trial 2 is a failed trial, not a session error)
    res.assert_outcomes(passed=2)
    assert _row(res, "test_fx.py::test_fixtures")[1:3] == ["4", "3"]


def test_skipped_trials_are_left_out_and_all_skipped_is_skipped(pt: pytest.Pytester) -> None:
    pt.makepyfile(
        test_sk="""
        import pytest

        @pytest.mark.ek(trials=4, pass_hat_k=1, at_least=0.5)
        def test_some(ek_episode):
            if ek_episode.trial == 0:
                pytest.skip("no sandbox for trial 1")

        @pytest.mark.skip(reason="not today")
        @pytest.mark.ek(trials=3)
        def test_all():
            pass
        """
    )
    res = pt.runpytest(*PLUGIN, "-rs")
    res.assert_outcomes(passed=1, skipped=1)
    assert _row(res, "test_sk.py::test_some")[1:3] == ["3", "3"]
    res.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_sk.py:*: not today"])


def test_ek_trials_overrides_the_marker_and_covers_fixture_only_tests(pt: pytest.Pytester) -> None:
    pt.makepyfile(
        test_cli="""
        import pytest

        @pytest.mark.ek(trials=2)
        def test_marked(ek_episode):
            assert ek_episode.trials == 3

        def test_fixture_only(ek_episode):
            assert ek_episode.trials == 3

        def test_plain():
            pass
        """
    )
    res = pt.runpytest(*PLUGIN, "--ek-trials", "3")
    res.assert_outcomes(passed=3)
    res.stdout.fnmatch_lines(["collected 7 items"])
    assert _row(res, "test_cli.py::test_fixture_only")[1:3] == ["3", "3"]


def test_trial_seeds_follow_the_run_seed(
    pt: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pt.makepyfile(
        test_seed="""
        import json, os, pytest

        @pytest.mark.ek(trials=2)
        def test_seeds(ek_episode):
            with open(os.environ["SEEDS_FILE"], "a") as fh:
                fh.write(json.dumps([ek_episode.task_id, ek_episode.trial, ek_episode.seed]) + "\\n")
        """
    )
    seeds = pt.path / "seeds.jsonl"
    monkeypatch.setenv("SEEDS_FILE", str(seeds))
    pt.runpytest(*PLUGIN, "--ek-seed", "7").assert_outcomes(passed=1)
    got = [json.loads(line) for line in seeds.read_text().splitlines()]
    tid = "test_seed.py::test_seeds"
    assert got == [[tid, i, trial_seed(7, tid, i)] for i in range(2)]


# ----------------------------------------------------------------------------- episodes


EPISODES = """
import pytest
from ek.agents.base import Cost, Episode, Step, TaskSpec
from ek.agents.cost import per_million

TASK = TaskSpec("A1", gold_calls=[Step("get_order", {"order_id": "A1"}),
                                  Step("refund", {"order_id": "A1"})])
PRICE = per_million(1.0, 4.0)

@pytest.mark.ek(trials=4, pass_hat_k=1, at_least=0.5)
def test_refund(ek_episode):
    steps = [Step("get_order", {"order_id": "A1"})]
    if ek_episode.trial != 3:
        steps.append(Step("refund", {"order_id": "A1"}))
    ep = Episode("A1", trajectory=steps,
                 cost=Cost(input_tokens=1000 * (ek_episode.trial + 1), output_tokens=100))
    ek_episode.record(ep, gold=TASK, price=PRICE)
    assert ep.trajectory.tools[-1] == "refund"
"""


def test_recorded_episodes_give_scores_and_cost_of_pass(pt: pytest.Pytester) -> None:
    from ek.agents.base import Cost, Episode, Step, TaskSpec
    from ek.agents.toolcalls import ToolCallMetric
    from ek.agents.trajectory import TrajectoryMetric

    pt.makepyfile(test_ep=EPISODES)
    store = pt.path / "run.jsonl"
    res = pt.runpytest(*PLUGIN, "--ek-store", str(store))
    res.assert_outcomes(passed=1)
    task = TaskSpec(
        "A1",
        gold_calls=[Step("get_order", {"order_id": "A1"}), Step("refund", {"order_id": "A1"})],
    )
    eps = [
        Episode(
            "A1",
            trajectory=[Step("get_order", {"order_id": "A1"})]
            + ([Step("refund", {"order_id": "A1"})] if i != 3 else []),
            cost=Cost(input_tokens=1000 * (i + 1), output_tokens=100),
        )
        for i in range(4)
    ]
    # the same numbers as the metrics called directly (ratio-of-sums aggregates)
    tc, tr = ToolCallMetric(), TrajectoryMetric()
    tool_calls = tc.aggregate([tc(ep, task) for ep in eps])
    trajectory = tr.aggregate([tr(ep, task) for ep in eps])
    # Cost-of-Pass: (1000+2000+3000+4000) input tokens at $1/M + 4*100 output at $4/M
    # = $0.0100 + $0.0016 = $0.0116 over 3 successes = $0.0038667 per success.
    cost = (10_000 * 1.0 + 400 * 4.0) / 1e6 / 3
    assert math.isclose(cost, 0.00386667, rel_tol=1e-6)
    row = _row(res, "test_ep.py::test_refund")
    assert row[5] == f"${cost:.4g}"
    assert row[6:8] == [f"{tool_calls:.3f}", f"{trajectory:.3f}"]
    # the store reads back with the same numbers, through the path ek-agents report takes
    run = load_run(store)
    assert dict(run.counts) == {"test_ep.py::test_refund": (4, 3)}
    assert math.isclose(run.cost["cost_of_pass"], cost, rel_tol=1e-12)
    assert math.isclose(run.metrics["tool_calls"].value, tool_calls, rel_tol=1e-12)
    assert math.isclose(run.metrics["trajectory"].value, trajectory, rel_tol=1e-12)
    assert math.isclose(run.metrics["cost_per_success"].value, cost, rel_tol=1e-12)
    assert [ep.metadata.get("recorded_task_id") for ep in run.episodes] == ["A1"] * 4
    assert ek_agents(["report", str(store)]) == 0


def test_record_refuses_bad_input_in_the_test(pt: pytest.Pytester) -> None:
    pt.makepyfile(
        test_bad_record="""
        import pytest
        from ek.agents.base import Episode

        @pytest.mark.ek(trials=1)
        def test_not_an_episode(ek_episode):
            ek_episode.record({"task_id": "x"})

        @pytest.mark.ek(trials=1)
        def test_twice(ek_episode):
            ek_episode.record(Episode("x"))
            ek_episode.record(Episode("x"))
        """
    )
    res = pt.runpytest(*PLUGIN)
    res.assert_outcomes(failed=2)
    res.stdout.fnmatch_lines(
        [
            "*trial 1: TypeError: ek_episode.record expects an ek Episode*got dict*",
            "*trial 1: ValueError: ek_episode.record was already called in trial 0*",
        ]
    )


# ----------------------------------------------------------------------------- async


ASYNC = """
import pytest

@pytest.mark.ek(trials=4, pass_hat_k=1, at_least=0.5)
@pytest.mark.{mark}
async def test_async_agent(ek_episode):
    assert ek_episode.trial != 1
"""


def test_pytest_asyncio_tests(pt: pytest.Pytester) -> None:
    pytest.importorskip("pytest_asyncio")
    pt.makepyfile(test_aio=ASYNC.format(mark="asyncio"))
    res = pt.runpytest(
        *PLUGIN, "-p", "asyncio", "-o", "asyncio_default_fixture_loop_scope=function"
    )
    res.assert_outcomes(passed=1)
    assert _row(res, "test_aio.py::test_async_agent")[1:3] == ["4", "3"]


def test_anyio_tests(pt: pytest.Pytester) -> None:
    pytest.importorskip("anyio")
    pt.makepyfile(test_anyio=ASYNC.format(mark="anyio"))
    res = pt.runpytest(*PLUGIN, "-p", "anyio")
    res.assert_outcomes(passed=1)
    # anyio parametrizes the test by backend; the trials go inside that parametrization
    assert _row(res, "test_anyio.py::test_async_agent[asyncio]")[1:3] == ["4", "3"]


# ----------------------------------------------------------------------------- xdist


@pytest.mark.slow
def test_xdist_gives_the_same_table_and_store(pt: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pt.makepyfile(test_flaky=FLAKY, test_ep=EPISODES)
    plain = pt.runpytest(*PLUGIN, "--ek-store", "plain.jsonl")
    dist = pt.runpytest(*PLUGIN, "-p", "xdist.plugin", "-n", "2", "--ek-store", "dist.jsonl")
    plain.assert_outcomes(passed=2, failed=1)
    dist.assert_outcomes(passed=2, failed=1)
    assert _table(dist) == _table(plain)
    a, b = load_run(pt.path / "plain.jsonl"), load_run(pt.path / "dist.jsonl")
    assert a.counts == b.counts and a.metrics == b.metrics
    assert a.cost == b.cost


# ----------------------------------------------------------------------------- store and gate


GATED = """
import pytest

FAIL_FROM = {fail_from}  # per task: the trials from this one on fail

@pytest.mark.ek(trials=10, pass_hat_k=1, at_least=0.0)
@pytest.mark.parametrize("task", ["a", "b", "c", "d"])
def test_task(task, ek_episode):
    assert ek_episode.trial < FAIL_FROM[task]
"""


def _gated(**fail_from: int) -> str:
    return GATED.format(fail_from={t: fail_from.get(t, 10) for t in "abcd"})


@pytest.fixture
def baseline(pt: pytest.Pytester) -> Path:
    pt.makepyfile(test_gated=_gated())  # 40 of 40
    path = pt.path / "base.json"
    res = pt.runpytest(*PLUGIN, "--ek-save-baseline", str(path))
    assert res.ret == 0
    res.stdout.fnmatch_lines([f"ek: baseline saved to {path}"])
    return path


def test_gate_exits_non_zero_only_on_a_real_regression(pt: pytest.Pytester, baseline: Path) -> None:
    # the per-test criterion (pass^1 >= 0) always holds: the exit code is the gate's
    same = pt.runpytest(*PLUGIN, "--ek-baseline", str(baseline))
    assert same.ret == 0
    same.stdout.fnmatch_lines(["*ek gate:*", "PASS: *"])

    pt.makepyfile(test_gated=_gated(a=9))  # 39 of 40: worse, but not significantly
    slight = pt.runpytest(*PLUGIN, "--ek-baseline", str(baseline))
    assert slight.ret == 0
    slight.stdout.fnmatch_lines(["*success_rate*underpowered*", "PASS: *"])

    pt.makepyfile(test_gated=_gated(a=3, b=3, c=3, d=3))  # 12 of 40: a real regression
    store = pt.path / "cur.jsonl"
    worse = pt.runpytest(*PLUGIN, "--ek-baseline", str(baseline), "--ek-store", str(store))
    worse.assert_outcomes(passed=4)
    assert worse.ret == pytest.ExitCode.TESTS_FAILED
    worse.stdout.fnmatch_lines(["*FAIL*success_rate*regression*", "REGRESSION: *"])
    # ek-agents gate on the same files says the same
    assert ek_agents(["gate", str(baseline), str(store)]) == 1


def test_gate_refusals_are_the_cli_refusals(pt: pytest.Pytester, baseline: Path) -> None:
    res = pt.runpytest(
        *PLUGIN, "--ek-baseline", str(baseline), "--ek-provenance", "suite_version=v2"
    )
    assert res.ret == 2  # as ek-agents gate exits on a refusal (not pytest's usage error, 4)
    res.stdout.fnmatch_lines(["*not comparable*suite_version*", "*REFUSED (exit 2)*"])
    _no_plugin_traceback(res)

    pt.makepyfile(
        test_gated="""
        import pytest

        @pytest.mark.ek(trials=3)
        def test_skips():
            pytest.skip("no sandbox")
        """
    )
    empty = pt.runpytest(*PLUGIN, "--ek-baseline", str(baseline))
    assert empty.ret == 2
    empty.stdout.fnmatch_lines(["*the current run has no trial*"])


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("trials=0", "trials must be an int >= 1, got 0"),
        ("trials=True", "trials must be an int >= 1, got True"),
        ("at_least=1.5", "at_least must be a number in [[]0, 1[]], got 1.5"),
        ("at_least=-0.1", "at_least must be a number in [[]0, 1[]], got -0.1"),
        ("confidence=1.0", "confidence must be a number in (0, 1), got 1.0"),
        ("trials=5, pass_hat_k=6", "pass_hat_k must be <= trials, got pass_hat_k=6 with trials=5*"),
        ("tirals=5", "*unknown argument(s) [[]'tirals'[]]*"),
        ("5", "*keyword arguments only*"),
    ],
)
def test_bad_markers_are_clear_collection_errors(
    pt: pytest.Pytester, marker: str, message: str
) -> None:
    pt.makepyfile(
        test_bad=f"""
        import pytest

        @pytest.mark.ek({marker})
        def test_x():
            pass
        """
    )
    res = pt.runpytest(*PLUGIN)
    assert res.ret == pytest.ExitCode.INTERRUPTED  # pytest: "1 error during collection"
    res.stdout.fnmatch_lines([f"test_bad.py::test_x: *{message}"])
    _no_plugin_traceback(res)


def test_bad_options_and_unreadable_baselines_are_usage_errors(pt: pytest.Pytester) -> None:
    pt.makepyfile(
        test_k="""
        import pytest

        @pytest.mark.ek(trials=5, pass_hat_k=3)
        def test_x():
            pass
        """
    )
    garbage = pt.path / "garbage.json"
    garbage.write_text("{not json")
    cases = [
        (["--ek-trials", "0"], "--ek-trials must be an int >= 1, got 0"),
        (["--ek-tolerance", "-1"], "--ek-tolerance must be a finite number >= 0, got -1.0"),
        (["--ek-provenance", "colour=red"], "--ek-provenance expects KEY=VALUE*'colour=red'"),
        (["--ek-baseline", "missing.json"], "--ek-baseline missing.json: *no such file*"),
        (["--ek-baseline", str(garbage)], f"--ek-baseline {garbage}: *not JSON*"),
    ]
    for args, message in cases:
        res = pt.runpytest(*PLUGIN, *args)
        assert res.ret == pytest.ExitCode.USAGE_ERROR, args
        res.stderr.fnmatch_lines([f"ERROR: {message}"])
        _no_plugin_traceback(res)
    res = pt.runpytest(*PLUGIN, "--ek-trials", "2")
    res.stdout.fnmatch_lines(["*--ek-trials 2 is fewer than this test's pass_hat_k=3*"])
    _no_plugin_traceback(res)


# ----------------------------------------------------------------------------- inert


UNRELATED = {
    "conftest": """
        import pytest

        @pytest.fixture
        def numbers():
            return [1, 2, 3]
        """,
    "test_unrelated": """
        import pytest

        @pytest.mark.parametrize("x", [1, 2, 3])
        def test_param(x, numbers):
            assert x in numbers

        def test_fails(numbers):
            assert numbers == [1, 2]

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass

        @pytest.mark.xfail(reason="known")
        def test_xfail():
            assert False

        class TestThing:
            def test_method(self, capsys):
                print("hello")
                assert True
        """,
}


def _normalised(res: pytest.RunResult) -> list[str]:
    # Durations vary; and pytest's own header lists the distributions of the plugins it loaded
    # ("plugins: ek-agents-0.1.0" once the entry point is installed): pytest's line, for every
    # installed plugin, not output of the plugin's.
    return [
        re.sub(r"\d+\.\d+s", "N.NNs", line)
        for line in res.outlines + res.errlines
        if not line.startswith("plugins: ")
    ]


@pytest.mark.parametrize("args", [(), ("-v", "-rA"), ("--co", "-q")])
def test_unrelated_suite_output_is_byte_identical(
    pt: pytest.Pytester, args: tuple[str, ...]
) -> None:
    pt.makepyfile(**UNRELATED)
    # (in this in-process run ek.agents.pytest_plugin may already be imported, by the doctests of ek/;
    # pytest then warns that it cannot rewrite the plugin's asserts: not the plugin's output)
    quiet = ("-W", "ignore::pytest.PytestAssertRewriteWarning")
    without = pt.runpytest(*quiet, *args)
    with_plugin = pt.runpytest(*PLUGIN, *quiet, *args)
    assert with_plugin.ret == without.ret
    assert _normalised(with_plugin) == _normalised(without)


@pytest.mark.slow
def test_unrelated_suite_never_starts_the_harness(pt: pytest.Pytester) -> None:
    # The plugin lives in ek.agents (issue 31: the core holds nothing that imports ek.agents), so
    # loading it imports the ek.agents package; an unrelated suite imports nothing more of ek.
    pt.makepyfile(
        test_probe="""
        import sys

        def test_probe(request):
            assert request.config.pluginmanager.has_plugin("ek.agents.pytest_plugin")
            for name in ("ek.agents.harness", "ek.agents._suite", "ek.agents._run.store",
                         "ek.agents.pytest_plugin._recorder", "inspect_ai", "deepeval", "ragas"):
                assert name not in sys.modules, name
        """
    )
    pt.runpytest_subprocess(*PLUGIN).assert_outcomes(passed=1)


@pytest.mark.slow
def test_example_runs_the_demo_agents(pt: pytest.Pytester) -> None:
    from ek.agents.base import RunProvenance
    from ek.agents.demo import baseline_agent, candidate_agent, load_tasks, replayed_state_match
    from ek.agents.harness import TrialContext

    def _ctx(task, trial, seed):  # the plugin's trial context, as its fixture builds it
        return TrialContext(task.task_id, trial, seed, RunProvenance(seed=0), k=5)

    example = Path(__file__).parent.parent / "examples" / "test_agent_with_pytest.py"
    pt.makepyfile(test_agent_with_pytest=example.read_text(encoding="utf-8"))
    res = pt.runpytest(
        *PLUGIN,
        "-k",
        "(baseline or candidate) and (easy-01 or easy-02)",
        "--ek-store",
        "demo.jsonl",
    )
    rows = [re.split(r"\s{2,}", x.strip()) for x in _table(res)[2:-1]]
    assert len(rows) == 8  # two agents on refund-easy-01/02 and lookup-easy-01/02
    # each row is what the agents do when run directly with the plugin's trial seeds
    agents = {"baseline": baseline_agent(), "candidate": candidate_agent()}
    tasks = {t.task_id: t for t in load_tasks()}
    for row in rows:
        test_id = row[0]
        agent = agents[test_id.split("::test_")[1].split("_agent")[0]]
        task = tasks[test_id.split("[")[1].rstrip("]")]
        oks = [
            replayed_state_match(agent(task, _ctx(task, i, trial_seed(0, test_id, i))), task)
            for i in range(5)
        ]
        assert row[1:3] == ["5", str(sum(oks))]
        assert row[-1] == ("passed" if pass_hat_k(5, sum(oks), 2) >= 0.5 else "failed")
        assert row[5].startswith("$")  # $/success from the demo's price table
    res.assert_outcomes(
        passed=sum(r[-1] == "passed" for r in rows), failed=sum(r[-1] == "failed" for r in rows)
    )
    assert ek_agents(["report", str(pt.path / "demo.jsonl")]) == 0
