"""Adapters from ek to host frameworks; each subpackage needs its extra (e.g. ``ek-agents[inspect]``)."""

__all__: list[str] = []
