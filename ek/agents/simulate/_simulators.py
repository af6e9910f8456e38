"""User simulators: the seam, and the three kinds ek ships (scripted, rule-based, LLM-backed).

A **simulator** is any callable (sync or async) ``simulator(view) -> reply``: ``view`` is a
:class:`SimulatorView` (the scenario, the conversation so far, the user turn's index and its
seed); the reply is a :class:`UserTurn`, a str (the user's text; it stops the conversation
when it contains the scenario's stop marker), or a mapping with ``content`` and optionally
``stop``, ``cost`` and ``tool_calls``. ek imports no LLM SDK: an LLM-backed simulator is
:class:`LLMSimulator` around *your* callable, messages in, text out.

A simulator names itself with an optional ``identity()`` method returning ``{"kind", "model",
"prompt_digest", "version"}``; :func:`simulator_id` makes the one string the run's provenance
records (``RunProvenance.simulator``), so the gate refuses to compare runs whose simulator
changed.

Example:
    >>> sim = ScriptedSimulator()
    >>> sc = Scenario(script=["I want a refund for #W1001"])
    >>> sim(SimulatorView(sc, (), 0, 0)).text, sim(SimulatorView(sc, (), 1, 0)).stop
    ('I want a refund for #W1001', True)
    >>> simulator_id(sim)
    'scripted@1'
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import check_mapping, count, nonempty_str, short_repr
from ek.agents.base import Cost
from ek.calling import acall, is_async_callable

from ._scenario import Scenario

__all__ = [
    "DEFAULT_PROMPT",
    "LLMSimulator",
    "RuleSimulator",
    "ScriptedSimulator",
    "SimulatorView",
    "UserTurn",
    "as_user_turn",
    "last_said",
    "simulator_id",
    "simulator_identity",
]


@dataclass(frozen=True)
class SimulatorView:
    """What a simulator sees when it speaks.

    Attributes:
        scenario: The task's :class:`~ek.agents.simulate.Scenario`.
        messages: The conversation so far: ``{"role": "user" | "assistant", "content": str}``
            dicts (the agent is ``"assistant"``).
        turn: The index of the user turn to write (0 for the opening).
        seed: The conversation's seed (the trial's, or a fresh one on a re-run).
    """

    scenario: Scenario
    messages: tuple[Mapping[str, Any], ...]
    turn: int
    seed: int

    @property
    def rng(self) -> random.Random:
        """A ``random.Random`` seeded by the conversation's seed and the turn: reproducible."""
        return random.Random(f"{self.seed}:{self.turn}")

    @property
    def last_agent_message(self) -> str:
        """The agent's latest text (``""`` before the agent has spoken)."""
        return last_said(self.messages, "assistant")


def last_said(messages: Sequence[Mapping[str, Any]], role: str) -> str:
    """The latest text of ``role`` in ``messages`` (``""`` when it has not spoken).

    Example:
        >>> last_said([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "?"}], "user")
        'hi'
    """
    for m in reversed(messages):
        if m.get("role") == role:
            return str(m.get("content", ""))
    return ""


@dataclass(frozen=True)
class UserTurn:
    """One turn of the simulated user.

    Attributes:
        text: What the user says.
        stop: The user ends the conversation with this turn.
        cost: What producing it cost (role ``"simulator"``), or ``None``.
        tool_calls: Tool calls the simulator tried to make (a user has no tools: breaking role).
    """

    text: str
    stop: bool = False
    cost: Cost | None = None
    tool_calls: tuple[Any, ...] = field(default_factory=tuple)


def as_user_turn(raw: Any, scenario: Scenario) -> UserTurn:
    """A simulator's reply as a :class:`UserTurn` (a str or mapping read; the stop marker in
    the text stops the conversation).

    Raises:
        TypeError: a reply that is none of the accepted forms (a simulator fault, named).

    Example:
        >>> as_user_turn("Thanks! ###STOP###", Scenario()).stop
        True
        >>> as_user_turn({"content": "hi", "cost": {"output_tokens": 3}}, Scenario()).cost.role
        'simulator'
    """
    if isinstance(raw, UserTurn):
        turn = raw
    elif isinstance(raw, str):
        turn = UserTurn(raw)
    elif isinstance(raw, Mapping):
        turn = _turn_from_mapping(raw)
    else:
        raise TypeError(
            "a simulator must return a UserTurn, a str or a mapping with 'content', got "
            f"{type(raw).__name__}: {short_repr(raw)}"
        )
    if scenario.stop in turn.text and not turn.stop:
        turn = UserTurn(turn.text, True, turn.cost, turn.tool_calls)
    return turn


