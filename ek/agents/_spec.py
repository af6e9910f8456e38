"""Layer A, the task and tool grammar: what should happen, and what it costs to get it wrong.

:class:`ToolSpec` renders to an :class:`ek.grammar.NodeType` whose fields are the tool's
arguments (``FieldSpec.importance`` = the cost of a wrong argument; a destructive tool weighs
:data:`DESTRUCTIVE_WEIGHT`), and :class:`TaskSpec` builds the :class:`ek.grammar.GraphGrammar`
that the tool-call and trajectory metrics read their costs from; :func:`suite_grammar` is the
union over a suite. What happened (Layer B: :class:`~ek.agents.base.Episode` and its parts)
is in :mod:`ek.agents._episode`; :mod:`ek.agents.base` re-exports both.

Both shapes round-trip through ``to_dict()`` / ``from_dict()``. Bad input raises ``ValueError``
or ``TypeError`` naming the field, what was expected and what was given.

Example:
    >>> refund = ToolSpec("refund_order", [FieldSpec("amount", "number", importance=5.0)],
    ...                   destructive=True)
    >>> g = TaskSpec("t1", tools=[refund]).grammar()
    >>> g.weight("refund_order"), g.importance("refund_order", "amount")
    (10.0, 5.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ek._validate import (
    check_keys,
    check_mapping,
    finite,
    nonempty_str,
    opt_str,
    plain_json,
    short_repr,
)
from ek.agents._episode import Trajectory
from ek.base import ReadOnlyDict
from ek.grammar import JSON_TYPES, FieldSpec, GraphGrammar, NodeType

__all__ = [
    "DESTRUCTIVE_WEIGHT",
    "TaskSpec",
    "ToolSpec",
    "suite_grammar",
]

#: Default weight of a destructive tool: missing or inventing one call costs ten ordinary calls.
DESTRUCTIVE_WEIGHT = 10.0


def _fields_from_schema(
    tool: str, parameters: Mapping[str, Any], importance: Mapping[str, float]
) -> tuple[FieldSpec, ...]:
    if not isinstance(parameters, Mapping):
        raise TypeError(
            f"ToolSpec {short_repr(tool)}: parameters must be a JSON-schema object, got {short_repr(parameters)}"
        )
    props = parameters.get("properties", {}) or {}
    if not isinstance(props, Mapping):
        raise TypeError(
            f"ToolSpec {short_repr(tool)}: parameters.properties must be a mapping, got {short_repr(props)}"
        )
    required = parameters.get("required", []) or []
    if not isinstance(required, (list, tuple)):
        raise TypeError(
            f"ToolSpec {short_repr(tool)}: parameters.required must be a list, got {short_repr(required)}"
        )
    unknown_imp = sorted(set(importance) - set(props))
    if unknown_imp:
        raise ValueError(
            f"ToolSpec {short_repr(tool)}: importance given for unknown argument(s) {unknown_imp}"
        )
    out = []
    for name, sch in props.items():
        if not isinstance(sch, Mapping):
            raise TypeError(
                f"ToolSpec {short_repr(tool)}: schema of argument {short_repr(name)} must be a mapping, got {short_repr(sch)}"
            )
        t = sch.get("type")
        if isinstance(t, list):
            t = tuple(x for x in t if x in JSON_TYPES) or None
        elif t is not None and t not in JSON_TYPES:
            t = _PY_TO_JSON.get(t)  # BFCL writes Python names such as "dict", "float", "tuple"
        imp = importance.get(name, sch.get("x-importance", 1.0))
        out.append(
            FieldSpec(
                name,
                t,
                required=name in required,
                importance=imp,
                description=str(sch.get("description", "")),
                schema=sch,
            )
        )
    return tuple(out)


_PY_TO_JSON = {
    "dict": "object",
    "float": "number",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "any": None,
}


class ToolSpec:
    """A tool's declaration and its cost model; renders to a :class:`ek.grammar.NodeType`.

    Args:
        name: The tool's name.
        args: The arguments as :class:`ek.grammar.FieldSpec` s (their ``importance`` is the cost
            of getting that argument wrong).
        parameters: Alternatively, a JSON-schema ``object`` (as in OpenAI / Anthropic tool
            definitions); an argument's importance comes from ``importance`` or its
            ``x-importance`` key, else 1.0.
        destructive: Whether the tool changes the world irreversibly (refund, delete, send).
        weight: The cost of a missing or extra call; default :data:`DESTRUCTIVE_WEIGHT` for a
            destructive tool, else 1.0.
        importance: Per-argument importances to apply to ``parameters``.
        description: Free text.
        policies: Policy rules about this tool (:mod:`ek.agents.policy`: rule objects or their
            ``to_dict()`` dicts), checked by ``PolicyMetric`` on every task that lists the tool.

    Example:
        >>> t = ToolSpec("cancel_order", parameters={
        ...     "type": "object",
        ...     "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
        ...     "required": ["order_id"]}, importance={"order_id": 8.0}, destructive=True)
        >>> t.weight, [(f.name, f.required, f.importance) for f in t.args]
        (10.0, [('order_id', True, 8.0), ('reason', False, 1.0)])
    """

    __slots__ = ("args", "description", "destructive", "name", "parameters", "policies", "weight")

    def __init__(
        self,
        name: str,
        args: Iterable[FieldSpec] = (),
        *,
        parameters: Mapping[str, Any] | None = None,
        destructive: bool = False,
        weight: float | None = None,
        importance: Mapping[str, float] | None = None,
        description: str = "",
        policies: Iterable[Any] = (),
    ) -> None:
        self.name = nonempty_str("ToolSpec.name", name)
        if not isinstance(destructive, bool):
            raise TypeError(
                f"ToolSpec {short_repr(name)}: destructive must be a bool, got {short_repr(destructive)}"
            )
        arg_list = tuple(args)
        if parameters is not None and arg_list:
            raise ValueError(
                f"ToolSpec {short_repr(name)}: give either args or parameters, not both"
            )
        if parameters is not None:
            arg_list = _fields_from_schema(name, parameters, dict(importance or {}))
        elif importance:
            raise ValueError(
                f"ToolSpec {short_repr(name)}: importance= applies to parameters=; set FieldSpec.importance instead"
            )
        for a in arg_list:
            if not isinstance(a, FieldSpec):
                raise TypeError(
                    f"ToolSpec {short_repr(name)}: args must be FieldSpec, got {short_repr(a)}"
                )
        self.args: tuple[FieldSpec, ...] = arg_list
        self.parameters: Mapping[str, Any] | None = (
            None if parameters is None else ReadOnlyDict(parameters)
        )
        self.destructive = destructive
        w = (DESTRUCTIVE_WEIGHT if destructive else 1.0) if weight is None else weight
        self.weight = finite(f"ToolSpec {short_repr(name)}: weight", w, minimum=0.0)
        if not isinstance(description, str):
            raise TypeError(
                f"ToolSpec {short_repr(name)}: description must be a str, got {short_repr(description)}"
            )
        self.description = description
        self.policies: tuple[Any, ...] = _policies(
            f"ToolSpec {short_repr(name)}: policies", policies
        )
        self.to_node_type()  # validates argument names are unique

    def to_node_type(self) -> NodeType:
        """The grammar node type: fields = arguments, weight = call weight."""
        return NodeType(
            self.name,
            self.args,
            weight=self.weight,
            description=self.description,
            metadata={"destructive": self.destructive},
        )

    def arg(self, name: str) -> FieldSpec | None:
        """The argument called ``name``, or ``None``."""
        for a in self.args:
            if a.name == name:
                return a
        return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolSpec):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        flag = ", destructive=True" if self.destructive else ""
        return f"ToolSpec({self.name!r}, args={[a.name for a in self.args]}{flag}, weight={self.weight})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d: dict[str, Any] = {"name": self.name, "args": [a.to_dict() for a in self.args]}
        if self.destructive:
            d["destructive"] = True
        if self.weight != (DESTRUCTIVE_WEIGHT if self.destructive else 1.0):
            d["weight"] = self.weight
        if self.description:
            d["description"] = self.description
        if self.policies:
            d["policies"] = [r.to_dict() for r in self.policies]
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolSpec:
        """Inverse of :meth:`to_dict` (also accepts ``parameters`` + ``importance``)."""
        check_keys(
            "ToolSpec",
            data,
            {
                "name",
                "args",
                "parameters",
                "destructive",
                "weight",
                "importance",
                "description",
                "policies",
            },
            ("name",),
        )
        kw = dict(data)
        if "args" in kw:
            if not isinstance(kw["args"], (list, tuple)):
                raise TypeError(f"ToolSpec.args must be a list, got {short_repr(kw['args'])}")
            kw["args"] = [
                a if isinstance(a, FieldSpec) else FieldSpec.from_dict(a) for a in kw["args"]
            ]
        return cls(**kw)

    @classmethod
    def from_openai(cls, tool: Mapping[str, Any], **kw: Any) -> ToolSpec:
        """From an OpenAI tool definition (``{"type": "function", "function": {...}}``) or its
        inner function object; also accepts Anthropic's ``input_schema`` form.

        Raises:
            TypeError: ``tool`` (or its ``function``) is not a mapping.
            ValueError: no ``name``.
        """
        if not isinstance(tool, Mapping):
            raise TypeError(f"a tool definition must be a mapping, got {type(tool).__name__}")
        fn = tool.get("function", tool)
        if not isinstance(fn, Mapping):
            raise TypeError(f"a tool's 'function' must be a mapping, got {type(fn).__name__}")
        if "name" not in fn:
            raise ValueError(
                f"a tool definition needs a 'name', got keys {short_repr(sorted(map(str, fn))[:10])}"
            )
        params = fn.get("parameters", fn.get("input_schema", {"type": "object", "properties": {}}))
        return cls(fn["name"], parameters=params, description=str(fn.get("description", "")), **kw)


def _policies(owner: str, value: Any) -> tuple[Any, ...]:
    """Policy rules (objects or their dicts) as a tuple of rules (:mod:`ek.agents.policy`)."""
    if not value:
        return ()
    from ek.agents.policy import as_policies  # the policy package reads specs: imported on use

    return as_policies(value, owner)


def _tools(value: Any) -> tuple[ToolSpec, ...]:
    if not isinstance(value, (list, tuple)):
        raise TypeError(
            f"TaskSpec.tools must be a list of ToolSpec, got {type(value).__name__}: {short_repr(value)}"
        )
    out = []
    for t in value:
        out.append(t if isinstance(t, ToolSpec) else ToolSpec.from_dict(t))
    names = [t.name for t in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"TaskSpec.tools: duplicate tool names {dup}")
    return tuple(out)


def _scenario(value: Any) -> Any:
    """A task's scenario: a Scenario, its dict (read) or ``None``. Imported on use:
    :mod:`ek.agents.simulate` builds on this module."""
    if value is None:
        return None
    from ek.agents.simulate import as_scenario

    return as_scenario("TaskSpec.scenario", value)


@dataclass(frozen=True)
class TaskSpec:
    """One task of a suite: its input, its gold, the tools it may use, and its slice.

    Args:
        task_id: Unique id.
        input: What the agent is given.
        gold: What the success checker compares against (an answer, or a goal final state).
        tools: The :class:`ToolSpec` s available; they define the task's cost grammar.
        gold_calls: The expected tool calls, in order (gold for the tool-call and trajectory
            metrics).
        slice: A slice name for per-slice reports (e.g. ``"refund"``).
        tags: Free labels (e.g. ``("hard",)``).
        metadata: Free JSON-like data.
        policies: Policy rules for this task (:mod:`ek.agents.policy`: rule objects or their
            ``to_dict()`` dicts); ``PolicyMetric`` checks them with those of the task's tools.
            They are part of :meth:`to_dict`, so of the suite's fingerprint.
        scenario: For a conversational task, the :class:`~ek.agents.simulate.Scenario` the
            simulated user plays (a Scenario or its dict), else ``None``.

    ``input``, ``gold`` and ``metadata`` must be JSON data (str-keyed mappings, lists, strings,
    finite numbers, bools, ``None``; at most 200 levels deep), so :meth:`to_dict` is strict
    JSON that :meth:`from_dict` reads back, and the suite's fingerprint is the same in every
    process; anything else is a ``TypeError`` / ``ValueError`` naming it.
    """

    task_id: str
    input: Any = None
    gold: Any = None
    tools: tuple[ToolSpec, ...] = ()
    gold_calls: Trajectory | None = None
    slice: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    policies: tuple[Any, ...] = ()
    scenario: Any = None

    def __post_init__(self) -> None:
        nonempty_str("TaskSpec.task_id", self.task_id)
        object.__setattr__(self, "scenario", _scenario(self.scenario))
        object.__setattr__(self, "tools", _tools(self.tools))
        object.__setattr__(self, "policies", _policies("TaskSpec.policies", self.policies))
        if self.gold_calls is not None and not isinstance(self.gold_calls, Trajectory):
            object.__setattr__(self, "gold_calls", Trajectory(self.gold_calls))
        opt_str("TaskSpec.slice", self.slice)
        tags = self.tags
        if isinstance(tags, str) or not isinstance(tags, (list, tuple)):
            raise TypeError(f"TaskSpec.tags must be a list of str, got {short_repr(tags)}")
        for t in tags:
            if not isinstance(t, str):
                raise TypeError(f"TaskSpec.tags must be str, got {short_repr(t)}")
        object.__setattr__(self, "tags", tuple(tags))
        object.__setattr__(self, "metadata", check_mapping("TaskSpec.metadata", self.metadata))
        for k in ("input", "gold", "metadata"):  # what to_dict writes, from_dict reads back
            plain_json(f"TaskSpec.{k}", getattr(self, k))

    def grammar(self) -> GraphGrammar:
        """The cost grammar of this task's tools."""
        return GraphGrammar(t.to_node_type() for t in self.tools)

    @property
    def slices(self) -> tuple[str, ...]:
        """The slice plus the tags: every group this task is reported under."""
        return ((self.slice,) if self.slice else ()) + self.tags

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d: dict[str, Any] = {"task_id": self.task_id}
        if self.input is not None:
            d["input"] = self.input
        if self.gold is not None:
            d["gold"] = self.gold
        if self.tools:
            d["tools"] = [t.to_dict() for t in self.tools]
        if self.gold_calls is not None:
            d["gold_calls"] = self.gold_calls.to_list()
        if self.slice is not None:
            d["slice"] = self.slice
        if self.tags:
            d["tags"] = list(self.tags)
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        if self.policies:
            d["policies"] = [r.to_dict() for r in self.policies]
        if self.scenario is not None:
            d["scenario"] = self.scenario.to_dict()
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskSpec:
        """Inverse of :meth:`to_dict`."""
        check_keys("TaskSpec", data, {f.name for f in fields(cls)}, ("task_id",))
        kw = dict(data)
        if kw.get("gold_calls") is not None:
            kw["gold_calls"] = Trajectory.from_list(kw["gold_calls"])
        return cls(**kw)  # input, gold and metadata checked as JSON data there


def suite_grammar(tasks: Iterable[TaskSpec] | Iterable[ToolSpec]) -> GraphGrammar:
    """One grammar for a whole suite: the union of its tasks' (or the given) tools.

    A tool declared twice must be declared the same way.

    Example:
        >>> t = ToolSpec("delete", destructive=True)
        >>> suite_grammar([TaskSpec("a", tools=[t]), TaskSpec("b", tools=[t])]).weight("delete")
        10.0
    """
    g = GraphGrammar()
    for x in tasks:
        if isinstance(x, TaskSpec):
            g = g.merge(x.grammar())
        elif isinstance(x, ToolSpec):
            g = g.merge(GraphGrammar([x.to_node_type()]))
        else:
            raise TypeError(
                f"suite_grammar expects TaskSpec or ToolSpec items, got {type(x).__name__}"
            )
    return g
