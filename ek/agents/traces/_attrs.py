"""Reading span attributes: the small helpers both conventions share.

Model output and instrumentations are untrusted: every reader here returns ``None`` (or skips the
item) for a value of the wrong type instead of raising.

Example:
    >>> first({"a": None, "b": 2}, "a", "b"), count({"n": "7"}, "n"), maybe_json('{"x": 1}')
    (2, 7, {'x': 1})
    >>> indexed({"m.0.c.1.name": "f", "m.0.c.0.name": "g"}, r"m\\.(\\d+)\\.c\\.(\\d+)\\.(name)")
    [{'name': 'g'}, {'name': 'f'}]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["count", "first", "indexed", "maybe_json", "text_of"]

#: Largest token count read from an attribute (what :class:`~ek.agents.base.Cost` accepts).
MAX_COUNT = 2**53


def first(attrs: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first of ``keys`` present (and not ``None`` or ``""``) in ``attrs``."""
    for k in keys:
        v = attrs.get(k)
        if v is not None and v != "":
            return v
    return None


def count(attrs: Mapping[str, Any], *keys: str) -> int | None:
    """The first of ``keys`` as a token count (int >= 0), ``None`` when absent or unreadable."""
    v = first(attrs, *keys)
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return None
        v = int(v)
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            return None
    if not isinstance(v, int) or v < 0 or v > MAX_COUNT:
        return None
    return v


def maybe_json(value: Any) -> Any:
    """``value`` decoded when it is JSON object or array text; otherwise ``value`` unchanged."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def text_of(value: Any) -> str | None:
    """A message content as text: a str, or the ``text`` / ``content`` parts of a list joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        parts = [text_of(p) for p in value]
        joined = "".join(p for p in parts if p)
        return joined or None
    if isinstance(value, Mapping):
        if value.get("type", "text") not in ("text", "output_text"):
            return None
        return text_of(value.get("content", value.get("text")))
    return None


def indexed(attrs: Mapping[str, Any], pattern: str) -> list[dict[str, Any]]:
    """Flattened, indexed attributes (``prefix.0.x``, ``prefix.1.x``) as a list of dicts.

    ``pattern`` is a regular expression with one or more index groups followed by one group
    that names the field; items come back ordered by their indices.
    """
    rx = re.compile(pattern)
    items: dict[tuple[int, ...], dict[str, Any]] = {}
    for key, v in attrs.items():
        m = rx.fullmatch(key)
        if m is None:
            continue
        *idx, name = m.groups()
        items.setdefault(tuple(int(i) for i in idx), {})[name] = v
    return [items[k] for k in sorted(items)]
