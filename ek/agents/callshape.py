"""One reading of a tool call, whatever host wrote it: :func:`normalize_call`, :func:`normalize_calls`.

Every bridge, adapter and the matcher read calls through this module, so a call means the same
thing on every path. The accepted shapes (dicts, or objects with these attributes):

==================================  ==================================================  =====================================
shape                               example                                             hosts
==================================  ==================================================  =====================================
``tool`` / ``args``                 ``{"tool": "f", "args": {"x": 1}}``                 ek ``Step``, ``GoldCall``
``function`` / ``arguments``        ``{"function": "f", "arguments": {"x": 1}}``        Inspect AI ``ToolCall``
``function.name`` / ``.arguments``  ``{"function": {"name": "f", "arguments": "{}"}}``  OpenAI (arguments a JSON string)
``name`` / ``input``                ``{"name": "f", "input": {"x": 1}}``                Anthropic ``tool_use``
``name`` / ``input_parameters``     ``{"name": "f", "input_parameters": {"x": 1}}``     DeepEval ``ToolCall``
``name`` / ``args``                 ``{"name": "f", "args": {"x": 1}}``                 Ragas ``ToolCall``, LangChain
``name`` / ``arguments``            ``{"name": "f", "arguments": {"x": 1}}``            generic, OpenAI ``function``
``{name: {args}}``                  ``{"f": {"x": 1}}``                                 BFCL (decoded AST)
==================================  ==================================================  =====================================

Arguments may be a mapping or a JSON object string (decoded; ``""`` means no arguments); a
missing or ``None`` argument field means no arguments. Gold values such as
:class:`~ek.agents.toolcalls.AnyOf` are kept as they are. Anything else raises
:class:`CallShapeError` (a ``ValueError``, and a ``TypeError`` for old callers) naming what was
given and listing the accepted shapes.

Model output is untrusted: with ``strict=False`` a malformed call (no or a non-string tool name,
arguments that are not a mapping, unparseable JSON) is not an error but a
``Step(MALFORMED_TOOL, {}, error=<why>)``, which no gold call can match, so the tool-call and
trajectory metrics score it as a wrong (extra) call with its reason. Gold is read strictly.

Example:
    >>> normalize_call({"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}})
    Step(tool='f', args={'x': 1}, observation=None, error=None, id=None)
    >>> normalize_call({"": {"base": 10}}, strict=False).error
    "no tool name: tool name must be a non-empty str, got ''"
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ek.agents._gold import GoldCall
from ek.agents.base import Step, Trajectory

__all__ = [
    "ACCEPTED_CALL_SHAPES",
    "MALFORMED_TOOL",
    "CallShapeError",
    "malformed_step",
    "normalize_call",
    "normalize_calls",
    "read_call",
]

#: The tool name of a malformed predicted call (``normalize_call(..., strict=False)``). It is not
#: a name a gold call may have, so a malformed call is never matched.
MALFORMED_TOOL = "<malformed call>"

#: (shape, example, hosts) of every accepted call shape, as the README's table shows them.
ACCEPTED_CALL_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("tool/args", '{"tool": "f", "args": {...}}', "ek Step, GoldCall"),
    ("function/arguments", '{"function": "f", "arguments": {...}}', "Inspect AI ToolCall"),
    (
        "function.name/function.arguments",
        '{"type": "function", "function": {"name": "f", "arguments": "<JSON>"}}',
        "OpenAI tool call",
    ),
    ("name/input", '{"name": "f", "input": {...}}', "Anthropic tool_use"),
    ("name/input_parameters", '{"name": "f", "input_parameters": {...}}', "DeepEval ToolCall"),
    ("name/args", '{"name": "f", "args": {...}}', "Ragas ToolCall, LangChain"),
    ("name/arguments", '{"name": "f", "arguments": {...}}', "generic"),
    ("{name: {args}}", '{"f": {...}}', "BFCL"),
)

_SHAPES_TEXT = "; ".join(f"{s} ({h})" for s, _, h in ACCEPTED_CALL_SHAPES)

_NAME_KEYS = ("tool", "name")
_ARG_KEYS = ("args", "arguments", "input", "input_parameters", "inputParameters")
#: Keys a call may carry besides its name and arguments (ids, results, host bookkeeping).
_OTHER_KEYS = frozenset(
    {
        "id",
        "type",
        "call_id",
        "tool_call_id",
        "index",
        "output",
        "observation",
        "result",
        "error",
        "description",
        "reasoning",
        "parse_error",
        "view",
        "internal",
    }
)
_KNOWN_KEYS = frozenset({*_NAME_KEYS, *_ARG_KEYS, "function"}) | _OTHER_KEYS
_ABSENT = object()


class CallShapeError(ValueError, TypeError):
    """A tool call in none of the accepted shapes (see :data:`ACCEPTED_CALL_SHAPES`).

    Both a ``ValueError`` and a ``TypeError``: code that caught either before keeps working.
    """


def _shape_error(problem: str) -> CallShapeError:
    return CallShapeError(f"{problem}; accepted call shapes: {_SHAPES_TEXT}")


def _field(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, _ABSENT)
    return getattr(obj, key, _ABSENT)


def _one(obj: Any, keys: tuple[str, ...], what: str) -> tuple[str | None, Any]:
    """(key, value) of the one field of ``keys`` that ``obj`` has; two different ones raise."""
    found: tuple[str | None, Any] = (None, _ABSENT)
    for k in keys:
        v = _field(obj, k)
        if v is _ABSENT or v is None:
            continue
        if found[0] is not None and found[1] != v:
            raise _shape_error(f"ambiguous call: both {found[0]!r} and {k!r} given as its {what}")
        if found[0] is None:
            found = (k, v)
    return found


def _bfcl(obj: Any) -> tuple[str, Any] | None:
    """BFCL's decoded AST ``{function_name: {param: value}}``, else ``None``."""
    if isinstance(obj, Mapping) and len(obj) == 1:
        ((name, args),) = obj.items()
        if isinstance(name, str) and name not in _KNOWN_KEYS and isinstance(args, Mapping):
            return name, args
    return None


