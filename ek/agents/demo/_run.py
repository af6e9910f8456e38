"""The demo job (``ek-agents demo``): the whole evaluation loop on the embedded retail suite.

It runs the baseline and the candidate agent with ``k`` trials each through
:func:`~ek.agents.harness.run_suite` (persisted trial stores in the run folder), prints the report
(success with intervals, pass@k / pass^k for k = 1..k, tokens by kind, Cost-of-Pass under an
**illustrative** price table, tool-call and trajectory scores, all per slice), freezes the
baseline, runs the variance-aware regression gate candidate vs baseline and prints its verdict,
runs the same suite as an Inspect AI task (mockllm, ek scorers; ``ek.adapters.inspect.demo``)
when ``inspect-ai`` is installed, and writes four plots when ``matplotlib`` is; without either,
it says so in one line and goes on. Offline, no API key, deterministic for a seed.

Beyond pass^k, every task also runs under :data:`DEMO_FAULTS` (the order look-up fails on half
its calls): the report's "Reliability beyond pass^k" section gives each agent's consistency and
flakiest tasks, its success under the fault against clean with Newcombe's interval (the
candidate, careless on refunds, is also the less robust), its success within a dollar cap from
the recorded costs, and the gate of consistency and robustness.

The run folder (default ``./ek-demo-run``) holds::

    baseline.trials.jsonl   candidate.trials.jsonl   the trial stores (resumable)
    *.trials.fault-error_get_order.jsonl             the same under the injected fault
    baseline.json                                    the frozen baseline the gate reads
    gate.json                                        the gate's verdict and every check
    report.txt                                       what the demo printed
    view.html                                        ek-agents view: the candidate's trials
                                                     and its comparison with the baseline
    pass_hat_k.png          cost_vs_success.png      the plots (with matplotlib)
    budget_vs_cost.png      robustness.png           success against budget; robustness
    inspect/                                         the Inspect log (with inspect-ai)

Example:
    >>> import io, tempfile
    >>> out = io.StringIO()
    >>> res = run_demo(tempfile.mkdtemp(), k=2, inspect=False, plots=False, stream=out,
    ...                progress=False)
    >>> res.baseline.n_trials, res.candidate.n_trials, res.gate.checks[0].name
    (60, 60, 'success_rate')
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ek.agents._episode import RunProvenance
from ek.agents._faults import Fault, FaultPlan
from ek.agents.cost import ModelPrice, per_million

from ._agents import ScriptedAgent, baseline_agent, candidate_agent
from ._conversations import CONVERSATION_STORES, conversation_part
from ._tasks import SUITE_VERSION, load_tasks
from ._world import replayed_state_match

__all__ = [
    "DEMO_FAULTS",
    "DEMO_PRICES",
    "DEMO_SCAFFOLD",
    "DemoResult",
    "ProgressBar",
    "add_demo_arguments",
    "demo_command",
    "demo_metrics",
    "format_gate",
    "format_reliability",
    "format_run",
    "main",
    "run_demo",
]

_PRICE_NOTE = "ILLUSTRATIVE demo prices, not any provider's real prices"

#: The demo's price table, in USD per million tokens. **Illustrative, not real prices**: the two
#: demo models do not exist; the rates only make one model about ten times cheaper per token.
DEMO_PRICES: Mapping[str, ModelPrice] = {
    "demo-large": per_million(2.50, 10.00, cache_read=0.25, model="demo-large", source=_PRICE_NOTE),
    "demo-small": per_million(0.30, 1.20, cache_read=0.03, model="demo-small", source=_PRICE_NOTE),
}

#: The scaffold both demo agents share (the gate refuses runs whose scaffold differs).
DEMO_SCAFFOLD = "ek-demo-scripted/1"

#: The demo's fault plan: the order look-up (``get_order``, the retail world's
#: ``lookup_order``) fails on half of its calls. Each task runs clean and under it.
DEMO_FAULTS = FaultPlan([Fault("error", tools=["get_order"], rate=0.5)])

_STORE_FILES = ("baseline.trials.jsonl", "candidate.trials.jsonl")
_FAULT_STORES = tuple(
    f"{a}.trials.fault-{str(f.name).replace(':', '_')}.jsonl"
    for a in ("baseline", "candidate")
    for f in DEMO_FAULTS.faults
)
_OUTPUT_FILES = (
    *_STORE_FILES,
    *_FAULT_STORES,
    *CONVERSATION_STORES,
    "baseline.json",
    "gate.json",
    "report.txt",
    "view.html",
    "pass_hat_k.png",
    "cost_vs_success.png",
    "budget_vs_cost.png",
    "robustness.png",
)


def demo_metrics() -> list[Any]:
    """The metrics the demo scores every trial with: Cost-of-Pass (lower is better, so the gate
    checks that the candidate is not dearer per success), tool calls, trajectory and the shop's
    policies (the tools' rules: an order looked up before it is refunded or cancelled)."""
    from ek.agents.metrics import CostPerSuccessMetric

    out: list[Any] = [CostPerSuccessMetric(check=replayed_state_match, prices=DEMO_PRICES)]
    try:
        from ek.agents.toolcalls import ToolCallMetric

        out.append(ToolCallMetric())
    except ImportError:  # pragma: no cover - every release ships it
        pass
    try:
        from ek.agents.trajectory import TrajectoryMetric

        out.append(TrajectoryMetric())
    except ImportError:  # pragma: no cover - every release ships it
        pass
    from ek.agents.policy import PolicyMetric

    out.append(PolicyMetric())
    return out


class ProgressBar:
    """A one-line text progress bar for :func:`~ek.agents.harness.run_suite`'s ``progress=``.

    On a terminal it redraws in place; otherwise it prints one line when the work is done (a
    log file gets no carriage-return noise).

    Example:
        >>> import io
        >>> from ek.agents.harness import ProgressEvent
        >>> s = io.StringIO()
        >>> bar = ProgressBar("demo", stream=s, width=10)
        >>> bar(ProgressEvent(done=4, total=4, skipped=0, agent_failures=0, elapsed=0.5))
        >>> s.getvalue()
        '  demo [##########] 4/4 trials\\n'
    """

    def __init__(self, label: str, *, stream: IO[str] | None = None, width: int = 30) -> None:
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        isatty = getattr(self.stream, "isatty", None)
        self.live = bool(isatty and isatty())

    def __call__(self, event: Any) -> None:
        total = max(1, int(event.total))
        done = int(event.done)
        if not self.live and done < total:
            return
        fill = round(self.width * done / total)
        line = f"  {self.label} [{'#' * fill}{'.' * (self.width - fill)}] {done}/{total} trials"
        if event.skipped:
            line += f" ({event.skipped} resumed)"
        end = "\n" if done >= total else ""
        self.stream.write(("\r" if self.live else "") + line + end)
        self.stream.flush()


@dataclass(frozen=True)
class DemoResult:
    """What :func:`run_demo` produced.

    Attributes:
        folder: The run folder.
        baseline: The baseline's :class:`~ek.agents.harness.SuiteResult`.
        candidate: The candidate's :class:`~ek.agents.harness.SuiteResult`.
        gate: The :class:`~ek.agents.harness.GateResult` of candidate vs the frozen baseline.
        inspect: A summary of the Inspect run (``{"log": path, "success": rate, ...}``), or
            ``None`` when it did not run (and ``inspect_note`` says why).
        plots: The plot files written.
        report: The text the demo printed.
    """

    folder: str
    baseline: Any
    candidate: Any
    gate: Any
    inspect: Mapping[str, Any] | None
    plots: tuple[str, ...]
    report: str
    inspect_note: str = ""
    files: Mapping[str, str] = field(default_factory=dict)


# ----------------------------------------------------------------------------- formatting


def _pct(x: float) -> str:
    return "  n/a" if x is None or math.isnan(x) else f"{x:5.3f}"


def _money(x: Any) -> str:
    if x is None:
        return "unpriced"
    x = float(x)
    if math.isinf(x):
        return "inf (no success)"
    return f"${x:.5f}" if x < 0.1 else f"${x:.3f}"


def _iv(iv: Any) -> str:
    return f"{_pct(iv.point)} [{_pct(iv.low)}, {_pct(iv.high)}]"


def format_run(title: str, res: Any) -> str:
    """The report of one suite run (success, pass@k / pass^k, cost, metrics, per slice)."""
    rel, cost = res.reliability, res.cost
    conf = round(rel.confidence * 100)
    lines = [
        f"== {title}: {len(res.tasks)} tasks x {res.k} trials = {res.n_trials} episodes "
        f"({res.agent_failures} agent failures)",
        f"   run {res.run.signature()}",
        f"   success rate   {_iv(rel.success_rate)}  ({conf}% Wilson; "
        f"{rel.n_successes}/{rel.n_trials} trials)",
    ]
    ks = sorted(rel.pass_hat_k)
    lines.append("   k              " + "".join(f"{k:>8d}" for k in ks))
    lines.append("   pass@k         " + "".join(f"{rel.pass_at_k[k].point:8.3f}" for k in ks))
    lines.append("   pass^k         " + "".join(f"{rel.pass_hat_k[k].point:8.3f}" for k in ks))
    kk = ks[-1]
    lines.append(f"   pass^{kk} {conf}% CI  {_iv(rel.pass_hat_k[kk])}  (bootstrap over tasks)")
    tok = cost.total.tokens
    lines.append(
        "   tokens         input {input_tokens:,} · cache read {cache_read_tokens:,} · "
        "output {output_tokens:,} (reasoning {reasoning_tokens:,})".format(**tok)
    )
    per_attempt = (
        None if cost.agent_dollars is None else cost.agent_dollars / max(1, cost.n_episodes)
    )
    lines.append(
        f"   dollars        {_money(cost.agent_dollars)} total · {_money(per_attempt)} per attempt"
        f" · Cost-of-Pass {_money(cost.cost_of_pass)} per success"
    )
    names = sorted(n for n in res.metrics if n != "cost_per_success")
    if names:
        lines.append(
            "   metrics        "
            + " · ".join(f"{n} {_pct(res.metrics[n])}" for n in names)
            + "  (corpus aggregates: ratios of sums)"
        )
    if "policy" in res.scores:
        lines.append(_policy_line(res.scores["policy"]))
    lines += _slice_table(res, names, conf, kk)
    for w in rel.warnings:
        lines.append(f"   warning: {w}")
    return "\n".join(lines)


def _slice_table(res: Any, names: Sequence[str], conf: int, kk: int) -> list[str]:
    """The per-slice rows of :func:`format_run` (the named slices first, then the rest)."""
    rel = res.reliability
    head = (
        f"   {'slice':<8}{'tasks':>6}{'success [' + str(conf) + '% CI]':>26}{'pass^' + str(kk):>9}"
    )
    head += "".join(f"{n:>12}" for n in names) + f"{'$/success':>12}"
    lines = ["   per slice:", head]
    preferred = [s for s in ("easy", "hard", "refund", "lookup") if s in res.slices]
    for sname in preferred + sorted(set(res.slices) - set(preferred)):
        sl, srel = res.slices[sname], rel.slices.get(sname)
        row = f"   {sname:<8}{len(sl.task_ids):>6}"
        row += f"{_iv(srel.success_rate) if srel else '':>26}"
        row += f"{srel.pass_hat_k[kk].point if srel else math.nan:9.3f}"
        row += "".join(f"{_pct(sl.metrics.get(n, math.nan)):>12}" for n in names)
        row += f"{_money(sl.cost.cost_of_pass):>12}"
        lines.append(row)
    return lines


def _policy_line(scores: Sequence[Any]) -> str:
    """The policy metric's violations and near-misses (successes that broke a policy)."""
    from ek.agents.policy import policy_figures

    f = policy_figures(scores)
    return (
        f"   policy         {f['violated']:.0f} of {f['n']:.0f} episodes broke a policy; "
        f"near-misses {f['near_misses']:.0f} of {f['successes']:.0f} successes "
        "(right final state, a write without the order's look-up)"
    )


def format_gate(gate: Any) -> str:
    """The gate's verdict and every check, as text."""
    verdict = "PASS" if gate.passed else "REGRESSION"
    lines = [
        f"== regression gate: candidate vs baseline -> {verdict} ({gate.reason})",
        f"   {'check':<16}{'baseline':>10}{'candidate':>11}   "
        f"{'change [' + str(round(gate.confidence * 100)) + '% CI]':<28}verdict",
    ]
    for c in gate.checks:
        iv = c.interval
        change = f"{iv.point:+.3f} [{iv.low:+.3f}, {iv.high:+.3f}]"
        lines.append(
            f"   {c.name:<16}{c.baseline:>10.3f}{c.current:>11.3f}   {change:<28}{c.verdict}"
        )
    for w in gate.warnings:
        lines.append(f"   warning: {w}")
    lines.append(
        "   (a regression needs the whole interval of the change below -tolerance; "
        "`ek-agents gate` exits 1 on it)"
    )
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the job


def _provenance(agent: ScriptedAgent, seed: int) -> RunProvenance:
    return RunProvenance(
        agent=agent.name,
        model=agent.tokens.model,
        scaffold=DEMO_SCAFFOLD,
        suite_version=SUITE_VERSION,
        seed=seed,
        extra={"prices": _PRICE_NOTE},
    )


def run_demo(
    folder: str | os.PathLike[str] = "ek-demo-run",
    *,
    k: int = 5,
    seed: int = 0,
    inspect: bool | None = None,
    inspect_epochs: int = 2,
    plots: bool | None = None,
    resume: bool = False,
    progress: bool = True,
    stream: IO[str] | None = None,
    concurrency: int = 4,
) -> DemoResult:
    """Run the demo end to end into ``folder``; print the report to ``stream``.

    Args:
        folder: The run folder (created; the demo's own files in it are replaced unless
            ``resume``).
        k: Trials per task (>= 2 for pass^k to say anything).
        seed: The run seed (every trial's randomness derives from it).
        inspect: Run the Inspect AI part: ``True`` (required), ``False`` (skip) or ``None``
            (when ``inspect-ai`` is importable).
        inspect_epochs: Epochs of the Inspect run (at most ``k``; each replays the baseline's
            trial of the same number). Inspect costs about a quarter of a second per sample
            and epoch, so the default is 2 to keep the demo well under a minute.
        plots: Write the plots: ``True`` (required), ``False`` or ``None`` (when ``matplotlib``
            is importable).
        resume: Keep the existing trial stores and resume them instead of starting afresh.
        progress: Show a progress bar on stderr.
        stream: Where the report goes (default stdout).
        concurrency: Trials in flight at once.
    """
    from ek.agents.harness import agent_regression_gate, load_agent_baseline, save_agent_baseline
    from ek.jsonio import write_json_atomic

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    out = sys.stdout if stream is None else stream
    t0 = time.perf_counter()
    root = os.path.abspath(os.fspath(folder))
    _prepare_folder(root, resume)
    text: list[str] = []

    def emit(s: str = "") -> None:
        text.append(s)
        out.write(s + "\n")
        out.flush()

    tasks = load_tasks()
    _emit_intro(emit, len(tasks), root)
    results = {}
    for agent in (baseline_agent(), candidate_agent()):
        res = _run_agent(
            agent,
            tasks,
            os.path.join(root, f"{agent.name}.trials.jsonl"),
            k=k,
            seed=seed,
            concurrency=concurrency,
            progress=progress,
        )
        results[agent.name] = res
        emit(format_run(f"{agent.name} ({agent.tokens.model})", res))
        emit()

    base_path = os.path.join(root, "baseline.json")
    save_agent_baseline(results["baseline"], base_path)
    gate = agent_regression_gate(results["candidate"], load_agent_baseline(base_path))
    write_json_atomic(os.path.join(root, "gate.json"), gate.to_dict())
    emit(format_gate(gate))
    emit(
        f"   CI form: ek-agents gate {_show(base_path)} "
        f"{_show(os.path.join(root, 'candidate.trials.jsonl'))}"
    )
    from ek.agents.view import write_view

    view = write_view(
        os.path.join(root, "candidate.trials.jsonl"),
        os.path.join(root, "view.html"),
        compare=base_path,
    )
    emit(f"   view: {_show(view)} (every trial and the comparison; open it in a browser)")
    emit()
    emit(format_reliability(results))
    emit()
    conversation_part(emit, root, k=k, seed=seed)
    emit()

    insp, note = _inspect_part(
        emit, root, inspect, k=k, epochs=inspect_epochs, seed=seed, reference=results["baseline"]
    )
    written = _plots_part(emit, root, plots, results)
    emit(f"done in {time.perf_counter() - t0:.1f}s; everything is in {root}")
    report = "\n".join(text) + "\n"
    with open(os.path.join(root, "report.txt"), "w", encoding="utf-8") as fh:
        fh.write(report)
    return DemoResult(
        folder=root,
        baseline=results["baseline"],
        candidate=results["candidate"],
        gate=gate,
        inspect=insp,
        plots=tuple(written),
        report=report,
        inspect_note=note,
        files={
            "baseline_store": os.path.join(root, "baseline.trials.jsonl"),
            "candidate_store": os.path.join(root, "candidate.trials.jsonl"),
            "baseline": base_path,
            "gate": os.path.join(root, "gate.json"),
            "report": os.path.join(root, "report.txt"),
            "view": os.path.join(root, "view.html"),
        },
    )


def _prepare_folder(root: str, resume: bool) -> None:
    """Create the run folder; unless resuming, remove the demo's own files from an earlier run."""
    os.makedirs(root, exist_ok=True)
    if resume:
        return
    for name in _OUTPUT_FILES:
        p = os.path.join(root, name)
        if os.path.exists(p):
            os.remove(p)
    shutil.rmtree(os.path.join(root, "inspect"), ignore_errors=True)


def _emit_intro(emit: Callable[[str], None], n_tasks: int, root: str) -> None:
    """The report's opening: the suite, how success is decided, the price table, the folder."""
    emit(f"ek-agents demo: {n_tasks} tasks of the embedded retail suite ({SUITE_VERSION})")
    emit(
        "  slices: refund (destructive: refunds, cancellations) / lookup (find the order, "
        "change its address); tags easy / hard"
    )
    emit("  success = the database after the agent's calls equals the gold state (replayed)")
    emit("  price table (USD per million tokens; " + _PRICE_NOTE + "):")
    for m, mp in DEMO_PRICES.items():
        emit(
            f"    {m:<11} input {(mp.input or 0) * 1e6:.2f} · cache read "
            f"{(mp.cache_read or 0) * 1e6:.2f} · output {(mp.output or 0) * 1e6:.2f}"
        )
    emit(f"  run folder: {root}")
    emit("")


def _run_agent(
    agent: ScriptedAgent,
    tasks: Sequence[Any],
    store: str,
    *,
    k: int,
    seed: int,
    concurrency: int,
    progress: bool,
) -> Any:
    """One agent's suite run into its trial store (resumed when the store holds trials)."""
    from ek.agents.harness import run_suite

    bar = ProgressBar(agent.name, stream=sys.stderr) if progress else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported through rel.warnings instead
        return run_suite(
            agent,
            tasks,
            k=k,
            check=replayed_state_match,
            metrics=demo_metrics(),
            prices=DEMO_PRICES,
            run=_provenance(agent, seed),
            concurrency=concurrency,
            store=store,
            progress=bar,
            faults=DEMO_FAULTS,
        )


#: The entry point group where an extra's adapter provides a demo stage (``inspect``: the
#: ``[inspect]`` extra's ``ek.adapters.inspect.demo:run_inspect_demo``). The demo finds the stage
#: there, so the dependency points one way: adapters -> ek.agents -> ek.
DEMO_STAGES = "ek_agents.demo"


def demo_stage(name: str) -> Callable[..., Any]:
    """The demo stage ``name`` an installed adapter provides (entry point group :data:`DEMO_STAGES`).

    Raises:
        ImportError: no such stage is installed, or its adapter cannot import (its extra is
            missing; the adapter's message names it).

    Example:
        >>> demo_stage("no-such-stage")
        Traceback (most recent call last):
        ...
        ImportError: no demo stage 'no-such-stage' is installed (entry point group ek_agents.demo)
    """
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group=DEMO_STAGES) if ep.name == name]
    if not found:
        raise ImportError(f"no demo stage {name!r} is installed (entry point group {DEMO_STAGES})")
    stage: Callable[..., Any] = found[0].load()
    return stage


