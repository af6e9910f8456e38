"""Calls as the matcher sees them: reading every accepted call shape (through the one
normaliser, :func:`ek.agents.callshape.read_call`), preparing predicted calls (canonical, frozen
arguments and an exact-match key) and gold calls (compiled patterns), and the grammar a gold
brings with it.

A predicted call in no accepted shape (no or a non-string tool name, arguments that are not a
mapping, unparseable JSON) is model output, scored rather than raised on: it is read as a call
of :data:`~ek.agents.callshape.MALFORMED_TOOL` with no arguments, which no gold call matches, and
its :class:`_Malformed` arguments carry the reason into the score's detail. A malformed gold call
raises.

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
    >>> [(i, t, dict(a)) for i, t, a, _ in _iter_calls([{"f": {"x": 1}}, {"": {}}], ctx, "predicted")]
    [(0, 'f', {'x': 1}), (1, '<malformed call>', {})]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ek.agents._bfcl import BfclCase
from ek.agents._callargs import _PATTERNS, _AnyPat, _compile, _Ctx, _Tool
from ek.agents.base import Step, TaskSpec, ToolSpec, Trajectory
from ek.agents.callshape import MALFORMED_TOOL, CallShapeError, malformed_step, read_call
from ek.base import is_episode
from ek.grammar import GraphGrammar

__all__ = [
    "_GCall",
    "_Malformed",
    "_PCall",
    "_as_list",
    "_gold_call",
    "_pcall",
    "_pred_args",
    "_prepare_gold",
    "_prepare_pred",
    "_resolve_grammar",
    "_split_gold",
]


class _Malformed(Mapping[str, Any]):
    """The (empty) arguments of a malformed predicted call, carrying why it is malformed in
    ``reason``: the call is scored as an extra call of :data:`MALFORMED_TOOL` with that reason."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "{}"


def _malformed(x: Any, i: int, side: str, why: Exception | str | None) -> _Malformed:
    """The arguments of malformed predicted call ``i``; a gold call raises instead."""
    if side != "predicted":
        if why is None:  # a gold call named as a malformed prediction
            why = f"tool name {MALFORMED_TOOL!r} is reserved for malformed predicted calls"
        raise CallShapeError(f"{side} call {i}: {why}") from None
    if why is None:  # a Step a bridge made of a malformed call: its error says why
        why = getattr(x, "error", None) or "malformed call"
    return _Malformed(malformed_step(why).error or "malformed call")


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
    """A predicted call, prepared: canonical frozen arguments (``fargs``), exact-match ``key``
    (tool and the frozen argument set) and ``mass`` (tool weight + argument importances)."""

    __slots__ = ("args", "fargs", "index", "info", "key", "mass", "tool")

    index: int
    tool: str
    args: Mapping[str, Any]
    info: _Tool
    fargs: dict[str, Any]
    key: tuple[str, frozenset[tuple[str, Any]]] | None
    mass: float


class _GCall:
    """A gold call, prepared: compiled argument patterns (``pats``), the optional arguments, and
    for a literal call (no :class:`AnyOf` anywhere) its frozen arguments (``lit``) and ``key``."""

    __slots__ = ("args", "index", "info", "key", "lit", "mass", "optional", "pats", "tool")

    index: int
    tool: str
    args: Mapping[str, Any]
    info: _Tool
    pats: dict[str, Any]
    optional: frozenset[str]
    lit: dict[str, Any] | None
    key: tuple[str, frozenset[tuple[str, Any]]] | None
    mass: float


_new = object.__new__
_NONE: frozenset[str] = frozenset()


def _pred_args(
    i: int, tool: str, args: Mapping[str, Any], info: _Tool, ctx: _Ctx
) -> tuple[dict[str, Any], float]:
    """(canonical frozen arguments, mass) of predicted call ``i``; errors name call and argument."""
    memo = ctx.memo
    imps = info.imps
    dimp = info.dimp
    mass = info.weight
    plain_numbers = not ctx.leaf_canon
    fa = {}
    for k, v in args.items():
        if type(k) is not str:
            e = TypeError(f"argument names must be str, got {k!r:.120}")
            raise _where("predicted", i, tool, k, e)
        t = type(v)
        if t is str:
            fv = memo.get(v)
            if fv is None:
                fv = ctx.new_cs(v)
        elif t is int and plain_numbers:
            fv = v
        else:
            try:
                fv = ctx.freeze(v)
            except (TypeError, ValueError) as e:
                raise _where("predicted", i, tool, k, e) from None
        fa[k] = fv
        mass += imps.get(k, dimp) if imps else dimp
    return fa, mass


