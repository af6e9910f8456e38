"""Explaining a tool-call assignment: the ``reason`` sentence and the JSON-ready breakdown.

Both :class:`~ek.agents.toolcalls.MatchResult` (its ``reason`` / ``to_dict()``) and the fast
scoring path of :class:`~ek.agents.toolcalls.ToolCallMetric` render through these functions, so a
``Score.detail`` and a ``MatchResult`` always say the same thing in the same words.

Rows are plain tuples: a missing or extra call is ``(index, tool, args, cost)``; a wrong argument
is ``(tool, gold_index, pred_index, verdict)`` with an :class:`~ek.agents.toolcalls.ArgVerdict`.

Example:
    >>> reason_text(True, 2, 2, (), (), (), 4.0, 0.0, 0.0, 1.0)
    'valid: 2 of 2 gold call(s) matched exactly; weighted TP 4, FP 0, FN 0, F1 1.0000'
    >>> reason_text(False, 0, 0, [(0, "search", {}, 2.0)], (), (), 0.0, 0.0, 2.0, 0.0)
    'invalid: 0 of 1 gold call(s) matched exactly; missing search (gold #0, cost 2); weighted TP 0, FP 0, FN 2, F1 0.0000'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ek.agents._gold import _show
from ek.agents.callshape import MALFORMED_TOOL

if TYPE_CHECKING:
    from ek.agents._callresults import ArgVerdict, CallMatch, MatchResult

__all__ = [
    "_breakdown",
    "_extra_row",
    "_missing_row",
    "_reason",
    "_wrong_row",
    "reason_text",
]

_LIST_MAX = 5

#: (index, tool, args, cost) of a missing gold call or an extra predicted call.
CallRow = tuple[int, str, Mapping[str, Any], float]
#: (tool, gold index, pred index, verdict) of one argument that was not a match.
WrongRow = tuple[str, int, int, "ArgVerdict"]


def _enumerate(items: list[str]) -> str:
    if len(items) <= _LIST_MAX:
        return "; ".join(items)
    return "; ".join(items[:_LIST_MAX]) + f"; and {len(items) - _LIST_MAX} more"


def _brief(expected: Any) -> str:
    if isinstance(expected, Mapping) and "any_of" in expected:
        vals = expected["any_of"]
        s = " or ".join(f"{v!r:.40}" for v in vals) or "nothing"
        return s + (" (optional)" if expected.get("optional") else "")
    return f"{expected!r:.40}"


def reason_text(
    valid: bool,
    n_matched: int,
    n_exact: int,
    missing: Sequence[CallRow],
    extra: Sequence[CallRow],
    wrong: Iterable[WrongRow],
    tp: float,
    fp: float,
    fn: float,
    f1: float,
) -> str:
    """One paragraph a person can read: what matched, what is missing, extra or wrong.

    Args:
        valid: BFCL's verdict.
        n_matched: Number of assigned pairs.
        n_exact: How many of them are exact.
        missing: Rows of the gold calls left unmatched.
        extra: Rows of the predicted calls left unmatched.
        wrong: Rows of the arguments that were not a match.
        tp: Weighted true positives.
        fp: Weighted false positives.
        fn: Weighted false negatives.
        f1: The weighted F1.
    """
    head = (
        f"{'valid' if valid else 'invalid'}: {n_exact} of {n_matched + len(missing)} gold call(s)"
        " matched exactly"
    )
    if n_matched != n_exact:
        head += f", {n_matched - n_exact} with argument errors"
    parts = [head]
    if missing:
        parts.append(
            "missing " + _enumerate([f"{c[1]} (gold #{c[0]}, cost {c[3]:g})" for c in missing])
        )
    if extra:
        parts.append(
            "extra " + _enumerate([f"{c[1]} (call #{c[0]}, cost {c[3]:g}{_why(c)})" for c in extra])
        )
    lines = []
    for tool, gi, pi, a in wrong:
        if a.verdict == "wrong":
            what = f"got {a.predicted!r:.40}, expected {_brief(_show(a.expected))} ({a.reason})"
        elif a.verdict == "missing":
            what = f"missing ({a.reason})"
        else:
            what = f"unexpected {a.predicted!r:.40} ({a.reason})"
        lines.append(f"{tool}.{a.arg} (call #{pi} vs gold #{gi}) {what}, cost {a.importance:g}")
    if lines:
        parts.append("wrong arguments: " + _enumerate(lines))
    parts.append(f"weighted TP {tp:g}, FP {fp:g}, FN {fn:g}, F1 {f1:.4f}")
    return "; ".join(parts)


def _missing_row(index: int, tool: str, args: Mapping[str, Any], cost: float) -> dict[str, Any]:
    return {"gold": index, "tool": tool, "args": _show(args), "cost": cost}


def _malformed_reason(tool: str, args: Mapping[str, Any]) -> str | None:
    """Why a predicted call is malformed (its arguments carry it), or ``None``."""
    if tool != MALFORMED_TOOL:
        return None
    reason = getattr(args, "reason", None)
    return reason if isinstance(reason, str) else None


def _why(row: CallRow) -> str:
    reason = _malformed_reason(row[1], row[2])
    return "" if reason is None else f", {reason}"


def _extra_row(index: int, tool: str, args: Mapping[str, Any], cost: float) -> dict[str, Any]:
    row = {"pred": index, "tool": tool, "args": dict(args), "cost": cost}
    reason = _malformed_reason(tool, args)
    if reason is not None:  # a malformed predicted call: why it could not be read
        row["reason"] = reason
    return row


def _wrong_row(tool: str, gi: int, pi: int, a: ArgVerdict) -> dict[str, Any]:
    return {
        "gold": gi,
        "pred": pi,
        "tool": tool,
        "arg": a.arg,
        "verdict": a.verdict,
        "predicted": a.predicted,
        "expected": _show(a.expected),
        "importance": a.importance,
        "reason": a.reason,
    }


def _wrong_rows(
    r: MatchResult, wrong_args: tuple[tuple[CallMatch, ArgVerdict], ...] | None
) -> list[WrongRow]:
    pairs = r.wrong_args if wrong_args is None else wrong_args
    return [(m.tool, m.gold_index, m.pred_index, a) for m, a in pairs]


def _reason(
    r: MatchResult,
    f1: float | None = None,
    wrong_args: tuple[tuple[CallMatch, ArgVerdict], ...] | None = None,
) -> str:
    c = r.counts
    return reason_text(
        r.valid,
        len(r.matched),
        sum(1 for m in r.matched if m.exact),
        [(u.index, u.tool, u.args, u.cost) for u in r.missing],
        [(u.index, u.tool, u.args, u.cost) for u in r.extra],
        _wrong_rows(r, wrong_args),
        c.tp,
        c.fp,
        c.fn,
        c.f1 if f1 is None else f1,
    )


def _breakdown(
    r: MatchResult, wrong_args: tuple[tuple[CallMatch, ArgVerdict], ...] | None = None
) -> dict[str, Any]:
    return {
        "matched": [
            {"gold": m.gold_index, "pred": m.pred_index, "tool": m.tool, "exact": m.exact}
            for m in r.matched
        ],
        "missing": [_missing_row(c.index, c.tool, c.args, c.cost) for c in r.missing],
        "extra": [_extra_row(c.index, c.tool, c.args, c.cost) for c in r.extra],
        "wrong_args": [_wrong_row(*w) for w in _wrong_rows(r, wrong_args)],
    }
