"""Tool-call scoring: the multiset matcher :func:`match_calls` and :class:`ToolCallMetric`.

Tool calls are a keyless multiset (DESIGN rule 3): two ``search(q=...)`` calls collide on any
key, and a reordering or a repeat silently miscounts unless the calls are *assigned* first.
:func:`match_calls` therefore assigns predicted calls to gold calls inside each tool-name group:
exact-argument matches are claimed first, then the rest by a **maximum bipartite matching**
(a min-cost assignment solved with the Hungarian algorithm, written here in pure Python) on
weighted argument agreement; never greedy first-fit. Only then are weighted TP/FP/FN counted
(through :mod:`ek.fields`).

Gold calls express what BFCL's ``possible_answer`` expresses (source: ShishirPatil/gorilla,
``berkeley-function-call-leaderboard/bfcl_eval/eval_checker/ast_eval/ast_checker.py`` @ 6ea5797):
several acceptable values per argument (:class:`AnyOf`), optional arguments
(``AnyOf(..., optional=True)``; BFCL writes ``""`` among the values), nested lists (element order
relevant) and dicts (whose values may again be :class:`AnyOf`). When the grammar declares the
tool's arguments (a :class:`~ek.agents.base.ToolSpec` rendered into a
:class:`~ek.grammar.GraphGrammar`), BFCL's rules apply too: required arguments must be present,
arguments the schema does not declare are rejected, and values are type-checked as BFCL does (an
int is accepted for a float, a float is not an int, a bool is not an int; BFCL's "variable" rule;
BFCL's string / list / dict checkers with the canonicaliser standing in for
``standardize_string``).

Costs (Layer A): a wrong, missing or unexpected argument costs its ``FieldSpec.importance``; a
call's *mass* is its tool's weight (:data:`~ek.agents.base.DESTRUCTIVE_WEIGHT` = 10 for a
destructive tool) plus the importance of the arguments it carries, and a missing (extra) call
costs its whole mass as false negatives (false positives). A matched call earns its tool's weight
plus the importance of every argument it got right as true positives. So an absent call always
costs at least as much as a present call with every argument wrong.

Example:
    >>> from ek.agents.base import Step
    >>> gold = [Step("search", {"q": "refund policy"}), Step("search", {"q": "shipping"})]
    >>> pred = [Step("search", {"q": "Shipping "}), Step("search", {"q": "refund policy"}),
    ...         Step("lookup", {"id": 7})]
    >>> r = match_calls(pred, gold)
    >>> [(m.pred_index, m.gold_index, m.exact) for m in r.matched]
    [(1, 0, True), (0, 1, True)]
    >>> [(e.index, e.tool) for e in r.extra], r.valid
    ([(2, 'lookup')], False)
    >>> s = ToolCallMetric()(pred, gold)
    >>> round(s.value, 4), s.detail["tp"], s.detail["fp"], s.passed   # 2*4 / (2*4 + 2)
    (0.8, 4.0, 2.0, False)
"""

from __future__ import annotations

import json
import math
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ek.agents.base import Step, TaskSpec, ToolSpec, Trajectory
from ek.base import Score, is_episode
from ek.canon import Canonicalizer, resolve_canonicalizer
from ek.fields import FieldCounts, micro_f1
from ek.grammar import FieldSpec, GraphGrammar
from ek.registry import register

__all__ = [
    "AnyOf",
    "ArgVerdict",
    "BfclCase",
    "CallMatch",
    "GoldCall",
    "MatchResult",
    "ToolCallMetric",
    "UnmatchedCall",
    "from_bfcl",
    "match_calls",
    "tool_call_score",
]

# --------------------------------------------------------------------------- gold patterns


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
            raise TypeError(f"AnyOf.optional must be a bool, got {optional!r}")
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
        return (
            f"AnyOf({inner}{', ' if inner else ''}optional=True)"
            if self.optional
            else (f"AnyOf({inner})")
        )

    def to_dict(self) -> dict[str, Any]:
        """``{"any_of": [...], "optional": bool}`` (nested AnyOf rendered the same way)."""
        return {"any_of": [_show(v) for v in self.values], "optional": self.optional}


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
            raise ValueError(f"GoldCall.tool must be a non-empty str, got {self.tool!r:.200}")
        if not isinstance(self.args, Mapping):
            raise TypeError(
                f"GoldCall({self.tool!r}).args must be a mapping, got "
                f"{type(self.args).__name__}: {self.args!r:.200}"
            )
        bad = [k for k in self.args if not isinstance(k, str)]
        if bad:
            raise TypeError(f"GoldCall({self.tool!r}).args keys must be str, got {bad[:3]!r}")
        object.__setattr__(self, "args", dict(self.args))


