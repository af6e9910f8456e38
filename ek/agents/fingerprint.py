"""A stable description of a metric's configuration, so a resumed store never mixes settings.

A trial store records, in its header, each metric's configuration (:func:`metric_config`): the
metric's name, its class and a JSON description of its settings, with a sha256 fingerprint of
that description. :func:`ek.agents.suite.run_suite` refuses to resume a store whose header
records a metric of the same name under another configuration (the stored scores were computed
with other settings; reusing them would silently mix two metrics under one name).

The settings are read the way DeepEval re-instantiates a metric: every ``__init__`` argument
kept under the same attribute name (a dataclass's fields; an object with ``to_dict`` is
described by it). Private attributes (caches) are never read, functions are described by their
qualified name, and nothing is described by ``id()``, so the description is the same in every
process.

Example:
    >>> from ek.agents.metrics import TaskSuccessMetric
    >>> a, b = metric_config(TaskSuccessMetric()), metric_config(TaskSuccessMetric())
    >>> a == b, a["name"], a["type"]
    (True, 'task_success', 'ek.agents.metrics.TaskSuccessMetric')
    >>> metric_config(TaskSuccessMetric("final_state"))["fingerprint"] == a["fingerprint"]
    False
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import inspect
import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["describe", "metric_config"]

_MAX_DEPTH = 6


def _qualname(obj: Any) -> str:
    mod = getattr(obj, "__module__", None) or "?"
    return f"{mod}.{getattr(obj, '__qualname__', getattr(obj, '__name__', type(obj).__name__))}"


def _number(x: float) -> Any:
    return x if math.isfinite(x) else repr(x)


def _settings(obj: Any, depth: int) -> dict[str, Any]:
    """The settings of an object: dataclass fields, else its ``__init__`` arguments kept as
    attributes of the same name (private names and missing attributes skipped)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = [f.name for f in dataclasses.fields(obj)]
    else:
        try:
            params = inspect.signature(type(obj)).parameters.values()
        except (TypeError, ValueError):
            params = []  # type: ignore[assignment]
        names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return {
        n: describe(getattr(obj, n), depth + 1)
        for n in names
        if not n.startswith("_") and hasattr(obj, n)
    }


def describe(obj: Any, _depth: int = 0) -> Any:
    """A JSON-ready, process-independent description of ``obj`` (see the module docstring).

    Example:
        >>> describe({"b": (1, 2.5), "a": None}), describe(len)
        ({'a': None, 'b': [1, 2.5]}, {'callable': 'builtins.len'})
    """
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return _number(obj)
    if _depth > _MAX_DEPTH:
        return {"type": _qualname(type(obj))}
    if isinstance(obj, enum.Enum):
        return f"{_qualname(type(obj))}.{obj.name}"
    if isinstance(obj, Mapping):
        return {
            str(k): describe(v, _depth + 1)
            for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))
        }
    if isinstance(obj, (list, tuple)):
        return [describe(v, _depth + 1) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((describe(v, _depth + 1) for v in obj), key=repr)
    if isinstance(obj, type) or inspect.isroutine(obj):
        return {"callable": _qualname(obj)}
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict) and not isinstance(obj, type):
        try:
            return {"type": _qualname(type(obj)), "value": describe(to_dict(), _depth + 1)}
        except Exception:
            pass
    return {"type": _qualname(type(obj)), "settings": _settings(obj, _depth)}


def metric_config(metric: Any) -> dict[str, Any]:
    """``{"name", "type", "settings", "fingerprint"}`` of a metric (see the module docstring).

    ``fingerprint`` is the sha256 of the canonical JSON of ``type`` and ``settings``.
    """
    settings = _settings(metric, 0)
    kind = _qualname(type(metric))
    text = json.dumps(
        {"type": kind, "settings": settings}, sort_keys=True, ensure_ascii=False, default=repr
    )
    return {
        "name": str(metric.name),
        "type": kind,
        "settings": settings,
        "fingerprint": hashlib.sha256(text.encode()).hexdigest(),
    }
