"""Small validators shared by the core and ``ek.agents`` (errors say what was expected and given)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

__all__ = [
    "check_keys",
    "check_mapping",
    "count",
    "finite",
    "nonempty_str",
    "opt_str",
    "plain_json",
    "thaw",
]


def check_keys(
    owner: str, data: Any, allowed: set[str] | frozenset[str], required: tuple[str, ...] = ()
) -> None:
    """Raise unless ``data`` is a mapping with only ``allowed`` keys and every ``required`` one."""
    if not isinstance(data, Mapping):
        raise TypeError(
            f"{owner}.from_dict expects a mapping, got {type(data).__name__}: {data!r:.200}"
        )
    unknown = sorted((k for k in data if k not in allowed), key=str)
    if unknown:
        raise ValueError(f"{owner}: unknown field(s) {unknown}; expected only {sorted(allowed)}")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{owner}: missing required field(s) {missing}")


def check_mapping(owner: str, value: Any) -> dict[str, Any]:
    """A shallow ``dict`` copy of a str-keyed mapping, or a TypeError naming ``owner``."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{owner} must be a mapping, got {type(value).__name__}: {value!r:.200}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise TypeError(f"{owner} keys must be str, got {bad[:3]!r}")
    return dict(value)


def count(owner: str, value: Any) -> int:
    """A non-negative int (an integral float is accepted), else an error naming ``owner``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner} must be an int >= 0, got {type(value).__name__}: {value!r:.200}")
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ValueError(f"{owner} must be an int >= 0, got {value!r}")
        value = int(value)
    if value < 0:
        raise ValueError(f"{owner} must be an int >= 0, got {value!r}")
    return int(value)


def is_number(value: Any) -> TypeGuard[int | float]:
    """``True`` for an int or a float, ``False`` for a bool (a bool is not a number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number(owner: str, value: Any) -> float:
    """Any int or float (NaN and infinities included) as a float, else a TypeError."""
    if not is_number(value):
        raise TypeError(f"{owner} must be a number, got {type(value).__name__}: {value!r:.100}")
    return float(value)


def positive_int(
    owner: str, value: Any, *, minimum: int = 1, error: type[Exception] = ValueError
) -> int:
    """An int >= ``minimum`` (a bool is not one), else ``error`` saying what was given.

    The message is ``"<owner> must be an int >= <minimum>, got <value>"``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise error(f"{owner} must be an int >= {minimum}, got {value!r}")
    return value


def positive_number(owner: str, value: Any, message: str | None = None) -> float:
    """A number > 0 (a bool is not one; NaN is not > 0), else a ValueError.

    ``message`` replaces the default ``"<owner> must be a number > 0, got <value>"`` (it is
    formatted with ``value``).
    """
    if not is_number(value) or not value > 0:
        text = message or "{owner} must be a number > 0, got {value!r}"
        raise ValueError(text.format(owner=owner, value=value))
    return float(value)


def finite(owner: str, value: Any, *, minimum: float | None = None) -> float:
    """A finite float (optionally >= ``minimum``), else an error naming ``owner``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner} must be a number, got {type(value).__name__}: {value!r:.200}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{owner} must be finite, got {value!r}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{owner} must be >= {minimum}, got {value!r}")
    return v


def nonempty_str(owner: str, value: Any) -> str:
    """A non-empty str, else a TypeError (not a str) or ValueError (empty) naming ``owner``."""
    if not isinstance(value, str) or not value:
        raise (TypeError if not isinstance(value, str) else ValueError)(
            f"{owner} must be a non-empty str, got {value!r:.200}"
        )
    return value


def opt_str(owner: str, value: Any) -> str | None:
    """``None`` or a str, else a TypeError naming ``owner``."""
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"{owner} must be a str or None, got {type(value).__name__}: {value!r:.200}"
        )
    return value


def plain_json(owner: str, value: Any, _depth: int = 0) -> None:
    """Raise unless ``value`` is JSON-representable (str keys, finite numbers, no cycles)."""
    if _depth > 200:
        raise ValueError(f"{owner} is nested too deeply (or cyclic)")
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{owner} must not contain NaN or infinity, got {value!r}")
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{owner} keys must be str, got {k!r}")
            plain_json(f"{owner}[{k!r}]", v, _depth + 1)
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            plain_json(f"{owner}[{i}]", v, _depth + 1)
        return
    raise TypeError(f"{owner} must be JSON data, got {type(value).__name__}: {value!r:.200}")


def thaw(obj: Any) -> Any:
    """Deep copy of mappings/sequences into plain dicts and lists."""
    if isinstance(obj, Mapping):
        return {k: thaw(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [thaw(v) for v in obj]
    return obj
