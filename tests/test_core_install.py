"""The core installs alone: nothing in the core package imports a host framework or a plot library.

``pip install ek-agents`` (no extra) must give a working core. These tests run the core in a child
interpreter that can import only the standard library and ``ek`` itself (every other top-level
import raises ``ModuleNotFoundError``, as it would in a bare install), so they hold in the full
development environment too. ``make test-core`` runs them, the doctests and the other tests of
what changes without an extra (the Makefile's ``CORE_TESTS``) in a real core-only venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Installed into the child before anything of ek is imported: only the standard library, ek and
# what the interpreter loaded at start-up (site hooks, the editable-install finder) import.
_BARE = textwrap.dedent(
    """
    import importlib.abc, sys

    _STARTUP = {m.partition(".")[0] for m in sys.modules}
    _ALLOWED = set(sys.stdlib_module_names) | _STARTUP | {"ek"}

    class _BareInstall(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] not in _ALLOWED:
                raise ModuleNotFoundError(f"No module named {name!r} (bare install)", name=name)
            return None

    sys.meta_path.insert(0, _BareInstall())
    """
)

#: (module under ek.adapters, the extra that installs its host)
_HOSTS = (
    ("inspect", "inspect"),
    ("deepeval", "deepeval"),
    ("ragas", "ragas"),
    ("pydantic_evals", "pydantic-evals"),
)


def _bare(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", _BARE + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd or ROOT,
    )


def test_every_core_module_imports_with_the_standard_library_alone() -> None:
    proc = _bare(
        """
        import importlib, json, pkgutil, sys
        import ek

        hosts = tuple(f"ek.adapters.{h}" for h in ("inspect", "deepeval", "ragas", "pydantic_evals"))
        # the pytest plugin imports pytest by design: pytest loads it, nothing in ek imports it
        hosts += ("ek.agents.pytest_plugin",)
        before = {m.partition(".")[0] for m in sys.modules}
        names, failed = [], {}
        for info in pkgutil.walk_packages(ek.__path__, "ek."):
            if info.name.startswith(hosts):
                continue
            names.append(info.name)
            try:
                importlib.import_module(info.name)
            except ImportError as e:
                failed[info.name] = repr(e)
        foreign = sorted({m.partition(".")[0] for m in sys.modules} - before - {"ek"}
                         - set(sys.stdlib_module_names))
        print(json.dumps({"names": names, "failed": failed, "foreign": foreign}))
        """
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["failed"] == {}, out["failed"]
    assert out["foreign"] == []
    # the walk really covered the core: the agents package, its demo and the demo's job
    assert {"ek.base", "ek.agents.metrics", "ek.agents.demo._run", "ek.agents.cli"} <= set(
        out["names"]
    )
    assert not any("inspect_task" in n for n in out["names"])  # moved to ek.adapters.inspect.demo


@pytest.mark.parametrize(("host", "extra"), _HOSTS)
def test_a_host_adapter_without_its_extra_names_the_extra(host: str, extra: str) -> None:
    proc = _bare(
        f"""
        try:
            import ek.adapters.{host}
        except ImportError as e:
            print("ImportError:", e)
        else:
            print("imported")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ImportError:"), proc.stdout
    assert f"pip install ek-agents[{extra}]" in proc.stdout


def test_the_demo_command_runs_on_the_core_and_skips_what_needs_an_extra(tmp_path: Path) -> None:
    # `ek-agents demo` (the README's first command) on a bare install: the own-harness run, the
    # gate and the report all run; the Inspect part and the plots each say in one line why not.
    proc = _bare(
        """
        import sys
        from ek.agents.cli import main
        sys.exit(main(["demo", sys.argv[1], "-k", "1", "--quiet"]))
        """,
        str(tmp_path / "run"),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert (
        "Inspect part skipped: inspect-ai is not installed (pip install ek-agents[inspect])"
        in lines
    )
    assert "plots skipped: matplotlib is not installed (pip install ek-agents[plot])" in lines
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "run" / "gate.json").is_file() and (
        tmp_path / "run" / "report.txt"
    ).is_file()
    assert not (tmp_path / "run" / "inspect").exists()


def test_the_test_extra_is_the_test_tools_and_make_test_runs_the_core_step() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["dependencies"] == []  # the core has no runtime dependency
    extras = project["optional-dependencies"]
    tools = {r.split(">")[0].split("=")[0] for r in extras["test"]}
    assert tools == {"pytest", "hypothesis", "pytest-xdist"}
    assert set(extras["test"]) <= set(extras["dev"])
    make = (ROOT / "Makefile").read_text("utf-8")
    test_rule = next(line for line in make.splitlines() if line.startswith("test:"))
    assert "test-core" in test_rule.split()
    assert '--python $(CORE_BIN)/python -c $(CONSTRAINTS) -e ".[test]"' in make


def test_the_wheel_lists_every_package_of_the_source_tree() -> None:
    # The package list in pyproject is explicit: a new package left out of it is missing from the
    # wheel (an editable install does not notice). Every folder with an __init__.py is listed.
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    found = {
        ".".join((name, *init.parent.relative_to(ROOT / path).parts))
        for name, path in tool["package-dir"].items()
        for init in (ROOT / path).rglob("__init__.py")
    }
    assert sorted(found) == sorted(tool["packages"])
