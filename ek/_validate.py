"""Small validators shared by the core and ``ek.agents`` (errors say what was expected and given)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Mapping
from typing import Any, TypeGuard

__all__ = [
    "MAX_REPR",
    "MAX_TRIALS",
    "as_verdict",
    "check_keys",
    "check_mapping",
    "count",
    "finite",
    "nonempty_str",
    "opt_str",
    "plain_json",
    "short_repr",
    "thaw",
    "to_float",
    "trial_count",
]

MAX_REPR = 200
"""The default length of a value quoted in an error message (:func:`short_repr`)."""

_INT_BITS = 4096  # ~1,233 digits: well under the 4,300-digit limit of int -> str
_MAX_DEPTH = 200  # the deepest nesting plain_json and thaw accept (the episode reader's limit)
_DEPTH = 20  # containers deeper than this are shown as "..."


def short_repr(value: Any, limit: int = MAX_REPR) -> str:
    """``repr(value)`` cut to ``limit`` characters, built without ever reprs of enormous values.

    ``repr(value)[:limit]`` would first build the whole ``repr``: megabytes for a 10 MB string,
    a ``ValueError`` for an int over 4,300 digits, a ``RecursionError`` for a list nested
    100,000 deep. This reads only as much of ``value`` as the first ``limit`` characters need:
    strings are sliced before ``repr``, a huge int is described by its size, builtin containers
    are written element by element until the budget is spent (at most 20 levels deep), and any
    other object's ``repr`` that raises is replaced by its type name. For an ordinary value the
    result is exactly ``repr(value)[:limit]``.

    Args:
        value: Anything (user input, model output).
        limit: The most characters returned (>= 1).

    Returns:
        A string of at most ``limit`` characters.

    Example:
        >>> short_repr("abc"), short_repr([1, "x", None])
        ("'abc'", "[1, 'x', None]")
        >>> short_repr("x" * 10_000_000, 8)
        "'xxxxxxx"
        >>> short_repr(10**5000)
        'an int of 16610 bits'
        >>> deep = []
        >>> for _ in range(100_000):
        ...     deep = [deep]
        >>> short_repr(deep, 30)
        '[[[[[[[[[[[[[[[[[[[[[...]]]]]]'
    """
    kind = type(value)
    if limit > 0 and (
        (kind is str and len(value) <= limit)
        or kind is float
        or kind is bool
        or value is None
        or (kind is int and value.bit_length() <= _INT_BITS)
    ):
        return repr(value)[:limit]  # a small scalar (the common case): its repr is cheap
    out: list[str] = []
    _emit(value, out, limit, 0)
    return "".join(out)[:limit]


def _emit(value: Any, out: list[str], budget: int, depth: int) -> int:
    """Append pieces of ``repr(value)`` to ``out``; return the budget left (<= 0: stop)."""
    if budget <= 0:
        return budget
    if depth > _DEPTH:
        return _put("...", out, budget)
    kind = type(value)
    if kind is str or kind is bytes:
        return _put(repr(value[: budget + 2]), out, budget)
    if kind is int and value.bit_length() > _INT_BITS:
        return _put(f"an int of {value.bit_length()} bits", out, budget)
    if kind in (list, tuple, set, frozenset, dict):
        return _emit_container(value, out, budget, depth)
    return _put(_safe_repr(value, budget), out, budget)


_BRACKETS: dict[type, tuple[str, str]] = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    set: ("{", "}"),
    dict: ("{", "}"),
}


def _emit_container(value: Any, out: list[str], budget: int, depth: int) -> int:
    kind = type(value)
    if not value and kind in (set, frozenset):
        return _put(f"{kind.__name__}()", out, budget)
    if kind is frozenset:
        budget = _put("frozenset(", out, budget)
    opening, closing = _BRACKETS.get(kind, ("{", "}"))
    budget = _put(opening, out, budget)
    items = value.items() if kind is dict else value
    for i, item in enumerate(items):
        if budget <= 0:
            return budget
        if i:
            budget = _put(", ", out, budget)
        if kind is dict:
            budget = _emit(item[0], out, budget, depth + 1)
            budget = _put(": ", out, budget)
            item = item[1]
        budget = _emit(item, out, budget, depth + 1)
    if kind is tuple and len(value) == 1:
        budget = _put(",", out, budget)
    budget = _put(closing, out, budget)
    return _put(")", out, budget) if kind is frozenset else budget


def _put(text: str, out: list[str], budget: int) -> int:
    out.append(text[: max(budget, 0)])
    return budget - len(text)


def _safe_repr(value: Any, budget: int) -> str:
    try:
        text = repr(value)
    except Exception:  # an object whose repr raises (or recurses) is named by its type
        return f"<{type(value).__name__} object>"
    return text[: max(budget, 0)] if isinstance(text, str) else f"<{type(value).__name__}>"


def check_keys(
    owner: str, data: Any, allowed: set[str] | frozenset[str], required: tuple[str, ...] = ()
) -> None:
    """Raise unless ``data`` is a mapping with only ``allowed`` keys and every ``required`` one."""
    if not isinstance(data, Mapping):
        raise TypeError(
            f"{owner}.from_dict expects a mapping, got {type(data).__name__}: {short_repr(data)}"
        )
    unknown = sorted((k for k in data if k not in allowed), key=str)
    if unknown:
        raise ValueError(
            f"{owner}: unknown field(s) {short_repr(unknown)}; expected only {sorted(allowed)}"
        )
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{owner}: missing required field(s) {short_repr(missing)}")


def check_mapping(owner: str, value: Any) -> dict[str, Any]:
    """A shallow ``dict`` copy of a str-keyed mapping, or a TypeError naming ``owner``."""
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{owner} must be a mapping, got {type(value).__name__}: {short_repr(value)}"
        )
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise TypeError(f"{owner} keys must be str, got {short_repr(bad[:3])}")
    return dict(value)


def count(owner: str, value: Any) -> int:
    """A non-negative int (an integral float is accepted), else an error naming ``owner``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{owner} must be an int >= 0, got {type(value).__name__}: {short_repr(value)}"
        )
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ValueError(f"{owner} must be an int >= 0, got {short_repr(value)}")
        value = int(value)
    if value < 0:
        raise ValueError(f"{owner} must be an int >= 0, got {short_repr(value)}")
    return int(value)


