"""Conversations with a simulated user: the scenario, the simulators, the driver, attribution.

* :class:`Scenario` (carried by ``TaskSpec.scenario``): persona, instructions, the facts the
  user knows and may disclose, the goal items, the stop condition;
* simulators: the duck-typed seam ``simulator(view) -> turn``; :class:`ScriptedSimulator`,
  :class:`RuleSimulator`, :class:`LLMSimulator` (your ``messages -> text`` callable, sync or
  async); their identity (:func:`simulator_id`) is the run's provenance;
* the driver (:func:`aconverse`, :class:`ConversationAgent` for ``run_suite``);
* whose fault a failure is (:func:`check_simulator`, :func:`attribute`);
* tau-bench conversations read as episodes (:func:`read_taubench`).

See ``docs/conversations.md``.
"""

from __future__ import annotations

from ._attribution import (
    PARTIES,
    SIMULATOR_FAULTS,
    Attribution,
    RunAttribution,
    SimulatorFault,
    attribute,
    attribute_run,
    check_simulator,
    conversation_of,
)
from ._driver import (
    Conversation,
    ConversationAgent,
    SimulatorError,
    SimulatorSpoiledError,
    aconverse,
    conversational,
    converse,
    rerun_seed,
    scenario_of,
)
from ._scenario import STOP, Scenario, as_scenario
from ._simulators import (
    DEFAULT_PROMPT,
    LLMSimulator,
    RuleSimulator,
    ScriptedSimulator,
    SimulatorView,
    UserTurn,
    as_user_turn,
    simulator_id,
    simulator_identity,
)
from ._taubench import RETAIL_PATTERNS, read_taubench, scenario_from_taubench

__all__ = [
    "DEFAULT_PROMPT",
    "PARTIES",
    "RETAIL_PATTERNS",
    "SIMULATOR_FAULTS",
    "STOP",
    "Attribution",
    "Conversation",
    "ConversationAgent",
    "LLMSimulator",
    "RuleSimulator",
    "RunAttribution",
    "Scenario",
    "ScriptedSimulator",
    "SimulatorError",
    "SimulatorFault",
    "SimulatorSpoiledError",
    "SimulatorView",
    "UserTurn",
    "aconverse",
    "as_scenario",
    "as_user_turn",
    "attribute",
    "attribute_run",
    "check_simulator",
    "conversation_of",
    "conversational",
    "converse",
    "read_taubench",
    "rerun_seed",
    "scenario_from_taubench",
    "scenario_of",
    "simulator_id",
    "simulator_identity",
]
