"""The comparison of the viewed run with another: the gate's decision and reason (or its
refusal, with the reason), its checks, and the per-task paired differences, the tasks that
regressed first, then those that improved."""

from __future__ import annotations

import math
import warnings
from typing import Any

from ek.agents.harness import GateRefusedError, GateResult, RunSummary, agent_regression_gate

from ._html import esc, num, table, td
from ._page import sortable_head

__all__ = ["compare_section", "gate_decision", "task_changes"]


def gate_decision(current: RunSummary, baseline: RunSummary) -> GateResult | str:
    """The gate's result as ``ek-agents gate BASELINE CURRENT`` gives it, or why it refused."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return agent_regression_gate(current, baseline)
    except (GateRefusedError, ValueError, TypeError) as e:
        return f"{type(e).__name__}: {e}"


def task_changes(
    current: RunSummary, baseline: RunSummary
) -> list[tuple[str, tuple[int, int], tuple[int, int], float]]:
    """``(task, baseline (n, c), current (n, c), change in success rate)`` for every task
    both ran: regressions first (worst first), then improvements (best first), then the rest.

    Example:
        >>> from ek.agents.base import RunProvenance
        >>> a = RunSummary(RunProvenance(), 2, {"x": (2, 2), "y": (2, 0), "z": (2, 1)})
        >>> b = RunSummary(RunProvenance(), 2, {"x": (2, 1), "y": (2, 1), "z": (2, 1)})
        >>> [(t, d) for t, _, _, d in task_changes(a, b)]
        [('y', -0.5), ('x', 0.5), ('z', 0.0)]
    """
    rows = []
    for t, (n, c) in current.counts.items():
        if t not in baseline.counts or not n or not baseline.counts[t][0]:
            continue
        bn, bc = baseline.counts[t]
        rows.append((t, (bn, bc), (n, c), c / n - bc / bn))

    def order(r: tuple[str, Any, Any, float]) -> tuple[int, float]:
        d = r[3]
        return (0, d) if d < 0 else (1, -d) if d > 0 else (2, 0.0)

    return sorted(rows, key=order)


def _checks(res: GateResult) -> str:
    rows = [
        (
            c.name,
            num(c.baseline),
            num(c.current),
            f"{num(c.interval.point)} [{num(c.interval.low)}, {num(c.interval.high)}]",
            (c.verdict, "bad" if c.failed else "warnc" if c.verdict == "underpowered" else "ok"),
            c.reason,
        )
        for c in res.checks
    ]
    return table(["check", "baseline", "current", "change [interval]", "verdict", "reason"], rows)


def _decision(res: GateResult | str) -> str:
    if isinstance(res, str):
        return (
            '<p class="big bad" id="gate-decision" data-decision="refused">REFUSED</p>'
            f'<p id="gate-reason">{esc(res)}</p>'
        )
    word = "PASS" if res.passed else "REGRESSION" if res.regressions else "FAIL"
    cls = "ok" if res.passed else "bad"
    mode = "stratified (paired by task)" if res.stratified else "independent runs"
    warns = "".join(f"<li>{esc(w)}</li>" for w in res.warnings)
    return (
        f'<p class="big {cls}" id="gate-decision" data-decision="{word.lower()}">{word}</p>'
        f'<p id="gate-reason">{esc(res.reason)}</p>'
        f'<p class="mute">{res.confidence:.0%} intervals of current - baseline, {mode}, '
        f"tolerance {res.tolerance:g}, {res.n_tasks} task(s) compared</p>"
        f"{_checks(res)}" + (f'<ul class="warnings">{warns}</ul>' if warns else "")
    )


_HEAD = (
    ("task", "text"),
    ("baseline successes", "num"),
    ("current successes", "num"),
    ("change in success rate", "num"),
    ("", "text"),
)


def _diff_rows(rows: list[tuple[str, tuple[int, int], tuple[int, int], float]]) -> str:
    out = []
    for t, (bn, bc), (n, c), d in rows:
        word, cls = (
            ("regressed", "bad") if d < 0 else ("improved", "ok") if d > 0 else ("same", "mute")
        )
        out.append(
            "<tbody><tr>"
            + td(t)
            + td(f"{bc}/{bn}", "num", bc / bn)
            + td(f"{c}/{n}", "num", c / n)
            + td(f"{d:+.3f}", "num", d if math.isfinite(d) else None)
            + td(word, cls)
            + "</tr></tbody>"
        )
    return "".join(out)


def compare_section(current: RunSummary, baseline: RunSummary, label: str) -> str:
    """The comparison section of the page."""
    res = gate_decision(current, baseline)
    rows = task_changes(current, baseline)
    worse = sum(1 for r in rows if r[3] < 0)
    better = sum(1 for r in rows if r[3] > 0)
    return (
        f'<section id="compare"><h2>Comparison with {esc(label)}</h2>'
        f"<h3>The gate's decision</h3>{_decision(res)}"
        f"<h3>Per-task paired differences</h3><p>{len(rows)} task(s) in both runs: "
        f"{worse} regressed, {better} improved (current - baseline success rate).</p>"
        f'<table id="task-changes" class="sortable">{sortable_head(_HEAD)}{_diff_rows(rows)}'
        "</table></section>"
    )
