"""One run -> the parts of its Episode: calls, cost, output, input, and what the trace recorded.

* **Calls**: each agent's requested and executed calls merged (:mod:`~ek.agents.traces._calls`),
  in the order they happened. ``scope="top"`` keeps the calls of the agents at the top of the run
  (the run's agent; a sub-agent's calls, a handoff target's included, are left out, the call
  that started it stays); ``scope="all"`` keeps every call.
* **Cost**: every model-call span of the run (sub-agents included, whatever the scope), summed
  per model in ek's token kinds; a span that reports a total only is never split (the episode
  then records no cost; see :class:`~ek.agents.traces._records.Usage`). The run's agent span's
  own usage is read only when no model-call span reports any.
* **Output**: the final answer (:func:`~ek.agents.traces._content.final_answer`) the root span
  records, else the one the agent that ended the run records (the last handoff target, else the
  run's agent), else that agent's last model text. A call an agent returned its answer with (its
  arguments are the answer, made when nothing more was asked of its model: smolagents'
  ``final_answer``, pydantic-ai's ``final_result``) is the output, not a call.
* **What was not recorded** (``metadata["trace"]["not_recorded"]``, ``{key: "<what> not
  recorded: <what it means>"}``, keys of :data:`NOT_RECORDED`): call ids, cached or reasoning
  token counts, token usage, the model, the output, a tool error's text, the sub-agent
  structure, a handoff's target, when the spans hold none. ``"cached_tokens"`` means dollars
  are an upper bound: every input token is priced as uncached.

Example:
    >>> not_recorded(["cached_tokens"])
    {'cached_tokens': 'cached tokens not recorded: dollars are an upper bound (every input token priced as uncached)'}
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ek._validate import thaw
from ek.agents._episode import Cost, Step
from ek.agents.toolcalls._parse import normalize_call

from . import _convention as conv
from ._calls import Call, merge
from ._content import first_request
from ._records import CallRecord, Usage
from ._runs import Agent, Run
from ._span import Span, TraceFormatError
from ._tree import TraceTree

__all__ = [
    "NOT_RECORDED",
    "RunCalls",
    "answer_calls",
    "calls_missing",
    "not_recorded",
    "run_calls",
    "run_costs",
    "run_input",
    "run_output",
    "steps",
    "structure_missing",
    "sub_agent_results",
]

#: What a trace may leave out: ``key -> (what, what that means for the episode)``.
NOT_RECORDED = {
    "call_ids": ("call ids", "calls are matched to the model's requests by name and order"),
    "cached_tokens": (
        "cached tokens",
        "dollars are an upper bound (every input token priced as uncached)",
    ),
    "reasoning_tokens": ("reasoning tokens", "output is counted whole, its reasoning not apart"),
    "token_usage": ("token usage", "the cost is unknown"),
    "model": ("the model", "costs cannot be priced by model"),
    "output": ("the final answer", "the episode's output is None"),
    "tool_error_text": (
        "tool error text",
        "the framework redacts a failed call's error; the step keeps what the span says",
    ),
    "sub_agent_structure": (
        "sub-agent structure",
        "a sub-agent's span lies beside the call that ran it: placed under it by time",
    ),
    "handoff_target": (
        "handoff target",
        "a handoff names no agent: the agent that started next is taken as its target",
    ),
}

_REDACTED = ("redacted",)


def not_recorded(keys: Iterable[str]) -> dict[str, str]:
    """``{key: "<what> not recorded: <what that means>"}`` for keys of :data:`NOT_RECORDED`."""
    return {k: f"{NOT_RECORDED[k][0]} not recorded: {NOT_RECORDED[k][1]}" for k in keys}


def _step(rec: CallRecord) -> Step:
    step = normalize_call({"name": rec.name, "arguments": thaw(rec.arguments)}, strict=False)
    error = step.error
    if rec.error is not None:
        error = rec.error if error is None else f"{error}; tool error: {rec.error}"
    return Step(step.tool, step.args, observation=thaw(rec.result), error=error, id=rec.call_id)


class RunCalls:
    """Every call of a run, in the order they happened, with the agent that made each; indexed
    by the span that executed it and by agent (so that each question is answered without a
    scan of every call)."""

    def __init__(self, items: list[tuple[Call, Agent | None]]) -> None:
        self.items = items
        self._by_span = {c.span.span_id: i for i, (c, _) in enumerate(items) if not c.requested}
        self._by_agent: dict[Agent | None, list[int]] = {}
        for i, (_, agent) in enumerate(items):
            self._by_agent.setdefault(agent, []).append(i)

    def of(self, agent: Agent | None) -> list[int]:
        """The indices of ``agent``'s calls, in order."""
        return self._by_agent.get(agent, [])

    def started_by(self, agent: Agent) -> int | None:
        """The index of the call that started a sub-agent: the call of the tool or handoff span
        that started it; else (no span recorded it: smolagents' managed agents, a handoff known
        by order) the parent's last call before it, preferring one that names it (and, for a
        sub-agent, one only asked for)."""
        if agent.parent is None:
            return None
        if agent.started_by is not None:
            return self._by_span.get(agent.started_by.span_id)
        before = [
            i
            for i in self.of(agent.parent)
            if self.items[i][0].order[0] <= agent.span.start_ns
            and (self.items[i][0].requested or agent.kind == "handoff")
        ]
        named = [i for i in before if self.items[i][0].record.name == agent.name]
        pick = named or before
        return pick[-1] if pick else None

    def set_result(self, i: int, result: Any) -> None:
        """Give call ``i`` a result."""
        call, agent = self.items[i]
        self.items[i] = (replace(call, record=replace(call.record, result=result)), agent)


