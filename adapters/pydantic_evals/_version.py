"""The pydantic-evals releases this adapter supports, checked when it is imported.

The floor is the oldest release ``make test-hosts`` passes (see ``docs/host_versions.md``):
before 2.4 a span-tree node has no ``status``, so a tool call that failed could not be told from
one that succeeded, and the 1.x line (still maintained) is the same; that is refused by the
version and by the feature itself (:func:`missing_features`).
"""

from __future__ import annotations

import dataclasses

from ek.adapters._versions import HOSTS, load_host

__all__ = ["INSTALLED", "SUPPORTED", "missing_features"]

SUPPORTED = HOSTS["pydantic_evals"]


def missing_features() -> list[str]:
    """What the installed pydantic-evals lacks: a status on span-tree nodes."""
    from pydantic_evals.otel.span_tree import SpanNode

    fields = (
        {f.name for f in dataclasses.fields(SpanNode)}
        if dataclasses.is_dataclass(SpanNode)
        else set()
    )
    return [] if "status" in fields else ["SpanNode.status"]


#: The installed host version, checked when the adapter is imported (refused outside
#: :data:`SUPPORTED` before the host is imported, then for what :func:`missing_features` finds).
INSTALLED = load_host("pydantic_evals", "pydantic_evals", "pydantic-evals", missing_features)
