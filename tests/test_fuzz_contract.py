"""The bad-input contract over the whole public API (issue 18), fuzzed with hypothesis.

Every public constructor, ``from_dict``, metric, checker, bridge, estimator, cost function and
judge constructor is fed junk: ``None``, bools, huge ints (``10**400``), NaN and infinities,
values nested 100,000 deep (built iteratively), lone surrogates, 10 MB strings, wrong types,
empty containers, odd strings, and small JSON-like structures made of all of these. The
contract, asserted exactly:

* the call returns, or raises ``ValueError`` / ``TypeError`` (or a documented project
  exception: most subclass ``ValueError``; ``JudgeError`` and ``HarnessError`` are the
  documented runtime failures), with a non-empty message of at most ``MAX_MESSAGE``
  characters even for a 10 MB input (values are cut *before* ``repr``);
* never any other exception (``AttributeError``, ``KeyError``, ``IndexError``,
  ``OverflowError``, ``RecursionError``, ``ZeroDivisionError``, ...);
* never a hang: every input is bounded (the largest a 10 MB string, 100,000 levels, 20,000
  items; a run of at most a few trials), and a call that reads its input element by element
  where it should refuse it at once (``cost_from_inspect_events("x" * 10**7)``) is a bug fixed
  in the code, not a slow example. ``HANG_SECONDS`` only stops a call that would never return
  (a SIGALRM ends it and the example fails): it is ten minutes, so no machine is slow enough
  to reach it with a call that returns, and no test here depends on the machine's speed.

The table ``ENTRIES`` is (id, callable, argument strategies): adding an entry point is one
line. ``SERIALISED`` adds the round-trip contract (issue 30): a public value that was built
writes strict JSON (``to_dict``; an ``Episode``'s ``to_json``) that its reader reads back to
the same JSON, or its constructor refuses it. The metrics and checkers come from the registry, so a newly registered one is fuzzed
without touching this file. Hypothesis runs derandomized (a fixed seed) with a small budget per
entry, so the whole file stays well under a minute.

A case that the contract catches in a module owned elsewhere is listed in ``PENDING`` with the
bug it shows: it is an ``xfail(strict=True)``, so fixing the bug makes the xfail fail and the
entry must then leave ``PENDING``. Do not widen the contract to make a case pass.
"""

from __future__ import annotations

import atexit
import importlib
import json
import math
import os
import shutil
import signal
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import ek.agents
import ek.agents._episode as episode
import ek.agents._fingerprint as fingerprint
import ek.agents._run.store as store
import ek.agents._spec as spec
import ek.agents.bridge as bridge
import ek.agents.cost as cost
import ek.agents.demo  # (registers the demo world's checker: fuzzed in every run)
import ek.agents.harness as suite
import ek.agents.judge as judge
import ek.agents.metrics as metrics
import ek.agents.toolcalls as toolcalls
import ek.agents.trajectory as trajectory
import ek.canon as canon
import ek.fields as fields
import ek.grammar as grammar
import ek.harness as scalar_gate
import ek.iaa as iaa
import ek.quality as quality
import ek.stats as stats
from ek._validate import as_verdict
from ek.agents.harness import (
    GateRefusedError,
    HarnessError,
    RunSummary,
    agent_regression_gate,
    load_run,
)
from ek.agents.verifier import hidden_tests
from ek.base import Score
from ek.evaluate import evaluate
from ek.registry import registered, resolve

# ``ek.agents.reliability`` the attribute is the function; the module is imported by name
reliability = importlib.import_module("ek.agents.reliability")

MAX_MESSAGE = 2_000
HANG_SECONDS = 600  # only a call that never returns reaches it: the inputs are bounded
EXAMPLES = 25  # per entry

# The contract's allowed failures. CallShapeError, GateRefusedError, UncalibratedScoreError and
# UnknownNameError subclass ValueError; JudgeError (a judge that failed) and HarnessError (the
# harness itself failed) are the documented runtime errors of their modules.
ALLOWED: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    judge.JudgeError,
    HarnessError,
    GateRefusedError,
)

# ----------------------------------------------------------------------------- junk


def _deep_list(depth: int) -> list[Any]:
    v: list[Any] = []
    for _ in range(depth):
        v = [v]
    return v


def _deep_dict(depth: int) -> dict[str, Any]:
    v: dict[str, Any] = {}
    for _ in range(depth):
        v = {"a": v}
    return v


def _cyclic() -> list[Any]:
    c: list[Any] = []
    c.append(c)
    return c