class _Told(Mapping[str, Any]):
    """The results the model was told, by call id (tool messages in the model calls' inputs),
    read from the spans the first time one is asked for: most calls have a result of their own."""

    def __init__(self, llms: list[Span]) -> None:
        self._llms = llms
        self._by_id: dict[str, Any] | None = None

    def _read(self) -> dict[str, Any]:
        if self._by_id is None:
            self._by_id = {}
            for llm in self._llms:
                for cid, result in conv.seen_results(llm).items():
                    self._by_id.setdefault(cid, result)
        return self._by_id

    def __getitem__(self, key: str) -> Any:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


def run_calls(run: Run) -> RunCalls:
    """Every call of the run with the agent that made it, in the order they happened."""
    asked: dict[Agent | None, list[tuple[Span, CallRecord]]] = {}
    llms = sorted(run.llms, key=lambda s: s.end_ns)
    seen = _Told(llms)
    for llm in llms:
        for rec in conv.requested_calls(llm):
            asked.setdefault(run.agent_of(llm), []).append((llm, rec))
    done: dict[Agent | None, list[tuple[Span, CallRecord]]] = {}
    for tool in sorted(run.tools, key=lambda s: s.start_ns):
        done.setdefault(run.agent_of(tool), []).append((tool, run.records[tool.span_id]))
    out = []
    for agent in {**dict.fromkeys(asked), **dict.fromkeys(done)}:
        out += [(c, agent) for c in merge(asked.get(agent, []), done.get(agent, []), seen)]
    out.sort(key=lambda x: x[0].order)
    return RunCalls(out)


def sub_agent_results(tree: TraceTree, run: Run, calls: RunCalls) -> None:
    """Calls that started a sub-agent with no span of their own (smolagents' managed agents)
    take as result what the step holding the sub-agent returned (a chain span's output), else
    the sub-agent's answer."""
    for agent in run.agents:
        if agent.kind != "sub_agent" or agent.started_by is not None:
            continue
        i = calls.started_by(agent)
        if i is None:
            continue
        rec = calls.items[i][0].record
        if rec.result is not None or rec.error is not None:
            continue
        holder = tree.parent[agent.span.span_id]
        result = None
        if holder is not None and tree.roles[holder.span_id] == "chain":
            result = conv.agent_output(holder)
        calls.set_result(i, conv.agent_output(agent.span) if result is None else result)


def _is_answer(step: Step, answer: Any) -> bool:
    if answer is None or step.error is not None:
        return False
    args = dict(step.args)
    return args == answer or (len(args) == 1 and next(iter(args.values())) == answer)


def answer_calls(run: Run, calls: RunCalls) -> frozenset[int]:
    """The indices of the calls an agent returned its answer with: a call made when nothing
    more was asked of its model (in or after its last model call) whose arguments are its final
    answer (equal to it, or one argument equal to it): smolagents' ``final_answer`` tool,
    pydantic-ai's output tool ``final_result``. They are the output, not calls."""
    last: dict[Agent, Span] = {}
    for s in run.llms:
        a = run.agent_of(s)
        if a is not None and (a not in last or s.end_ns >= last[a].end_ns):
            last[a] = s
    out: set[int] = set()
    for agent, llm in last.items():
        late = [i for i in calls.of(agent) if _after(calls.items[i][0], llm)]
        if not late:
            continue
        answer = thaw(conv.agent_output(agent.span))
        if answer is None and agent is run.agent:
            answer = run_output(run)
        out.update(i for i in late if _is_answer(_step(calls.items[i][0].record), answer))
    return frozenset(out)


def _after(call: Call, last: Span) -> bool:
    """True when ``call`` was asked for in ``last`` (its agent's last model call) or ran after
    it: nothing more was asked of the model."""
    return call.span is last if call.requested else call.span.start_ns >= last.end_ns


def steps(
    calls: RunCalls, scope: str, leave_out: frozenset[int] = frozenset()
) -> tuple[list[Step], list[dict[str, Any]]]:
    """The Steps in scope and, for each, where it came from (``metadata["trace"]["steps"]``);
    ``leave_out``: indices of calls that are not steps (:func:`answer_calls`)."""
    out: list[Step] = []
    info: list[dict[str, Any]] = []
    for i, (call, agent) in enumerate(calls.items):
        if i in leave_out or (scope == "top" and agent is not None and agent.parent is not None):
            continue
        out.append(_step(call.record))
        info.append(
            {
                "span_id": call.span.span_id,
                "agent": None if agent is None else agent.name,
                "agent_span_id": None if agent is None else agent.span.span_id,
                "depth": 0 if agent is None else agent.depth,
                "requested": call.requested,
            }
        )
    return out, info


