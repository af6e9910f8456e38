"""Scoring one trial: the suite checker's verdict, every metric's Score of the judged episode,
and a metric's corpus aggregate. A failure of ek's own checker or metrics is a
:class:`HarnessError` (never the agent's failure).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from ek._validate import as_verdict
from ek.base import Score

from ._episode import Episode
from ._spec import TaskSpec
from .metrics import check_name

__all__ = ["HarnessError", "aggregate", "check_and_score", "score", "with_success"]


class HarnessError(RuntimeError):
    """ek's own checker, metrics or progress callback failed: not the agent's failure."""


def with_success(ep: Episode, ok: bool) -> Episode:
    # A copy with the checker's verdict. ``ok`` is a bool, so the full re-validation that
    # Episode.replace does would only cost time on the hot path (one call per trial).
    new = copy.copy(ep)
    object.__setattr__(new, "success", ok)
    return new


async def check_and_score(
    ep: Episode, task: TaskSpec, checker: Callable[[Any, Any], Any], mets: Sequence[Any]
) -> tuple[Episode, dict[str, Score]]:
    """The trial's verdict (the suite's checker on ``task.gold``; a failed trial fails) and
    every metric's score of the judged episode.

    Harness code: any exception here propagates as a HarnessError (not an agent failure).
    """
    if ep.error is not None:
        ok = False
    else:
        try:
            v = checker(ep, task.gold)
            if inspect.isawaitable(v):
                v = await v
        except Exception as e:
            raise HarnessError(
                f"checker {check_name(checker)!r} raised on task {task.task_id!r} trial "
                f"{ep.trial}: {type(e).__name__}: {e}"
            ) from e
        try:  # the one verdict rule: "false", 0 or NaN is no verdict, whatever its truthiness
            ok = bool(as_verdict(f"checker {check_name(checker)!r}", v))
        except TypeError as e:
            raise HarnessError(f"{e} (task {task.task_id!r} trial {ep.trial})") from None
    judged = with_success(ep, ok)
    scores: dict[str, Score] = {}
    for m in mets:
        scores[str(m.name)] = score(m, judged, task)
    return judged, scores


def score(m: Any, ep: Episode, task: TaskSpec) -> Score:
    try:
        s = m(ep, task)
    except Exception as e:
        raise HarnessError(
            f"metric {m.name!r} raised on task {task.task_id!r} trial {ep.trial}: "
            f"{type(e).__name__}: {e}"
        ) from e
    if not isinstance(s, Score):
        raise HarnessError(f"metric {m.name!r} returned {type(s).__name__}, expected a Score")
    return s


def aggregate(m: Any, scores: Sequence[Score]) -> float:
    """The metric's own corpus aggregate; its failure is a harness error."""
    try:
        return float(m.aggregate(scores))
    except Exception as e:
        raise HarnessError(f"metric {m.name!r} failed to aggregate: {type(e).__name__}: {e}") from e
