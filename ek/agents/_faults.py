"""Faults injected on purpose into an agent's tools, and robustness with an interval.

A :class:`Fault` names one kind of tool failure, the tools it hits and how often:

========================  ==================================================================
kind                      what a faulted call does
========================  ==================================================================
``"error"``               raises :class:`ToolFault` (an error response; no result)
``"timeout"``             raises :class:`TimeoutError` after ``latency`` seconds (default 0)
``"latency"``             waits ``latency`` seconds, then returns the real result
``"truncate"``            returns the first half of the result (a str, a list, a mapping)
``"malformed"``           returns a string that is not the result's shape (broken JSON)
``"wrong_value"``         returns a schema-valid but wrong result: every number is changed,
                          every bool flipped, strings kept (same keys, same types)
========================  ==================================================================

:func:`wrap_tool` wraps any plain callable (sync or async); ``ek.adapters.inspect.faults``
wraps an Inspect AI tool. Each trial's faults are drawn from its own seeded stream (the trial
seed and the fault's name), so a re-run injects the same faults.

``run_suite(agent, tasks, faults=FaultPlan([...]))`` runs every task clean **and** under each
fault (the same trial seeds: a paired design). The agent receives its tools through its
context: ``context.tool("get_order", get_order)`` returns the tool as given on a clean trial
and wrapped under a faulted one. :func:`robustness` gives, per
fault, the success rate against clean with **Newcombe's hybrid score interval** on the
difference (:func:`ek.stats.newcombe_difference`; it treats the two samples as independent,
so with paired trials it is conservative). Instruction perturbations (a paraphraser) are a
user's function of the task: run the suite on the perturbed tasks; nothing built in needs a
model.

Example:
    >>> f = Fault("wrong_value", tools=["get_order"])
    >>> get = wrap_tool(lambda oid: {"id": oid, "total": 10.0, "paid": True}, f, "get_order", seed=1)
    >>> get("O1")
    {'id': 'O1', 'total': 11.0, 'paid': False}
    >>> Fault("error", rate=1.5)
    Traceback (most recent call last):
    ...
    ValueError: Fault.rate must be a probability in [0, 1], got 1.5
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import math
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ek.stats import Interval, newcombe_difference

if TYPE_CHECKING:
    from ._result import SuiteResult

__all__ = [
    "FAULT_KINDS",
    "Fault",
    "FaultPlan",
    "RobustnessRow",
    "ToolFault",
    "corrupt",
    "fault_stream",
    "robustness",
    "robustness_rows",
    "wrap_tool",
]

#: The fault kinds (see the module docstring).
FAULT_KINDS = ("error", "timeout", "latency", "truncate", "malformed", "wrong_value")


class ToolFault(RuntimeError):
    """An injected tool error (kind ``"error"``)."""


def _probability(owner: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{owner} must be a number in [0, 1], got {type(value).__name__}: {value!r:.100}"
        )
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise ValueError(f"{owner} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _latency(owner: str, value: Any) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{owner} must be a finite number >= 0, got {value!r}")


def _tool_names(owner: str, tools: Any) -> tuple[str, ...]:
    if isinstance(tools, str):
        raise TypeError(f"{owner} must be a list of tool names, not a str")
    names = tuple(tools)
    if not names or not all(isinstance(t, str) and t for t in names):
        raise ValueError(f"{owner} must be non-empty tool names, got {names!r}")
    return names


@dataclass(frozen=True)
class Fault:
    """One kind of injected tool failure.

    Attributes:
        kind: One of :data:`FAULT_KINDS`.
        tools: The tool names it hits (``None``: every tool wrapped).
        rate: The chance each call is faulted (in [0, 1]).
        latency: Seconds of delay (``"latency"``, ``"timeout"``; >= 0, finite).
        name: Its label in reports (default ``kind``, or ``kind:tool`` for one tool).
    """

    kind: str
    tools: Sequence[str] | None = None
    rate: float = 1.0
    latency: float = 0.0
    name: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"Fault.kind must be one of {list(FAULT_KINDS)}, got {self.kind!r}")
        _probability("Fault.rate", self.rate)
        _latency("Fault.latency", self.latency)
        if self.tools is not None:
            object.__setattr__(self, "tools", _tool_names("Fault.tools", self.tools))
        if self.name is None:
            label = (
                self.kind
                if self.tools is None or len(self.tools) != 1
                else f"{self.kind}:{self.tools[0]}"
            )
            object.__setattr__(self, "name", label)
        elif not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Fault.name must be a non-empty str, got {self.name!r}")

    def hits(self, tool: str) -> bool:
        """Does this fault apply to ``tool``?"""
        return self.tools is None or tool in self.tools

    def to_dict(self) -> dict[str, Any]:
        """What a store header records."""
        return {
            "kind": self.kind,
            "tools": None if self.tools is None else list(self.tools),
            "rate": self.rate,
            "latency": self.latency,
            "name": self.name,
        }


@dataclass(frozen=True)
class FaultPlan:
    """The faults a suite runs under, each in its own pass over every task.

    Example:
        >>> plan = FaultPlan([Fault("error", tools=["get_order"], rate=0.5), Fault("truncate")])
        >>> [f.name for f in plan.faults]
        ['error:get_order', 'truncate']
    """

    faults: Iterable[Fault]

    def __post_init__(self) -> None:
        if isinstance(self.faults, Fault):
            object.__setattr__(self, "faults", (self.faults,))
        fs = tuple(self.faults)
        if not fs:
            raise ValueError("FaultPlan needs at least one Fault, got none")
        for f in fs:
            if not isinstance(f, Fault):
                raise TypeError(f"FaultPlan.faults must be Faults, got {type(f).__name__}")
        names = [f.name for f in fs]
        dup = sorted({n for n in names if names.count(n) > 1})  # type: ignore[type-var]
        if dup:
            raise ValueError(f"fault names must be unique in a plan, got {dup} twice")
        object.__setattr__(self, "faults", fs)


def _wrong(x: Any) -> Any:
    if isinstance(x, bool):
        return not x
    if isinstance(x, int):
        return x + 1
    if isinstance(x, float):
        return x * 1.1 if x else 1.0
    if isinstance(x, Mapping):
        return {k: _wrong(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_wrong(v) for v in x)
    return x


def corrupt(kind: str, result: Any) -> Any:
    """The result a faulted call of kind ``"truncate"``, ``"malformed"`` or ``"wrong_value"``
    returns instead of ``result`` (any other kind: ``result`` unchanged).

    Example:
        >>> corrupt("truncate", [1, 2, 3, 4]), corrupt("truncate", "abcdef")
        ([1, 2], 'abc')
        >>> corrupt("malformed", {"a": 1})
        '{"a": 1, <malformed'
    """
    if kind == "truncate":
        if isinstance(result, (str, bytes, list, tuple)):
            return result[: len(result) // 2]
        if isinstance(result, Mapping):
            items = list(result.items())
            return dict(items[: len(items) // 2])
        return None
    if kind == "malformed":
        text = repr(result).replace("'", '"')
        return text[: max(1, len(text) - 1)] + ", <malformed"
    if kind == "wrong_value":
        return _wrong(result)
    return result


def _stream(seed: Any, fault: Fault, tool: str) -> random.Random:
    h = hashlib.sha256(f"{seed}\x1f{fault.name}\x1f{tool}".encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


def fault_stream(seed: Any, fault: Fault, tool: str) -> random.Random:
    """The seeded stream that decides which calls of ``tool`` are faulted in one trial."""
    return _stream(seed, fault, tool)


def wrap_tool(
    fn: Callable[..., Any],
    fault: Fault,
    tool: str | None = None,
    *,
    seed: Any = 0,
    rng: random.Random | None = None,
) -> Callable[..., Any]:
    """``fn`` under ``fault`` (sync stays sync, async stays async); ``tool`` (default
    ``fn.__name__``) decides whether the fault applies, ``seed`` its stream (or ``rng``: a
    stream shared by every wrapping of the tool in one trial, :func:`fault_stream`)."""
    if not callable(fn):
        raise TypeError(f"wrap_tool needs a callable tool, got {type(fn).__name__}")
    if not isinstance(fault, Fault):
        raise TypeError(f"fault must be a Fault, got {type(fault).__name__}")
    name = tool if tool is not None else str(getattr(fn, "__name__", "tool"))
    if not fault.hits(name):
        return fn
    rng = rng if rng is not None else _stream(seed, fault, name)

    def draw() -> bool:
        return rng.random() < fault.rate

    def before() -> None:
        if fault.kind == "error":
            raise ToolFault(f"injected fault: {name} failed (error response)")
        if fault.kind == "timeout":
            raise TimeoutError(f"injected fault: {name} timed out")

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def awrapped(*args: Any, **kwargs: Any) -> Any:
            if not draw():
                return await fn(*args, **kwargs)
            if fault.latency:
                await asyncio.sleep(fault.latency)
            before()
            return corrupt(fault.kind, await fn(*args, **kwargs))

        return awrapped

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not draw():
            return fn(*args, **kwargs)
        if fault.latency:
            time.sleep(fault.latency)
        before()
        return corrupt(fault.kind, fn(*args, **kwargs))

    return wrapped


@dataclass(frozen=True)
class RobustnessRow:
    """Success under one fault against clean: counts and Newcombe's difference interval."""

    fault: str
    n_clean: int
    c_clean: int
    n_fault: int
    c_fault: int
    difference: Interval

    @property
    def rate_clean(self) -> float:
        """Clean success rate."""
        return self.c_clean / self.n_clean if self.n_clean else math.nan

    @property
    def rate_fault(self) -> float:
        """Success rate under the fault."""
        return self.c_fault / self.n_fault if self.n_fault else math.nan

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "fault": self.fault,
            "clean": [self.c_clean, self.n_clean],
            "under_fault": [self.c_fault, self.n_fault],
            "difference": self.difference.to_dict(),
        }


