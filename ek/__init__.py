"""ek: a small, dependency-free evaluation kit.

The core (``ek.base``, ``ek.registry``, ``ek.grammar``, ``ek.fields``, ``ek.canon``,
``ek.evaluate``) is the substrate; ``ek.agents`` is the agent-evaluation instance built on it.

Example:
    >>> import ek
    >>> ek.Score(1.0, {"reason": "exact match"}).reason
    'exact match'
"""

from __future__ import annotations

from ek.base import Metric, Score, Signal, is_episode
from ek.canon import default_canonicalizer
from ek.evaluate import EvaluationResult, evaluate
from ek.grammar import FieldSpec, GraphGrammar, NodeType
from ek.harness import regression_gate
from ek.iaa import Agreement, UndefinedAgreementWarning, cohen_kappa, krippendorff_alpha
from ek.quality import (
    JUDGE_COST_TIER,
    IsotonicCalibrator,
    QualityEstimate,
    UncalibratedScoreError,
    estimate_quality,
    fit_isotonic,
)
from ek.registry import register, registered, resolve

__version__ = "0.1.0"

__all__ = [
    "JUDGE_COST_TIER",
    "Agreement",
    "EvaluationResult",
    "FieldSpec",
    "GraphGrammar",
    "IsotonicCalibrator",
    "Metric",
    "NodeType",
    "QualityEstimate",
    "Score",
    "Signal",
    "UncalibratedScoreError",
    "UndefinedAgreementWarning",
    "__version__",
    "cohen_kappa",
    "default_canonicalizer",
    "estimate_quality",
    "evaluate",
    "fit_isotonic",
    "is_episode",
    "krippendorff_alpha",
    "register",
    "registered",
    "regression_gate",
    "resolve",
]
