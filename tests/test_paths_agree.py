"""Issues 16 and 19: one number, whatever the path (DESIGN §5, "One number whatever the path").

The embedded demo suite's trials, 30 tasks x 5 trials x {baseline, candidate} = 300 episodes,
are scored by every path a user can take:

(a) **direct**: each metric called on the episode with its task's grammar
    (``ToolCallMetric(task.grammar())``, ``TrajectoryMetric(grammar=task.grammar())``; the
    task-success and Cost-of-Pass metrics with the demo's checker and illustrative prices);
(b) **run_suite**, as the demo calls it (``demo_metrics()`` plus ``TaskSuccessMetric``), into a
    trial store;
(c) **Inspect AI**: the demo's own Inspect run (``run_inspect_demo``: mockllm replays each agent,
    one epoch per trial, the ek scorer and ek's pass^k reducer);
(d) **DeepEval** ``evaluate()`` with one ``EkMetric`` per ek metric, on ``to_deepeval_test_case``;
(e) **Ragas** ``evaluate()`` with one ``ek_ragas_metric`` per ek metric, on ``to_ragas_sample``;
(f) **``ek-agents report --json``** on each run's trial store and on the Inspect log;
(g) **traces** (issue 19): each episode replayed as a real, instrumented pydantic-ai agent run
    (:class:`DemoReplay`: a ``FunctionModel`` scripted to ask for exactly the episode's tool
    calls in order, tools that return the recorded observations or raise ``ModelRetry`` with the
    recorded refusal, the final output, and each model call's usage), exported with the
    OpenTelemetry SDK's ``InMemorySpanExporter``; each run sits in a harness span ``trial``
    carrying ``ek.task_id``, ``ek.trial`` and ``ek.success``. Read back live
    (``episodes_from_spans``) and from an OTLP JSON-lines file (``write_otlp_json``, then
    ``read_trace_episodes`` and ``ek-agents report FILE --json --task-attribute ek.task_id
    --trial-attribute ek.trial --success-attribute ek.success --prices DEMO.json``);
(h) **pydantic-evals**: the same replayed runs inside a ``Dataset`` (one ``Case`` per task, the
    gold in ``Case.metadata``, ``repeat=5``), one ``EkEvaluator`` per ek metric, read back with
    ``summary_from_report``.

Path (a) is the reference. Every per-episode value of every other path is compared with it,
keyed by ``(agent, task_id, trial)``, together with the sums its aggregate needs (``tp``/``fp``/
``fn``, ``cost``/``worst_case``, ``dollars``/``successes``/``n``) and its verdict. Every corpus
aggregate is compared with ``metric.aggregate(path-(a) scores)`` (ratios of sums, DESIGN rule
6) per agent and per slice. Where a host insists on its own mean (Inspect's ``accuracy`` and its
built-in ``mean`` epoch reducer, the Ragas result's dataframe mean), the test says so and checks
that mean against the mean of ek's rows instead. Equality is to 1e-12, absolute.

Scope notes (what is deliberately not covered):

* Inspect replays **both agents** (``run_inspect_demo(agent=...)``), one Inspect run each, so
  all 300 trials go through Inspect too; it is the slow path (about 0.25 s per sample and
  epoch on 2 cores, ~36 s per agent).
* DeepEval and Ragas run on all 300 episodes (~4 s and ~2 s): no subset is needed.
* Traces and pydantic-evals replay all 300 episodes too (~12 s and ~8 s on 2 shared cores).
* **Success on path (g).** A trace has no final state. The demo's checker
  (``replayed_state_match``) never reads one: it replays the episode's calls on a fresh
  database, so it is re-applied to the Episodes read back from the spans, and task success and
  Cost-of-Pass are compared per episode like the other metrics. ``ek-agents report`` on a trace
  file takes no Python checker: there the verdict is **carried, not recomputed**: path (a)'s
  verdict is recorded in the ``ek.success`` attribute and read with ``--success-attribute``.
* **Token kinds and roles on paths (g) and (h).** pydantic-ai's ``input_tokens`` includes
  cache reads and writes, so the replay reports ek's uncached input plus both cache counts and
  the reader subtracts them again. pydantic-ai 2.62 does not emit ``output_reasoning_tokens``
  as a span attribute: the reasoning count travels in ``RequestUsage.details``
  (``gen_ai.usage.details.reasoning_tokens``). The demo records no cache writes, so only a zero
  cache-write count goes through pydantic-ai's ``cache_write_tokens`` here. pydantic-ai's usage
  has no role: every model call of a run is the agent's spend (ek's role ``"agent"``), which is
  all the demo has; a simulator's or judge's spend would have to be traced as a run of its own.
  With that, each read-back Episode's Cost equals path (a)'s exactly (model included: the
  ``FunctionModel`` names it on every response). pydantic-evals' report does not name the model,
  so ``summary_from_report`` gets it (``model=``) to price with ``DEMO_PRICES``.
* A trace file has no gold, so ``ek-agents report`` on it shows counts, pass^k and the cost
  report (Cost-of-Pass), no per-metric values, and no slices (a trace does not name them): the
  metrics, per agent and per slice, are checked on the Episodes read back instead.
* pydantic-evals keeps only an evaluator's finite numbers and its ``passed`` assertion, so
  Cost-of-Pass' bool ``success`` is not in its rows; its ``successes`` (1 or 0) is, and compared.
* A failed call's ``Step.observation`` is not compared: pydantic-ai records the ``ModelRetry``
  message as the tool span's ``gen_ai.tool.call.result``, so the reader gives it as the
  observation as well as the error (path (a) has no observation there). Errors are compared.

Every host runs once per module (module-scoped fixtures); each test collects *all* its
disagreements before failing, so one run tells which path disagrees on what, by how much.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ek.agents.base import Cost, Episode, RunProvenance, TaskSpec
from ek.agents.cli import main as ek_agents
from ek.agents.demo import (
    DEMO_PRICES,
    SUITE_VERSION,
    TOOLS,
    baseline_agent,
    candidate_agent,
    load_tasks,
    replayed_state_match,
)
from ek.agents.demo._run import DEMO_SCAFFOLD, demo_metrics
from ek.agents.harness import SuiteResult, TrialContext, run_suite, trial_seed
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.reliability import pass_hat_k
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric
from ek.base import Score
from ek.jsonio import from_json_safe

pytestmark = pytest.mark.slow

K = 5  # trials per task (the demo's default)
SEED = 0  # the demo's default run seed
TOL = 1e-12  # absolute: every number compared here is a probability, an F1 or cents
NAMES = ("task_success", "cost_per_success", "tool_calls", "trajectory")
#: The detail sums each metric's aggregate reads (what a host must carry for a ratio of sums).
SUMS: Mapping[str, tuple[str, ...]] = {
    "task_success": ("successes", "n"),
    "cost_per_success": ("dollars", "successes", "n"),
    "tool_calls": ("tp", "fp", "fn"),
    "trajectory": ("cost", "worst_case"),
}
#: The verdict each metric puts in its detail.
VERDICT = {
    "task_success": "passed",
    "cost_per_success": "success",
    "tool_calls": "passed",
    "trajectory": "passed",
}
#: Pass marks for the DeepEval shells (they do not change any score).
THRESHOLDS = {"task_success": 1.0, "cost_per_success": 1.0, "tool_calls": 0.5, "trajectory": 0.5}
MAX_SHOWN = 25

Key = tuple[str, str, int]  # (agent, task_id, trial)
Row = tuple[Any, Mapping[str, Any]]  # (value, detail) of one metric on one episode
Rows = Mapping[Key, Mapping[str, Row]]


def ek_metrics(grammar: Any = None) -> dict[str, Any]:
    """The four ek metrics, configured as the demo configures them."""
    return {
        "task_success": TaskSuccessMetric(check=replayed_state_match),
        "cost_per_success": CostPerSuccessMetric(check=replayed_state_match, prices=DEMO_PRICES),
        "tool_calls": ToolCallMetric(grammar),
        "trajectory": TrajectoryMetric(grammar=grammar),
    }


#: Aggregation only (``aggregate`` reads the score details, never the grammar).
AGG = ek_metrics()


def agents() -> list[Any]:
    return [baseline_agent(), candidate_agent()]


# --------------------------------------------------------------------------- comparison


def same(got: Any, want: Any) -> bool:
    """Equal to :data:`TOL`; NaN equals NaN, ``inf`` equals ``inf``, ``None`` only ``None``."""
    if got is None or want is None:
        return got is None and want is None
    if isinstance(got, bool) or isinstance(want, bool):
        return bool(got) == bool(want) and isinstance(got, bool) == isinstance(want, bool)
    try:
        g, w = float(got), float(want)
    except (TypeError, ValueError):
        return False
    if math.isnan(g) or math.isnan(w):
        return math.isnan(g) and math.isnan(w)
    if math.isinf(g) or math.isinf(w):
        return g == w
    return abs(g - w) <= TOL


def show(key: Key) -> str:
    return f"{key[0]}/{key[1]}#{key[2]}"


class Diffs:
    """Every disagreement of one test, grouped by ``(path, metric)`` for the failure message."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, group: str, message: str) -> None:
        self.items.append((group, message))

    def number(self, group: str, where: str, got: Any, want: Any) -> None:
        if not same(got, want):
            delta = ""
            with contextlib.suppress(TypeError, ValueError):
                delta = f" (diff {float(got) - float(want):+.3g})"
            self.add(group, f"{where}: got {got!r}, direct {want!r}{delta}")

    def check(self) -> None:
        if not self.items:
            return
        counts = Counter(g for g, _ in self.items)
        head = "; ".join(f"{g}: {n}" for g, n in counts.items())
        lines = [f"[{g}] {m}" for g, m in self.items[:MAX_SHOWN]]
        more = len(self.items) - MAX_SHOWN
        if more > 0:
            lines.append(f"... and {more} more")
        pytest.fail(
            f"{len(self.items)} disagreement(s) ({head}):\n" + "\n".join(lines), pytrace=False
        )


