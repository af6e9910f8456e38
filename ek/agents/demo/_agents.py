"""Two seeded, stochastic, scripted agents for the demo world (no model, no network).

Each agent reads the task's structured intent (``task.metadata["intent"]``: what a language model
would extract from the request text), then walks the shop's tools like a tool-calling model:
look-ups first, then the write. Its mistakes are drawn from a seeded random generator, with
rates set per slice and difficulty by an :class:`ErrorProfile`: a malformed id that the shop
refuses (a failed call, retried), the wrong order picked because it stopped scanning early, the
wrong destructive tool tried first, a wrong refund amount or reason, an unneeded look-up, giving
up. Every trial is a real trajectory through :func:`~ek.agents.demo.call_tool`, so its
final state is the database its calls left behind.

Token usage is simulated per model call, by kind (:class:`~ek.agents.base.Cost`): uncached input,
prompt-cache reads (the static system prompt and tool schemas, and the conversation already
seen), and output including reasoning.

* :func:`baseline_agent`: ``demo-large``, a reasoning model; reliable.
* :func:`candidate_agent`: ``demo-small``, far cheaper per token, as good on look-ups but
  **clearly less reliable on the refund slice** (refunds and cancellations).

Example:
    >>> from ek.agents.base import RunProvenance
    >>> from ek.agents.demo import load_tasks
    >>> from ek.agents.harness import TrialContext
    >>> task = load_tasks()[0]
    >>> ctx = TrialContext(task.task_id, trial=0, seed=7, run=RunProvenance(seed=7), k=1)
    >>> ep = baseline_agent()(task, ctx)
    >>> ep == baseline_agent()(task, ctx)     # seeded: reproducible
    True
    >>> ep.trajectory.tools[-1], ep.agent_cost.model
    ('refund_order', 'demo-large')
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ek.agents._episode import Cost, Episode, Step, Trajectory
from ek.agents._spec import TaskSpec

from ._world import CANCEL_REASONS, REFUND_REASONS, Db, call_tool, initial_db

__all__ = [
    "PERFECT",
    "ErrorProfile",
    "ScriptedAgent",
    "TokenModel",
    "baseline_agent",
    "candidate_agent",
    "oracle_agent",
]


@dataclass(frozen=True)
class ErrorProfile:
    """Per-decision error rates of a scripted agent on one kind of task (each in [0, 1]).

    Args:
        typo: A look-up with a malformed id or e-mail (refused; the agent retries correctly).
        lazy: Stops scanning a customer's orders at the first match instead of the one asked for.
        status_slip: Ignores the status filter, tries the write on the wrong order (refused),
            then recovers half of the time and gives up otherwise.
        wrong_tool: Tries the other destructive tool first (refused), then the right one.
        amount: Refunds the unit price instead of the line total, or the whole order instead of
            one item.
        reason: Records a wrong reason.
        skip_verify: Writes without reading the order first (same final state, a shorter
            trajectory).
        extra: Adds an unneeded ``check_stock`` look-up.
        give_up: Hands the customer to a human without acting.
        no_retry: After a look-up that failed because the tool itself failed (an injected
            fault, :mod:`ek.agents._faults`), goes on without retrying it. Drawn only after
            such a failure, so a clean run's draws are unchanged.
    """

    typo: float = 0.0
    lazy: float = 0.0
    status_slip: float = 0.0
    wrong_tool: float = 0.0
    amount: float = 0.0
    reason: float = 0.0
    skip_verify: float = 0.0
    extra: float = 0.0
    give_up: float = 0.0
    no_retry: float = 0.0

    def __post_init__(self) -> None:
        for k, v in self.__dict__.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise ValueError(f"ErrorProfile.{k} must be a probability in [0, 1], got {v!r}")


#: The error-free profile (the oracle that produced the suite's gold calls).
PERFECT = ErrorProfile()


@dataclass(frozen=True)
class TokenModel:
    """How many tokens one model call uses (simulated).

    Args:
        model: The model name recorded in each :class:`~ek.agents.base.Cost`.
        prefix_tokens: System prompt and tool schemas: a prompt-cache read on every call.
        output: ``(low, high)`` visible output tokens per call.
        reasoning: ``(low, high)`` reasoning tokens per call (billed as output).
        cache: Whether the provider caches the conversation already seen (else it is re-sent as
            uncached input on every call).
    """

    model: str
    prefix_tokens: int = 1500
    output: tuple[int, int] = (25, 70)
    reasoning: tuple[int, int] = (0, 0)
    cache: bool = True


class _Usage:
    """Accumulates the usage of one trial's model calls."""

    def __init__(self, tm: TokenModel, rng: random.Random, task_tokens: int) -> None:
        self.tm, self.rng = tm, rng
        self.context = task_tokens  # conversation tokens beyond the static prefix
        self.seen = 0  # conversation tokens already in the provider's cache
        self.inp = self.cache_read = self.out = self.reasoning = 0
        self.calls: list[Cost] = []  # one Cost per model call

    def model_call(self, observation_tokens: int = 0) -> None:
        tm = self.tm
        self.context += observation_tokens
        new = self.context - self.seen if tm.cache else self.context
        cached = tm.prefix_tokens + (self.seen if tm.cache else 0)
        r = self.rng.randint(*tm.reasoning) if tm.reasoning[1] else 0
        o = self.rng.randint(*tm.output)
        self.inp += new
        self.cache_read += cached
        self.reasoning += r
        self.out += r + o
        self.calls.append(
            Cost(
                input_tokens=new,
                cache_read_tokens=cached,
                output_tokens=r + o,
                reasoning_tokens=r,
                model=tm.model,
            )
        )
        self.seen = self.context
        self.context += o  # the call's visible output joins the conversation (reasoning does not)

    def cost(self) -> Cost:
        return Cost(
            input_tokens=self.inp,
            cache_read_tokens=self.cache_read,
            output_tokens=self.out,
            reasoning_tokens=self.reasoning,
            model=self.tm.model,
        )


