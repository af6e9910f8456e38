"""A rule written as a plain function: :class:`Custom`.

The function takes the :class:`~ek.agents.policy.Record` and returns its violations: each a
``(step, reason)`` pair (``step`` an index or ``None``) or a reason string (no step). Register it
in the ``"policies"`` namespace (``ek.registry.register("policies", name, fn)``) and give the
rule that name, so the rule serialises (``to_dict`` holds the name) and a run's fingerprint
names it.

Example:
    >>> from ek.registry import register
    >>> from ek.agents.base import Step
    >>> def no_refund_on_sunday(record):
    ...     return [(i, "refund on a Sunday") for i, s in enumerate(record.steps)
    ...             if s.tool == "refund" and s.args.get("day") == "sun"]
    >>> _ = register("policies", "no_refund_on_sunday", no_refund_on_sunday)
    >>> rule = Custom("no_refund_on_sunday", severity=0.5)
    >>> [v.to_dict() for v in rule.check(Record((Step("refund", {"day": "sun"}),)))]
    [{'rule': 'no_refund_on_sunday', 'step': 0, 'reason': 'refund on a Sunday', 'severity': 0.5}]
    >>> rule.to_dict()
    {'kind': 'custom', 'func': 'no_refund_on_sunday', 'severity': 0.5}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ek._validate import nonempty_str, short_repr
from ek.registry import resolve

from ._record import Record
from ._rule import Rule, Violation

__all__ = ["Custom"]


@dataclass(frozen=True)
class Custom(Rule):
    """A rule that is a function ``record -> violations``, registered by name.

    Args:
        func: The name the function is registered under in the ``"policies"`` namespace.
        severity: See :class:`~ek.agents.policy.Rule`.
        name: See :class:`~ek.agents.policy.Rule` (default: ``func``).

    Raises:
        UnknownNameError: ``func`` names no registered function.
    """

    kind: str = field(default="custom", init=False, repr=False)
    func: str

    def __post_init__(self) -> None:
        super().__post_init__()
        nonempty_str("Custom.func", self.func)
        fn = resolve("policies", self.func)
        if not callable(fn):
            raise TypeError(f"policies {self.func!r} must be a callable, got {short_repr(fn)}")
        object.__setattr__(self, "_fn", fn)

    def default_name(self) -> str:
        return self.func

    def check(self, record: Record) -> tuple[Violation, ...]:
        fn: Callable[[Record], Any] = self._fn  # type: ignore[attr-defined]
        found = fn(record)
        if isinstance(found, (str, bytes)) or not isinstance(found, Iterable):
            raise TypeError(
                f"policy {self.func!r} must return a list of (step, reason) pairs or reasons, "
                f"got {short_repr(found)}"
            )
        return tuple(self._one(item, len(record.steps)) for item in found)

    def _one(self, item: Any, n_steps: int) -> Violation:
        if isinstance(item, Violation):
            return self.violation(item.step, item.reason)
        if isinstance(item, str):
            return self.violation(None, item)
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
            step = item[0]
            if step is None or (type(step) is int and 0 <= step < n_steps):
                return self.violation(step, item[1])
        raise TypeError(
            f"policy {self.func!r} returned {short_repr(item)}: expected a (step, reason) pair "
            f"with step an index below {n_steps} or None, or a reason string"
        )