def compare_rows(
    diffs: Diffs, path: str, rows: Rows, direct: Direct, keys: Sequence[Key], names: Iterable[str]
) -> None:
    """Each episode's value, detail sums and verdict on ``path`` against path (a)."""
    missing = [k for k in keys if k not in rows]
    if missing:
        diffs.add(f"{path}", f"{len(missing)} episode(s) missing, e.g. {missing[:3]}")
    extra = sorted(set(rows) - set(keys))
    if extra:
        diffs.add(f"{path}", f"{len(extra)} unexpected episode(s), e.g. {extra[:3]}")
    for key in keys:
        row = rows.get(key)
        if row is None:
            continue
        for n in names:
            group = f"{path} {n}"
            want = direct.scores[key][n]
            if n not in row:
                diffs.add(group, f"{show(key)}: no {n} score")
                continue
            value, detail = row[n]
            diffs.number(group, f"{show(key)} value", value, want.value)
            for s in SUMS[n]:
                diffs.number(group, f"{show(key)} detail[{s!r}]", detail.get(s), want.detail[s])
            v = VERDICT[n]
            if v in detail and bool(detail[v]) != bool(want.detail[v]):
                diffs.add(group, f"{show(key)} detail[{v!r}]: {detail[v]!r} != {want.detail[v]!r}")


def ek_aggregate(name: str, details: Iterable[Mapping[str, Any]]) -> float:
    """ek's own aggregate over host rows: the ek Scores rebuilt from the details a host kept."""
    return float(AGG[name].aggregate([Score(math.nan, dict(d)) for d in details]))


def host_aggregate(rows: Rows, name: str, keys: Sequence[Key]) -> float | None:
    """ek's aggregate over a host's rows of ``keys`` (``None`` when a row is missing)."""
    details = [rows[k][name][1] for k in keys if name in rows.get(k, {})]
    return ek_aggregate(name, details) if len(details) == len(keys) else None


def row_mean(values: Iterable[Any]) -> float:
    vals = [float(v) for v in values]
    return math.fsum(vals) / len(vals) if vals else math.nan


# --------------------------------------------------------------------------- path (a): direct


@dataclass(frozen=True)
class Direct:
    """Path (a): the 300 episodes and their directly computed scores."""

    tasks: Mapping[str, TaskSpec]
    episodes: Mapping[Key, Episode]
    scores: Mapping[Key, Mapping[str, Score]]

    def trials(self, agent: str | None = None, slice: str | None = None) -> list[Key]:
        return [
            k
            for k in self.episodes
            if (agent is None or k[0] == agent)
            and (slice is None or slice in self.tasks[k[1]].slices)
        ]

    def task(self, key: Key) -> TaskSpec:
        return self.tasks[key[1]]

    def slices(self) -> list[str]:
        return sorted({s for t in self.tasks.values() for s in t.slices})

    def aggregate(self, name: str, keys: Sequence[Key]) -> float:
        return float(AGG[name].aggregate([self.scores[k][name] for k in keys]))

    def pass_hat(self, agent: str, k: int = K) -> float:
        """pass^k, ek's definition: the mean over tasks of ``C(c, k) / C(n, k)`` (tau-bench)."""
        per_task = []
        for tid in self.tasks:
            ok = [
                self.scores[key]["task_success"].detail["passed"]
                for key in self.task_keys(agent, tid)
            ]
            per_task.append(pass_hat_k(len(ok), sum(ok), k))
        return math.fsum(per_task) / len(per_task)

    def task_keys(self, agent: str, task_id: str) -> list[Key]:
        return [(agent, task_id, i) for i in range(K)]


@pytest.fixture(scope="module")
def direct() -> Direct:
    tasks = load_tasks()
    episodes: dict[Key, Episode] = {}
    scores: dict[Key, dict[str, Score]] = {}
    for agent in agents():
        for task in tasks:
            mets = ek_metrics(task.grammar())  # each metric with its task's grammar
            for trial in range(K):
                # The harness's per-trial seed: the same episode run_suite and Inspect replay.
                seed = trial_seed(SEED, task.task_id, trial)
                ctx = TrialContext(task.task_id, trial, seed, RunProvenance(seed=SEED), k=K)
                ep = agent(task, ctx)
                key = (agent.name, task.task_id, trial)
                episodes[key] = ep
                scores[key] = {n: m(ep, task) for n, m in mets.items()}
    assert len(episodes) == 300
    return Direct({t.task_id: t for t in tasks}, episodes, scores)


