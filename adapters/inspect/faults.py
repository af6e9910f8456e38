"""Inject seeded faults into an Inspect AI tool (issue 21): :func:`faulty_tool`.

``faulty_tool(lookup(), Fault("error", rate=0.3), seed=7)`` is a tool with the same name,
description and parameters whose calls are faulted as :class:`ek.agents.Fault` describes. In
Inspect's terms:

* ``"error"`` and ``"timeout"`` raise :class:`inspect_ai.tool.ToolError`: the model sees a tool
  error (``ChatMessageTool.error``) and the sample goes on. (Any other exception would kill the
  sample; an injected fault must test the agent, not end the evaluation.)
* ``"latency"`` waits ``fault.latency`` seconds, then answers.
* ``"truncate"``, ``"malformed"`` and ``"wrong_value"`` change the result
  (:func:`ek.agents.corrupt`). A string result that is a JSON document is corrupted as
  that document and written back as JSON (``wrong_value`` keeps its shape); for any other
  string, ``wrong_value`` changes each digit (``d -> (d + 1) mod 10``).

The stream of faults is seeded per tool (``seed`` and the fault's name). Inspect runs samples
concurrently, so *which* call receives a fault depends on the order calls arrive in; the rate
does not. Run with ``max_samples=1`` for an exactly reproducible pattern.

Example:
    >>> from inspect_ai.tool import tool
    >>> @tool
    ... def lookup():
    ...     async def execute(key: str) -> str:
    ...         '''Look up a key.
    ...
    ...         Args:
    ...             key: The key.
    ...         '''
    ...         return "france"
    ...     return execute
    >>> from ek.agents import Fault
    >>> import asyncio
    >>> asyncio.run(faulty_tool(lookup(), Fault("truncate"))(key="paris"))
    'fra'
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolError

from ek.agents import Fault, corrupt, fault_stream

__all__ = ["faulty_tool"]


def _shift_digits(text: str) -> str:
    return "".join(str((int(ch) + 1) % 10) if ch.isdigit() else ch for ch in text)


def _corrupt_result(kind: str, result: Any) -> Any:
    """An Inspect tool result (a str, a number, content) corrupted as ``kind`` says."""
    if not isinstance(result, str):
        out = corrupt(kind, result)
        return out if isinstance(out, (str, int, float, bool, list)) else str(out)
    if kind in ("wrong_value", "truncate"):
        try:
            doc = json.loads(result)
        except ValueError:
            doc = None
        if isinstance(doc, (dict, list)):
            return json.dumps(corrupt(kind, doc))
        if kind == "wrong_value":
            return _shift_digits(result)
    return str(corrupt(kind, result))


def faulty_tool(tool: Tool, fault: Fault, *, seed: Any = 0) -> Tool:
    """``tool`` under ``fault`` (see the module docstring); a tool ``fault`` does not name is
    returned unchanged.

    Raises:
        TypeError: ``fault`` is not a :class:`~ek.agents.Fault`.
    """
    if not isinstance(fault, Fault):
        raise TypeError(f"fault must be an ek.agents.Fault, got {type(fault).__name__}")
    tdef = ToolDef(tool)
    name = tdef.name
    if not fault.hits(name):
        return tool
    rng = fault_stream(seed, fault, name)
    inner = tdef.tool

    async def execute(**kwargs: Any) -> Any:
        if not rng.random() < fault.rate:
            return await inner(**kwargs)
        if fault.latency:
            await asyncio.sleep(fault.latency)
        if fault.kind == "error":
            raise ToolError(f"injected fault: {name} failed (error response)")
        if fault.kind == "timeout":
            raise ToolError(f"injected fault: {name} timed out")
        return _corrupt_result(fault.kind, await inner(**kwargs))

    return ToolDef(
        execute, name=name, description=tdef.description, parameters=tdef.parameters
    ).as_tool()
