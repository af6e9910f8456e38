"""BFCL test entries as ek objects: :class:`BfclCase` and :func:`from_bfcl` (re-exported by
:mod:`ek.agents.toolcalls`).

A BFCL entry (ShishirPatil/gorilla, ``berkeley-function-call-leaderboard``, data format @ 6ea5797)
is a question with its function docs and a ``possible_answer`` listing the acceptable values of
every argument (``""`` among them: the argument may be omitted); here the docs become
:class:`~ek.agents.base.ToolSpec` s and the answer :class:`~ek.agents.toolcalls.GoldCall` s with
:class:`~ek.agents.toolcalls.AnyOf` values.

Example:
    >>> _bfcl_param(["a", ""])
    AnyOf('a', optional=True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ek.agents._gold import AnyOf, GoldCall
from ek.agents.base import ToolSpec
from ek.grammar import GraphGrammar

__all__ = ["BfclCase", "from_bfcl"]


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
        >>> from ek.agents.toolcalls import match_calls
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


# Documented and pickled under their public home.
BfclCase.__module__ = "ek.agents.toolcalls"
from_bfcl.__module__ = "ek.agents.toolcalls"