class _Opaque:
    """An object of no expected type, with a repr that raises (a hostile model output)."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


_BIG = "x" * 10_000_000

# Large or hostile values are drawn by name (a Ref) and put in place only inside the test body,
# so hypothesis never prints (or shrinks through) a 10 MB string or a 100,000-deep list.
NAMED: dict[str, Any] = {
    "deep_list": _deep_list(100_000),
    "deep_dict": _deep_dict(100_000),
    "deep_calls": {"tool_calls": _deep_list(100_000)},
    "big_str": _BIG,
    "big_key": {_BIG: 1},
    "big_list": [0] * 20_000,  # over every documented size limit (calls, steps, counts)
    "big_int": 10**400,
    "huge_int": 10**5000,
    "neg_big_int": -(10**400),
    "int64": 2**63,
    "opaque": _Opaque(),
    "cyclic": _cyclic(),
    "object": object(),
    "type": int,
    "bytes": b"\xff\xfe",
    "set": {1, 2},
    "lambda": lambda *a, **k: None,
    "raiser": lambda *a, **k: 1 / 0,
}


@dataclass(frozen=True)
class Ref:
    """A named junk value, put in place by :func:`_real` (short repr for hypothesis)."""

    name: str

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _real(x: Any) -> Any:
    """``x`` with every :class:`Ref` replaced by its value (``x`` is small: drawn by hypothesis)."""
    if isinstance(x, Ref):
        return NAMED[x.name]
    if type(x) is list:
        return [_real(v) for v in x]
    if type(x) is tuple:
        return tuple(_real(v) for v in x)
    if type(x) is dict:
        return {_real(k) if isinstance(k, Ref) else k: _real(v) for k, v in x.items()}
    return x


_ATOMS = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            1,
            -1,
            2,
            0.5,
            -0.0,
            math.nan,
            math.inf,
            -math.inf,
            1e308,
            5e-324,
            "",
            " ",
            "\ud800",
            "\udfff",
            "\x00",
            "a\nb",
            "NaN",
            "Infinity",
            "[]",
            "{}",
            "-1",
            "1e400",
            "\u202e",
            "é",
            "e\u0301",
            "None",
            "true",
            (),
            [],
            {},
            frozenset(),
        ]
    ),
    st.sampled_from(sorted(NAMED)).map(Ref),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)

_KEYS = st.one_of(
    st.text(max_size=8),
    st.sampled_from(
        [
            "tool",
            "name",
            "args",
            "arguments",
            "function",
            "input",
            "role",
            "content",
            "tool_calls",
            "id",
            "type",
            "scores",
            "value",
            "metadata",
            "messages",
            "task_id",
            "trajectory",
            "success",
            "cost",
            "usage",
            "model",
        ]
    ),
)

JUNK = st.recursive(
    _ATOMS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=12,
)
J = JUNK  # short name for the table


def junk_or(*good: Any) -> st.SearchStrategy[Any]:
    """Junk, or one of the given plausible values (so calls get past their first check)."""
    return st.one_of(JUNK, st.sampled_from(good)) if good else JUNK


# ----------------------------------------------------------------------------- plausible values

STEP = episode.Step("f", {"x": 1})
COST = episode.Cost(input_tokens=10, output_tokens=5, model="m")
EP = episode.Episode(
    "t", trajectory=[STEP], output="o", final_state={"a": 1}, cost=[COST], success=True
)
TOOL = spec.ToolSpec("f", [grammar.FieldSpec("x")])
TASK = spec.TaskSpec("t", gold={"a": 1}, gold_calls=[STEP], tools=[TOOL])
PRICE = cost.per_million(1.0, 2.0)
SCORE = Score(1.0, {"tp": 1.0, "fp": 0.0, "fn": 0.0, "passed": True})
INTERVAL = stats.Interval(0.5, 0.4, 0.6, 0.95, "wilson")
PAIRWISE = judge.PairwiseResult(0.5, "tie", 0.0, False, 0.5, 0.5, "tie")


def _judge_fn(output: Any, criteria: Any, *rest: Any) -> Any:
    return 0.5


def _episode_from(messages: Any) -> Any:
    """Model output as an Episode: messages through the bridge (junk trajectory refused -> EP)."""
    try:
        return episode.Episode("t", trajectory=bridge.trajectory_from_messages(messages))
    except (ValueError, TypeError):
        return EP


def _episode_with(output: Any, final_state: Any) -> Any:
    try:
        return episode.Episode("t", output=output, final_state=final_state)
    except (ValueError, TypeError):
        return EP


_MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["assistant", "tool", "user"])},
        optional={
            "tool_calls": JUNK,
            "content": JUNK,
            "tool_call_id": JUNK,
            "function_call": JUNK,
        },
    ),
    max_size=4,
)

# Episodes built from junk model output (kept small so hypothesis can print them).
EPISODES = st.one_of(
    st.just(EP),
    _MESSAGES.map(_episode_from),
    st.builds(_episode_with, JUNK.map(_real), JUNK.map(_real)),
)
MODEL_EPISODE = st.one_of(JUNK, EPISODES)
GOLD = junk_or(TASK, {"a": 1}, "o", None)

_TMP = Path(tempfile.mkdtemp(prefix="ek-fuzz-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
(_TMP / "empty.jsonl").write_text("", encoding="utf-8")
(_TMP / "garbage.jsonl").write_text("{not json\n\x00\n[1, 2]\n", encoding="utf-8")
(_TMP / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
(_TMP / "nan.json").write_text('{"m": {"input_cost_per_token": NaN}}', encoding="utf-8")
(_TMP / "list.json").write_text("[1, 2, 3]", encoding="utf-8")
(_TMP / "dir").mkdir()
if hasattr(os, "mkfifo"):
    os.mkfifo(_TMP / "fifo")

PATHS = st.one_of(
    JUNK,
    st.sampled_from(
        [
            str(_TMP / n)
            for n in (
                "empty.jsonl",
                "garbage.jsonl",
                "deep.json",
                "nan.json",
                "list.json",
                "dir",
                "missing.json",
            )
        ]
        + ([str(_TMP / "fifo")] if hasattr(os, "mkfifo") else [])
    ),
)

# Where a writer may write: only inside the scratch folder (junk non-paths still refused).
OUT_PATHS = st.one_of(
    st.sampled_from([None, True, 0, 1, 3.5, b"x", [], str(_TMP / "dir")]),
    st.integers(0, 10**6).map(lambda i: str(_TMP / f"out-{i}.jsonl")),
)

# ----------------------------------------------------------------------------- the table


class Entry:
    """One entry point: ``fn(*args, **kwargs)`` with each argument drawn from its strategy.

    ``path_errors``: a reader, for which a missing file is ``FileNotFoundError`` (a FIFO, a
    directory or an impossible path must still be a ValueError / TypeError).
    """

    __slots__ = ("args", "fn", "id", "kwargs", "path_errors")

    def __init__(
        self,
        id: str,
        fn: Callable[..., Any],
        args: tuple[st.SearchStrategy[Any], ...],
        kwargs: tuple[tuple[str, st.SearchStrategy[Any]], ...],
        path_errors: bool,
    ) -> None:
        self.id, self.fn, self.args, self.kwargs = id, fn, args, kwargs
        self.path_errors = path_errors

    def __repr__(self) -> str:  # what hypothesis prints for a failing case
        return f"<entry {self.id}>"


def E(
    id: str,
    fn: Callable[..., Any],
    *args: st.SearchStrategy[Any],
    _paths: bool = False,
    **kwargs: st.SearchStrategy[Any],
) -> Entry:
    return Entry(id, fn, tuple(args), tuple(kwargs.items()), _paths)


def _n(k: int) -> tuple[st.SearchStrategy[Any], ...]:
    return tuple(J for _ in range(k))


INT = junk_or(0, 1, 2, 5, 10)
FLOAT = junk_or(0.0, 0.5, 1.0, 0.95)
FLOATS = st.one_of(
    J,
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6),
    st.lists(junk_or(0.0, 1.0, 0.5), max_size=6),
)
PAIRS = st.one_of(J, st.dictionaries(st.text(max_size=3), st.tuples(INT, INT), max_size=3))
SCORES = st.one_of(J, st.lists(junk_or(SCORE), max_size=4))
STEPS = st.one_of(J, st.lists(junk_or(STEP, {"tool": "f", "args": {"x": 1}}), max_size=4))

CORE: list[Entry] = [
    E("Score", Score, J, J),
    E("Score.value", Score, J),
    E("FieldSpec", grammar.FieldSpec, J, J, J, J),
    E("FieldSpec.from_dict", grammar.FieldSpec.from_dict, J),
    E("NodeType", grammar.NodeType, J, J, J),
    E("GraphGrammar", grammar.GraphGrammar, J, default_weight=FLOAT, default_importance=FLOAT),
    E("evaluate", evaluate, junk_or(resolve("metrics", "tool_calls")), J, J),
    E("cohen_kappa", iaa.cohen_kappa, J, J, J),
    E("cohen_kappa.labels", iaa.cohen_kappa, junk_or([1, 2]), junk_or([1, 2]), labels=J),
    E("krippendorff_alpha", iaa.krippendorff_alpha, J, junk_or("nominal", "interval")),
    E(
        "krippendorff_alpha.domain",
        iaa.krippendorff_alpha,
        junk_or([[1, 2], [1, None]]),
        value_domain=J,
    ),
    E("interval_alpha_pairs", iaa.interval_alpha_pairs, J),
    E("fit_isotonic", quality.fit_isotonic, FLOATS, FLOATS),
    E("fit_isotonic.weights", quality.fit_isotonic, FLOATS, FLOATS, weights=FLOATS),
    E("isotonic_regression", quality.isotonic_regression, FLOATS, FLOATS),
    E("IsotonicCalibrator", quality.IsotonicCalibrator, J, J, J, J),
    E("IsotonicCalibrator.from_dict", quality.IsotonicCalibrator.from_dict, J),
    E("estimate_quality", quality.estimate_quality, J, J, calibrator=J, threshold=J),
    E("order_signals", quality.order_signals, J),
    E("regression_gate", scalar_gate.regression_gate, J, J, tolerance=J, higher_is_better=J),
    E(
        "regression_gate.values",
        scalar_gate.regression_gate,
        st.dictionaries(st.text(max_size=2), J),
        st.dictionaries(st.text(max_size=2), J),
    ),
    E("metric_direction", scalar_gate.metric_direction, J, J, J),
    E("load_baseline", scalar_gate.load_baseline, PATHS, _paths=True),
    E("resolve", resolve, J, J),
    E("resolve_canonicalizer", canon.resolve_canonicalizer, J),
    E("canonicalize_text", canon.canonicalize_text, J),
    E("bfcl_standardize", canon.bfcl_standardize, J),
    E("compare_fields", fields.compare_fields, J, J),
    E(
        "compare_fields.importance",
        fields.compare_fields,
        junk_or({"a": 1}),
        junk_or({"a": 2}),
        importance=J,
    ),
    E("f1_score", fields.f1_score, J, J, J),
    E("micro_f1", fields.micro_f1, J),
    E("FieldCounts", fields.FieldCounts, J, J, J),
]

STATS: list[Entry] = [
    E("wilson_interval", stats.wilson_interval, INT, INT, FLOAT),
    E("newcombe_difference", stats.newcombe_difference, INT, INT, INT, INT, FLOAT),
    E("difference_interval", stats.difference_interval, FLOATS, FLOATS, FLOAT),
    E("difference_upper_bound", stats.difference_upper_bound, FLOATS, FLOATS, FLOAT),
    E(
        "bootstrap_interval",
        stats.bootstrap_interval,
        FLOATS,
        J,
        confidence=FLOAT,
        n_resamples=junk_or(10, 100, 10**12),
        seed=J,
    ),
    E("normal_quantile", stats.normal_quantile, J),
    E("two_sided_z", stats.two_sided_z, J),
    E("student_t_quantile", stats.student_t_quantile, J, junk_or(1, 3.5, 29)),
    E("student_t_cdf", stats.student_t_cdf, J, junk_or(1, 3.5, 29)),
    E("two_sided_t", stats.two_sided_t, J, junk_or(1, 29)),
    E("clustered_se", stats.clustered_se, FLOATS),
    E("mean_interval", stats.mean_interval, FLOATS, FLOAT),
    E("ratio_interval", stats.ratio_interval, FLOATS, FLOATS, FLOAT),
    E("t_interval", stats.t_interval, FLOAT, FLOAT, INT, FLOAT, junk_or("m")),
    E("welch_df", stats.welch_df, FLOAT, INT, FLOAT, INT),
    E("choose_interval", stats.choose_interval, junk_or("auto", "clustered"), INT),
    E("expanded_tail", stats.expanded_tail, FLOAT, INT),
    E("quantile", stats.quantile, FLOATS, J),
    E("mean", stats.mean, FLOATS),
    E("Interval", stats.Interval, J, J, J, J, J),
    E("Interval.from_dict", stats.Interval.from_dict, J),
    E("pass_at_k", reliability.pass_at_k, INT, INT, INT),
    E("pass_hat_k", reliability.pass_hat_k, INT, INT, INT),
    E(
        "reliability",
        reliability.reliability,
        PAIRS,
        junk_or(None, 1, 2),
        slices=J,
        confidence=FLOAT,
        n_resamples=junk_or(10, 10**12),
        seed=J,
        interval=junk_or("auto", "bootstrap", "clustered"),
    ),
]

AGENTS: list[Entry] = [
    E("Step", episode.Step, J, J, J, J, J),
    E("Step.from_dict", episode.Step.from_dict, J),
    E("Trajectory", episode.Trajectory, STEPS),
    E("Cost", episode.Cost, *_n(5)),
    E("Cost.kw", episode.Cost, model=J, role=J, dollars=J, reasoning_tokens=J),
    E("Cost.from_dict", episode.Cost.from_dict, J),
    E("RunProvenance", episode.RunProvenance, *_n(5)),
    E("RunProvenance.from_dict", episode.RunProvenance.from_dict, J),
    E("Episode", episode.Episode, J, STEPS, J, J, J, J),
    E("Episode.from_dict", episode.Episode.from_dict, J),
    E("Episode.from_json", episode.Episode.from_json, J),
    E("read_episodes", lambda p: list(episode.read_episodes(p)), PATHS, _paths=True),
    E("write_episodes", episode.write_episodes, OUT_PATHS, st.one_of(J, st.lists(EPISODES))),
    E("ToolSpec", spec.ToolSpec, J, J, parameters=J, destructive=J, weight=J, importance=J),
    E("ToolSpec.from_dict", spec.ToolSpec.from_dict, J),
    E("ToolSpec.from_openai", spec.ToolSpec.from_openai, J),
    E("TaskSpec", spec.TaskSpec, J, J, J, J, STEPS),
    E("TaskSpec.from_dict", spec.TaskSpec.from_dict, J),
    E("suite_grammar", spec.suite_grammar, J),
    E("ModelPrice", cost.ModelPrice, *_n(5)),
    E("ModelPrice.from_dict", cost.ModelPrice.from_dict, J),
    E("per_million", cost.per_million, J, J, cache_read=J, model=J),
    E("dollars", cost.dollars, junk_or(COST), junk_or(PRICE, {"m": PRICE})),
    E("price_cost", cost.price_cost, junk_or(COST), junk_or(PRICE, {"m": PRICE})),
    E("episode_dollars", cost.episode_dollars, MODEL_EPISODE, junk_or(PRICE), role=J),
    E("cost_of_pass", cost.cost_of_pass, J, J),
    E("corpus_cost_of_pass", cost.corpus_cost_of_pass, J),
    E(
        "cost_report",
        cost.cost_report,
        st.one_of(J, st.lists(MODEL_EPISODE, max_size=3)),
        price=junk_or(PRICE),
        successes=J,
    ),
    E("resolve_price", cost.resolve_price, J, junk_or({"m": PRICE})),
    E("load_prices", cost.load_prices, PATHS, tier=J, _paths=True),
    E("pricing_from_dict", cost.pricing_from_dict, J),
    E("final_state_match", metrics.final_state_match, MODEL_EPISODE, GOLD),
    E("output_match", metrics.output_match, MODEL_EPISODE, GOLD),
    E("recorded_success", metrics.recorded_success, MODEL_EPISODE, GOLD),
    E("resolve_checker", metrics.resolve_checker, J),
    E("TaskSuccessMetric", metrics.TaskSuccessMetric, J),
    E("CostPerSuccessMetric", metrics.CostPerSuccessMetric, J, price=J, prices=J),
    E("ToolCallMetric", toolcalls.ToolCallMetric, J, J),
    E("TrajectoryMetric", trajectory.TrajectoryMetric, J, J, J),
    E("match_calls", toolcalls.match_calls, STEPS, STEPS, canonicalizer=J),
    E(
        "align_trajectory",
        trajectory.align_trajectory,
        STEPS,
        STEPS,
        scheme=junk_or(*trajectory.SCHEMES),
    ),
    E("normalize_call", toolcalls.normalize_call, J, strict=J),
    E("normalize_calls", toolcalls.normalize_calls, J, strict=junk_or(True, False)),
    E("AnyOf", toolcalls.AnyOf, J, J, optional=J),
    E("GoldCall", toolcalls.GoldCall, J, J),
    E("from_bfcl", toolcalls.from_bfcl, J, J),
    E("JudgeSignal", judge.JudgeSignal, junk_or(_judge_fn), J, scale=J, timeout=J, name=J),
    E(
        "JudgeMetric",
        judge.JudgeMetric,
        junk_or(_judge_fn),
        J,
        scale=J,
        threshold=J,
        timeout=J,
        on_error=J,
    ),
    E("JudgeSignal.call", lambda o: judge.JudgeSignal(lambda *a: o, "c")("out"), J),
    E(
        "JudgeMetric.call",
        lambda o, p: judge.JudgeMetric(lambda *a: o, "c")(p, TASK),
        J,
        MODEL_EPISODE,
    ),
    E("pairwise_judge", judge.pairwise_judge, junk_or(_judge_fn), J, J, J, timeout=J),
    E(
        "judge_validation",
        judge.judge_validation,
        FLOATS,
        FLOATS,
        level=J,
        threshold=J,
        n_resamples=junk_or(10, 10**12),
    ),
    E("mean_position_bias", judge.mean_position_bias, st.one_of(J, st.lists(junk_or(PAIRWISE)))),
    E("hidden_tests", hidden_tests, J, timeout=J),
    E("agent_regression_gate", agent_regression_gate, PATHS, PATHS, _paths=True),
    E("agent_regression_gate.junk", agent_regression_gate, J, J, _paths=True),
    E("load_run", load_run, PATHS, _paths=True),
    E("RunSummary.from_dict", RunSummary.from_dict, J),
]

BRIDGES: list[Entry] = [
    E("trajectory_from_messages", bridge.trajectory_from_messages, st.one_of(J, _MESSAGES)),
    E("cost_from_usage", bridge.cost_from_usage, J, J, J),
    E("cost_from_inspect_events", bridge.cost_from_inspect_events, J, roles=J),
    E("from_inspect_sample", bridge.from_inspect_sample, J, success=J, success_from=J),
    E(
        "from_inspect_sample.msgs",
        bridge.from_inspect_sample,
        st.fixed_dictionaries(
            {"id": J, "messages": _MESSAGES}, optional={"scores": J, "output": J, "metadata": J}
        ),
    ),
    E("inspect_sample_record", bridge.inspect_sample_record, J, success_from=J),
    E("inspect_verdict", bridge.inspect_verdict, J, J),
    E("success_from_inspect_scores", bridge.success_from_inspect_scores, J, J),
    E("ek_scores_from_inspect_scores", bridge.ek_scores_from_inspect_scores, J),
    E("provenance_from_inspect_header", bridge.provenance_from_inspect_header, J),
    E(
        "episodes_from_inspect_log",
        lambda p: list(bridge.episodes_from_inspect_log(p)),
        PATHS,
        _paths=True,
    ),
    E("read_inspect_log", lambda p: list(bridge.read_inspect_log(p)), PATHS, _paths=True),
    E("from_deepeval_test_case", bridge.from_deepeval_test_case, J, task_id=J),
    E("from_deepeval_trace", bridge.from_deepeval_trace, J, task_id=J),
    E("from_ragas_sample", bridge.from_ragas_sample, J, task_id=J),
    E(
        "from_ragas_sample.msgs",
        bridge.from_ragas_sample,
        st.fixed_dictionaries(
            {"user_input": st.one_of(J, _MESSAGES)},
            optional={"reference_tool_calls": J, "reference": J},
        ),
    ),
]


def _agent(task: Any) -> Any:
    return episode.Episode(task.task_id, output="o", cost=[COST])


def _run_suite(tasks: Any, **options: Any) -> Any:
    """``run_suite`` of a fixed agent: the tasks and every option are junk (issue 30)."""
    return suite.run_suite(_agent, tasks, **options)


_TASKS = junk_or([TASK], [TASK, spec.TaskSpec("u", gold="o")])
_STORE_HEADER = junk_or({"run": {}, "suite": {"fingerprint": "f"}, "k": 1})

# Runs, stores and configurations (issue 30). Writers write only inside the scratch folder.
RUNS: list[Entry] = [
    E(
        "run_suite",
        _run_suite,
        _TASKS,
        k=junk_or(1, 2),
        check=junk_or(None, "output", metrics.output_match),
        metrics=junk_or(None, ["tool_calls"], ["cost_per_success"]),
        price=junk_or(None, PRICE),
        prices=junk_or(None, {"m": PRICE}),
        store=OUT_PATHS,
        seed=J,
        timeout=junk_or(None, 30.0),
        concurrency=junk_or(1, 4),
        max_retries=junk_or(0, 1),
        resume_undescribed_checker=junk_or(False, True),
    ),
    E(
        "run_suite.options",
        _run_suite,
        _TASKS,
        budget=J,
        adaptive=J,
        faults=J,
        fault=J,
        retry_on=J,
        progress=J,
        run=J,
        confidence=J,
        n_resamples=junk_or(10),
    ),
    E("SuiteConfig", suite.SuiteConfig, J, J, J, J, J, J, J),
    E(
        "TrialStore.open",
        lambda p, h: store.TrialStore.open(p, h).close(),
        OUT_PATHS,
        _STORE_HEADER,
    ),
    E("replace_store", store.replace_store, OUT_PATHS, _STORE_HEADER, st.one_of(J, st.lists(J))),
    E("read_store", store.read_store, PATHS, _paths=True),
    E("iter_store", lambda p, sh: list(store.iter_store(p, shard=sh)), PATHS, J, _paths=True),
    E("describe", fingerprint.describe, J),
    E("callable_config", fingerprint.callable_config, J, J),
    E(
        "metric_config",
        fingerprint.metric_config,
        junk_or(*(resolve("metrics", n) for n in registered("metrics"))),
    ),
    E("config_diff", fingerprint.config_diff, J, J),
    E(
        "as_verdict",
        lambda v, allow_none=False: as_verdict("check", v, allow_none=allow_none),
        J,
        allow_none=J,
    ),
    E("check_pricing", cost.check_pricing, junk_or(PRICE), junk_or({"m": PRICE})),
    E("cost_report.prices", cost.cost_report, st.just([EP]), prices=junk_or({"m": PRICE})),
    E("resolve_price.catalogue", cost.resolve_price, junk_or("m", "x/m"), junk_or({"m": PRICE})),
    E(
        "from_inspect_sample.usage",
        bridge.from_inspect_sample,
        st.fixed_dictionaries(
            {"id": junk_or(1, "s"), "messages": st.just([])},
            optional={"model_usage": J, "events": J},
        ),
    ),
    E(
        "FieldSpec.kw",
        grammar.FieldSpec,
        junk_or("x"),
        importance=J,
        description=J,
        schema=J,
        type=J,
        required=J,
    ),
    E("IsotonicCalibrator.kw", quality.IsotonicCalibrator, FLOATS, FLOATS, J, J, J),
]


def _registry_entries() -> Iterator[Entry]:
    """Every registered metric and checker: called, aggregated and rebuilt on junk."""
    for name in registered("metrics"):
        m = resolve("metrics", name)
        yield E(f"metrics/{name}", m, MODEL_EPISODE, GOLD)
        yield E(f"metrics/{name}.task", m, EPISODES, junk_or(TASK))
        yield E(f"metrics/{name}.aggregate", m.aggregate, SCORES)
        yield E(f"metrics/{name}.class", type(m), J, J)
    for name in registered("checkers"):
        yield E(f"checkers/{name}", resolve("checkers", name), MODEL_EPISODE, GOLD)
    for name in registered("checker_factories"):
        yield E(f"checker_factories/{name}", resolve("checker_factories", name), J)


ENTRIES: list[Entry] = [*CORE, *STATS, *AGENTS, *BRIDGES, *RUNS, *_registry_entries()]

# Bugs the contract finds in modules owned elsewhere, by test ("fuzz" or "named") and entry id:
# the bug and a one-line reproduction. Each is a strict xfail until its owner fixes it.
PENDING: dict[tuple[str, str], str] = {}


def _params(test: str) -> list[Any]:
    out = []
    for e in ENTRIES:
        reason = PENDING.get((test, e.id))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(e, id=e.id, marks=marks))
    return out


# ----------------------------------------------------------------------------- the contract


class Hang(BaseException):
    """A call ran past HANG_SECONDS (a BaseException, so no ``except Exception`` swallows it)."""


@contextmanager
def _no_hang() -> Iterator[None]:
    if not hasattr(signal, "setitimer"):
        yield
        return

    def _alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no return within {HANG_SECONDS} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def holds(entry: Entry, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Call ``entry`` and assert the contract on what happens."""
    allowed = (*ALLOWED, FileNotFoundError, PermissionError) if entry.path_errors else ALLOWED
    try:
        with warnings.catch_warnings(), _no_hang():
            warnings.simplefilter("ignore")
            result = entry.fn(*args, **kwargs)
            if hasattr(result, "close") and hasattr(result, "send"):  # a coroutine or generator
                result.close()
    except ImportError as e:  # documented: a function that needs a host names its extra
        assert "pip install ek-agents[" in str(e), f"{entry.id}: ImportError {str(e)[:300]}"
    except allowed as e:
        message = str(e)
        assert message, f"{entry.id}: {type(e).__name__} with an empty message"
        assert len(message) <= MAX_MESSAGE, (
            f"{entry.id}: {type(e).__name__} message of {len(message)} chars: {message[:300]}"
        )


