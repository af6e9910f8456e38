"""Rules on the order of things: a call before another (:class:`Order`), and the user's
agreement between the agent describing an action and making the call (:class:`Confirm`).

Example:
    >>> from ek.agents.base import Step
    >>> rule = Order("get_order", "refund_order", same=("order_id",))
    >>> rec = Record((Step("get_order", {"order_id": "O2"}), Step("refund_order", {"order_id": "O1"})))
    >>> [v.reason for v in rule.check(rec)]
    ["refund_order at step 1 before any successful get_order with the same order_id ('O1')"]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ek._validate import nonempty_str, short_repr
from ek.agents.base import Step

from ._record import Record, Turn
from ._rule import Rule, Violation, str_tuple, tool_name

__all__ = ["DEFAULT_AGREE", "Confirm", "Order"]

#: The default pattern of a user turn that agrees (searched, case-insensitive).
DEFAULT_AGREE = r"\b(yes|yeah|yep|confirm(ed)?|go ahead|proceed|please do)\b"


@dataclass(frozen=True)
class Order(Rule):
    """Every call of ``then`` must come after a successful call of ``first``.

    Args:
        first: The tool that must come first (e.g. ``"verify_identity"``).
        then: The tool it guards (e.g. ``"refund"``).
        same: Arguments both calls must agree on (e.g. ``("order_id",)``: look up *this* order
            before refunding it).
        severity: See :class:`~ek.agents.policy.Rule`.
        name: See :class:`~ek.agents.policy.Rule`.

    A call of ``first`` that failed (recorded an error) does not count.

    Example:
        >>> from ek.agents.base import Step
        >>> rule = Order("verify_identity", "refund")
        >>> rule.check(Record((Step("refund"), Step("verify_identity"))))[0].reason
        'refund at step 0 before any successful verify_identity'
    """

    kind: str = field(default="order", init=False, repr=False)
    first: str
    then: str
    same: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        tool_name("Order.first", self.first)
        tool_name("Order.then", self.then)
        object.__setattr__(self, "same", str_tuple("Order.same", self.same))

    def default_name(self) -> str:
        return f"{self.first} before {self.then}"

    def check(self, record: Record) -> tuple[Violation, ...]:
        return self.at_each_call(
            record, self.then, lambda i, step: self._unguarded(record, i, step)
        )

    def _unguarded(self, record: Record, i: int, step: Step) -> str | None:
        if any(self._guards(prior, step) for prior in record.steps[:i]):
            return None
        return self._reason(i, step.args)

    def _guards(self, prior: Any, step: Any) -> bool:
        if prior.tool != self.first or prior.failed:
            return False
        return all(k in step.args and prior.args.get(k) == step.args[k] for k in self.same)

    def _reason(self, i: int, args: Any) -> str:
        reason = f"{self.then} at step {i} before any successful {self.first}"
        if not self.same:
            return reason
        values = ", ".join(short_repr(args.get(k), 40) for k in self.same)
        return f"{reason} with the same {', '.join(self.same)} ({values})"


@dataclass(frozen=True)
class Confirm(Rule):
    """Every call of ``tool`` needs the user's agreement after the agent last described it.

    For each call, the rule finds the agent's last turn before the call that describes the
    action (matches ``describe``; any turn with text when ``describe`` is ``None``), not counting
    the text of the message that makes the call, and requires a user turn after that
    description and before the call that matches ``agree``. This is tau-bench airline's rule:
    list the action's details and obtain an explicit "yes" before every change.

    Args:
        tool: The tool that needs confirmation (e.g. ``"cancel_reservation"``).
        agree: A regular expression a user turn that agrees matches (searched, case-insensitive);
            default :data:`DEFAULT_AGREE`.
        describe: A regular expression the agent's description of the action matches, or
            ``None`` for the agent's last turn.
        severity: See :class:`~ek.agents.policy.Rule`.
        name: See :class:`~ek.agents.policy.Rule`.

    An episode that recorded no conversation has no agreement: each call is a violation.

    Example:
        >>> from ek.agents.base import Step
        >>> rule = Confirm("cancel", describe="cancel")
        >>> rec = Record((Step("cancel"),), (Turn("assistant", "Shall I cancel R1?", 0),
        ...                                  Turn("user", "Yes please", 0)))
        >>> rule.check(rec)
        ()
        >>> rec = Record((Step("cancel"),), (Turn("assistant", "Cancel R1?", 0), Turn("user", "hmm", 0)))
        >>> rule.check(rec)[0].reason
        "cancel at step 0: no user turn agreed after the agent's description 'Cancel R1?'"
    """

    kind: str = field(default="confirm", init=False, repr=False)
    tool: str
    agree: str = DEFAULT_AGREE
    describe: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        tool_name("Confirm.tool", self.tool)
        object.__setattr__(self, "_agree", _pattern("Confirm.agree", self.agree))
        pat = self.describe
        object.__setattr__(
            self, "_describe", None if pat is None else _pattern("Confirm.describe", pat)
        )

    def default_name(self) -> str:
        return f"user confirms {self.tool}"

    def check(self, record: Record) -> tuple[Violation, ...]:
        return self.at_each_call(record, self.tool, lambda i, _: self._missing(i, record.before(i)))

    def _missing(self, i: int, turns: tuple[Turn, ...]) -> str | None:
        """Why the call at step ``i`` lacks a confirmation, or ``None`` when it has one."""
        said = [n for n, t in enumerate(turns) if self._describes(t, i)]
        if not said:
            return f"{self.tool} at step {i}: the agent did not describe it to the user before the call"
        after = turns[said[-1] + 1 :]
        agree: re.Pattern[str] = self._agree  # type: ignore[attr-defined]
        if any(t.role == "user" and agree.search(t.text) for t in after):
            return None
        quote = short_repr(turns[said[-1]].text, 60)
        return f"{self.tool} at step {i}: no user turn agreed after the agent's description {quote}"

    def _describes(self, turn: Turn, i: int) -> bool:
        if turn.role != "assistant" or i in turn.calls:
            return False
        pattern: re.Pattern[str] | None = self._describe  # type: ignore[attr-defined]
        return pattern is None or pattern.search(turn.text) is not None


def _pattern(owner: str, value: Any) -> re.Pattern[str]:
    try:
        return re.compile(nonempty_str(owner, value), re.IGNORECASE)
    except re.error as e:
        raise ValueError(
            f"{owner} must be a regular expression, got {short_repr(value)}: {e}"
        ) from None