def _name_and_raw(obj: Any) -> tuple[Any, Any]:
    """(name, raw arguments) of one call, before either is checked."""
    fn = _field(obj, "function")
    if isinstance(fn, str):  # Inspect ToolCall: function is the name
        return fn, _one(obj, _ARG_KEYS, "arguments")[1]
    if fn is not _ABSENT and fn is not None:  # OpenAI: {"function": {"name", "arguments"}}
        if not isinstance(fn, Mapping) and _field(fn, "name") is _ABSENT:
            raise _shape_error(
                f"'function' must be a name or a {{name, arguments}} object, got {fn!r:.120}"
            )
        obj = fn
    key, name = _one(obj, _NAME_KEYS, "tool name")
    if key is None:
        bf = _bfcl(obj)
        if bf is not None:
            return bf
        raise _shape_error(f"no tool name in {_describe(obj)}")
    akey, raw = _one(obj, _ARG_KEYS, "arguments")
    if akey is None and raw is _ABSENT:
        if isinstance(obj, Mapping):
            unknown = sorted(str(k) for k in obj if k not in _KNOWN_KEYS)
            if unknown:
                raise _shape_error(
                    f"call {name!r:.80} has no arguments field but unknown key(s) {unknown[:5]}"
                )
        elif not any(hasattr(obj, k) for k in _ARG_KEYS):
            raise _shape_error(f"call {name!r:.80} has no arguments field: {_describe(obj)}")
    return name, raw


def _describe(obj: Any) -> str:
    return f"{type(obj).__name__}: {obj!r:.200}"


def _args(raw: Any, name: str) -> Mapping[str, Any]:
    """The arguments as a str-keyed mapping (a JSON object string decoded)."""
    if raw is _ABSENT or raw is None:
        return {}
    if isinstance(raw, (str, bytes)):
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        if not text.strip():
            return {}
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise _shape_error(
                f"call {name!r}: arguments string is not JSON ({e.msg} at char {e.pos}): "
                f"{text!r:.200}"
            ) from None
        if not isinstance(raw, Mapping):
            raise _shape_error(
                f"call {name!r}: args must be a mapping (a JSON object), got "
                f"{type(raw).__name__}: {text!r:.200}"
            )
        return raw
    if not isinstance(raw, Mapping):
        raise _shape_error(
            f"call {name!r}: args must be a mapping or a JSON object string, got {_describe(raw)}"
        )
    for k in raw:
        if type(k) is not str:
            raise _shape_error(f"call {name!r}: argument names must be str, got {k!r:.80}")
    return raw


