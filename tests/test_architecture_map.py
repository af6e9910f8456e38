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
FLAT = (
    "ek",
    "ek/agents",
    "ek/agents/_run",
    "ek/agents/toolcalls",
    "ek/agents/bridge",
    "ek/agents/traces",
)
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


# ----------------------------------------------------------------------------- dependency direction
#: The layers, lowest first: a module may import its own layer and the ones below, never above
#: (docs/architecture.md: "Dependencies point one way: adapters -> ek.agents -> ek").
LAYERS = ("ek", "ek.agents", "ek.adapters")


def _layer(module: str) -> int:
    return max(i for i, top in enumerate(LAYERS) if module == top or module.startswith(top + "."))


def _imports_of(path: Path, module: str) -> set[str]:
    """Every ek module ``path`` imports, at the top or inside a function, absolute or relative."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found |= {f"{name}.{a.name}" for a in node.names}
    return {n for n in found if n == "ek" or n.startswith("ek.")}


def _ek_sources() -> list[tuple[Path, str]]:
    out = []
    for path in sorted((ROOT / "ek").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        out.append((path, ".".join(parts)))
    return out


def test_dependencies_point_one_way() -> None:
    upward = []
    for path, module in _ek_sources():
        for imported in _imports_of(path, module):
            known = [t for t in LAYERS if imported == t or imported.startswith(t + ".")]
            if known and _layer(imported) > _layer(module):
                upward.append(f"{module} imports {imported}")
    assert not upward, upward


def test_the_map_states_the_direction() -> None:
    assert "Dependencies point one way: `adapters` -> `ek.agents` -> `ek`." in MAP