def _inspect_part(
    emit: Callable[[str], None],
    root: str,
    inspect: bool | None,
    *,
    k: int,
    epochs: int,
    seed: int,
    reference: Any,
) -> tuple[Mapping[str, Any] | None, str]:
    """The Inspect AI run when wanted and possible: its summary, and a note when it was skipped."""
    insp: Mapping[str, Any] | None = None
    note = ""
    want_inspect = _importable("inspect_ai") if inspect is None else inspect
    if want_inspect:
        try:  # the Inspect part lives in the adapter: ek.agents never imports an adapter
            run_inspect_demo = demo_stage("inspect")
        except ImportError as e:
            if inspect:
                raise
            note = f"Inspect part skipped: {str(e).splitlines()[0] if str(e) else repr(e)}"
        else:
            insp = run_inspect_demo(
                os.path.join(root, "inspect"),
                k=max(1, min(k, epochs)),
                seed=seed,
                reference=reference,
            )
            emit(str(insp["report"]))
            emit("")
    elif inspect is False:
        note = "Inspect part skipped (--no-inspect)"
    else:
        note = "Inspect part skipped: inspect-ai is not installed (pip install ek-agents[inspect])"
    if note:
        emit(note)
        emit("")
    return insp, note


def _plots_part(
    emit: Callable[[str], None], root: str, plots: bool | None, results: Mapping[str, Any]
) -> list[str]:
    """The plots when wanted and possible (``matplotlib``): the files written."""
    written: list[str] = []
    want_plots = _importable("matplotlib") if plots is None else plots
    if not want_plots:
        emit("plots skipped: matplotlib is not installed (pip install ek-agents[plot])")
        return written
    from ek.agents.plots import plot_cost_success, plot_pass_hat_k, plot_run

    runs = [
        plot_run(results["baseline"], "baseline (demo-large)"),
        plot_run(results["candidate"], "candidate (demo-small)"),
    ]
    written.append(plot_pass_hat_k(runs, os.path.join(root, "pass_hat_k.png")))
    written.append(plot_cost_success(runs, os.path.join(root, "cost_vs_success.png")))
    written.extend(_reliability_plots(root, runs, results))
    emit("plots: " + ", ".join(_show(p) for p in written))
    return written


