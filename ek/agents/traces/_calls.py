"""The calls of a run: a call the model asked for and the span that executed it are one call.

Each agent's calls come from two places: its model-call spans' output messages (the calls the
model **requested**) and its tool spans (the calls that were **executed**). They are merged, per
agent, so that no call is counted twice:

1. by call id, when both record it;
2. else by order: an executed call takes the earliest unmerged call of the same name that the
   agent's model asked for before it ran; a handoff span (which records no tool name) takes the
   earliest unmerged call asked for before it.

A merged call takes its name, result, error and id from the execution, falling back to the
request for what the execution does not record (the name of a handoff, the id, and the
arguments when the execution records them in no object form: LangChain's single-argument
tools record the bare value). A call with no result takes the one the model was told (a tool
message with its id in a later model call's input). A call asked for and never executed is kept,
marked ``requested``; an execution no request explains is kept as it is.

Example:
    >>> from ek.agents.traces._records import CallRecord
    >>> from ek.agents.traces import Span
    >>> ask = Span("1", "c1", None, "chat", 0, 1)
    >>> run = Span("1", "b1", None, "lookup", 2, 3)
    >>> [c] = merge([(ask, CallRecord.asked("lookup", '{"id": "A1"}', "c1"))],
    ...             [(run, CallRecord("lookup", "A1"))], {})
    >>> c.record.name, c.record.arguments, c.record.call_id, c.requested
    ('lookup', '{"id": "A1"}', 'c1', False)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ._records import CallRecord
from ._span import Span

__all__ = ["Call", "merge"]


@dataclass(frozen=True)
class Call:
    """One call of a run: the merged record, the span that executed it (else the model-call
    span that asked for it), and whether it was only asked for."""

    record: CallRecord
    span: Span
    requested: bool
    order: tuple[int, int, int]


def _has_object(args: Any) -> bool:
    """True when arguments are recorded as an object (a mapping or JSON object text)."""
    return isinstance(args, Mapping) or (isinstance(args, str) and args.lstrip()[:1] == "{")


def _joined(done: CallRecord, asked: CallRecord | None, seen: Mapping[str, Any]) -> CallRecord:
    """An executed call completed from its request and the results the model was told."""
    rec = done
    if asked is not None:
        rec = replace(
            rec,
            name=rec.name if rec.name is not None else asked.name,
            call_id=rec.call_id or asked.call_id,
            arguments=rec.arguments if _has_object(rec.arguments) else asked.arguments,
        )
    if rec.result is None and rec.error is None and rec.call_id is not None:
        rec = replace(rec, result=seen.get(rec.call_id))
    return rec


def _pairs_by_id(
    asked: list[tuple[Span, CallRecord]], done: list[tuple[Span, CallRecord]]
) -> dict[int, int]:
    """``executed index -> requested index`` of the calls whose ids agree."""
    by_id = {rec.call_id: i for i, (_, rec) in enumerate(asked) if rec.call_id is not None}
    pair: dict[int, int] = {}
    for k, (_, rec) in enumerate(done):
        i = None if rec.call_id is None else by_id.pop(rec.call_id, None)
        if i is not None:
            pair[k] = i
    return pair


def _pairs_by_order(
    asked: list[tuple[Span, CallRecord]],
    done: list[tuple[Span, CallRecord]],
    pair: dict[int, int],
) -> None:
    """Add to ``pair`` each unpaired execution's earliest unpaired request of its name (any
    name for a handoff span, which records none) made before it ran."""
    taken = set(pair.values())
    by_name: dict[str, deque[int]] = {}
    anyone: deque[int] = deque()
    for i, (_, req) in enumerate(asked):
        if i not in taken:
            anyone.append(i)
            if isinstance(req.name, str):
                by_name.setdefault(req.name, deque()).append(i)
    for k, (span, rec) in enumerate(done):
        if k in pair:
            continue
        queue = anyone if rec.name is None else by_name.get(str(rec.name))
        while queue and queue[0] in taken:
            queue.popleft()
        if queue and asked[queue[0]][0].start_ns <= span.start_ns:
            pair[k] = queue.popleft()
            taken.add(pair[k])


def merge(
    asked: list[tuple[Span, CallRecord]],
    done: list[tuple[Span, CallRecord]],
    seen: Mapping[str, Any],
) -> list[Call]:
    """One agent's calls: ``asked`` (model-call span, request) in the order the model asked,
    ``done`` (tool span, record) in start order, ``seen`` the results the model was told by
    call id; merged as the module docstring says, in the order they happened.
    """
    pair = _pairs_by_id(asked, done)
    _pairs_by_order(asked, done, pair)
    calls = [
        Call(
            _joined(rec, asked[pair[k]][1] if k in pair else None, seen),
            span,
            False,
            (span.start_ns, 0, k),
        )
        for k, (span, rec) in enumerate(done)
    ]
    taken = set(pair.values())
    for i, (llm, req) in enumerate(asked):
        if i not in taken:
            calls.append(Call(_joined(req, None, seen), llm, True, (llm.end_ns, 1, i)))
    calls.sort(key=lambda c: c.order)
    return calls
