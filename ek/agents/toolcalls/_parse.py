"""Reading tool calls: every host's call shape (:func:`normalize_call`, :func:`normalize_calls`)
and the calls prepared for matching (:func:`prepare_predicted`, :func:`prepare_gold`).

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
:class:`~ek.agents.toolcalls.AnyOf` are kept as they are. Anything else is malformed:
:class:`CallShapeError` (a ``ValueError``, and a ``TypeError`` for old callers) names what was
given and lists the accepted shapes.

**Model output never raises; gold is read strictly, on request.** By default
(``strict=False``) a malformed call (no or a non-string tool name, arguments that are not a
mapping, unparseable JSON) is not an error but a ``Step(MALFORMED_TOOL, {}, error=<why>)``,
which no gold call can match, so the tool-call and trajectory metrics score it as a wrong
(extra) call with its reason. Every reader of gold passes ``strict=True``: a malformed gold
call raises :class:`CallShapeError`.

A prepared call is what the matcher compares: a :class:`PredictedCall` holds canonical, frozen
arguments and an exact-match key; an :class:`ExpectedCall` holds compiled gold patterns (and a
key when it has no :class:`~ek.agents.toolcalls.AnyOf`). Both carry their *mass*: the tool's
weight plus the importance of each argument they carry (an optional gold argument counts
nothing).

Example:
    >>> normalize_call({"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}})
    Step(tool='f', args={'x': 1}, observation=None, error=None, id=None)
    >>> normalize_call({"": {"base": 10}}).error
    "no tool name: tool name must be a non-empty str, got ''"
    >>> from ek.canon import resolve_canonicalizer
    >>> ctx = Context(None, resolve_canonicalizer("default"))
    >>> [(p.tool, p.fargs, p.mass) for p in prepare_predicted([{"f": {"q": " A "}}, {"": {}}], ctx)]
    [('f', {'q': 'a'}, 2.0), ('<malformed call>', {}, 1.0)]
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ek._validate import short_repr
from ek.agents._episode import Step, Trajectory
from ek.agents._spec import TaskSpec, ToolSpec
from ek.agents.toolcalls._bfcl import BfclCase
from ek.agents.toolcalls._gold import GoldCall
from ek.agents.toolcalls._values import AnyPattern, Context, Tool, compile_pattern, is_pattern
from ek.base import is_episode
from ek.grammar import GraphGrammar

__all__ = [
    "ACCEPTED_CALL_SHAPES",
    "ARGUMENT_SHAPES",
    "MALFORMED_TOOL",
    "SCHEMA_SHAPES",
    "CallShapeError",
    "ExpectedCall",
    "MalformedArgs",
    "PredictedCall",
    "call_list",
    "is_parameter_schema",
    "malformed_step",
    "normalize_call",
    "normalize_calls",
    "prepare_gold",
    "prepare_predicted",
    "read_call",
    "resolve_grammar",
    "split_gold",
    "unwrap_arguments",
]

#: The tool name of a malformed predicted call (what :func:`normalize_call` reads one as). It is
#: not a name a gold call may have, so a malformed call is never matched.
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
                f"'function' must be a name or a {{name, arguments}} object, got {short_repr(fn, 120)}"
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
        _check_no_arguments(obj, name)
    return name, raw


def _check_no_arguments(obj: Any, name: Any) -> None:
    """A call without an arguments field is a call without arguments, unless it carries keys
    no call shape has (a misspelt arguments key) or is an object with no arguments attribute."""
    if isinstance(obj, Mapping):
        unknown = sorted(str(k) for k in obj if k not in _KNOWN_KEYS)
        if unknown:
            raise _shape_error(
                f"call {short_repr(name, 80)} has no arguments field but unknown key(s) {unknown[:5]}"
            )
    elif not any(hasattr(obj, k) for k in _ARG_KEYS):
        raise _shape_error(f"call {short_repr(name, 80)} has no arguments field: {_describe(obj)}")


def _describe(obj: Any) -> str:
    return f"{type(obj).__name__}: {short_repr(obj, 200)}"


def _not_json(name: str) -> Any:
    """``json.loads``' hook for ``NaN``, ``Infinity`` and ``-Infinity``: Python's reader takes
    them, JSON (RFC 8259) does not, and a model that writes them wrote no valid call."""
    raise ValueError(f"{name} is not a JSON value")


def _args(raw: Any, name: str) -> Mapping[str, Any]:
    """The arguments as a str-keyed mapping (a JSON object string decoded)."""
    if raw is _ABSENT or raw is None:
        return {}
    if isinstance(raw, (str, bytes)):
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        if not text.strip():
            return {}
        try:
            raw = json.loads(text, parse_constant=_not_json)
        except json.JSONDecodeError as e:
            raise _shape_error(
                f"call {name!r}: arguments string is not JSON ({e.msg} at char {e.pos}): "
                f"{short_repr(text, 200)}"
            ) from None
        except (ValueError, RecursionError) as e:  # NaN/Infinity, too deep, an int too long
            raise _shape_error(
                f"call {name!r}: arguments string is not JSON ({e}): {text[:200]!r}"
            ) from None
        if not isinstance(raw, Mapping):
            raise _shape_error(
                f"call {name!r}: args must be a mapping (a JSON object), got "
                f"{type(raw).__name__}: {short_repr(text, 200)}"
            )
        return raw
    if not isinstance(raw, Mapping):
        raise _shape_error(
            f"call {name!r}: args must be a mapping or a JSON object string, got {_describe(raw)}"
        )
    for k in raw:
        if type(k) is not str:
            raise _shape_error(
                f"call {name!r}: argument names must be str, got {short_repr(k, 80)}"
            )
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
        raise _shape_error(
            f"no tool name: tool name must be a non-empty str, got {short_repr(name, 120)}"
        )
    return name, _args(raw, name)


def normalize_call(obj: Any, *, strict: bool = False) -> Step:
    """One call in any accepted shape as a :class:`~ek.agents.base.Step` (tool and arguments).

    A Step is returned as it is; a :class:`~ek.agents.toolcalls.GoldCall` becomes a Step with
    the same arguments (its :class:`~ek.agents.toolcalls.AnyOf` values intact), which every
    metric reads as the same gold.

    Args:
        obj: The call (a mapping or an object with the fields of one accepted shape).
        strict: ``False`` (default; model output): a malformed call never raises, it becomes
            ``Step(MALFORMED_TOOL, {}, error=<why>)``, scored as a wrong call. ``True`` (gold):
            a malformed call raises.

    Returns:
        The Step.

    Raises:
        CallShapeError: (``strict=True`` only) the call is malformed; the message says why and
            lists the accepted shapes.

    Example:
        >>> normalize_call({"name": "lookup", "input": {"id": "A1"}})
        Step(tool='lookup', args={'id': 'A1'}, observation=None, error=None, id=None)
        >>> normalize_call({"function": "lookup", "arguments": {"id": "A1"}}).args
        {'id': 'A1'}
        >>> bad = normalize_call({"name": "f", "arguments": "{x"})   # model output: scored, not raised
        >>> bad.tool, bad.error.split(" (")[0]
        ('<malformed call>', "call 'f': arguments string is not JSON")
        >>> normalize_call({"name": "f", "arguments": "{x"}, strict=True)   # gold
        Traceback (most recent call last):
        ...
        ek.agents.toolcalls._parse.CallShapeError: call 'f': arguments string is not JSON ...
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


