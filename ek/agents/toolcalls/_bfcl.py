"""BFCL test entries as ek objects (:class:`BfclCase`, :func:`from_bfcl`) and BFCL's typed
argument check (:func:`typed_check`), used when a tool schema declares an argument's type.

A BFCL entry (ShishirPatil/gorilla, ``berkeley-function-call-leaderboard``, data format @ 6ea5797)
is a question with its function docs and a ``possible_answer`` listing the acceptable values of
every argument (``""`` among them: the argument may be omitted); here the docs become
:class:`~ek.agents.base.ToolSpec` s and the answer :class:`~ek.agents.toolcalls.GoldCall` s with
:class:`~ek.agents.toolcalls.AnyOf` values.

BFCL's type rules (``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` @ 6ea5797): an int is
accepted for a float (top level only), a float is not an int, a bool is not an int (exact
types); a value of the possible answer's own type is accepted ("variable" rule); strings compare
after standardisation (here: the canonicaliser), lists element-wise in order, dicts key by key
against each alternative.

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> ctx = Context(None, resolve_canonicalizer("bfcl"))
    >>> typed_check(10.0, AnyOf(10), (int, None), ctx), typed_check(10, AnyOf(10), (int, None), ctx)
    ('type float, expected int', None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek._validate import short_repr, thaw
from ek.agents._spec import ToolSpec
from ek.agents.toolcalls._gold import AnyOf, GoldCall
from ek.agents.toolcalls._values import Context
from ek.grammar import GraphGrammar

__all__ = ["BfclCase", "from_bfcl", "typed_check"]


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
    """One argument's possible answers as an AnyOf (``""`` among them: optional).

    Example:
        >>> _bfcl_param(["a", ""])
        AnyOf('a', optional=True)
    """
    if not isinstance(values, list):
        raise ValueError(
            f"BFCL possible answers must be lists of acceptable values, got {short_repr(values, 200)}"
        )
    optional = any(type(x) is str and x == "" for x in values)
    vals = [_bfcl_value(x) for x in values if not (type(x) is str and x == "")]
    return AnyOf(*vals, optional=optional)


def _checked_entries(
    q: Mapping[str, Any], a: Mapping[str, Any]
) -> tuple[Any, list[Any], list[Any]]:
    """(id, function docs, ground truth) of a question entry and its answer, checked."""
    if not isinstance(q, Mapping) or not isinstance(a, Mapping):
        raise TypeError("from_bfcl expects two mappings (a question entry and its possible answer)")
    qid = q.get("id")
    aid = a.get("id")
    if qid != aid:
        raise ValueError(f"from_bfcl: question id {qid!r} does not match answer id {aid!r}")
    funcs = q.get("function")
    if not isinstance(funcs, list):
        raise ValueError(
            f"BFCL entry {qid!r}: 'function' must be a list, got {short_repr(funcs, 200)}"
        )
    truth = a.get("ground_truth")
    if not isinstance(truth, list):
        raise ValueError(
            f"BFCL entry {qid!r}: 'ground_truth' must be a list, got {short_repr(truth, 200)}"
        )
    return qid, funcs, truth


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
        >>> from ek.agents.toolcalls import match_calls
        >>> match_calls([{"area": {"base": 10}}], case, canonicalizer="bfcl").valid
        True
        >>> match_calls([{"area": {"base": 10.0}}], case, canonicalizer="bfcl").valid   # float for int
        False
    """
    qid, funcs, truth = _checked_entries(question_entry, possible_answer_entry)

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
                f"BFCL entry {qid!r}: each ground-truth call must be a single-key dict, got {short_repr(call, 200)}"
            )
        (name, params), *_ = call.items()
        if not isinstance(params, Mapping):
            raise ValueError(f"BFCL entry {qid!r}: parameters of {name!r} must be a dict")
        gold.append(GoldCall(rename(name), {k: _bfcl_param(v) for k, v in params.items()}))
    category = str(qid).rsplit("_", 1)[0] if isinstance(qid, str) else ""
    return BfclCase(str(qid), category, tools, tuple(gold))


# --------------------------------------------------------------------------- typed checks


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


def typed_check(value: Any, gold: Any, types: tuple[type, type | None], ctx: Context) -> str | None:
    """BFCL's type and value check of one argument: ``None`` when valid, else the reason.

    Args:
        value: The predicted value, as given.
        gold: The gold pattern as written (a literal or an :class:`AnyOf`).
        types: The schema's (type, element type of an array), from
            :func:`~ek.agents.toolcalls._values.field_types`.
        ctx: The scoring context (its canonicaliser stands in for BFCL's string
            standardisation).
    """
    exp, nested = types
    pa = _alts(gold)
    if type(value) is not dict and type(value) is not list and isinstance(value, (Mapping, tuple)):
        value = thaw(value)
    if exp is float and type(value) is int:
        value = float(value)  # BFCL: Python's int -> float auto-conversion (top level only)
    pa_type = _first_type(pa)
    if type(value) is exp:  # BFCL compares exact types: a bool is not an int
        if nested is not None and not _elements_typed(value, pa, nested):  # (value: a list)
            return f"an element is not of type {nested.__name__}"
        if pa_type is None or pa_type is exp:
            return _value_check(value, pa, exp, nested, ctx)
    elif pa_type is None or type(value) is not pa_type:
        return f"type {type(value).__name__}, expected {exp.__name__}"
    # BFCL's "variable" rule: a value of the possible answer's own type compares as it is.
    return None if value in pa else "value not acceptable"


def _elements_typed(value: Any, pa: Sequence[Any], nested: type) -> bool:
    """Does every element of ``value`` have the array's element type (or that of an
    alternative's elements)? BFCL accepts when one alternative allows them all."""
    for item in pa:
        if type(item) is not list:
            return True
        sub_t = _first_type(item)
        if all(type(vi) is nested or (sub_t is not None and type(vi) is sub_t) for vi in value):
            return True
    return False


def _value_check(
    value: Any, pa: Sequence[Any], exp: type, nested: type | None, ctx: Context
) -> str | None:
    """BFCL's value comparison for a value of the declared type."""
    if exp is dict:
        return None if _dict_ok(value, pa, ctx) else "dict value not acceptable"
    if exp is list and nested is dict:
        return None if _list_dict_ok(value, pa, ctx) else "list of dicts not acceptable"
    if exp is str:
        ok = ctx.text(value) in [ctx.text(a) for a in pa if type(a) is str]
        return None if ok else "value not acceptable"
    if exp is list:
        return None if _list_ok(value, pa, ctx) else "list not acceptable"
    return None if value in pa else "value not acceptable"


def _std(x: Any, ctx: Context) -> Any:
    return ctx.text(x) if type(x) is str else x


def _list_ok(value: list[Any], pa: Sequence[Any], ctx: Context) -> bool:
    v = [_std(x, ctx) for x in value]
    return any(isinstance(a, (list, str)) and v == [_std(x, ctx) for x in a] for a in pa)


def _dict_ok(value: Mapping[str, Any], pa: Sequence[Any], ctx: Context) -> bool:
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


def _list_dict_ok(value: list[Any], pa: Sequence[Any], ctx: Context) -> bool:
    for alt in pa:
        if not isinstance(alt, (list, str)) or len(value) != len(alt):
            continue
        if all(isinstance(v, Mapping) and _dict_ok(v, [a], ctx) for v, a in zip(value, alt)):
            return True
    return False
