"""The model's tool calls as it wrote them, handed over beside a host's typed ones.

DeepEval's ``ToolCall`` and Ragas' ``ToolCall`` accept only a mapping of arguments, so a call
the model wrote malformed (arguments that are not JSON, or not an object) cannot be put in
``tools_called`` / ``AIMessage.tool_calls`` as it is; the fallbacks a user reaches for
(``input_parameters=None`` or ``{}``, ``args={}``) read as a *well-formed* call with no
arguments, which earns partial credit (a false pass). So the bridges read the model's own
calls from metadata when given, under :data:`MODEL_CALLS_KEY` (``"raw_tool_calls"``): a list,
one entry per call, that **replaces** the typed calls for ek (they may then hold placeholders
for the host's own validation, or be left out). Each entry is a call in any accepted shape
(:mod:`ek.agents.toolcalls._parse`), its arguments as JSON text allowed, or the whole call as
JSON text; read by :func:`read_model_call`, which never raises: a malformed call becomes
``Step(MALFORMED_TOOL, error=<why>)``, scored as a wrong call.

Example:
    >>> read_model_call({"name": "refund", "arguments": '{"order_id": "A1", "amount": }'}).tool
    '<malformed call>'
    >>> read_model_call('{"name": "refund", "arguments": {"order_id": "A1"}}').args
    {'order_id': 'A1'}
    >>> model_calls(None, "metadata['raw_tool_calls']") is None
    True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ek._validate import short_repr
from ek.agents._episode import Step
from ek.agents.toolcalls._parse import malformed_step, normalize_call

__all__ = ["MODEL_CALLS_KEY", "model_calls", "read_model_call"]

#: The metadata key under which a host's test case or message carries the model's own calls.
MODEL_CALLS_KEY = "raw_tool_calls"


def model_calls(value: Any, where: str) -> list[Any] | None:
    """The entries of a ``raw_tool_calls`` value (``None`` when absent).

    Raises:
        TypeError: ``value`` is not a list (the message names ``where``).
    """
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(
            f"{where} must be a list of the model's tool calls (one entry per call), got "
            f"{type(value).__name__}: {short_repr(value, 120)}"
        )
    return list(value)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def read_model_call(entry: Any) -> Step:
    """One call the model wrote as a Step; never raises on the call itself.

    ``entry`` may be the call's JSON text (decoded first), or a call in any accepted shape;
    what cannot be read is a malformed call with the reason (see the module docstring).
    """
    if isinstance(entry, (str, bytes)):
        text = entry.decode("utf-8", "replace") if isinstance(entry, bytes) else entry
        try:
            entry = json.loads(text, parse_constant=_not_json)
        except (ValueError, RecursionError) as e:
            return malformed_step(f"the call is not JSON ({e}): {short_repr(text, 200)}")
    return normalize_call(entry)
