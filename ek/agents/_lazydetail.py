"""A score detail whose explanation is written the first time someone reads it.

Scoring a corpus reads ``tp``/``fp``/``fn``/``passed`` of every score and the ``reason`` and the
row lists of a few. :class:`LazyDetail` holds the cheap keys from the start and calls
``fill(*args)`` for the rest (once) on the first access to anything else: a missing key,
iteration, ``len``, ``in``, ``get``, ``keys``/``items``/``values``, ``copy``, ``==``, ``|``,
``repr``, pickling.
Wrapped in a ``MappingProxyType`` it is indistinguishable from a complete read-only dict: the
same keys in the same order with the same values.

``fill`` must be a pure function of the scored data (indices, tool names, counts, copies of
argument mappings, argument values held by reference as eager rows hold them), so when it runs
does not matter unless a caller mutates a value in place before the first read. Thread-safe
under the GIL: the filled keys are computed first and inserted by one ``dict.update``; a reader
racing the first fill at worst computes them twice.

Example:
    >>> from types import MappingProxyType
    >>> calls = []
    >>> d = MappingProxyType(LazyDetail({"tp": 1.0}, lambda: calls.append(1) or {"reason": "ok"}))
    >>> d["tp"], calls
    (1.0, [])
    >>> d["reason"], dict(d), calls
    ('ok', {'tp': 1.0, 'reason': 'ok'}, [1])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["LazyDetail"]

_get = dict.__getitem__


class LazyDetail(dict[str, Any]):
    """A dict of ``eager`` keys, completed by ``fill()`` on first use of anything else."""

    __slots__ = ("_args", "_fill")

    def __init__(
        self,
        eager: dict[str, Any],
        fill: Callable[..., dict[str, Any]],
        args: tuple[Any, ...] = (),
    ) -> None:
        dict.__init__(self, eager)
        self._fill: Callable[..., dict[str, Any]] | None = fill
        self._args = args

    def _load(self) -> None:
        fill = self._fill
        if fill is not None:
            dict.update(self, fill(*self._args))
            self._fill = None
            self._args = ()

    def __missing__(self, key: str) -> Any:
        if self._fill is None:
            raise KeyError(key)
        self._load()
        return _get(self, key)

    def __iter__(self) -> Iterator[str]:
        self._load()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator[str]:
        self._load()
        return dict.__reversed__(self)

    def __len__(self) -> int:
        self._load()
        return dict.__len__(self)

    def __contains__(self, key: object) -> bool:
        self._load()
        return dict.__contains__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        self._load()
        return dict.get(self, key, default)

    def keys(self) -> Any:
        self._load()
        return dict.keys(self)

    def items(self) -> Any:
        self._load()
        return dict.items(self)

    def values(self) -> Any:
        self._load()
        return dict.values(self)

    def copy(self) -> dict[str, Any]:
        self._load()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self._load()
        if isinstance(other, LazyDetail):
            other._load()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __or__(self, other: Any) -> Any:
        return self.copy() | other

    def __ror__(self, other: Any) -> Any:
        return other | self.copy()

    def __repr__(self) -> str:
        self._load()
        return dict.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self.copy(),))
