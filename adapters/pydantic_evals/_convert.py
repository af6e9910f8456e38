"""pydantic-evals objects -> ek: span trees to :class:`~ek.agents.traces.Span` s, an
``EvaluatorContext`` to an :class:`~ek.agents.base.Episode` and its gold
:class:`~ek.agents.base.TaskSpec`.

The tool calls and the usage come from ``ctx.span_tree`` through ek's one span reader
(:func:`ek.agents.traces.episodes_from_spans`), so a pydantic-ai agent's calls mean the same
thing here as in a trace file. The output, the input and the duration come from the context
itself (``ctx.output`` is the task's real return value, not the trace's text of it).

The gold is read from ``Case.metadata`` (a mapping, or any object with these attributes) and
``Case.expected_output``:

==================  ===========================================================================
``gold_calls``      the expected tool calls, in any call shape ek reads
                    (:func:`ek.agents.toolcalls.normalize_calls`: ``{"name", "arguments"}``,
                    ``{"tool", "args"}``, BFCL ``{name: args}``, ...)
``gold``            the expected answer or goal state (else ``expected_output``)
``tools``           :class:`~ek.agents.base.ToolSpec` s or their dicts (the cost grammar)
``task_id``         the task (else the case name)
``slice``           a slice name
==================  ===========================================================================

With no ``gold_calls`` in the metadata, an ``expected_output`` that is a list of calls is the
gold calls (and ``metadata["gold"]``, if any, the expected answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from ek.agents.base import Cost, Episode, TaskSpec, ToolSpec, Trajectory
from ek.agents.bridge._duck import field_of
from ek.agents.toolcalls import CallShapeError, normalize_calls
from ek.agents.traces import Span, episodes_from_spans

__all__ = [
    "NO_AGENT_RUN",
    "NoAgentRunError",
    "episode_from_context",
    "gold_from_context",
    "spans_from_span_tree",
]

#: Why a span tree without an agent run is refused, and the fix.
NO_AGENT_RUN = (
    "ctx.span_tree holds no agent run (no tool call or model call was traced), so the run's "
    "calls and usage are unknown, not none: instrument the agent (Agent(..., "
    "capabilities=[Instrumentation()]) or Agent.instrument_all()), or pass use_spans=False "
    "for a metric that reads the output alone"
)


class NoAgentRunError(RuntimeError):
    """The span tree of a run holds no agent run: the agent was not instrumented.

    Scoring it would count every gold call as missed (a 0.0 fed to the aggregates); raised
    from an evaluator, pydantic-evals records it as the run's evaluator failure instead.
    """


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_STATUS = {"ok": "OK", "error": "ERROR", "unset": "UNSET"}


def _ns(t: datetime) -> int:
    """A datetime as integer ns since the epoch (exact: no float seconds in between)."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    d = t - _EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000_000 + d.microseconds * 1_000


def spans_from_span_tree(tree: Any) -> list[Span]:
    """The spans of a pydantic-evals ``SpanTree`` (or any iterable of its ``SpanNode`` s).

    A ``SpanNode`` has no events, status message or resource: they stay empty.

    Args:
        tree: ``ctx.span_tree``.

    Returns:
        One :class:`~ek.agents.traces.Span` per node, in the tree's order (by start time).
    """
    nodes: Iterable[Any] = tree
    return [
        Span(
            trace_id=n.trace_id,
            span_id=n.span_id,
            parent_id=n.parent_span_id,
            name=n.name,
            start_ns=_ns(n.start_timestamp),
            end_ns=_ns(n.end_timestamp),
            attributes=dict(n.attributes or {}),
            status=_STATUS.get(str(n.status).lower(), "UNSET"),
        )
        for n in nodes
    ]


def _merge(episodes: list[Episode]) -> tuple[Trajectory, tuple[Cost, ...], dict[str, Any]]:
    """The calls, costs and trace ids of the agent traces one task run produced, in order."""
    steps = [s for ep in episodes for s in ep.trajectory]
    costs = tuple(c for ep in episodes for c in ep.cost)
    meta: dict[str, Any] = {}
    if episodes:
        meta = dict(episodes[0].metadata)
        if len(episodes) > 1:
            meta["traces"] = [dict(ep.metadata) for ep in episodes]
    return Trajectory(steps), costs, meta


def _meta(ctx: Any, key: str) -> Any:
    md = getattr(ctx, "metadata", None)
    return None if md is None else field_of(md, key)


def _task_id(ctx: Any) -> str:
    tid = _meta(ctx, "task_id")
    if tid is not None:
        return str(tid)
    return str(getattr(ctx, "name", None) or "case")


