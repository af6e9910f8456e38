"""ek: a small, dependency-free evaluation kit.

The core modules are the substrate and each is the one import path of its names:
:mod:`ek.base` (``Score``, the ``Metric`` / ``Signal`` protocols), :mod:`ek.registry`,
:mod:`ek.grammar`, :mod:`ek.fields`, :mod:`ek.canon`, :mod:`ek.evaluate`, :mod:`ek.stats`,
:mod:`ek.iaa`, :mod:`ek.quality`, :mod:`ek.harness` (the scalar gate) and :mod:`ek.jsonio`.
This package re-exports none of them. ``ek.agents`` is the agent-evaluation instance built on
the core.

Example:
    >>> from ek.base import Score
    >>> Score(1.0, {"reason": "exact match"}).reason
    'exact match'
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__: list[str] = []
