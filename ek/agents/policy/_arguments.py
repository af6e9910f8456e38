"""Rules on a call's arguments against what came before: an earlier tool result
(:class:`Observed`) or what the user said (:class:`UserNamed`).

Example:
    >>> from ek.agents.base import Step
    >>> rule = Observed("refund", "amount", "<=", "get_order", path=("total",))
    >>> rec = Record((Step("get_order", observation={"total": 30}), Step("refund", {"amount": 45})))
    >>> rule.check(rec)[0].reason
    'refund at step 1: amount 45 is not <= 30 (total of get_order at step 0)'
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ek._validate import short_repr
from ek.agents.base import Step

from ._record import Record
from ._rule import Rule, Violation, str_tuple, tool_name

__all__ = ["OPERATORS", "Observed", "UserNamed"]


def _within(value: Any, ref: Any) -> bool:
    return value in (ref if isinstance(ref, (list, tuple, Mapping, str)) else ())


#: The comparisons :class:`Observed` makes, ``argument <op> reference``.
OPERATORS: Mapping[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "!=": operator.ne,
    "in": _within,
}

_ABSENT = object()


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    """The value at ``path`` (keys and list indices) inside an observation, or ``_ABSENT``.

    An observation that is JSON text (tau-bench tools return strings) is read as JSON first.
    """
    for key in path:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return _ABSENT
        value = _child(value, key)
    return value


def _child(value: Any, key: Any) -> Any:
    if isinstance(value, Mapping):
        return value.get(key, _ABSENT)
    if isinstance(value, list) and type(key) is int and -len(value) <= key < len(value):
        return value[key]
    return _ABSENT


def _path(value: Any) -> tuple[Any, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(
            f"Observed.path must be a list of keys and indices, got {short_repr(value)}"
        )
    for k in value:
        if not isinstance(k, (str, int)) or isinstance(k, bool):
            raise TypeError(
                f"Observed.path items must be str keys or int indices, got {short_repr(k)}"
            )
    return tuple(value)


@dataclass(frozen=True)
class Observed(Rule):
    """A call's argument compared with a value an earlier tool returned.

    For each call of ``tool``, the reference is read at ``path`` in the result of the last
    earlier successful call of ``source`` (that agrees on the ``same`` arguments), and the rule
    requires ``args[arg] <op> reference``: the refunded amount at most the order's total
    (``op="<="``), the reservation cancelled one of those the look-up listed (``op="in"``).

    Args:
        tool: The guarded tool.
        arg: Its argument.
        op: One of :data:`OPERATORS` (``"<="``, ``"<"``, ``">="``, ``">"``, ``"=="``, ``"!="``,
            ``"in"``).
        source: The tool whose result holds the reference.
        path: Keys (and list indices) to the reference inside that result; a result that is
            JSON text is decoded first.
        same: Arguments the two calls must agree on (e.g. ``("order_id",)``).
        severity: See :class:`~ek.agents.policy.Rule`.
        name: See :class:`~ek.agents.policy.Rule`.

    A missing argument, no earlier result, a result without the path, or values that do not
    compare (a string against a number) are violations with their reason.

    Example:
        >>> from ek.agents.base import Step
        >>> rule = Observed("cancel", "id", "in", "list_reservations", path=("ids",))
        >>> rec = Record((Step("list_reservations", observation='{"ids": ["R1", "R2"]}'),
        ...               Step("cancel", {"id": "R2"})))
        >>> rule.check(rec)
        ()
    """

    kind: str = field(default="observed", init=False, repr=False)
    tool: str
    arg: str
    op: str
    source: str
    path: tuple[Any, ...] = ()
    same: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        tool_name("Observed.tool", self.tool)
        tool_name("Observed.arg", self.arg)
        tool_name("Observed.source", self.source)
        if self.op not in OPERATORS:
            raise ValueError(
                f"Observed.op must be one of {sorted(OPERATORS)}, got {short_repr(self.op)}"
            )
        object.__setattr__(self, "path", _path(self.path))
        object.__setattr__(self, "same", str_tuple("Observed.same", self.same))

    def default_name(self) -> str:
        where = ".".join(map(str, self.path)) or "result"
        return f"{self.tool}.{self.arg} {self.op} {self.source} {where}"

    def check(self, record: Record) -> tuple[Violation, ...]:
        return self.at_each_call(
            record, self.tool, lambda i, step: self._broken(i, step, record.steps[:i])
        )

    def _broken(self, i: int, step: Step, prior: tuple[Step, ...]) -> str | None:
        head = f"{self.tool} at step {i}"
        if self.arg not in step.args:
            return f"{head}: no argument {self.arg!r}"
        j = self._source_step(step, prior)
        if j is None:
            return f"{head}: no earlier successful {self.source} to check {self.arg} against"
        ref = _at(prior[j].observation, self.path)
        where = ".".join(map(str, self.path)) or "result"
        if ref is _ABSENT:
            return f"{head}: the result of {self.source} at step {j} has no {where}"
        value = step.args[self.arg]
        try:
            ok = bool(OPERATORS[self.op](value, ref))
        except TypeError:
            ok = False
        if ok:
            return None
        return (
            f"{head}: {self.arg} {short_repr(value, 40)} is not {self.op} {short_repr(ref, 40)} "
            f"({where} of {self.source} at step {j})"
        )

    def _source_step(self, step: Step, prior: tuple[Step, ...]) -> int | None:
        for j in range(len(prior) - 1, -1, -1):
            p = prior[j]
            if p.tool == self.source and not p.failed and self._agrees(p, step):
                return j
        return None

    def _agrees(self, prior: Step, step: Step) -> bool:
        return all(k in step.args and prior.args.get(k) == step.args[k] for k in self.same)


@dataclass(frozen=True)
class UserNamed(Rule):
    """A call's argument must be something the user said before the call.

    The argument's value, as text, must appear in an earlier user turn (compared casefolded):
    the reservation cancelled is one the user named, not one the agent picked.

    Args:
        tool: The guarded tool.
        arg: Its argument.
        severity: See :class:`~ek.agents.policy.Rule`.
        name: See :class:`~ek.agents.policy.Rule`.

    Example:
        >>> from ek.agents.base import Step
        >>> from ek.agents.policy import Turn
        >>> rule = UserNamed("cancel", "id")
        >>> rec = Record((Step("cancel", {"id": "R9"}),), (Turn("user", "cancel r1 please", 0),))
        >>> rule.check(rec)[0].reason
        "cancel at step 0: id 'R9' was not named by the user before the call"
    """

    kind: str = field(default="user_named", init=False, repr=False)
    tool: str
    arg: str

    def __post_init__(self) -> None:
        super().__post_init__()
        tool_name("UserNamed.tool", self.tool)
        tool_name("UserNamed.arg", self.arg)

    def default_name(self) -> str:
        return f"user named {self.tool}.{self.arg}"

    def check(self, record: Record) -> tuple[Violation, ...]:
        return self.at_each_call(record, self.tool, lambda i, step: self._unnamed(record, i, step))

    def _unnamed(self, record: Record, i: int, step: Step) -> str | None:
        if self.arg not in step.args:
            return f"{self.tool} at step {i}: no argument {self.arg!r}"
        value = step.args[self.arg]
        text = (value if isinstance(value, str) else json.dumps(value)).casefold()
        said = [t.text.casefold() for t in record.before(i) if t.role == "user"]
        if text and any(text in s for s in said):
            return None
        why = f"{self.arg} {short_repr(value, 40)} was not named by the user before the call"
        return f"{self.tool} at step {i}: {why}"
