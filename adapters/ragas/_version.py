"""The Ragas releases this adapter supports, checked when it is imported.

The floor is the oldest release ``make test-hosts`` passes (see ``docs/host_versions.md``):
before 0.3.7 Ragas has no ``ragas.metrics.collections``, whose ``BaseMetric`` is one of the two
metric kinds the adapter ships (:func:`missing_features` checks it is there). 0.4.2 is refused:
importing it downloads a tokenizer, so it cannot run offline (and the check runs before Ragas is
imported, so the refusal itself downloads nothing). The ``[ragas]`` extra also bounds
``langchain-community<0.4.2``: 0.4.2 removed ``chat_models.vertexai``, which Ragas 0.4.3 imports.
"""

from __future__ import annotations

import importlib.util

from ek.adapters._versions import HOSTS, load_host

__all__ = ["INSTALLED", "SUPPORTED", "missing_features"]

SUPPORTED = HOSTS["ragas"]


def missing_features() -> list[str]:
    """What the installed Ragas lacks: the collections metric API (imports ``ragas.metrics``)."""
    found = importlib.util.find_spec("ragas.metrics.collections") is not None
    return [] if found else ["ragas.metrics.collections"]


#: The installed host version, checked when the adapter is imported (refused outside
#: :data:`SUPPORTED` before the host is imported, then for what :func:`missing_features` finds).
INSTALLED = load_host("ragas", "ragas", "Ragas", missing_features)
