"""The Ragas metric shells: classic :class:`EkRagasMetric`, collections :class:`EkCollectionsMetric`.

Ragas facts they are built around (ragas 0.4.3, see the project notes):

- the classic base rebuilds each sample with **only the declared columns** before scoring (an
  undeclared column reads as ``None``), so every column read is declared; the column a metric
  cannot score without (``reference_tool_calls`` for tool-call and trajectory metrics,
  ``reference`` for an output or final-state check) is declared *required*, as Ragas' own
  metrics do, so ``evaluate()`` refuses a dataset without it up front (see
  :func:`required_columns`). Ragas validates only the first sample: a later sample without the
  column raises in the shell with a message naming it;
- classic metrics must return a plain number (a ``MetricResult`` or ``None`` crashes
  ``evaluate()`` after all rows ran);
- a metric object with a ``mode`` attribute changes its result key, so the shells have none;
- two metrics with the same ``name`` share one result column (the last wins), so the default
  name encodes the configuration (:func:`~ek.adapters.ragas._names.default_name`) and a name
  that occurs twice in one ``evaluate()`` / ``aevaluate()`` raises ``ValueError`` before any
  row is scored.

**Per-sample values are ek's own** (equal to calling the ek metric directly). **The corpus number
is not what Ragas shows**: ``EvaluationResult``'s summary (its ``repr``, ``_repr_dict``) is Ragas'
mean of the per-sample values with NaN skipped, whereas ek's corpus aggregate is a ratio of sums
(for tool calls, micro-F1 over all samples). Get ek's from the scores, which carry ek's detail:
:meth:`EkRagasMetric.aggregate` (``m.aggregate(result[m.name])``).
"""

from __future__ import annotations

import math
import sys
import typing as t
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from ragas.metrics import MetricResult
    from ragas.metrics.base import MetricType, MultiTurnMetric
    from ragas.metrics.collections import BaseMetric

from ek._validate import short_repr
from ek.adapters._shell import EkAdapterError, resolve_metric, run_metric, unit_weights_note
from ek.agents.bridge import from_ragas_sample
from ek.agents.metrics import CostPerSuccessMetric, TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.agents.trajectory import TrajectoryMetric
from ek.base import Score

from ._names import check_unique_names, default_name
from ._scores import EkRagasAggregate, EkRagasScore, split_scored

__all__ = [
    "REQUIRED_COLUMNS",
    "EkCollectionsMetric",
    "EkRagasMetric",
    "ek_ragas_metric",
    "required_columns",
]

#: Where a Ragas sample carries the task's tools (the cost grammar), as the unit-weight note says.
_TOOLS_AT = "a message's metadata['tools']"

#: The sample columns the shells read, in Ragas' notation (``:optional`` = read when present).
#: Which of them a given metric cannot do without: :func:`required_columns`.
REQUIRED_COLUMNS = frozenset({"user_input", "reference:optional", "reference_tool_calls:optional"})

_GOLD_READERS = (ToolCallMetric, TrajectoryMetric)  # score against the gold calls
_CHECKED = (TaskSuccessMetric, CostPerSuccessMetric)  # judge success with a checker
_REFERENCE_CHECKS = ("output", "final_state")  # the built-in checkers that read the gold


def _gold_column(metric: Any) -> str | None:
    """The column ``metric`` cannot score without, if ek knows it."""
    if isinstance(metric, _GOLD_READERS):
        return "reference_tool_calls"
    if isinstance(metric, _CHECKED):
        check = getattr(metric, "check", None)
        if (check or "output") in _REFERENCE_CHECKS:  # None: "output" (or the suite's checker)
            return "reference"
    return None