def _show(v: Any) -> Any:
    """A JSON-ready rendering of a gold pattern (AnyOf -> ``{"any_of": ..., "optional": ...}``)."""
    if isinstance(v, AnyOf):
        return v.to_dict()
    if isinstance(v, Mapping):
        return {k: _show(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_show(x) for x in v]
    return v


# --------------------------------------------------------------------------- results


class ArgVerdict(NamedTuple):
    """How one argument of a matched call fared.

    ``verdict`` is ``match``, ``wrong`` (present, value or type wrong), ``missing`` (expected,
    absent) or ``extra`` (given but not expected, or not a parameter of the tool).
    """

    arg: str
    verdict: str
    importance: float
    predicted: Any
    expected: Any
    reason: str


class CallMatch(NamedTuple):
    """A predicted call assigned to a gold call, with its per-argument verdicts.

    ``exact`` is BFCL's verdict for the pair; ``tp``/``fp``/``fn`` are the pair's weighted
    counts; ``cost`` is the importance of the arguments that differ (each counted once).
    """

    gold_index: int
    pred_index: int
    tool: str
    args: tuple[ArgVerdict, ...]
    exact: bool
    tp: float
    fp: float
    fn: float
    cost: float

    @property
    def counts(self) -> FieldCounts:
        """The pair's weighted TP/FP/FN."""
        return FieldCounts(self.tp, self.fp, self.fn)

    @property
    def wrong_args(self) -> tuple[ArgVerdict, ...]:
        """The arguments that were not a match."""
        return tuple(a for a in self.args if a.verdict != "match")


@dataclass(frozen=True)
class UnmatchedCall:
    """A gold call nothing was assigned to (missing) or a predicted call left over (extra)."""

    index: int
    tool: str
    args: Mapping[str, Any]
    cost: float


@dataclass(frozen=True)
class MatchResult:
    """The assignment of predicted to gold calls and the weighted counts it adds up to.

    Attributes:
        matched: The assigned pairs, in gold order.
        missing: Gold calls with no predicted call (their ``cost`` is their mass).
        extra: Predicted calls assigned to no gold call.
        counts: Weighted TP/FP/FN over all of it.
    """

    matched: tuple[CallMatch, ...]
    missing: tuple[UnmatchedCall, ...]
    extra: tuple[UnmatchedCall, ...]
    counts: FieldCounts

    @property
    def valid(self) -> bool:
        """BFCL's verdict: every gold call matched exactly and nothing extra."""
        return not self.missing and not self.extra and all(m.exact for m in self.matched)

    @property
    def value(self) -> float:
        """Weighted F1 of :attr:`counts` (1.0 for empty against empty)."""
        return self.counts.f1

    @property
    def wrong_args(self) -> tuple[tuple[CallMatch, ArgVerdict], ...]:
        """Every (pair, argument) that was not a match."""
        return tuple((m, a) for m in self.matched for a in m.args if a.verdict != "match")

    @property
    def reason(self) -> str:
        """One paragraph a person can read: what matched, what is missing, extra or wrong."""
        return _reason(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready breakdown (the lists that :class:`ToolCallMetric` puts in its detail)."""
        return _breakdown(self)


# --------------------------------------------------------------------------- freezing / canon

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

    __slots__ = ("_tools", "canon", "grammar", "leaf_canon", "memo")

    def __init__(self, grammar: GraphGrammar | None, canon: Canonicalizer, memo: dict[str, Any]):
        self.grammar = grammar
        self.canon = canon
        # The built-in canonicalisers pass non-strings through unchanged: skip calling them.
        self.leaf_canon = not _is_builtin_canon(canon)
        self.memo = memo
        self._tools: dict[str, _Tool] = {}

    # -- canonical strings (memoised: the same strings recur across a corpus)
    def cs(self, s: str) -> Any:
        memo = self.memo
        r = memo.get(s)
        if r is None:
            if len(memo) > 200_000:
                memo.clear()
            r = memo[s] = self.canon(s)
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
            if isinstance(v, Mapping):
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

    __slots__ = ("dimp", "fields", "imps", "types", "weight")

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


def _is_builtin_canon(canon: Canonicalizer) -> bool:
    return any(canon is resolve_canonicalizer(n) for n in ("default", "bfcl", "raw"))


# compiled gold patterns (untyped path) ------------------------------------------------------


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
    if type(x) in _SCALARS:
        return ctx.freeze(x)
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


# --------------------------------------------------------------------------- BFCL typed checks

#: BFCL's doc type -> Python type table (``any`` is checked as ``str``, as BFCL does), plus the
#: JSON-schema names ToolSpec normalises to.
_PYTYPE: dict[str, type] = {
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


def _field_types(fs: FieldSpec) -> tuple[type, type | None] | None:
    raw = fs.schema.get("type") if fs.schema is not None else None
    if not isinstance(raw, str) or raw not in _PYTYPE:
        raw = fs.type if isinstance(fs.type, str) else None
    if raw is None or raw not in _PYTYPE:
        return None
    nested = None
    if raw in ("array", "tuple") and fs.schema is not None:
        items = fs.schema.get("items")
        if isinstance(items, Mapping) and isinstance(items.get("type"), str):
            nested = _PYTYPE.get(items["type"])
    return _PYTYPE[raw], nested


def _alts(g: Any) -> list[Any]:
    """The BFCL possible-answer list of a gold pattern (``""`` appended when optional)."""
    if isinstance(g, AnyOf):
        return [*g.values, ""] if g.optional else list(g.values)
    return [g]


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _first_type(pa: Sequence[Any]) -> type | None:
    for a in pa:
        if not (type(a) is str and a == ""):
            return type(a)
    return None


def _typed_check(value: Any, gold: Any, types: tuple[type, type | None], ctx: _Ctx) -> str | None:
    """BFCL's type + value check for one argument; ``None`` when valid, else the reason."""
    exp, nested = types
    pa = _alts(gold)
    if type(value) is not dict and type(value) is not list and isinstance(value, (Mapping, tuple)):
        value = _plain(value)
    if exp is float and type(value) is int:
        value = float(value)  # BFCL: Python's int -> float auto-conversion (top level only)
    pa_type = _first_type(pa)
    is_var = pa_type is not None and pa_type is not exp
    if _is_type(value, exp):
        if nested is not None:
            ok = False
            for item in pa:
                flag = True
                if type(item) is list:
                    sub_t = _first_type(item)
                    for vi in value:
                        if not (type(vi) is nested or (sub_t is not None and type(vi) is sub_t)):
                            flag = False
                            break
                if flag:
                    ok = True
                    break
            if not ok:
                return f"an element is not of type {nested.__name__}"
    elif pa_type is not None and _is_type(value, pa_type):
        is_var = True
    else:
        return f"type {type(value).__name__}, expected {exp.__name__}"
    if not is_var:
        if exp is dict:
            return None if _dict_ok(value, pa, ctx) else "dict value not acceptable"
        if exp is list and nested is dict:
            return None if _list_dict_ok(value, pa, ctx) else "list of dicts not acceptable"
        if exp is str:
            ok = ctx.cs(value) in [ctx.cs(a) for a in pa if type(a) is str]
            return None if ok else "value not acceptable"
        if exp is list:
            return None if _list_ok(value, pa, ctx) else "list not acceptable"
    return None if value in pa else "value not acceptable"


def _is_type(v: Any, t: type) -> bool:
    return type(v) is t  # BFCL compares exact types: a bool is not an int


def _std(x: Any, ctx: _Ctx) -> Any:
    return ctx.cs(x) if type(x) is str else x


def _list_ok(value: list[Any], pa: Sequence[Any], ctx: _Ctx) -> bool:
    v = [_std(x, ctx) for x in value]
    return any(isinstance(a, (list, str)) and v == [_std(x, ctx) for x in a] for a in pa)


def _dict_ok(value: Mapping[str, Any], pa: Sequence[Any], ctx: _Ctx) -> bool:
    for alt in pa:
        if not isinstance(alt, Mapping):
            continue  # BFCL skips "" (and cannot use anything else that is not a dict)
        ok = True
        for k, v in value.items():
            if k not in alt or _std(v, ctx) not in [_std(a, ctx) for a in _alts(alt[k])]:
                ok = False
                break
        if ok and all(k in value or "" in _alts(g) for k, g in alt.items()):
            return True
    return False


def _list_dict_ok(value: list[Any], pa: Sequence[Any], ctx: _Ctx) -> bool:
    for alt in pa:
        if not isinstance(alt, (list, str)) or len(value) != len(alt):
            continue
        if all(isinstance(v, Mapping) and _dict_ok(v, [a], ctx) for v, a in zip(value, alt)):
            return True
    return False


# --------------------------------------------------------------------------- call preparation

_CALL_KEYS = frozenset({"tool", "name", "args", "arguments", "input", "id", "type", "function"})


def _call_parts(x: Any, i: int, side: str) -> tuple[str, Mapping[str, Any]]:
    """(tool, args) of one call given as a Step, GoldCall, dict or BFCL ``{name: args}``."""
    if isinstance(x, (Step, GoldCall)):
        return x.tool, x.args
    if isinstance(x, Mapping):
        d: Mapping[str, Any] = x
        if isinstance(d.get("function"), Mapping):
            d = d["function"]
        if "tool" not in d and "name" not in d and len(d) == 1:
            (name, args), *_ = d.items()
            if name not in _CALL_KEYS and isinstance(args, Mapping):
                d = {
                    "tool": name,
                    "args": args,
                }  # BFCL's decoded AST: {function_name: {param: value}}
        name = d.get("tool", d.get("name"))
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"{side} call {i} has no tool name: expected a non-empty 'tool' or 'name', "
                f"got {x!r:.200}"
            )
        args = d["args"] if "args" in d else d.get("arguments", d.get("input", {}))
        if args is None:
            args = {}
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError as e:
                raise ValueError(
                    f"{side} call {i} ({name!r}): arguments string is not JSON ({e})"
                ) from None
        if not isinstance(args, Mapping):
            raise TypeError(
                f"{side} call {i} ({name!r}): args must be a mapping, got "
                f"{type(args).__name__}: {args!r:.200}"
            )
        return name, args
    tool = getattr(x, "tool", getattr(x, "name", None))
    args = getattr(x, "args", getattr(x, "input_parameters", None))
    if isinstance(tool, str) and tool and isinstance(args, Mapping):
        return tool, args
    raise TypeError(
        f"{side} call {i} must be a Step, a GoldCall or a mapping with 'tool'/'name' and "
        f"'args'/'arguments', got {type(x).__name__}: {x!r:.200}"
    )


def _as_list(obj: Any, side: str) -> list[Any]:
    if type(obj) is list:
        return obj
    if is_episode(obj):
        obj = obj.trajectory
    if isinstance(obj, Trajectory):
        return list(obj.steps)
    if isinstance(obj, (str, bytes, Mapping)) or not isinstance(obj, Iterable):
        raise TypeError(
            f"{side} must be an Episode, a Trajectory or a list of calls, got "
            f"{type(obj).__name__}: {obj!r:.200}"
        )
    return list(obj)


def _where(side: str, i: int, tool: str, arg: Any, e: Exception) -> Exception:
    return type(e)(f"{side} call {i} ({tool!r}) argument {arg!r}: {e}")


class _PCall:
    __slots__ = ("args", "fargs", "index", "info", "key", "mass", "tool")

    def __init__(self, i: int, tool: str, args: Mapping[str, Any], ctx: _Ctx) -> None:
        self.index = i
        self.tool = tool
        self.args = args
        info = self.info = ctx.tool(tool)
        memo = ctx.memo
        cs = ctx.cs
        plain_numbers = not ctx.leaf_canon
        imps = info.imps
        dimp = info.dimp
        mass = info.weight
        fa = {}
        for k, v in args.items():
            t = type(v)
            if type(k) is not str:
                e = TypeError(f"argument names must be str, got {k!r:.120}")
                raise _where("predicted", i, tool, k, e)
            if t is str:
                fv = memo.get(v)
                if fv is None:
                    fv = cs(v)
            elif t is int and plain_numbers:
                fv = v
            else:
                try:
                    fv = ctx.freeze(v)
                except (TypeError, ValueError) as e:
                    raise _where("predicted", i, tool, k, e) from None
            fa[k] = fv
            mass += imps.get(k, dimp)
        self.fargs = fa
        self.key = (tool, frozenset(fa.items()))
        self.mass = mass


class _GCall:
    __slots__ = ("args", "index", "info", "key", "lit", "mass", "optional", "pats", "tool")

    def __init__(self, i: int, tool: str, args: Mapping[str, Any], ctx: _Ctx) -> None:
        self.index = i
        self.tool = tool
        self.args = args
        info = self.info = ctx.tool(tool)
        memo = ctx.memo
        cs = ctx.cs
        plain_numbers = not ctx.leaf_canon
        imps = info.imps
        dimp = info.dimp
        mass = info.weight
        pats = {}
        literal = True
        optional = []
        for k, v in args.items():
            t = type(v)
            if type(k) is not str:
                e = TypeError(f"argument names must be str, got {k!r:.120}")
                raise _where("gold", i, tool, k, e)
            if t is str:
                pat = memo.get(v)
                if pat is None:
                    pat = cs(v)
            elif t is int and plain_numbers:
                pat = v
            else:
                try:
                    pat = _compile(v, ctx)
                except (TypeError, ValueError) as e:
                    raise _where("gold", i, tool, k, e) from None
                if type(pat) in _PATTERNS:
                    literal = False
                    if type(pat) is _AnyPat and pat.optional:
                        optional.append(k)
                        pats[k] = pat
                        continue
            pats[k] = pat
            mass += imps.get(k, dimp)
        self.pats = pats
        self.optional = frozenset(optional)
        self.lit: dict[str, Any] | None = pats if literal else None
        self.key = (tool, frozenset(pats.items())) if literal else None
        self.mass = mass


def _prepare_pred(obj: Any, ctx: _Ctx) -> list[_PCall]:
    return [
        _PCall(i, *_call_parts(x, i, "predicted"), ctx)
        for i, x in enumerate(_as_list(obj, "prediction"))
    ]


def _prepare_gold(obj: Any, ctx: _Ctx) -> list[_GCall]:
    return [_GCall(i, *_call_parts(x, i, "gold"), ctx) for i, x in enumerate(_as_list(obj, "gold"))]


# --------------------------------------------------------------------------- pair comparison


class _Pair(NamedTuple):
    verdicts: tuple[ArgVerdict, ...]
    exact: bool
    tp: float
    fp: float
    fn: float
    cost: float


def _compare(p: _PCall, g: _GCall, ctx: _Ctx) -> _Pair:
    """Compare one predicted call with one gold call of the same tool, argument by argument."""
    tool = g.tool
    info = ctx.tool(tool)
    imps = info.imps
    dimp = info.dimp
    fields = info.fields
    types_of = info.types
    tp = info.weight
    fp = fn = cost = 0.0
    out: list[ArgVerdict] = []
    pargs = p.args
    gargs = g.args
    for k, pat in g.pats.items():
        i = imps.get(k, dimp)
        fs = None if fields is None else fields.get(k)
        if k in pargs:
            pv = pargs[k]
            if fields is not None and fs is None:
                fp += i
                cost += i
                out.append(ArgVerdict(k, "extra", i, pv, gargs[k], f"not a parameter of {tool}"))
                continue
            types = None if fs is None else types_of[k]
            if types is not None:
                why = _typed_check(pv, gargs[k], types, ctx)
            else:
                why = None if _match(p.fargs[k], pat) else "value not acceptable"
            if why is None:
                tp += i
                out.append(ArgVerdict(k, "match", i, pv, gargs[k], ""))
            else:
                fp += i
                fn += i
                cost += i
                out.append(ArgVerdict(k, "wrong", i, pv, gargs[k], why))
        elif k in g.optional and not (fs is not None and fs.required):
            continue
        else:
            fn += i
            cost += i
            why = "required by the tool's schema" if k in g.optional else "expected, not given"
            out.append(ArgVerdict(k, "missing", i, None, gargs[k], why))
    for k, pv in pargs.items():
        if k not in gargs:
            i = imps.get(k, dimp)
            fp += i
            cost += i
            why = (
                f"not a parameter of {tool}"
                if fields is not None and k not in fields
                else "not expected"
            )
            out.append(ArgVerdict(k, "extra", i, pv, None, why))
    if fields is not None:
        for k, fs in fields.items():
            if fs.required and k not in pargs and k not in gargs:
                i = imps.get(k, dimp)
                fn += i
                cost += i
                out.append(ArgVerdict(k, "missing", i, None, None, "required by the tool's schema"))
    exact = fp == 0.0 and fn == 0.0 and all(a.verdict == "match" for a in out)
    return _Pair(tuple(out), exact, tp, fp, fn, cost)


def _exact_pair(p: _PCall, g: _GCall, ctx: _Ctx) -> _Pair:
    """The verdicts of a pair already known to be identical (fast path)."""
    info = g.info
    imps = info.imps
    dimp = info.dimp
    tp = info.weight
    gargs = g.args
    out = []
    for k, pv in p.args.items():
        i = imps.get(k, dimp)
        tp += i
        out.append(ArgVerdict(k, "match", i, pv, gargs[k], ""))
    return _Pair(tuple(out), True, tp, 0.0, 0.0, 0.0)


# --------------------------------------------------------------------------- assignment


def _hungarian(cost: list[list[float]]) -> list[int]:
    """Min-cost assignment of every row to a distinct column (rows <= columns).

    The shortest-augmenting-path form of the Hungarian algorithm with row/column potentials
    (Kuhn 1955; Munkres 1957; O(n^2 m)). Ties are broken by the lowest column index, so equal
    inputs give equal assignments. Returns the column of each row.
    """
    n = len(cost)
    m = len(cost[0]) if n else 0
    inf = math.inf
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    p = [0] * (m + 1)  # p[j] = row (1-based) assigned to column j
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            row = cost[i0 - 1]
            ui = u[i0]
            delta = inf
            j1 = 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = row[j - 1] - ui - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    out = [-1] * n
    for j in range(1, m + 1):
        if p[j]:
            out[p[j] - 1] = j - 1
    return out


#: Pair cost for the assignment: "f1" = the pair's FP + FN (what ToolCallMetric counts), "edit" =
#: the importance of the differing arguments (what TrajectoryMetric counts).
_Objective = str


def _assign_group(
    preds: list[_PCall],
    golds: list[_GCall],
    ctx: _Ctx,
    *,
    objective: _Objective,
    extra_cost: bool,
    pairs_out: list[tuple[_GCall, _PCall, _Pair]],
    cache: dict[tuple[int, int], _Pair] | None = None,
) -> tuple[list[_GCall], list[_PCall]]:
    """Assign within one tool-name group by a min-cost assignment; returns what is left."""
    # (Exact matches of literal gold calls were claimed before, in _match_prepared.)
    if not golds or not preds:
        return golds, preds
    # 2. the rest by a maximum bipartite matching: exact pairs first (a bonus larger than any
    #    total cost), then the lowest total cost, with "leave both unmatched" always allowed.
    n, m = len(golds), len(preds)
    cmp: list[list[_Pair]] = []
    for gc in golds:
        prow: list[_Pair] = []
        for pc in preds:
            if cache is not None:
                key = (gc.index, pc.index)
                pr = cache.get(key)
                if pr is None:
                    pr = cache[key] = _compare(pc, gc, ctx)
            else:
                pr = _compare(pc, gc, ctx)
            prow.append(pr)
        cmp.append(prow)
    if n == 1 and m == 1:
        pr = cmp[0][0]
        pair_c = pr.fp + pr.fn if objective == "f1" else pr.cost
        alone = golds[0].mass + (preds[0].mass if extra_cost else 0.0)
        if pr.exact or pair_c <= alone:
            pairs_out.append((golds[0], preds[0], pr))
            return [], []
        return golds, preds
    ec = [pc.mass if extra_cost else 0.0 for pc in preds]
    pc_mat = [[(pr.fp + pr.fn if objective == "f1" else pr.cost) for pr in row] for row in cmp]
    big = 1.0 + sum(g.mass for g in golds) + sum(ec) + sum(max(r) for r in pc_mat)
    inf = math.inf
    mat: list[list[float]] = []
    for i in range(n):
        costs = [pc_mat[i][j] - ec[j] - (big if cmp[i][j].exact else 0.0) for j in range(m)]
        dummy = [inf] * n
        dummy[i] = golds[i].mass
        mat.append(costs + dummy)
    cols = _hungarian(mat)
    left_g = []
    taken = set()
    for i, j in enumerate(cols):
        if j < m:
            pairs_out.append((golds[i], preds[j], cmp[i][j]))
            taken.add(j)
        else:
            left_g.append(golds[i])
    return left_g, [pc for j, pc in enumerate(preds) if j not in taken]


def _index(c: _PCall | _GCall) -> int:
    return c.index


def _first(t: tuple[int, Any, Any, Any]) -> int:
    return t[0]


def _match_prepared(
    preds: list[_PCall],
    golds: list[_GCall],
    ctx: _Ctx,
    *,
    objective: _Objective = "f1",
    extra_cost: bool = True,
) -> MatchResult:
    # 1. Exact matches claimed first: a literal gold call on a tool without a schema is matched
    #    exactly by precisely the predicted calls with the same canonical key, so a multiset
    #    intersection by key is a maximum matching of the exact pairs (identical calls are
    #    interchangeable).
    pairs: list[tuple[int, _GCall, _PCall, _Pair]] = []
    by_key: dict[Any, list[_PCall]] = {}
    for pc in preds:
        b = by_key.get(pc.key)
        if b is None:
            by_key[pc.key] = [pc]
        else:
            b.append(pc)
    rest_g: list[_GCall] = []
    for gc in golds:
        b = by_key.get(gc.key) if gc.key is not None and gc.info.fields is None else None
        if b:
            pc = b.pop(0)
            pairs.append((gc.index, gc, pc, _exact_pair(pc, gc, ctx)))
        else:
            rest_g.append(gc)
    if len(pairs) == len(preds):
        rest_p: list[_PCall] = []
    elif not pairs:
        rest_p = preds
    else:
        rest_p = [pc for b in by_key.values() for pc in b]
        rest_p.sort(key=_index)
    # 2. The rest, per tool name, by a maximum bipartite matching.
    missing: list[_GCall] = []
    extra: list[_PCall] = []
    if rest_g and rest_p:
        gg: dict[str, list[_GCall]] = {}
        for gc in rest_g:
            gg.setdefault(gc.tool, []).append(gc)
        pg: dict[str, list[_PCall]] = {}
        for pc in rest_p:
            pg.setdefault(pc.tool, []).append(pc)
        out: list[tuple[_GCall, _PCall, _Pair]] = []
        for tool, gl in gg.items():
            pl = pg.get(tool)
            if not pl:
                missing.extend(gl)
                continue
            mg, ep = _assign_group(
                pl, gl, ctx, objective=objective, extra_cost=extra_cost, pairs_out=out
            )
            missing.extend(mg)
            extra.extend(ep)
        for tool, pl in pg.items():
            if tool not in gg:
                extra.extend(pl)
        pairs.extend((gc.index, gc, pc, pr) for gc, pc, pr in out)
        missing.sort(key=_index)
        extra.sort(key=_index)
    else:
        missing, extra = rest_g, rest_p
    pairs.sort(key=_first)
    tp = fp = fn = 0.0
    matched = []
    for _, gc, pc, pr in pairs:
        tp += pr.tp
        fp += pr.fp
        fn += pr.fn
        matched.append(
            CallMatch(
                gc.index, pc.index, gc.tool, pr.verdicts, pr.exact, pr.tp, pr.fp, pr.fn, pr.cost
            )
        )
    miss = []
    for gc in missing:
        fn += gc.mass
        miss.append(UnmatchedCall(gc.index, gc.tool, gc.args, gc.mass))
    ext = []
    for pc in extra:
        fp += pc.mass
        ext.append(UnmatchedCall(pc.index, pc.tool, pc.args, pc.mass))
    return MatchResult(tuple(matched), tuple(miss), tuple(ext), FieldCounts(tp, fp, fn))


def _resolve_grammar(grammar: Any) -> GraphGrammar | None:
    if grammar is None or isinstance(grammar, GraphGrammar):
        return grammar
    if isinstance(grammar, (TaskSpec, BfclCase)):
        return grammar.grammar()
    if isinstance(grammar, (list, tuple)) and all(isinstance(t, ToolSpec) for t in grammar):
        return GraphGrammar(t.to_node_type() for t in grammar)
    raise TypeError(
        f"grammar must be a GraphGrammar, a TaskSpec, a list of ToolSpec or None, got "
        f"{type(grammar).__name__}: {grammar!r:.200}"
    )


def _split_gold(gold: Any) -> tuple[Any, GraphGrammar | None]:
    """(gold calls, grammar carried by the gold) for a TaskSpec / BfclCase / plain gold."""
    if isinstance(gold, (TaskSpec, BfclCase)):
        calls = gold.gold_calls
        if calls is None:
            raise ValueError(
                f"TaskSpec {gold.task_id!r} has no gold_calls to score tool calls against"
                if isinstance(gold, TaskSpec)
                else "BfclCase has no gold calls"
            )
        return calls, gold.grammar() if gold.tools else None
    return gold, None


def match_calls(
    predicted: Any,
    gold: Any,
    *,
    grammar: GraphGrammar | None = None,
    canonicalizer: str | Canonicalizer | None = None,
) -> MatchResult:
    """Assign predicted calls to gold calls: a maximum bipartite matching per tool name.

    Within each tool-name group, exact matches (BFCL's verdict for the pair) are claimed first;
    the remaining calls are assigned by a min-cost assignment (Hungarian algorithm) that first
    maximises the number of exact pairs and then minimises the weighted argument errors, where
    leaving a gold call missing and a predicted call extra is always an option. This is what
    BFCL's greedy first-fit parallel checker approximates (it can reject a valid reordering).

    Args:
        predicted: An Episode, a Trajectory, or a list of calls (Steps or dicts with
            ``tool``/``name`` and ``args``/``arguments``; BFCL's ``{name: {args}}`` also works).
        gold: A list of calls (Steps, :class:`GoldCall` s or dicts; argument values may be
            :class:`AnyOf`), a Trajectory, a TaskSpec (its ``gold_calls`` and, when ``grammar`` is
            ``None``, its grammar) or a :class:`BfclCase`.
        grammar: Costs and tool schemas (weights, importances, types, required arguments).
        canonicalizer: A registered name (``"default"``, ``"bfcl"``, ``"raw"``) or a callable
            applied to every leaf value before comparison; ``None`` = ``"default"``.

    Returns:
        A frozen :class:`MatchResult`.

    Raises:
        ValueError: a call without a tool name, or a cyclic value.
        TypeError: non-mapping arguments or values that are not JSON-like.

    Example:
        >>> r = match_calls([{"name": "f", "arguments": '{"x": 2}'}],
        ...                 [GoldCall("f", {"x": AnyOf(1, 2)})])
        >>> r.valid, r.counts
        (True, FieldCounts(tp=2.0, fp=0.0, fn=0.0))
    """
    calls, g_grammar = _split_gold(gold)
    gram = _resolve_grammar(grammar) if grammar is not None else g_grammar
    ctx = _Ctx(gram, resolve_canonicalizer(canonicalizer), {})
    return _match_prepared(_prepare_pred(predicted, ctx), _prepare_gold(calls, ctx), ctx)


# --------------------------------------------------------------------------- explanation

_LIST_MAX = 5


def _fmt_cost(x: float) -> str:
    return f"{x:g}"


def _enumerate(items: list[str]) -> str:
    if len(items) <= _LIST_MAX:
        return "; ".join(items)
    return "; ".join(items[:_LIST_MAX]) + f"; and {len(items) - _LIST_MAX} more"


def _reason(
    r: MatchResult,
    f1: float | None = None,
    wrong_args: tuple[tuple[CallMatch, ArgVerdict], ...] | None = None,
) -> str:
    n_gold = len(r.matched) + len(r.missing)
    n_exact = sum(1 for m in r.matched if m.exact)
    head = (
        f"{'valid' if r.valid else 'invalid'}: {n_exact} of {n_gold} gold call(s) matched exactly"
    )
    if len(r.matched) != n_exact:
        head += f", {len(r.matched) - n_exact} with argument errors"
    parts = [head]
    if r.missing:
        parts.append(
            "missing "
            + _enumerate(
                [f"{c.tool} (gold #{c.index}, cost {_fmt_cost(c.cost)})" for c in r.missing]
            )
        )
    if r.extra:
        parts.append(
            "extra "
            + _enumerate([f"{c.tool} (call #{c.index}, cost {_fmt_cost(c.cost)})" for c in r.extra])
        )
    wrong = []
    for m, a in r.wrong_args if wrong_args is None else wrong_args:
        if a.verdict == "wrong":
            what = f"got {a.predicted!r:.40}, expected {_brief(_show(a.expected))} ({a.reason})"
        elif a.verdict == "missing":
            what = f"missing ({a.reason})"
        else:
            what = f"unexpected {a.predicted!r:.40} ({a.reason})"
        wrong.append(
            f"{m.tool}.{a.arg} (call #{m.pred_index} vs gold #{m.gold_index}) {what}, "
            f"cost {_fmt_cost(a.importance)}"
        )
    if wrong:
        parts.append("wrong arguments: " + _enumerate(wrong))
    c = r.counts
    f = c.f1 if f1 is None else f1
    parts.append(f"weighted TP {c.tp:g}, FP {c.fp:g}, FN {c.fn:g}, F1 {f:.4f}")
    return "; ".join(parts[:1]) + ("; " + "; ".join(parts[1:]) if len(parts) > 1 else "")


def _brief(expected: Any) -> str:
    if isinstance(expected, Mapping) and "any_of" in expected:
        vals = expected["any_of"]
        s = " or ".join(f"{v!r:.40}" for v in vals) or "nothing"
        return s + (" (optional)" if expected.get("optional") else "")
    return f"{expected!r:.40}"


def _breakdown(
    r: MatchResult, wrong_args: tuple[tuple[CallMatch, ArgVerdict], ...] | None = None
) -> dict[str, Any]:
    if wrong_args is None:
        wrong_args = r.wrong_args
    return {
        "matched": [
            {"gold": m.gold_index, "pred": m.pred_index, "tool": m.tool, "exact": m.exact}
            for m in r.matched
        ],
        "missing": [
            {"gold": c.index, "tool": c.tool, "args": _show(c.args), "cost": c.cost}
            for c in r.missing
        ],
        "extra": [
            {"pred": c.index, "tool": c.tool, "args": dict(c.args), "cost": c.cost} for c in r.extra
        ],
        "wrong_args": [
            {
                "gold": m.gold_index,
                "pred": m.pred_index,
                "tool": m.tool,
                "arg": a.arg,
                "verdict": a.verdict,
                "predicted": a.predicted,
                "expected": _show(a.expected),
                "importance": a.importance,
                "reason": a.reason,
            }
            for m, a in wrong_args
        ],
    }


# --------------------------------------------------------------------------- metric


def tool_call_score(result: MatchResult) -> Score:
    """The :class:`~ek.base.Score` of a :class:`MatchResult` (the pure function behind the metric).

    ``value`` = weighted F1; ``detail`` holds ``tp``/``fp``/``fn`` (weighted), ``passed`` = ``valid``
    (BFCL's verdict), ``higher_is_better``, a ``reason`` and the ``matched`` / ``missing`` /
    ``extra`` / ``wrong_args`` lists.

    Example:
        >>> tool_call_score(match_calls([], [])).detail["passed"]
        True
    """
    c = result.counts
    valid = result.valid
    f1 = c.f1
    wrong = result.wrong_args
    detail: dict[str, Any] = {
        "tp": c.tp,
        "fp": c.fp,
        "fn": c.fn,
        "passed": valid,
        "valid": valid,
        "higher_is_better": True,
        "reason": _reason(result, f1, wrong),
    }
    detail.update(_breakdown(result, wrong))
    return Score(f1, detail)


class ToolCallMetric:
    """Weighted tool-call F1 after a multiset assignment, plus BFCL's binary ``valid`` verdict.

    Per episode: weighted F1 = 2·TP / (2·TP + FP + FN) over the costs described in the module
    docstring; ``detail["passed"]`` is BFCL's ``valid`` (every gold call matched exactly and
    nothing extra). Corpus: micro-F1 from the summed weighted TP/FP/FN (a ratio of sums).
    Registered as ``"tool_calls"`` in the ``"metrics"`` namespace (the class itself is
    registered: ``resolve("metrics", "tool_calls")()`` builds one).

    Args:
        grammar: Costs and schemas (a GraphGrammar, a TaskSpec or a list of ToolSpec). When
            ``None``, a TaskSpec / BfclCase gold brings its own grammar, else unit costs.
        canonicalizer: ``"default"`` (NFC, casefold, whitespace folded), ``"bfcl"`` (BFCL's
            ``standardize_string``), ``"raw"`` or a callable on leaf values.

    Example:
        >>> from ek.agents.base import Step, ToolSpec, TaskSpec
        >>> refund = ToolSpec("refund", parameters={"type": "object",
        ...     "properties": {"amount": {"type": "number"}}, "required": ["amount"]},
        ...     importance={"amount": 5.0}, destructive=True)
        >>> task = TaskSpec("t", tools=[refund], gold_calls=[Step("refund", {"amount": 20})])
        >>> m = ToolCallMetric()
        >>> s = m([Step("refund", {"amount": 20.0})], task)   # int accepted for a number
        >>> s.value, s.passed
        (1.0, True)
        >>> s = m([], task)                                   # missing destructive call: 10 + 5
        >>> s.value, s.detail["fn"]
        (0.0, 15.0)
    """

    name = "tool_calls"
    higher_is_better = True

    def __init__(
        self,
        grammar: GraphGrammar | TaskSpec | Sequence[ToolSpec] | None = None,
        canonicalizer: str | Canonicalizer | None = None,
    ) -> None:
        self.grammar = _resolve_grammar(grammar)
        self.canonicalizer = canonicalizer
        self._canon = resolve_canonicalizer(canonicalizer)
        self._memo: dict[str, Any] = {}
        self._ctx = _Ctx(self.grammar, self._canon, self._memo)
        # Prepared gold of immutable golds (TaskSpec, BfclCase), keyed by identity.
        self._gold_cache: dict[int, tuple[Any, _Ctx, list[_GCall]]] = {}

    def __repr__(self) -> str:
        return f"ToolCallMetric(grammar={self.grammar!r}, canonicalizer={self.canonicalizer!r})"

    def match(self, pred: Any, gold: Any) -> MatchResult:
        """The :class:`MatchResult` behind :meth:`__call__`."""
        ctx, golds = self._gold(gold)
        return _match_prepared(_prepare_pred(pred, ctx), golds, ctx)

    def _gold(self, gold: Any) -> tuple[_Ctx, list[_GCall]]:
        if not isinstance(gold, (TaskSpec, BfclCase)):
            return self._ctx, _prepare_gold(gold, self._ctx)
        cache = self._gold_cache
        hit = cache.get(id(gold))
        if hit is not None and hit[0]() is gold:
            return hit[1], hit[2]
        calls, g_grammar = _split_gold(gold)
        ctx = self._ctx
        if self.grammar is None and g_grammar is not None:
            ctx = _Ctx(g_grammar, self._canon, self._memo)
        golds = _prepare_gold(calls, ctx)
        if len(cache) > 4096:
            cache.clear()
        cache[id(gold)] = (weakref.ref(gold), ctx, golds)
        return ctx, golds

    def __call__(self, pred: Any, gold: Any) -> Score:
        """Score one prediction (Episode, Trajectory or list of calls) against its gold."""
        return tool_call_score(self.match(pred, gold))

    def aggregate(self, scores: Sequence[Score]) -> float:
        """Corpus micro-F1 from the summed weighted TP/FP/FN; NaN for no scores."""
        if not scores:
            return math.nan
        return micro_f1(s.detail for s in scores)


register("metrics", "tool_calls", ToolCallMetric)


# --------------------------------------------------------------------------- BFCL import


@dataclass(frozen=True)
class BfclCase:
    """A BFCL test entry as ek objects: its tools (the grammar) and its gold calls.

    Score a prediction directly: ``ToolCallMetric(canonicalizer="bfcl")(prediction, case)``.
    """

    id: str
    category: str
    tools: tuple[ToolSpec, ...]
    gold_calls: tuple[GoldCall, ...]

    def grammar(self) -> GraphGrammar:
        """The cost grammar (and type schema) of the entry's function docs."""
        return GraphGrammar(t.to_node_type() for t in self.tools)


def _bfcl_value(v: Any) -> Any:
    # Dict-typed answers hold dicts whose values are again lists of acceptable values.
    if isinstance(v, Mapping):
        return {k: _bfcl_param(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_bfcl_value(x) if isinstance(x, Mapping) else x for x in v]
    return v


def _bfcl_param(values: Any) -> AnyOf:
    if not isinstance(values, list):
        raise ValueError(
            f"BFCL possible answers must be lists of acceptable values, got {values!r:.200}"
        )
    optional = any(type(x) is str and x == "" for x in values)
    vals = [_bfcl_value(x) for x in values if not (type(x) is str and x == "")]
    return AnyOf(*vals, optional=optional)


def from_bfcl(
    question_entry: Mapping[str, Any],
    possible_answer_entry: Mapping[str, Any],
    *,
    underscore_to_dot: bool = False,
) -> BfclCase:
    """Tool specs and gold calls from one BFCL question entry and its possible answer.

    Args:
        question_entry: A line of ``BFCL_v4_<category>.json`` (``id``, ``function``, ...).
        possible_answer_entry: The matching line of ``possible_answer/BFCL_v4_<category>.json``.
        underscore_to_dot: BFCL's model-config flag: expected function names have ``.`` replaced
            by ``_`` (for models that cannot emit dots).

    Returns:
        A :class:`BfclCase`; pass it as the gold of :class:`ToolCallMetric` or :func:`match_calls`
        (with ``canonicalizer="bfcl"`` for BFCL's own string standardisation).

    Example:
        >>> q = {"id": "simple_python_0", "function": [{"name": "area", "parameters": {
        ...     "type": "dict", "properties": {"base": {"type": "integer"},
        ...     "unit": {"type": "string"}}, "required": ["base"]}}]}
        >>> a = {"id": "simple_python_0", "ground_truth": [{"area": {"base": [10], "unit": ["units", ""]}}]}
        >>> case = from_bfcl(q, a)
        >>> case.gold_calls[0].args
        {'base': AnyOf(10), 'unit': AnyOf('units', optional=True)}
        >>> match_calls([{"area": {"base": 10}}], case, canonicalizer="bfcl").valid
        True
        >>> match_calls([{"area": {"base": 10.0}}], case, canonicalizer="bfcl").valid   # float for int
        False
    """
    if not isinstance(question_entry, Mapping) or not isinstance(possible_answer_entry, Mapping):
        raise TypeError("from_bfcl expects two mappings (a question entry and its possible answer)")
    qid = question_entry.get("id")
    aid = possible_answer_entry.get("id")
    if qid != aid:
        raise ValueError(f"from_bfcl: question id {qid!r} does not match answer id {aid!r}")
    funcs = question_entry.get("function")
    if not isinstance(funcs, list):
        raise ValueError(f"BFCL entry {qid!r}: 'function' must be a list, got {funcs!r:.200}")
    truth = possible_answer_entry.get("ground_truth")
    if not isinstance(truth, list):
        raise ValueError(f"BFCL entry {qid!r}: 'ground_truth' must be a list, got {truth!r:.200}")

    def rename(n: str) -> str:
        return n.replace(".", "_") if underscore_to_dot else n

    tools = tuple(
        ToolSpec(
            rename(f["name"]),
            parameters=f.get("parameters", {"type": "dict", "properties": {}}),
            description=str(f.get("description", "")),
        )
        for f in funcs
    )
    gold = []
    for call in truth:
        if not isinstance(call, Mapping) or len(call) != 1:
            raise ValueError(
                f"BFCL entry {qid!r}: each ground-truth call must be a single-key dict, got {call!r:.200}"
            )
        (name, params), *_ = call.items()
        if not isinstance(params, Mapping):
            raise ValueError(f"BFCL entry {qid!r}: parameters of {name!r} must be a dict")
        gold.append(GoldCall(rename(name), {k: _bfcl_param(v) for k, v in params.items()}))
    category = str(qid).rsplit("_", 1)[0] if isinstance(qid, str) else ""
    return BfclCase(str(qid), category, tools, tuple(gold))
