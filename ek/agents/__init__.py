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
from ek.agents.cost import (
    CostReport,
    ModelPrice,
    cost_of_pass,
    cost_report,
    dollars,
    episode_dollars,
    load_prices,
    per_million,
    price_cost,
    resolve_price,
)
from ek.agents.metrics import (
    Checker,
    CostPerSuccessMetric,
    TaskSuccessMetric,
    final_state_match,
    output_match,
    recorded_success,
)

__all__ = [
    "COMPARABILITY_KEYS",
    "DESTRUCTIVE_WEIGHT",
    "TOKEN_KINDS",
    "Checker",
    "Cost",
    "CostPerSuccessMetric",
    "CostReport",
    "Episode",
    "ModelPrice",
    "RunProvenance",
    "Step",
    "TaskSpec",
    "TaskSuccessMetric",
    "ToolSpec",
    "Trajectory",
    "cost_of_pass",
    "cost_report",
    "dollars",
    "episode_dollars",
    "final_state_match",
    "load_prices",
    "output_match",
    "per_million",
    "price_cost",
    "read_episodes",
    "recorded_success",
    "resolve_price",
    "suite_grammar",
    "write_episodes",
]
