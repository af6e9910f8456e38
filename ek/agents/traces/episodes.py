"""Spans -> Episodes: grouping into traces, one Episode per agent run, tasks and trials.

**Which spans make an episode.** Spans are grouped by trace id. In each trace, every *top agent
span* (an agent span with no agent above it: GenAI ``invoke_agent``, OpenInference ``AGENT``)
is one episode: its own run, everything under it included. A trace with no agent span but with
model calls or tool executions (e.g. an instrumented OpenAI client on its own) is one episode of
the whole trace. A trace with neither is not an agent trace and gives no episode.

**Tool calls** (the trajectory): the tool-execution spans (``execute_tool``, ``TOOL``) ordered by
start time, each with its name, arguments exactly as recorded (a JSON string or an object;
unparseable JSON becomes a malformed call that the tool-call metric scores as wrong, with the
reason), result, error (span status ``ERROR``) and call id. An agent that recorded no tool span
contributes the calls its model spans *asked for* (``gen_ai.output.messages`` tool-call parts,
OpenInference ``llm.output_messages.*.tool_calls``), without results. ``scope="top"`` keeps the
top agent's own calls (a sub-agent's calls are left out; the call that started the sub-agent,
when it is a tool, stays); ``scope="all"`` keeps every call under the top agent. The structure
(which agent made each call, how deep, the sub-agents) is in ``episode.metadata["trace"]``:
``steps`` (one entry per trajectory step: ``span_id``, ``agent``, ``agent_span_id``, ``depth``,
``requested``) and ``agents``.

**Cost**: every model-call span under the top agent (sub-agents included, whatever the scope:
Cost-of-Pass counts the whole run's spend), summed per model in ek's token kinds (see
:class:`~ek.agents.traces.records.Usage`). When no model-call span reports usage, the agent
span's own (aggregated) usage is used. A span that reports only a total is never split: the
episode then records **no** agent cost (its dollars are unknown, not under-counted), and
``metadata["trace"]["usage_unsplit"]`` lists those spans and ``usage_split`` the costs that were
readable.

**Tasks and trials.** ``task_attribute`` names a span attribute holding the task id, looked up
on the top agent span, then its ancestors, then the resource; without it every trace's episode
is its own task (the trace id; ``trace_id:span_id`` when a trace holds several runs).
``trial_attribute`` names the trial number the same way; without it trials are numbered by
start time within each task (0, 1, ...), so k traces of one task feed pass^k.
``success_attribute`` names a verdict attribute (a bool, ``"true"``/``"false"``,
``"pass"``/``"fail"``, 1/0); without it ``success`` is ``None`` (no verdict: decide it with a
checker, see :func:`~ek.agents.traces.summary_from_traces`).

Example:
    >>> from ek.agents.traces.span import Span
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
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ek._validate import thaw
from ek.agents.episode import Cost, Episode, RunProvenance, Step, Trajectory
from ek.agents.toolcalls import normalize_call

from . import convention as conv
from .otlp import read_spans
from .records import CallRecord
from .span import Span, TraceFormatError

__all__ = ["SCOPES", "episodes_from_spans", "read_trace_episodes"]

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


# ----------------------------------------------------------------------------- the trace tree


@dataclass
class _Trace:
    trace_id: str
    spans: list[Span]
    by_id: dict[str, Span] = field(default_factory=dict)
    children: dict[str, list[Span]] = field(default_factory=dict)
    roots: list[Span] = field(default_factory=list)
    roles: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        order = {id(s): i for i, s in enumerate(self.spans)}
        for s in self.spans:
            self.by_id.setdefault(s.span_id, s)
            self.roles[s.span_id] = conv.role(s)
        for s in self.by_id.values():
            if s.parent_id is not None and s.parent_id in self.by_id and s.parent_id != s.span_id:
                self.children.setdefault(s.parent_id, []).append(s)
            elif s.parent_id is None or s.parent_id not in self.by_id:
                self.roots.append(s)  # a root, or an orphan whose parent was not exported

        def key(s: Span) -> tuple[int, int]:
            return (s.start_ns, order[id(s)])

        for kids in self.children.values():
            kids.sort(key=key)
        self.roots.sort(key=key)
        # Untrusted parent ids may form a cycle (or a span may name itself): such spans are
        # reachable from no root. The earliest span of each such group becomes a root.
        reached = {s.span_id for s, _, _ in self.walk(self.roots)}
        for s in sorted(self.by_id.values(), key=key):
            if s.span_id not in reached:
                self.roots.append(s)
                reached.update(x.span_id for x, _, _ in self.walk([s]))

    def ancestors(self, span: Span) -> Iterator[Span]:
        seen = {span.span_id}
        cur = span
        while cur.parent_id is not None and cur.parent_id in self.by_id:
            cur = self.by_id[cur.parent_id]
            if cur.span_id in seen:  # a cycle in untrusted parent ids
                return
            seen.add(cur.span_id)
            yield cur

    def walk(self, starts: list[Span]) -> Iterator[tuple[Span, Span | None, int]]:
        """``(span, nearest agent at or above it, agent depth)`` in depth-first start order."""
        stack: list[tuple[Span, Span | None, int]] = [(s, None, 0) for s in reversed(starts)]
        seen: set[str] = set()
        while stack:
            span, owner, depth = stack.pop()
            if span.span_id in seen:
                continue
            seen.add(span.span_id)
            if self.roles[span.span_id] == "agent":
                owner, depth = span, depth + 1
            yield span, owner, depth
            for kid in reversed(self.children.get(span.span_id, ())):
                stack.append((kid, owner, depth))

    def top_agents(self) -> list[Span]:
        return [s for s, owner, depth in self.walk(self.roots) if owner is s and depth == 1]

    def is_agent_trace(self) -> bool:
        return any(r in ("agent", "llm", "tool") for r in self.roles.values())


def _group(spans: Iterable[Span]) -> list[_Trace]:
    by_trace: dict[str, list[Span]] = {}
    for s in spans:
        by_trace.setdefault(s.trace_id, []).append(s)
    return [_Trace(t, ss) for t, ss in by_trace.items()]


# ----------------------------------------------------------------------------- one run


@dataclass
class _Run:
    """What one walk under an episode root collects."""

    root: Span | None
    tools: list[tuple[Span, Span | None, int]] = field(default_factory=list)
    llms: list[tuple[Span, Span | None, int]] = field(default_factory=list)
    agents: list[tuple[Span, Span | None, int]] = field(default_factory=list)


def _collect(tr: _Trace, root: Span | None) -> _Run:
    run = _Run(root)
    starts = [root] if root is not None else tr.roots
    parent_agent: dict[str, Span | None] = {}
    for span, owner, depth in tr.walk(starts):
        role = tr.roles[span.span_id]
        if role == "agent":
            run.agents.append((span, parent_agent.get(span.span_id), depth))
            for kid in tr.children.get(span.span_id, ()):
                parent_agent[kid.span_id] = span
            continue
        for kid in tr.children.get(span.span_id, ()):
            parent_agent[kid.span_id] = parent_agent.get(span.span_id)
        if role == "tool":
            run.tools.append((span, owner, depth))
        elif role == "llm":
            run.llms.append((span, owner, depth))
    return run


def _step(rec: CallRecord) -> Step:
    step = normalize_call({"name": rec.name, "arguments": thaw(rec.arguments)}, strict=False)
    error = step.error
    if rec.error is not None:
        error = rec.error if error is None else f"{error}; tool error: {rec.error}"
    return replace(step, observation=thaw(rec.result), error=error, id=rec.call_id)


def _owner_name(owner: Span | None) -> str | None:
    return None if owner is None else (conv.agent_name(owner) or owner.name)


def _steps(run: _Run, scope: str) -> tuple[list[Step], list[dict[str, Any]]]:
    def in_scope(owner: Span | None) -> bool:
        return scope == "all" or owner is run.root

    items: list[tuple[tuple[int, int, int], Step, dict[str, Any]]] = []
    with_tool_spans = {id(o) for _, o, _ in run.tools}
    for i, (span, owner, depth) in enumerate(run.tools):
        if in_scope(owner):
            info = _step_info(span, owner, depth, requested=False)
            items.append(((span.start_ns, 0, i), _step(conv.tool_call(span)), info))
    for i, (span, owner, depth) in enumerate(run.llms):
        if not in_scope(owner) or id(owner) in with_tool_spans:
            continue
        for j, rec in enumerate(conv.requested_calls(span)):
            info = _step_info(span, owner, depth, requested=True)
            items.append(((span.end_ns, i, j), _step(rec), info))
    items.sort(key=lambda x: x[0])
    return [s for _, s, _ in items], [m for _, _, m in items]


def _step_info(span: Span, owner: Span | None, depth: int, *, requested: bool) -> dict[str, Any]:
    return {
        "span_id": span.span_id,
        "agent": _owner_name(owner),
        "agent_span_id": None if owner is None else owner.span_id,
        "depth": depth,
        "requested": requested,
    }


def _costs(run: _Run) -> tuple[list[Cost], dict[str, Any]]:
    by_model: dict[str | None, Cost] = {}
    unsplit: list[dict[str, Any]] = []
    for span, _, _ in run.llms:
        u = conv.usage(span)
        if u.total_only:
            unsplit.append(
                {"span_id": span.span_id, "model": conv.model(span), "total_tokens": u.total}
            )
            continue
        c = u.to_cost(conv.model(span))
        if c is None:
            continue
        try:
            by_model[c.model] = by_model[c.model] + c if c.model in by_model else c
        except ValueError as e:  # a sum past 2**53 tokens or an infinite bill
            raise TraceFormatError(f"trace {span.trace_id}: usage out of range: {e}") from None
    if not by_model and not unsplit and run.root is not None:
        u = conv.agent_usage(run.root)
        c = u.to_cost(conv.model(run.root))
        if c is not None:
            by_model[c.model] = c
        elif u.total_only:
            unsplit.append(
                {
                    "span_id": run.root.span_id,
                    "model": conv.model(run.root),
                    "total_tokens": u.total,
                }
            )
    costs = list(by_model.values())
    if not unsplit:
        return costs, {}
    return [], {"usage_unsplit": unsplit, "usage_split": [c.to_dict() for c in costs]}


def _output(run: _Run, scope: str) -> Any:
    if run.root is not None:
        out = conv.agent_output(run.root)
        if out is not None:
            return thaw(out)
    llms = [s for s, o, _ in run.llms if scope == "all" or o is run.root]
    for span in sorted(llms, key=lambda s: s.end_ns, reverse=True):
        text = conv.output_text(span)
        if text is not None:
            return text
    return None


def _input(run: _Run) -> Any:
    if run.root is not None:
        v = conv.input_value(run.root)
        if v is not None:
            return thaw(v)
    first = min((s for s, _, _ in run.llms), key=lambda s: s.start_ns, default=None)
    return None if first is None else thaw(conv.input_value(first))


# ----------------------------------------------------------------------------- tasks, trials, verdicts


def _lookup(tr: _Trace, root: Span | None, attribute: str) -> Any:
    chain: list[Span] = []
    if root is not None:
        chain = [root, *tr.ancestors(root)]
    else:
        chain = list(tr.roots)
    for s in chain:
        if attribute in s.attributes:
            return s.attributes[attribute]
    for s in chain:
        if attribute in s.resource:
            return s.resource[attribute]
    return None


def _where(tr: _Trace, root: Span | None) -> str:
    if root is None:
        return f"trace {tr.trace_id}"
    return f"trace {tr.trace_id} (agent span {root.span_id} {root.name!r:.60})"


def _task_id(tr: _Trace, root: Span | None, attribute: str | None, several: bool) -> str:
    if attribute is None:
        return f"{tr.trace_id}:{root.span_id}" if several and root is not None else tr.trace_id
    v = _lookup(tr, root, attribute)
    if v is None:
        raise TraceFormatError(
            f"{_where(tr, root)}: no attribute {attribute!r} on the agent span, its ancestors "
            "or its resource (task_attribute names where each trace's task id is)"
        )
    if isinstance(v, bool) or not isinstance(v, (str, int)) or v == "":
        raise TraceFormatError(
            f"{_where(tr, root)}: task attribute {attribute!r} must be a non-empty str or an "
            f"int, got {v!r:.80}"
        )
    return str(v)


def _trial(tr: _Trace, root: Span | None, attribute: str) -> int:
    v = _lookup(tr, root, attribute)
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v.strip())
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise TraceFormatError(
            f"{_where(tr, root)}: trial attribute {attribute!r} must be an int >= 0, got {v!r:.80}"
        )
    return v


def _verdict(tr: _Trace, root: Span | None, attribute: str) -> bool | None:
    v = _lookup(tr, root, attribute)
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in _TRUE | _FALSE:
        return v.strip().lower() in _TRUE
    raise TraceFormatError(
        f"{_where(tr, root)}: verdict attribute {attribute!r} must be a bool, 'true'/'false', "
        f"'pass'/'fail' or 1/0, got {v!r:.80}"
    )


# ----------------------------------------------------------------------------- assembling


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


def _episode(tr: _Trace, root: Span | None, several: bool, opt: _Options) -> tuple[Episode, int]:
    run = _collect(tr, root)
    steps, info = _steps(run, opt.scope)
    costs, usage_meta = _costs(run)
    meta: dict[str, Any] = {
        "trace_id": tr.trace_id,
        "span_id": None if root is None else root.span_id,
        "agent": _owner_name(root),
        "scope": opt.scope,
        "steps": info,
        "agents": [
            {
                "span_id": a.span_id,
                "name": _owner_name(a),
                "parent_agent_span_id": None if p is None else p.span_id,
                "depth": d,
            }
            for a, p, d in run.agents
        ],
        **usage_meta,
    }
    conversation = None if root is None else root.attributes.get("gen_ai.conversation.id")
    if isinstance(conversation, str):
        meta["conversation_id"] = conversation
    spans = [root] if root is not None else tr.roots
    start = min(s.start_ns for s in spans)
    end = max(s.end_ns for s in spans)
    models = {c.model for c in costs if c.model} or {conv.model(s) for s, _, _ in run.llms} - {None}
    ep = Episode(
        task_id=_task_id(tr, root, opt.task_attribute, several),
        trajectory=Trajectory(steps),
        output=_output(run, opt.scope),
        cost=tuple(costs),
        success=None
        if opt.success_attribute is None
        else _verdict(tr, root, opt.success_attribute),
        run=RunProvenance(
            agent=_owner_name(root), model=next(iter(models)) if len(models) == 1 else None
        ),
        trial=0 if opt.trial_attribute is None else _trial(tr, root, opt.trial_attribute),
        input=_input(run),
        error=None if root is None else root.error_message(),
        duration=(end - start) / 1e9,
        metadata={"trace": meta},
    )
    return ep, start


def _number_trials(made: list[tuple[Episode, int]], explicit: bool) -> list[Episode]:
    by_task: dict[str, list[tuple[Episode, int]]] = {}
    for ep, start in made:
        by_task.setdefault(ep.task_id, []).append((ep, start))
    out: list[Episode] = []
    for task, group in by_task.items():
        group.sort(key=lambda x: (x[0].trial, x[1]) if explicit else x[1])
        if explicit:
            seen: dict[int, str] = {}
            for ep, _ in group:
                tid = ep.metadata["trace"]["trace_id"]
                if ep.trial in seen:
                    raise TraceFormatError(
                        f"task {task!r:.80} trial {ep.trial} appears twice (traces {seen[ep.trial]} "
                        f"and {tid}); trial_attribute must number each task's trials apart"
                    )
                seen[ep.trial] = tid
            out.extend(ep for ep, _ in group)
        else:
            out.extend(ep.replace(trial=i) for i, (ep, _) in enumerate(group))
    return out


def episodes_from_spans(
    spans: Iterable[Any] | str | os.PathLike[str],
    *,
    task_attribute: str | None = None,
    trial_attribute: str | None = None,
    scope: str = "top",
    success_attribute: str | None = None,
) -> list[Episode]:
    """One :class:`~ek.agents.episode.Episode` per agent run in ``spans`` (see the module docstring).

    Args:
        spans: :class:`~ek.agents.traces.Span` objects, OTLP documents or ``to_json()`` span
            dicts (anything :func:`~ek.agents.traces.read_spans` reads, a path included).
        task_attribute: The span attribute holding each run's task id (looked up on the top
            agent span, its ancestors, then the resource); ``None``: each trace is its own task.
        trial_attribute: The attribute holding the trial number; ``None``: trials are numbered
            by start time within each task.
        scope: ``"top"`` (the top agent's own tool calls) or ``"all"`` (every call under it).
        success_attribute: The attribute holding a verdict; ``None``: ``success`` stays ``None``.

    Returns:
        The episodes, grouped by task (in order of first start) and ordered by trial.

    Raises:
        TraceFormatError: a malformed span, a missing or unreadable task / trial / verdict
            attribute, or the same (task, trial) twice; the message names the trace.
        TypeError, ValueError: a bad option.
    """
    opt = _check_options(
        task_attribute=task_attribute,
        trial_attribute=trial_attribute,
        success_attribute=success_attribute,
        scope=scope,
    )
    made: list[tuple[Episode, int]] = []
    for tr in _group(read_spans(spans)):
        if not tr.is_agent_trace():
            continue
        tops = tr.top_agents()
        roots: list[Span | None] = list(tops) if tops else [None]
        for root in roots:
            made.append(_episode(tr, root, len(roots) > 1, opt))
    made.sort(key=lambda x: x[1])
    return _number_trials(made, trial_attribute is not None)


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