# --------------------------------------------------------------------------- path (b): run_suite


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SuiteResult]:
    folder = tmp_path_factory.mktemp("suites")
    out = {}
    for agent in agents():
        run = RunProvenance(
            agent=agent.name,
            model=agent.tokens.model,
            scaffold=DEMO_SCAFFOLD,
            suite_version=SUITE_VERSION,
            seed=SEED,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the reliability report's own warnings
            out[agent.name] = run_suite(
                agent,
                load_tasks(),
                k=K,
                check=replayed_state_match,
                metrics=[TaskSuccessMetric(check=replayed_state_match), *demo_metrics()],
                prices=DEMO_PRICES,
                run=run,
                store=folder / f"{agent.name}.trials.jsonl",
            )
    return out


def suite_rows(suites: Mapping[str, SuiteResult]) -> dict[Key, dict[str, Row]]:
    rows: dict[Key, dict[str, Row]] = {}
    for agent, res in suites.items():
        for i, ep in enumerate(res.episodes):
            rows[(agent, ep.task_id, ep.trial)] = {
                n: (ss[i].value, ss[i].detail) for n, ss in res.scores.items()
            }
    return rows


# --------------------------------------------------------------------------- path (c): Inspect


def inspect_demo_module() -> ModuleType:
    """The demo's Inspect task, wherever it lives now (it may move to ``ek.adapters.inspect``)."""
    pytest.importorskip("inspect_ai")
    for name in ("ek.adapters.inspect.demo", "ek.agents.demo.inspect_task"):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is None or not name.startswith(e.name):
                raise
    pytest.fail("neither ek.adapters.inspect.demo nor ek.agents.demo.inspect_task exists")


@dataclass(frozen=True)
class InspectRun:
    agent: str
    result: Mapping[str, Any]  # what run_inspect_demo returned
    log: Any  # the EvalLog read back from the file


@pytest.fixture(scope="module", params=["baseline", "candidate"])
def inspect_run(
    request: pytest.FixtureRequest,
    suites: Mapping[str, SuiteResult],
    tmp_path_factory: pytest.TempPathFactory,
) -> InspectRun:
    """The demo's Inspect run, once per agent: mockllm replays that agent's trials."""
    mod = inspect_demo_module()  # skips without the inspect extra (the core-only step)
    from inspect_ai.log import read_eval_log

    from ek.agents.demo import baseline_agent, candidate_agent

    name = request.param
    agent = {"baseline": baseline_agent, "candidate": candidate_agent}[name]()
    folder = tmp_path_factory.mktemp(f"inspect-{name}")
    res = mod.run_inspect_demo(str(folder), k=K, seed=SEED, reference=suites[name], agent=agent)
    return InspectRun(name, res, read_eval_log(res["log"]))


def ek_score_of(sample: Any) -> Any:
    """The ek scorer's score of one Inspect sample (the demo task has exactly one scorer)."""
    scores = dict(sample.scores or {})
    if "ek_scorer" in scores:
        return scores["ek_scorer"]
    assert len(scores) == 1, f"expected the ek scorer's score, got scorers {sorted(scores)}"
    return next(iter(scores.values()))


def inspect_rows(run: InspectRun) -> tuple[dict[Key, dict[str, Row]], dict[Key, dict[str, Row]]]:
    """Per episode: the Score ``value`` dict (what Inspect shows) and the ek record's scores."""
    shown: dict[Key, dict[str, Row]] = {}
    recorded: dict[Key, dict[str, Row]] = {}
    for sample in run.log.samples:
        key = (run.agent, str(sample.id), int(sample.epoch) - 1)  # epoch e replays trial e - 1
        score = ek_score_of(sample)
        value = score.value if isinstance(score.value, Mapping) else {}
        rec = (score.metadata or {}).get("ek") or {}
        by_name = {n: d for n, d in (rec.get("scores") or {}).items() if isinstance(d, Mapping)}
        cost_detail = {
            "dollars": rec.get("dollars"),
            "successes": rec.get("successes"),
            "n": rec.get("n"),
            "success": rec.get("success"),
        }
        details = {n: from_json_safe(dict(by_name.get(n, {}).get("detail") or {})) for n in NAMES}
        details["cost_per_success"] = cost_detail
        shown[key] = {
            "task_success": (value.get("success"), details["task_success"]),
            "cost_per_success": (value.get("dollars"), cost_detail),
            "tool_calls": (value.get("tool_calls"), details["tool_calls"]),
            "trajectory": (value.get("trajectory"), details["trajectory"]),
        }
        recorded[key] = {
            n: (from_json_safe(by_name[n].get("value")), details[n])
            for n in ("task_success", "tool_calls", "trajectory")
            if n in by_name
        }
    return shown, recorded


def inspect_metric(log: Any, score_name: str, reducer: str | None, metric: str) -> Any:
    """One corpus value from ``log.results`` (``reducer=None``: the unreduced ek metrics);
    ``None`` when the log has no such metric."""
    for es in log.results.scores if log.results else []:
        if es.name != score_name or es.reducer != reducer:
            continue
        for mname, m in es.metrics.items():
            if mname == metric or mname.endswith("/" + metric):
                return m.value
    return None


def inspect_reductions(log: Any, reducer_part: str) -> dict[str, Any]:
    """``sample_id -> reduced score`` of the first reduction whose reducer contains the text."""
    for r in log.reductions or []:
        if reducer_part in str(r.reducer):
            return {str(s.sample_id): s for s in r.samples}
    return {}


# --------------------------------------------------------------------------- paths (d), (e)


def case_name(key: Key) -> str:
    return f"{key[0]}/{key[1]}#{key[2]}"


@pytest.fixture(scope="module")
def deepeval_rows(direct: Direct) -> dict[Key, dict[str, Row]]:
    pytest.importorskip("deepeval")
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig
    from ek.adapters.deepeval import EkMetric, to_deepeval_test_case

    keys = direct.trials()
    cases = [
        to_deepeval_test_case(direct.episodes[k], direct.task(k), name=case_name(k)) for k in keys
    ]
    # One shell per ek metric, named after it; DeepEval's default (async) evaluate().
    metrics = [EkMetric(m, threshold=THRESHOLDS[n], name=n) for n, m in ek_metrics().items()]
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate(
            cases,
            metrics,
            async_config=AsyncConfig(run_async=True),
            display_config=DisplayConfig(show_indicator=False, print_results=False),
        )
    by_name = {case_name(k): k for k in keys}
    rows: dict[Key, dict[str, Row]] = {}
    for tr in result.test_results:
        row: dict[str, Row] = {}
        for md in tr.metrics_data or []:
            detail = from_json_safe(json.loads(md.verbose_logs)) if md.verbose_logs else {}
            # DeepEval's success flag, kept beside ek's verdict for the task-success check.
            row[md.name] = (md.score, {**detail, "deepeval_success": md.success})
        rows[by_name.get(tr.name, ("?", str(tr.name), -1))] = row
    return rows


@dataclass(frozen=True)
class RagasRun:
    rows: dict[Key, dict[str, Row]]
    host_means: Mapping[str, float]  # the result dataframe's own column means
    task_ids: Mapping[Key, Any]  # the task id each row's EkRagasScore carries


@pytest.fixture(scope="module")
def ragas_run(direct: Direct) -> RagasRun:
    pytest.importorskip("ragas")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from ek.adapters.ragas import ek_ragas_metric, to_ragas_sample
        from ragas import EvaluationDataset, evaluate

    keys = direct.trials()
    samples = [to_ragas_sample(direct.episodes[k], direct.task(k)) for k in keys]
    # The gold state is a database: Ragas' ``reference`` is a string, so it travels as JSON.
    metrics = [ek_ragas_metric(m, name=n, reference_is_json=True) for n, m in ek_metrics().items()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate(EvaluationDataset(samples=samples), metrics=metrics, show_progress=False)
    rows: dict[Key, dict[str, Row]] = {}
    task_ids: dict[Key, Any] = {}
    for k, scores in zip(keys, result.scores):  # evaluate() keeps the dataset's order
        rows[k] = {
            n: (None if s is None else float(s), dict(getattr(s, "detail", None) or {}))
            for n, s in scores.items()
        }
        task_ids[k] = {getattr(s, "task_id", None) for s in scores.values()}
    frame = result.to_pandas()
    means = {n: float(frame[n].mean()) for n in NAMES if n in frame}
    return RagasRun(rows, means, task_ids)


# --------------------------------------------------------------------------- path (f): the CLI


def report_json(path: str | Path, *options: str) -> dict[str, Any]:
    """``ek-agents report PATH --json [OPTIONS]``, parsed (the console script calls this
    ``main``)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = ek_agents(["report", str(path), "--json", *options])
    assert code == 0, f"ek-agents report {path} --json {' '.join(options)} exited {code}"
    data: dict[str, Any] = from_json_safe(json.loads(out.getvalue()))
    return data


@pytest.fixture(scope="module")
def store_reports(suites: Mapping[str, SuiteResult]) -> dict[str, dict[str, Any]]:
    return {a: report_json(str(res.store)) for a, res in suites.items()}


@pytest.fixture(scope="module")
def log_report(inspect_run: InspectRun) -> dict[str, Any]:
    return report_json(inspect_run.result["log"])


# --------------------------------------------------------------------------- paths (g), (h): replay


def run_prompt(key: Key) -> str:
    """The user prompt of the pydantic-ai run that replays ``key``: the replay's only state, so
    the scripted model and the tools find the episode from the run itself (``ctx.prompt``)."""
    return case_name(key)


def request_usage(cost: Cost) -> Any:
    """One model call's usage as pydantic-ai's ``RequestUsage``.

    pydantic-ai's ``input_tokens`` is all input, cache reads and writes included (its docs: the
    buckets are inclusive), so it is ek's uncached input plus both cache counts; the reader
    subtracts them again (docs/traces.md, "Token kinds"). pydantic-ai does not emit
    ``output_reasoning_tokens`` as a span attribute, so the reasoning count also goes in
    ``details`` (emitted as ``gen_ai.usage.details.reasoning_tokens``).
    """
    from pydantic_ai.usage import RequestUsage

    return RequestUsage(
        input_tokens=cost.input_tokens + cost.cache_read_tokens + cost.cache_write_tokens,
        cache_read_tokens=cost.cache_read_tokens,
        cache_write_tokens=cost.cache_write_tokens,
        output_tokens=cost.output_tokens,
        output_reasoning_tokens=cost.reasoning_tokens,
        details={"reasoning_tokens": cost.reasoning_tokens},
    )


class DemoReplay:
    """pydantic-ai agents that replay the demo's episodes, one real ``Agent.run`` per episode.

    The model is a ``FunctionModel`` that asks, turn by turn, for exactly the episode's tool
    calls in order (one call a turn, as the scripted agents make them), then answers with the
    episode's output; every turn reports that model call's usage (``ScriptedAgent.plan`` gives
    one :class:`~ek.agents.base.Cost` per model call). The demo's seven tools are defined once
    (``Tool.from_schema``: no argument validation, so the arguments reach the span exactly as
    recorded), generic over the recorded observations: each returns the observation of the
    step its call id names, or raises ``ModelRetry`` with the shop's refusal (a failed step).
    """

    def __init__(self, plans: Mapping[str, tuple[Episode, tuple[Cost, ...]]]) -> None:
        self.plans = plans

    def respond(self, messages: list[Any], info: Any) -> Any:
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

        episode, calls = self.plans[messages[0].parts[-1].content]
        turn = sum(1 for m in messages if m.kind == "response")
        usage, model = request_usage(calls[turn]), calls[turn].model
        if turn < len(episode.trajectory):
            step = episode.trajectory[turn]
            part = ToolCallPart(step.tool, dict(step.args), tool_call_id=f"call_{turn}")
            return ModelResponse(parts=[part], usage=usage, model_name=model)
        return ModelResponse(parts=[TextPart(str(episode.output))], usage=usage, model_name=model)

    def tool(self, name: str) -> Any:
        from pydantic_ai import ModelRetry, RunContext, Tool

        async def replay(ctx: RunContext[Any], **args: Any) -> Any:
            episode, _ = self.plans[str(ctx.prompt)]
            step = episode.trajectory[int(str(ctx.tool_call_id).rpartition("_")[2])]
            if step.tool != name or dict(step.args) != args:  # the replay itself is wrong
                raise RuntimeError(f"replay out of step: {name}({args}) for {step}")
            if step.error is not None:
                raise ModelRetry(step.error)  # the shop refused: a failed call, then a retry
            return step.observation

        schema = {"type": "object", "additionalProperties": True}
        return Tool.from_schema(replay, name, f"the demo's {name}", schema, takes_ctx=True)

    def agent(self, name: str, model: str, settings: Any = None) -> Any:
        """A pydantic-ai ``Agent`` named ``name``, instrumented with ``settings`` (default:
        the global tracer provider, what pydantic-evals records)."""
        from pydantic_ai import Agent
        from pydantic_ai.capabilities import Instrumentation
        from pydantic_ai.models.function import FunctionModel

        instrumentation = (
            Instrumentation() if settings is None else Instrumentation(settings=settings)
        )
        return Agent(
            FunctionModel(self.respond, model_name=model),
            name=name,
            tools=[self.tool(t.name) for t in TOOLS],
            retries=MAX_RETRIES,
            capabilities=[instrumentation],
        )


#: pydantic-ai's retry budget per tool: the demo's agents may fail a tool several times a run.
MAX_RETRIES = 100


@pytest.fixture(scope="module")
def replay(direct: Direct) -> DemoReplay:
    """The replay of path (a)'s 300 episodes (the same seeded plans, checked equal)."""
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("opentelemetry.sdk.trace")
    plans: dict[str, tuple[Episode, tuple[Cost, ...]]] = {}
    for agent in agents():
        for key in direct.trials(agent.name):
            seed = trial_seed(SEED, key[1], key[2])
            ctx = TrialContext(key[1], key[2], seed, RunProvenance(seed=SEED), k=K)
            episode, calls = agent.plan(direct.task(key), ctx)
            assert episode == direct.episodes[key], f"{show(key)}: plan() differs from __call__"
            assert len(calls) == len(episode.trajectory) + 1  # a model call per step + the reply
            plans[run_prompt(key)] = (episode, calls)
    return DemoReplay(plans)


@dataclass(frozen=True)
class TraceRun:
    """Path (g): the Episodes read back from the spans, live and from the OTLP file."""

    live: Mapping[Key, Episode]
    from_file: Mapping[Key, Episode]
    reports: Mapping[str, Mapping[str, Any]]  # agent -> ek-agents report FILE --json


TRACE_OPTIONS = {"task_attribute": "ek.task_id", "trial_attribute": "ek.trial"}
SUCCESS_ATTRIBUTE = "ek.success"


def litellm_prices(prices: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """``DEMO_PRICES`` as a LiteLLM price file (what ``--prices`` reads): rates per token."""
    return {
        model: {
            "input_cost_per_token": p.input,
            "output_cost_per_token": p.output,
            "cache_read_input_token_cost": p.cache_read,
        }
        for model, p in prices.items()
    }


def keyed(agent: str, episodes: Iterable[Episode]) -> dict[Key, Episode]:
    return {(agent, ep.task_id, ep.trial): ep for ep in episodes}


@pytest.fixture(scope="module")
def trace_run(
    direct: Direct, replay: DemoReplay, tmp_path_factory: pytest.TempPathFactory
) -> TraceRun:
    """Every episode replayed under an SDK ``TracerProvider`` with an ``InMemorySpanExporter``,
    each run inside a harness span ``trial`` carrying ``ek.task_id``, ``ek.trial`` and
    ``ek.success`` (path (a)'s verdict); read back live and from an OTLP JSON-lines file."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from ek.agents.traces import (
        episodes_from_spans,
        read_trace_episodes,
        span_from_otel,
        write_otlp_json,
    )

    folder = tmp_path_factory.mktemp("traces")
    prices = folder / "demo_prices.json"
    prices.write_text(json.dumps(litellm_prices(DEMO_PRICES)), encoding="utf-8")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = InstrumentationSettings(
        tracer_provider=provider, include_model_request_parameters=False
    )
    harness = provider.get_tracer("ek-test-harness")
    options = [f"--{k.replace('_', '-')}={v}" for k, v in TRACE_OPTIONS.items()]
    live: dict[Key, Episode] = {}
    from_file: dict[Key, Episode] = {}
    reports: dict[str, dict[str, Any]] = {}
    for agent in agents():
        pa = replay.agent(agent.name, agent.tokens.model, settings)
        for key in direct.trials(agent.name):
            ok = bool(direct.scores[key]["task_success"].detail["passed"])
            attrs = {"ek.task_id": key[1], "ek.trial": key[2], SUCCESS_ATTRIBUTE: ok}
            with harness.start_as_current_span("trial", attributes=attrs):
                pa.run_sync(run_prompt(key))
        spans = [span_from_otel(s) for s in exporter.get_finished_spans()]
        exporter.clear()
        opts = {**TRACE_OPTIONS, "success_attribute": SUCCESS_ATTRIBUTE}
        live.update(keyed(agent.name, episodes_from_spans(spans, **opts)))
        path = folder / f"{agent.name}.otlp.jsonl"
        write_otlp_json(path, spans)
        from_file.update(keyed(agent.name, read_trace_episodes(path, **opts)))
        reports[agent.name] = report_json(
            path, *options, f"--success-attribute={SUCCESS_ATTRIBUTE}", f"--prices={prices}"
        )
    provider.shutdown()
    return TraceRun(live, from_file, reports)


def metric_rows(direct: Direct, episodes: Mapping[Key, Episode]) -> dict[Key, dict[str, Row]]:
    """The four ek metrics, configured as path (a) configures them, on episodes read back."""
    rows: dict[Key, dict[str, Row]] = {}
    for key, ep in episodes.items():
        task = direct.tasks.get(key[1])
        if task is None:
            rows[key] = {}
            continue
        mets = ek_metrics(task.grammar())
        rows[key] = {n: (s.value, s.detail) for n, m in mets.items() for s in [m(ep, task)]}
    return rows


@dataclass(frozen=True)
class EvalsRun:
    """Path (h): one pydantic-evals report per agent and what ek reads back from it."""

    reports: Mapping[str, Any]  # agent -> EvaluationReport
    summaries: Mapping[str, Any]  # agent -> summary_from_report(...)
    rows: Mapping[Key, Mapping[str, Row]]


def evals_case(task: TaskSpec) -> Any:
    """One pydantic-evals ``Case`` per task: the gold in ``Case.metadata`` (ek's gold format)."""
    from pydantic_evals import Case

    gold_calls = task.gold_calls.to_list() if task.gold_calls is not None else None
    metadata = {
        "task_id": task.task_id,
        "gold": task.gold,  # the goal database, for the demo's checker
        "gold_calls": gold_calls,
        "tools": [t.to_dict() for t in task.tools],  # the task's cost grammar
        "slice": task.slice,
    }
    return Case(name=task.task_id, inputs=task.task_id, metadata=metadata)


def evals_rows(agent: str, summary: Any) -> dict[Key, dict[str, Row]]:
    """Per episode, each metric's Score as ``summary_from_report`` rebuilt it from the report."""
    rows: dict[Key, dict[str, Row]] = {}
    for name, ms in summary.metrics.items():
        for task_id, scores in ms.scores.items():
            for trial, s in enumerate(scores):
                rows.setdefault((agent, task_id, trial), {})[name] = (s.value, s.detail)
    return rows


@pytest.fixture(scope="module")
def evals_run(direct: Direct, replay: DemoReplay) -> EvalsRun:
    """Each agent's 150 runs inside a pydantic-evals ``Dataset`` (one ``Case`` per task,
    ``repeat=K``), scored by one ``EkEvaluator`` per ek metric, read back with
    ``summary_from_report``.

    ``Dataset.evaluate`` calls the task with the case's inputs only, never the repeat number.
    It builds the runs case by case, repeat 1..k in order (``Dataset._build_tasks_to_run``), and
    ``max_concurrency=1`` starts them one at a time in that order, so a counter per case gives
    the trial; the task records it with ``set_eval_attribute("ek.trial", ...)`` and the test
    checks it against the run's name ``"<case> [i/k]"`` (trial ``i - 1``) instead of trusting it.
    """
    pytest.importorskip("pydantic_evals")
    from ek.adapters.pydantic_evals import EkEvaluator, summary_from_report
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from pydantic_evals import Dataset
    from pydantic_evals.dataset import set_eval_attribute

    # pydantic-evals records ctx.span_tree only under an SDK tracer provider (the global one).
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    evaluators = [EkEvaluator(m, name=n) for n, m in ek_metrics().items()]
    cases = [evals_case(t) for t in direct.tasks.values()]
    reports: dict[str, Any] = {}
    summaries: dict[str, Any] = {}
    rows: dict[Key, dict[str, Row]] = {}
    for agent in agents():
        pa = replay.agent(agent.name, agent.tokens.model)
        runs: Counter[str] = Counter()

        async def task(task_id: str, name: str = agent.name, pa: Any = pa, runs: Any = runs) -> Any:
            trial = runs[task_id]
            runs[task_id] += 1
            set_eval_attribute("ek.trial", trial)
            return (await pa.run(run_prompt((name, task_id, trial)))).output

        ds = Dataset(name=f"demo-{agent.name}", cases=cases, evaluators=evaluators)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = ds.evaluate_sync(task, repeat=K, max_concurrency=1, progress=False)
        reports[agent.name] = report
        summaries[agent.name] = summary_from_report(
            report, success="task_success", prices=DEMO_PRICES, model=agent.tokens.model
        )
        rows.update(evals_rows(agent.name, summaries[agent.name]))
    return EvalsRun(reports, summaries, rows)


# =========================================================================== the tests


def test_the_demo_has_300_trials(direct: Direct, suites: Mapping[str, SuiteResult]) -> None:
    assert len(direct.trials("baseline")) == len(direct.trials("candidate")) == 150
    assert sum(res.n_trials for res in suites.values()) == 300


def test_run_suite_runs_the_same_episodes(
    direct: Direct, suites: Mapping[str, SuiteResult]
) -> None:
    """The harness replays exactly path (a)'s episodes (same calls, costs, verdicts)."""
    d = Diffs()
    for agent, res in suites.items():
        for ep, ok in zip(res.episodes, res.verdicts):
            key = (agent, ep.task_id, ep.trial)
            mine = direct.episodes.get(key)
            if mine is None:
                d.add("run_suite episodes", f"{show(key)}: not among the direct episodes")
                continue
            if ep.trajectory != mine.trajectory or ep.cost != mine.cost:
                d.add("run_suite episodes", f"{show(key)}: trajectory or cost differs")
            if ok != direct.scores[key]["task_success"].detail["passed"]:
                d.add("run_suite verdicts", f"{show(key)}: verdict {ok} differs from the checker")
    d.check()


def test_run_suite_per_episode(direct: Direct, suites: Mapping[str, SuiteResult]) -> None:
    d = Diffs()
    compare_rows(d, "run_suite", suite_rows(suites), direct, direct.trials(), NAMES)
    d.check()


def test_run_suite_aggregates(direct: Direct, suites: Mapping[str, SuiteResult]) -> None:
    """``SuiteResult.metrics``, the success rate, the cost report and every slice."""
    d = Diffs()
    for agent, res in suites.items():
        keys = direct.trials(agent)
        for n in NAMES:
            d.number(
                f"run_suite {n}",
                f"{agent} metrics[{n!r}]",
                res.metrics.get(n),
                direct.aggregate(n, keys),
            )
        d.number(
            "run_suite success",
            f"{agent} success_rate",
            res.success_rate,
            direct.aggregate("task_success", keys),
        )
        d.number(
            "run_suite success",
            f"{agent} reliability.success_rate",
            res.reliability.success_rate.point,
            direct.aggregate("task_success", keys),
        )
        d.number(
            "run_suite pass^k",
            f"{agent} pass^{K}",
            res.reliability.pass_hat_k[K].point,
            direct.pass_hat(agent),
        )
        d.number(
            "run_suite cost_of_pass",
            f"{agent} cost.cost_of_pass",
            res.cost.cost_of_pass,
            direct.aggregate("cost_per_success", keys),
        )
        for s in direct.slices():
            sk = direct.trials(agent, s)
            sl = res.slices.get(s)
            if sl is None:
                d.add("run_suite slices", f"{agent}: slice {s!r} missing")
                continue
            for n in NAMES:
                d.number(
                    f"run_suite {n}",
                    f"{agent}[{s}] metrics[{n!r}]",
                    sl.metrics.get(n),
                    direct.aggregate(n, sk),
                )
            d.number(
                "run_suite success",
                f"{agent}[{s}] n_successes / n_trials",
                sl.n_successes / sl.n_trials,
                direct.aggregate("task_success", sk),
            )
            d.number(
                "run_suite cost_of_pass",
                f"{agent}[{s}] cost.cost_of_pass",
                sl.cost.cost_of_pass,
                direct.aggregate("cost_per_success", sk),
            )
    d.check()


def test_inspect_per_episode(direct: Direct, inspect_run: InspectRun) -> None:
    """The ek scorer's value dict (``success``, ``dollars``, one key per ek metric) and the ek
    record in its metadata, per sample and epoch, against path (a)."""
    d = Diffs()
    shown, recorded = inspect_rows(inspect_run)
    keys = direct.trials(inspect_run.agent)
    compare_rows(d, "inspect value", shown, direct, keys, NAMES)
    compare_rows(
        d, "inspect record", recorded, direct, keys, ("task_success", "tool_calls", "trajectory")
    )
    if inspect_run.result.get("agrees_with_harness") is not True:
        d.add(
            "inspect counts",
            f"run_inspect_demo: agrees_with_harness = {inspect_run.result.get('agrees_with_harness')!r}",
        )
    d.check()


def test_inspect_aggregates(direct: Direct, inspect_run: InspectRun) -> None:
    """``log.results``: ek's unreduced ratio-of-sums metrics, Inspect's own accuracy (a mean) and
    pass^k from ek's reducer."""
    d = Diffs()
    log, agent = inspect_run.log, inspect_run.agent
    keys = direct.trials(agent)
    # ek/ek_aggregate over every epoch (scores="unreduced"): each ek metric's own aggregate.
    for n in ("task_success", "tool_calls", "trajectory"):
        d.number(
            f"inspect {n}",
            f"ek_scorer[{n}] (unreduced)",
            inspect_metric(log, "ek_scorer", None, n),
            direct.aggregate(n, keys),
        )
    d.number(
        "inspect cost_of_pass",
        "success[cost_of_pass_metric] (unreduced)",
        inspect_metric(log, "success", None, "cost_of_pass_metric"),
        direct.aggregate("cost_per_success", keys),
    )
    # Inspect insists on its own mean here: ``accuracy`` after the built-in ``mean`` epoch
    # reducer is the mean over samples of each sample's mean over epochs. With the same number
    # of epochs per sample it is the mean of ek's rows (and so the success rate).
    d.number(
        "inspect accuracy (Inspect's mean)",
        "success[accuracy] (mean reducer)",
        inspect_metric(log, "success", "mean", "accuracy"),
        row_mean(direct.scores[k]["task_success"].value for k in keys),
    )
    # pass^k: ek's reducer gives each sample C(c, k) / C(n, k); accuracy averages over tasks.
    pass_reducer = next(
        (es.reducer for es in log.results.scores if es.reducer and "pass_hat" in es.reducer), None
    )
    d.number(
        "inspect pass^k",
        f"success[accuracy] ({pass_reducer})",
        inspect_metric(log, "success", pass_reducer, "accuracy"),
        direct.pass_hat(agent),
    )
    d.check()


def test_inspect_epoch_reduction(direct: Direct, inspect_run: InspectRun) -> None:
    """Per sample after reduction, against the task's K trials in path (a).

    ek's pass^k reducer (ek's code: ratios of sums expected): ``success`` = pass^k, the ek
    record's sums = the task's sums, each ek metric key = that metric's aggregate over the
    task's trials, and Cost-of-Pass of the record = the task's Cost-of-Pass; ``dollars`` is
    documented as dollars per attempt (a mean by definition). Inspect's built-in ``mean``
    reducer insists on its own mean: checked against the mean of ek's rows.
    """
    d = Diffs()
    agent = inspect_run.agent
    reduced = inspect_reductions(inspect_run.log, "pass_hat")
    means = inspect_reductions(inspect_run.log, "mean")
    if not reduced:
        d.add("inspect reduction", "no ek/pass_hat reduction in the log")
    for tid in direct.tasks:
        keys = direct.task_keys(agent, tid)
        scores = [direct.scores[k] for k in keys]
        ok = [s["task_success"].detail["passed"] for s in scores]
        s = reduced.get(tid)
        if s is not None:
            value = s.value if isinstance(s.value, Mapping) else {}
            rec = (s.metadata or {}).get("ek") or {}
            d.number(
                "inspect pass^k reduced",
                f"{tid} success (pass^{K})",
                value.get("success"),
                pass_hat_k(K, sum(ok), K),
            )
            d.number(
                "inspect pass^k reduced",
                f"{tid} dollars (per attempt)",
                value.get("dollars"),
                row_mean(x["cost_per_success"].value for x in scores),
            )
            for s_name, want in (
                ("successes", sum(ok)),
                ("n", K),
                ("dollars", math.fsum(x["cost_per_success"].detail["dollars"] for x in scores)),
            ):
                d.number(
                    "inspect pass^k reduced", f"{tid} record[{s_name!r}]", rec.get(s_name), want
                )
            d.number(
                "inspect pass^k reduced cost_of_pass",
                f"{tid} Cost-of-Pass of the reduced record",
                ek_aggregate("cost_per_success", [rec]) if rec else None,
                direct.aggregate("cost_per_success", keys),
            )
            for n in ("tool_calls", "trajectory"):
                want = direct.aggregate(n, keys)
                d.number(f"inspect pass^k reduced {n}", f"{tid} value[{n!r}]", value.get(n), want)
                detail = ((rec.get("scores") or {}).get(n) or {}).get("detail")
                got = ek_aggregate(n, [from_json_safe(detail)]) if detail else None
                d.number(
                    f"inspect pass^k reduced {n}",
                    f"{tid} aggregate of the record's {n} sums",
                    got,
                    want,
                )
        m = means.get(tid)
        if m is not None and isinstance(m.value, Mapping):
            for n, key in (
                ("task_success", "success"),
                ("cost_per_success", "dollars"),
                ("tool_calls", "tool_calls"),
                ("trajectory", "trajectory"),
            ):
                d.number(
                    "inspect mean reducer (Inspect's mean)",
                    f"{tid} value[{key!r}]",
                    m.value.get(key),
                    row_mean(x[n].value for x in scores),
                )
    d.check()


def test_deepeval_per_episode(direct: Direct, deepeval_rows: Rows) -> None:
    d = Diffs()
    compare_rows(d, "deepeval", deepeval_rows, direct, direct.trials(), NAMES)
    for key, row in deepeval_rows.items():
        if key in direct.scores and "task_success" in row:
            flag = row["task_success"][1].get("deepeval_success")
            if flag != direct.scores[key]["task_success"].detail["passed"]:
                d.add("deepeval success flag", f"{show(key)}: MetricData.success {flag!r}")
    d.check()


def test_deepeval_aggregates(direct: Direct, deepeval_rows: Rows) -> None:
    """DeepEval reports no corpus score (only pass rates), so ek aggregates its rows: the ek
    Scores rebuilt from each MetricData's ``verbose_logs`` detail, per agent, per slice and
    over all 300."""
    d = Diffs()
    corpora = [(a, direct.trials(a)) for a in ("baseline", "candidate")]
    corpora += [
        (f"{a}[{s}]", direct.trials(a, s))
        for a in ("baseline", "candidate")
        for s in direct.slices()
    ]
    corpora.append(("all 300", direct.trials()))
    for label, keys in corpora:
        for n in NAMES:
            got = host_aggregate(deepeval_rows, n, keys)
            d.number(f"deepeval {n}", f"{label} aggregate", got, direct.aggregate(n, keys))
    d.check()


def test_ragas_per_episode(direct: Direct, ragas_run: RagasRun) -> None:
    d = Diffs()
    compare_rows(d, "ragas", ragas_run.rows, direct, direct.trials(), NAMES)
    for key, ids in ragas_run.task_ids.items():
        if ids != {key[1]}:
            d.add("ragas task_id", f"{show(key)}: the scores carry task ids {ids}")
    d.check()


def test_ragas_aggregates(direct: Direct, ragas_run: RagasRun) -> None:
    """ek's aggregate of the EkRagasScore details (per agent, per slice, all 300); and Ragas' own
    result mean, which it insists on (``result.to_pandas()[col].mean()``, what its repr prints):
    a mean of rows, NOT ek's ratio of sums, so it is checked against the mean of ek's rows."""
    d = Diffs()
    corpora = [(a, direct.trials(a)) for a in ("baseline", "candidate")]
    corpora += [
        (f"{a}[{s}]", direct.trials(a, s))
        for a in ("baseline", "candidate")
        for s in direct.slices()
    ]
    corpora.append(("all 300", direct.trials()))
    for label, keys in corpora:
        for n in NAMES:
            got = host_aggregate(ragas_run.rows, n, keys)
            d.number(f"ragas {n}", f"{label} aggregate", got, direct.aggregate(n, keys))
    for n in NAMES:
        d.number(
            f"ragas {n} (Ragas' mean)",
            "result.to_pandas() column mean over all 300",
            ragas_run.host_means.get(n),
            row_mean(direct.scores[k][n].value for k in direct.trials()),
        )
    d.check()


def check_report(
    d: Diffs,
    label: str,
    rep: Mapping[str, Any],
    direct: Direct,
    agent: str,
    names: Iterable[str],
    slices: bool,
) -> None:
    """One ``ek-agents report --json`` against path (a) for ``agent``'s trials (``names``: the
    metrics it must list; any other of :data:`NAMES` it lists is checked too)."""
    keys = direct.trials(agent)
    group = f"report {label}"
    d.number(group, "n_trials", rep.get("n_trials"), len(keys))
    d.number(
        group,
        "n_successes",
        rep.get("n_successes"),
        sum(direct.scores[k]["task_success"].detail["successes"] for k in keys),
    )
    rel = rep.get("reliability") or {}
    d.number(
        group,
        "reliability.success_rate",
        (rel.get("success_rate") or {}).get("point"),
        direct.aggregate("task_success", keys),
    )
    d.number(
        group,
        f"reliability.pass_hat_k[{K}]",
        ((rel.get("pass_hat_k") or {}).get(str(K)) or {}).get("point"),
        direct.pass_hat(agent),
    )
    cost = rep.get("cost") or {}
    d.number(
        f"{group} cost_of_pass",
        "cost.cost_of_pass",
        cost.get("cost_of_pass"),
        direct.aggregate("cost_per_success", keys),
    )
    d.number(
        f"{group} cost_of_pass",
        "cost.agent_dollars",
        cost.get("agent_dollars"),
        math.fsum(direct.scores[k]["cost_per_success"].detail["dollars"] for k in keys),
    )
    unscored = (rep.get("unscored") or {}).get("n", 0)
    d.number(group, "unscored.n", unscored, 0)
    metrics = rep.get("metrics") or {}
    for n in NAMES:  # the required ones, and any other the report shows
        m = metrics.get(n)
        if m is None and n not in names:
            continue
        if m is None:
            d.add(f"{group} {n}", f"metrics has no {n!r} (it has {sorted(metrics)})")
            continue
        d.number(f"{group} {n}", f"metrics[{n!r}].value", m.get("value"), direct.aggregate(n, keys))
        if m.get("higher_is_better") != AGG[n].higher_is_better:
            d.add(
                f"{group} {n}", f"metrics[{n!r}].higher_is_better = {m.get('higher_is_better')!r}"
            )
    if not slices:
        return
    for s in direct.slices():
        sd = (rep.get("slices") or {}).get(s)
        if sd is None:
            d.add(f"{group} slices", f"slice {s!r} missing")
            continue
        sk = direct.trials(agent, s)
        d.number(
            group,
            f"slices[{s!r}].reliability.success_rate",
            ((sd.get("reliability") or {}).get("success_rate") or {}).get("point"),
            direct.aggregate("task_success", sk),
        )
        d.number(
            f"{group} cost_of_pass",
            f"slices[{s!r}].cost.cost_of_pass",
            (sd.get("cost") or {}).get("cost_of_pass"),
            direct.aggregate("cost_per_success", sk),
        )


def test_report_on_the_stores(
    direct: Direct, store_reports: Mapping[str, Mapping[str, Any]]
) -> None:
    """``ek-agents report STORE --json``: every metric the run scored, the cost report's
    Cost-of-Pass and every slice, for both agents."""
    d = Diffs()
    for agent, rep in store_reports.items():
        check_report(d, f"store({agent})", rep, direct, agent, NAMES, slices=True)
    d.check()


def test_report_on_the_inspect_log(
    direct: Direct, inspect_run: InspectRun, log_report: Mapping[str, Any]
) -> None:
    """``ek-agents report LOG.eval --json``: the ek metrics of the scorer (tool_calls,
    trajectory; task_success too when the report lists it: the log's reader may leave it out
    because it is the run's verdict, shown as the success rate), the cost report's Cost-of-Pass,
    and the slices when the report has them."""
    d = Diffs()
    check_report(
        d,
        "inspect log",
        log_report,
        direct,
        inspect_run.agent,
        ("tool_calls", "trajectory"),
        slices=bool(log_report.get("slices")),
    )
    d.check()


def test_exactly_one_cost_of_pass(
    direct: Direct,
    suites: Mapping[str, SuiteResult],
    inspect_run: InspectRun,
    deepeval_rows: Rows,
    ragas_run: RagasRun,
    store_reports: Mapping[str, Mapping[str, Any]],
    log_report: Mapping[str, Any],
) -> None:
    """Every Cost-of-Pass figure any path shows for a run is the same number:
    ``sum(agent dollars) / sum(successes)`` of path (a)."""
    d = Diffs()
    for agent, res in suites.items():
        keys = direct.trials(agent)
        want = direct.aggregate("cost_per_success", keys)
        figures: list[tuple[str, Any]] = [
            ("run_suite metrics['cost_per_success']", res.metrics.get("cost_per_success")),
            ("run_suite cost.cost_of_pass", res.cost.cost_of_pass),
            (
                "run_suite summary().cost['cost_of_pass']",
                (res.summary().cost or {}).get("cost_of_pass"),
            ),
            (
                "report(store) cost.cost_of_pass",
                (store_reports[agent].get("cost") or {}).get("cost_of_pass"),
            ),
            (
                "report(store) metrics.cost_per_success",
                ((store_reports[agent].get("metrics") or {}).get("cost_per_success") or {}).get(
                    "value"
                ),
            ),
            ("deepeval ek aggregate", host_aggregate(deepeval_rows, "cost_per_success", keys)),
            ("ragas ek aggregate", host_aggregate(ragas_run.rows, "cost_per_success", keys)),
        ]
        if agent == inspect_run.agent:
            figures += [
                (
                    "inspect success[cost_of_pass_metric]",
                    inspect_metric(inspect_run.log, "success", None, "cost_of_pass_metric"),
                ),
                (
                    "report(inspect log) cost.cost_of_pass",
                    (log_report.get("cost") or {}).get("cost_of_pass"),
                ),
            ]
        for label, got in figures:
            d.number("cost_of_pass", f"{agent}: {label}", got, want)
    d.check()


def corpora(direct: Direct) -> list[tuple[str, list[Key]]]:
    """Per agent, per agent and slice, and all 300."""
    out = [(a, direct.trials(a)) for a in ("baseline", "candidate")]
    out += [
        (f"{a}[{s}]", direct.trials(a, s))
        for a in ("baseline", "candidate")
        for s in direct.slices()
    ]
    out.append(("all 300", direct.trials()))
    return out


def test_traces_carry_the_same_calls_cost_and_verdicts(direct: Direct, trace_run: TraceRun) -> None:
    """Path (g)'s Episodes, live and from the file: each of path (a)'s calls (tool, arguments,
    error; the observation of every call that succeeded), its Cost exactly (model, uncached
    input, cache reads, output, reasoning; role ``agent``), its output, and the verdict the
    ``ek.success`` attribute carried."""
    d = Diffs()
    for label, episodes in (("live", trace_run.live), ("file", trace_run.from_file)):
        group = f"traces {label}"
        missing = [k for k in direct.trials() if k not in episodes]
        if missing or len(episodes) != len(direct.episodes):
            d.add(group, f"{len(episodes)} episodes read, {len(missing)} missing: {missing[:3]}")
        for key, ep in episodes.items():
            want = direct.episodes.get(key)
            if want is None:
                d.add(group, f"{show(key)}: not among the direct episodes")
                continue
            calls = [(s.tool, dict(s.args), s.error) for s in ep.trajectory]
            if calls != [(s.tool, dict(s.args), s.error) for s in want.trajectory]:
                d.add(f"{group} calls", f"{show(key)}: {calls} != {want.trajectory}")
            seen = [s.observation for s in ep.trajectory if s.error is None]
            if seen != [s.observation for s in want.trajectory if s.error is None]:
                d.add(f"{group} observations", f"{show(key)}: observations differ")
            if ep.cost != want.cost:
                d.add(f"{group} cost", f"{show(key)}: {ep.cost} != {want.cost}")
            if ep.output != want.output:
                d.add(f"{group} output", f"{show(key)}: {ep.output!r} != {want.output!r}")
            ok = direct.scores[key]["task_success"].detail["passed"]
            if ep.success is not ok:
                d.add(f"{group} success", f"{show(key)}: carried {ep.success!r}, direct {ok!r}")
    d.check()


def test_traces_per_episode(direct: Direct, trace_run: TraceRun) -> None:
    """Every metric, configured as in path (a), on the Episodes read back from the spans."""
    d = Diffs()
    for label, episodes in (("live", trace_run.live), ("file", trace_run.from_file)):
        rows = metric_rows(direct, episodes)
        compare_rows(d, f"traces {label}", rows, direct, direct.trials(), NAMES)
    d.check()


def test_traces_aggregates(direct: Direct, trace_run: TraceRun) -> None:
    d = Diffs()
    for label, episodes in (("live", trace_run.live), ("file", trace_run.from_file)):
        rows = metric_rows(direct, episodes)
        for corpus, keys in corpora(direct):
            for n in NAMES:
                got = host_aggregate(rows, n, keys)
                d.number(
                    f"traces {label} {n}", f"{corpus} aggregate", got, direct.aggregate(n, keys)
                )
    d.check()


def test_report_on_the_trace_files(direct: Direct, trace_run: TraceRun) -> None:
    """``ek-agents report FILE --json --task-attribute ek.task_id --trial-attribute ek.trial
    --success-attribute ek.success --prices DEMO.json`` on each agent's OTLP file: counts, the
    success rate, pass^k and the cost report's Cost-of-Pass (a trace file has no gold, so the
    report lists no per-metric values; slices are checked when it has them)."""
    d = Diffs()
    for agent, rep in trace_run.reports.items():
        check_report(d, f"traces({agent})", rep, direct, agent, (), slices=bool(rep.get("slices")))
    d.check()


def test_pydantic_evals_per_episode(direct: Direct, evals_run: EvalsRun) -> None:
    """Each run's ``EkEvaluator`` results, rebuilt by ``summary_from_report``, against path (a);
    and the trial the task's counter gave each run against the run's name ``<case> [i/k]``."""
    d = Diffs()
    compare_rows(d, "pydantic-evals", evals_run.rows, direct, direct.trials(), NAMES)
    for agent, report in evals_run.reports.items():
        if report.failures:
            d.add("pydantic-evals failures", f"{agent}: {report.failures[0].error_message}")
        for case in report.cases:
            named = int(case.name.rpartition("[")[2].partition("/")[0]) - 1
            if case.attributes.get("ek.trial") != named:
                d.add("pydantic-evals trial", f"{case.name}: counter {case.attributes}")
    d.check()


def test_pydantic_evals_aggregates(direct: Direct, evals_run: EvalsRun) -> None:
    """``summary_from_report``'s metric values, counts, pass^k and Cost-of-Pass per agent, and
    ek's aggregate of the report's rows per slice and over all 300."""
    from ek.agents.reliability import reliability

    d = Diffs()
    for agent, s in evals_run.summaries.items():
        keys = direct.trials(agent)
        for n in NAMES:
            ms = s.metrics.get(n)
            got = None if ms is None else ms.value
            d.number(
                f"pydantic-evals {n}", f"{agent} metrics[{n!r}]", got, direct.aggregate(n, keys)
            )
        want_counts = {
            tid: (
                K,
                sum(
                    direct.scores[k]["task_success"].detail["passed"]
                    for k in direct.task_keys(agent, tid)
                ),
            )
            for tid in direct.tasks
        }
        if dict(s.counts) != want_counts:
            d.add("pydantic-evals counts", f"{agent}: {dict(s.counts)} != {want_counts}")
        d.number(
            "pydantic-evals pass^k",
            f"{agent} pass^{K}",
            reliability(s.counts, K).pass_hat_k[K].point,
            direct.pass_hat(agent),
        )
        d.number(
            "pydantic-evals cost_of_pass",
            f"{agent} cost['cost_of_pass']",
            (s.cost or {}).get("cost_of_pass"),
            direct.aggregate("cost_per_success", keys),
        )
    for corpus, keys in corpora(direct):
        for n in NAMES:
            got = host_aggregate(evals_run.rows, n, keys)
            d.number(f"pydantic-evals {n}", f"{corpus} aggregate", got, direct.aggregate(n, keys))
    d.check()
