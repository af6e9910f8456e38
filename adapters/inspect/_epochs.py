"""The warning about an ek pass^k / pass@k reducer whose ``k`` exceeds the epochs a task ran.

A reducer sees one sample's epochs and nothing else, and Inspect also calls it for its live
display, on the epochs finished *so far*: a correct 3-epoch run with ``ek/pass_hat_2`` would
warn "the evaluation ran 1" after the first sample. So the run-level warning comes from the
final result instead: once the first ek reducer has run, an Inspect hook (the public
``inspect_ai.hooks`` API, ``on_task_end``) reads the finished task's log, whose configuration
holds the epochs it ran and its reducers, and warns for each ek reducer whose ``k`` is larger.
The hook is registered on that first reduction, never at import: Inspect prints a "hooks
enabled" banner for every hook present when an evaluation starts, and a process that never
uses an ek reducer gets no hook at all. Each reduced sample's explanation says the same, in
the log.

Example:
    >>> too_few_epochs_warnings(["ek/pass_hat_5", "mean", "ek/pass_at_2"], 2)
    ['ek reducer pass^5 is NaN on every sample: pass^5 needs at least k=5 epochs, but the evaluation ran 2: use Epochs(5, ...) or more, or a k of at most 2']
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["too_few_epochs", "too_few_epochs_warnings", "watch_epochs"]

_log = logging.getLogger("ek.adapters.inspect._reducers")

#: ``ek/pass_hat_<k>`` and ``ek/pass_at_<k>`` as a log names them (``epochs_reducer``).
_EK_REDUCER = re.compile(r"\A(?:ek/)?pass_(hat|at)_(\d+)\Z")
_LABEL = {"hat": "pass^{k}", "at": "pass@{k}"}

#: Set once the hook is registered (one per process).
_WATCHING: list[bool] = []


def too_few_epochs(label: str, k: int, epochs: int) -> str:
    """Why ``k`` > the epochs run makes the estimate NaN, and what to do."""
    return (
        f"{label} needs at least k={k} epochs, but the evaluation ran {epochs}: "
        f"use Epochs({k}, ...) or more, or a k of at most {epochs}"
    )


def too_few_epochs_warnings(reducers: Iterable[str] | None, epochs: int) -> list[str]:
    """One warning per ek reducer in ``reducers`` (log names) whose ``k`` exceeds ``epochs``."""
    out = []
    for name in reducers or ():
        m = _EK_REDUCER.match(str(name))
        if m is None or int(m.group(2)) <= epochs:
            continue
        k = int(m.group(2))
        label = _LABEL[m.group(1)].format(k=k)
        out.append(f"ek reducer {label} is NaN on every sample: {too_few_epochs(label, k, epochs)}")
    return out


def _warn_for(log: Any) -> None:
    config = getattr(getattr(log, "eval", None), "config", None)
    if config is None:
        return
    for message in too_few_epochs_warnings(config.epochs_reducer, config.epochs or 1):
        _log.warning("%s", message)


def watch_epochs() -> None:
    """Register, once per process, the hook that warns after a task (see the module docstring)."""
    if _WATCHING:
        return
    _WATCHING.append(True)
    from inspect_ai.hooks import Hooks, TaskEnd, hooks

    @hooks(
        name="ek_epochs",
        description="ek-agents: warns when an ek pass^k / pass@k reducer's k exceeds the epochs",
    )
    class EkEpochs(Hooks):
        async def on_task_end(self, data: TaskEnd) -> None:
            _warn_for(data.log)
