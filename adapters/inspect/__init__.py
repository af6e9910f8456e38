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

**Gold calls in Inspect.** The ``tool_calls`` and ``trajectory`` scorers read the expected
calls from the sample metadata: ``metadata["ek_task"]`` (a :class:`~ek.agents.base.TaskSpec`
dict, :func:`to_inspect_sample`) when present, else ``metadata["gold_calls"]`` (``gold=`` picks
another key). ``gold_calls`` is a **list** of calls, each in any of these shapes (read by
:func:`ek.agents.toolcalls.normalize_calls`, the same reader every ek path uses)::

    {"function": "refund", "arguments": {"order_id": "A1"}}     # Inspect ToolCall (or the object)
    {"tool": "refund", "args": {"order_id": "A1"}}              # ek Step
    {"type": "function", "function": {"name": "refund", "arguments": '{"order_id": "A1"}'}}
    {"name": "refund", "input": {...}}  {"name": "refund", "args": {...}}  {"refund": {...}}

Arguments may be a mapping or a JSON object string. Any other shape leaves the sample unscored
(``reason="scoring_failed"``) with the accepted shapes listed, never a silent NaN.

**Re-scoring.** ``inspect score LOG`` with no ``--scorer`` re-creates the scorers the log
recorded: Inspect records them by their bare name (``tool_calls``), so the ek scorers are also
registered under it (unless something else already holds that name).

Importing this package without ``inspect_ai`` raises ``ImportError`` naming
``pip install ek-agents[inspect]``; with an Inspect outside the supported range (>=0.3.262,<1)
it raises one naming the version found, the range and the ``pip`` command that fixes it.
"""

from __future__ import annotations

from . import _version  # noqa: F401  (before the host: refuses a version out of range)
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
