"""Inspect AI adapter: ek scorers, ratio-of-sums metrics and a pass^k reducer for Inspect.

Everything here is registered under the ``ek/`` namespace through the ``inspect_ai`` entry
point named ``ek`` (module :mod:`ek.adapters.inspect._registry`), so it resolves by name in
``Task(scorer=...)``, ``Epochs(5, "ek/pass_hat_3")`` and ``inspect score LOG --scorer ek/<name>``.

=======================  =====================================================================
scorers                  ``ek/ek_scorer`` (:func:`ek_scorer`), ``ek/task_success``,
                         ``ek/cost_of_pass``, ``ek/tool_calls``, ``ek/trajectory``
metrics                  ``ek/cost_of_pass_metric``, ``ek/micro_f1``, ``ek/ek_aggregate``
reducers                 ``ek/pass_hat`` (pass^k) and ``ek/pass_at`` (pass@k); ``_<k>`` suffix
reverse converters       :func:`episode_to_messages`, :func:`to_inspect_sample`
=======================  =====================================================================

Importing this package without ``inspect_ai`` raises ``ImportError`` naming
``pip install ek-agents[inspect]``.
"""

from __future__ import annotations

try:
    import inspect_ai  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised in a subprocess without inspect_ai
    raise ImportError(
        "ek.adapters.inspect needs Inspect AI (inspect_ai): pip install ek-agents[inspect]"
    ) from e

from ._convert import episode_to_messages, to_inspect_sample
from ._metrics import cost_of_pass_metric, ek_aggregate, micro_f1
from ._reducers import pass_at, pass_hat
from ._scorers import (
    cost_of_pass,
    ek_scorer,
    episode_from_state,
    task_success,
    tool_calls,
    trajectory,
)

__all__ = [
    "cost_of_pass",
    "cost_of_pass_metric",
    "ek_aggregate",
    "ek_scorer",
    "episode_from_state",
    "episode_to_messages",
    "micro_f1",
    "pass_at",
    "pass_hat",
    "task_success",
    "to_inspect_sample",
    "tool_calls",
    "trajectory",
]