SETTINGS = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the named-junk test is minimal
    suppress_health_check=list(HealthCheck),
)


@pytest.mark.parametrize("entry", _params("fuzz"))
@SETTINGS
@given(data=st.data())
def test_bad_input_contract(entry: Entry, data: st.DataObject) -> None:
    args = tuple(_real(data.draw(s, label=f"arg{i}")) for i, s in enumerate(entry.args))
    kwargs = {k: _real(data.draw(s, label=k)) for k, s in entry.kwargs}
    holds(entry, args, kwargs)


@pytest.mark.parametrize("entry", _params("named"))
def test_every_named_junk_alone(entry: Entry) -> None:
    # each hostile value in every position once, the other arguments None (no luck needed)
    names = [k for k, _ in entry.kwargs]
    slots = len(entry.args) + len(names)
    for value_name, value in NAMED.items():
        for pos in range(slots):
            args = tuple(value if i == pos else None for i in range(len(entry.args)))
            kwargs = {k: value if len(entry.args) + j == pos else None for j, k in enumerate(names)}
            try:
                holds(entry, args, kwargs)
            except AssertionError as e:
                raise AssertionError(f"<{value_name}> as argument {pos}: {e}") from None


# Public values that write themselves (issue 30): what a constructor accepts, ``to_dict`` writes
# as strict JSON and ``from_dict`` reads back to the same JSON (an Episode: ``to_json`` and
# ``from_json``, or a ValueError saying why it cannot be written). Every field is junk, in turn.
SERIALISED: list[Entry] = [
    E("FieldSpec", grammar.FieldSpec, junk_or("x"), J, junk_or(True), J, J, J),
    E(
        "ToolSpec",
        spec.ToolSpec,
        junk_or("f"),
        junk_or((), [grammar.FieldSpec("x")]),
        parameters=J,
        destructive=J,
        weight=J,
        importance=J,
        description=J,
    ),
    E("TaskSpec", spec.TaskSpec, junk_or("t"), J, J, junk_or((), [TOOL]), STEPS, J, J, J),
    E("ModelPrice", cost.ModelPrice, *_n(5), J, J, J),
    E("RunProvenance", episode.RunProvenance, *_n(7), J),
    E("Cost", episode.Cost, *_n(6), J, J),
    E("Interval", stats.Interval, *(FLOAT for _ in range(4)), J, J),
    E("IsotonicCalibrator", quality.IsotonicCalibrator, FLOATS, FLOATS, J, J, J),
    E("RunSummary", RunSummary, junk_or(episode.RunProvenance()), INT, PAIRS, J),
    E("Episode", episode.Episode, junk_or("t"), STEPS, J, J, J, J, J, J, J, J, J, J),
    E("Step", lambda *a: episode.Episode("t", trajectory=[episode.Step(*a)]), junk_or("f"), J, J),
]