@dataclass
class _Tally:
    """Usage summed per model, totals that cannot be split, and which kinds were reported."""

    by_model: dict[str | None, Cost] = field(default_factory=dict)
    unsplit: list[dict[str, Any]] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)

    def add(self, span: Span, u: Usage, model: str | None) -> None:
        for kind, seen in (
            ("model", model is not None),
            ("cache", u.cache_read is not None or u.cache_write is not None),
            ("reasoning", u.reasoning is not None),
        ):
            if seen:
                self.kinds.add(kind)
        if u.total_only:
            self.unsplit.append({"span_id": span.span_id, "model": model, "total_tokens": u.total})
            return
        c = u.to_cost(model)
        if c is None:
            return
        try:
            old = self.by_model.get(c.model)
            self.by_model[c.model] = c if old is None else old + c
        except ValueError as e:  # a sum past 2**53 tokens or an infinite bill
            raise TraceFormatError(f"usage out of range: {e}") from None

    @property
    def reported(self) -> bool:
        return bool(self.by_model or self.unsplit)


def run_costs(run: Run) -> tuple[list[Cost], dict[str, Any], dict[str, str]]:
    """(costs by model, usage metadata, what the usage does not record)."""
    t = _Tally()
    for span in run.llms:
        t.add(span, conv.usage(span), conv.model(span))
    for span in _agent_spans(run):
        if t.reported:
            break
        t.add(span, conv.agent_usage(span), conv.model(span))
    keys = []
    if not t.reported:
        keys.append("token_usage")
    elif "cache" not in t.kinds:
        keys.append("cached_tokens")
    if t.reported and "reasoning" not in t.kinds:
        keys.append("reasoning_tokens")
    if run.llms and "model" not in t.kinds:
        keys.append("model")
    costs = list(t.by_model.values())
    if not t.unsplit:
        return costs, {}, not_recorded(keys)
    meta = {"usage_unsplit": t.unsplit, "usage_split": [c.to_dict() for c in costs]}
    return [], meta, not_recorded(keys)


def _agent_spans(run: Run) -> list[Span]:
    spans = [] if run.root is None else [run.root]
    if run.agent is not None and run.agent.span is not run.root:
        spans.append(run.agent.span)
    return spans


def structure_missing(tree: TraceTree, run: Run) -> dict[str, str]:
    """What the spans do not record of the run's structure: a sub-agent placed by time (its
    span was recorded beside the call that ran it), a handoff that names no agent."""
    keys = []
    moved = {s for s, _, _, why in tree.repaired if why == "beside_tool"}
    if any(a.span.span_id in moved for a in run.agents):
        keys.append("sub_agent_structure")
    if any(r.handoff and r.target is None for r in run.records.values()):
        keys.append("handoff_target")
    return not_recorded(keys)


def calls_missing(calls: RunCalls) -> dict[str, str]:
    """What the calls do not record (ids; a redacted error's text)."""
    keys = []
    recs = [c.record for c, _ in calls.items]
    if any(r.call_id is None for r in recs):
        keys.append("call_ids")
    if any(r.error is not None and any(w in r.error.lower() for w in _REDACTED) for r in recs):
        keys.append("tool_error_text")
    return not_recorded(keys)


def _ending_agent(run: Run) -> Agent | None:
    """The agent that ended the run: the last handoff target from the run's agent on."""
    handed: dict[Agent, Agent] = {}
    for a in run.agents:
        if a.kind == "handoff" and a.parent is not None:
            prev = handed.get(a.parent)
            if prev is None or a.span.start_ns >= prev.span.start_ns:
                handed[a.parent] = a
    last = run.agent
    seen: set[int] = set()
    while last is not None and last in handed and id(last) not in seen:
        seen.add(id(last))
        last = handed[last]
    return last


def run_output(run: Run) -> Any:
    """The run's final answer (see the module docstring), or ``None``."""
    ending = _ending_agent(run)
    for span in (run.root, None if ending is None else ending.span):
        if span is not None:
            out = conv.agent_output(span)
            if out is not None:
                return thaw(out)
    llms = [s for s in run.llms if ending is None or run.agent_of(s) is ending]
    for span in sorted(llms, key=lambda s: s.end_ns, reverse=True):
        text = conv.output_text(span)
        if text is not None:
            return text
    return None


def run_input(run: Run) -> Any:
    """What the run was asked: the root's (or agent's) recorded input, else the first model
    call's first user message; graph state read down to its first user message."""
    for span in _agent_spans(run):
        v = conv.input_value(span)
        if v is not None:
            return thaw(first_request(v))
    first = min(run.llms, key=lambda s: s.start_ns, default=None)
    return None if first is None else thaw(first_request(conv.input_value(first)))