def _turn_from_mapping(raw: Mapping[str, Any]) -> UserTurn:
    text = raw.get("content", raw.get("text"))
    if not isinstance(text, str):
        raise TypeError(f"a simulator's reply needs 'content' text, got {short_repr(raw)}")
    cost = raw.get("cost")
    if isinstance(cost, Mapping):
        cost = Cost.from_dict({"role": "simulator", **cost})
    if cost is not None and not isinstance(cost, Cost):
        raise TypeError(
            f"a simulator's reply 'cost' must be a Cost or mapping, got {short_repr(cost)}"
        )
    calls = raw.get("tool_calls") or ()
    return UserTurn(text, bool(raw.get("stop", False)), cost, tuple(calls))


def simulator_identity(simulator: Any) -> dict[str, Any]:
    """``{"kind", "model", "prompt_digest", "version"}`` of ``simulator`` (its ``identity()``,
    else its class or function name with kind ``"custom"``)."""
    ident = getattr(simulator, "identity", None)
    if callable(ident):
        return dict(check_mapping("simulator.identity()", ident()))
    name = getattr(simulator, "__qualname__", None) or type(simulator).__qualname__
    return {"kind": "custom", "model": name, "version": None, "prompt_digest": None}


def simulator_id(simulator: Any) -> str:
    """The one string a run's provenance records for ``simulator``:
    ``kind[:model]@version[#prompt_digest]``."""
    d = simulator_identity(simulator)
    out = str(d.get("kind") or "custom")
    if d.get("model"):
        out += f":{d['model']}"
    out += f"@{d.get('version') or '?'}"
    if d.get("prompt_digest"):
        out += f"#{d['prompt_digest']}"
    return out


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class ScriptedSimulator:
    """Says the scenario's ``script`` line by line, then stops (the turns listed in the task)."""

    def __call__(self, view: SimulatorView) -> UserTurn:
        script = view.scenario.script
        if view.turn < len(script):
            return UserTurn(script[view.turn])
        return UserTurn(view.scenario.stop, stop=True)

    def identity(self) -> dict[str, Any]:
        """Kind ``"scripted"``: the script itself is part of the task (the suite fingerprint)."""
        return {"kind": "scripted", "model": None, "prompt_digest": None, "version": "1"}


class RuleSimulator:
    """Answers the agent's latest message by rules: the first ``(regex, reply)`` whose regex
    matches (case-insensitive) gives the reply, formatted with the scenario's facts
    (``"My order is {order_id}"``); no rule matching ends the conversation.

    Args:
        rules: ``(regex, reply)`` pairs, tried in order.
        opening: The first user turn (default: the scenario's first script line, else its
            instructions).
        version: Bump it when the rules change meaning.

    Example:
        >>> sim = RuleSimulator([("order", "It is {order_id}.")])
        >>> v = SimulatorView(Scenario(facts={"order_id": "#W1"}),
        ...                   ({"role": "assistant", "content": "Your order id?"},), 1, 0)
        >>> sim(v).text
        'It is #W1.'
    """

    def __init__(
        self, rules: Sequence[tuple[str, str]], *, opening: str | None = None, version: str = "1"
    ) -> None:
        if isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence):
            raise TypeError(
                f"rules must be a list of (regex, reply) pairs, got {short_repr(rules)}"
            )
        compiled = []
        for i, rule in enumerate(rules):
            if not (
                isinstance(rule, (tuple, list))
                and len(rule) == 2
                and all(isinstance(x, str) for x in rule)
            ):
                raise TypeError(
                    f"rules[{i}] must be a (regex, reply) pair of str, got {short_repr(rule)}"
                )
            try:
                compiled.append((re.compile(rule[0], re.IGNORECASE), rule[1]))
            except re.error as e:
                raise ValueError(
                    f"rules[{i}] is not a regular expression ({e}): {rule[0]!r}"
                ) from None
        self.rules = tuple((p.pattern, r) for p, r in compiled)
        self._compiled = tuple(compiled)
        self.opening = opening
        self.version = nonempty_str("RuleSimulator.version", version)

    def __call__(self, view: SimulatorView) -> UserTurn:
        sc = view.scenario
        if view.turn == 0:
            first = (
                self.opening
                if self.opening is not None
                else (sc.script[0] if sc.script else sc.instructions)
            )
            return UserTurn(first)
        said = view.last_agent_message
        for pattern, reply in self._compiled:
            if pattern.search(said):
                return UserTurn(reply.format_map(dict(sc.facts)))
        return UserTurn(sc.stop, stop=True)

    def identity(self) -> dict[str, Any]:
        """Kind ``"rules"``, digest of the rules and the opening."""
        digest = _digest([list(self.rules), self.opening])
        return {"kind": "rules", "model": None, "prompt_digest": digest, "version": self.version}