class _Refused(Exception):
    """The shop refused a call (its own error, not an injected fault)."""


def _tokens(x: Any) -> int:
    return max(8, len(repr(x)) // 4)


class _Trial:
    """One trial: the database, the steps so far, the usage, and the random draws."""

    def __init__(
        self,
        task: TaskSpec,
        profile: ErrorProfile,
        tm: TokenModel,
        rng: random.Random,
        context: Any = None,
    ):
        self.task, self.p, self.rng = task, profile, rng
        # the harness's context hands out the tools (wrapped under an injected fault)
        self.tool_hook = getattr(context, "tool", None) if getattr(context, "fault", None) else None
        self.db: Db = initial_db()
        self.steps: list[Step] = []
        self.usage = _Usage(tm, rng, _tokens(task.input))
        self.orders: dict[str, dict[str, Any]] = {}
        self.customer: dict[str, Any] | None = None
        self.notes: list[str] = []

    def chance(self, p: float) -> bool:
        # Always draw, so that one rate's value never shifts the stream of the later draws.
        return self.rng.random() < p

    def call(self, tool: str, args: Mapping[str, Any]) -> Step:
        self.usage.model_call()
        if self.tool_hook is None:
            self.db, step = call_tool(self.db, tool, args)
        else:
            step = self.faultable_call(tool, args)
        self.steps.append(step)
        self.usage.context += _tokens(step.observation if step.error is None else step.error)
        return step

    def faultable_call(self, tool: str, args: Mapping[str, Any]) -> Step:
        """One call through the tool the context hands out: an injected fault is a failed
        step (``error`` says so) or a corrupted observation, as a real flaky tool gives."""

        def real(a: Mapping[str, Any]) -> Any:
            self.db, step = call_tool(self.db, tool, a)
            if step.error is not None:
                raise _Refused(step.error)
            return step.observation

        fn = self.tool_hook(tool, real)  # type: ignore[misc]
        try:
            return Step(tool, dict(args), observation=fn(args))
        except _Refused as e:
            return Step(tool, dict(args), error=str(e))
        except Exception as e:  # an injected fault: the tool, not the shop, failed
            return Step(tool, dict(args), error=f"tool failure: {type(e).__name__}: {e}")

    # -- look-ups
    def get_order(self, oid: str) -> dict[str, Any] | None:
        if self.chance(self.p.typo):
            self.call("get_order", {"order_id": oid.replace("O", "0", 1)})
        s = self.call("get_order", {"order_id": oid})
        while s.failed and (s.error or "").startswith("tool failure") and len(self.steps) < 40:
            if self.chance(self.p.no_retry):
                return None
            s = self.call("get_order", {"order_id": oid})
        if s.failed or not isinstance(s.observation, dict):
            return None
        self.orders[oid] = s.observation
        return s.observation

    def find_customer(self, email: str) -> dict[str, Any] | None:
        if self.customer is not None:
            return self.customer
        if self.chance(self.p.typo):
            self.call("find_customer", {"email": email.replace("@", "", 1)})
        s = self.call("find_customer", {"email": email})
        if s.failed:
            return None
        s2 = self.call("get_customer", {"customer_id": s.observation["customer_id"]})
        self.customer = None if s2.failed else s2.observation
        return self.customer

    def select(self, email: str, sel: Mapping[str, Any], *, ignore_status: bool) -> str | None:
        """Scan the customer's orders and pick the one ``sel`` describes."""
        cust = self.find_customer(email)
        if cust is None:
            return None
        lazy = self.chance(self.p.lazy)

        def fits(o: Mapping[str, Any]) -> bool:
            if not ignore_status and o["status"] != sel["status"]:
                return False
            return "sku" not in sel or any(i["sku"] == sel["sku"] for i in o["items"])

        found: list[tuple[str, str]] = []
        for oid in cust["order_ids"]:
            o = self.orders.get(oid) or self.get_order(oid)
            if o is not None and fits(o):
                found.append((o["date"], oid))
                if lazy:
                    break
        if not found:
            return None
        return max(found)[1]  # the latest (with one candidate found, that one)


def _amount(order: Mapping[str, Any], spec: Any, slip: bool) -> float:
    left = round(order["total"] - sum(r["amount"] for r in order["refunds"]), 2)
    if spec == "full":
        return left
    line = next(i for i in order["items"] if i["sku"] == spec["sku"])
    amount = round(line["price"] * line["qty"], 2)
    if slip:
        amount = line["price"] if line["qty"] > 1 else left
    return float(amount)


def _run(task: TaskSpec, t: _Trial) -> str:
    intent = task.metadata.get("intent")
    if not isinstance(intent, Mapping):
        raise ValueError(f"task {task.task_id!r} has no metadata['intent'] for the scripted agents")
    p = t.p
    if t.chance(p.give_up):
        t.usage.model_call()
        return "I have passed your request to a colleague who will get back to you."
    done: list[str] = []
    for op in intent["ops"]:
        kind = op["op"]
        oid = _order_for(kind, op, intent, t)
        if oid is None:
            continue
        if t.chance(p.extra):
            sku = (t.orders.get(oid) or {"items": [{"sku": "MUG-01"}]})["items"][0]["sku"]
            t.call("check_stock", {"sku": sku})
        if kind in ("refund", "cancel") and t.chance(p.wrong_tool):
            other = "cancel" if kind == "refund" else "refund"
            t.call(*_write(other, oid, op, t, slip_amount=False))
        step = t.call(*_write(kind, oid, op, t, slip_amount=t.chance(p.amount)))
        if not step.failed:
            done.append(f"{kind} {oid}")
    t.usage.model_call()  # the final reply
    if not done:
        return "I'm sorry, I could not complete your request."
    return "Done: " + "; ".join(done) + "."


def _order_for(
    kind: str, op: Mapping[str, Any], intent: Mapping[str, Any], t: _Trial
) -> str | None:
    """The order an operation acts on, or ``None`` with a note in ``t.notes`` saying why."""
    note: str | None = None
    if "order_id" in op:
        oid = _named_order(kind, op, t)
    else:
        oid, note = _selected_order(kind, op, intent, t)
    if oid is None:
        t.notes.append(note or f"found no order to {kind}")
    return oid


def _named_order(kind: str, op: Mapping[str, Any], t: _Trial) -> str | None:
    """An order the task names: read first, except that the agent may skip verifying it."""
    oid: str | None = op["order_id"]
    # A refund needs the order's amounts, so only a cancel or an address change may skip
    # reading the order first.
    skip = t.chance(t.p.skip_verify)
    if kind == "refund" or not skip:
        t.get_order(str(oid))
    return oid


def _selected_order(
    kind: str, op: Mapping[str, Any], intent: Mapping[str, Any], t: _Trial
) -> tuple[str | None, str | None]:
    """An order the agent selects from the customer's description, and a note if it gave up.

    With a status slip it may select an order in the wrong status and write to it; when the
    shop refuses, half the time it selects again by status, else it gives up on the operation.
    """
    slip = t.chance(t.p.status_slip)
    oid = t.select(intent["email"], op["select"], ignore_status=slip)
    if not slip or oid is None or t.orders[oid]["status"] == op["select"]["status"]:
        return oid, None
    step = t.call(*_write(kind, oid, op, t, slip_amount=False))
    if step.failed and t.chance(0.5):
        return t.select(intent["email"], op["select"], ignore_status=False), None
    return None, f"could not {kind} {oid}"


def _write(
    kind: str, oid: str, op: Mapping[str, Any], t: _Trial, *, slip_amount: bool
) -> tuple[str, dict[str, Any]]:
    if kind == "update_address":
        return "update_address", {"order_id": oid, "address": op["address"]}
    if kind == "cancel":
        reason = op.get("reason", CANCEL_REASONS[0])
        if t.chance(t.p.reason):
            reason = next(r for r in CANCEL_REASONS if r != reason)
        return "cancel_order", {"order_id": oid, "reason": reason}
    reason = op.get("reason", REFUND_REASONS[0])
    if t.chance(t.p.reason):
        reason = next(r for r in REFUND_REASONS if r != reason)
    order = t.orders.get(oid)
    # An order the agent never read (only when it tried the wrong tool on a pending order): it
    # guesses an amount, which the shop refuses anyway.
    amount = 0.0 if order is None else _amount(order, op.get("amount", "full"), slip_amount)
    return "refund_order", {"order_id": oid, "amount": amount, "reason": reason}


@dataclass(frozen=True)
class ScriptedAgent:
    """A seeded, stochastic, scripted tool-calling agent for the demo world.

    Call it as ``agent(task)`` or ``agent(task, context)`` (the harness's
    :class:`~ek.agents.harness.TrialContext`); ``context.trial`` and
    ``context.seed`` (when present) select the random stream, so a (seed, task, trial) triple
    always gives the same episode.

    Args:
        name: The agent's name (also part of the random stream).
        tokens: Its simulated token usage per model call.
        profiles: ``{"<slice>/<difficulty>": ErrorProfile}`` (e.g. ``"refund/hard"``); a missing
            key falls back to ``"<slice>"``, then ``"*"``, then :data:`PERFECT`.
        seed: The seed used when the context carries none.
    """

    name: str
    tokens: TokenModel
    profiles: Mapping[str, ErrorProfile] = field(default_factory=dict)
    seed: int = 0

    def profile(self, task: TaskSpec) -> ErrorProfile:
        """The error profile for ``task`` (by its slice and its easy/hard tag)."""
        diff = "hard" if "hard" in task.tags else "easy"
        for key in (f"{task.slice}/{diff}", str(task.slice), "*"):
            if key in self.profiles:
                return self.profiles[key]
        return PERFECT

    def __call__(self, task: TaskSpec, context: Any = None) -> Episode:
        return self.plan(task, context)[0]

    def plan(self, task: TaskSpec, context: Any = None) -> tuple[Episode, tuple[Cost, ...]]:
        """The episode and the usage of each of its model calls (one per tool call, then the
        reply): what a replay through another host (Inspect's mockllm) needs."""
        trial = int(getattr(context, "trial", 0) or 0)
        seed = getattr(context, "seed", None)
        seed = self.seed if seed is None else seed
        rng = random.Random(f"{self.name}|{seed}|{task.task_id}|{trial}")
        t = _Trial(task, self.profile(task), self.tokens, rng, context)
        reply = _run(task, t)
        ep = Episode(
            task_id=task.task_id,
            trajectory=Trajectory(t.steps),
            output=reply,
            final_state=t.db,
            cost=(t.usage.cost(),),
            trial=trial,
            input=task.input,
            metadata={"agent": self.name, "notes": t.notes} if t.notes else {"agent": self.name},
        )
        return ep, tuple(t.usage.calls)


def baseline_agent(seed: int = 0) -> ScriptedAgent:
    """The baseline: ``demo-large``, a reasoning model; reliable on every slice.

    Example:
        >>> baseline_agent().tokens.model
        'demo-large'
    """
    easy = ErrorProfile(
        typo=0.06, wrong_tool=0.04, amount=0.05, reason=0.02, skip_verify=0.08, extra=0.1,
        give_up=0.02, no_retry=0.05,
    )  # fmt: skip
    hard = ErrorProfile(
        typo=0.08, lazy=0.12, status_slip=0.08, wrong_tool=0.06, amount=0.07, reason=0.03,
        extra=0.12, give_up=0.04, no_retry=0.05,
    )  # fmt: skip
    return ScriptedAgent(
        "baseline",
        TokenModel("demo-large", prefix_tokens=1600, output=(30, 90), reasoning=(120, 420)),
        {"refund/easy": easy, "refund/hard": hard, "lookup/easy": easy, "lookup/hard": hard},
        seed,
    )


def candidate_agent(seed: int = 0) -> ScriptedAgent:
    """The candidate: ``demo-small``, about ten times cheaper per token, no reasoning budget; as
    good on the lookup slice, **clearly worse on the refund slice** (wrong order, wrong amount,
    wrong tool first, giving up).

    Example:
        >>> from ek.agents.demo import load_tasks
        >>> refund = load_tasks()[0]
        >>> candidate_agent().profile(refund).amount > baseline_agent().profile(refund).amount
        True
    """
    lookup_easy = ErrorProfile(
        typo=0.08, wrong_tool=0.05, amount=0.05, reason=0.02, skip_verify=0.15, extra=0.15,
        give_up=0.02, no_retry=0.1,
    )  # fmt: skip
    lookup_hard = ErrorProfile(
        typo=0.1, lazy=0.12, status_slip=0.1, wrong_tool=0.06, amount=0.07, reason=0.03,
        extra=0.15, give_up=0.04, no_retry=0.1,
    )  # fmt: skip
    refund_easy = ErrorProfile(
        typo=0.1, wrong_tool=0.2, amount=0.3, reason=0.1, skip_verify=0.2, extra=0.15,
        give_up=0.08, no_retry=0.6,
    )  # fmt: skip
    refund_hard = ErrorProfile(
        typo=0.12, lazy=0.4, status_slip=0.2, wrong_tool=0.25, amount=0.35, reason=0.12,
        extra=0.15, give_up=0.1, no_retry=0.6,
    )  # fmt: skip
    return ScriptedAgent(
        "candidate",
        TokenModel("demo-small", prefix_tokens=1600, output=(40, 120), reasoning=(0, 0)),
        {
            "refund/easy": refund_easy,
            "refund/hard": refund_hard,
            "lookup/easy": lookup_easy,
            "lookup/hard": lookup_hard,
        },
        seed,
    )


def oracle_agent() -> ScriptedAgent:
    """The error-free agent (:data:`PERFECT` everywhere): its calls are the suite's gold calls."""
    return ScriptedAgent("oracle", TokenModel("demo-oracle"), {}, 0)
