"""An Inspect AI task scored by ek: pass^k and Cost-of-Pass over epochs, offline.

A customer-support agent (Inspect's ``react()`` loop) refunds orders with two Python tools:
``lookup_order`` (read-only; fails on an unknown order) and ``refund_order`` (destructive: it
changes the order database in the sample's store). The "model" is Inspect's ``mockllm``
driven by a scripted, stateless policy, so the whole thing runs with no API key and no
network. ek scores each epoch on the **final state** of the database (not on the answer text),
on the tool calls against the gold calls, and on what it cost; the ``ek/pass_hat_<k>`` reducer
turns the epochs into pass^k while keeping the cost.

Run it::

    python examples/inspect_task.py                 # prints the scores
    inspect eval examples/inspect_task.py@refunds --epochs 3 --epochs-reducer ek/pass_hat_2
    inspect score LOG --scorer ek/trajectory --action append --overwrite
    ek-agents report LOG

One scorer decides success: ``task_success`` (given the checker and the price: success rate and
Cost-of-Pass). ``tool_calls()`` and a re-scoring ``ek/trajectory`` are given no checker, so they
report their own metric only, never a second success column. ``--action append --overwrite``
answer ``inspect score``'s two questions (keep the old scores; write the scored log over this
one, or ``--output-file NEW.eval``), so it runs without a terminal too.

``degraded=True`` gives an agent that skips the lookup and refunds the wrong amount on some
attempts (a regression that ``ek-agents gate`` should catch).
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

os.environ.pop("INSPECT_TELEMETRY", None)  # an Inspect *hook module* name, not an on/off flag

from ek.adapters.inspect import task_success, to_inspect_sample, tool_calls
from inspect_ai import Epochs, Task, eval, task
from inspect_ai.agent import AgentSubmit, react
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store

from ek.agents.base import Step, TaskSpec, ToolSpec

# --------------------------------------------------------------------------- the world

#: The order database every sample starts from (copied into the sample's store).
ORDERS: dict[str, dict[str, Any]] = {
    "A1": {"status": "paid", "amount": 20},
    "A2": {"status": "paid", "amount": 35},
    "A3": {"status": "paid", "amount": 12},
}

#: USD per token (input, output): what the scripted model "costs".
PRICE = {"input": 2.5e-6, "output": 1e-5}


def _db() -> dict[str, dict[str, Any]]:
    db = store().get("orders")
    if db is None:
        db = json.loads(json.dumps(ORDERS))
        store().set("orders", db)
    return db  # type: ignore[no-any-return]


@tool
def lookup_order() -> Tool:
    async def execute(order_id: str) -> str:
        """Look up an order.

        Args:
          order_id: The order id, e.g. A1.
        """
        db = _db()
        if order_id not in db:
            raise ToolError(f"no such order: {order_id}")
        return json.dumps(db[order_id])

    return execute


@tool
def refund_order() -> Tool:
    async def execute(order_id: str, amount: float) -> str:
        """Refund an order (destructive: it changes the database).

        Args:
          order_id: The order id.
          amount: The amount to refund, in dollars.
        """
        db = _db()
        if order_id not in db:
            raise ToolError(f"no such order: {order_id}")
        db[order_id] = {"status": "refunded", "amount": amount}
        store().set("orders", db)
        return "refunded"

    return execute


# --------------------------------------------------------------------------- the tasks

LOOKUP = ToolSpec(
    "lookup_order",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
)
REFUND = ToolSpec(
    "refund_order",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
        "required": ["order_id", "amount"],
    },
    importance={"amount": 5.0},
    destructive=True,
)


def _goal(refunded: str | None) -> dict[str, Any]:
    db = json.loads(json.dumps(ORDERS))
    if refunded:
        db[refunded] = {"status": "refunded", "amount": ORDERS[refunded]["amount"]}
    return {"orders": db}


def ek_tasks() -> list[TaskSpec]:
    """Four tasks: three refunds and one unknown order (the goal state is then unchanged)."""
    out = []
    for oid in ("A1", "A2", "A3"):
        out.append(
            TaskSpec(
                f"refund-{oid}",
                input=f"Please refund order {oid}.",
                gold=_goal(oid),
                tools=(LOOKUP, REFUND),
                gold_calls=[
                    Step("lookup_order", {"order_id": oid}),
                    Step("refund_order", {"order_id": oid, "amount": ORDERS[oid]["amount"]}),
                ],
            )
        )
    out.append(
        TaskSpec(
            "refund-B9",
            input="Please refund order B9.",
            gold=_goal(None),
            tools=(LOOKUP, REFUND),
            gold_calls=[Step("lookup_order", {"order_id": "B9"})],
        )
    )
    return out


def samples() -> list[Sample]:
    """The tasks as Inspect samples (``metadata["ek_task"]`` is the gold the ek scorers read)."""
    return [to_inspect_sample(t, target="refunded") for t in ek_tasks()]


# --------------------------------------------------------------------------- the scripted model


def scripted_agent(degraded: bool = False, tokens: int = 1000) -> Callable[..., ModelOutput]:
    """A stateless-per-step mockllm policy (safe under concurrent samples).

    It decides from the conversation so far. The one piece of state is how many attempts each
    order has had, which the degraded agent uses to fail every other attempt on A1 and A2.
    Every output carries explicit usage: without it mockllm would fetch a tokenizer (network).
    """
    attempts: Counter[str] = Counter()
    lock = threading.Lock()

    def out(fn: str, args: dict[str, Any]) -> ModelOutput:
        o = ModelOutput.for_tool_call("mockllm/model", fn, args, content="")
        o.usage = ModelUsage(
            input_tokens=tokens, output_tokens=tokens // 10, total_tokens=tokens + tokens // 10
        )
        return o

    def policy(
        input: list[Any], tools: Any, tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        user = next(m for m in input if isinstance(m, ChatMessageUser))
        oid = user.text.rstrip(".").split()[-1]
        results = [m for m in input if isinstance(m, ChatMessageTool)]
        if not results:
            with lock:
                n = attempts[oid]
                attempts[oid] += 1
            if degraded and oid in ("A1", "A2") and n % 2 == 0:
                return out(
                    "refund_order", {"order_id": oid, "amount": 999}
                )  # no lookup, wrong amount
            return out("lookup_order", {"order_id": oid})
        last = results[-1]
        if last.function == "lookup_order":
            if last.error is not None:
                return out("submit", {"answer": "no such order"})
            amount = json.loads(last.text)["amount"]
            if oid == "A2" and len(results) == 1:
                # a failing call in a successful episode: a string where a number is required
                return out("refund_order", {"order_id": oid, "amount": "thirty-five"})
            return out("refund_order", {"order_id": oid, "amount": amount})
        if last.function == "refund_order" and last.error is not None:
            amount = ORDERS.get(oid, {}).get("amount", 0)
            return out("refund_order", {"order_id": oid, "amount": amount})
        return out("submit", {"answer": "refunded"})

    return policy


# --------------------------------------------------------------------------- the Inspect task


@task
def refunds(degraded: bool = False, epochs: int = 3, k: int = 2) -> Task:
    """The refund task, scored by ek on the final state, the tool calls and the cost."""
    return Task(
        dataset=samples(),
        solver=react(
            tools=[lookup_order(), refund_order()],
            submit=AgentSubmit(answer_only=True),
        ),
        scorer=[
            # success = the final database equals the goal; Cost-of-Pass with our price
            task_success(check="final_state", price=PRICE),
            # weighted tool-call F1 against the gold calls (a missed refund costs 10 + 5);
            # no check: it decides no success (one success figure per task)
            tool_calls(),
        ],
        # pass^k on success (dollars and tokens: mean per attempt), plus the plain mean
        epochs=Epochs(epochs, [f"ek/pass_hat_{k}", "mean"]),
        model=get_model("mockllm/model", custom_outputs=scripted_agent(degraded)),
    )


if __name__ == "__main__":
    log_dir = os.environ.get("INSPECT_LOG_DIR", "logs")
    [log] = eval(refunds(), display="none", log_dir=log_dir)
    print(f"log: {log.location}  status: {log.status}")
    assert log.results is not None
    for s in log.results.scores:
        metrics = {k: round(v.value, 4) for k, v in s.metrics.items()}
        print(f"{s.scorer:>14} {s.name:>16} reducer={s.reducer!s:>10} {metrics}")