def _written_and_read_back(obj: Any) -> None:
    """Assert that ``obj`` writes JSON its reader reads back to the same JSON."""
    cls = type(obj)
    if cls is episode.Episode:
        try:
            line = obj.to_json()
        except ValueError as e:  # refused, saying why: never a line that does not read back
            assert str(e) and len(str(e)) <= MAX_MESSAGE
            return
        assert cls.from_json(line).to_json() == line
        return
    text = json.dumps(obj.to_dict(), allow_nan=False)  # strict JSON, or this raises
    back = cls.from_dict(json.loads(text))
    assert json.dumps(back.to_dict(), allow_nan=False) == text


@pytest.mark.parametrize("entry", SERIALISED, ids=lambda e: e.id)
@SETTINGS
@given(data=st.data())
def test_what_is_built_is_written_as_json_that_reads_back(
    entry: Entry, data: st.DataObject
) -> None:
    args = tuple(_real(data.draw(s, label=f"arg{i}")) for i, s in enumerate(entry.args))
    kwargs = {k: _real(data.draw(s, label=k)) for k, s in entry.kwargs}
    try:
        with warnings.catch_warnings(), _no_hang():
            warnings.simplefilter("ignore")
            obj = entry.fn(*args, **kwargs)
    except ALLOWED as e:
        assert str(e) and len(str(e)) <= MAX_MESSAGE, f"{entry.id}: {type(e).__name__}"
        return
    with _no_hang():
        _written_and_read_back(obj)


