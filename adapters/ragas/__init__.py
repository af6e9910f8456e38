"""ek metrics inside Ragas: ``evaluate()`` / ``aevaluate()`` and ``@experiment``.

Ragas 0.4 has two metric APIs that do not mix: ``evaluate()`` / ``aevaluate()`` accept only
classic ``Metric`` subclasses, while the docs recommend the collections ``BaseMetric`` (its
``ascore``) inside an ``@experiment``. :func:`ek_ragas_metric` builds either from one ek metric:
:class:`EkRagasMetric` (a classic ``MultiTurnMetric``) or :class:`EkCollectionsMetric`.
Both read the columns ``user_input``, ``reference`` and ``reference_tool_calls`` (declared; the
one a metric cannot score without is declared required, see :func:`required_columns`), turn
the sample into an :class:`~ek.agents.base.Episode` and its gold
(:func:`ek.agents.bridge.from_ragas_sample`, which reads every tool call through
:func:`ek.agents.toolcalls.normalize_call`), and return ek's number: NaN where ek says the value
is undefined, with ek's reason alongside. :func:`to_ragas_sample` goes the other way.

Names: a result is keyed by the metric's name, by default readable and naming the settings a
reader can read (``"ek_tool_calls"``, ``"ek_trajectory(scheme=exact)"``; a grammar or a price is
left out of it); a name given twice in one ``evaluate()`` raises ``ValueError`` asking for
``name=``. Values: each per-sample value is ek's own, an :class:`EkRagasScore` (a float with
ek's reason); :func:`to_pandas_with_reasons` is ``result.to_pandas()`` with a ``<column>_reason``
column beside each ek column. A row ek cannot score is NaN with ek's reason (raised with
``raise_exceptions=True``). Ragas' summary of a result is its mean of the rows (NaN skipped),
not ek's corpus aggregate (a ratio of sums), which :meth:`EkRagasMetric.aggregate` gives, with
how many rows were left unscored and why.

Sample conventions (message ``metadata``, see :mod:`ek.agents.bridge._ragas`): ``tools`` (the
task's ToolSpec dicts; without them a tool-call or trajectory metric weighs everything 1, and
its reason says so) and ``raw_tool_calls`` on an AI message (the model's calls as it wrote them,
instead of ``tool_calls``, whose ``ToolCall`` refuses arguments that are not a mapping: a
malformed call is scored as malformed).

Needs the extra: ``pip install ek-agents[ragas]`` (Ragas >=0.3.7,!=0.4.2,<1; it bounds
``langchain-community<0.4.2``, without which ``import ragas`` 0.4.3 fails). Another Ragas is
refused at import with the ``pip`` command that fixes it.

Example:
    >>> from ek.agents.base import Episode
    >>> from ek.agents.metrics import TaskSuccessMetric
    >>> sample = to_ragas_sample(Episode("t1", input="2+2?", output="4"), "4")
    >>> m = ek_ragas_metric(TaskSuccessMetric())
    >>> m.name, m.multi_turn_score(sample)
    ('ek_task_success', 1.0)
    >>> r = ek_ragas_metric(TaskSuccessMetric(), api="experiment").score(
    ...     user_input=sample.user_input, reference="5")
    >>> r.value, r.reason
    (0.0, 'output check failed')
"""

from __future__ import annotations

from ek.agents.bridge import from_ragas_sample

from . import _version  # noqa: F401  (before the host: refuses a version out of range)
from ._convert import to_ragas_sample
from ._metric import (
    REQUIRED_COLUMNS,
    EkCollectionsMetric,
    EkRagasMetric,
    ek_ragas_metric,
    required_columns,
)
from ._scores import EkRagasAggregate, EkRagasScore, to_pandas_with_reasons

__all__ = [
    "REQUIRED_COLUMNS",
    "EkCollectionsMetric",
    "EkRagasAggregate",
    "EkRagasMetric",
    "EkRagasScore",
    "ek_ragas_metric",
    "from_ragas_sample",
    "required_columns",
    "to_pandas_with_reasons",
    "to_ragas_sample",
]