def _reliability_plots(root: str, runs: Sequence[Any], results: Mapping[str, Any]) -> list[str]:
    """The success-against-budget curve beside the cost frontier, and robustness to faults."""
    from ek.agents import budget_curve, robustness
    from ek.agents.plots import plot_budget, plot_robustness

    labels = {r.name.split(" ")[0]: r.name for r in runs}
    curves = {labels[n]: budget_curve(res, "dollars") for n, res in results.items()}
    rows = {labels[n]: robustness(res) for n, res in results.items()}
    return [
        plot_budget(runs, curves, os.path.join(root, "budget_vs_cost.png")),
        plot_robustness(rows, os.path.join(root, "robustness.png")),
    ]


def format_reliability(results: Mapping[str, Any]) -> str:
    """The "beyond pass^k" section: consistency and the flakiest tasks, robustness to the
    injected faults (Newcombe interval against clean), success against a dollar cap, and the
    gate of the candidate's consistency and robustness against the baseline's."""
    from ek.agents import budget_curve, consistency, robustness
    from ek.agents._gate import agent_regression_gate

    lines = ["== Reliability beyond pass^k"]
    for name, res in results.items():
        con = consistency(res.counts, confidence=res.confidence, top=3)
        flaky = ", ".join(f"{t.task_id} ({t.c}/{t.n})" for t in con.flakiest) or "none"
        lines.append(
            f"  {name}: consistent tasks {con.n_consistent}/{con.n_tasks} = "
            f"{_iv(con.share)}; flakiest: {flaky}"
        )
        for row in robustness(res):
            lines.append(
                f"    under {row.fault}: success {_pct(row.rate_fault)} vs clean "
                f"{_pct(row.rate_clean)}; difference {row.difference.point:+.1%} "
                f"[{row.difference.low:+.1%}, {row.difference.high:+.1%}] (Newcombe)"
            )
        curve = budget_curve(res, "dollars")
        if curve.caps:
            mid = curve.caps[len(curve.caps) // 2]
            lines.append(
                f"    success within a ${mid:.4f} cap per trial (the median trial's spend): "
                f"{_pct(curve.rate_at(mid))} (from recorded costs; no re-run)"
            )
    if {"baseline", "candidate"} <= set(results):
        g = agent_regression_gate(
            results["candidate"], results["baseline"], metrics=False, consistency=True,
            robustness=True,
        )  # fmt: skip
        for c in g.checks:
            if c.kind in ("consistency", "robustness"):
                lines.append(f"  gate {c.name}: {c.reason}")
    return "\n".join(lines)


def _show(path: str) -> str:
    """``path`` relative to the working directory when it is inside it, else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# ----------------------------------------------------------------------------- command line


def add_demo_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``demo`` subcommand's options to ``p`` (used by ``ek-agents demo``)."""
    p.add_argument(
        "folder",
        nargs="?",
        default="ek-demo-run",
        help="the run folder for stores, baseline, gate verdict, report and plots "
        "(default: ./ek-demo-run)",
    )
    p.add_argument("-k", "--trials", type=int, default=5, dest="k", help="trials per task (5)")
    p.add_argument("--seed", type=int, default=0, help="run seed (0)")
    p.add_argument("--no-inspect", action="store_true", help="skip the Inspect AI part")
    p.add_argument(
        "--inspect-epochs",
        type=int,
        default=2,
        help="epochs of the Inspect AI part (2; at most -k; about 0.25 s per sample and epoch)",
    )
    p.add_argument("--no-plots", action="store_true", help="do not write the plots")
    p.add_argument("--resume", action="store_true", help="resume the existing trial stores")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--judged",
        action="store_true",
        help="also run the judged variant: a scripted judge with known errors decides success, "
        "people label 60 trials of each agent; raw vs corrected success and the gate on each",
    )
    return p


def demo_command(args: argparse.Namespace) -> int:
    """Run ``ek-agents demo`` from parsed arguments; the exit code (0: the demo ran).

    The demo's gate is *expected* to find the candidate's regression; that is its result, not
    a failure of the command.
    """
    if args.k < 1:
        print(f"ek-agents demo: -k must be >= 1, got {args.k}", file=sys.stderr)
        return 2
    run_demo(
        args.folder,
        k=args.k,
        seed=args.seed,
        inspect=False if args.no_inspect else None,
        inspect_epochs=args.inspect_epochs,
        plots=False if args.no_plots else None,
        resume=args.resume,
        progress=not args.quiet,
    )
    if getattr(args, "judged", False):
        from ._judged import run_judged_demo

        run_judged_demo(args.folder, k=args.k, seed=args.seed)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ek.agents.demo._run [FOLDER] [-k K] ...``."""
    p = add_demo_arguments(
        argparse.ArgumentParser(prog="ek-agents demo", description=__doc__.split("\n")[0])
    )
    return demo_command(p.parse_args(None if argv is None else list(argv)))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
