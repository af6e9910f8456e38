"""Result names for Ragas: one per ek metric configuration, and no two alike in one evaluation.

Ragas keys every result by the metric's ``name``; two metrics with the same name share one
column and the last one silently wins (ragas 0.4.3, ``aevaluate``). So:

- :func:`default_name` is readable and encodes the settings a reader can read:
  ``"ek_<metric name>"`` for the class defaults, else the changed constructor arguments that
  are short literals or named callables, in Ragas' own style (``topic_adherence(mode=f1)``):
  ``"ek_trajectory(scheme=exact)"``, ``"ek_task_success(check=final_state)"``. Other settings
  (a grammar, a price, a long text) are left out of the name: ``ToolCallMetric(grammar=g)`` is
  ``"ek_tool_calls"``, never a repr with a digest. Two metrics whose names then collide in one
  evaluation are refused by :func:`check_unique_names`, which asks for ``name=``.
- :func:`check_unique_names` refuses a metric list in which a name occurs twice.

Example:
    >>> from ek.agents.trajectory import TrajectoryMetric
    >>> default_name(TrajectoryMetric()), default_name(TrajectoryMetric("exact"))
    ('ek_trajectory', 'ek_trajectory(scheme=exact)')
    >>> check_unique_names(["ek_trajectory", "ek_trajectory(scheme=exact)"])
    >>> check_unique_names(["ek_trajectory", "tool_call_f1", "ek_trajectory"])
    Traceback (most recent call last):
    ...
    ValueError: metric names must be unique in one Ragas evaluation (it keeps one result column per name and the last one silently wins); 'ek_trajectory' is given by metrics #0 and #2: pass distinct name= values
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from typing import Any

from ek._validate import short_repr

__all__ = ["check_unique_names", "default_name"]

_WORD = re.compile(r"[A-Za-z0-9_.\-]{1,40}")
_NOTHING = object()


def _show(value: Any) -> str | None:
    """A short, readable rendering of one constructor argument; ``None`` when it has none (a
    grammar, a price, a long text: left out of the name)."""
    if isinstance(value, str):
        return value if _WORD.fullmatch(value) else None
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if callable(value) and _WORD.fullmatch(str(getattr(value, "__qualname__", ""))):
        return str(value.__qualname__)
    return None


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # an argument whose == is not a plain bool (arrays, ...)
        return False


def _changed_arguments(metric: Any) -> list[str] | None:
    """``["name=value", ...]`` for the constructor arguments that differ from the defaults;
    ``None`` when the configuration cannot be read that way."""
    cls = type(metric)
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return None
    try:
        reference: Any = cls()
    except Exception:  # a class with required arguments: compare with the signature defaults
        reference = None
    out: list[str] = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        value = getattr(metric, p.name, _NOTHING)
        if value is _NOTHING:
            return None
        default = p.default if reference is None else getattr(reference, p.name, p.default)
        shown = _show(value)
        if shown is not None and (default is p.empty or not _same(value, default)):
            out.append(f"{p.name}={shown}")
    return out


def default_name(metric: Any) -> str:
    """The default Ragas result name of an ek metric: its name plus its non-default arguments.

    Args:
        metric: An ek metric instance.

    Returns:
        ``"ek_<name>"`` for the class defaults (or when no changed setting is readable),
        ``"ek_<name>(arg=value, ...)"`` otherwise (see the module docstring).

    Example:
        >>> from ek.agents.base import ToolSpec
        >>> from ek.agents.metrics import TaskSuccessMetric
        >>> from ek.agents.toolcalls import ToolCallMetric
        >>> default_name(TaskSuccessMetric()), default_name(TaskSuccessMetric("final_state"))
        ('ek_task_success', 'ek_task_success(check=final_state)')
        >>> default_name(ToolCallMetric(grammar=[ToolSpec("refund", destructive=True)]))
        'ek_tool_calls'
    """
    base = f"ek_{getattr(metric, 'name', type(metric).__name__)}"
    changed = _changed_arguments(metric) or []
    return f"{base}({', '.join(changed)})" if changed else base


def check_unique_names(names: Sequence[str]) -> None:
    """Raise if a result name occurs twice in one evaluation's metric list.

    Args:
        names: The result keys of the evaluation's metrics, in order.

    Raises:
        ValueError: a name occurs more than once (naming it and the metrics' positions).
    """
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise ValueError(
                "metric names must be unique in one Ragas evaluation (it keeps one result column "
                f"per name and the last one silently wins); {short_repr(name)} is given by metrics "
                f"#{seen[name]} and #{i}: pass distinct name= values"
            )
        seen[name] = i
