"""The conversation driver: the agent and the simulated user take turns, recorded in an Episode.

:func:`aconverse` (and its sync twin :func:`converse`) runs one conversation: the simulator
opens (user turn 0), then the agent replies to the conversation so far, then the user, until
the user stops (the scenario's stop marker, or a reply marked ``stop``), the agent ends it
(``{"done": True}``), the scenario's ``max_turns`` user turns were said, or the trial's budget
is spent. The episode records it:

* ``metadata["messages"]``: every turn as a chat message with its role, ``"user"`` or
  ``"assistant"`` (an agent turn's tool calls in its ``tool_calls``, so the message bridge and
  :mod:`ek.agents.policy` place the turns among the calls; a user turn that stopped has
  ``"stop": True``, calls a simulator tried to make are its ``attempted_calls``);
* ``metadata["conversation"]``: how it ``ended`` (``"simulator"``, ``"agent"``,
  ``"turn_limit"`` or ``"budget: <limit>"``), the ``seed`` and the ``simulator``'s identity;
* the agent's tool calls as the trajectory, its last text as the output, its last
  ``final_state``;
* the costs: the agent's under its role (``"agent"``: Cost-of-Pass counts them) and the
  simulator's under ``"simulator"`` (reported beside, never in Cost-of-Pass).

**The conversational agent** is a callable (sync or async) ``agent(conversation)`` taking a
:class:`Conversation` (the task, the messages so far, the trial context and seed) and
returning its turn: text, or a mapping with ``content`` and optionally ``trajectory`` (its tool
calls this turn), ``cost``, ``final_state`` and ``done``.

**In run_suite**, :class:`ConversationAgent` is the agent: it converses on the task's scenario
and sets apart trials the simulator spoiled (:func:`~ek.agents.simulate.check_simulator` finds a
fault, whatever the verdict: a leaked answer inflates a pass): the conversation is re-run with
a fresh seed (the agent's context and the simulator's) up to ``max_reruns`` times; the reruns
are recorded in ``metadata["conversation"]["spoiled"]``, and a trial still spoiled raises
:class:`SimulatorSpoiledError`, an infrastructure error (:mod:`ek.agents.harness`): not a
trial, counted and persisted apart. A simulator that raises is a :class:`SimulatorError`, also
infrastructure.

Example:
    >>> from ek.agents.base import TaskSpec
    >>> from ek.agents.simulate import Scenario, ScriptedSimulator
    >>> task = TaskSpec("t", scenario=Scenario(script=["hello", "bye"]))
    >>> ep = converse(lambda conv: f"echo {conv.last_user_message}", task, ScriptedSimulator())
    >>> [(m["role"], m["content"]) for m in ep.metadata["messages"]]
    [('user', 'hello'), ('assistant', 'echo hello'), ('user', 'bye'), ('assistant', 'echo bye'), ('user', '###STOP###')]
    >>> ep.output, ep.metadata["conversation"]["ended"]
    ('echo bye', 'simulator')
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek._validate import count, short_repr
from ek.agents import InfraError
from ek.agents.base import Cost, Episode, RunProvenance, Step, TaskSpec, Trajectory
from ek.calling import acall, call

from ._attribution import check_simulator
from ._scenario import Scenario
from ._simulators import (
    SimulatorView,
    UserTurn,
    as_user_turn,
    last_said,
    simulator_id,
    simulator_identity,
)

__all__ = [
    "Conversation",
    "ConversationAgent",
    "SimulatorError",
    "SimulatorSpoiledError",
    "aconverse",
    "conversational",
    "converse",
    "rerun_seed",
    "scenario_of",
]


class SimulatorError(InfraError):
    """The simulator failed (raised, or replied with something that is not a turn)."""


class SimulatorSpoiledError(InfraError):
    """The simulator spoiled every run of the trial (a fault found each time, see
    :func:`~ek.agents.simulate.check_simulator`): the trial is set apart like an infrastructure error."""


@dataclass(frozen=True)
class Conversation:
    """What the agent sees on its turn.

    Attributes:
        task: The task.
        messages: The conversation so far (``{"role", "content"}`` dicts; the user spoke last).
        context: The trial's :class:`~ek.agents.harness.TrialContext` (``None`` outside a run).
        seed: The conversation's seed.
    """

    task: TaskSpec
    messages: tuple[Mapping[str, Any], ...]
    context: Any = None
    seed: int = 0

    @property
    def last_user_message(self) -> str:
        """The user's latest text."""
        return last_said(self.messages, "user")


