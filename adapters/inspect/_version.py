"""The Inspect AI releases this adapter supports, checked when it is imported.

The floor is the oldest release ``make test-hosts`` passes (see ``docs/host_versions.md``).
What the adapter needs and :func:`missing_features` checks: ``@metric(scores="unreduced")`` (from
0.3.241; before it ek's corpus metrics would see one reduced score per sample, with the first
epoch's metadata only: a wrong number with no error) and ``Score.unscored(reason=...)`` (from
0.3.262 at the latest; before it a raising ek metric errors the eval). The bare-name alias that
lets ``inspect score LOG`` reload ek scorers reads Inspect's private registry, guarded where it is
used (``_names``).
"""

from __future__ import annotations

import inspect as _pyinspect

from ek.adapters._versions import HOSTS, load_host

__all__ = ["INSTALLED", "SUPPORTED", "missing_features"]

SUPPORTED = HOSTS["inspect"]


def missing_features() -> list[str]:
    """What the installed Inspect lacks of the metric and score API ek scores with."""
    from inspect_ai.scorer import Score, metric

    missing = []
    if "scores" not in _pyinspect.signature(metric).parameters:
        missing.append("@metric(scores='unreduced')")
    if "reason" not in _pyinspect.signature(Score.unscored).parameters:
        missing.append("Score.unscored(reason=)")
    return missing


#: The installed host version, checked when the adapter is imported (refused outside
#: :data:`SUPPORTED` before the host is imported, then for what :func:`missing_features` finds).
INSTALLED = load_host("inspect", "inspect_ai", "Inspect AI", missing_features)
