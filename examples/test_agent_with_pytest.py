"""The embedded retail demo's two agents as pytest tests: k trials each, one verdict per test.

Every test runs one scripted agent (``ek.agents.demo``: ``baseline_agent()`` on ``demo-large``,
``candidate_agent()`` on the ten-times-cheaper ``demo-small``) on one task of the demo suite,
five times, and passes when pass^2 (the chance that two trials drawn from the five both succeed)
is at least 0.5. Success is the world's own check: the database after the agent's calls equals
the task's gold state (``replayed_state_match``). ``ek_episode`` is the trial's context (the
agents read its ``trial`` and ``seed``) and records each episode with its gold and prices, so
the session table shows tool-call and trajectory scores and $/success beside the verdict::

    pytest examples/test_agent_with_pytest.py          # ek-agents installed: the plugin loads
    pytest -p ek.agents.pytest_plugin examples/test_agent_with_pytest.py     # with autoloading off

Both agents are flaky: the baseline fails a few of its 30 tests (hard refunds), the candidate,
less reliable on refunds, about three times as many; the session table shows each test's success
interval, pass^2, $/success, tool-call and trajectory scores.

The gate in CI compares the *same* tests across two versions of the agent (a different set of
tests is a different experiment, and the gate refuses it). ``test_agent`` runs the agent that
``EK_DEMO_AGENT`` names: freeze the baseline's session, then gate the candidate's against it
(exit 1 only on a statistically supported regression, as ``ek-agents gate`` decides; here the
success rate, tool calls and trajectory regress)::

    EK_DEMO_AGENT=baseline pytest examples/test_agent_with_pytest.py -k test_agent \\
        --ek-save-baseline base.json
    EK_DEMO_AGENT=candidate pytest examples/test_agent_with_pytest.py -k test_agent \\
        --ek-baseline base.json --ek-store candidate.jsonl         # exit 1: a regression
    ek-agents report candidate.jsonl
"""

from __future__ import annotations

import os

import pytest

from ek.agents.demo import (
    DEMO_PRICES,
    baseline_agent,
    candidate_agent,
    load_tasks,
    replayed_state_match,
)

TASKS = load_tasks()
IDS = [t.task_id for t in TASKS]


@pytest.mark.ek(trials=5, pass_hat_k=2, at_least=0.5)
@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_baseline_agent(task, ek_episode):
    ep = baseline_agent()(task, ek_episode)
    ek_episode.record(ep, gold=task, prices=DEMO_PRICES)
    assert replayed_state_match(ep, task), f"final state differs from the gold ({task.task_id})"


@pytest.mark.ek(trials=5, pass_hat_k=2, at_least=0.5)
@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_candidate_agent(task, ek_episode):
    ep = candidate_agent()(task, ek_episode)
    ek_episode.record(ep, gold=task, prices=DEMO_PRICES)
    assert replayed_state_match(ep, task), f"final state differs from the gold ({task.task_id})"


AGENTS = {"baseline": baseline_agent, "candidate": candidate_agent}


@pytest.mark.ek(trials=5, pass_hat_k=2, at_least=0.5)
@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_agent(task, ek_episode):
    """The agent that EK_DEMO_AGENT names (default: the baseline), for the gate across versions."""
    agent = AGENTS[os.environ.get("EK_DEMO_AGENT", "baseline")]()
    ep = agent(task, ek_episode)
    ek_episode.record(ep, gold=task, prices=DEMO_PRICES)
    assert replayed_state_match(ep, task), f"final state differs from the gold ({task.task_id})"