def required_columns(metric: Any) -> frozenset[str]:
    """The Ragas columns (``MULTI_TURN``) that the shell of ``metric`` declares.

    ``reference_tool_calls`` is required for tool-call and trajectory metrics, ``reference``
    for a task-success or Cost-of-Pass metric with the ``"output"`` or ``"final_state"``
    checker; the other columns the shells read stay ``:optional``.

    Args:
        metric: An ek metric instance.

    Example:
        >>> from ek.agents.toolcalls import ToolCallMetric
        >>> sorted(required_columns(ToolCallMetric()))
        ['reference:optional', 'reference_tool_calls', 'user_input']
    """
    need = _gold_column(metric)
    if need is None:
        return REQUIRED_COLUMNS
    return (REQUIRED_COLUMNS - {f"{need}:optional"}) | {need}


def _columns() -> dict[MetricType, set[str]]:
    return {MetricType.MULTI_TURN: set(REQUIRED_COLUMNS)}


def _check_gold(name: str, metric: Any, reference: Any, reference_tool_calls: Any) -> None:
    """Refuse a sample without the column ``metric`` needs (Ragas validates only sample 0)."""
    need = _gold_column(metric)
    given = {"reference": reference, "reference_tool_calls": reference_tool_calls}
    if need is not None and given[need] is None:
        raise ValueError(
            f"{name} needs the sample's {short_repr(need)} column (the gold it scores against), got None; "
            "give every sample one"
        )


def _result_key(metric: Any) -> str:
    """The key Ragas' ``aevaluate`` files a metric's results under."""
    mode = getattr(metric, "mode", None)
    return f"{metric.name}(mode={mode})" if mode is not None else str(metric.name)


def _evaluation_call() -> Mapping[str, Any] | None:
    """The arguments of the Ragas ``aevaluate()`` call that is initialising us, if any.

    Ragas calls ``metric.init(run_config)`` on every metric from ``aevaluate``'s own body before
    scoring a row, so its frame (its ``metrics`` list and ``raise_exceptions``) is on the
    stack; this is the one place where a metric can see the evaluation it is part of.
    """
    frame = sys._getframe(1)
    try:
        while frame is not None:
            code = frame.f_code
            if code.co_name == "aevaluate" and frame.f_globals.get("__name__") == (
                "ragas.evaluation"
            ):
                return dict(frame.f_locals)
            frame = frame.f_back  # type: ignore[assignment]
        return None
    finally:
        del frame


def _with_note(score: Score, metric: Any, gold: Any) -> tuple[str, Score]:
    """ek's reason, with the unit-weight note when the sample gave no tools."""
    note = unit_weights_note(metric, gold, _TOOLS_AT)
    return (score.reason if note is None else f"{score.reason}; {note}"), score


