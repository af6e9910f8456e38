"""Argument values as the matcher compares them: the scoring :class:`Context` (the grammar's
per-tool look-ups and the canonicaliser with its memo), frozen values, compiled gold patterns
and BFCL's type table.

A frozen value is canonicalised, hashable and type-tagged, so it keeps the distinctions BFCL
makes (``True`` is not ``1``; a list is ordered, a dict is not) and an exact call can be found
by hashing (source of the rules: ShishirPatil/gorilla,
``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` @ 6ea5797). A gold value becomes a pattern:
its frozen form when it is a literal, an :class:`AnyPattern` / :class:`DictPattern` /
:class:`ListPattern` when it holds :class:`~ek.agents.toolcalls.AnyOf` alternatives.

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> ctx = Context(None, resolve_canonicalizer("default"))
    >>> ctx.freeze({"b": [1, True], "a": " Paris "}) == ctx.freeze({"a": "paris", "b": [1, True]})
    True
    >>> ctx.freeze(True) == ctx.freeze(1), ctx.freeze([1, 2]) == ctx.freeze([2, 1])
    (False, False)
    >>> accepts(ctx.freeze(2), compile_pattern(AnyOf(1, 2), ctx))
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ek._validate import short_repr
from ek.agents.toolcalls._gold import AnyOf
from ek.canon import Canonicalizer
from ek.grammar import FieldSpec, GraphGrammar

__all__ = [
    "MAX_DEPTH",
    "PYTYPE",
    "AnyPattern",
    "CanonicalStrings",
    "Context",
    "DictPattern",
    "ListPattern",
    "Tool",
    "accepts",
    "compile_pattern",
    "field_types",
    "is_pattern",
]

# Tags of frozen values (a NUL-prefixed string never collides with a canonical string's tuple).
BOOL = "\x00bool"
DICT = "\x00dict"
LIST = "\x00list"
NAN = ("\x00nan",)
MAX_DEPTH = 100
_MEMO_MAX = 200_000


#: BFCL's doc type -> Python type table (``any`` is checked as ``str``, as BFCL does), plus the
#: JSON-schema names ToolSpec normalises to.
PYTYPE: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "object": dict,
    "any": str,
}


def field_types(fs: FieldSpec) -> tuple[type, type | None] | None:
    """(Python type, element type of an array) a schema field declares, or ``None``.

    Example:
        >>> field_types(FieldSpec("n", type="integer"))
        (<class 'int'>, None)
    """
    raw = fs.schema.get("type") if fs.schema is not None else None
    if not isinstance(raw, str) or raw not in PYTYPE:
        raw = fs.type if isinstance(fs.type, str) else None
    if raw is None or raw not in PYTYPE:
        return None
    nested = None
    if raw in ("array", "tuple") and fs.schema is not None:
        items = fs.schema.get("items")
        if isinstance(items, Mapping) and isinstance(items.get("type"), str):
            nested = PYTYPE.get(items["type"])
    return PYTYPE[raw], nested


class Tool:
    """What the grammar says about one tool: weight, argument importances, schema and types.

    ``fields`` is ``None`` when the grammar declares no arguments for the tool (no schema).
    """

    __slots__ = ("default_importance", "fields", "importances", "required", "types", "weight")

    def __init__(self, grammar: GraphGrammar | None, name: str) -> None:
        node = None if grammar is None else grammar.node(name)
        self.weight = 1.0 if grammar is None else grammar.weight(name)
        self.default_importance = 1.0 if grammar is None else grammar.default_importance
        self.importances: dict[str, float] = (
            {} if node is None else {f.name: f.importance for f in node.fields}
        )
        self.fields: dict[str, FieldSpec] | None = (
            None if node is None or not node.fields else {f.name: f for f in node.fields}
        )
        fields = {} if self.fields is None else self.fields
        self.types: dict[str, tuple[type, type | None] | None] = {
            k: field_types(f) for k, f in fields.items()
        }
        #: The arguments the schema requires, in its order.
        self.required: tuple[str, ...] = tuple(k for k, f in fields.items() if f.required)

    def importance(self, arg: str) -> float:
        """The importance of argument ``arg`` (the grammar's default when it names none)."""
        return self.importances.get(arg, self.default_importance)


def _bad_value(v: Any) -> TypeError:
    return TypeError(
        "argument values must be JSON-like (str, int, float, bool, None, list, dict), "
        f"got {type(v).__name__}: {short_repr(v, 120)}"
    )


def _enter(v: Any, path: tuple[int, ...]) -> tuple[int, ...]:
    """``path`` extended by container ``v``; a cycle or too deep a nesting raises."""
    if id(v) in path:
        raise ValueError("the value is cyclic (it contains itself)")
    if len(path) >= MAX_DEPTH:
        raise ValueError(f"the value is nested deeper than {MAX_DEPTH} levels")
    return (*path, id(v))


class CanonicalStrings(dict[str, Any]):
    """The canonical form of every string looked up, computed on its first look-up (the same
    strings recur across a corpus); emptied when it grows past 200,000 strings."""

    def __init__(self, canon: Canonicalizer) -> None:
        super().__init__()
        self.canon = canon

    def __missing__(self, s: str) -> Any:
        if len(self) >= _MEMO_MAX:
            self.clear()
        self[s] = canonical = self.canon(s)
        return canonical


class Context:
    """The look-ups of one scoring setup: the grammar's tools and the canonical strings.

    Args:
        grammar: Costs and schemas (``None`` = unit costs, no schemas).
        canon: The canonicaliser applied to every leaf value.
    """

    __slots__ = ("canon", "grammar", "memo", "tools")

    def __init__(self, grammar: GraphGrammar | None, canon: Canonicalizer) -> None:
        self.grammar = grammar
        self.canon = canon
        self.memo = CanonicalStrings(canon)
        self.tools: dict[str, Tool] = {}

    def for_grammar(self, grammar: GraphGrammar | None) -> Context:
        """A context for another grammar with the same canonicaliser, sharing its strings."""
        ctx = Context(grammar, self.canon)
        ctx.memo = self.memo
        return ctx

    def tool(self, name: str) -> Tool:
        """The grammar's :class:`Tool` entry for ``name`` (built once)."""
        if name not in self.tools:
            self.tools[name] = Tool(self.grammar, name)
        return self.tools[name]

    def text(self, s: str) -> Any:
        """The canonical form of string ``s``."""
        return self.memo[s]

    def freeze(self, v: Any, path: tuple[int, ...] = ()) -> Any:
        """Canonicalise every leaf and return a hashable, type-tagged form (bool != int).

        Errors name the problem; the caller prefixes which call and argument it was.
        """
        t = type(v)
        if t is str:
            return self.memo[v]
        if v is None:
            return None
        if t is bool:
            return (BOOL, v)
        if t is int or t is float:
            return self._number(v, path)
        if isinstance(v, (Mapping, list, tuple)):
            return self._container(v, path)
        if isinstance(v, bool):
            return (BOOL, bool(v))
        if isinstance(v, (int, float)):
            return self.freeze(float(v) if isinstance(v, float) else int(v), path)
        raise _bad_value(v)

    def _number(self, v: float, path: tuple[int, ...]) -> Any:
        v = self.canon(v)
        if type(v) is not int and type(v) is not float:
            return self.freeze(v, path)
        return v if v == v else NAN  # NaN equals NaN

    def _container(self, v: Any, path: tuple[int, ...]) -> Any:
        p = _enter(v, path)
        if not isinstance(v, Mapping):
            return (LIST, tuple(self.freeze(x, p) for x in v))
        items = []
        for k, x in v.items():
            if type(k) is not str:
                raise TypeError(f"dict keys must be str, got {short_repr(k, 120)}")
            items.append((k, self.freeze(x, p)))
        items.sort(key=_first)
        return (DICT, tuple(items))


def _first(kv: tuple[str, Any]) -> str:
    return kv[0]


# --------------------------------------------------------------------------- gold patterns


class AnyPattern:
    """Compiled :class:`~ek.agents.toolcalls.AnyOf`: frozen literal alternatives (``lits``),
    pattern alternatives (``others``) and whether the argument may be omitted."""

    __slots__ = ("lits", "optional", "others")

    def __init__(self, lits: frozenset[Any], others: tuple[Any, ...], optional: bool) -> None:
        self.lits = lits
        self.others = others
        self.optional = optional


class DictPattern:
    """A gold dict holding :class:`~ek.agents.toolcalls.AnyOf` values: key -> pattern."""

    __slots__ = ("items",)

    def __init__(self, items: dict[str, Any]) -> None:
        self.items = items


class ListPattern:
    """A gold list holding :class:`~ek.agents.toolcalls.AnyOf` values: one pattern a place."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[Any, ...]) -> None:
        self.items = items


_PATTERNS = (AnyPattern, DictPattern, ListPattern)
_SCALARS = (str, int, float, bool, type(None))


def is_pattern(x: Any) -> bool:
    """Is ``x`` a compiled pattern (rather than a frozen literal)?"""
    return type(x) in _PATTERNS


def compile_pattern(x: Any, ctx: Context, path: tuple[int, ...] = ()) -> Any:
    """A gold value as a pattern: a literal becomes its frozen form, AnyOf and containers
    holding AnyOf become pattern objects."""
    if type(x) in _SCALARS:
        return ctx.freeze(x)
    if isinstance(x, AnyOf):
        alts = [compile_pattern(a, ctx, path) for a in x.values]
        lits = frozenset(a for a in alts if not is_pattern(a))
        others = tuple(a for a in alts if is_pattern(a))
        return AnyPattern(lits, others, x.optional)
    if isinstance(x, (Mapping, list, tuple)) and _has_anyof(x, path):
        p = _enter(x, path)
        if not isinstance(x, Mapping):
            return ListPattern(tuple(compile_pattern(v, ctx, p) for v in x))
        items = {}
        for k, v in x.items():
            if type(k) is not str:
                raise TypeError(f"dict keys must be str, got {short_repr(k, 120)}")
            items[k] = compile_pattern(v, ctx, p)
        return DictPattern(items)
    return ctx.freeze(x, path)


def _has_anyof(x: Any, path: tuple[int, ...]) -> bool:
    if type(x) in _SCALARS:
        return False
    if isinstance(x, AnyOf):
        return True
    if not isinstance(x, (Mapping, list, tuple)):
        return False
    p = _enter(x, path)
    vals = x.values() if isinstance(x, Mapping) else x
    return any(_has_anyof(v, p) for v in vals)


def accepts(value: Any, pattern: Any) -> bool:
    """Does the frozen predicted ``value`` satisfy the compiled gold ``pattern``?"""
    t = type(pattern)
    if t is AnyPattern:
        return value in pattern.lits or any(accepts(value, o) for o in pattern.others)
    if t is DictPattern:
        return _dict_accepts(value, pattern)
    if t is ListPattern:
        if type(value) is not tuple or not value or value[0] != LIST:
            return False
        items = value[1]
        return len(items) == len(pattern.items) and all(map(accepts, items, pattern.items))
    return bool(value == pattern)


def _dict_accepts(value: Any, pattern: DictPattern) -> bool:
    if type(value) is not tuple or not value or value[0] != DICT:
        return False
    d = dict(value[1])
    items = pattern.items
    if any(k not in items for k in d):
        return False
    for k, sub in items.items():
        if k in d:
            if not accepts(d[k], sub):
                return False
        elif not (type(sub) is AnyPattern and sub.optional):
            return False
    return True