def is_number(value: Any) -> TypeGuard[int | float]:
    """``True`` for an int or a float, ``False`` for a bool (a bool is not a number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number(owner: str, value: Any) -> float:
    """Any int or float (NaN and infinities included) as a float, else a TypeError."""
    if not is_number(value):
        raise TypeError(
            f"{owner} must be a number, got {type(value).__name__}: {short_repr(value, 100)}"
        )
    return float(value)


def positive_int(
    owner: str, value: Any, *, minimum: int = 1, error: type[Exception] = ValueError
) -> int:
    """An int >= ``minimum`` (a bool is not one), else ``error`` saying what was given.

    The message is ``"<owner> must be an int >= <minimum>, got <value>"``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise error(f"{owner} must be an int >= {minimum}, got {short_repr(value)}")
    return value


MAX_TRIALS = 10_000
"""The most trials of one task or test: ``run_suite``'s ``k``, the pytest plugin's
``@pytest.mark.ek(trials=...)`` and ``--ek-trials``. Checked before any work: every trial is
kept (in memory, in the store, as a pytest item), so a mistyped ``k=2**63`` would otherwise
run until memory runs out. Far above what any reliability estimate needs (pass^k is read at
k of 1 to a few dozen; a success rate's interval shrinks as 1/sqrt(n))."""


def trial_count(owner: str, value: Any) -> int:
    """A number of trials: an int in ``[1, MAX_TRIALS]``, else an error naming ``owner``.

    Example:
        >>> trial_count("k", 5)
        5
        >>> trial_count("k", 2**63)
        Traceback (most recent call last):
        ...
        ValueError: k must be at most 10000 (ek's limit of trials per task), got 9223372036854775808
    """
    positive_int(owner, value)
    if value > MAX_TRIALS:
        raise ValueError(
            f"{owner} must be at most {MAX_TRIALS} (ek's limit of trials per task), "
            f"got {short_repr(value)}"
        )
    return int(value)


def as_verdict(owner: str, value: Any, *, allow_none: bool = False) -> bool | None:
    """A success verdict: THE rule every entry point applies (a checker's result in
    ``run_suite`` and ``TaskSuccessMetric``, a store record's ``success``, a ``success=``
    callable of a host adapter).

    A verdict is a ``bool``; also accepted: a rich verdict, that is an object with a bool
    ``passed`` attribute or of a class of its own that defines ``__bool__``
    (:class:`~ek.agents.verifier.HiddenTestVerdict` is both), and a numpy bool scalar
    (``(a == b).all()``). Anything else is a ``TypeError`` naming what was given, never read by
    its truthiness: a string (``"false"``, ``"0"``), a number (``0.0``, NaN, ``1``) or a
    container. ``None`` (no verdict: an unscored sample) only where ``allow_none``.

    Example:
        >>> as_verdict("check", True), as_verdict("success", None, allow_none=True)
        (True, None)
        >>> as_verdict("check", "false")
        Traceback (most recent call last):
        ...
        TypeError: check: a verdict must be a bool, got str: 'false'
    """
    if isinstance(value, bool):
        return value
    if value is None and allow_none:
        return None
    dtype = getattr(value, "dtype", None)
    if dtype is not None:  # numpy: a bool scalar is a verdict, a float (NaN) or an array not
        if getattr(dtype, "kind", None) == "b" and getattr(value, "shape", None) == ():
            return bool(value)
    elif value is not None and not isinstance(value, (str, bytes, numbers.Number, Collection)):
        passed = getattr(value, "passed", None)
        if isinstance(passed, bool):
            return passed
        if callable(getattr(type(value), "__bool__", None)):  # a class's own verdict
            return bool(value)
    expected = "a bool (or None: no verdict)" if allow_none else "a bool"
    raise TypeError(
        f"{owner}: a verdict must be {expected}, got {type(value).__name__}: "
        f"{short_repr(value, 100)}"
    )


