"""Argument values for comparison: canonicalised, frozen (hashable, type-tagged) values, the
grammar's per-tool look-ups, and compiled gold patterns (:class:`AnyOf` alternatives, nested dicts
and lists of them) with the untyped matcher :func:`_match`.

A frozen value keeps the distinctions BFCL makes (``True`` is not ``1``; a list is ordered, a dict
is not) and is hashable, so exact calls can be found by hashing (source of the rules:
ShishirPatil/gorilla, ``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` @ 6ea5797).

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
    >>> ctx.freeze({"b": [1, True], "a": " Paris "}) == ctx.freeze({"a": "paris", "b": [1, True]})
    True
    >>> ctx.freeze(True) == ctx.freeze(1), ctx.freeze([1, 2]) == ctx.freeze([2, 1])
    (False, False)
    >>> _match(ctx.freeze(2), _compile(AnyOf(1, 2), ctx))
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ek.agents._bfcltypes import _field_types
from ek.agents._gold import AnyOf
from ek.canon import Canonicalizer, text_function
from ek.grammar import FieldSpec, GraphGrammar

__all__ = [
    "_BOOL",
    "_DICT",
    "_LIST",
    "_MAX_DEPTH",
    "_NAN",
    "_PATTERNS",
    "_AnyPat",
    "_Ctx",
    "_DictPat",
    "_ListPat",
    "_Tool",
    "_compile",
    "_match",
]

_BOOL = "\x00bool"
_DICT = "\x00dict"
_LIST = "\x00list"
_NAN = ("\x00nan",)
_MAX_DEPTH = 100


def _bad_value(v: Any) -> TypeError:
    return TypeError(
        "argument values must be JSON-like (str, int, float, bool, None, list, dict), "
        f"got {type(v).__name__}: {v!r:.120}"
    )


class _Ctx:
    """Per-evaluation look-ups: grammar costs and schema fields, and the canonicaliser memo."""

    __slots__ = ("_text", "_tools", "canon", "grammar", "integral", "leaf_canon", "memo")

    def __init__(self, grammar: GraphGrammar | None, canon: Canonicalizer, memo: dict[str, Any]):
        self.grammar = grammar
        self.canon = canon
        # The built-in canonicalisers pass non-strings through unchanged: skip calling them,
        # and call their string function on strings.
        text = text_function(canon)
        self.leaf_canon = text is None
        self._text = canon if text is None else text
        self.memo = memo
        self._tools: dict[str, _Tool] = {}
        # Every tool looked up so far has small whole-number costs (the default): sums of its
        # masses are exact in any order, so they need not be added in gold order.
        self.integral = True

    # -- canonical strings (memoised: the same strings recur across a corpus)
    def cs(self, s: str) -> Any:
        r = self.memo.get(s)
        if r is None:
            r = self.new_cs(s)
        return r

    def new_cs(self, s: str) -> Any:
        """The canonical form of a string not in the memo yet (for callers that looked)."""
        memo = self.memo
        if len(memo) > 200_000:
            memo.clear()
        r = memo[s] = self._text(s)
        return r

    def freeze(self, v: Any, path: tuple[int, ...] = ()) -> Any:
        """Canonicalise every leaf and return a hashable, type-tagged form (bool != int).

        Errors name the problem; the caller prefixes which call and argument it was.
        """
        t = type(v)
        if t is str:
            return self.cs(v)
        if v is None:
            return None
        if t is bool:
            return (_BOOL, v)
        if t is int or t is float:
            if self.leaf_canon:
                v = self.canon(v)
                if type(v) is not int and type(v) is not float:
                    return self.freeze(v, path)
            return v if v == v else _NAN
        if t is dict or t is list or t is tuple or isinstance(v, (Mapping, list, tuple)):
            if id(v) in path:
                raise ValueError("the value is cyclic (it contains itself)")
            if len(path) >= _MAX_DEPTH:
                raise ValueError(f"the value is nested deeper than {_MAX_DEPTH} levels")
            p = (*path, id(v))
            if t is not list and t is not tuple and isinstance(v, Mapping):
                items = []
                for k, x in v.items():
                    if type(k) is not str:
                        raise TypeError(f"dict keys must be str, got {k!r:.120}")
                    items.append((k, self.freeze(x, p)))
                items.sort(key=lambda kv: kv[0])
                return (_DICT, tuple(items))
            return (_LIST, tuple(self.freeze(x, p) for x in v))
        if isinstance(v, bool):
            return (_BOOL, bool(v))
        if isinstance(v, (int, float)):
            return self.freeze(float(v) if isinstance(v, float) else int(v), path)
        raise _bad_value(v)

    # -- grammar look-ups (cached per tool)
    def tool(self, name: str) -> _Tool:
        t = self._tools.get(name)
        if t is None:
            t = self._tools[name] = _Tool(self.grammar, name)
            if not t.integral:
                self.integral = False
        return t

    def fields(self, tool: str) -> dict[str, FieldSpec] | None:
        return self.tool(tool).fields

    def weight(self, tool: str) -> float:
        return self.tool(tool).weight

    def imp(self, tool: str, arg: str) -> float:
        t = self.tool(tool)
        return t.imps.get(arg, t.dimp)


class _Tool:
    """What the grammar says about one tool: weight, argument importances, schema and types."""

    __slots__ = ("dimp", "fields", "imps", "integral", "nmass", "types", "weight")

    def __init__(self, grammar: GraphGrammar | None, name: str) -> None:
        node = None if grammar is None else grammar.node(name)
        self.weight = 1.0 if grammar is None else grammar.weight(name)
        self.dimp = 1.0 if grammar is None else grammar.default_importance
        self.imps: dict[str, float] = (
            {} if node is None else {f.name: f.importance for f in node.fields}
        )
        self.fields: dict[str, FieldSpec] | None = (
            None if node is None or not node.fields else {f.name: f for f in node.fields}
        )
        self.types: dict[str, tuple[type, type | None] | None] = (
            {} if self.fields is None else {k: _field_types(f) for k, f in self.fields.items()}
        )
        self.nmass = _Masses(self.weight, self.dimp)
        # Whole numbers below 2**32: any sum of a call list's masses is exact in floating point.
        self.integral = all(
            float(x).is_integer() and 0 <= x < 2**32
            for x in (self.weight, self.dimp, *self.imps.values())
        )


class _Masses(dict[int, float]):
    """``masses[n]``: the mass of a call with ``n`` arguments when no argument has its own
    importance (weight, then the default importance added ``n`` times, in the order the
    per-argument loops add it, so the floats are identical); computed once per ``n``.

    Example:
        >>> _Masses(1.0, 0.1)[3] == 1.0 + 0.1 + 0.1 + 0.1
        True
    """

    __slots__ = ("dimp", "weight")

    def __init__(self, weight: float, dimp: float) -> None:
        super().__init__()
        self.weight = weight
        self.dimp = dimp

    def __missing__(self, n: int) -> float:
        mass = self.weight
        for _ in range(n):
            mass += self.dimp
        self[n] = mass
        return mass


# --------------------------------------------------------------------------- compiled gold patterns


class _AnyPat:
    __slots__ = ("lits", "optional", "others")

    def __init__(self, lits: frozenset[Any], others: tuple[Any, ...], optional: bool) -> None:
        self.lits = lits
        self.others = others
        self.optional = optional


class _DictPat:
    __slots__ = ("items",)

    def __init__(self, items: dict[str, Any]) -> None:
        self.items = items


class _ListPat:
    __slots__ = ("items",)

    def __init__(self, items: tuple[Any, ...]) -> None:
        self.items = items


_SCALARS = (str, int, float, bool, type(None))


_PATTERNS = frozenset({_AnyPat, _DictPat, _ListPat})


def _compile(x: Any, ctx: _Ctx, path: tuple[int, ...] = ()) -> Any:
    """A gold value as a pattern: a literal becomes its frozen form, AnyOf/containers of AnyOf
    become pattern objects (_AnyPat, _DictPat, _ListPat)."""
    t = type(x)
    if t in _SCALARS:
        return ctx.freeze(x)
    if (t is list or t is tuple) and all(type(v) in _SCALARS for v in x):
        return ctx.freeze(x, path)  # a flat literal list: nothing to compile
    if isinstance(x, AnyOf):
        alts = [_compile(a, ctx, path) for a in x.values]
        lits = frozenset(a for a in alts if type(a) not in _PATTERNS)
        others = tuple(a for a in alts if type(a) in _PATTERNS)
        return _AnyPat(lits, others, x.optional)
    if isinstance(x, (Mapping, list, tuple)) and _has_anyof(x, path):
        p = (*path, id(x))
        if isinstance(x, Mapping):
            items = {}
            for k, v in x.items():
                if type(k) is not str:
                    raise TypeError(f"dict keys must be str, got {k!r:.120}")
                items[k] = _compile(v, ctx, p)
            return _DictPat(items)
        return _ListPat(tuple(_compile(v, ctx, p) for v in x))
    return ctx.freeze(x, path)


def _has_anyof(x: Any, path: tuple[int, ...]) -> bool:
    if type(x) in _SCALARS:
        return False
    if isinstance(x, AnyOf):
        return True
    if isinstance(x, (Mapping, list, tuple)):
        if id(x) in path:
            raise ValueError("the value is cyclic (it contains itself)")
        if len(path) >= _MAX_DEPTH:
            raise ValueError(f"the value is nested deeper than {_MAX_DEPTH} levels")
        p = (*path, id(x))
        vals = x.values() if isinstance(x, Mapping) else x
        return any(_has_anyof(v, p) for v in vals)
    return False


def _match(pv: Any, pat: Any) -> bool:
    """Does the frozen predicted value ``pv`` satisfy the compiled gold pattern ``pat``?"""
    t = type(pat)
    if t not in _PATTERNS:
        return bool(pv == pat)
    if t is _AnyPat:
        if pv in pat.lits:
            return True
        return any(_match(pv, o) for o in pat.others)
    if type(pv) is not tuple or not pv:
        return False
    if t is _DictPat:
        if pv[0] != _DICT:
            return False
        d = dict(pv[1])
        items = pat.items
        if any(k not in items for k in d):
            return False
        for k, sub in items.items():
            if k in d:
                if not _match(d[k], sub):
                    return False
            elif not (type(sub) is _AnyPat and sub.optional):
                return False
        return True
    if pv[0] != _LIST or len(pv[1]) != len(pat.items):
        return False
    return all(_match(a, b) for a, b in zip(pv[1], pat.items))