def episode_from_context(ctx: Any, *, scope: str = "top", use_spans: bool = True) -> Episode:
    """The :class:`~ek.agents.base.Episode` of one pydantic-evals task run.

    Args:
        ctx: The ``EvaluatorContext``.
        scope: Whose tool calls count: ``"top"`` (the top agent's own) or ``"all"`` (every
            agent's, sub-agents included); see :func:`ek.agents.traces.episodes_from_spans`.
        use_spans: Read the tool calls and usage from ``ctx.span_tree``. ``False``: an episode
            of the output alone (for metrics that need no calls).

    Returns:
        The episode: ``task_id`` (``metadata["task_id"]``, else the case name), the calls and
        costs of every agent trace of the run in order, ``output`` = ``ctx.output``, ``input`` =
        ``ctx.inputs``, ``duration`` = ``ctx.duration``, and the trace and span ids in
        ``metadata["trace"]``.

    Raises:
        NoAgentRunError: ``use_spans`` and the span tree holds no agent run (the agent is not
            instrumented); the message (:data:`NO_AGENT_RUN`) says how to fix it.
        RuntimeError: ``use_spans`` and pydantic-evals recorded no span tree (no OpenTelemetry
            SDK tracer provider was set); the message says how to set one.
    """
    task_id = _task_id(ctx)
    traj: Trajectory = Trajectory()
    costs: tuple[Cost, ...] = ()
    meta: dict[str, Any] = {}
    if use_spans:
        try:
            tree = ctx.span_tree
        except Exception as e:  # pydantic-evals' SpanTreeRecordingError: say how to fix it
            raise RuntimeError(
                "EkEvaluator reads the tool calls and usage from ctx.span_tree, but pydantic-evals "
                f"recorded none ({e}). Set an OpenTelemetry SDK tracer provider before "
                "Dataset.evaluate (opentelemetry.trace.set_tracer_provider(TracerProvider()) or "
                "logfire.configure()) and instrument the agent (Agent(..., "
                "capabilities=[Instrumentation()]) or Agent.instrument_all()); or pass "
                "use_spans=False for a metric that needs no tool calls"
            ) from e
        episodes = episodes_from_spans(spans_from_span_tree(tree), scope=scope)
        if not episodes:
            raise NoAgentRunError(f"case {task_id!r}: {NO_AGENT_RUN}")
        traj, costs, meta = _merge(episodes)
    return Episode(
        task_id,
        trajectory=traj,
        output=ctx.output,
        cost=costs,
        input=ctx.inputs,
        duration=max(float(ctx.duration), 0.0),
        metadata=meta,
    )


def _call_list(value: Any) -> list[Any] | None:
    """``value`` as gold calls when it is a non-empty list of well-formed calls, else None."""
    if not isinstance(value, (list, tuple)) or not value:
        return None
    if not all(isinstance(c, Mapping) for c in value):
        return None
    try:
        return list(normalize_calls(value, strict=True))
    except CallShapeError:
        return None


def _tools(value: Any) -> tuple[ToolSpec, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(
            f"Case.metadata['tools'] must be a list of ToolSpec or ToolSpec dicts, got "
            f"{type(value).__name__}: {value!r:.100}"
        )
    return tuple(t if isinstance(t, ToolSpec) else ToolSpec.from_dict(t) for t in value)


def gold_from_context(ctx: Any) -> TaskSpec:
    """The gold of one case as a :class:`~ek.agents.base.TaskSpec` (every ek metric takes one).

    Args:
        ctx: The ``EvaluatorContext`` (or anything with ``name``, ``inputs``, ``metadata`` and
            ``expected_output``).

    Raises:
        CallShapeError: ``metadata["gold_calls"]`` is not a list of calls (the message names
            the bad call).
        TypeError, ValueError: ``metadata["tools"]`` is not a list of tool specs.
    """
    expected = getattr(ctx, "expected_output", None)
    raw_calls = _meta(ctx, "gold_calls")
    gold = _meta(ctx, "gold")
    calls: list[Any] | None
    if raw_calls is not None:
        calls = list(normalize_calls(raw_calls, strict=True))
        if gold is None:
            gold = expected
    else:
        calls = _call_list(expected)
        if calls is None and gold is None:
            gold = expected
    slice_ = _meta(ctx, "slice")
    return TaskSpec(
        _task_id(ctx),
        input=getattr(ctx, "inputs", None),
        gold=gold,
        tools=_tools(_meta(ctx, "tools")),
        gold_calls=None if calls is None else Trajectory(calls),
        slice=None if slice_ is None else str(slice_),
    )
