"""A conversation with a simulated user inside Inspect AI: :func:`ek_conversation`.

``Task(dataset=..., solver=ek_conversation(simulator), scorer=...)``: each sample carries its
:class:`~ek.agents.simulate.Scenario` in ``metadata["scenario"]`` (a ``Scenario`` or its dict);
the solver lets the simulated user open, then the task's model answer through ``generate``
(Inspect's own tool loop: ``use_tools`` before it gives the agent its tools), then the user
again, until the user stops, ``max_turns`` user turns were said, or the sample hits one of
Inspect's limits. The user's turns are ``ChatMessageUser`` s in ``state.messages``; what ek
needs to attribute a failure (:func:`ek.agents.simulate.check_simulator`) is kept in
``state.metadata["ek_conversation"]``: the conversation as ek records it, how it ended, the
seed, the simulator's identity and its costs (role ``simulator``; the agent's usage is
Inspect's own ``model_usage``).

The simulator is any ek simulator; :func:`inspect_user_model` makes an Inspect model (e.g. a
``mockllm`` in tests, or another provider's model) the ``messages -> text`` callable of an
:class:`~ek.agents.simulate.LLMSimulator`, with its usage.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ek.agents.simulate import (
    Scenario,
    SimulatorView,
    UserTurn,
    as_scenario,
    as_user_turn,
    simulator_id,
)
from ek.calling import acall

__all__ = ["CONVERSATION_KEY", "ek_conversation", "inspect_user_model"]

#: The ``state.metadata`` key holding ek's record of the conversation.
CONVERSATION_KEY = "ek_conversation"


def _scenario(state: TaskState, key: str) -> Scenario:
    raw = state.metadata.get(key)
    if raw is None:
        raise ValueError(
            f"sample {state.sample_id!r} has no scenario in metadata[{key!r}] (a Scenario or "
            "its dict)"
        )
    return as_scenario(f"sample {state.sample_id!r} metadata[{key!r}]", raw)


def _seed(state: TaskState) -> int:
    h = hashlib.sha256(f"{state.sample_id}\x1f{state.epoch}".encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


def _agent_message(state: TaskState, since: int) -> dict[str, Any]:
    calls = [
        {
            "id": tc.id,
            "type": "function",
            "function": {"name": tc.function, "arguments": dict(tc.arguments)},
        }
        for m in state.messages[since:]
        if isinstance(m, ChatMessageAssistant)
        for tc in (m.tool_calls or [])
    ]
    msg: dict[str, Any] = {"role": "assistant", "content": state.output.completion}
    if calls:
        msg["tool_calls"] = calls
    return msg


def _user_message(turn: UserTurn) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "user", "content": turn.text}
    if turn.stop:
        msg["stop"] = True
    if turn.tool_calls:
        msg["attempted_calls"] = [repr(c)[:500] for c in turn.tool_calls]
    return msg


@solver
def ek_conversation(simulator: Any, *, scenario_key: str = "scenario") -> Solver:
    """A solver that converses with ``simulator`` on each sample's scenario.

    Args:
        simulator: An ek user simulator (``simulator(view) -> reply``, sync or async).
        scenario_key: The sample metadata key holding the scenario.

    Raises:
        ValueError: (per sample) a sample without a scenario.
    """
    sim_id = simulator_id(simulator)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sc = _scenario(state, scenario_key)
        seed = _seed(state)
        conv: list[dict[str, Any]] = []
        costs: list[dict[str, Any]] = []
        ended = "turn_limit"
        for turn in range(sc.max_turns):
            said = as_user_turn(
                await acall(simulator, (SimulatorView(sc, tuple(conv), turn, seed),)), sc
            )
            conv.append(_user_message(said))
            if said.cost is not None:
                costs.append(said.cost.to_dict())
            state.messages.append(ChatMessageUser(content=said.text))
            if said.stop:
                ended = "simulator"
                break
            since = len(state.messages)
            state = await generate(state)
            conv.append(_agent_message(state, since))
            if state.completed:  # an Inspect limit ended the sample
                ended = "limit"
                break
        state.metadata[CONVERSATION_KEY] = {
            "messages": conv,
            "ended": ended,
            "seed": seed,
            "simulator": sim_id,
            "simulator_cost": costs,
        }
        return state

    return solve


_INSPECT_ROLES: dict[str, Callable[..., ChatMessage]] = {
    "system": ChatMessageSystem,
    "user": ChatMessageUser,
    "assistant": ChatMessageAssistant,
}


def inspect_user_model(model: Model | str) -> Callable[[list[dict[str, str]]], Any]:
    """An Inspect model as the ``messages -> {"content", "usage"}`` callable an
    :class:`~ek.agents.simulate.LLMSimulator` takes (usage in ek's token kinds).

    Example:
        >>> from ek.agents.simulate import LLMSimulator
        >>> sim = LLMSimulator(inspect_user_model("mockllm/model"), model_name="mockllm/model")
        >>> sim.identity()["model"]
        'mockllm/model'
    """
    m = get_model(model) if isinstance(model, str) else model

    async def user_model(messages: list[dict[str, str]]) -> dict[str, Any]:
        msgs = [_INSPECT_ROLES[x["role"]](content=x["content"]) for x in messages]
        out = await m.generate(msgs)
        u = out.usage
        usage = None
        if u is not None:
            usage = {
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cache_read_tokens": u.input_tokens_cache_read or 0,
                "cache_write_tokens": u.input_tokens_cache_write or 0,
                "reasoning_tokens": u.reasoning_tokens or 0,
            }
        return {"content": out.completion, "usage": usage}

    return user_model
