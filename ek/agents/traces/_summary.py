"""A trace file as a run: :func:`summary_from_traces` (what ``ek-agents report`` and ``gate`` read).

A trace has no verdict of its own: success is decided by a **checker** you pass (``check=``, an
``(episode, gold) -> bool`` callable or a registered name such as ``"output"``, with ``gold`` a
``{task_id: gold}`` mapping), or read from a **verdict attribute** you name
(``success_attribute=``, e.g. one your harness sets on the agent span). With neither, the file is
refused with a message saying so: a run of unknown outcome has no success rate. An agent run
whose top span ended with status ``ERROR`` fails under a checker (as in ``run_suite``).

The command line maps its options onto these keywords (:func:`add_trace_arguments`,
:data:`TRACE_OPTIONS`): ``--task-attribute``, ``--trial-attribute``, ``--success-attribute``,
``--scope``.

Example:
    >>> import os, tempfile
    >>> from ek.agents.traces import Span, write_otlp_json
    >>> p = os.path.join(tempfile.mkdtemp(), "traces.jsonl")
    >>> def run(trace, ok):
    ...     return Span(trace, "01", None, "invoke_agent bot", trace, trace + 1,
    ...                 {"gen_ai.operation.name": "invoke_agent", "final_result": "done",
    ...                  "ek.task_id": "t1", "ek.success": ok})
    >>> _ = write_otlp_json(p, [run(1, True), run(2, False), run(3, True)])
    >>> s = summary_from_traces(p, task_attribute="ek.task_id", success_attribute="ek.success")
    >>> dict(s.counts), s.k
    ({'t1': (3, 2)}, 3)
    >>> dict(summary_from_traces(p, task_attribute="ek.task_id", check="output",
    ...                          gold={"t1": "done"}).counts)
    {'t1': (3, 3)}
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ek.agents._episode import Episode
from ek.agents._run.load import RunLoadError, summary_from_episodes
from ek.agents._run.summary import RunSummary, Unscored
from ek.agents.cost import ModelPrice
from ek.agents.metrics import resolve_checker, task_success

from ._episodes import LOOKED_FOR, SCOPES, TraceProblem, read_traces
from ._otlp import read_spans
from ._span import TraceFormatError

__all__ = [
    "TRACE_OPTIONS",
    "add_trace_arguments",
    "is_trace_file",
    "reading_notes",
    "summary_from_traces",
]

#: The keyword options a trace file is read with (the CLI's ``--task-attribute`` etc.).
TRACE_OPTIONS = ("task_attribute", "trial_attribute", "success_attribute", "scope")


def is_trace_file(path: str | os.PathLike[str]) -> bool:
    """True when the file starts like OTLP JSON or a ``to_json()`` span (a cheap peek, 4 KiB).

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "t.json")
        >>> with open(p, "w") as fh:
        ...     _ = fh.write(json.dumps({"resourceSpans": []}, indent=2))
        >>> is_trace_file(p)
        True
    """
    with open(path, "rb") as fh:
        head = b"".join(fh.read(4096).split()).removeprefix(b"\xef\xbb\xbf")  # no whitespace, BOM
    if head.startswith((b'{"resourceSpans"', b'[{"resourceSpans"')):
        return True
    return head.startswith((b"{", b"[{")) and b'"context":{"trace_id"' in head


def _judge(episodes: list[Episode], check: Any, gold: Mapping[str, Any] | None) -> list[Episode]:
    checker: Callable[[Any, Any], Any] = resolve_checker(check)
    golds = gold or {}
    if not isinstance(golds, Mapping):
        raise TypeError(f"gold must be a {{task_id: gold}} mapping, got {type(golds).__name__}")
    out = []
    for ep in episodes:
        verdict = task_success(ep, golds.get(ep.task_id), checker).detail["passed"]
        out.append(ep.replace(success=bool(verdict)))
    return out


def summary_from_traces(
    path: str | os.PathLike[str],
    *,
    task_attribute: str | None = None,
    trial_attribute: str | None = None,
    success_attribute: str | None = None,
    scope: str = "top",
    check: Any = None,
    gold: Mapping[str, Any] | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
) -> RunSummary:
    """Read a trace file into a :class:`~ek.agents.harness.RunSummary` (counts, cost, episodes).

    A run that cannot be read is left out, counted as unscored (the gate then refuses the run
    unless told otherwise) and named with its reason in the summary's ``notes``, which also say
    what the spans do not record (e.g. cached tokens: dollars are an upper bound); ``ek-agents
    report`` prints them.

    Args:
        path: OTLP JSON (lines or one document).
        task_attribute, trial_attribute, scope: As for
            :func:`~ek.agents.traces.episodes_from_spans`.
        success_attribute: The span attribute holding each run's verdict.
        check: A checker deciding success instead (``(episode, gold) -> bool`` or a registered
            name); it wins over ``success_attribute``.
        gold: ``{task_id: gold}`` for the checker (a task without an entry gets ``None``).
        prices: A ``{model: ModelPrice}`` catalogue to price the runs' costs with.

    Raises:
        RunLoadError: a malformed file (file and line named), no agent traces in it (the message
            says what was looked for), no run that could be read (the first reasons named), or
            no way to decide success.
    """
    p = os.fspath(path)
    try:
        skipped: list[TraceProblem] = []
        spans = list(
            read_spans(p, on_error=lambda e: skipped.append(TraceProblem.unreadable_line(e)))
        )
        reading = read_traces(
            spans,
            task_attribute=task_attribute,
            trial_attribute=trial_attribute,
            scope=scope,
            success_attribute=success_attribute,
        )
    except TraceFormatError as e:
        msg = str(e)
        raise RunLoadError(msg if msg.startswith(p) else f"{p}: {msg}") from None
    episodes = list(reading.episodes)
    problems = (*skipped, *reading.problems)
    if not episodes and problems:
        named = "; ".join(str(x) for x in problems[:5])
        raise RunLoadError(f"{p}: no run could be read: {named}")
    if not episodes:
        n_traces = len({s.trace_id for s in spans})
        raise RunLoadError(
            f"{p}: no agent traces: {len(spans)} span(s) in {n_traces} trace(s), none of them "
            f"{LOOKED_FOR}"
        )
    if check is not None:
        episodes = _judge(episodes, check, gold)
    elif success_attribute is None:
        raise RunLoadError(
            f"{p}: {len(episodes)} agent run(s) read, but traces hold no verdict of their own: name the span "
            "attribute that holds one (--success-attribute / success_attribute=) or pass a "
            "checker (check=)"
        )
    s = summary_from_episodes(episodes, source=p, prices=prices)
    return replace(
        s,
        unscored=_unscored(s.unscored, len(episodes), problems),
        notes=(*s.notes, *reading_notes(episodes, problems)),
    )


def _unscored(
    unscored: Unscored | None, n_read: int, problems: tuple[TraceProblem, ...]
) -> Unscored | None:
    """The summary's unscored samples, the runs that could not be read added."""
    if not problems:
        return unscored
    why = f"{len(problems)} run(s) or line(s) could not be read ({problems[0]})"
    if unscored is None:
        return Unscored(len(problems), n_read + len(problems), why)
    return Unscored(
        unscored.n + len(problems), unscored.of + len(problems), f"{unscored.reason}; {why}"
    )


