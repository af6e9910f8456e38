"""One trace as a tree: spans by id, children in start order, roots, one walk in pre-order.

Parent ids are untrusted: a span whose parent was not exported is a root of its own (an orphan),
and spans whose parents form a cycle (or name themselves) are reached from no root: the earliest
span of each such group becomes a root.

**Parents repaired by time.** Three recorded parents cannot be right, and are replaced by the
span whose time contains the span (the spans' own clocks, one process):

* a span that starts after its parent ended (OpenLLMetry's Agents SDK instrumentation parents a
  model call to the sub-agent that ended just before it) goes under the innermost span that
  contains it;
* an agent span that ran within a tool execution recorded beside it, not under it (OpenLLMetry's
  Agents SDK instrumentation places a sub-agent beside the agent whose tool call ran it) goes
  under that tool span (the innermost one, under the same parent);
* spans recorded beside an agent span that holds nothing, within its time (OpenLLMetry's
  LangChain instrumentation opens an empty ``invoke_agent`` span beside the sub-graph that does
  the work) go under that agent span.

The repaired spans are listed in :attr:`TraceTree.repaired`.

Everything here is linear in the trace's spans, or ``n log n`` for the repairs' sweep (no walk
up the ancestors per span): :attr:`TraceTree.order` lists the spans in pre-order (each once), so
a span's subtree is one slice of it, and :meth:`TraceTree.lookup` resolves an attribute for
every span in one pass down the tree the first time it is asked for.

Example:
    >>> from ek.agents.traces import Span
    >>> t = "0af7651916cd43dd8448eb211c80319c"
    >>> tree = TraceTree(t, [Span(t, "a", None, "task", 0, 9, {"ek.task_id": "t1"}),
    ...                      Span(t, "b", "a", "run", 1, 8), Span(t, "c", "b", "tool", 2, 3)])
    >>> [s.name for s in tree.subtree(tree.order[1])], tree.lookup(tree.order[2], "ek.task_id")
    (['run', 'tool'], 't1')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import _convention as conv
from ._span import Span

__all__ = ["TraceTree", "group_traces"]


class TraceTree:
    """The spans of one trace, as a tree (see the module docstring).

    Attributes:
        trace_id: The trace's id.
        by_id: ``span_id -> Span`` (the first span of a duplicated id wins).
        roles: ``span_id -> role`` (``"agent"``, ``"llm"``, ``"tool"``, ``"chain"`` or ``None``).
        parent: ``span_id -> parent Span`` or ``None`` (a root, an orphan, a broken cycle).
        children: ``span_id -> child spans`` in start order.
        roots: The roots in start order.
        order: Every span once, in pre-order (children in start order).
        repaired: ``(span_id, recorded parent id, parent id used, why)`` of each parent
            repaired; ``why`` is ``"late"``, ``"beside_tool"`` or ``"beside_agent"`` (the three
            repairs, in that order).
    """

    def __init__(self, trace_id: str, spans: Iterable[Span], *, repair: bool = True) -> None:
        self.trace_id = trace_id
        self.by_id: dict[str, Span] = {}
        for s in spans:
            self.by_id.setdefault(s.span_id, s)
        self._rank = {sid: i for i, sid in enumerate(self.by_id)}
        self.roles: dict[str, str | None] = {sid: conv.role(s) for sid, s in self.by_id.items()}
        parents = {
            s.span_id: s.parent_id
            for s in self.by_id.values()
            if s.parent_id is not None and s.parent_id in self.by_id and s.parent_id != s.span_id
        }
        self.repaired: list[tuple[str, str | None, str, str]] = []
        self._inherited: dict[str, dict[str, Any]] = {}
        self._build(parents)
        if repair:
            for why, find in (
                ("late", self._late_children),
                ("beside_tool", self._agents_beside_tools),
                ("beside_agent", self._beside_empty_agents),
            ):
                moved = find()
                if moved:
                    self.repaired += [(s, parents.get(s), new, why) for s, new in moved.items()]
                    parents.update(moved)
                    self._build(parents)

    # ----------------------------------------------------------------- building

    def _key(self, s: Span) -> tuple[int, int]:
        return (s.start_ns, self._rank[s.span_id])

    def _build(self, parents: dict[str, str]) -> None:
        self.children: dict[str, list[Span]] = {}
        self.roots: list[Span] = []
        for s in self.by_id.values():
            p = parents.get(s.span_id)
            if p is None:
                self.roots.append(s)
            else:
                self.children.setdefault(p, []).append(s)
        for kids in self.children.values():
            kids.sort(key=self._key)
        self.roots.sort(key=self._key)
        self.parent: dict[str, Span | None] = {}
        self.order: list[Span] = []
        self._size: dict[str, int] = {}
        self._index: dict[str, int] = {}
        self._visit(self.roots)
        if len(self.order) < len(self.by_id):  # a cycle: reached from no root
            for s in sorted(self.by_id.values(), key=self._key):
                if s.span_id not in self._index:
                    self.roots.append(s)
                    self._visit([s])

    def _visit(self, starts: list[Span]) -> None:
        """Append the spans under ``starts`` to :attr:`order` (pre-order), with subtree sizes."""
        stack: list[tuple[Span, Span | None, bool]] = [(s, None, False) for s in reversed(starts)]
        while stack:
            span, parent, done = stack.pop()
            sid = span.span_id
            if done:
                self._size[sid] = len(self.order) - self._index[sid]
                continue
            if sid in self._index:  # reached twice: only through a cycle
                continue
            self._index[sid] = len(self.order)
            self.order.append(span)
            self.parent[sid] = parent
            stack.append((span, parent, True))
            for kid in reversed(self.children.get(sid, ())):
                if kid.span_id not in self._index:
                    stack.append((kid, span, False))

    # ----------------------------------------------------------------- repairs

    def _late_children(self) -> dict[str, str]:
        """Spans that start after their parent ended -> the innermost span containing them."""
        late = [
            s
            for s in self.order
            if (p := self.parent[s.span_id]) is not None and s.start_ns > p.end_ns
        ]
        return self._containers(late, lambda c: True, lambda c, s: True)

    def _agents_beside_tools(self) -> dict[str, str]:
        """Agent spans within the time of a tool span beside them -> that tool span."""
        agents = [
            s
            for s in self.order
            if self.roles[s.span_id] == "agent"
            and ((p := self.parent[s.span_id]) is None or self.roles[p.span_id] != "tool")
        ]
        return self._containers(agents, lambda c: self.roles[c.span_id] == "tool", self._beside)

    def _beside_empty_agents(self) -> dict[str, str]:
        """Spans within the time of an empty agent span beside them -> that agent span."""
        empty = {
            s.span_id
            for s in self.order
            if self.roles[s.span_id] == "agent" and not self.children.get(s.span_id)
        }
        if not empty:
            return {}
        parents = {p.span_id for e in empty if (p := self.parent[e]) is not None}
        queries = [
            s
            for s in self.order
            if s.span_id not in empty
            and (p := self.parent[s.span_id]) is not None
            and p.span_id in parents
        ]
        return self._containers(queries, lambda c: c.span_id in empty, self._beside)

    def _beside(self, container: Span, span: Span) -> bool:
        """True when ``container`` is not under ``span`` and is under ``span``'s parent."""
        p = self.parent[span.span_id]
        return not self.within(container, span) and (p is None or self.within(container, p))

    def _containers(
        self,
        queries: list[Span],
        candidate: Callable[[Span], bool],
        accept: Callable[[Span, Span], bool],
    ) -> dict[str, str]:
        """``query span_id -> the innermost candidate whose time contains it`` (not one of its
        own spans, and ``accept(candidate, query)``): one sweep in start order. The search for
        one query stops at a candidate that is its ancestor and is refused: the candidates
        opened before it lie outside the query's parent too."""
        if not queries:
            return {}
        asked = {q.span_id for q in queries}
        items = [s for s in self.order if s.span_id in asked or candidate(s)]
        items.sort(key=lambda s: (s.start_ns, -s.end_ns, self._index[s.span_id]))
        open_: list[Span] = []
        found: dict[str, str] = {}
        for s in items:
            while open_ and open_[-1].end_ns < s.start_ns:
                open_.pop()
            if s.span_id in asked:
                c = self._innermost(open_, s, accept)
                if c is not None:
                    found[s.span_id] = c.span_id
            if candidate(s):
                open_.append(s)
        return found

    def _innermost(
        self, open_: list[Span], s: Span, accept: Callable[[Span, Span], bool]
    ) -> Span | None:
        """The last of the open candidates that contains ``s`` and is accepted, if any."""
        for c in reversed(open_):
            if c.end_ns >= s.end_ns and not self.within(c, s) and accept(c, s):
                return c
            if self.within(s, c):  # an ancestor refused: the rest started before it
                return None
        return None

    # ----------------------------------------------------------------- queries

    def within(self, span: Span, top: Span) -> bool:
        """True when ``span`` is ``top`` or under it."""
        i, j = self._index[span.span_id], self._index[top.span_id]
        return j <= i < j + self._size[top.span_id]

    def role(self, span: Span) -> str | None:
        """The span's role (see :attr:`roles`)."""
        return self.roles[span.span_id]

    def subtree(self, span: Span) -> list[Span]:
        """``span`` and every span under it, in pre-order."""
        i = self._index[span.span_id]
        return self.order[i : i + self._size[span.span_id]]

    def inherited(self, attribute: str) -> dict[str, Any]:
        """``span_id -> value`` of ``attribute`` on the span or its nearest ancestor that has it,
        else on the resource of the span or its nearest ancestor whose resource has it; spans
        with neither are left out. One pass down the tree."""
        own: dict[str, Any] = {}
        res: dict[str, Any] = {}
        for s in self.order:
            sid = s.span_id
            p = self.parent[sid]
            if attribute in s.attributes:
                own[sid] = s.attributes[attribute]
            elif p is not None and p.span_id in own:
                own[sid] = own[p.span_id]
            if attribute in s.resource:
                res[sid] = s.resource[attribute]
            elif p is not None and p.span_id in res:
                res[sid] = res[p.span_id]
        return {**res, **own}

    def lookup(self, span: Span, attribute: str) -> Any:
        """``attribute`` on ``span``, its ancestors, then their resources (``None`` if absent);
        the first look-up of an attribute resolves it for every span (:meth:`inherited`)."""
        values = self._inherited.get(attribute)
        if values is None:
            values = self._inherited[attribute] = self.inherited(attribute)
        return values.get(span.span_id)

    def holder(self, span: Span, attribute: str) -> Span | None:
        """The span at or above ``span`` that holds ``attribute`` among its own attributes (not
        its resource), or ``None``."""
        key = "\0holder:" + attribute
        held = self._inherited.get(key)
        if held is None:
            held = self._inherited[key] = {}
            for s in self.order:
                p = self.parent[s.span_id]
                if attribute in s.attributes:
                    held[s.span_id] = s
                elif p is not None and p.span_id in held:
                    held[s.span_id] = held[p.span_id]
        return held.get(span.span_id)

    def is_agent_trace(self) -> bool:
        """True when any span is an agent run, a model call or a tool execution."""
        return any(r in ("agent", "llm", "tool") for r in self.roles.values())


def group_traces(spans: Iterable[Span]) -> list[TraceTree]:
    """The spans grouped by trace id, each trace a :class:`TraceTree` (in order of first span).

    Example:
        >>> [t.trace_id[-1] for t in group_traces([Span("1", "a", None, "x", 0, 1),
        ...                                        Span("2", "a", None, "x", 0, 1)])]
        ['1', '2']
    """
    by_trace: dict[str, list[Span]] = {}
    for s in spans:
        by_trace.setdefault(s.trace_id, []).append(s)
    return [TraceTree(t, ss) for t, ss in by_trace.items()]
