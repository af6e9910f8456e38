"""What a convention reads from one span: :class:`CallRecord` (a tool call) and :class:`Usage`.

Both conventions (:mod:`~ek.agents.traces._genai`, :mod:`~ek.agents.traces._openinference`)
produce these; :mod:`~ek.agents.traces._episodes` turns them into Steps and Costs.

Example:
    >>> u = Usage(input=120, output=30, cache_read=20, reasoning=10)
    >>> c = u.to_cost("gpt-4o")
    >>> c.input_tokens, c.cache_read_tokens, c.output_tokens, c.reasoning_tokens
    (100, 20, 30, 10)
    >>> Usage(total=150).to_cost("gpt-4o") is None      # a total only is never split
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ek.agents._episode import Cost

__all__ = ["SPAN_ROLES", "CallRecord", "Usage"]

#: What a span is to ek: an agent run, a model call, a tool execution, or a chain step.
SPAN_ROLES = ("agent", "llm", "tool", "chain")


@dataclass(frozen=True)
class CallRecord:
    """One tool call as a span records it (arguments as given: a JSON string or a mapping).

    ``requested`` is True for a call read from a model's output messages (asked for, not seen
    executed), False for a tool-execution span. ``handoff`` marks a span that handed the
    conversation to another agent (``target``, its name when the span records it); such a span
    records no tool name of its own: the call the model asked for names it.
    """

    name: Any
    arguments: Any = None
    result: Any = None
    call_id: str | None = None
    error: str | None = None
    requested: bool = False
    handoff: bool = False
    target: str | None = None

    @classmethod
    def asked(cls, name: Any, arguments: Any, call_id: Any) -> CallRecord:
        """A call read from a model's output (``requested``), its id as text if it has one."""
        return cls(
            name, arguments, call_id=None if call_id is None else str(call_id), requested=True
        )


@dataclass(frozen=True)
class Usage:
    """Token counts as the span reports them (``None`` = not reported).

    ``input`` counts *all* input tokens, cached ones included (both conventions say so: the
    OpenTelemetry GenAI ``gen_ai.usage.input_tokens`` and OpenInference's
    ``llm.token_count.prompt``); ``output`` counts all output, reasoning included.
    """

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    total: int | None = None
    dollars: float | None = None

    @property
    def reported(self) -> bool:
        """True when any count (or a cost) was reported."""
        return (
            any(
                v is not None
                for v in (self.input, self.output, self.cache_read, self.cache_write, self.total)
            )
            or self.dollars is not None
        )

    @property
    def total_only(self) -> bool:
        """True when only a total was reported: it cannot be split into token kinds."""
        return self.total is not None and self.input is None and self.output is None

    def to_cost(self, model: str | None, role: str = "agent") -> Cost | None:
        """ek's token kinds (DESIGN: uncached input, cache read, cache write, output including
        reasoning), or ``None`` when the span reported a total only (never split).

        Uncached input = input - cache read - cache write; when the reported input is smaller
        than the cache counts, the source evidently reported uncached input already and it is
        kept as it is. Reasoning larger than the output was counted apart: it is added to it.
        """
        if self.total_only or not self.reported:
            return None
        cr, cw = self.cache_read or 0, self.cache_write or 0
        inp = self.input or 0
        if inp >= cr + cw:
            inp -= cr + cw
        out, reasoning = self.output or 0, self.reasoning or 0
        if reasoning > out:
            out += reasoning
        return Cost(
            input_tokens=inp,
            output_tokens=out,
            cache_read_tokens=cr,
            cache_write_tokens=cw,
            reasoning_tokens=reasoning,
            model=model,
            role=role,
            dollars=self.dollars,
        )
