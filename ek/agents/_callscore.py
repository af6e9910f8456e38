"""The :class:`~ek.base.Score` of a tool-call assignment, built straight from the assignment.

:func:`ek.agents.toolcalls.tool_call_score` turns a finished
:class:`~ek.agents.toolcalls.MatchResult` into a Score; :class:`~ek.agents.toolcalls.ToolCallMetric`
skips the intermediate objects instead: a pair claimed as exact by its canonical key needs no
per-argument verdicts (its TP is the predicted call's mass, every argument a match), so only the
pairs with argument errors carry verdicts into the detail. The detail is the same, key for key and
value for value (the same sums in the same order, the same words from
:mod:`ek.agents._callreport`), and a characterisation test pins that.

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> from ek.agents._callargs import _Ctx
    >>> from ek.agents._calls import _prepare_gold, _prepare_pred
    >>> from ek.agents._matching import _assign
    >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
    >>> g = _prepare_gold([{"name": "f", "args": {"x": 1}}], ctx)
    >>> s = score_assignment(*_assign(_prepare_pred([{"name": "f", "args": {"x": 1}}], ctx), g, ctx))
    >>> s.value, s.detail["passed"], s.detail["matched"]
    (1.0, True, [{'gold': 0, 'pred': 0, 'tool': 'f', 'exact': True}])
"""

from __future__ import annotations

import math
from dataclasses import fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ek.agents._callreport import _extra_row, _missing_row, _wrong_row, reason_text
from ek.base import Score
from ek.fields import f1_score

if TYPE_CHECKING:
    from ek.agents._callreport import WrongRow
    from ek.agents._calls import _GCall, _PCall
    from ek.agents._compare import _Pair

__all__ = ["make_score", "score_assignment"]

_INF = math.inf
_new = object.__new__
_set = object.__setattr__
# Score's own constructor copies the detail and re-validates the value; a fresh dict and a float
# need neither. Used only while Score is exactly (value, detail) with a per-instance __dict__.
_DIRECT = [f.name for f in fields(Score)] == ["value", "detail"] and hasattr(Score, "__dict__")


def make_score(value: float, detail: dict[str, Any]) -> Score:
    """``Score(value, detail)`` for a float ``value`` and a fresh ``detail`` dict (not copied).

    Example:
        >>> make_score(0.5, {"tp": 1.0}).detail["tp"]
        1.0
    """
    if not _DIRECT or type(value) is not float:
        return Score(value, detail)
    s = _new(Score)
    _set(s, "value", value)
    _set(s, "detail", MappingProxyType(detail))
    return s


def score_assignment(
    pairs: list[tuple[int, _GCall, _PCall, _Pair | None]],
    missing: list[_GCall],
    extra: list[_PCall],
) -> Score:
    """The Score of an assignment from :func:`ek.agents._matching._assign`.

    Same value and detail as ``tool_call_score(_match_prepared(...))``.
    """
    tp = fp = fn = 0.0
    matched = []
    wrong: list[WrongRow] = []
    n_exact = 0
    for gi, gc, pc, pr in pairs:
        if pr is None:  # claimed by key: TP = the predicted call's mass (see _exact_pair)
            tp += pc.mass
            n_exact += 1
            matched.append({"gold": gi, "pred": pc.index, "tool": gc.tool, "exact": True})
            continue
        tp += pr.tp
        fp += pr.fp
        fn += pr.fn
        exact = pr.exact
        if exact:
            n_exact += 1
        matched.append({"gold": gi, "pred": pc.index, "tool": gc.tool, "exact": exact})
        for a in pr.verdicts:
            if a.verdict != "match":
                wrong.append((gc.tool, gi, pc.index, a))
    miss = []
    for gc in missing:
        fn += gc.mass
        miss.append((gc.index, gc.tool, gc.args, gc.mass))
    ext = []
    for pc in extra:
        fp += pc.mass
        ext.append((pc.index, pc.tool, pc.args, pc.mass))
    if type(tp) is float and 0.0 <= tp < _INF and 0.0 <= fp < _INF and 0.0 <= fn < _INF:
        denom = 2.0 * tp + fp + fn
        f1 = 1.0 if denom == 0 else 2.0 * tp / denom  # f1_score's formula, inputs known valid
    else:
        f1 = f1_score(tp, fp, fn)
    valid = not miss and not ext and n_exact == len(matched)
    return make_score(
        f1,
        {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "passed": valid,
            "valid": valid,
            "higher_is_better": True,
            "reason": reason_text(valid, len(matched), n_exact, miss, ext, wrong, tp, fp, fn, f1),
            "matched": matched,
            "missing": [_missing_row(*c) for c in miss],
            "extra": [_extra_row(*c) for c in ext],
            "wrong_args": [_wrong_row(*w) for w in wrong],
        },
    )