def read_call(obj: Any) -> tuple[str, Mapping[str, Any]]:
    """``(tool, args)`` of one call in any accepted shape; the args are not copied.

    Raises:
        CallShapeError: a shape that is not accepted, no or an empty tool name, or arguments
            that are not a mapping or a JSON object string.

    Example:
        >>> read_call({"name": "f", "input_parameters": {"x": 1}})
        ('f', {'x': 1})
    """
    if isinstance(obj, (Step, GoldCall)):
        return obj.tool, obj.args
    if obj is None or isinstance(obj, (str, bytes, int, float, list, tuple)):
        raise _shape_error(f"a call must be a mapping or an object, got {_describe(obj)}")
    name, raw = _name_and_raw(obj)
    if not isinstance(name, str) or not name:
        raise _shape_error(f"no tool name: tool name must be a non-empty str, got {name!r:.120}")
    return name, _args(raw, name)


def normalize_call(obj: Any, *, strict: bool = True) -> Step:
    """One call in any accepted shape as a :class:`~ek.agents.base.Step` (tool and arguments).

    A Step is returned as it is; a :class:`~ek.agents.toolcalls.GoldCall` becomes a Step with
    the same arguments (its :class:`~ek.agents.toolcalls.AnyOf` values intact), which every
    metric reads as the same gold.

    Args:
        obj: The call (a mapping or an object with the fields of one accepted shape).
        strict: ``True`` (for gold): a malformed call raises. ``False`` (for model output): a
            malformed call becomes ``Step(MALFORMED_TOOL, {}, error=<why>)``, scored as a
            wrong call.

    Returns:
        The Step.

    Raises:
        CallShapeError: (strict only) the call is in no accepted shape; the message lists them.

    Example:
        >>> normalize_call({"name": "lookup", "input": {"id": "A1"}})
        Step(tool='lookup', args={'id': 'A1'}, observation=None, error=None, id=None)
        >>> normalize_call({"function": "lookup", "arguments": {"id": "A1"}}).args
        {'id': 'A1'}
        >>> normalize_call({"name": "f", "arguments": "{x"}, strict=False).tool
        '<malformed call>'
    """
    if type(obj) is Step:
        return obj
    try:
        tool, args = read_call(obj)
    except CallShapeError as e:
        if strict:
            raise
        return malformed_step(e)
    return Step(tool, args)


def malformed_step(why: object) -> Step:
    """The Step a malformed predicted call stands for: tool :data:`MALFORMED_TOOL`, no
    arguments, ``error`` = why (the text before the list of accepted shapes).

    Example:
        >>> malformed_step("no tool name").error
        'no tool name'
    """
    text = str(why).split("; accepted call shapes:", 1)[0]
    return Step(MALFORMED_TOOL, {}, error=text or "malformed call")


def normalize_calls(objs: Any, *, strict: bool = True) -> list[Step]:
    """A list of calls (or a :class:`~ek.agents.base.Trajectory`) as Steps; see :func:`normalize_call`.

    Args:
        objs: A list or tuple (any iterable but a string or a mapping) of calls, or a
            Trajectory. A single call given instead of a list is an error, not one call per key.
        strict: As for :func:`normalize_call`.

    Returns:
        One Step per call, in order.

    Raises:
        CallShapeError: ``objs`` is not a list of calls, or (strict) call ``i`` is malformed
            (the message names ``i``).

    Example:
        >>> [s.tool for s in normalize_calls([{"name": "a", "args": {}}, {"b": {"x": 1}}])]
        ['a', 'b']
        >>> normalize_calls({"name": "a", "args": {}})
        Traceback (most recent call last):
        ...
        ek.agents.callshape.CallShapeError: expected a list of calls, got a single dict: ...
    """
    if isinstance(objs, Trajectory):
        return list(objs.steps)
    if isinstance(objs, (str, bytes, Mapping)) or not isinstance(objs, Iterable):
        kind = "a single dict" if isinstance(objs, Mapping) else type(objs).__name__
        raise _shape_error(f"expected a list of calls, got {kind}: {objs!r:.200}")
    out = []
    for i, obj in enumerate(objs):
        try:
            out.append(normalize_call(obj, strict=strict))
        except CallShapeError as e:
            raise CallShapeError(f"call {i}: {e}") from None
    return out
