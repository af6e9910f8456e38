"""Building HTML as text: every value goes through :func:`esc` (text and attributes alike)."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["Cell", "dollars", "esc", "num", "table", "td"]

#: A table cell: its text, or ``(text, class, sort value)``.
Cell = Any


def esc(value: Any) -> str:
    """``value`` as HTML text, quotes included (safe in an element and in a quoted attribute).

    Example:
        >>> esc('<img src=x onerror="alert(1)">')
        '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    """
    return html.escape("" if value is None else str(value), quote=True)


def num(x: Any, digits: int = 4) -> str:
    """A number as the report prints it (``n/a`` for None or NaN).

    Example:
        >>> num(0.123456), num(float("nan")), num(12345.678)
        ('0.1235', 'n/a', '1.235e+04')
    """
    if x is None or isinstance(x, str):
        return "n/a" if x is None else x
    x = float(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf"
    return f"{x:.{digits}g}" if abs(x) >= 1 else f"{x:.{digits}f}"


def dollars(x: Any) -> str:
    """Dollars (``unknown`` when unpriced, ``inf`` when nothing succeeded).

    Example:
        >>> dollars(0.000924), dollars(None), dollars("inf")
        ('$0.000924', 'unknown', 'inf')
    """
    if x is None:
        return "unknown"
    if x == "inf" or (isinstance(x, float) and math.isinf(x)):
        return "inf"
    return f"${float(x):.3g}"


def td(text: Any, cls: str | None = None, sort: Any = None) -> str:
    """One ``<td>``; ``sort`` (a number or text) is what the table sorts the column by."""
    attrs = f' class="{esc(cls)}"' if cls else ""
    if sort is not None:
        if isinstance(sort, float) and not math.isfinite(sort):
            sort = ""
        attrs += f' data-v="{esc(sort)}"'
    return f"<td{attrs}>{esc(text)}</td>"


def _cell(c: Cell) -> str:
    if isinstance(c, tuple):
        return td(*c)
    return td(c)


def table(
    head: Sequence[str] | None,
    rows: Iterable[Sequence[Cell]],
    *,
    cls: str | None = None,
    numeric: Sequence[int] = (),
) -> str:
    """A plain table: a header row (none when ``head`` is None), then one row per entry.

    Example:
        >>> table(["a"], [["<b>"]])
        '<table><tr><th>a</th></tr><tr><td>&lt;b&gt;</td></tr></table>'
    """
    attrs = f' class="{esc(cls)}"' if cls else ""
    ths = "".join(
        f'<th class="num">{esc(h)}</th>' if i in numeric else f"<th>{esc(h)}</th>"
        for i, h in enumerate(head or ())
    )
    top = f"<tr>{ths}</tr>" if head is not None else ""
    body = "".join("<tr>" + "".join(_cell(c) for c in r) + "</tr>" for r in rows)
    return f"<table{attrs}>{top}{body}</table>"
