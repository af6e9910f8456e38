"""Duck-typed readers shared by the bridges (attributes *or* mapping keys; no host import).

Example:
    >>> from types import SimpleNamespace as NS
    >>> field_of({"role": "tool"}, "role"), field_of(NS(role=None), "role", "user")
    ('tool', 'user')
    >>> content_text([{"type": "text", "text": "a"}, {"type": "image"}, "b"])
    'ab'
    >>> token_count("12"), token_count(-3), token_count(None)
    (12, 0, 0)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ek.agents._episode import Cost

__all__ = ["content_text", "cost_list", "field_of", "token_count"]


def field_of(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` for a mapping, ``obj.key`` otherwise (``default`` when absent or ``None``).

    Example:
        >>> field_of({"a": None}, "a", 1), field_of(object(), "a")
        (1, None)
    """
    if isinstance(obj, Mapping):
        v = obj.get(key, default)
    else:
        v = getattr(obj, key, default)
    return default if v is None else v


def content_text(content: Any) -> Any:
    """The text of a message/tool-result content (str, a list of blocks, or a JSON value).

    A list of blocks joins its strings and ``text`` blocks; a mapping is copied to a dict; a
    number or bool is kept; another object gives its ``text`` attribute, else its ``str()``.

    Example:
        >>> content_text("ok"), content_text({"status": "paid"}), content_text(3)
        ('ok', {'status': 'paid'}, 3)
    """
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif field_of(block, "type", "text") == "text":
                t = field_of(block, "text")
                if isinstance(t, str):
                    parts.append(t)
        return "".join(parts)
    if isinstance(content, Mapping):
        return dict(content)
    if isinstance(content, (int, float, bool)):
        return content
    t = field_of(content, "text")
    return t if isinstance(t, str) else str(content)


def token_count(x: Any) -> int:
    """A reported count as an int >= 0 (``None``, a bool, or unreadable text count as 0).

    Example:
        >>> token_count(7.9), token_count(True), token_count("n/a")
        (7, 0, 0)
    """
    if x is None or isinstance(x, bool):
        return 0
    try:
        v = int(x)
    except (TypeError, ValueError):
        return 0
    return max(v, 0)


def cost_list(value: Any) -> list[Cost]:
    """One :class:`~ek.agents.base.Cost` (or its dict), a list of them, or ``None`` as a list.

    Example:
        >>> [c.total_tokens for c in cost_list([{"input_tokens": 3}, Cost(output_tokens=2)])]
        [3, 2]
        >>> cost_list(None)
        []
    """
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    return [c if isinstance(c, Cost) else Cost.from_dict(c) for c in items]
