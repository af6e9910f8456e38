"""The ``ek-agents`` command.

Subcommands live in a table (:data:`SUBCOMMANDS`); add one with :func:`add_subcommand`:

* ``ek-agents report RUN [--json] [--k K] [--prices FILE] [--confidence C]
  [--interval auto|bootstrap|clustered] [--success-scorer NAME]``: success rate with its
  interval, the pass@k / pass^k table, cost by role and model, Cost-of-Pass, per slice, every
  metric's aggregate with its interval over tasks, and how many samples were left unscored.
  Intervals treat tasks as the unit: a percentile bootstrap over tasks, or the cluster-robust
  standard error with tasks as clusters (``auto``: the bootstrap up to 1,000 tasks, clustered
  above); the other method is shown beside where it was computed. RUN is a trial store, a
  baseline or an Inspect log (whose ek metric scores are read from the samples;
  ``--success-scorer`` names the scorer that decides success, e.g. Inspect's ``match``).
* ``ek-agents view RUN [--compare RUN2] [-o FILE.html]``: one self-contained HTML page of
  a run and its trials, opened from ``file://`` with no network (:mod:`ek.agents.view`).
* ``ek-agents demo [FOLDER] [-k K]``: the embedded demo suite end to end (see
  :mod:`ek.agents.demo._run`).
* ``ek-agents report RUN --plot FILE [--compare RUN ...]``: also draw pass^k against k and
  success against cost with the Pareto frontier (:mod:`ek.agents.plots`).
* ``ek-agents gate BASELINE CURRENT [--tolerance T] [--confidence C] [--stratified]
  [--interval auto|bootstrap|clustered] [--tasks same|intersect] [--success-scorer NAME]
  [--allow-undefined CHECK ...] [--allow-unscored] [--allow-metric-changes]
  [--allow-simulator-change] [--allow-judge-change] [--json]``: the
  variance-aware regression gate. Runs over different task sets are refused unless ``--tasks
  intersect`` (compare the shared tasks; ``--stratified`` always does); the output says how
  many tasks were compared. Runs whose metrics of one name were configured differently (a
  Cost-of-Pass priced at other rates) are refused unless ``--allow-metric-changes``; runs whose
  success different judges decided, unless both have labels (``--labels FILE
  --baseline-labels FILE``) or ``--allow-judge-change``.

Exit codes, a contract for CI (every subcommand): **0** pass, **1** regression or a check whose
change is undefined (unless ``--allow-undefined CHECK``), **2** everything else: refused
(incomparable or empty runs, different task sets, unscored samples without
``--allow-unscored``, metrics configured differently without ``--allow-metric-changes``,
different judges without labels or ``--allow-judge-change``),
unreadable input (a FIFO or a directory is refused, not read), or any
other error, reported on one line on stderr, never a traceback.

Output cut short by a closed pipe (``ek-agents report --json | head``) ends quietly, with the
command's own exit code.

:func:`terminal_progress` is a progress bar for :func:`ek.agents.harness.run_suite` that draws
on stderr only when stderr is a terminal.

Example:
    >>> main(["--version"])
    ek-agents 0.1.0
    0
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_REGRESSION",
    "SUBCOMMANDS",
    "Subcommand",
    "add_subcommand",
    "build_parser",
    "main",
    "terminal_progress",
]

#: Exit code: the gate passed / the command succeeded.
EXIT_OK = 0
#: Exit code: the gate found a statistically supported regression.
EXIT_REGRESSION = 1
#: Exit code: refused (incomparable or empty runs), unreadable input, or any other error.
EXIT_REFUSED = 2


@dataclass(frozen=True)
class Subcommand:
    """One ``ek-agents`` subcommand: its arguments and what it does (returns the exit code)."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


#: The subcommands, in the order ``--help`` lists them.
SUBCOMMANDS: dict[str, Subcommand] = {}


def add_subcommand(cmd: Subcommand) -> Subcommand:
    """Register ``cmd`` in :data:`SUBCOMMANDS` (replacing one of the same name)."""
    if not isinstance(cmd, Subcommand):
        raise TypeError(f"add_subcommand expects a Subcommand, got {type(cmd).__name__}")
    SUBCOMMANDS[cmd.name] = cmd
    return cmd


