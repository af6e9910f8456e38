"""docs/architecture.md's module map matches the code (issue 17: "the module map matches").

Every module of the core's flat packages is named in the map, and every package (a directory
with an ``__init__.py``) under ``ek/``, ``ek/agents/`` and ``adapters/`` is named as ``name/``;
the packages listed as a whole (the verifier, the demo, the pytest plugin, the adapters) keep
their private modules to themselves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAP = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")

#: packages whose every module the map names
FLAT = ("ek", "ek/agents", "ek/agents/toolcalls", "ek/agents/bridge", "ek/agents/traces")
#: directories whose packages the map names
NESTING = ("ek", "ek/agents", "adapters")


def _modules() -> list[str]:
    return sorted(
        f"{d}/{p.name}"
        for d in FLAT
        if (ROOT / d).is_dir()
        for p in (ROOT / d).glob("*.py")
        if p.name != "__init__.py"
    )


def _packages() -> list[str]:
    return sorted(
        f"{d}/{p.name}"
        for d in NESTING
        for p in (ROOT / d).iterdir()
        if p.is_dir() and (p / "__init__.py").exists()
    )


@pytest.mark.parametrize("module", _modules())
def test_every_module_is_on_the_map(module: str) -> None:
    assert f" {Path(module).name} " in MAP, f"{module} is missing from docs/architecture.md"


@pytest.mark.parametrize("package", _packages())
def test_every_package_is_on_the_map(package: str) -> None:
    named = re.search(rf"^\s+{Path(package).name}/\s", MAP, re.M)
    assert named, f"{package}/ is missing from docs/architecture.md"


def test_the_map_names_no_module_that_is_gone() -> None:
    named = {
        line.split()[0]
        for line in MAP.splitlines()
        if line.strip().endswith(".py") is False
        and line.startswith("  ")
        and line.split()
        and line.split()[0].endswith(".py")
    }
    existing = {Path(m).name for m in _modules()} | {
        p.name
        for d in ("ek/agents/verifier", "ek/agents/pytest_plugin", "ek/adapters")
        for p in (ROOT / d).glob("*.py")
    }
    assert named <= existing, sorted(named - existing)