def scenario_of(task: TaskSpec) -> Scenario:
    """The task's scenario.

    Raises:
        ValueError: a task without one.
    """
    sc = getattr(task, "scenario", None)
    if not isinstance(sc, Scenario):
        raise ValueError(
            f"task {task.task_id!r} has no scenario (TaskSpec(scenario=Scenario(...))): a "
            "conversation needs one"
        )
    return sc


@dataclass
class _Talk:
    """The conversation being recorded."""

    messages: list[dict[str, Any]]
    steps: list[Step]
    costs: list[Cost]
    output: Any = None
    final_state: Any = None
    ended: str = "turn_limit"
    error: str | None = None


async def _user_turn(simulator: Any, view: SimulatorView) -> UserTurn:
    try:
        return as_user_turn(await acall(simulator, (view,)), view.scenario)
    except Exception as e:
        raise SimulatorError(
            f"the simulator failed on user turn {view.turn}: {type(e).__name__}: {e}"
        ) from e


def _agent_turn(raw: Any) -> tuple[str, Sequence[Any], tuple[Cost, ...], Mapping[str, Any]]:
    """(text, steps, costs, the rest) of the agent's turn."""
    if isinstance(raw, str):
        return raw, (), (), {}
    if not isinstance(raw, Mapping):
        raise TypeError(
            "a conversational agent returns text or a mapping with 'content', got "
            f"{type(raw).__name__}: {short_repr(raw)}"
        )
    text = raw.get("content", "")
    if not isinstance(text, str):
        raise TypeError(f"the agent's turn 'content' must be text, got {short_repr(text)}")
    steps = Trajectory(raw.get("trajectory") or ()).steps
    return text, steps, Cost.several(raw.get("cost")), raw


def _record_user(talk: _Talk, turn: UserTurn) -> None:
    msg: dict[str, Any] = {"role": "user", "content": turn.text}
    if turn.stop:
        msg["stop"] = True
    if turn.tool_calls:  # a user has no tools: kept apart from the agent's calls
        msg["attempted_calls"] = [short_repr(c, 500) for c in turn.tool_calls]
    talk.messages.append(msg)
    if turn.cost is not None:
        role = turn.cost.role if turn.cost.role != "agent" else "simulator"
        talk.costs.append(dataclasses.replace(turn.cost, role=role))


def _call(step: Step, n: int) -> dict[str, Any]:
    """A tool call as the chat messages hold it (what the message bridge and policies read)."""
    fn = {"name": step.tool, "arguments": dict(step.args)}
    return {"id": step.id or f"call_{n}", "type": "function", "function": fn}


def _record_agent(talk: _Talk, raw: Any) -> bool:
    """Record the agent's turn; True when the agent ended the conversation."""
    text, steps, costs, rest = _agent_turn(raw)
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if steps:
        msg["tool_calls"] = [_call(s, len(talk.steps) + j) for j, s in enumerate(steps)]
    talk.steps += steps
    talk.costs += costs
    talk.messages.append(msg)
    talk.output = text
    if "final_state" in rest:
        talk.final_state = rest["final_state"]
    return bool(rest.get("done", False))


def _over_budget(context: Any, talk: _Talk) -> str | None:
    if context is None or getattr(context, "budget", None) is None:
        return None
    left = context.remaining(talk.steps, talk.costs)
    over = sorted(k for k, v in left.items() if v is not None and v < 0)
    return f"budget: {over[0]}" if over else None


