"""The cost model: :class:`FieldSpec`, :class:`NodeType` and :class:`GraphGrammar`.

A grammar declares the types of node an instance may contain and, for every field, how much it
costs to get that field wrong (``importance``); every node type has a ``weight`` (the cost of
missing it altogether, or of inventing one). Metrics read their costs from here instead of
counting every error as one unit.

Example:
    >>> g = GraphGrammar([NodeType("refund", (FieldSpec("amount", "number", importance=5.0),),
    ...                            weight=10.0)])
    >>> g.weight("refund"), g.importance("refund", "amount")
    (10.0, 5.0)
    >>> g.weight("unknown_tool"), g.importance("refund", "note")   # defaults
    (1.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ek._validate import check_keys as _check_keys
from ek._validate import is_number, plain_json, short_repr
from ek._validate import thaw as _thaw
from ek.base import ReadOnlyDict

__all__ = ["JSON_TYPES", "FieldSpec", "GraphGrammar", "NodeType"]

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})


def _positive_cost(owner: str, value: Any) -> float:
    if not is_number(value):
        raise TypeError(
            f"{owner} must be a number, got {type(value).__name__}: {short_repr(value)}"
        )
    try:
        v = float(value)
    except OverflowError:  # an int past the float range (10**400) is no finite cost
        v = math.inf
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{owner} must be a finite number >= 0, got {short_repr(value)}")
    return v


@dataclass(frozen=True)
class FieldSpec:
    """One field (a tool argument) and the cost of getting it wrong.

    Args:
        name: The field name.
        type: A JSON-schema type name (``"string"``, ``"integer"``, ...), a tuple of them, or
            ``None`` for "any".
        required: Whether the field must be present.
        importance: The cost of a wrong or missing value (default 1.0).
        description: Free text.
        schema: The field's full JSON schema, when known (``items``, ``enum``, ``properties``).

    Example:
        >>> FieldSpec("order_id", "string", importance=3.0).importance
        3.0
    """

    name: str
    type: str | tuple[str, ...] | None = None
    required: bool = True
    importance: float = 1.0
    description: str = ""
    schema: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"FieldSpec.name must be a non-empty str, got {short_repr(self.name)}")
        t = self.type
        if isinstance(t, list):
            t = tuple(t)
            object.__setattr__(self, "type", t)
        names = (t,) if isinstance(t, str) else (t or ())
        for n in names:
            if n not in JSON_TYPES:
                raise ValueError(
                    f"FieldSpec {short_repr(self.name)}: type must be one of {sorted(JSON_TYPES)} or None, "
                    f"got {short_repr(n)}"
                )
        if not isinstance(self.required, bool):
            raise TypeError(
                f"FieldSpec {short_repr(self.name)}: required must be a bool, got {short_repr(self.required)}"
            )
        object.__setattr__(
            self,
            "importance",
            _positive_cost(f"FieldSpec {short_repr(self.name)}: importance", self.importance),
        )
        if not isinstance(self.description, str):
            raise TypeError(
                f"FieldSpec {short_repr(self.name)}: description must be a str, got "
                f"{short_repr(self.description)}"
            )
        if self.schema is not None:
            if not isinstance(self.schema, Mapping):
                raise TypeError(
                    f"FieldSpec {short_repr(self.name)}: schema must be a mapping, got {short_repr(self.schema)}"
                )
            plain_json(f"FieldSpec {short_repr(self.name)}: schema", self.schema)
            object.__setattr__(self, "schema", ReadOnlyDict(self.schema))

    @property
    def types(self) -> tuple[str, ...]:
        """The accepted JSON types as a tuple (empty = any)."""
        t = self.type
        return (t,) if isinstance(t, str) else (t or ())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (defaults omitted)."""
        d: dict[str, Any] = {"name": self.name}
        if self.type is not None:
            d["type"] = self.type if isinstance(self.type, str) else list(self.type)
        if not self.required:
            d["required"] = False
        if self.importance != 1.0:
            d["importance"] = self.importance
        if self.description:
            d["description"] = self.description
        if self.schema is not None:
            d["schema"] = _thaw(self.schema)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FieldSpec:
        """Inverse of :meth:`to_dict`; unknown keys raise ``ValueError``."""
        _check_keys(
            "FieldSpec", data, {"name", "type", "required", "importance", "description", "schema"}
        )
        return cls(**dict(data))


