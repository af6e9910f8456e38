"""The core protocols: :class:`Score`, :class:`Metric`, :class:`Signal`, and :func:`is_episode`.

A :class:`Metric` scores one ``(prediction, gold)`` pair and aggregates a corpus of scores as a
**ratio of sums** (the sums travel in ``Score.detail``). A :class:`Signal` is reference-free: it
scores an output alone and declares how expensive it is (``cost_tier``; cheap signals run first).

A :class:`Score` is a plain frozen dataclass; its ``detail`` is a :class:`ReadOnlyDict` (a
``dict`` that refuses changes), so ``pickle``, ``copy.deepcopy`` and ``dataclasses.asdict`` work
on every Score with no help from outside the class.

Example:
    >>> s = Score(0.5, {"tp": 1.0, "fp": 1.0, "fn": 1.0, "reason": "one of two right"})
    >>> s.value, s.reason, s.detail["tp"]
    (0.5, 'one of two right', 1.0)
    >>> import copy, dataclasses
    >>> dataclasses.asdict(s)["detail"]["tp"], copy.deepcopy(s) == s
    (1.0, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol, TypeVar, runtime_checkable

from ek._validate import short_repr, to_float

__all__ = ["Metric", "ReadOnlyDict", "Score", "Signal", "check_scores", "is_episode"]


_K = TypeVar("_K")
_V = TypeVar("_V")


class ReadOnlyDict(dict[_K, _V]):
    """A ``dict`` whose contents cannot be changed after it is built (a Score's ``detail``).

    Reading works as on any dict (it is one: ``json.dumps`` and ``isinstance(d, dict)`` accept
    it); every method that would change it raises ``TypeError``. It copies, deep-copies, pickles
    and goes through ``dataclasses.asdict`` as itself; ``d.copy()``, ``dict(d)`` and ``d | other``
    give plain, mutable dicts.

    Example:
        >>> d = ReadOnlyDict({"tp": 1.0})
        >>> d["tp"], d.copy()
        (1.0, {'tp': 1.0})
        >>> d["tp"] = 2.0
        Traceback (most recent call last):
        ...
        TypeError: ReadOnlyDict is read-only; copy it (dict(d)) to change it, got d['tp'] = 2.0
    """

    __slots__ = ()

    def __setitem__(self, key: _K, value: _V) -> NoReturn:
        raise TypeError(
            f"{type(self).__name__} is read-only; copy it (dict(d)) to change it, "
            f"got d[{short_repr(key)}] = {short_repr(value, 80)}"
        )

    def __delitem__(self, key: _K) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only, got del d[{short_repr(key)}]")

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only; copy it (dict(d)) to change it")

    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from a plain dict of its items (the default would set the items one by one).
        return (type(self), (dict(self),))


def _read_only(detail: Mapping[str, Any] | None) -> ReadOnlyDict:
    if type(detail) is dict:
        return ReadOnlyDict(detail)
    if detail is None:
        return ReadOnlyDict()
    if not isinstance(detail, Mapping):
        raise TypeError(
            f"Score.detail must be a mapping, got {type(detail).__name__}: {short_repr(detail)}"
        )
    return ReadOnlyDict(detail)


@dataclass(frozen=True)
class Score:
    """One scored item: a ``value`` and a machine-readable ``detail``.

    ``detail`` carries what :meth:`Metric.aggregate` needs (``tp``/``fp``/``fn``, ``dollars``,
    ``successes``, ...), ``higher_is_better``, a verdict ``passed`` (a bool) where the metric has
    one, and a human-readable ``reason``. It is read-only.

    Two Scores are equal when their values and details are, with NaN equal to NaN (an undefined
    value is the same result as another undefined value with the same detail), so a Score equals
    its copy, its deep copy and its unpickled self. ``dataclasses.asdict``, ``copy.deepcopy`` and
    ``pickle`` work on every Score.

    Args:
        value: The item's score. NaN means "undefined here"; the reason says why.
        detail: The breakdown (copied into a :class:`ReadOnlyDict`; one given as a
            ``ReadOnlyDict`` is kept as it is).

    Example:
        >>> Score(1.0, {"passed": True}).passed
        True
        >>> Score(float("nan"), {"reason": "no gold"}).reason
        'no gold'
        >>> Score(float("nan"), {"reason": "no gold"}) == Score(float("nan"), {"reason": "no gold"})
        True
    """

    value: float
    detail: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def __post_init__(self) -> None:
        value = self.value
        if type(value) is not float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(
                    f"Score.value must be a float, got {type(value).__name__}: {short_repr(value)}"
                )
            object.__setattr__(self, "value", to_float("Score.value", value))
        if type(self.detail) is not ReadOnlyDict:
            object.__setattr__(self, "detail", _read_only(self.detail))

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


def check_scores(scores: Any, owner: str, keys: tuple[str, ...] = ()) -> Sequence[Score]:
    """``scores`` if it is a sequence of :class:`Score` whose details hold ``keys``, else an error.

    The one check behind every ``Metric.aggregate``: a TypeError for a non-sequence or an item
    that is not a Score, a ValueError naming the first Score that lacks a detail key the
    aggregate sums (a Score made by another metric).

    Args:
        scores: What was handed to ``aggregate``.
        owner: The metric's name, for the message (``"ToolCallMetric"``).
        keys: The detail keys each Score must carry.

    Returns:
        ``scores`` itself.

    Example:
        >>> check_scores([Score(1.0, {"tp": 1.0})], "M", ("tp",))[0].value
        1.0
        >>> check_scores(["x"], "M")
        Traceback (most recent call last):
        ...
        TypeError: M.aggregate expects Scores, item 0 is str
        >>> check_scores([Score(1.0)], "M", ("tp",))
        Traceback (most recent call last):
        ...
        ValueError: M.aggregate: score 0 has no detail 'tp' (a Score of another metric?)
    """
    if isinstance(scores, (str, bytes)) or not isinstance(scores, Sequence):
        raise TypeError(
            f"{owner}.aggregate expects a sequence of Scores, got {type(scores).__name__}"
        )
    for i, s in enumerate(scores):
        if not isinstance(s, Score):
            raise TypeError(f"{owner}.aggregate expects Scores, item {i} is {type(s).__name__}")
        for k in keys:
            if k not in s.detail:
                raise ValueError(
                    f"{owner}.aggregate: score {i} has no detail {k!r} (a Score of another metric?)"
                )
    return scores


@runtime_checkable
class Metric(Protocol):
    """A reference-based metric: ``__call__(pred, gold) -> Score`` plus a corpus ``aggregate``.

    ``aggregate`` must be a ratio of sums read from each score's ``detail``, never a mean of
    per-item ratios. A metric declares the detail fields it sums, its sufficient statistics,
    as a class attribute ``sums`` (e.g. ``("tp", "fp", "fn")``; and ``sum_defaults``, a mapping
    ``field -> value``, for a field its aggregate reads with a default), as torchmetrics'
    ``add_state(..., dist_reduce_fx="sum")`` does: a run's tally keeps those sums per task and
    merges by adding them (``ek.agents._run.sums``). A metric without the declaration is kept whole
    (every Score), which is correct and slower.
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
