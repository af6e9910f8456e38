"""A list of rules checked together: :func:`check_policies` and the rules' serialised form.

Example:
    >>> from ek.agents.base import Step
    >>> rules = [Order("get_order", "refund"), MaxCalls("refund", 1)]
    >>> res = check_policies(Record((Step("refund"), Step("refund"))), rules)
    >>> res.value, [v.step for v in res.violations], res.reason
    (0.0, [0, 1, 1], '3 violations, first at step 0: refund at step 0 before any successful get_order')
    >>> policies_from_list(policies_to_list(rules)) == tuple(rules)
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek._validate import short_repr

from ._arguments import Observed, UserNamed
from ._counts import Forbid, MaxCalls
from ._custom import Custom
from ._record import Record
from ._rule import Rule, Violation
from ._sequence import Confirm, Order

__all__ = [
    "RULE_KINDS",
    "PolicyResult",
    "as_policies",
    "check_policies",
    "policies_from_list",
    "policies_to_list",
    "rule_from_dict",
]

#: Every rule kind, by the ``kind`` its ``to_dict`` writes.
RULE_KINDS: Mapping[str, type[Rule]] = {
    cls.kind: cls for cls in (Order, Confirm, Observed, UserNamed, MaxCalls, Forbid, Custom)
}


def rule_from_dict(data: Any) -> Rule:
    """A rule from its ``to_dict`` form (dispatched on ``kind``).

    Raises:
        ValueError: an unknown ``kind`` (the message lists the known ones).
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"a policy rule must be a mapping with a 'kind', got {short_repr(data)}")
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in RULE_KINDS:
        raise ValueError(
            f"a policy rule's kind must be one of {sorted(RULE_KINDS)}, got {short_repr(kind)}"
        )
    return RULE_KINDS[kind].from_dict(data)


def as_policies(value: Any, owner: str = "policies") -> tuple[Rule, ...]:
    """Rules (or their dicts) as a tuple of rules; anything else is a ``TypeError`` naming it."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{owner} must be a list of policy rules, got {short_repr(value)}")
    return tuple(r if isinstance(r, Rule) else rule_from_dict(r) for r in value)


def policies_to_list(rules: Iterable[Rule]) -> list[dict[str, Any]]:
    """The rules as JSON data (a list of their ``to_dict``)."""
    return [r.to_dict() for r in rules]


def policies_from_list(data: Any) -> tuple[Rule, ...]:
    """Inverse of :func:`policies_to_list`."""
    return as_policies(data)


@dataclass(frozen=True)
class PolicyResult:
    """The verdict of a set of rules on one record.

    Attributes:
        value: 1.0 with no violation, else ``max(0, 1 - sum of the violations' severities)``.
        violations: Every violation, by step (violations with no step last), then rule order.
        reason: One line: the count and the first violation, or that none was found.
    """

    value: float
    violations: tuple[Violation, ...]
    reason: str

    @property
    def passed(self) -> bool:
        """True when no rule was broken."""
        return not self.violations

    @property
    def first(self) -> Violation | None:
        """The first violation (by step), or ``None``."""
        return self.violations[0] if self.violations else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "value": self.value,
            "violations": [v.to_dict() for v in self.violations],
            "reason": self.reason,
        }


def check_policies(record: Record, rules: Sequence[Rule]) -> PolicyResult:
    """Check every rule on ``record``: the violations, the value and a one-line reason."""
    found = [(v, n) for n, rule in enumerate(rules) for v in rule.check(record)]
    found.sort(key=lambda vn: (vn[0].step is None, vn[0].step or 0, vn[1]))
    violations = tuple(v for v, _ in found)
    value = max(0.0, 1.0 - sum(v.severity for v in violations)) if violations else 1.0
    if not rules:
        reason = "no policy applies"
    elif not violations:
        reason = f"no violation of {len(rules)} rule(s)"
    else:
        first = violations[0]
        at = "" if first.step is None else f" at step {first.step}"
        many = "1 violation" if len(violations) == 1 else f"{len(violations)} violations"
        reason = f"{many}, first{at}: {first.reason}"
    return PolicyResult(value, violations, reason)