@pytest.mark.parametrize("entry", SERIALISED, ids=lambda e: e.id)
def test_every_named_junk_alone_is_refused_or_reads_back(entry: Entry) -> None:
    names = [k for k, _ in entry.kwargs]
    for value_name, value in NAMED.items():
        for pos in range(len(entry.args) + len(names)):
            good = tuple(_GOOD.get(entry.id, {}).get(i) for i in range(len(entry.args)))
            args = [value if i == pos else good[i] for i in range(len(entry.args))]
            kwargs = {k: value for j, k in enumerate(names) if len(entry.args) + j == pos}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    obj = entry.fn(*args, **kwargs)
            except ALLOWED:
                continue
            try:
                _written_and_read_back(obj)
            except (AssertionError, ValueError, TypeError, RecursionError) as e:
                raise AssertionError(
                    f"{entry.id}: <{value_name}> as argument {pos} was accepted, but "
                    f"{type(e).__name__}: {str(e)[:200]}"
                ) from None


# The plausible positional values the named-junk round trip keeps around the junk one.
_GOOD: dict[str, dict[int, Any]] = {
    "FieldSpec": {0: "x", 2: True},
    "ToolSpec": {0: "f"},
    "TaskSpec": {0: "t"},
    "Interval": {0: 0.5, 1: 0.4, 2: 0.6, 3: 0.95, 4: "wilson"},
    "IsotonicCalibrator": {0: (0.0, 1.0), 1: (0.2, 0.8)},
    "RunSummary": {0: episode.RunProvenance(), 1: 1, 2: {"t": (1, 1)}},
    "Episode": {0: "t"},
    "Step": {0: "f"},
}


def test_the_registry_is_fuzzed() -> None:
    ids = {e.id for e in ENTRIES}
    for name in registered("metrics"):
        assert f"metrics/{name}" in ids and f"metrics/{name}.aggregate" in ids
    for name in registered("checkers"):
        assert f"checkers/{name}" in ids
    public = [(ek.agents, n) for n in ek.agents.__all__] + [(ek, n) for n in ek.__all__]
    for module, name in public:  # every public class with a from_dict
        obj = getattr(module, name)
        if isinstance(obj, type) and hasattr(obj, "from_dict"):
            assert f"{name}.from_dict" in ids, f"{name}.from_dict is not fuzzed"
