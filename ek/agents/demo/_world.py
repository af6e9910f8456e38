"""The demo's retail world: a small database and the tools that read and change it.

A tau-bench-style world (Yao et al., 2024, arXiv:2406.12045): customers, orders and stock in
one JSON database; read-only look-ups (:func:`find_customer`, ``get_customer``, ``get_order``,
``check_stock``), one ordinary write (``update_address``) and two **destructive** writes
(``refund_order``, ``cancel_order``: weight :data:`~ek.agents.base.DESTRUCTIVE_WEIGHT`, with
high-importance ``order_id`` and ``amount`` arguments).

Every tool is a **pure function** ``(db, args) -> (new_db, observation)`` over a copy of the
database: :func:`call_tool` never mutates its input, so a trial's final state is exactly the
database after its calls, and a failed call (bad arguments, a rule of the shop broken) leaves
it unchanged and is recorded as a :class:`~ek.agents.base.Step` with an ``error``.

Example:
    >>> db = initial_db()
    >>> db2, step = call_tool(db, "get_order", {"order_id": "O1002"})
    >>> step.observation["status"], step.observation["total"], db2 is db
    ('delivered', 45.0, True)
    >>> db3, step = call_tool(db, "refund_order",
    ...                       {"order_id": "O1002", "amount": 45.0, "reason": "damaged"})
    >>> db3["orders"]["O1002"]["status"], db["orders"]["O1002"]["status"]
    ('refunded', 'delivered')
    >>> call_tool(db, "cancel_order", {"order_id": "O1002", "reason": "no_longer_needed"})[1].error
    "order O1002 is 'delivered': only a pending order can be cancelled"
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from typing import Any

from ek._validate import short_repr
from ek.agents._episode import Step, Trajectory
from ek.agents._spec import ToolSpec
from ek.agents.policy import Order
from ek.base import is_episode
from ek.registry import register

__all__ = [
    "CANCEL_REASONS",
    "CHECKER_NAME",
    "REFUND_REASONS",
    "TOOLS",
    "ToolError",
    "call_tool",
    "initial_db",
    "replay",
    "replayed_state_match",
    "tool_schemas",
    "tool_specs",
]

REFUND_REASONS = ("damaged", "not_as_described", "changed_mind")
CANCEL_REASONS = ("no_longer_needed", "ordered_by_mistake")

Db = dict[str, Any]


class ToolError(Exception):
    """A tool call that the shop refuses (unknown id, wrong state, bad argument)."""


def _s(desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": "string", "description": desc, **kw}


_SCHEMAS: dict[str, tuple[str, dict[str, Any], bool, dict[str, float]]] = {
    # name: (description, JSON-schema parameters, destructive, argument importances)
    "find_customer": (
        "Find a customer by e-mail address (read-only).",
        {
            "type": "object",
            "properties": {"email": _s("The customer's e-mail address.")},
            "required": ["email"],
        },
        False,
        {},
    ),
    "get_customer": (
        "A customer's profile and order ids (read-only).",
        {
            "type": "object",
            "properties": {"customer_id": _s("A customer id such as 'C01'.")},
            "required": ["customer_id"],
        },
        False,
        {},
    ),
    "get_order": (
        "An order: status, date, items, total, refunds (read-only).",
        {
            "type": "object",
            "properties": {"order_id": _s("An order id such as 'O1002'.")},
            "required": ["order_id"],
        },
        False,
        {},
    ),
    "check_stock": (
        "Stock level and unit price of a product (read-only).",
        {
            "type": "object",
            "properties": {"sku": _s("A product code such as 'MUG-01'.")},
            "required": ["sku"],
        },
        False,
        {},
    ),
    "update_address": (
        "Change the shipping address of a pending order.",
        {
            "type": "object",
            "properties": {
                "order_id": _s("The pending order."),
                "address": _s("The new shipping address."),
            },
            "required": ["order_id", "address"],
        },
        False,
        {"order_id": 3.0, "address": 2.0},
    ),
    "cancel_order": (
        "Cancel a pending order and put its items back in stock (destructive).",
        {
            "type": "object",
            "properties": {
                "order_id": _s("The pending order to cancel."),
                "reason": _s("Why.", enum=list(CANCEL_REASONS)),
            },
            "required": ["order_id", "reason"],
        },
        True,
        {"order_id": 8.0, "reason": 1.0},
    ),
    "refund_order": (
        "Refund money on a delivered order (destructive; at most what is left to refund).",
        {
            "type": "object",
            "properties": {
                "order_id": _s("The delivered order."),
                "amount": {"type": "number", "description": "Dollars to refund."},
                "reason": _s("Why.", enum=list(REFUND_REASONS)),
            },
            "required": ["order_id", "amount", "reason"],
        },
        True,
        {"order_id": 8.0, "amount": 5.0, "reason": 1.0},
    ),
}

#: The shop's policies, carried by its destructive tools (:mod:`ek.agents.policy`): an order is
#: looked up before it is refunded or cancelled. A write without the look-up can leave the
#: right database (a near-miss): the final-state check cannot see it, ``PolicyMetric`` does.
_POLICIES: dict[str, tuple[Order, ...]] = {
    tool: (Order("get_order", tool, same=("order_id",), name=f"get_order before {tool}"),)
    for tool in ("cancel_order", "refund_order")
}

#: The tools of the world as :class:`~ek.agents.base.ToolSpec` s (their cost grammar and policies).
TOOLS: tuple[ToolSpec, ...] = tuple(
    ToolSpec(
        name,
        parameters=params,
        destructive=destr,
        importance=imp,
        description=desc,
        policies=_POLICIES.get(name, ()),
    )
    for name, (desc, params, destr, imp) in _SCHEMAS.items()
)


def tool_specs() -> tuple[ToolSpec, ...]:
    """The world's tools (see :data:`TOOLS`).

    Example:
        >>> [(t.name, t.weight) for t in tool_specs() if t.destructive]
        [('cancel_order', 10.0), ('refund_order', 10.0)]
    """
    return TOOLS


def tool_schemas() -> list[dict[str, Any]]:
    """The tools as OpenAI-style function definitions (what a model would be shown).

    Example:
        >>> tool_schemas()[0]["function"]["name"]
        'find_customer'
    """
    return [
        {
            "type": "function",
            "function": {"name": n, "description": d, "parameters": copy.deepcopy(p)},
        }
        for n, (d, p, _, _) in _SCHEMAS.items()
    ]


_DB_TEXT: list[str] = []


def initial_db() -> Db:
    """A fresh copy of the shop's initial database (customers, orders, stock).

    Example:
        >>> db = initial_db()
        >>> len(db["customers"]), len(db["orders"]), len(db["stock"])
        (8, 22, 8)
    """
    if not _DB_TEXT:
        _DB_TEXT.append(
            resources.files("ek.agents.demo").joinpath("retail_db.json").read_text("utf-8")
        )
    db: Db = json.loads(_DB_TEXT[0])  # a fresh copy every time (faster than deepcopy)
    return db


def _with_order(db: Db, oid: str) -> tuple[Db, dict[str, Any]]:
    """A new database sharing every unchanged part with ``db``, and a private copy of order
    ``oid`` to change in it (nothing is ever changed in place, so sharing is safe)."""
    order = copy.deepcopy(db["orders"][oid])
    return {**db, "orders": {**db["orders"], oid: order}}, order


# --------------------------------------------------------------------------- validation


def _check_args(tool: str, args: Mapping[str, Any]) -> None:
    params = _SCHEMAS[tool][1]
    props: dict[str, Any] = params["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ToolError(f"{tool}: unknown argument(s) {unknown}; expected {sorted(props)}")
    missing = [a for a in params["required"] if a not in args]
    if missing:
        raise ToolError(f"{tool}: missing required argument(s) {missing}")
    for name, value in args.items():
        sch = props[name]
        if sch["type"] == "string" and not isinstance(value, str):
            raise ToolError(f"{tool}: {name} must be a string, got {value!r}")
        if sch["type"] == "number" and (
            isinstance(value, bool) or not isinstance(value, (int, float))
        ):
            raise ToolError(f"{tool}: {name} must be a number, got {value!r}")
        if "enum" in sch and value not in sch["enum"]:
            raise ToolError(f"{tool}: {name} must be one of {sch['enum']}, got {value!r}")


def _order(db: Db, order_id: str) -> dict[str, Any]:
    o = db["orders"].get(order_id)
    if o is None:
        raise ToolError(f"order {order_id!r} not found")
    return o


def _customer(db: Db, customer_id: str) -> dict[str, Any]:
    c = db["customers"].get(customer_id)
    if c is None:
        raise ToolError(f"customer {customer_id!r} not found")
    return c


# --------------------------------------------------------------------------- the tools
# Each takes the database (never mutated) and validated arguments; returns (new db or None when
# unchanged, observation).

_Result = tuple[Db | None, Any]


def _find_customer(db: Db, a: Mapping[str, Any]) -> _Result:
    email = a["email"].strip().lower()
    for cid, c in db["customers"].items():
        if c["email"] == email:
            return None, {"customer_id": cid, "name": c["name"]}
    raise ToolError(f"no customer with e-mail {a['email']!r}")


def _get_customer(db: Db, a: Mapping[str, Any]) -> _Result:
    c = _customer(db, a["customer_id"])
    return None, {"customer_id": a["customer_id"], **copy.deepcopy(c)}


def _get_order(db: Db, a: Mapping[str, Any]) -> _Result:
    o = _order(db, a["order_id"])
    return None, {"order_id": a["order_id"], **copy.deepcopy(o)}


def _check_stock(db: Db, a: Mapping[str, Any]) -> _Result:
    s = db["stock"].get(a["sku"])
    if s is None:
        raise ToolError(f"unknown product {a['sku']!r}")
    return None, {"sku": a["sku"], **s}


def _update_address(db: Db, a: Mapping[str, Any]) -> _Result:
    oid = a["order_id"]
    o = _order(db, oid)
    if o["status"] != "pending":
        raise ToolError(
            f"order {oid} is {o['status']!r}: only a pending order's address can change"
        )
    if not a["address"].strip():
        raise ToolError("update_address: address must not be empty")
    new, no = _with_order(db, oid)
    no["address"] = a["address"]
    return new, {"order_id": oid, "address": a["address"]}


def _cancel_order(db: Db, a: Mapping[str, Any]) -> _Result:
    oid = a["order_id"]
    o = _order(db, oid)
    if o["status"] != "pending":
        raise ToolError(f"order {oid} is {o['status']!r}: only a pending order can be cancelled")
    new, no = _with_order(db, oid)
    no["status"] = "cancelled"
    no["cancel_reason"] = a["reason"]
    stock = dict(new["stock"])
    for it in no["items"]:
        stock[it["sku"]] = {**stock[it["sku"]], "qty": stock[it["sku"]]["qty"] + it["qty"]}
    new["stock"] = stock
    return new, {"order_id": oid, "status": "cancelled"}


def _refund_order(db: Db, a: Mapping[str, Any]) -> _Result:
    oid = a["order_id"]
    o = _order(db, oid)
    if o["status"] != "delivered":
        raise ToolError(f"order {oid} is {o['status']!r}: only a delivered order can be refunded")
    amount = round(float(a["amount"]), 2)
    left = round(o["total"] - sum(r["amount"] for r in o["refunds"]), 2)
    if amount <= 0 or amount > left:
        raise ToolError(f"refund amount must be in (0, {left}] for order {oid}, got {a['amount']}")
    new, no = _with_order(db, oid)
    no["refunds"].append({"amount": amount, "reason": a["reason"]})
    if amount == left:
        no["status"] = "refunded"
    return new, {"order_id": oid, "refunded": amount, "status": no["status"]}


_IMPL: dict[str, Callable[[Db, Mapping[str, Any]], _Result]] = {
    "find_customer": _find_customer,
    "get_customer": _get_customer,
    "get_order": _get_order,
    "check_stock": _check_stock,
    "update_address": _update_address,
    "cancel_order": _cancel_order,
    "refund_order": _refund_order,
}


def call_tool(db: Db, tool: str, args: Mapping[str, Any]) -> tuple[Db, Step]:
    """Run one tool call on ``db`` (never mutated); returns the resulting database and the step.

    A refused call returns ``db`` itself and a step whose ``error`` says why; an unknown tool is
    a refused call too (models invent tools).

    Args:
        db: The database before the call.
        tool: The tool's name.
        args: The call's arguments.

    Example:
        >>> db = initial_db()
        >>> _, s = call_tool(db, "get_order", {"order_id": "O9999"})
        >>> s.failed, s.error
        (True, "order 'O9999' not found")
    """
    args = dict(args)
    impl = _IMPL.get(tool)
    try:
        if impl is None:
            raise ToolError(f"unknown tool {tool!r}; available: {sorted(_IMPL)}")
        _check_args(tool, args)
        new, obs = impl(db, args)
    except ToolError as e:
        return db, Step(tool, args, error=str(e))
    return (db if new is None else new), Step(tool, args, observation=obs)


def replay(
    calls: Iterable[Step | Mapping[str, Any]], db: Db | None = None
) -> tuple[Db, Trajectory]:
    """Apply ``calls`` in order to ``db`` (default: :func:`initial_db`); the final database and
    the executed trajectory (with observations and errors).

    This is the tau-bench gold-state construction: the gold final state of a task is the
    initial database with the task's gold calls replayed.

    Example:
        >>> db, t = replay([{"tool": "cancel_order",
        ...                  "args": {"order_id": "O1003", "reason": "ordered_by_mistake"}}])
        >>> db["orders"]["O1003"]["status"], db["stock"]["MUG-01"]["qty"], t[0].failed
        ('cancelled', 41, False)
    """
    cur = initial_db() if db is None else db
    steps = []
    for c in calls:
        s = c if isinstance(c, Step) else Step.from_dict(c)
        cur, done = call_tool(cur, s.tool, s.args)
        steps.append(done)
    return cur, Trajectory(steps)


def replayed_state_match(episode: Any, gold: Any) -> bool:
    """The demo's success checker: replay the episode's tool calls on a **fresh** database and
    compare the result with the gold final state (the tau-bench / tau2-bench database check).

    It does not trust the ``final_state`` the agent reported: the verdict is recomputed from
    the calls alone, on the checker's side (verifier isolation). ``gold`` is a
    :class:`~ek.agents.base.TaskSpec` (its ``gold``) or a database.

    Example:
        >>> from ek.agents.base import Episode
        >>> calls = [Step("cancel_order", {"order_id": "O1006", "reason": "ordered_by_mistake"})]
        >>> gold, _ = replay(calls)
        >>> replayed_state_match(Episode("t", trajectory=calls, final_state={}), gold)
        True
        >>> replayed_state_match(Episode("t"), gold)
        False
    """
    if not is_episode(episode):
        raise TypeError(
            f"replayed_state_match expects an Episode, got {type(episode).__name__}: "
            f"{short_repr(episode, 120)}"
        )
    target = getattr(gold, "gold", gold)
    db, _ = replay(episode.trajectory)
    return bool(db == target)


#: The registered name of :func:`replayed_state_match` (``"checkers"`` namespace), so a
#: run's store or an Inspect log can name the checker.
CHECKER_NAME = "ek_demo_replayed_state"
register("checkers", CHECKER_NAME, replayed_state_match)
