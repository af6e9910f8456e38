"""Gold calls as a user writes them: :class:`AnyOf` (several acceptable values, optional
arguments) and :class:`GoldCall`, with BFCL ``possible_answer`` semantics (source:
ShishirPatil/gorilla, ``berkeley-function-call-leaderboard/bfcl_eval/eval_checker/ast_eval/
ast_checker.py`` @ 6ea5797); :func:`show` renders a gold pattern for a report.

Example:
    >>> g = GoldCall("weather", {"city": AnyOf("Paris", "Paris, FR")})
    >>> show(g.args)
    {'city': {'any_of': ['Paris', 'Paris, FR'], 'optional': False}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ek._validate import short_repr

__all__ = ["AnyOf", "GoldCall", "show"]


class AnyOf:
    """Several acceptable values for one gold argument (BFCL ``possible_answer`` semantics).

    Args:
        *values: The acceptable values (literals, lists, or dicts whose values may again be
            :class:`AnyOf`).
        optional: Whether the argument may be omitted (BFCL marks this with ``""`` among the
            values). ``AnyOf(optional=True)`` with no values means "must be omitted".

    Example:
        >>> a = AnyOf("units", optional=True)
        >>> a.values, a.optional
        (('units',), True)
        >>> AnyOf(1, 2) == AnyOf(1, 2)
        True
    """

    __slots__ = ("optional", "values")

    def __init__(self, *values: Any, optional: bool = False) -> None:
        if not isinstance(optional, bool):
            raise TypeError(f"AnyOf.optional must be a bool, got {short_repr(optional, 80)}")
        if not values and not optional:
            raise ValueError(
                "AnyOf needs at least one acceptable value (or optional=True), got none"
            )
        self.values: tuple[Any, ...] = tuple(values)
        self.optional = optional

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AnyOf):
            return NotImplemented
        return (self.values, self.optional) == (other.values, other.optional)

    def __hash__(self) -> int:
        return hash(("AnyOf", repr(self.values), self.optional))

    def __repr__(self) -> str:
        inner = ", ".join(repr(v) for v in self.values)
        if self.optional:
            return f"AnyOf({inner}{', ' if inner else ''}optional=True)"
        return f"AnyOf({inner})"

    def to_dict(self) -> dict[str, Any]:
        """``{"any_of": [...], "optional": bool}`` (nested AnyOf rendered the same way)."""
        return {"any_of": [show(v) for v in self.values], "optional": self.optional}


@dataclass(frozen=True)
class GoldCall:
    """One expected call: a tool name and argument patterns (literals or :class:`AnyOf`).

    Example:
        >>> GoldCall("weather", {"city": AnyOf("Paris", "Paris, FR"), "unit": AnyOf("C", optional=True)})
        GoldCall(tool='weather', args={'city': AnyOf('Paris', 'Paris, FR'), 'unit': AnyOf('C', optional=True)})
    """

    tool: str
    args: Mapping[str, Any]

    def __post_init__(self) -> None:
        if not isinstance(self.tool, str) or not self.tool:
            raise ValueError(
                f"GoldCall.tool must be a non-empty str, got {short_repr(self.tool, 200)}"
            )
        if not isinstance(self.args, Mapping):
            raise TypeError(
                f"GoldCall({short_repr(self.tool, 80)}).args must be a mapping, got "
                f"{type(self.args).__name__}: {short_repr(self.args, 200)}"
            )
        bad = [k for k in self.args if not isinstance(k, str)]
        if bad:
            raise TypeError(
                f"GoldCall({short_repr(self.tool, 80)}).args keys must be str, got "
                f"{short_repr(bad[:3], 120)}"
            )
        object.__setattr__(self, "args", dict(self.args))


_SCALARS = frozenset({str, int, float, bool, type(None)})


def show(v: Any) -> Any:
    """A JSON-ready rendering of a gold pattern (AnyOf -> ``{"any_of": ..., "optional": ...}``).

    Example:
        >>> show({"unit": AnyOf("C", optional=True), "days": (1, 2)})
        {'unit': {'any_of': ['C'], 'optional': True}, 'days': [1, 2]}
    """
    if type(v) in _SCALARS:
        return v
    if isinstance(v, AnyOf):
        return v.to_dict()
    if isinstance(v, Mapping):
        return {k: show(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [show(x) for x in v]
    return v