def positive_number(owner: str, value: Any, message: str | None = None) -> float:
    """A number > 0 (a bool is not one; NaN is not > 0), else a ValueError.

    ``message`` replaces the default ``"<owner> must be a number > 0, got <value>"`` (it is
    formatted with ``value``).
    """
    try:
        v = float(value) if is_number(value) else math.nan
    except OverflowError:  # an int past the float range (10**400)
        v = math.nan
    if not v > 0:
        text = message or "{owner} must be a number > 0, got {value!r}"
        raise ValueError(text.format(owner=owner, value=_Shown(value)))
    return v


class _Shown:
    """A value in a message template: its ``repr`` (and ``str``) is :func:`short_repr`."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return short_repr(self.value)

    __str__ = __repr__


def to_float(owner: str, value: int | float) -> float:
    """``float(value)`` for a number; an int too large for a float is a ValueError, not an
    ``OverflowError`` (so a caller's contract stays ValueError / TypeError).

    Example:
        >>> to_float("n", 3)
        3.0
        >>> to_float("n", 10**400)
        Traceback (most recent call last):
        ...
        ValueError: n must fit in a float, got an int of 1329 bits
    """
    try:
        return float(value)
    except OverflowError:
        bits = value.bit_length() if isinstance(value, int) else "?"
        raise ValueError(f"{owner} must fit in a float, got an int of {bits} bits") from None


def finite(owner: str, value: Any, *, minimum: float | None = None) -> float:
    """A finite float (optionally >= ``minimum``), else an error naming ``owner``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{owner} must be a number, got {type(value).__name__}: {short_repr(value)}"
        )
    try:
        v = float(value)
    except OverflowError:  # an int too large for a float is not finite as a float
        bits = value.bit_length() if isinstance(value, int) else "?"
        raise ValueError(f"{owner} must be finite, got an int of {bits} bits") from None
    if not math.isfinite(v):
        raise ValueError(f"{owner} must be finite, got {short_repr(value)}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{owner} must be >= {minimum}, got {short_repr(value)}")
    return v


def nonempty_str(owner: str, value: Any) -> str:
    """A non-empty str, else a TypeError (not a str) or ValueError (empty) naming ``owner``."""
    if not isinstance(value, str) or not value:
        raise (TypeError if not isinstance(value, str) else ValueError)(
            f"{owner} must be a non-empty str, got {short_repr(value)}"
        )
    return value


def opt_str(owner: str, value: Any) -> str | None:
    """``None`` or a str, else a TypeError naming ``owner``."""
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"{owner} must be a str or None, got {type(value).__name__}: {short_repr(value)}"
        )
    return value


def plain_json(owner: str, value: Any) -> None:
    """Raise unless ``value`` is JSON-representable (str keys, finite numbers, no cycles).

    The error names where inside ``value`` the first part that is not JSON data stands
    (``owner['key'][0]``); that place is spelled only when there is one.

    Example:
        >>> plain_json("Episode.metadata", {"a": [1, 2.5, "x", None]})
        >>> plain_json("Episode.metadata", {"a": [1, float("nan")]})
        Traceback (most recent call last):
        ...
        ValueError: Episode.metadata['a'][1] must not contain NaN or infinity, got nan
    """
    found = _not_json(value, 0)
    if found is not None:
        where, error, what = found
        raise error(f"{owner}{where} {what}")


def _not_json(value: Any, depth: int) -> tuple[str, type[Exception], str] | None:
    """``(where, exception type, what is wrong)`` of the first part of ``value`` that is not
    JSON data, or ``None``; ``where`` is built on the way back up, from the part found."""
    if depth > _MAX_DEPTH:
        return "", ValueError, "is nested too deeply (or cyclic)"
    if value is None or isinstance(value, (str, bool)):
        return None
    if isinstance(value, int):
        if value.bit_length() > _INT_BITS:  # json cannot print it (past 4,300 digits)
            return "", ValueError, f"holds an int of {value.bit_length()} bits: too long"
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return "", ValueError, f"must not contain NaN or infinity, got {short_repr(value)}"
        return None
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                return "", TypeError, f"keys must be str, got {short_repr(k)}"
            found = _not_json(v, depth + 1)
            if found is not None:
                return f"[{short_repr(k)}]{found[0]}", found[1], found[2]
        return None
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _not_json(v, depth + 1)
            if found is not None:
                return f"[{i}]{found[0]}", found[1], found[2]
        return None
    return "", TypeError, f"must be JSON data, got {type(value).__name__}: {short_repr(value)}"


def thaw(obj: Any, _depth: int = 0) -> Any:
    """Deep copy of mappings/sequences into plain dicts and lists.

    Raises:
        ValueError: nested deeper than 200 levels (or cyclic), as :func:`plain_json` refuses.
    """
    if _depth > _MAX_DEPTH:
        raise ValueError(f"value is nested deeper than {_MAX_DEPTH} levels (or cyclic)")
    if isinstance(obj, Mapping):
        return {k: thaw(v, _depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [thaw(v, _depth + 1) for v in obj]
    return obj