async def _talk(
    agent: Any, task: TaskSpec, simulator: Any, sc: Scenario, context: Any, seed: int
) -> _Talk:
    talk = _Talk([], [], [])
    for turn in range(sc.max_turns):
        view = SimulatorView(sc, tuple(talk.messages), turn, seed)
        said = await _user_turn(simulator, view)
        _record_user(talk, said)
        if said.stop:
            talk.ended = "simulator"
            return talk
        raw = await acall(agent, (Conversation(task, tuple(talk.messages), context, seed),))
        done = _record_agent(talk, raw)
        talk.error = _over_budget(context, talk)
        if talk.error is not None:
            talk.ended = talk.error
            return talk
        if done:
            talk.ended = "agent"
            return talk
    return talk


async def aconverse(
    agent: Callable[..., Any],
    task: TaskSpec,
    simulator: Any,
    *,
    context: Any = None,
    seed: int | None = None,
) -> Episode:
    """Run one conversation on ``task``'s scenario (see the module docstring).

    Args:
        agent: ``agent(conversation) -> turn``, sync or async.
        task: A :class:`~ek.agents.base.TaskSpec` with a ``scenario``.
        simulator: The user simulator (e.g. :class:`~ek.agents.simulate.ScriptedSimulator`).
        context: The trial's context (its budget stops the conversation), or ``None``.
        seed: The conversation's seed (default: the context's, else 0).

    Raises:
        ValueError: a task without a scenario.
        SimulatorError: the simulator failed (an infrastructure error).
        Exception: whatever the agent raises, unchanged (the agent's failure).
    """
    sc = scenario_of(task)
    if seed is None:
        seed = int(getattr(context, "seed", 0) or 0)
    seed = count("seed", seed)
    t0 = time.perf_counter()
    talk = await _talk(agent, task, simulator, sc, context, seed)
    conv = {"ended": talk.ended, "seed": seed, "simulator": simulator_id(simulator)}
    return Episode(
        task.task_id,
        trajectory=Trajectory(talk.steps),
        output=talk.output,
        final_state=talk.final_state,
        cost=tuple(talk.costs),
        error=talk.error,
        input=task.input,
        duration=time.perf_counter() - t0,
        metadata={"messages": talk.messages, "conversation": conv},
    )


def converse(
    agent: Callable[..., Any],
    task: TaskSpec,
    simulator: Any,
    *,
    context: Any = None,
    seed: int | None = None,
) -> Episode:
    """:func:`aconverse` from synchronous code (no event loop may be running)."""
    return call(lambda: aconverse(agent, task, simulator, context=context, seed=seed))


