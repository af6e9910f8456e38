"""Framework-free plumbing shared by the host adapters (DeepEval, Ragas).

Resolving the ek metric an adapter wraps (:func:`resolve_metric`), naming one configuration
uniquely (:func:`metric_label`), running it so that a host never retries on a stray
``TypeError`` (:func:`run_metric`), the pass/fail rule for both directions (:func:`passes`),
saying when a metric fell back to unit weights (:func:`unit_weights_note`), and JSON-safe
details (:func:`json_safe`, :func:`detail_json`). No third-party import.

Example:
    >>> from ek.agents.base import Episode
    >>> m = resolve_metric("task_success", check="output")
    >>> s = run_metric(m, Episode("t", output="4"), "4")
    >>> s.value, passes(s, 0.5, higher_is_better=True), metric_label(m)
    (1.0, True, "TaskSuccessMetric(check='output')")
    >>> detail_json(Score(1.0, {"dollars": float("inf"), "passed": True}))
    '{"dollars": "Infinity", "passed": true}'
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import math
import re
from typing import Any

from ek.base import Score
from ek.jsonio import dumps, to_json_safe
from ek.registry import resolve

__all__ = [
    "EkAdapterError",
    "detail_json",
    "json_safe",
    "load_metric_registrations",
    "metric_label",
    "passes",
    "resolve_metric",
    "run_metric",
    "unit_weights_note",
]

# Modules whose import registers agent metrics by name (absent ones are skipped).
_METRIC_MODULES = ("ek.agents", "ek.agents.toolcalls", "ek.agents.trajectory")


class EkAdapterError(RuntimeError):
    """An ek metric failed inside a host framework (wraps the original error).

    A ``RuntimeError`` on purpose: DeepEval calls ``measure`` a second time when it raises
    ``TypeError``, which would run (and fail) the metric twice.
    """


def load_metric_registrations() -> None:
    """Import the ek modules that register agent metrics by name (absent ones are skipped)."""
    for mod in _METRIC_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:  # a metric module not shipped in this build
            if e.name != mod:
                raise


def resolve_metric(metric: Any, **options: Any) -> Any:
    """The ek metric instance an adapter wraps.

    Args:
        metric: An ek metric instance (``__call__(pred, gold) -> Score``), a metric class, or a
            registered name (``"task_success"``, ``"cost_per_success"``, ``"tool_calls"``, ...).
        **options: Constructor arguments (``check=``, ``grammar=``, ``price=``...) for a class
            or a name; ``None`` values are dropped. Giving any with an instance is an error.

    Raises:
        ValueError: options given with an instance.
        TypeError: ``metric`` is not callable, or its class does not take an option.
    """
    opts = {k: v for k, v in options.items() if v is not None}
    if isinstance(metric, str):
        load_metric_registrations()
        metric = resolve("metrics", metric)
        if opts and not isinstance(metric, type):
            metric = type(metric)  # a registered default instance: build one with the options
    if isinstance(metric, type):
        params = inspect.signature(metric).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        bad = sorted(k for k in opts if k not in params and not takes_any)
        if bad:
            raise TypeError(f"{metric.__name__} does not take {bad}; it takes {sorted(params)}")
        metric = metric(**opts)
    elif opts:
        raise ValueError(
            f"{sorted(opts)} configure a metric built from a name or class; got an instance "
            f"({type(metric).__name__}): pass them to its constructor instead"
        )
    if not callable(metric):
        raise TypeError(
            "metric must be an ek metric (a (episode, gold) -> Score callable), a metric class or "
            f"a registered name, got {type(metric).__name__}: {metric!r:.200}"
        )
    return metric


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def metric_label(metric: Any, max_len: int = 80) -> str:
    """A deterministic label for one metric configuration (its ``repr`` without addresses).

    A default ``<... object>`` repr is replaced by the class name and the instance's attributes.
    Longer than ``max_len``: ``"<name>#<8 hex digits of the label's SHA-1>"``.
    """
    label = _ADDRESS.sub("", repr(metric))
    name = getattr(metric, "name", type(metric).__name__)
    if label.startswith("<"):  # the default object repr says nothing about the configuration
        state = sorted((k, v) for k, v in getattr(metric, "__dict__", {}).items())
        label = f"{type(metric).__name__}{_ADDRESS.sub('', repr(state))}"
    if len(label) <= max_len:
        return label
    return f"{name}#{hashlib.sha1(label.encode('utf-8')).hexdigest()[:8]}"


def run_metric(metric: Any, episode: Any, gold: Any) -> Score:
    """``metric(episode, gold)``, checked to return a :class:`~ek.base.Score`.

    Raises:
        EkAdapterError: the metric raised (``TypeError`` included) or returned no ``Score``.
    """
    try:
        score = metric(episode, gold)
    except Exception as e:
        raise EkAdapterError(
            f"{getattr(metric, 'name', type(metric).__name__)} failed on task "
            f"{getattr(episode, 'task_id', '?')!r}: {type(e).__name__}: {e}"
        ) from e
    if not isinstance(score, Score):
        raise EkAdapterError(
            f"{type(metric).__name__} must return an ek Score, got {type(score).__name__}"
        )
    return score


_NO_GRAMMAR = object()


def unit_weights_note(metric: Any, gold: Any, where: str) -> str | None:
    """Why ``metric`` scored with unit weights, or ``None`` when it did not.

    A tool-call or trajectory metric (one with a ``grammar`` attribute) built without a grammar
    takes the task's tools from a :class:`~ek.agents.base.TaskSpec` gold; when the gold brings
    none either, every tool weighs 1 and every argument 1, so a missed destructive call costs
    what a missed look-up does. The note says so and where the tools go (``where``).

    Example:
        >>> from ek.agents.base import TaskSpec, ToolSpec
        >>> from ek.agents.toolcalls import ToolCallMetric
        >>> unit_weights_note(ToolCallMetric(), TaskSpec("t"), "metadata['tools']")[:43]
        'unit weights: the task gives no tools (meta'
        >>> unit_weights_note(ToolCallMetric(), TaskSpec("t", tools=[ToolSpec("f")]), "x") is None
        True
    """
    if getattr(metric, "grammar", _NO_GRAMMAR) is not None:
        return None  # not weighted by tools, or weighted by its own grammar
    if getattr(gold, "tools", None):
        return None
    return (
        f"unit weights: the task gives no tools ({where}: the task's ToolSpec dicts), so "
        "every tool and every argument weighs 1"
    )


def passes(score: Score, threshold: float, *, higher_is_better: bool) -> bool:
    """The host's success flag for ``score`` against ``threshold``.

    Higher is better: ``value >= threshold``. Lower is better (Cost-of-Pass): ``value <=
    threshold`` **and** the task did not fail (``detail["success"]`` / ``detail["passed"]`` not
    ``False``): a failed run has an infinite cost per success, however cheap it was. A NaN
    value never passes.
    """
    v = score.value
    if math.isnan(v):
        return False
    if higher_is_better:
        return v >= threshold
    if score.detail.get("success") is False or score.detail.get("passed") is False:
        return False
    return v <= threshold


def json_safe(obj: Any) -> Any:
    """``obj`` as strict JSON data: ek's one codec, :func:`ek.jsonio.to_json_safe` (non-finite
    floats become ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"``, tuples and sets lists, other
    objects their ``repr``; :func:`ek.jsonio.from_json_safe` reads it back)."""
    return to_json_safe(obj)


def detail_json(score: Score) -> str:
    """The score's ``detail`` as a strict JSON string (see :func:`json_safe`)."""
    return dumps(dict(score.detail))
