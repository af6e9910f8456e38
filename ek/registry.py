"""A namespaced registry of named strategies (metrics, checkers, canonicalizers, ...).

Example:
    >>> @register("checkers", "always_true_doc")
    ... def always(episode, gold):
    ...     return True
    >>> resolve("checkers", "always_true_doc") is always
    True
    >>> resolve("checkers", always) is always   # objects pass through
    True
    >>> "always_true_doc" in registered("checkers")
    True
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, overload

from ek._validate import short_repr

__all__ = [
    "UnknownNameError",
    "namespaces",
    "register",
    "registered",
    "resolve",
    "unregister",
]

T = TypeVar("T")

_REGISTRY: dict[str, dict[str, Any]] = {}
_LOCK = threading.Lock()


class UnknownNameError(LookupError, ValueError):
    """Raised by :func:`resolve` for a name that is not registered; lists the known names."""


def _check_key(namespace: str, name: str) -> None:
    for label, v in (("namespace", namespace), ("name", name)):
        if not isinstance(v, str) or not v:
            raise TypeError(f"registry {label} must be a non-empty str, got {short_repr(v)}")


@overload
def register(namespace: str, name: str) -> Callable[[T], T]: ...
@overload
def register(namespace: str, name: str, obj: T) -> T: ...
def register(namespace: str, name: str, obj: Any = None) -> Any:
    """Register ``obj`` under ``namespace``/``name``; usable as a decorator when ``obj`` is omitted.

    Re-registering a name replaces the earlier object (so a user can override a default).

    Args:
        namespace: For example ``"metrics"``, ``"checkers"``, ``"canonicalizers"``.
        name: The look-up name.
        obj: The object; omit to get a decorator.

    Returns:
        ``obj`` (or a decorator that registers and returns its argument).
    """
    _check_key(namespace, name)

    def deco(o: T) -> T:
        with _LOCK:
            _REGISTRY.setdefault(namespace, {})[name] = o
        return o

    return deco if obj is None else deco(obj)


def unregister(namespace: str, name: str) -> None:
    """Remove a registration (no error when absent)."""
    with _LOCK:
        _REGISTRY.get(namespace, {}).pop(name, None)


def namespaces() -> list[str]:
    """The sorted namespaces that hold at least one registration.

    Example:
        >>> register("doc-namespace", "thing", object())  # doctest: +ELLIPSIS
        <object object at ...>
        >>> "doc-namespace" in namespaces()
        True
        >>> unregister("doc-namespace", "thing")
        >>> "doc-namespace" in namespaces()
        False
    """
    with _LOCK:
        return sorted(ns for ns, table in _REGISTRY.items() if table)


def registered(namespace: str) -> list[str]:
    """The sorted names registered in ``namespace`` (empty for an unknown namespace)."""
    with _LOCK:
        return sorted(_REGISTRY.get(namespace, {}))


def resolve(namespace: str, name_or_obj: Any) -> Any:
    """Return the object registered as ``name_or_obj``, or ``name_or_obj`` itself if not a str.

    Raises:
        UnknownNameError: the name is not registered; the message lists the known names.
    """
    if not isinstance(name_or_obj, str):
        return name_or_obj
    with _LOCK:
        table = _REGISTRY.get(namespace, {})
        if name_or_obj in table:
            return table[name_or_obj]
        known = sorted(table)
    raise UnknownNameError(
        f"unknown {namespace} name {short_repr(name_or_obj)}; expected one of {known}"
        + ("" if known else f" (nothing is registered in {short_repr(namespace)} yet)")
    )