#: The LLM simulator's default system prompt (``str.format`` fields: persona, instructions,
#: facts, goals, stop).
DEFAULT_PROMPT = (
    "You are a user talking to a customer-service agent. Stay in the user's role: never act "
    "as the agent, never call tools.\n"
    "Who you are: {persona}\n"
    "What you want: {instructions}\n"
    "What you know and may say (say nothing else, invent nothing): {facts}\n"
    "Make sure you ask for each of: {goals}\n"
    "When everything is done, or the agent cannot help, reply with {stop} alone."
)


class LLMSimulator:
    """A simulated user played by a language model: ``model(messages) -> text`` (sync or async).

    The model receives a system message (``prompt`` filled from the scenario; only the facts the
    user may disclose are listed) and the conversation with the roles seen from the user's side
    (the agent's turns as ``"user"``, the simulated user's as ``"assistant"``), as tau-bench
    does. It returns text, or a mapping / object with ``content`` and a ``usage`` mapping of
    ek's token kinds (recorded as a :class:`~ek.agents.base.Cost` of role ``"simulator"`` and
    model ``model_name``). A callable that accepts a ``seed`` keyword receives the turn's seed.

    Args:
        model: The callable.
        model_name: The model's name (provenance, prices).
        version: Bump it when the callable's behaviour changes in a way the name does not show.
        prompt: The system prompt template (default :data:`DEFAULT_PROMPT`).
    """

    def __init__(
        self,
        model: Callable[..., Any],
        *,
        model_name: str,
        version: str = "1",
        prompt: str = DEFAULT_PROMPT,
    ) -> None:
        if not callable(model):
            raise TypeError(f"model must be a callable messages -> text, got {short_repr(model)}")
        self.model = model
        self.model_name = nonempty_str("LLMSimulator.model_name", model_name)
        self.version = nonempty_str("LLMSimulator.version", version)
        self.prompt = nonempty_str("LLMSimulator.prompt", prompt)
        self._seeded = _accepts_seed(model)

    def messages(self, view: SimulatorView) -> list[dict[str, str]]:
        """The messages the model receives for ``view``."""
        sc = view.scenario
        facts = {k: v for k, v in sc.facts.items() if sc.may_disclose(k)}
        system = self.prompt.format(
            persona=sc.persona,
            instructions=sc.instructions,
            facts=json.dumps(facts, ensure_ascii=False),
            goals=", ".join(sc.goals) or "nothing in particular",
            stop=sc.stop,
        )
        flip = {"assistant": "user", "user": "assistant"}
        return [{"role": "system", "content": system}] + [
            {"role": flip.get(str(m.get("role")), "user"), "content": str(m.get("content", ""))}
            for m in view.messages
        ]

    async def __call__(self, view: SimulatorView) -> UserTurn:
        kwargs = {"seed": view.seed + view.turn} if self._seeded else {}
        raw = await acall(_with_kwargs(self.model, kwargs), (self.messages(view),))
        text, usage = _read_model_reply(raw)
        cost = (
            Cost(**_usage(usage), model=self.model_name, role="simulator")
            if usage is not None
            else None
        )
        return as_user_turn(UserTurn(text, cost=cost), view.scenario)

    def identity(self) -> dict[str, Any]:
        """Kind ``"llm"``: the model name, the prompt's digest and the version."""
        return {
            "kind": "llm",
            "model": self.model_name,
            "prompt_digest": _digest(self.prompt),
            "version": self.version,
        }


def _accepts_seed(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _with_kwargs(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> Callable[..., Any]:
    if not kwargs:
        return fn
    if is_async_callable(fn):

        async def bound_async(messages: Any) -> Any:
            return await fn(messages, **kwargs)

        return bound_async
    return lambda messages: fn(messages, **kwargs)


def _read_model_reply(raw: Any) -> tuple[str, Any]:
    if isinstance(raw, str):
        return raw, None
    if isinstance(raw, Mapping):
        text, usage = raw.get("content"), raw.get("usage")
    else:
        text, usage = getattr(raw, "content", None), getattr(raw, "usage", None)
    if not isinstance(text, str):
        raise TypeError(
            f"the simulator's model must return text or something with 'content' text, got {short_repr(raw)}"
        )
    return text, usage


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def _usage(usage: Any) -> dict[str, int]:
    m = check_mapping("the simulator model's usage", usage)
    return {k: count(f"usage.{k}", m[k]) for k in _USAGE_KEYS if k in m}
