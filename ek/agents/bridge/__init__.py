"""Duck-typed bridges: host transcripts, samples and test cases -> :class:`~ek.agents.base.Episode`.

ek never imports a host framework here: every converter reads attributes *or* mapping keys, so
the same code handles live objects (an Inspect ``TaskState``, LangChain messages, Anthropic SDK
blocks, DeepEval and Ragas test cases) and their JSON dumps. One module a source:

- :mod:`ek.agents.bridge._messages`: chat messages (OpenAI, Anthropic, Inspect, LangChain) ->
  :class:`~ek.agents.base.Trajectory` (:func:`trajectory_from_messages`), usage ->
  :class:`~ek.agents.base.Cost` (:func:`cost_from_usage`).
- :mod:`ek.agents.bridge._inspect_log`: Inspect samples, transcript events and logs -> episodes,
  run provenance and success verdicts (:func:`from_inspect_sample`,
  :func:`cost_from_inspect_events`, :func:`read_inspect_log`, :func:`episodes_from_inspect_log`,
  ...). Reading a log file is the one thing that imports ``inspect_ai`` (lazily).
- :mod:`ek.agents.bridge._deepeval`: DeepEval test cases and traces -> ``(Episode, TaskSpec)``
  (:func:`from_deepeval_test_case`, :func:`from_deepeval_trace`).
- :mod:`ek.agents.bridge._ragas`: Ragas multi-turn samples -> ``(Episode, TaskSpec)``
  (:func:`from_ragas_sample`).

Every tool call is read by the one call-shape normaliser
(:func:`~ek.agents.toolcalls.normalize_call`); a malformed predicted call becomes a step of tool
:data:`~ek.agents.toolcalls.MALFORMED_TOOL` whose ``error`` says why (scored as a wrong call,
never a crash).

Example:
    >>> msgs = [
    ...     {"role": "assistant", "content": None, "tool_calls": [
    ...         {"id": "c1", "type": "function",
    ...          "function": {"name": "lookup", "arguments": '{"order_id": "A1"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "paid"},
    ... ]
    >>> [(s.tool, dict(s.args), s.observation) for s in trajectory_from_messages(msgs)]
    [('lookup', {'order_id': 'A1'}, 'paid')]
"""

from __future__ import annotations

from ek.agents.bridge._deepeval import from_deepeval_test_case, from_deepeval_trace
from ek.agents.bridge._inspect_log import (
    DEFAULT_ROLES,
    EK_METADATA_KEY,
    INSPECT_EXTRA_HINT,
    AmbiguousSuccessError,
    InspectSampleRecord,
    cost_from_inspect_events,
    ek_scores_from_inspect_scores,
    episodes_from_inspect_log,
    from_inspect_sample,
    inspect_sample_record,
    inspect_verdict,
    provenance_from_inspect_header,
    read_inspect_log,
    success_from_inspect_scores,
)
from ek.agents.bridge._messages import cost_from_usage, trajectory_from_messages
from ek.agents.bridge._ragas import from_ragas_sample

__all__ = [
    "DEFAULT_ROLES",
    "EK_METADATA_KEY",
    "INSPECT_EXTRA_HINT",
    "AmbiguousSuccessError",
    "InspectSampleRecord",
    "cost_from_inspect_events",
    "cost_from_usage",
    "ek_scores_from_inspect_scores",
    "episodes_from_inspect_log",
    "from_deepeval_test_case",
    "from_deepeval_trace",
    "from_inspect_sample",
    "from_ragas_sample",
    "inspect_sample_record",
    "inspect_verdict",
    "provenance_from_inspect_header",
    "read_inspect_log",
    "success_from_inspect_scores",
    "trajectory_from_messages",
]
