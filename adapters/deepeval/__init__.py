"""ek metrics inside DeepEval: ``evaluate()``, ``assert_test()`` and ``deepeval test run``.

:class:`EkMetric` (a DeepEval ``BaseMetric`` for ``LLMTestCase``) and
:class:`EkConversationalMetric` (a ``BaseConversationalMetric`` for ``ConversationalTestCase``)
convert each test case to an ek :class:`~ek.agents.base.Episode` and its gold
(:func:`ek.agents.bridge.from_deepeval_test_case`), run the wrapped ek metric, and set
``score``, ``success``, ``reason`` (ek's reason) and ``verbose_logs`` (ek's ``detail`` as JSON).
:func:`to_deepeval_test_case` goes the other way. :func:`summary_from_evaluation` reads an
``evaluate()`` result into ek's run summary (report, pass^k, Cost-of-Pass, the gate): DeepEval's
own "Average Score" is a per-case mean, not ek's corpus figure (a ratio of sums).

**Test case metadata** (DeepEval has no field for these; all optional, see
:mod:`ek.agents.bridge._deepeval`): ``tools`` (the task's ToolSpec dicts: tool weights and
argument importances; without them a tool-call or trajectory metric weighs everything 1, and
its reason says so), ``raw_tool_calls`` (the model's calls as it wrote them, instead of
``tools_called``: a malformed one is scored as malformed, never as a call with no arguments),
``final_state``, ``gold``, ``task_id``, ``trial``, ``cost``, ``step_errors``, ``success``.

Needs the extra: ``pip install ek-agents[deepeval]`` (DeepEval >=3.9.9,<5; another version is
refused at import with the ``pip`` command that fixes it, see :mod:`._version`).

Example:
    >>> from deepeval.test_case import LLMTestCase
    >>> from ek.agents.metrics import TaskSuccessMetric
    >>> m = EkMetric(TaskSuccessMetric(), threshold=1.0)
    >>> m.measure(LLMTestCase(input="2+2?", actual_output="4", expected_output="4"))
    1.0
    >>> m.success, m.reason, m.__name__
    (True, 'output check passed', "ek:TaskSuccessMetric(check='output')")
"""

from __future__ import annotations

from ek.agents.bridge import from_deepeval_test_case

from . import _version  # noqa: F401  (before the host: refuses a version out of range)
from ._convert import to_deepeval_test_case
from ._metric import EkConversationalMetric, EkMetric
from ._summary import summary_from_evaluation

__all__ = [
    "EkConversationalMetric",
    "EkMetric",
    "from_deepeval_test_case",
    "summary_from_evaluation",
    "to_deepeval_test_case",
]
