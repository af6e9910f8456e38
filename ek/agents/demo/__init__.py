"""The embedded demo: a tau-bench-style retail suite, two scripted agents, and the demo job.

``ek-agents demo [FOLDER]`` (or :func:`run_demo`) runs it end to end, offline, with no API key:
see :mod:`ek.agents.demo._run`. The pieces are reusable: :mod:`~ek.agents.demo._world` (the
database and its tools), :mod:`~ek.agents.demo._tasks` (:func:`load_tasks`: 30 tasks with gold
final states and gold calls), :mod:`~ek.agents.demo._agents` (:func:`baseline_agent`,
:func:`candidate_agent`). The Inspect AI form of the suite is part of the
Inspect adapter, ``ek.adapters.inspect.demo`` (``pip install ek-agents[inspect]``): this package
never imports a host framework.

Example:
    >>> from ek.agents.demo import baseline_agent, load_tasks, replayed_state_match
    >>> task = load_tasks("lookup")[0]
    >>> replayed_state_match(baseline_agent()(task), task)
    True
"""

from __future__ import annotations

from ._agents import (
    ErrorProfile,
    ScriptedAgent,
    TokenModel,
    baseline_agent,
    candidate_agent,
    oracle_agent,
)
from ._run import DEMO_PRICES, DemoResult, run_demo
from ._tasks import SUITE_VERSION, load_tasks
from ._world import TOOLS, call_tool, initial_db, replay, replayed_state_match

__all__ = [
    "DEMO_PRICES",
    "SUITE_VERSION",
    "TOOLS",
    "DemoResult",
    "ErrorProfile",
    "ScriptedAgent",
    "TokenModel",
    "baseline_agent",
    "call_tool",
    "candidate_agent",
    "initial_db",
    "load_tasks",
    "oracle_agent",
    "replay",
    "replayed_state_match",
    "run_demo",
]