def reading_notes(
    episodes: list[Episode], problems: tuple[TraceProblem, ...] = (), *, most: int = 10
) -> list[str]:
    """What a report should say about how a trace file was read: each run that could not be
    read (the first ``most``), and what the spans do not record, with how many runs.

    Example:
        >>> ep = Episode("t", metadata={"trace": {"not_recorded": {
        ...     "cached_tokens": "cached tokens not recorded: dollars are an upper bound"}}})
        >>> reading_notes([ep, ep])
        ['cached tokens not recorded (2 of 2 runs): dollars are an upper bound']
    """
    notes = [f"not read: {x}" for x in problems[:most]]
    if len(problems) > most:
        notes.append(f"not read: {len(problems) - most} more run(s)")
    counts: dict[str, tuple[int, str]] = {}
    for ep in episodes:
        trace = ep.metadata.get("trace")
        missing = trace.get("not_recorded") if isinstance(trace, Mapping) else None
        for key, text in (missing or {}).items():
            n, _ = counts.get(key, (0, text))
            counts[key] = (n + 1, text)
    for n, text in counts.values():
        what, _, why = text.partition(": ")
        notes.append(f"{what} ({n} of {len(episodes)} runs): {why}")
    return notes


def add_trace_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--task-attribute``, ``--trial-attribute``, ``--success-attribute`` and ``--scope``."""
    g = p.add_argument_group("trace files (OTLP JSON)")
    g.add_argument(
        "--task-attribute",
        metavar="ATTR",
        help="span attribute holding each trace's task id (default: each trace is its own task)",
    )
    g.add_argument(
        "--trial-attribute",
        metavar="ATTR",
        help="span attribute holding the trial number (default: by start time within a task)",
    )
    g.add_argument(
        "--success-attribute",
        metavar="ATTR",
        help="span attribute holding each run's verdict (a bool, 'pass'/'fail', 1/0)",
    )
    g.add_argument(
        "--scope",
        choices=SCOPES,
        default="top",
        help="score the top agent's own tool calls (top) or every call under it (all)",
    )
