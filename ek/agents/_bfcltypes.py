"""BFCL's typed argument checks, used when a tool schema declares an argument's type.

BFCL's rules (source: ShishirPatil/gorilla, ``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` @
6ea5797): an int is accepted for a float (top level only), a float is not an int, a bool is not an
int (exact types); a value of the possible answer's own type is accepted ("variable" rule);
strings compare after standardisation (here: the canonicaliser), lists element-wise in order,
dicts key by key against each alternative.

Example:
    >>> from ek.grammar import FieldSpec
    >>> _field_types(FieldSpec("n", type="integer"))
    (<class 'int'>, None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ek._validate import thaw
from ek.agents._gold import AnyOf
from ek.grammar import FieldSpec

if TYPE_CHECKING:
    from ek.agents._callargs import _Ctx

__all__ = ["_PYTYPE", "_field_types", "_typed_check"]


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
        value = thaw(value)
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
