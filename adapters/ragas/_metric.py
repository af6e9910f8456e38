"""The Ragas metric shells: classic :class:`EkRagasMetric`, collections :class:`EkCollectionsMetric`.

Ragas facts they are built around (ragas 0.4.3, see the project notes): the classic base rebuilds
each sample with **only the declared columns** before scoring (an undeclared column reads as
``None``), so every column read is declared; classic metrics must return a plain number (a
``MetricResult`` or ``None`` crashes ``evaluate()`` after all rows ran); a metric object with a
``mode`` attribute changes its result key, so the shells have none; two metrics with the same
``name`` share one result column (the last wins), so give each configuration its own ``name``.
"""

from __future__ import annotations

import math
import typing as t
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from ragas.metrics import MetricResult
    from ragas.metrics.base import MetricType, MultiTurnMetric
    from ragas.metrics.collections import BaseMetric

from ek.adapters._shell import resolve_metric, run_metric
from ek.agents._bridge_ragas import from_ragas_sample
from ek.base import Score

__all__ = [
    "REQUIRED_COLUMNS",
    "EkCollectionsMetric",
    "EkRagasMetric",
    "EkRagasScore",
    "ek_ragas_metric",
]

#: The sample columns the shells read (``reference`` and ``reference_tool_calls`` optional).
REQUIRED_COLUMNS = frozenset({"user_input", "reference:optional", "reference_tool_calls:optional"})


def _columns() -> dict[MetricType, set[str]]:
    return {MetricType.MULTI_TURN: set(REQUIRED_COLUMNS)}


class EkRagasScore(float):
    """A plain ``float`` (what Ragas' ``evaluate()`` needs) that also carries ek's ``reason``,
    ``detail`` and ``task_id``; it arrives unchanged in ``EvaluationResult.scores``.

    Example:
        >>> s = EkRagasScore(float("nan"), "no gold calls", {"passed": False}, "t1")
        >>> isinstance(s, float), s.reason, s.task_id
        (True, 'no gold calls', 't1')
    """

    reason: str
    detail: Mapping[str, Any]
    task_id: str | None

    def __new__(
        cls,
        value: float,
        reason: str = "",
        detail: Mapping[str, Any] | None = None,
        task_id: str | None = None,
    ) -> EkRagasScore:
        obj = super().__new__(cls, value)
        obj.reason = reason
        # A Score's detail is already a read-only view of a private dict: share it.
        obj.detail = (
            detail if type(detail) is MappingProxyType else MappingProxyType(dict(detail or {}))
        )
        obj.task_id = task_id
        return obj

    @classmethod
    def from_score(cls, score: Score, task_id: str | None = None) -> EkRagasScore:
        """Wrap an ek :class:`~ek.base.Score`."""
        return cls(score.value, score.reason, score.detail, task_id)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (float(self), self.reason, dict(self.detail), self.task_id))

    def __repr__(self) -> str:
        return float.__repr__(self)


@dataclass
class EkRagasMetric(MultiTurnMetric):
    """An ek metric as a classic Ragas ``MultiTurnMetric`` (for ``evaluate()`` / ``aevaluate()``).

    Args:
        metric: An ek metric instance, class or registered name.
        name: The result column (default ``"ek_<metric name>"``).
        check: Success checker for a metric built from a name or class.
        grammar: Cost grammar, likewise.
        price: A :class:`~ek.agents.cost.ModelPrice`, likewise.
        prices: A ``{model: ModelPrice}`` catalogue, likewise.
        reference_is_json: Decode ``reference`` as JSON (e.g. a goal state).

    Scores are :class:`EkRagasScore` floats (NaN where ek's value is undefined, the reason on
    the score).
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
            self.name = f"ek_{getattr(self._ek, 'name', type(self._ek).__name__)}"
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
        """Nothing to initialise: no LLM, no embeddings."""

    def score_sample(self, sample: Any) -> EkRagasScore:
        """Score one ``MultiTurnSample`` (or row / message list) directly."""
        episode, gold = from_ragas_sample(sample, reference_is_json=self.reference_is_json)
        return EkRagasScore.from_score(run_metric(self._ek, episode, gold), episode.task_id)

    async def _multi_turn_ascore(self, sample: Any, callbacks: Any) -> float:
        return self.score_sample(sample)


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
            name=name or f"ek_{getattr(ek, 'name', type(ek).__name__)}",
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
        """Score one conversation (the columns of a ``MultiTurnSample``)."""
        row = {
            "user_input": user_input,
            "reference": reference,
            "reference_tool_calls": reference_tool_calls,
        }
        episode, gold = from_ragas_sample(
            row, task_id=task_id, reference_is_json=self.reference_is_json
        )
        s = run_metric(self._ek, episode, gold)
        return MetricResult(
            value=s.value,
            reason=s.reason,
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
        name: The result name (default ``"ek_<metric name>"``; give distinct configurations
            distinct names, Ragas keys results by name).
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
    raise ValueError(f"api must be 'evaluate' or 'experiment', got {api!r}")
