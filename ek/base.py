"""The core protocols: :class:`Score`, :class:`Metric`, :class:`Signal`, and :func:`is_episode`.

A :class:`Metric` scores one ``(prediction, gold)`` pair and aggregates a corpus of scores as a
**ratio of sums** (the sums travel in ``Score.detail``). A :class:`Signal` is reference-free: it
scores an output alone and declares how expensive it is (``cost_tier``; cheap signals run first).

ek's results are frozen dataclasses whose mappings are read-only views
(:class:`types.MappingProxyType`). A view does not pickle or deep-copy by itself, so this module
(which importing ``ek`` imports) registers a :mod:`copyreg` reducer for it, unless one is
registered already: a view pickles and deep-copies as a view of a copy of its mapping. That is
what makes ``pickle``, ``copy.deepcopy`` and ``dataclasses.asdict`` work on every :class:`Score`
and on every ek result that holds a read-only mapping (``Score.to_dict()`` gives plain,
JSON-ready dicts).

Example:
    >>> s = Score(0.5, {"tp": 1.0, "fp": 1.0, "fn": 1.0, "reason": "one of two right"})
    >>> s.value, s.reason, s.detail["tp"]
    (0.5, 'one of two right', 1.0)
    >>> import copy, dataclasses
    >>> dataclasses.asdict(s)["detail"]["tp"], copy.deepcopy(s) == s
    (1.0, True)
"""

from __future__ import annotations

import copyreg
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

__all__ = ["Metric", "Score", "Signal", "deferred_score", "is_episode"]


def _reduce_view(view: MappingProxyType[Any, Any]) -> tuple[Any, ...]:
    # A read-only view rebuilt over a plain copy of what it shows (deepcopy copies the copy).
    return (MappingProxyType, (dict(view),))


copyreg.dispatch_table.setdefault(MappingProxyType, _reduce_view)


def _freeze(detail: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if detail is None:
        return MappingProxyType({})
    if not isinstance(detail, Mapping):
        raise TypeError(f"Score.detail must be a mapping, got {type(detail).__name__}: {detail!r}")
    return MappingProxyType(dict(detail))


@dataclass(frozen=True)
class Score:
    """One scored item: a ``value`` and a machine-readable ``detail``.

    ``detail`` carries what :meth:`Metric.aggregate` needs (``tp``/``fp``/``fn``, ``dollars``,
    ``successes``, ...), ``higher_is_better``, a verdict ``passed`` (a bool) where the metric has
    one, and a human-readable ``reason``. It is read-only.

    Two Scores are equal when their values and details are, with NaN equal to NaN (an undefined
    value is the same result as another undefined value with the same detail), so a Score equals
    its copy, its deep copy and its unpickled self. ``dataclasses.asdict``, ``copy.deepcopy`` and
    ``pickle`` work on every Score (see the module docstring).

    Args:
        value: The item's score. NaN means "undefined here"; the reason says why.
        detail: The breakdown (copied into a read-only mapping).

    Example:
        >>> Score(1.0, {"passed": True}).passed
        True
        >>> Score(float("nan"), {"reason": "no gold"}).reason
        'no gold'
        >>> Score(float("nan"), {"reason": "no gold"}) == Score(float("nan"), {"reason": "no gold"})
        True
    """

    value: float
    detail: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)):
            raise TypeError(
                f"Score.value must be a float, got {type(self.value).__name__}: {self.value!r}"
            )
        object.__setattr__(self, "value", float(self.value))
        object.__setattr__(self, "detail", _freeze(self.detail))

    @property
    def reason(self) -> str:
        """The human-readable explanation (``""`` when the metric gave none)."""
        return str(self.detail.get("reason", ""))

    @property
    def passed(self) -> bool | None:
        """The metric's verdict, or ``None`` when it has none."""
        p = self.detail.get("passed")
        return None if p is None else bool(p)

    @property
    def is_nan(self) -> bool:
        """True when the value is undefined (NaN)."""
        return math.isnan(self.value)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict ``{"value": ..., "detail": {...}}``."""
        return {"value": self.value, "detail": dict(self.detail)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Score) or other.__class__ is not self.__class__:
            return NotImplemented
        return _same(self.value, other.value) and _same(self.detail, other.detail)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickles (and copies) through the constructor: the value and a plain copy of the detail.
        return (Score, (self.value, dict(self.detail)))

    def __getattr__(self, name: str) -> Any:
        # Reached only for an attribute the instance lacks: the detail of a deferred_score,
        # built on first read. Two threads racing here build it twice; the first one is kept.
        d = self.__dict__
        build = d.get("_build")
        if name != "detail" or build is None:
            if name == "detail" and "detail" in d:  # (built meanwhile by another thread)
                return d["detail"]
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        detail = d.setdefault("detail", MappingProxyType(build[0](*build[1])))
        d.pop("_build", None)
        return detail


def _same(a: Any, b: Any) -> bool:
    """``a == b``, except that NaN equals NaN, at any depth of mappings, lists and tuples."""
    if a is b or a == b:
        return True
    if isinstance(a, float) and isinstance(b, float):
        return math.isnan(a) and math.isnan(b)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return len(a) == len(b) and all(k in b and _same(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple)) and type(a) is type(b):
        return len(a) == len(b) and all(map(_same, a, b))
    return False


_new = object.__new__


def deferred_score(
    value: float, build: Callable[..., Mapping[str, Any]], args: tuple[Any, ...] = ()
) -> Score:
    """A :class:`Score` whose detail is ``build(*args)``, built the first time it is read.

    For metrics whose value is cheap but whose explanation is not: scoring a corpus reads the
    value of every score and the detail of few. ``build`` must return a fresh mapping (it is
    wrapped read-only, not copied) and be a pure function of ``args``: when it runs must not
    matter. The Score is otherwise an ordinary one (equality, ``repr``, pickling read the
    detail and so build it).

    Example:
        >>> s = deferred_score(0.5, dict, ((("reason", "half"),),))
        >>> s.value, s.reason, s == Score(0.5, {"reason": "half"})
        (0.5, 'half', True)
    """
    if type(value) is not float:
        return Score(value, build(*args))
    s = _new(Score)
    d = s.__dict__
    d["value"] = value
    d["_build"] = (build, args)
    return s


@runtime_checkable
class Metric(Protocol):
    """A reference-based metric: ``__call__(pred, gold) -> Score`` plus a corpus ``aggregate``.

    ``aggregate`` must be a ratio of sums read from each score's ``detail``, never a mean of
    per-item ratios.
    """

    name: str
    higher_is_better: bool

    def __call__(self, pred: Any, gold: Any) -> Score: ...

    def aggregate(self, scores: Sequence[Score]) -> float: ...


@runtime_checkable
class Signal(Protocol):
    """A reference-free quality signal: ``__call__(output) -> float``.

    ``cost_tier`` orders signals by expense (1 cheapest; an LLM judge is 5); cheap ones run first.
    A raw signal value is not a probability: calibrate it before gating on it.
    """

    name: str
    cost_tier: int

    def __call__(self, output: Any) -> float: ...


def is_episode(obj: Any) -> bool:
    """Duck-typed test for an agent episode (``task_id``, ``trajectory`` and ``output``).

    The core never imports ``ek.agents``; any object with these attributes qualifies.

    Example:
        >>> class E:
        ...     task_id, trajectory, output = "t", (), None
        >>> is_episode(E()), is_episode("text")
        (True, False)
    """
    return all(hasattr(obj, a) for a in ("task_id", "trajectory", "output"))