def _err(msg: str) -> None:
    print(f"ek-agents: error: {msg}", file=sys.stderr)


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the exit-time flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):  # no real file descriptor (tests)
        pass


def _emit(text: str) -> None:
    """Write ``text`` to stdout; a reader that went away (``| head``) is not an error."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


# ----------------------------------------------------------------------------- progress


def terminal_progress(
    stream: IO[str] | None = None, *, width: int = 30
) -> Callable[[Any], None] | None:
    """A progress-bar callback for ``run_suite(progress=...)``, or ``None`` off a terminal.

    Draws ``[#####-----] done/total  pct  failures  elapsed`` on one line of ``stream``
    (default stderr) and ends the line when the suite is done.

    Example:
        >>> import io
        >>> terminal_progress(io.StringIO()) is None     # not a TTY: no bar
        True
    """
    out = sys.stderr if stream is None else stream
    isatty = getattr(out, "isatty", None)
    if not callable(isatty) or not isatty():
        return None

    def draw(event: Any) -> None:
        total = max(int(event.total), 1)
        done = int(event.done)
        filled = int(width * done / total)
        bar = "#" * filled + "-" * (width - filled)
        fails = f"  {event.agent_failures} failed" if event.agent_failures else ""
        out.write(
            f"\r[{bar}] {done}/{total} {100 * done / total:5.1f}%{fails}  {event.elapsed:6.1f}s"
        )
        if done >= total:
            out.write("\n")
        out.flush()

    return draw


# ----------------------------------------------------------------------------- report


def _num(x: Any, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf"
    return f"{x:.{digits}g}" if abs(x) >= 1 else f"{x:.{digits}f}"


def _iv(d: Mapping[str, Any]) -> str:
    return f"{_num(d.get('point'))} [{_num(d.get('low'))}, {_num(d.get('high'))}]"


def _dollars(x: Any) -> str:
    if x is None:
        return "unknown"
    if x == "inf" or (isinstance(x, float) and math.isinf(x)):
        return "inf"
    return f"${float(x):.6g}"


@dataclass(frozen=True)
class _ReportOptions:
    """What ``ek-agents report`` was asked, read off the command line once: the steps after
    it are each handed the few values they use, never the parsed arguments."""

    run: str
    k: int | None
    confidence: float
    interval: str
    labels: str | None
    prices: str | None
    success_scorer: str | None
    workers: int | None
    trace: dict[str, Any]

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> _ReportOptions:
        return cls(
            run=args.run,
            k=args.k,
            confidence=args.confidence,
            interval=args.interval,
            labels=args.labels,
            prices=args.prices,
            success_scorer=args.success_scorer,
            workers=args.workers,
            trace=_trace_options(args),
        )

    def read(self, prices: Mapping[str, Any] | None, *, episodes: bool) -> Any:
        """The run as the report reads it (``prices``: ``--prices`` read), as a stream of
        per-task summaries, or with its trials (``episodes``: for ``--labels``)."""
        from ._run.load import load_run

        return load_run(
            self.run,
            success_scorer=self.success_scorer,
            trace_options=self.trace,
            episodes=episodes,
            prices=prices,
            workers=self.workers,
        )


def _trace_options(args: argparse.Namespace) -> dict[str, Any]:
    """The trace-file options (:data:`~ek.agents.traces._summary.TRACE_OPTIONS`) set on the
    command line, as keywords for :func:`~ek.agents.traces.summary_from_traces`.

    Example:
        >>> _trace_options(argparse.Namespace(task_attribute="ek.task_id", scope="top"))
        {'task_attribute': 'ek.task_id', 'scope': 'top'}
    """
    from .traces._summary import TRACE_OPTIONS

    return {k: getattr(args, k) for k in TRACE_OPTIONS if getattr(args, k, None) is not None}


def _report_data(args: argparse.Namespace) -> dict[str, Any]:
    from .cost import load_prices

    o = _ReportOptions.from_args(args)
    # read once, as a stream: per-task counts, metric sums and cost totals, no episodes;
    # --prices re-prices the trials' costs; without it, a store is priced as its run was
    prices = load_prices(o.prices) if o.prices else None
    s = o.read(prices, episodes=False)
    if s.is_empty:
        raise ValueError(
            f"{o.run}: the run has no trial" + (f" ({s.unscored})" if s.unscored else "")
        )
    notes: list[str] = list(s.notes)
    counts = {t: nc for t, nc in s.counts.items() if nc[0] > 0}
    rel = _reliability_of(s, counts, o.k, o.confidence, o.interval)
    cost = dict(s.cost) if s.cost is not None else None
    slice_cost: Mapping[str, Any] = s.slice_cost or {}
    if o.prices and s.agent_failures is None:
        notes.append("--prices ignored: a baseline keeps no episodes to re-price")
    seed = s.run.seed or 0
    return {
        "source": s.source,
        "run": s.run.to_dict(),
        "signature": s.run.signature(),
        "k": s.k,
        "n_tasks": s.n_tasks,
        "n_trials": s.n_trials,
        "n_successes": s.n_successes,
        "agent_failures": s.agent_failures,
        "unscored": _unscored_data(s),
        "reliability": rel.to_dict(),
        "cost": cost,
        "slices": {
            name: {
                "reliability": r.to_dict(),
                "cost": slice_cost.get(name),
            }
            for name, r in rel.slices.items()
        },
        "metrics": {
            name: _metric_data(m, o.interval, o.confidence, seed) for name, m in s.metrics.items()
        },
        "notes": notes,
        "beyond_pass_k": _beyond_data(s, counts, o.confidence),
        # --labels: judged_run reads the trials (a store's read back by offset, not held)
        "judged": _judged_data(o, prices),
    }


def _judged_data(o: _ReportOptions, prices: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``--labels``: the success rates corrected for the judge's errors (ek.agents.judge), the
    run read again with its trials."""
    if not o.labels:
        return None
    from .judge import judged_run, load_labels

    human = load_labels(o.labels)  # a labels file it cannot read is refused before the run
    return judged_run(o.read(prices, episodes=True), human, confidence=o.confidence).to_dict()


def _unscored_data(s: Any) -> dict[str, Any]:
    return {
        "n": s.n_unscored,
        "of": s.unscored.of if s.unscored else s.n_trials,
        "reason": s.unscored.reason if s.unscored else None,
    }


def _reliability_of(
    s: Any, counts: Mapping[str, tuple[int, int]], k: int | None, confidence: float, interval: str
) -> Any:
    """The run's (and each slice's) reliability report, intervals by ``--interval``."""
    from .reliability import reliability

    slices = {n: [t for t in ids if t in counts] for n, ids in s.slices.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return reliability(
            counts,
            k,
            slices={n: ids for n, ids in slices.items() if ids} or None,
            confidence=confidence,
            seed=s.run.seed or 0,
            interval=interval,
        )


def _metric_data(m: Any, interval: str, confidence: float, seed: int) -> dict[str, Any]:
    """A metric's aggregate with its interval over tasks, by ``--interval``, and the other
    method's beside it (:mod:`ek.agents._run.resample`). A metric that declares no sums gets the
    bootstrap only where it is cheap (up to 1,000 tasks) or asked for."""
    from functools import partial

    from ek.stats import choose_interval

    from ._run.resample import MetricSample, by_method

    out = {"value": m.value, "higher_is_better": m.higher_is_better, "n": m.n_scores}
    figures = _metric_figures(m)
    if figures:
        out["figures"] = figures
    sample = MetricSample(m.aggregated_as, {t: ss for t, ss in m.scores.items() if ss})
    method = choose_interval(interval, len(sample.ids))
    if not sample.ids or (not sample.summed and method == "clustered"):
        return {**out, "interval": None, "cross_check": None}
    iv, other = by_method(
        method,
        len(sample.ids),
        partial(sample.clustered, confidence) if sample.summed else None,
        partial(sample.bootstrap, confidence, 2000, seed),
    )
    return {**out, "interval": iv.to_dict(), "cross_check": other.to_dict() if other else None}


def _metric_figures(m: Any) -> dict[str, float] | None:
    """The figures a metric reports beside its aggregate (its ``figures(scores)``, e.g. the
    policy metric's violation rate and near-misses), from the per-task Scores the run kept."""
    from ._run.sums import registered_metric

    figures = getattr(registered_metric(m.aggregated_as), "figures", None)
    if not callable(figures):
        return None
    try:
        found = figures([s for ss in m.scores.values() for s in ss])
        return {k: float(v) for k, v in found.items()}
    except (TypeError, ValueError):  # scores of another metric by that name
        return None


def _beyond_data(s: Any, counts: Mapping[str, Any], confidence: float) -> dict[str, Any]:
    """Consistency (k >= 2), infrastructure errors and budget stops, when the run has them."""
    from ._consistency import consistency

    out: dict[str, Any] = {}
    if any(n >= 2 for n, _ in counts.values()):
        out["consistency"] = consistency(counts, confidence=confidence, top=5).to_dict()
    if s.infra:
        out["infra"] = {
            "per_task": {t: {"trials": e, "retries": r} for t, (e, r) in s.infra.items()},
            "n_infra_errors": s.n_infra_errors,
            "share": s.infra_share,
        }
    if s.budget_hits:
        out["budget_hits"] = dict(s.budget_hits)
    return out


def _print_beyond(d: Mapping[str, Any], out: IO[str]) -> None:
    w = out.write
    con = d.get("consistency")
    if con:
        sh = con["share"]
        flaky = ", ".join(
            f"{t['task_id']} ({t['c']}/{t['n']}, flip {_num(t['flip_rate'], 3)})"
            for t in con["flakiest"]
        )
        w(
            f"\nconsistent tasks {con['n_consistent']}/{con['n_tasks']}  {_iv(sh)}"
            f"  flakiest: {flaky or 'none'}\n"
        )
    infra = d.get("infra")
    if infra:
        per = ", ".join(
            f"{t} {v['trials']} ({v['retries']} retries)" for t, v in infra["per_task"].items()
        )
        w(
            f"infrastructure errors {infra['n_infra_errors']} ({infra['share']:.1%} of trials "
            f"attempted; not counted as trials): {per}\n"
        )
    if d.get("budget_hits"):
        hits = ", ".join(f"{k} {v}" for k, v in d["budget_hits"].items())
        w(f"stopped by a budget: {hits}\n")


def _usage_line(label: str, u: Mapping[str, Any]) -> str:
    tok = u.get("tokens", {})
    parts = [f"{k.replace('_tokens', '')}={v}" for k, v in tok.items() if v]
    unpriced = f"  unpriced: {', '.join(u['unpriced'])}" if u.get("unpriced") else ""
    return f"  {label:<24} {_dollars(u.get('dollars')):>12}  {' '.join(parts)}{unpriced}"


_METHOD_NAMES = {
    "bootstrap": "bootstrap over tasks",
    "clustered": "clustered standard error, tasks as clusters",
}


def _print_rates(d: Mapping[str, Any], w: Callable[[str], Any]) -> None:
    """The success rate (Wilson, and clustered beside), the pass@k / pass^k table by the
    report's interval method, and the other method's pass^k beside it when computed."""
    rel = d["reliability"]
    conf = round(rel["confidence"] * 100)
    counted = f"{d['n_successes']}/{d['n_trials']}"
    w(f"success  {_iv(rel['success_rate'])}  ({counted}, Wilson {conf}%)\n")
    clustered = rel.get("success_rate_clustered")
    if clustered:
        w(f"         {_iv(clustered)}  (clustered by task, {conf}%)\n")
    method = rel.get("interval", "bootstrap")
    other = "clustered" if method == "bootstrap" else "bootstrap"
    check = (rel.get("cross_check") or {}).get("pass_hat_k") or {}
    w(f"\n  k  {'pass@k':<28} {'pass^k':<28} {f'pass^k, {other}' if check else ''}".rstrip())
    for k in sorted(rel["pass_at_k"], key=int):
        row = f"{_iv(rel['pass_at_k'][k]):<28} {_iv(rel['pass_hat_k'][k]):<28}"
        w(f"\n{k:>3}  {row} {_iv(check[k]) if k in check else ''}".rstrip())
    beside = f"; beside: {_METHOD_NAMES[other]}" if check else ""
    w(f"\n  ({_METHOD_NAMES[method]}, {conf}%{beside})\n")


def _print_cost(cost: Mapping[str, Any] | None, w: Callable[[str], Any]) -> None:
    if not cost:
        return
    w("\ncost by role\n")
    for role, u in cost["by_role"].items():
        w(_usage_line(role, u) + "\n")
    w("cost by model\n")
    for model, u in cost["by_model"].items():
        w(_usage_line(model, u) + "\n")
    w(f"Cost-of-Pass  {_dollars(cost.get('cost_of_pass'))} per success  ({cost['reason']})\n")


def _print_metrics(metrics: Mapping[str, Any], w: Callable[[str], Any]) -> None:
    """Each metric's aggregate with its interval over tasks (and the other method's beside)."""
    if not metrics:
        return
    w("\nmetrics\n")
    for name, m in metrics.items():
        better = "higher" if m["higher_is_better"] else "lower"
        iv, other = m.get("interval"), m.get("cross_check")
        span = f"[{_num(iv['low'])}, {_num(iv['high'])}] {_kind(iv)}" if iv else ""
        beside = f"; {_kind(other)} [{_num(other['low'])}, {_num(other['high'])}]" if other else ""
        w(f"  {name:<24} {_num(m['value']):>10}  {span}{beside}  ({better} is better)\n")
        if m.get("figures"):
            w(_figures_line(m["figures"]))


def _figures_line(f: Mapping[str, float]) -> str:
    """The policy metric's figures: violations per trial, near-misses among the successes."""
    if "near_miss_share" not in f:
        return "    " + "  ".join(f"{k} {_num(v)}" for k, v in f.items()) + "\n"
    return (
        f"    violation rate {_num(f['violation_rate'])} ({f['violated']:.0f}/{f['n']:.0f} trials)"
        f"  near-misses {_num(f['near_miss_share'])} ({f['near_misses']:.0f} of "
        f"{f['successes']:.0f} successes broke a policy)\n"
    )


def _kind(iv: Mapping[str, Any]) -> str:
    """``bootstrap`` or ``clustered``: the method family of an interval over tasks."""
    return "clustered" if "clustered" in iv["method"] else "bootstrap"


def _print_report(d: Mapping[str, Any], out: IO[str]) -> None:
    rel = d["reliability"]
    w = out.write
    w(f"run      {d['signature'] or '(no provenance)'}\n")
    if d.get("source"):
        w(f"source   {d['source']}\n")
    fails = "" if d["agent_failures"] is None else f", {d['agent_failures']} agent failure(s)"
    w(f"tasks    {d['n_tasks']}, trials {d['n_trials']} (k={d['k']}){fails}\n")
    u = d["unscored"]
    if u["n"]:
        w(
            f"UNSCORED {u['n']} of {u['of']} samples unscored: {u['reason']} "
            "(left out of every number below)\n"
        )
    _print_rates(d, w)
    _print_cost(d.get("cost"), w)
    if d["slices"]:
        kmax = str(rel["k"])
        w(
            f"\n{'slice':<20} {'tasks':>5} {'trials':>6}  {'success':<26} {'pass^' + kmax:<8} Cost-of-Pass\n"
        )
        for name, sd in d["slices"].items():
            r = sd["reliability"]
            cop = _dollars(sd["cost"]["cost_of_pass"]) if sd.get("cost") else "n/a"
            ph = r["pass_hat_k"].get(kmax, {}).get("point")
            w(
                f"{name:<20} {r['n_tasks']:>5} {r['n_trials']:>6}  {_iv(r['success_rate']):<26} "
                f"{_num(ph):<8} {cop}\n"
            )
    _print_metrics(d["metrics"], w)
    _print_beyond(d.get("beyond_pass_k") or {}, out)
    if d.get("judged"):
        from .judge import judged_text

        w(judged_text(d["judged"]))
    for note in [*rel.get("warnings", []), *d["notes"]]:
        w(f"warning: {note}\n")


def _add_workers(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes that read a trial store together, one shard of its tasks each "
        "(default: one per core for a store of 32 MiB or more, else 1); same figures",
    )


def _add_interval(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--interval",
        choices=("auto", "bootstrap", "clustered"),
        default="auto",
        help="interval method over tasks: the percentile bootstrap, or the cluster-robust "
        "standard error with tasks as clusters; 'auto' (default): the bootstrap up to 1,000 "
        "tasks, clustered above; the other is shown beside where computed",
    )


def _add_success_scorer(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--success-scorer",
        metavar="NAME",
        default=None,
        help="for an Inspect log: the scorer whose value decides success ('NAME' or "
        "'NAME:KEY', e.g. match); default: the ek scorer's verdict (stores and baselines "
        "ignore it)",
    )


def _add_labels(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--labels", metavar="FILE", default=None, help=help)


def _configure_report(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "run", metavar="RUN", help="a trial store (.jsonl), a baseline or an Inspect log"
    )
    _add_labels(
        p,
        "human labels on some trials of a run whose success a judge decided (JSON lines of "
        '{"task_id", "trial", "success"}): also report the success rates corrected for the '
        "judge's errors (docs/judged_success.md)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for machines")
    p.add_argument("--k", type=int, default=None, help="largest k of the pass@k table")
    p.add_argument("--prices", metavar="FILE", help="LiteLLM price JSON to price the episodes")
    p.add_argument("--confidence", type=float, default=0.95, help="interval coverage (0.95)")
    _add_interval(p)
    _add_success_scorer(p)
    _add_workers(p)
    from .traces._summary import add_trace_arguments  # --task-attribute etc. for trace files

    add_trace_arguments(p)
    # --plot / --compare: added for the demo (ek.agents.plots); needs the `plot` extra.
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="also draw pass^k against k and success against cost (Pareto frontier) into FILE "
        "(needs matplotlib: pip install ek-agents[plot])",
    )
    p.add_argument(
        "--compare",
        metavar="RUN",
        action="append",
        default=[],
        help="another run to draw beside RUN in --plot (repeatable)",
    )


def _run_plot(args: argparse.Namespace) -> int:
    from .cost import load_prices
    from .plots import plot_runs

    try:
        prices = load_prices(args.prices) if args.prices else None
        out = plot_runs([args.run, *args.compare], args.plot, prices=prices)
    except (ImportError, OSError, ValueError, TypeError) as e:
        _err(str(e))
        return EXIT_REFUSED
    print(f"plot written to {_written_path(out)}", file=sys.stderr)
    return EXIT_OK


def _written_path(path: str) -> str:
    """The file matplotlib actually wrote: it adds ``.<savefig.format>`` to a name without an
    extension (``--plot DIR`` writes ``DIR.png``)."""
    if os.path.splitext(path)[1]:
        return path
    import matplotlib

    return f"{path}.{matplotlib.rcParams['savefig.format']}"


def _run_report(args: argparse.Namespace) -> int:
    try:
        data = _report_data(args)
    except (OSError, ValueError, TypeError, ImportError) as e:
        _err(str(e))
        return EXIT_REFUSED
    if args.json:
        from ek.jsonio import to_json_safe

        _emit(json.dumps(to_json_safe(data), indent=1, ensure_ascii=False) + "\n")
    else:
        buf = io.StringIO()
        _print_report(data, buf)
        _emit(buf.getvalue())
    if getattr(args, "plot", None):
        return _run_plot(args)
    return EXIT_OK


# ----------------------------------------------------------------------------- gate

_MARK = {
    "pass": "ok  ",
    "within_tolerance": "ok  ",
    "underpowered": "WARN",
    "undefined": "FAIL",
    "regression": "FAIL",
}


def _configure_gate(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "baseline", metavar="BASELINE", help="a baseline, a trial store or an Inspect log"
    )
    p.add_argument("current", metavar="CURRENT", help="a trial store, a baseline or an Inspect log")
    p.add_argument("--tolerance", type=float, default=0.0, help="allowed worsening (0)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval coverage (0.95)")
    _add_labels(
        p,
        "human labels on some of CURRENT's trials (runs a judge decided): with "
        "--baseline-labels, gate the success rates corrected for each run's judge errors",
    )
    p.add_argument("--baseline-labels", metavar="FILE", default=None, help="the same for BASELINE")
    _add_interval(p)
    p.add_argument(
        "--stratified",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="paired comparison on the tasks both runs share (more power)",
    )
    p.add_argument(
        "--tasks",
        choices=("same", "intersect"),
        default="same",
        help="task-set policy: 'same' (default) refuses runs over different task sets; "
        "'intersect' compares the tasks both runs ran (--stratified always does)",
    )
    _add_success_scorer(p)
    _add_workers(p)
    from .traces._summary import add_trace_arguments  # --task-attribute etc. for trace files

    add_trace_arguments(p)
    p.add_argument(
        "--allow-undefined",
        metavar="CHECK",
        action="append",
        default=[],
        help="let this check's change be undefined (NaN: an unknown cost, inf - inf with no "
        "success in either run) without failing the gate (repeatable; '*' for every check)",
    )
    p.add_argument(
        "--allow-unscored",
        action="store_true",
        help="gate runs with unscored samples on their scored samples only (default: refuse)",
    )
    p.add_argument(
        "--allow-metric-changes",
        action="store_true",
        help="gate runs whose metrics of one name were configured differently, e.g. priced at "
        "other rates (default: refuse, naming the change)",
    )
    p.add_argument(
        "--allow-simulator-change",
        action="store_true",
        help="gate runs whose user simulator differs (default: refuse; a new simulator is a "
        "new experiment)",
    )
    p.add_argument(
        "--allow-judge-change",
        action="store_true",
        help="gate runs whose success different judges decided on their judged rates "
        "(default: refuse, naming both judges, unless --labels and --baseline-labels)",
    )
    p.add_argument(
        "--max-infra-share",
        type=float,
        default=None,
        metavar="SHARE",
        help="refuse a run in which more than SHARE (0..1) of the trials attempted ended in "
        "infrastructure errors (default: no limit)",
    )
    p.add_argument(
        "--consistency",
        action="store_true",
        help="also gate the share of consistent tasks (all-pass or all-fail)",
    )
    p.add_argument(
        "--robustness",
        action="store_true",
        help="also gate the success rate under each injected fault both runs recorded",
    )
    p.add_argument("--json", action="store_true", help="print JSON for machines")


def _gate_text(res: Any) -> str:
    out = io.StringIO()
    w = out.write
    conf = round(res.confidence * 100)
    mode = "stratified (paired by task)" if res.stratified else "independent runs"
    w(
        f"gate: current - baseline, {conf}% intervals, {mode}, tolerance {res.tolerance:g}, "
        f"{res.n_tasks} task(s) compared\n"
    )
    for c in res.checks:
        mark = "WARN" if c.verdict == "undefined" and not c.failed else _MARK.get(c.verdict)
        w(
            f"  {mark or c.verdict}  {c.name:<20} {_num(c.baseline)} -> "
            f"{_num(c.current)}  change {_iv(c.interval.to_dict())}  {c.verdict}\n"
        )
        w(f"        {c.reason}\n")
        other = c.detail.get("cross_check")
        if other:
            w(f"        beside: {_iv(other)} ({other['method']})\n")
    for note in res.warnings:
        w(f"warning: {note}\n")
    verdict = "PASS: " if res.passed else "REGRESSION: " if res.regressions else "FAIL: "
    w(verdict + res.reason + "\n")
    return out.getvalue()


def _gate_labels(args: argparse.Namespace) -> dict[str, Any]:
    """``--labels`` / ``--baseline-labels`` read, as the gate's keywords (none when absent)."""
    from .judge import load_labels

    out = {}
    for key, path in (("labels", args.labels), ("baseline_labels", args.baseline_labels)):
        if path:
            out[key] = load_labels(path)
    return out


def _run_gate(args: argparse.Namespace) -> int:
    from ._gate import agent_regression_gate
    from ._run.load import load_run

    allow: bool | list[str] = "*" in args.allow_undefined or list(args.allow_undefined)
    try:
        traces = _trace_options(args)
        judged = bool(args.labels or args.baseline_labels)
        # each run read once, as a stream: only the per-task summaries the checks need (and
        # the trials, for judged runs with labels)
        base, cur = (
            load_run(
                path,
                success_scorer=args.success_scorer,
                trace_options=traces,
                episodes=judged,
                workers=args.workers,
            )
            for path in (args.baseline, args.current)
        )
        labels = _gate_labels(args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = agent_regression_gate(
                cur,
                base,
                tolerance=args.tolerance,
                confidence=args.confidence,
                stratified=args.stratified,
                allow_undefined=allow,
                allow_unscored=args.allow_unscored,
                allow_metric_changes=args.allow_metric_changes,
                allow_simulator_change=args.allow_simulator_change,
                allow_judge_change=args.allow_judge_change,
                tasks=args.tasks,
                max_infra_share=args.max_infra_share,
                consistency=args.consistency,
                robustness=args.robustness,
                interval=args.interval,
                **labels,
            )
    except (OSError, ValueError, TypeError, ImportError) as e:
        _err(str(e))
        return EXIT_REFUSED
    if args.json:
        _emit(json.dumps(res.to_dict(), indent=1, ensure_ascii=False) + "\n")
    else:
        _emit(_gate_text(res))
    return EXIT_OK if res.passed else EXIT_REGRESSION


add_subcommand(
    Subcommand(
        "report",
        "success rate, pass@k/pass^k, cost and Cost-of-Pass of a run",
        _configure_report,
        _run_report,
    )
)
add_subcommand(
    Subcommand(
        "gate",
        "variance-aware regression gate: exit 0 pass, 1 regression or undefined check, "
        "2 refused/unreadable",
        _configure_gate,
        _run_gate,
    )
)


# ----------------------------------------------------------------------------- demo
# `ek-agents demo`: the embedded demo suite end to end (ek.agents.demo._run, imported on use).


def _configure_demo(p: argparse.ArgumentParser) -> None:
    from .demo._run import add_demo_arguments

    add_demo_arguments(p)


def _run_demo(args: argparse.Namespace) -> int:
    from .demo._run import demo_command

    return demo_command(args)


add_subcommand(
    Subcommand(
        "demo",
        "run the embedded retail demo offline: two agents, report, gate, Inspect run, plots",
        _configure_demo,
        _run_demo,
    )
)


# ----------------------------------------------------------------------------- view
# `ek-agents view RUN [--compare RUN2] [-o FILE.html]`: one self-contained HTML page of a run
# (ek.agents.view, imported on use).


def _configure_view(p: argparse.ArgumentParser) -> None:
    from .traces._summary import add_trace_arguments
    from .view import add_view_arguments

    add_view_arguments(p)
    add_trace_arguments(p)


def _run_view(args: argparse.Namespace) -> int:
    from .view import view_command

    return view_command(args, _trace_options(args))


add_subcommand(
    Subcommand(
        "view",
        "write one offline HTML page of a run: provenance, headline, tasks, every trial, "
        "and a comparison with --compare",
        _configure_view,
        _run_view,
    )
)


# ----------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ek-agents`` (one subparser per entry of :data:`SUBCOMMANDS`)."""
    from ek import __version__

    p = argparse.ArgumentParser(
        prog="ek-agents",
        description="Agent evaluation: pass^k, Cost-of-Pass, tool-call and trajectory scores, "
        "and a variance-aware regression gate.",
    )
    p.add_argument("--version", action="version", version=f"ek-agents {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in SUBCOMMANDS.values():
        sp = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.configure(sp)
        sp.set_defaults(_run=cmd.run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # argparse exits for --help/--version and on bad usage
        return int(e.code or 0)
    except BrokenPipeError:  # ek-agents --help | head -1
        _silence_stdout()
        return EXIT_OK
    if not getattr(args, "command", None):
        buf = io.StringIO()
        parser.print_help(buf)
        _emit(buf.getvalue())
        return 0
    try:
        return int(args._run(args))
    except BrokenPipeError:  # a subcommand that printed straight to a closed pipe
        _silence_stdout()
        return EXIT_OK
    except Exception as e:  # exit 1 means "regression" to CI: any other failure is 2, one line
        # OverflowError, RecursionError, MemoryError, FileExistsError (demo at a file), ...
        _err(_one_line(e))
        return EXIT_REFUSED


def _one_line(e: BaseException) -> str:
    """``Type: message`` on one line (a traceback is not a message)."""
    text = " ".join(str(e).split()) or "(no message)"
    return f"{type(e).__name__}: {text}"[:2000]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