@dataclass(frozen=True)
class NodeType:
    """A node type (a tool): its fields, its weight and free metadata (e.g. ``destructive``).

    Example:
        >>> nt = NodeType("search", (FieldSpec("q", "string"),))
        >>> nt.field("q").type, nt.field("missing") is None, nt.weight
        ('string', True, 1.0)
    """

    name: str
    fields: tuple[FieldSpec, ...] = ()
    weight: float = 1.0
    description: str = ""
    metadata: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"NodeType.name must be a non-empty str, got {short_repr(self.name)}")
        fs = tuple(self.fields)
        for f in fs:
            if not isinstance(f, FieldSpec):
                raise TypeError(
                    f"NodeType {short_repr(self.name)}: fields must be FieldSpec, got {short_repr(f)}"
                )
        names = [f.name for f in fs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"NodeType {short_repr(self.name)}: duplicate field names {dup}")
        object.__setattr__(self, "fields", fs)
        object.__setattr__(
            self, "weight", _positive_cost(f"NodeType {short_repr(self.name)}: weight", self.weight)
        )
        object.__setattr__(self, "metadata", ReadOnlyDict(self.metadata))

    def field(self, name: str) -> FieldSpec | None:
        """The :class:`FieldSpec` called ``name``, or ``None``."""
        for f in self.fields:
            if f.name == name:
                return f
        return None

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the required fields."""
        return tuple(f.name for f in self.fields if f.required)


class GraphGrammar:
    """A set of :class:`NodeType` s with look-ups of weights and importances.

    Unknown node types weigh ``default_weight`` and unknown fields cost ``default_importance``,
    so a metric works (with unit costs) before any grammar is declared.

    Args:
        node_types: The node types (names must be unique).
        default_weight: Weight of a node type the grammar does not declare.
        default_importance: Importance of a field the grammar does not declare.
    """

    __slots__ = ("_nodes", "default_importance", "default_weight")

    def __init__(
        self,
        node_types: Iterable[NodeType] = (),
        *,
        default_weight: float = 1.0,
        default_importance: float = 1.0,
    ) -> None:
        nodes: dict[str, NodeType] = {}
        for nt in node_types:
            if not isinstance(nt, NodeType):
                raise TypeError(
                    f"GraphGrammar expects NodeType items, got {type(nt).__name__}: {short_repr(nt)}"
                )
            if nt.name in nodes:
                raise ValueError(f"GraphGrammar: duplicate node type {short_repr(nt.name)}")
            nodes[nt.name] = nt
        self._nodes = ReadOnlyDict(nodes)
        self.default_weight = _positive_cost("GraphGrammar.default_weight", default_weight)
        self.default_importance = _positive_cost(
            "GraphGrammar.default_importance", default_importance
        )

    @property
    def node_types(self) -> Mapping[str, NodeType]:
        """Read-only ``{name: NodeType}``."""
        return self._nodes

    def node(self, name: str) -> NodeType | None:
        """The node type called ``name``, or ``None``."""
        return self._nodes.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def weight(self, node: str) -> float:
        """The weight (cost of a missing or extra node) of node type ``node``."""
        nt = self._nodes.get(node)
        return self.default_weight if nt is None else nt.weight

    def importance(self, node: str, field_name: str) -> float:
        """The importance (cost of a wrong value) of ``field_name`` on node type ``node``."""
        nt = self._nodes.get(node)
        f = None if nt is None else nt.field(field_name)
        return self.default_importance if f is None else f.importance

    def merge(self, other: GraphGrammar) -> GraphGrammar:
        """A grammar with the node types of both; a name declared twice must be identical."""
        nodes = dict(self._nodes)
        for name, nt in other.node_types.items():
            if name in nodes and nodes[name] != nt:
                raise ValueError(
                    f"GraphGrammar.merge: node type {short_repr(name)} is declared differently"
                )
            nodes[name] = nt
        return GraphGrammar(
            nodes.values(),
            default_weight=self.default_weight,
            default_importance=self.default_importance,
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GraphGrammar)
            and dict(self._nodes) == dict(other._nodes)
            and (self.default_weight, self.default_importance)
            == (other.default_weight, other.default_importance)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GraphGrammar({sorted(self._nodes)!r})"