def normalize_calls(objs: Any, *, strict: bool = False) -> list[Step]:
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
        ek.agents.toolcalls._parse.CallShapeError: expected a list of calls, got a single dict: ...
    """
    if isinstance(objs, Trajectory):
        return list(objs.steps)
    if isinstance(objs, (str, bytes, Mapping)) or not isinstance(objs, Iterable):
        kind = "a single dict" if isinstance(objs, Mapping) else type(objs).__name__
        raise _shape_error(f"expected a list of calls, got {kind}: {short_repr(objs, 200)}")
    out = []
    for i, obj in enumerate(objs):
        try:
            out.append(normalize_call(obj, strict=strict))
        except CallShapeError as e:
            raise CallShapeError(f"call {i}: {e}") from None
    return out


# --------------------------------------------------------------------------- argument shapes

#: Framework wrappers around a call's arguments, as traces record them: (shape, example, where
#: it comes from and what is read). :func:`unwrap_arguments` reads them, in this one place.
ARGUMENT_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("arguments", '{"x": 1} (or its JSON text)', "every host: read as they are"),
    (
        "INVALID_JSON",
        '{"INVALID_JSON": "<raw>"}',
        "pydantic-ai, arguments it could not parse: the raw text (a malformed call)",
    ),
    (
        "args/kwargs",
        '{"args": [], "kwargs": {"x": 1}, "sanitize_inputs_outputs": true}',
        "smolagents (OpenInference input.value): the kwargs; one positional value alone: that value",
    ),
    (
        "LangChain tool callback",
        """{"input_str": "{'x': 1}", "inputs": {"x": 1}, "tags": [], "metadata": {}, "kwargs": {}}""",
        "OpenLLMetry LangChain gen_ai.tool.call.arguments: inputs, else input_str (JSON, or a "
        "Python literal read with ast.literal_eval, never eval)",
    ),
    (
        "bare value",
        '"A1"',
        "LangChain single-argument tools: a value without its name (not arguments; the "
        "trace reader names it from the call the model asked for)",
    ),
)

#: Attributes shaped like a tool's parameter schema, not like arguments: (shape, example,
#: where). :func:`is_parameter_schema` recognises them.
SCHEMA_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("JSON Schema", '{"type": "object", "properties": {...}}', "OpenInference tool.parameters"),
    ("OpenAI tool", '{"type": "function", "function": {...}}', "tool definitions"),
    (
        "smolagents inputs",
        '{"x": {"type": "string", "description": "..."}}',
        "smolagents (OpenInference tool.parameters)",
    ),
)

_SMOLAGENTS_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})
_CALLBACK_KEYS = frozenset({"input_str", "inputs", "tags", "metadata", "kwargs"})
#: Type names of JSON Schema and of smolagents' tool inputs.
_SCHEMA_TYPES = frozenset(
    {"string", "integer", "number", "boolean", "array", "object", "null", "any", "image", "audio"}
)
#: Keys a parameter's schema may hold (JSON Schema keywords smolagents and OpenAI use).
_SCHEMA_KEYS = frozenset(
    {
        "type",
        "description",
        "nullable",
        "enum",
        "items",
        "default",
        "format",
        "title",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "oneOf",
        "minimum",
        "maximum",
    }
)


def _decoded(raw: Any) -> Any:
    """``raw`` decoded when it is JSON object text, else ``raw``."""
    if isinstance(raw, str) and raw.lstrip()[:1] == "{":
        try:
            return json.loads(raw, parse_constant=_not_json)
        except (ValueError, RecursionError):
            return raw
    return raw


def _python_literal(text: str) -> Any:
    """A Python dict literal (what ``str(dict)`` writes) read with :func:`ast.literal_eval`
    (never ``eval``), or ``None`` when it is not one or holds a value JSON has no form for."""
    if not text.lstrip().startswith("{") or len(text) > 1_000_000:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) and _json_like(value, 0) else None


def _json_like(value: Any, depth: int) -> bool:
    if depth > 64:
        return False
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_json_like(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v, depth + 1) for k, v in value.items())
    return False


def _callback_arguments(payload: Mapping[str, Any]) -> Any:
    """The arguments of a LangChain tool-callback payload (see :data:`ARGUMENT_SHAPES`)."""
    inputs = payload.get("inputs")
    if isinstance(inputs, Mapping):
        return inputs
    text = payload.get("input_str")
    if not isinstance(text, str):
        return text
    decoded = _decoded(text)
    if isinstance(decoded, Mapping):
        return decoded
    literal = _python_literal(text)
    return text if literal is None else literal


def unwrap_arguments(raw: Any) -> Any:
    """A call's arguments with the framework wrapper of :data:`ARGUMENT_SHAPES` taken off.

    What comes back is read by :func:`normalize_call` as any call's arguments: a mapping or JSON
    object text are arguments; anything else (a bare value, a malformed text) is scored as a
    malformed call with its reason. ``raw`` in no wrapper comes back unchanged.

    Example:
        >>> unwrap_arguments('{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"q": 1}}')
        {'q': 1}
        >>> unwrap_arguments({"input_str": "{'order_id': 'A1'}", "tags": [], "metadata": {}})
        {'order_id': 'A1'}
        >>> unwrap_arguments({"INVALID_JSON": '{"x": '}), unwrap_arguments('{"x": 1}')
        ('{"x": ', '{"x": 1}')
    """
    value = _decoded(raw)
    if not isinstance(value, Mapping) or not value:
        return raw
    keys = set(value)
    if keys == {"INVALID_JSON"}:
        return value["INVALID_JSON"]
    if {"args", "kwargs"} <= keys <= _SMOLAGENTS_KEYS:
        args, kwargs = value["args"], value["kwargs"]
        if isinstance(args, (list, tuple)) and len(args) == 1 and not kwargs:
            return args[0]
        return kwargs if not args and isinstance(kwargs, Mapping) else raw
    if "input_str" in keys and keys <= _CALLBACK_KEYS:
        return _callback_arguments(value)
    return raw


def _parameter(spec: Any) -> bool:
    if not isinstance(spec, Mapping) or not spec or not set(spec) <= _SCHEMA_KEYS:
        return False
    t = spec.get("type")
    types = t if isinstance(t, (list, tuple)) else (t,)
    return bool(types) and all(isinstance(x, str) and x in _SCHEMA_TYPES for x in types)


def is_parameter_schema(obj: Any) -> bool:
    """True when ``obj`` (a mapping or its JSON text) is shaped like a tool's parameter schema
    (:data:`SCHEMA_SHAPES`), not like its arguments.

    Example:
        >>> is_parameter_schema('{"order_id": {"type": "string", "description": "the id"}}')
        True
        >>> is_parameter_schema({"order_id": "A1"}), is_parameter_schema({"kind": {"type": "bug"}})
        (False, False)
    """
    value = _decoded(obj)
    if not isinstance(value, Mapping) or not value:
        return False
    if "properties" in value or value.get("type") in ("object", "function"):
        return True
    if isinstance(value.get("function"), Mapping):
        return True
    return all(_parameter(v) for v in value.values())


# --------------------------------------------------------------------------- prepared calls


class MalformedArgs(Mapping[str, Any]):
    """The (empty) arguments of a malformed predicted call, carrying why it is malformed in
    ``reason``: the call is scored as an extra call of :data:`MALFORMED_TOOL` with that reason.

    Example:
        >>> a = MalformedArgs("no tool name")
        >>> dict(a), a.reason
        ({}, 'no tool name')
    """

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


class _PreparedCall:
    """What a prepared call of either side is equal to and shows: its index, its tool and its
    arguments as given."""

    __slots__ = ()
    index: int
    tool: str
    args: Mapping[str, Any]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _PreparedCall) or type(other) is not type(self):
            return NotImplemented
        return (self.index, self.tool, self.args) == (other.index, other.tool, other.args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(index={self.index}, tool={self.tool!r}, args={self.args!r})"


class PredictedCall(_PreparedCall):
    """A predicted call, prepared: canonical frozen arguments (``fargs``; two calls of one tool
    are canonically equal when their ``fargs`` are equal) and ``mass`` (tool weight + argument
    importances, ``info`` being the grammar's entry for the tool); ``args`` are the arguments
    as given."""

    __slots__ = ("args", "fargs", "index", "key", "mass", "tool")

    def __init__(
        self, index: int, tool: str, args: Mapping[str, Any], info: Tool, ctx: Context
    ) -> None:
        self.index = index
        self.tool = tool
        self.args = args
        fargs = {}
        mass = info.weight
        for k, v in args.items():
            try:
                fargs[k] = ctx.freeze(v)
            except (TypeError, ValueError) as e:
                raise _where("predicted", index, tool, k, e) from None
            mass += info.importance(k)
        self.fargs: dict[str, Any] = fargs
        self.mass: float = mass
        #: The call as a hashable value: (tool, the set of its frozen arguments).
        self.key: tuple[str, frozenset[tuple[str, Any]]] = (tool, frozenset(fargs.items()))


class ExpectedCall(_PreparedCall):
    """A gold call, prepared: compiled argument patterns (``pats``), the arguments that may be
    omitted (``optional``), and for a literal call (no AnyOf anywhere) its frozen arguments
    (``lit``, ``None`` otherwise: a predicted call of the tool whose ``fargs`` equal them is an
    exact match when the tool has no schema). ``mass`` counts the arguments that are not
    optional."""

    __slots__ = ("args", "index", "info", "key", "lit", "mass", "optional", "pats", "tool")

    def __init__(
        self, index: int, tool: str, args: Mapping[str, Any], info: Tool, ctx: Context
    ) -> None:
        self.index = index
        self.tool = tool
        self.args = args
        self.info = info
        pats: dict[str, Any] = {}
        optional = []
        literal = True
        mass = info.weight
        for k, v in args.items():
            try:
                pat = compile_pattern(v, ctx)
            except (TypeError, ValueError) as e:
                raise _where("gold", index, tool, k, e) from None
            pats[k] = pat
            literal = literal and not is_pattern(pat)
            if type(pat) is AnyPattern and pat.optional:
                optional.append(k)
            else:
                mass += info.importance(k)
        self.pats = pats
        self.optional = frozenset(optional)
        self.lit: dict[str, Any] | None = pats if literal else None
        self.mass: float = mass
        #: A literal call as a hashable value, equal to the ``key`` of the predicted calls
        #: that match it exactly when its tool has no schema (``None``: a call with AnyOf).
        self.key: tuple[str, frozenset[tuple[str, Any]]] | None = (
            (tool, frozenset(pats.items())) if literal else None
        )


def _where(side: str, i: int, tool: str, arg: Any, e: Exception) -> Exception:
    return type(e)(f"{side} call {i} ({tool!r}) argument {arg!r}: {e}")


def _malformed(x: Any, i: int, side: str, why: Exception | str | None) -> MalformedArgs:
    """The arguments of malformed predicted call ``i``; a gold call raises instead."""
    if side != "predicted":
        if why is None:  # a gold call named as a malformed prediction
            why = f"tool name {MALFORMED_TOOL!r} is reserved for malformed predicted calls"
        raise CallShapeError(f"{side} call {i}: {why}") from None
    if why is None:  # a Step a bridge made of a malformed call: its error says why
        why = getattr(x, "error", None) or "malformed call"
    return MalformedArgs(malformed_step(why).error or "malformed call")


def call_list(obj: Any, what: str) -> list[Any]:
    """The calls of ``obj`` (an Episode, a Trajectory or a list of calls) as a list.

    Args:
        obj: What to read.
        what: Its name in the error message (``"prediction"`` or ``"gold"``).

    Example:
        >>> call_list(Trajectory([Step("a")]), "gold")
        [Step(tool='a', args={}, observation=None, error=None, id=None)]
    """
    if type(obj) is list:
        return obj
    if is_episode(obj):
        obj = obj.trajectory
    if isinstance(obj, Trajectory):
        return list(obj.steps)
    if isinstance(obj, (str, bytes, Mapping)) or not isinstance(obj, Iterable):
        raise TypeError(
            f"{what} must be an Episode, a Trajectory or a list of calls, got "
            f"{type(obj).__name__}: {short_repr(obj, 200)}"
        )
    return list(obj)


def _read(x: Any, i: int, side: str) -> tuple[str, Mapping[str, Any]]:
    """(tool, args) of call ``i``; a malformed predicted call reads as :data:`MALFORMED_TOOL`."""
    try:
        tool, args = read_call(x)
    except CallShapeError as e:  # model output is scored, never raised on; gold raises
        return MALFORMED_TOOL, _malformed(x, i, side, e)
    if tool == MALFORMED_TOOL:
        return tool, _malformed(x, i, side, None)
    return tool, args


def prepare_predicted(obj: Any, ctx: Context) -> list[PredictedCall]:
    """The predicted calls of ``obj`` (an Episode, a Trajectory or a list of calls), prepared.

    Raises:
        TypeError: ``obj`` is not a list of calls, or an argument value is not JSON-like.
        ValueError: a cyclic or too deeply nested value.
    """
    out = []
    for i, x in enumerate(call_list(obj, "prediction")):
        tool, args = _read(x, i, "predicted")
        out.append(PredictedCall(i, tool, args, ctx.tool(tool), ctx))
    return out


def prepare_gold(obj: Any, ctx: Context) -> list[ExpectedCall]:
    """The gold calls of ``obj`` (a Trajectory or a list of calls), prepared and compiled.

    Raises:
        CallShapeError: a gold call in no accepted shape (gold is read strictly).
        TypeError: ``obj`` is not a list of calls, or an argument value is not JSON-like.
        ValueError: a cyclic or too deeply nested value.

    Example:
        >>> from ek.canon import resolve_canonicalizer
        >>> from ek.agents.toolcalls import AnyOf
        >>> ctx = Context(None, resolve_canonicalizer("default"))
        >>> a, b = prepare_gold([{"name": "f", "args": {"q": "A"}},
        ...                      GoldCall("f", {"u": AnyOf(1, optional=True)})], ctx)
        >>> a.lit, a.key == ("f", frozenset({("q", "a")})), a.mass, b.key, b.optional, b.mass
        ({'q': 'a'}, True, 2.0, None, frozenset({'u'}), 1.0)
    """
    out = []
    for i, x in enumerate(call_list(obj, "gold")):
        tool, args = _read(x, i, "gold")
        out.append(ExpectedCall(i, tool, args, ctx.tool(tool), ctx))
    return out


def resolve_grammar(grammar: Any) -> GraphGrammar | None:
    """A GraphGrammar from a GraphGrammar, a TaskSpec, a BfclCase, a list of ToolSpec or None.

    Example:
        >>> resolve_grammar([ToolSpec("drop", destructive=True)]).weight("drop")
        10.0
    """
    if grammar is None or isinstance(grammar, GraphGrammar):
        return grammar
    if isinstance(grammar, (TaskSpec, BfclCase)):
        return grammar.grammar()
    if isinstance(grammar, (list, tuple)) and all(isinstance(t, ToolSpec) for t in grammar):
        return GraphGrammar(t.to_node_type() for t in grammar)
    raise TypeError(
        f"grammar must be a GraphGrammar, a TaskSpec, a list of ToolSpec or None, got "
        f"{type(grammar).__name__}: {short_repr(grammar, 200)}"
    )


def split_gold(gold: Any) -> tuple[Any, GraphGrammar | None]:
    """(gold calls, grammar the gold brings) of a TaskSpec, a BfclCase or a plain gold.

    Example:
        >>> calls, g = split_gold(TaskSpec("t", gold_calls=[Step("a")]))
        >>> len(calls), g
        (1, None)
    """
    if not isinstance(gold, (TaskSpec, BfclCase)):
        return gold, None
    calls = gold.gold_calls
    if calls is None:
        raise ValueError(
            f"TaskSpec {gold.task_id!r} has no gold_calls to score tool calls against"
            if isinstance(gold, TaskSpec)
            else "BfclCase has no gold calls"
        )
    return calls, gold.grammar() if gold.tools else None
