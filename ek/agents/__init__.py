"""ek.agents: agent and assistant evaluation (episodes, tool calls, trajectories, cost, pass^k).

Importing this package registers the default checkers and metrics. It imports no third-party
package: the bridges to Inspect AI, DeepEval and Ragas duck-type their objects.
"""

from __future__ import annotations

from ek.agents.base import (
    COMPARABILITY_KEYS,
    DESTRUCTIVE_WEIGHT,
    TOKEN_KINDS,
    Cost,
    Episode,
    RunProvenance,
    Step,
    TaskSpec,
    ToolSpec,
    Trajectory,
    read_episodes,
    suite_grammar,
    write_episodes,
)

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
