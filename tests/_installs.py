"""What an extra of ek installs, read from the installed metadata (offline, no resolver).

``extra_distributions("inspect")`` is every distribution ``pip install ".[inspect]"`` brings in
(the extra's requirements and, recursively, theirs, as installed here); ``import_names`` the
top-level modules those distributions provide. Tests use them to check that an extra installs
what an example or the demo imports.
"""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def requirement_names(reqs: list[str], extras: frozenset[str] = frozenset()) -> set[str]:
    """The distribution names of requirement strings (those for other extras left out)."""
    out = set()
    for r in reqs:
        name, _, marker = r.partition(";")
        wanted = re.findall(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if wanted and not set(wanted) & extras:
            continue
        out.add(normalise(re.split(r"[\s<>=!~\[(@]", name.strip(), maxsplit=1)[0]))
    return out


def normalise(name: str) -> str:
    """A distribution name as pip compares them (``Pydantic_AI.slim`` -> ``pydantic-ai-slim``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(names: set[str]) -> set[str]:
    """Every distribution the names install (their installed metadata, no extras)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        with contextlib.suppress(md.PackageNotFoundError):  # not installed: no requirements
            todo.extend(requirement_names(md.requires(name) or []))
    return seen


def extra_requirements(*extras: str) -> list[str]:
    """The requirement strings of ek's extras, from ``pyproject.toml``."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [r for e in extras for r in table["optional-dependencies"][e]]


def extra_distributions(*extras: str) -> set[str]:
    """Every distribution ``pip install ".[extras]"`` installs (as installed here)."""
    return closure(requirement_names(extra_requirements(*extras)))


def import_names(dists: set[str]) -> set[str]:
    """The top-level modules the distributions provide."""
    return {
        top
        for top, owners in md.packages_distributions().items()
        if any(normalise(d) in dists for d in owners)
    }