def _pcall(
    i: int,
    tool: str,
    args: Mapping[str, Any],
    info: _Tool,
    fa: dict[str, Any],
    key: tuple[str, frozenset[tuple[str, Any]]] | None,
    mass: float,
) -> _PCall:
    pc = _new(_PCall)
    pc.index = i
    pc.tool = tool
    pc.args = args
    pc.info = info
    pc.fargs = fa
    pc.key = key
    pc.mass = mass
    return pc


def _iter_calls(
    obj: Any, ctx: _Ctx, side: str
) -> Iterator[tuple[int, str, Mapping[str, Any], _Tool]]:
    """(index, tool, args, tool info) of each call of ``obj``; ``side`` is "predicted" or "gold"."""
    tools = ctx._tools
    for i, x in enumerate(obj if type(obj) is list else _as_list(obj, _LIST_LABEL[side])):
        if type(x) is Step:
            tool = x.tool
            args = x.args
        else:
            try:
                tool, args = read_call(x)
            except CallShapeError as e:  # model output is scored, never raised on; gold raises
                tool, args = MALFORMED_TOOL, _malformed(x, i, side, e)
        if tool == MALFORMED_TOOL and type(args) is not _Malformed:
            args = _malformed(x, i, side, None)
        info = tools.get(tool)
        if info is None:
            info = ctx.tool(tool)
        yield i, tool, args, info


_LIST_LABEL = {"predicted": "prediction", "gold": "gold"}


def _prepare_pred(obj: Any, ctx: _Ctx) -> list[_PCall]:
    """The predicted calls of ``obj`` (an Episode, a Trajectory or a list of calls), prepared.

    Example:
        >>> from ek.canon import resolve_canonicalizer
        >>> (p,) = _prepare_pred([{"name": "f", "args": {"q": " A "}}], _Ctx(None, resolve_canonicalizer("default"), {}))
        >>> p.fargs, p.mass
        ({'q': 'a'}, 2.0)
    """
    out = []
    for i, tool, args, info in _iter_calls(obj, ctx, "predicted"):
        fa, mass = _pred_args(i, tool, args, info, ctx)
        out.append(_pcall(i, tool, args, info, fa, (tool, frozenset(fa.items())), mass))
    return out


def _prepare_gold(obj: Any, ctx: _Ctx) -> list[_GCall]:
    """The gold calls of ``obj`` (a Trajectory or a list of calls), prepared and compiled.

    Example:
        >>> from ek.canon import resolve_canonicalizer
        >>> from ek.agents._gold import AnyOf, GoldCall
        >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
        >>> a, b = _prepare_gold([{"name": "f", "args": {"q": "A"}}, GoldCall("f", {"u": AnyOf(1, optional=True)})], ctx)
        >>> a.key == ("f", frozenset({("q", "a")})), a.mass, b.key, b.optional, b.mass
        (True, 2.0, None, frozenset({'u'}), 1.0)
    """
    return [
        _gold_call(i, tool, args, info, ctx)
        for i, tool, args, info in _iter_calls(obj, ctx, "gold")
    ]


def _gold_call(i: int, tool: str, args: Mapping[str, Any], info: _Tool, ctx: _Ctx) -> _GCall:
    """Gold call ``i``, prepared: compiled patterns, optional arguments, mass, exact-match key."""
    memo = ctx.memo
    plain_numbers = not ctx.leaf_canon
    imps = info.imps
    dimp = info.dimp
    mass = info.weight
    pats = {}
    literal = True
    optional: list[str] | None = None
    for k, v in args.items():
        if type(k) is not str:
            e = TypeError(f"argument names must be str, got {k!r:.120}")
            raise _where("gold", i, tool, k, e)
        t = type(v)
        if t is str:
            pat = memo.get(v)
            if pat is None:
                pat = ctx.new_cs(v)
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
                    if optional is None:
                        optional = [k]
                    else:
                        optional.append(k)
                    pats[k] = pat
                    continue
        pats[k] = pat
        mass += imps.get(k, dimp) if imps else dimp
    gc = _new(_GCall)
    gc.index = i
    gc.tool = tool
    gc.args = args
    gc.info = info
    gc.pats = pats
    gc.optional = _NONE if optional is None else frozenset(optional)
    if literal:
        gc.lit = pats
        gc.key = (tool, frozenset(pats.items()))
    else:
        gc.lit = None
        gc.key = None
    gc.mass = mass
    return gc


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
