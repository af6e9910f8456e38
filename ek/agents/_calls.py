"""Calls as the matcher sees them: parsing every accepted input form, preparing predicted calls
(canonical, frozen arguments and an exact-match key) and gold calls (compiled patterns), and the
grammar a gold brings with it.

Accepted forms: a :class:`~ek.agents.base.Step`, a :class:`~ek.agents.toolcalls.GoldCall`, a
mapping with ``tool``/``name`` and ``args``/``arguments``/``input`` (a JSON string is decoded), an
OpenAI-style ``{"type": "function", "function": {...}}``, BFCL's decoded AST ``{name: {args}}``,
or any object with ``tool``/``name`` and ``args``/``input_parameters``.

Example:
    >>> _call_parts({"name": "f", "arguments": '{"x": 1}'}, 0, "predicted")
    ('f', {'x': 1})
    >>> _call_parts({"f": {"x": 1}}, 0, "predicted")
    ('f', {'x': 1})
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ek.agents._bfcl import BfclCase
from ek.agents._callargs import _PATTERNS, _AnyPat, _compile, _Ctx
from ek.agents._gold import GoldCall
from ek.agents.base import Step, TaskSpec, ToolSpec, Trajectory
from ek.base import is_episode
from ek.grammar import GraphGrammar

__all__ = [
    "_GCall",
    "_PCall",
    "_as_list",
    "_call_parts",
    "_prepare_gold",
    "_prepare_pred",
    "_resolve_grammar",
    "_split_gold",
]

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
    """The predicted calls of ``obj`` (an Episode, a Trajectory or a list of calls), prepared."""
    out = []
    for i, x in enumerate(obj if type(obj) is list else _as_list(obj, "prediction")):
        if type(x) is Step:
            out.append(_PCall(i, x.tool, x.args, ctx))
        else:
            out.append(_PCall(i, *_call_parts(x, i, "predicted"), ctx))
    return out


def _prepare_gold(obj: Any, ctx: _Ctx) -> list[_GCall]:
    """The gold calls of ``obj`` (a Trajectory or a list of calls), prepared and compiled."""
    out = []
    for i, x in enumerate(obj if type(obj) is list else _as_list(obj, "gold")):
        if type(x) is Step:
            out.append(_GCall(i, x.tool, x.args, ctx))
        else:
            out.append(_GCall(i, *_call_parts(x, i, "gold"), ctx))
    return out


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