def rerun_seed(seed: int, rerun: int) -> int:
    """The fresh seed of the ``rerun``-th re-run of a conversation first run with ``seed``.

    Example:
        >>> rerun_seed(7, 1) == rerun_seed(7, 1) != rerun_seed(7, 2)
        True
    """
    h = hashlib.sha256(f"simulator-rerun\x1f{seed}\x1f{rerun}".encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


class ConversationAgent:
    """The agent ``run_suite`` calls for conversational tasks: converses, sets spoiled trials
    apart (see the module docstring).

    Args:
        agent: The conversational agent, ``agent(conversation) -> turn``.
        simulator: The user simulator.
        max_reruns: Re-runs with a fresh seed of a conversation the simulator spoiled (>= 0).

    Attributes:
        simulator_id: The simulator's identity string (the run's ``RunProvenance.simulator``).
    """

    def __init__(self, agent: Callable[..., Any], simulator: Any, *, max_reruns: int = 2) -> None:
        if not callable(agent):
            raise TypeError(f"agent must be a callable, got {short_repr(agent)}")
        if not callable(simulator):
            raise TypeError(
                f"simulator must be a callable view -> turn, got {short_repr(simulator)}"
            )
        self.agent = agent
        self.simulator = simulator
        self.max_reruns = count("max_reruns", max_reruns)
        self.simulator_id = simulator_id(simulator)

    async def __call__(self, task: TaskSpec, context: Any = None) -> Episode:
        sc = scenario_of(task)
        first = int(getattr(context, "seed", 0) or 0)
        spoiled: list[dict[str, Any]] = []
        for rerun in range(self.max_reruns + 1):
            seed = first if rerun == 0 else rerun_seed(first, rerun)
            ctx = (
                context
                if rerun == 0 or context is None
                else dataclasses.replace(context, seed=seed)
            )
            ep = await aconverse(self.agent, task, self.simulator, context=ctx, seed=seed)
            faults = check_simulator(ep.metadata["messages"], sc)
            if not faults:
                conv = {**ep.metadata["conversation"], "spoiled": spoiled}
                return ep.replace(metadata={**ep.metadata, "conversation": conv})
            spent = [c.to_dict() for c in ep.cost]
            spoiled.append({"seed": seed, "faults": [f.to_dict() for f in faults], "cost": spent})
        kinds = sorted({f["kind"] for s in spoiled for f in s["faults"]})
        raise SimulatorSpoiledError(
            f"the simulator spoiled all {len(spoiled)} runs of task {task.task_id!r} "
            f"({', '.join(kinds)}); first: {spoiled[0]['faults'][0]['reason']}"
        )

    def identity(self) -> dict[str, Any]:
        """The simulator's identity (see :func:`~ek.agents.simulate.simulator_identity`)."""
        return simulator_identity(self.simulator)

    def ek_config(self) -> dict[str, Any]:
        """What a store records of this agent: the conversational agent, the simulator's
        identity and the re-run limit."""
        return {"agent": self.agent, "simulator": self.simulator_id, "max_reruns": self.max_reruns}


def conversational(
    agent: Callable[..., Any],
    tasks: Sequence[TaskSpec],
    run: RunProvenance,
    simulator: Any = None,
    *,
    max_reruns: int = 2,
) -> tuple[Callable[..., Any], RunProvenance]:
    """The agent and provenance a suite runs with: what ``run_suite(simulator=...)`` does.

    With a ``simulator``, ``agent`` is a conversational agent and is wrapped in a
    :class:`ConversationAgent`. A conversational run (that, or an agent that is one already)
    needs a scenario on every task, and its provenance names its simulator: filled in when
    ``run.simulator`` is unset, refused when it names another.

    Raises:
        ValueError: a task without a scenario; ``run.simulator`` naming another simulator; a
            simulator given to an agent that has one.

    Example:
        >>> from ek.agents.base import RunProvenance
        >>> from ek.agents.simulate import Scenario, ScriptedSimulator
        >>> agent, run = conversational(lambda c: "ok", [TaskSpec("t", scenario=Scenario())],
        ...                             RunProvenance(), ScriptedSimulator())
        >>> type(agent).__name__, run.simulator
        ('ConversationAgent', 'scripted@1')
    """
    if simulator is not None:
        if isinstance(agent, ConversationAgent):
            raise ValueError(
                "the agent is a ConversationAgent with its own simulator; give the simulator "
                "once (simulator= with the conversational agent itself, or the ConversationAgent)"
            )
        agent = ConversationAgent(agent, simulator, max_reruns=max_reruns)
    if not isinstance(agent, ConversationAgent):
        return agent, run
    missing = [t.task_id for t in tasks if t.scenario is None]
    if missing:
        raise ValueError(
            f"a conversational run needs a scenario on every task; {len(missing)} have none: "
            f"{missing[:5]}"
        )
    if run.simulator is None:
        return agent, dataclasses.replace(run, simulator=agent.simulator_id)
    if run.simulator != agent.simulator_id:
        raise ValueError(
            f"run.simulator is {run.simulator!r} but the simulator that runs is "
            f"{agent.simulator_id!r}: the provenance the gate compares must name it (leave "
            "run.simulator unset and it is filled in)"
        )
    return agent, run
