"""Which spans are agents: the runs of a trace, their agents, and who started each sub-agent.

**The agent is the span that owns the model calls.** A span an instrumentation marks as an agent
(GenAI ``invoke_agent``, OpenInference ``AGENT``, OpenLLMetry ``agent``) *owns* the model calls
and tool executions under it that no nearer agent span holds. The rules, the same for every
instrumentation:

* **Turns.** A marked span that names no agent, owns no tool execution and holds no other
  agent, directly under a chain span, is one turn of that chain's loop, and the chain is the
  agent (OpenInference's LangChain instrumentation marks every run whose name contains "agent",
  so each LangGraph ``agent`` node is marked; the graph, which also runs the tools, is the agent).
* **Wrappers.** A marked span that owns no model call and no tool execution but holds agents is
  a wrapper, not an agent: the Agents SDK's workflow span (OpenInference), the outer of the two
  nested spans OpenLLMetry's LangChain instrumentation opens for one agent. Its agents stand
  where it stands.
* **Sub-agents.** Every other marked span is an agent; an agent under another agent is its
  sub-agent, started by the tool execution it runs under when one holds it (see
  :mod:`~ek.agents.traces._tree` for sub-agents recorded beside the tool call that ran them).
* **Runs.** Each top-most agent or wrapper is one run (one episode), except that top-most agents
  under one line of chain spans (a framework's workflow or graph span: OpenLLMetry's Agents SDK
  workflow, a LangGraph parent graph) are one run rooted at its top, and, given the task and
  trial attributes, top-most agents that inherit both from the same span (a harness span around
  one trial) are one run rooted at that span. A trace with no agent but with model calls or
  tool executions is one run of the whole trace, with no agent.
* **Handoffs.** Agents side by side at the top of a run are peers; the run's agent is the first.
  A later peer is the sub-agent (kind ``"handoff"``) of the agent whose handoff span names it
  (or names no agent) and came before it; else, when it starts after an earlier peer ended, of
  the last peer that ended before it (control passed on; the call that passed it is that peer's
  last). Peers that overlap in time stay peers.

Example:
    >>> from ek.agents.traces import Span
    >>> from ek.agents.traces._tree import TraceTree
    >>> t = "0af7651916cd43dd8448eb211c80319c"
    >>> oi = lambda kind, **a: {"openinference.span.kind": kind, **a}
    >>> tree = TraceTree(t, [
    ...     Span(t, "f0", None, "Agent workflow", 0, 90, oi("AGENT")),
    ...     Span(t, "a1", "f0", "support", 1, 40, oi("AGENT", **{"agent.name": "support"})),
    ...     Span(t, "c1", "a1", "response", 2, 3, oi("LLM")),
    ...     Span(t, "d1", "a1", "handoff to billing", 4, 5, oi("TOOL", **{"output.value": "billing"})),
    ...     Span(t, "a2", "f0", "billing", 41, 80, oi("AGENT", **{"agent.name": "billing"})),
    ...     Span(t, "c2", "a2", "response", 42, 43, oi("LLM"))])
    >>> [run] = find_runs(tree)
    >>> run.root.name, run.agent.name, [(a.name, a.kind, a.depth) for a in run.agents]
    ('Agent workflow', 'support', [('support', 'agent', 1), ('billing', 'handoff', 2)])
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from . import _convention as conv
from ._records import CallRecord
from ._span import Span
from ._tree import TraceTree

__all__ = ["Agent", "Run", "find_runs"]


@dataclass(eq=False)
class Agent:
    """One agent of a run.

    Attributes:
        span: Its span.
        name: Its name (the convention's agent name, else the span name).
        parent: The agent that started it (``None`` for an agent at the top of the run).
        kind: ``"agent"`` (at the top), ``"sub_agent"`` or ``"handoff"``.
        started_by: The tool or handoff span that started it, when one was recorded.
        depth: 1 at the top, 2 for its sub-agents, ...
    """

    span: Span
    name: str
    parent: Agent | None = None
    kind: str = "agent"
    started_by: Span | None = None
    depth: int = 1


@dataclass(eq=False)
class Run:
    """One run (an episode): its root span, its agent and every agent and call span in it.

    Attributes:
        root: The top-most marked span (``None``: the run is the whole trace).
        agent: The run's agent (``None`` when no span is marked as one).
        agents: Every agent, in start order (pre-order).
        owner: ``span_id -> Agent`` of each model-call and tool span an agent owns.
        llms, tools: The model-call and tool spans of the run, in pre-order.
        records: ``span_id -> CallRecord`` of each tool span (read once).
    """

    root: Span | None
    agent: Agent | None = None
    agents: list[Agent] = field(default_factory=list)
    owner: dict[str, Agent] = field(default_factory=dict)
    llms: list[Span] = field(default_factory=list)
    tools: list[Span] = field(default_factory=list)
    records: dict[str, CallRecord] = field(default_factory=dict)

    def agent_of(self, span: Span) -> Agent | None:
        """The agent owning a model-call or tool span (``None``: no agent holds it)."""
        return self.owner.get(span.span_id)


def _agent_spans(tree: TraceTree, spans: list[Span]) -> set[str]:
    """The ids of the spans that are agents or wrappers: marked spans, turns replaced by the
    chain they belong to (see the module docstring)."""
    marked = {s.span_id for s in spans if tree.roles[s.span_id] == "agent"}
    if not marked:
        return marked
    nearest: dict[str, str | None] = {}
    busy: set[str] = set()  # own a tool execution or hold another marked span
    for s in spans:
        sid = s.span_id
        p = tree.parent[sid]
        above = nearest.get(p.span_id) if p is not None else None
        if above is not None and (sid in marked or tree.roles[sid] == "tool"):
            busy.add(above)
        nearest[sid] = sid if sid in marked else above
    turns: set[str] = set()
    chains: set[str] = set()
    for sid in marked - busy:
        p = tree.parent[sid]
        span = tree.by_id[sid]
        if p is not None and tree.roles[p.span_id] == "chain" and conv.agent_name(span) is None:
            turns.add(sid)
            chains.add(p.span_id)
    return (marked - turns) | chains


def _tops(tree: TraceTree, marks: set[str]) -> list[Span]:
    """The top-most agent spans (a mark under a mark is skipped), in pre-order."""
    inside: set[str] = set()
    tops = []
    for s in tree.order:
        p = tree.parent[s.span_id]
        under = p is not None and p.span_id in inside
        if s.span_id in marks or under:
            inside.add(s.span_id)
            if not under:
                tops.append(s)
    return tops


def _wrappers(tree: TraceTree, spans: list[Span], marks: set[str]) -> set[str]:
    """The marks that own no call but hold marks (see the module docstring)."""
    nearest: dict[str, str | None] = {}
    owns: set[str] = set()
    holds: set[str] = set()
    for s in spans:
        sid = s.span_id
        p = tree.parent[sid]
        above = nearest.get(p.span_id) if p is not None else None
        if sid in marks:
            if above is not None:
                holds.add(above)
            nearest[sid] = sid
            continue
        nearest[sid] = above
        if tree.roles[sid] in ("llm", "tool") and above is not None:
            owns.add(above)
    return holds - owns


def _agent_name(span: Span) -> str:
    return conv.agent_name(span) or span.name


def _collect(tree: TraceTree, root: Span | None, marks: set[str]) -> Run:
    """The agents and call spans of one run, owners and structural parents resolved."""
    run = Run(root)
    spans = tree.subtree(root) if root is not None else tree.order
    wrappers = _wrappers(tree, spans, marks)
    agent_at: dict[str, Agent | None] = {}  # span_id -> agent holding it (itself for an agent)
    tool_at: dict[str, Span | None] = {}  # span_id -> nearest tool span since that agent
    for s in spans:
        sid = s.span_id
        p = tree.parent[sid]
        above = agent_at.get(p.span_id) if p is not None else None
        tool = tool_at.get(p.span_id) if p is not None else None
        role = tree.roles[sid]
        if sid in marks and sid not in wrappers:
            kind = "agent" if above is None else "sub_agent"
            agent = Agent(s, _agent_name(s), above, kind, tool if above is not None else None)
            run.agents.append(agent)
            agent_at[sid], tool_at[sid] = agent, None
            continue
        agent_at[sid] = above
        tool_at[sid] = s if role == "tool" else tool
        if role in ("llm", "tool"):
            (run.llms if role == "llm" else run.tools).append(s)
            if above is not None:
                run.owner[sid] = above
            if role == "tool":
                run.records[sid] = conv.tool_call(s)
    return run


def _handoff_spans(run: Run) -> list[tuple[Span, Agent, str | None]]:
    """The run's handoff spans an agent made: (span, that agent, the agent it names), in
    start order."""
    out = []
    for t in sorted(run.tools, key=lambda s: s.start_ns):
        rec = run.records[t.span_id]
        owner = run.owner.get(t.span_id)
        if rec.handoff and owner is not None:
            out.append((t, owner, rec.target))
    return out


def _link(peer: Agent, pending: list[tuple[Span, Agent, str | None]], last: Agent | None) -> None:
    """Make ``peer`` a handoff from the latest pending handoff span that names it (or no
    agent), else from ``last`` (the peer that ended last before it started), if any."""
    for i in range(len(pending) - 1, -1, -1):
        span, owner, target = pending[i]
        if owner is not peer and target in (None, peer.name):
            del pending[i]
            peer.parent, peer.started_by, peer.kind = owner, span, "handoff"
            return
    if last is not None:
        peer.parent, peer.kind = last, "handoff"


def _link_handoffs(run: Run) -> None:
    """Peers at the top that follow a handoff become the handing agent's sub-agents (see the
    module docstring): one pass over the peers in start order."""
    peers = sorted((a for a in run.agents if a.parent is None), key=lambda a: a.span.start_ns)
    handoffs = _handoff_spans(run)
    pending: list[tuple[Span, Agent, str | None]] = []  # handoff spans started, not yet used
    running: list[tuple[int, int, Agent]] = []  # heap of the peers seen, by end
    last: Agent | None = None  # of the peers seen, the one that ended last before this start
    h = 0
    for n, peer in enumerate(peers):
        start = peer.span.start_ns
        while h < len(handoffs) and handoffs[h][0].start_ns <= start:
            pending.append(handoffs[h])
            h += 1
        while running and running[0][0] <= start:
            _, _, done = heapq.heappop(running)
            if last is None or done.span.end_ns >= last.span.end_ns:
                last = done
        if n > 0:
            _link(peer, pending, last)
        heapq.heappush(running, (peer.span.end_ns, n, peer))


def _chain_tops(tree: TraceTree) -> dict[str, Span]:
    """``span_id -> the top-most span of the unbroken line of chain spans right above it``
    (a framework's workflow or graph span), for the spans directly under a chain span."""
    out: dict[str, Span] = {}
    for s in tree.order:
        p = tree.parent[s.span_id]
        if p is not None and tree.roles[p.span_id] == "chain":
            out[s.span_id] = out.get(p.span_id, p)
    return out


def _roots(tree: TraceTree, tops: list[Span], task: str | None, trial: str | None) -> list[Span]:
    """One root per run: each top-most agent, or, for top-most agents that are one run (see
    the module docstring), the chain span or the span holding their task and trial."""
    chains = _chain_tops(tree) if len(tops) > 1 else {}
    groups: dict[str, list[Span]] = {}
    for top in tops:
        key = top
        if top.span_id in chains:
            key = chains[top.span_id]
        elif task is not None and trial is not None:
            held = (tree.holder(top, task), tree.holder(top, trial))
            if held[0] is not None and held[1] is not None:
                key = held[1] if tree.within(held[1], held[0]) else held[0]
        groups.setdefault(key.span_id, []).append(top)
    return [ts[0] if len(ts) == 1 else tree.by_id[key] for key, ts in groups.items()]


def find_runs(
    tree: TraceTree, task_attribute: str | None = None, trial_attribute: str | None = None
) -> list[Run]:
    """The runs of a trace (see the module docstring), in start order; none when the trace holds
    no agent, model call or tool execution.

    Args:
        tree: The trace.
        task_attribute, trial_attribute: Top-most agents that inherit both from the same span
            (a harness span around one trial) are one run.
    """
    if not tree.is_agent_trace():
        return []
    marks = _agent_spans(tree, tree.order)
    tops = _tops(tree, marks)
    roots: list[Span | None] = list(_roots(tree, tops, task_attribute, trial_attribute))
    runs = []
    for root in roots or [None]:
        run = _collect(tree, root, marks)
        _link_handoffs(run)
        for a in run.agents:  # pre-order: a parent's depth is set before its sub-agents'
            a.depth = 1 if a.parent is None else a.parent.depth + 1
        tops_ = [a for a in run.agents if a.parent is None]
        run.agent = tops_[0] if tops_ else None
        runs.append(run)
    return runs
