"""Spans -> Episodes: grouping into traces, one Episode per agent run, tasks and trials.

**Which spans make an episode.** Spans are grouped by trace id (:mod:`~ek.agents.traces._tree`,
which also repairs parents that cannot be right). In each trace, every run
(:mod:`~ek.agents.traces._runs`: the top-most span marked as an agent; the agent is the span that
owns the model calls, a wrapper above it is not) is one episode. A trace with no agent span but
with model calls or tool executions (an instrumented OpenAI client on its own) is one episode
of the whole trace. A trace with neither is not an agent trace and gives no episode.

**Calls, cost, output** (:mod:`~ek.agents.traces._assemble`): a call the model requested and the
span that executed it are one call; ``scope="top"`` keeps the calls of the run's agent (a
sub-agent's are left out, the call that started it stays), ``scope="all"`` every call; the cost
is every model call of the run; the output is the final answer. The structure is in
``episode.metadata["trace"]``: ``steps`` (one entry per trajectory step: ``span_id``,
``agent``, ``agent_span_id``, ``depth``, ``requested``), ``agents`` (``span_id``, ``name``,
``parent_agent_span_id``, ``depth``, ``kind``: ``"agent"``, ``"sub_agent"`` or
``"handoff"``, ``started_by``: the call that started it), ``not_recorded`` (what the spans do
not hold, and what that means).

**Tasks and trials.** ``task_attribute`` names a span attribute holding the task id, looked up
on the run's root span, then its ancestors, then the resource; without it every trace's episode
is its own task (the trace id; ``trace_id:span_id`` when a trace holds several runs).
``trial_attribute`` names the trial number the same way; without it trials are numbered by
start time within each task (0, 1, ...), so k traces of one task feed pass^k.
``success_attribute`` names a verdict attribute (a bool, ``"true"``/``"false"``,
``"pass"``/``"fail"``, 1/0); without it ``success`` is ``None`` (no verdict: decide it with a
checker, see :func:`~ek.agents.traces.summary_from_traces`).

**One odd trace never costs the file.** A run that cannot be read (no task attribute, an
unreadable trial or verdict, usage out of range, a (task, trial) already read from another
trace) is left out and reported with its reason: :func:`read_traces` returns the episodes and
these :class:`TraceProblem` s; :func:`episodes_from_spans` warns (:class:`TraceWarning`) and
raises only when no run at all could be read.

Example:
    >>> from ek.agents.traces import Span
    >>> t = "0af7651916cd43dd8448eb211c80319c"
    >>> spans = [
    ...     Span(t, "a1", None, "invoke_agent bot", 0, 100,
    ...          {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot",
    ...           "final_result": "done", "ek.task_id": "refund-1"}),
    ...     Span(t, "c1", "a1", "chat m", 1, 10, {"gen_ai.operation.name": "chat",
    ...          "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 50,
    ...          "gen_ai.usage.output_tokens": 5}),
    ...     Span(t, "b1", "a1", "execute_tool lookup", 11, 20, {"gen_ai.operation.name": "execute_tool",
    ...          "gen_ai.tool.name": "lookup", "gen_ai.tool.call.arguments": '{"id": "A1"}',
    ...          "gen_ai.tool.call.result": '{"status": "paid"}'}),
    ... ]
    >>> [ep] = episodes_from_spans(spans, task_attribute="ek.task_id")
    >>> ep.task_id, ep.trial, ep.output, ep.trajectory[0].args, ep.trajectory[0].observation
    ('refund-1', 0, 'done', {'id': 'A1'}, {'status': 'paid'})
    >>> ep.agent_cost.input_tokens, ep.agent_cost.model
    (50, 'm')
    >>> sorted(ep.metadata["trace"]["not_recorded"])
    ['cached_tokens', 'call_ids', 'reasoning_tokens']
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ek.agents._episode import Episode, RunProvenance, Trajectory

from . import _convention as conv
from ._assemble import (
    RunCalls,
    answer_calls,
    calls_missing,
    not_recorded,
    run_calls,
    run_costs,
    run_input,
    run_output,
    steps,
    structure_missing,
    sub_agent_results,
)
from ._otlp import read_spans
from ._runs import Run, find_runs
from ._span import TraceFormatError
from ._tree import TraceTree, group_traces

__all__ = [
    "SCOPES",
    "TraceProblem",
    "TraceReading",
    "TraceWarning",
    "episodes_from_spans",
    "read_trace_episodes",
    "read_traces",
]

#: Whose tool calls are scored: the top agent's own, or every call under it.
SCOPES = ("top", "all")

#: What the reader looks for, for messages that say so.
LOOKED_FOR = (
    "agent spans (gen_ai.operation.name = invoke_agent, or openinference.span.kind = AGENT), "
    "model calls (gen_ai.operation.name = chat / text_completion / generate_content, or "
    "openinference.span.kind = LLM) or tool executions (gen_ai.operation.name = execute_tool, "
    "or openinference.span.kind = TOOL)"
)

_TRUE = frozenset({"true", "pass", "passed", "success", "succeeded", "yes", "1"})
_FALSE = frozenset({"false", "fail", "failed", "failure", "no", "0"})


class TraceWarning(UserWarning):
    """Some runs of a trace file could not be read (each is named, with its reason)."""


@dataclass(frozen=True)
class TraceProblem:
    """A run that could not be read: its trace, its root span (if any) and why.

    Example:
        >>> str(TraceProblem("4bf9", "00f0", "no attribute 'ek.task_id'"))
        "trace 4bf9 (span 00f0): no attribute 'ek.task_id'"
    """

    trace_id: str | None  # None: a line of the file that could not be read at all
    span_id: str | None
    reason: str

    @classmethod
    def unreadable_line(cls, error: TraceFormatError) -> TraceProblem:
        """A line of a trace file that was skipped (the error names the file and line)."""
        return cls(None, None, f"skipped: {error}")

    def __str__(self) -> str:
        if self.trace_id is None:
            return self.reason
        where = f"trace {self.trace_id}"
        if self.span_id is not None:
            where += f" (span {self.span_id})"
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class TraceReading:
    """What :func:`read_traces` read: the episodes, and the runs it could not read."""

    episodes: tuple[Episode, ...]
    problems: tuple[TraceProblem, ...] = ()


# ----------------------------------------------------------------------------- tasks, trials


def _lookup(tr: TraceTree, run: Run, attribute: str) -> Any:
    spans = [run.root] if run.root is not None else tr.roots
    for s in spans:
        v = tr.lookup(s, attribute)
        if v is not None:
            return v
    return None


def _task_id(tr: TraceTree, run: Run, attribute: str | None, several: bool) -> str:
    if attribute is None:
        root = run.root
        return f"{tr.trace_id}:{root.span_id}" if several and root is not None else tr.trace_id
    v = _lookup(tr, run, attribute)
    if v is None:
        raise TraceFormatError(
            f"no attribute {attribute!r} on the run's span, its ancestors or its resource "
            "(task_attribute names where each trace's task id is)"
        )
    if isinstance(v, bool) or not isinstance(v, (str, int)) or v == "":
        raise TraceFormatError(
            f"task attribute {attribute!r} must be a non-empty str or an int, got {v!r:.80}"
        )
    return str(v)


def _trial(tr: TraceTree, run: Run, attribute: str) -> int:
    v = _lookup(tr, run, attribute)
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v.strip())
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise TraceFormatError(f"trial attribute {attribute!r} must be an int >= 0, got {v!r:.80}")
    return v


def _verdict(tr: TraceTree, run: Run, attribute: str) -> bool | None:
    v = _lookup(tr, run, attribute)
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in _TRUE | _FALSE:
        return v.strip().lower() in _TRUE
    raise TraceFormatError(
        f"verdict attribute {attribute!r} must be a bool, 'true'/'false', 'pass'/'fail' or 1/0, "
        f"got {v!r:.80}"
    )


# ----------------------------------------------------------------------------- one run


@dataclass(frozen=True)
class _Options:
    task_attribute: str | None
    trial_attribute: str | None
    success_attribute: str | None
    scope: str


def _check_options(**kw: Any) -> _Options:
    for name in ("task_attribute", "trial_attribute", "success_attribute"):
        v = kw[name]
        if v is not None and (not isinstance(v, str) or not v):
            raise TypeError(f"{name} must be a non-empty str or None, got {v!r:.80}")
    if kw["scope"] not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {kw['scope']!r:.80}")
    return _Options(**kw)


def _agents_meta(run: Run, calls: RunCalls) -> list[dict[str, Any]]:
    out = []
    for a in run.agents:
        i = calls.started_by(a)
        call = None if i is None else calls.items[i][0]
        out.append(
            {
                "span_id": a.span.span_id,
                "name": a.name,
                "parent_agent_span_id": None if a.parent is None else a.parent.span.span_id,
                "depth": a.depth,
                "kind": a.kind,
                "started_by": None
                if call is None
                else {
                    "name": call.record.name,
                    "call_id": call.record.call_id,
                    "span_id": call.span.span_id,
                },
            }
        )
    return out


def _metadata(tr: TraceTree, run: Run, scope: str) -> tuple[dict[str, Any], Any, Any]:
    """(metadata["trace"], steps, costs) of one run."""
    calls = run_calls(run)
    sub_agent_results(tr, run, calls)
    answers = answer_calls(run, calls)
    step_list, info = steps(calls, scope, answers)
    costs, usage_meta, usage_missing = run_costs(run)
    output = run_output(run)
    missing = {**calls_missing(calls), **structure_missing(tr, run), **usage_missing}
    if output is None:
        missing.update(not_recorded(["output"]))
    root = run.root
    meta: dict[str, Any] = {
        "trace_id": tr.trace_id,
        "span_id": None if root is None else root.span_id,
        "agent": None if run.agent is None else run.agent.name,
        "scope": scope,
        "steps": info,
        "agents": _agents_meta(run, calls),
        "not_recorded": missing,
        **usage_meta,
    }
    if answers:
        meta["answer_calls"] = [
            {"name": calls.items[i][0].record.name, "span_id": calls.items[i][0].span.span_id}
            for i in sorted(answers)
        ]
    if tr.repaired:
        meta["parents_repaired"] = [
            {"span_id": s, "recorded_parent": p, "parent": n, "why": w}
            for s, p, n, w in tr.repaired
        ]
    conversation = None if root is None else root.attributes.get("gen_ai.conversation.id")
    if isinstance(conversation, str):
        meta["conversation_id"] = conversation
    return meta, (step_list, output), costs


def _episode(tr: TraceTree, run: Run, several: bool, opt: _Options) -> tuple[Episode, int]:
    meta, (step_list, output), costs = _metadata(tr, run, opt.scope)
    spans = [run.root] if run.root is not None else tr.roots
    start = min(s.start_ns for s in spans)
    end = max(s.end_ns for s in spans)
    models = {c.model for c in costs if c.model} or {conv.model(s) for s in run.llms} - {None}
    error = None if run.root is None else run.root.error_message()
    ep = Episode(
        task_id=_task_id(tr, run, opt.task_attribute, several),
        trajectory=Trajectory(step_list),
        output=output,
        cost=tuple(costs),
        success=None if opt.success_attribute is None else _verdict(tr, run, opt.success_attribute),
        run=RunProvenance(
            agent=meta["agent"], model=next(iter(models)) if len(models) == 1 else None
        ),
        trial=0 if opt.trial_attribute is None else _trial(tr, run, opt.trial_attribute),
        input=run_input(run),
        error=error,
        duration=(end - start) / 1e9,
        metadata={"trace": meta},
    )
    return ep, start


def _number_trials(
    made: list[tuple[Episode, int]], explicit: bool
) -> tuple[list[Episode], list[TraceProblem]]:
    by_task: dict[str, list[tuple[Episode, int]]] = {}
    for ep, start in made:
        by_task.setdefault(ep.task_id, []).append((ep, start))
    out: list[Episode] = []
    problems: list[TraceProblem] = []
    for task, group in by_task.items():
        group.sort(key=lambda x: (x[0].trial, x[1]) if explicit else x[1])
        if not explicit:
            out.extend(ep.replace(trial=i) for i, (ep, _) in enumerate(group))
            continue
        seen: dict[int, str] = {}
        for ep, _ in group:
            where = ep.metadata["trace"]
            if ep.trial in seen:
                problems.append(
                    TraceProblem(
                        where["trace_id"],
                        where["span_id"],
                        f"task {task!r:.80} trial {ep.trial} was already read from trace "
                        f"{seen[ep.trial]}: left out (trial_attribute must number each task's "
                        "trials apart)",
                    )
                )
                continue
            seen[ep.trial] = where["trace_id"]
            out.append(ep)
    return out, problems


def read_traces(
    spans: Iterable[Any] | str | os.PathLike[str],
    *,
    task_attribute: str | None = None,
    trial_attribute: str | None = None,
    scope: str = "top",
    success_attribute: str | None = None,
) -> TraceReading:
    """Every run in ``spans`` as an Episode, and the runs that could not be read, with why.

    Arguments as for :func:`episodes_from_spans`.

    Example:
        >>> from ek.agents.traces import Span
        >>> spans = [Span("01", "a", None, "invoke_agent", 0, 1,
        ...               {"gen_ai.operation.name": "invoke_agent", "t": "x"}),
        ...          Span("02", "a", None, "invoke_agent", 2, 3,
        ...               {"gen_ai.operation.name": "invoke_agent"})]
        >>> r = read_traces(spans, task_attribute="t")
        >>> [e.task_id for e in r.episodes], [p.reason[:16] for p in r.problems]
        (['x'], ["no attribute 't'"])
    """
    opt = _check_options(
        task_attribute=task_attribute,
        trial_attribute=trial_attribute,
        success_attribute=success_attribute,
        scope=scope,
    )
    made: list[tuple[Episode, int]] = []
    problems: list[TraceProblem] = []

    def skipped(e: TraceFormatError) -> None:  # one bad line never costs the file
        problems.append(TraceProblem.unreadable_line(e))

    for tr in group_traces(read_spans(spans, on_error=skipped)):
        runs = find_runs(tr, opt.task_attribute, opt.trial_attribute)
        for run in runs:
            try:
                made.append(_episode(tr, run, len(runs) > 1, opt))
            except (TraceFormatError, ValueError) as e:  # this run only: the rest is read
                span_id = None if run.root is None else run.root.span_id
                problems.append(TraceProblem(tr.trace_id, span_id, str(e)))
    made.sort(key=lambda x: x[1])
    episodes, dup = _number_trials(made, trial_attribute is not None)
    return TraceReading(tuple(episodes), tuple(problems + dup))


def episodes_from_spans(
    spans: Iterable[Any] | str | os.PathLike[str],
    *,
    task_attribute: str | None = None,
    trial_attribute: str | None = None,
    scope: str = "top",
    success_attribute: str | None = None,
) -> list[Episode]:
    """One :class:`~ek.agents.base.Episode` per agent run in ``spans`` (see the module docstring).

    Args:
        spans: :class:`~ek.agents.traces.Span` objects, OTLP documents or ``to_json()`` span
            dicts (anything :func:`~ek.agents.traces.read_spans` reads, a path included).
        task_attribute: The span attribute holding each run's task id (looked up on the run's
            span, its ancestors, then the resource); ``None``: each trace is its own task.
        trial_attribute: The attribute holding the trial number; ``None``: trials are numbered
            by start time within each task.
        scope: ``"top"`` (the run's agent's tool calls) or ``"all"`` (every call in the run).
        success_attribute: The attribute holding a verdict; ``None``: ``success`` stays ``None``.

    Returns:
        The episodes, grouped by task (in order of first start) and ordered by trial. Runs that
        could not be read are left out with a :class:`TraceWarning` naming each and why
        (:func:`read_traces` returns them instead).

    Raises:
        TraceFormatError: a malformed file or span, or no run could be read at all (the message
            names the first traces and why).
        TypeError, ValueError: a bad option.
    """
    reading = read_traces(
        spans,
        task_attribute=task_attribute,
        trial_attribute=trial_attribute,
        scope=scope,
        success_attribute=success_attribute,
    )
    if reading.problems:
        named = "; ".join(str(p) for p in reading.problems[:5])
        more = len(reading.problems) - 5
        text = named + (f"; and {more} more" if more > 0 else "")
        if not reading.episodes:
            raise TraceFormatError(f"no run could be read: {text}")
        warnings.warn(
            f"{len(reading.problems)} run(s) left out: {text}", TraceWarning, stacklevel=2
        )
    return list(reading.episodes)


def read_trace_episodes(
    path: str | os.PathLike[str],
    *,
    task_attribute: str | None = None,
    trial_attribute: str | None = None,
    scope: str = "top",
    success_attribute: str | None = None,
) -> list[Episode]:
    """:func:`episodes_from_spans` of a trace file (OTLP JSON lines or one document).

    Example:
        >>> import os, tempfile
        >>> from ek.agents.traces import Span, write_otlp_json
        >>> p = os.path.join(tempfile.mkdtemp(), "traces.jsonl")
        >>> _ = write_otlp_json(p, [Span("01", "02", None, "execute_tool f", 0, 1,
        ...     {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f"})])
        >>> [ep.trajectory.tools for ep in read_trace_episodes(p)]
        [('f',)]
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"read_trace_episodes needs a path, got {type(path).__name__}")
    return episodes_from_spans(
        path,
        task_attribute=task_attribute,
        trial_attribute=trial_attribute,
        scope=scope,
        success_attribute=success_attribute,
    )
