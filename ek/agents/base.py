"""The shapes of agent evaluation: the episode (Layer B) and the task and its tools (Layer A).

The face of these names, their one import path (the spec's). It defines nothing; the two
concepts live in private modules beside it:

- **Layer B, the episode** (what happened), ``_episode.py``: :class:`Step`,
  :class:`Trajectory`, :class:`Cost`, :class:`RunProvenance`, :class:`Episode`,
  :func:`write_episodes`, :func:`read_episodes`, :data:`TOKEN_KINDS`,
  :data:`COMPARABILITY_KEYS`.
- **Layer A, the task/tool grammar** (what should happen, and what it costs to get it wrong),
  ``_spec.py``: :class:`ToolSpec`, :class:`TaskSpec`, :func:`suite_grammar`,
  :data:`DESTRUCTIVE_WEIGHT`.

Code inside ``ek`` imports the private modules directly.

Example:
    >>> ep = Episode(
    ...     task_id="t1",
    ...     trajectory=[Step("lookup", {"order_id": "A1"}, observation={"status": "paid"})],
    ...     output="refunded",
    ...     cost=Cost(input_tokens=1200, output_tokens=300, model="gpt-4o"),
    ... )
    >>> ep.trajectory.tools, ep.agent_cost.total_tokens
    (('lookup',), 1500)
    >>> from ek.grammar import FieldSpec
    >>> refund = ToolSpec("refund_order", [FieldSpec("amount", "number", importance=5.0)],
    ...                   destructive=True)
    >>> g = TaskSpec("t1", tools=[refund]).grammar()
    >>> g.weight("refund_order"), g.importance("refund_order", "amount")
    (10.0, 5.0)
"""

from __future__ import annotations

from ek.agents._episode import (
    COMPARABILITY_KEYS,
    TOKEN_KINDS,
    Cost,
    Episode,
    RunProvenance,
    Step,
    Trajectory,
    read_episodes,
    write_episodes,
)
from ek.agents._spec import DESTRUCTIVE_WEIGHT, TaskSpec, ToolSpec, suite_grammar

__all__ = [
    "COMPARABILITY_KEYS",
    "DESTRUCTIVE_WEIGHT",
    "TOKEN_KINDS",
    "Cost",
    "Episode",
    "RunProvenance",
    "Step",
    "TaskSpec",
    "ToolSpec",
    "Trajectory",
    "read_episodes",
    "suite_grammar",
    "write_episodes",
]