@dataclass
class EkRagasMetric(MultiTurnMetric):
    """An ek metric as a classic Ragas ``MultiTurnMetric`` (for ``evaluate()`` / ``aevaluate()``).

    Args:
        metric: An ek metric instance, class or registered name.
        name: The result column (default: the metric's name and its non-default arguments,
            ``"ek_trajectory(scheme=exact)"``; see
            :func:`~ek.adapters.ragas._names.default_name`). A name given twice in one
            ``evaluate()`` raises ``ValueError``.
        check: Success checker for a metric built from a name or class.
        grammar: Cost grammar, likewise.
        price: A :class:`~ek.agents.cost.ModelPrice`, likewise.
        prices: A ``{model: ModelPrice}`` catalogue, likewise.
        reference_is_json: Decode ``reference`` as JSON (e.g. a goal state).

    Scores are :class:`EkRagasScore` floats (NaN where ek's value is undefined, the reason on
    the score), each equal to the ek metric's own value; :func:`to_pandas_with_reasons` puts the
    reasons in the data frame. The required column (see :func:`required_columns`) is declared,
    so ``evaluate()`` refuses a dataset whose first sample lacks it. A row ek cannot score (a
    later sample without that column, an unreadable conversation, a metric that failed) is NaN
    with ek's reason on the score (``unscored: ...``) rather than Ragas' bare NaN; with
    ``evaluate(..., raise_exceptions=True)`` it raises instead, and :meth:`score_sample` always
    raises.

    Ragas' summary of a result is its own mean of the per-sample values (NaN skipped); ek's
    corpus aggregate (a ratio of sums) is :meth:`aggregate`, which says how many rows were left
    unscored and why.
    """

    _required_columns: dict[MetricType, set[str]] = field(default_factory=_columns)
    name: str = ""
    metric: Any = None
    check: Any = None
    grammar: Any = None
    price: Any = None
    prices: Any = None
    reference_is_json: bool = False

    def __post_init__(self) -> None:
        if self.metric is None:
            raise TypeError("EkRagasMetric needs metric=<an ek metric, class or registered name>")
        self._ek = resolve_metric(
            self.metric,
            check=self.check,
            grammar=self.grammar,
            price=self.price,
            prices=self.prices,
        )
        if not self.name:
            self.name = default_name(self._ek)
        self._required_columns = {MetricType.MULTI_TURN: set(required_columns(self._ek))}
        self._raise = True  # outside an evaluation (direct calls), an unscorable row raises
        super().__post_init__()

    @property
    def ek_metric(self) -> Any:
        """The wrapped ek metric instance."""
        return self._ek

    @property
    def higher_is_better(self) -> bool:
        """The wrapped metric's direction."""
        return bool(getattr(self._ek, "higher_is_better", True))

    def init(self, run_config: Any) -> None:
        """No LLM, no embeddings; refuses a result name that the evaluation already uses, and
        takes the evaluation's ``raise_exceptions`` (an unscorable row: NaN with the reason, or
        raised).

        Raises:
            ValueError: another metric of the same ``evaluate()`` / ``aevaluate()`` call files
                its results under this metric's name (Ragas would keep only the last).
        """
        call = _evaluation_call()
        metrics = None if call is None else call.get("metrics")
        if isinstance(metrics, list) and any(m is self for m in metrics):
            check_unique_names([_result_key(m) for m in metrics])
            self._raise = bool(call.get("raise_exceptions"))  # type: ignore[union-attr]

    def score_sample(self, sample: Any) -> EkRagasScore:
        """Score one ``MultiTurnSample`` (or row / message list) directly.

        Raises:
            ValueError: the sample lacks the column this metric needs (see
                :func:`required_columns`).
        """
        episode, gold = from_ragas_sample(sample, reference_is_json=self.reference_is_json)
        if not isinstance(sample, (list, tuple)):
            _check_gold(self.name, self._ek, gold.gold, gold.gold_calls)
        reason, score = _with_note(run_metric(self._ek, episode, gold), self._ek, gold)
        return EkRagasScore(score.value, reason, score.detail, episode.task_id)

    def aggregate(self, scores: Sequence[float]) -> EkRagasAggregate:
        """ek's corpus aggregate of this metric's per-sample scores (a ratio of sums), over the
        rows ek scored.

        Args:
            scores: The :class:`EkRagasScore` values of one result column
                (``result[m.name]``, or ``[row[m.name] for row in result.scores]``).

        Returns:
            An :class:`EkRagasAggregate`: a ``float`` (NaN when no row was scored) with
            ``scored``, ``unscored`` and ``reasons`` (why each left-out row was not scored: ek
            refused it, or Ragas recorded a bare NaN); a ``UserWarning`` says so when rows were
            left out.

        Raises:
            TypeError: a number that does not carry ek's detail (not an :class:`EkRagasScore`).
        """
        scored, reasons = split_scored(list(scores))
        values = [Score(float(v), v.detail) for v in scored]
        value = float(self._ek.aggregate(values)) if values else math.nan
        out = EkRagasAggregate(value, len(values), reasons)
        if reasons:
            warnings.warn(f"{self.name}: ek aggregate {out.reason}", UserWarning, stacklevel=2)
        return out

    async def _multi_turn_ascore(self, sample: Any, callbacks: Any) -> float:
        try:
            return self.score_sample(sample)
        except (TypeError, ValueError, EkAdapterError) as e:
            if self._raise:
                raise
            return EkRagasScore.refused(str(e) or type(e).__name__)


