"""One import path per public name (issue 31): the faces, their ``__all__``, and what the docs import.

The rule (docs/architecture.md): a module is public when no part of its dotted name starts with
``_``; a package's sub-modules are private (``ek/agents/toolcalls/_parse.py``) and its
``__init__`` is its face. Every public module declares a string ``__all__``, and

* a name appears in the ``__all__`` of exactly one public module (its face);
* a name a face exports is the object that module holds (no dangling entries);
* a class or function a face exports mentions in its signature only types some face exports
  (a user can name what they are given);
* the README, ``examples/`` and ``docs/`` import only from public modules, and only names the
  module exports.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import warnings
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import ek

ROOT = Path(__file__).resolve().parents[1]

#: Sub-packages that need a host framework (an extra) to import.
HOSTS = ("ek.adapters.inspect", "ek.adapters.deepeval", "ek.adapters.ragas")


def _is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def _public_modules() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {"ek": ek}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in pkgutil.walk_packages(ek.__path__, "ek."):
            if not _is_public(info.name):
                continue
            try:
                found[info.name] = importlib.import_module(info.name)
            except ImportError:
                if info.name.startswith(HOSTS):
                    continue  # its extra is not installed here
                raise
    return found


MODULES = _public_modules()


def _faces() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for name, mod in MODULES.items():
        for entry in getattr(mod, "__all__", ()):
            where[entry].append(name)
    return where


FACES = _faces()


def test_every_public_module_declares_a_string_all() -> None:
    missing = [n for n, m in MODULES.items() if not isinstance(getattr(m, "__all__", None), list)]
    assert not missing, f"public modules without an __all__ list: {missing}"
    bad = {n: [e for e in m.__all__ if not isinstance(e, str)] for n, m in MODULES.items()}
    assert not any(bad.values()), bad


def test_a_name_has_one_face() -> None:
    twice = {name: where for name, where in FACES.items() if len(where) > 1}
    assert not twice, f"names exported by more than one public module: {twice}"


def test_every_exported_name_exists() -> None:
    dangling = [f"{n}.{e}" for n, m in MODULES.items() for e in m.__all__ if not hasattr(m, e)]
    assert not dangling, dangling


def test_the_known_faces_hold_the_specs_names() -> None:
    # the spec's "where things are" table and issue 31's decisions, spot-checked
    assert FACES["Episode"] == ["ek.agents.base"]
    assert FACES["TaskSpec"] == ["ek.agents.base"]
    assert FACES["run_suite"] == ["ek.agents.harness"]
    assert FACES["agent_regression_gate"] == ["ek.agents.harness"]
    assert FACES["TrialContext"] == ["ek.agents.harness"]
    assert FACES["regression_gate"] == ["ek.harness"]
    assert FACES["wilson_interval"] == ["ek.stats"]
    assert FACES["Budget"] == ["ek.agents"]
    assert len(MODULES["ek.agents"].__all__) <= 50
    assert MODULES["ek"].__all__ == []


def _signature_types(obj: Any) -> set[type]:
    """The ek classes named in ``obj``'s signature (its parameters and return annotation)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return set()
    texts = [p.annotation for p in sig.parameters.values()] + [sig.return_annotation]
    scope = vars(importlib.import_module(obj.__module__))
    found = set()
    for text in texts:
        if not isinstance(text, str):
            continue
        for word in re.findall(r"[A-Za-z_]\w*", text):
            value = scope.get(word)
            if isinstance(value, type) and value.__module__.startswith("ek."):
                found.add(value)
    return found


def test_a_face_gives_only_types_a_user_can_import() -> None:
    exported = {id(getattr(m, e)) for m in MODULES.values() for e in m.__all__ if hasattr(m, e)}
    hidden = []
    for name, mod in MODULES.items():
        for entry in mod.__all__:
            obj = getattr(mod, entry, None)
            targets = [obj]
            if isinstance(obj, type):
                targets += [
                    v
                    for k, v in vars(obj).items()
                    if inspect.isfunction(v) and (not k.startswith("_") or k == "__init__")
                ]
            for target in targets:
                if not inspect.isfunction(target) and not isinstance(target, type):
                    continue
                for t in _signature_types(target):
                    where = f"{t.__module__}.{t.__qualname__}"
                    if id(t) not in exported and not _is_public(t.__module__):
                        hidden.append(f"{name}.{entry}: {where}")
    assert not hidden, f"signatures naming a type no face exports: {sorted(set(hidden))}"


def _doc_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    files += sorted((ROOT / "examples").glob("*.py"))
    return [f for f in files if f.exists()]


FROM = re.compile(r"^\s*(?:>>> |\.\.\. )?from (ek(?:\.\w+)*) import (.*)$")
IMPORT_MODULE = re.compile(r"^\s*(?:>>> )?import (ek(?:\.\w+)*)", re.M)


def _imports(text: str) -> list[tuple[str, list[str]]]:
    """Every ``from ek... import a, b`` in ``text`` (parenthesised ones over several lines)."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = FROM.match(line)
        if not m:
            continue
        rest = m[2].split("#")[0]
        if rest.strip().startswith("(") and ")" not in rest:
            j = i + 1
            while j < len(lines) and ")" not in lines[j]:
                rest += " " + lines[j].split("#")[0]
                j += 1
            if j < len(lines):
                rest += " " + lines[j].split(")")[0]
        rest = rest.split(";")[0].replace("(", " ").replace(")", " ")
        names = [n.split(" as ")[0].strip() for n in rest.split(",")]
        found.append((m[1], [n for n in names if n.isidentifier()]))
    return found


@pytest.mark.parametrize("path", _doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_and_examples_import_from_the_faces(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    wrong = []
    for m in IMPORT_MODULE.finditer(text):
        if not _is_public(m[1]):
            wrong.append(f"import {m[1]} (a private module)")
    for module, names in _imports(text):
        if not _is_public(module):
            wrong.append(f"from {module} import ... (a private module)")
            continue
        if module.startswith(HOSTS) or module not in MODULES:
            continue
        exported = set(MODULES[module].__all__)
        wrong += [
            f"from {module} import {n} (its face is {FACES.get(n, ['none'])[0]})"
            for n in names
            if n not in exported and f"{module}.{n}" not in MODULES
        ]
    assert not wrong, f"{path.name}: {wrong}"


def test_no_public_module_is_only_a_rename() -> None:
    # Deprecated aliases and facades are gone: the old paths do not import.
    for gone in ("ek.scalar_gate", "ek.pytest_plugin", "ek.agents.episode", "ek.agents.spec"):
        with pytest.raises(ImportError):
            importlib.import_module(gone)