def robustness(result: SuiteResult) -> tuple[RobustnessRow, ...]:
    """Per fault a suite result ran under (``faults=``): its success rate minus the clean one,
    with Newcombe's interval at the result's confidence (:func:`robustness_rows`); empty for a
    run without ``faults=``.

    Example:
        >>> from ek.agents.base import TaskSpec
        >>> from ek.agents.harness import run_suite
        >>> robustness(run_suite(lambda task: 1, [TaskSpec("a", gold=1)], k=2))
        ()
    """
    faulted = {name: r.counts for name, r in result.faults.items()}
    return robustness_rows(result.counts, faulted, result.confidence) if faulted else ()


def robustness_rows(
    clean: Mapping[str, tuple[int, int]],
    faulted: Mapping[str, Mapping[str, tuple[int, int]]],
    confidence: float = 0.95,
) -> tuple[RobustnessRow, ...]:
    """Per fault: success under it minus clean success, with Newcombe's interval
    (``newcombe_difference(c_fault, n_fault, c_clean, n_clean)``).

    Example:
        >>> rows = robustness_rows({"a": (10, 9)}, {"error": {"a": (10, 4)}})
        >>> r = rows[0]; r.fault, round(r.difference.point, 2), r.difference.high < 0
        ('error', -0.5, True)
    """
    nc, cc = sum(n for n, _ in clean.values()), sum(c for _, c in clean.values())
    rows = []
    for name, counts in faulted.items():
        nf, cf = sum(n for n, _ in counts.values()), sum(c for _, c in counts.values())
        iv = newcombe_difference(cf, nf, cc, nc, confidence)
        rows.append(RobustnessRow(str(name), nc, cc, nf, cf, iv))
    return tuple(rows)