class EkCollectionsMetric(BaseMetric):
    """An ek metric as a Ragas collections ``BaseMetric`` (``ascore`` / ``@experiment``).

    ``ascore(user_input, reference=None, reference_tool_calls=None, task_id=None)`` returns a
    ``MetricResult`` whose ``value`` is ek's number (NaN where undefined), ``reason`` ek's reason,
    and ``traces`` ``{"input": {"task_id": ...}, "output": <ek detail as a dict>}``. Arguments as
    for :class:`EkRagasMetric`.
    """

    def __init__(
        self,
        metric: Any,
        *,
        name: str | None = None,
        check: Any = None,
        grammar: Any = None,
        price: Any = None,
        prices: Any = None,
        reference_is_json: bool = False,
    ) -> None:
        ek = resolve_metric(metric, check=check, grammar=grammar, price=price, prices=prices)
        higher = bool(getattr(ek, "higher_is_better", True))
        super().__init__(
            name=name or default_name(ek),
            allowed_values=(0.0, 1.0) if higher else (0.0, math.inf),
        )
        self.metric = metric
        self.reference_is_json = reference_is_json
        self.higher_is_better = higher
        self._ek = ek

    @property
    def ek_metric(self) -> Any:
        """The wrapped ek metric instance."""
        return self._ek

    async def ascore(  # type: ignore[override]
        self,
        user_input: list[Any],
        reference: str | None = None,
        reference_tool_calls: list[Any] | None = None,
        task_id: str | None = None,
    ) -> MetricResult:
        """Score one conversation (the columns of a ``MultiTurnSample``).

        Raises:
            ValueError: the column this metric needs (see :func:`required_columns`) is ``None``.
        """
        _check_gold(self.name, self._ek, reference, reference_tool_calls)
        row = {
            "user_input": user_input,
            "reference": reference,
            "reference_tool_calls": reference_tool_calls,
        }
        episode, gold = from_ragas_sample(
            row, task_id=task_id, reference_is_json=self.reference_is_json
        )
        reason, s = _with_note(run_metric(self._ek, episode, gold), self._ek, gold)
        return MetricResult(
            value=s.value,
            reason=reason,
            traces={"input": {"task_id": episode.task_id}, "output": dict(s.detail)},
        )


def ek_ragas_metric(
    metric: Any,
    *,
    api: t.Literal["evaluate", "experiment"] = "evaluate",
    name: str | None = None,
    check: Any = None,
    grammar: Any = None,
    price: Any = None,
    prices: Any = None,
    reference_is_json: bool = False,
) -> EkRagasMetric | EkCollectionsMetric:
    """Wrap an ek metric for Ragas.

    Args:
        metric: An ek metric instance, class or registered name.
        api: ``"evaluate"`` (default): a classic :class:`EkRagasMetric` for ``ragas.evaluate()``
            / ``aevaluate()``; ``"experiment"``: an :class:`EkCollectionsMetric` for ``ascore``
            and ``@experiment``.
        name: The result name (default: the metric's name and its non-default arguments, e.g.
            ``"ek_trajectory(scheme=exact)"``; Ragas keys results by name, and a name given
            twice in one ``evaluate()`` raises).
        check, grammar, price, prices: Constructor options for a metric given as a name or class.
        reference_is_json: Decode ``reference`` as JSON.

    Raises:
        ValueError: an unknown ``api``.
    """
    if api == "evaluate":
        return EkRagasMetric(
            name=name or "",
            metric=metric,
            check=check,
            grammar=grammar,
            price=price,
            prices=prices,
            reference_is_json=reference_is_json,
        )
    if api == "experiment":
        return EkCollectionsMetric(
            metric,
            name=name,
            check=check,
            grammar=grammar,
            price=price,
            prices=prices,
            reference_is_json=reference_is_json,
        )
    raise ValueError(f"api must be 'evaluate' or 'experiment', got {short_repr(api)}")
