"""The ``inspect_ai`` entry point ``ek``: importing it registers every ``ek/<name>`` object.

Inspect imports this module (``[project.entry-points.inspect_ai] ek = ...``) the first time a
name under ``ek/`` is looked up, and in every process that loads all entry points, so it stays
light: it imports the adapter modules, whose decorators register the scorers, metrics and
reducers, and nothing else.
"""

from __future__ import annotations

from . import _metrics, _reducers, _scorers, policy

__all__ = ["REGISTERED"]

#: The names this entry point registers (scorers, metrics, reducers).
REGISTERED: tuple[str, ...] = (
    *_scorers.SCORER_NAMES,
    *policy.SCORER_NAMES,
    *_metrics.METRIC_NAMES,
    *_reducers.REDUCER_NAMES,
)
