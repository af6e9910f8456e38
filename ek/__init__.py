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
from ek.registry import register, registered, resolve

__version__ = "0.1.0"

__all__ = [
    "EvaluationResult",
    "FieldSpec",
    "GraphGrammar",
    "Metric",
    "NodeType",
    "Score",
    "Signal",
    "__version__",
    "default_canonicalizer",
    "evaluate",
    "is_episode",
    "register",
    "registered",
    "resolve",
]
