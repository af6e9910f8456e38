"""Red-team workspaces for the isolated hidden-test checker (see docs/verifier_isolation.md)."""

from __future__ import annotations

__all__: list[str] = []
