"""Where the ek pytest plugin comes from, and where it must never go.

* It is declared as the ``pytest11`` entry point ``ek.agents.pytest_plugin`` (and, when installed,
  resolves to that module). The entry point is named as the module so that ``-p ek.agents.pytest_plugin``
  (needed where autoloading is off) does not register the module twice where autoloading is on.
* The hidden-test verifier (``ek.agents.verifier``) runs hidden tests with plugin autoloading
  off: even in an interpreter where the ``ek`` entry point is installed, the verifier's isolated
  run does not load it, while a plain pytest run in the same interpreter does (the control).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# A hidden test that passes only where the ek plugin is absent.
PROBE = """
import sys

def test_ek_plugin_is_not_loaded(request):
    pm = request.config.pluginmanager
    mods = [getattr(p, "__name__", "") for p in pm.get_plugins()]
    assert "ek.agents.pytest_plugin" not in mods, mods
    assert pm.get_plugin("ek.agents.pytest_plugin") is None
    assert request.config.getoption("ek_trials", default="absent") == "absent"
    assert "ek.agents.pytest_plugin" not in sys.modules
"""


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


def test_entry_point_is_declared_in_pyproject() -> None:
    eps = _pyproject()["project"].get("entry-points", {}).get("pytest11", {})
    assert eps.get("ek.agents.pytest_plugin") == "ek.agents.pytest_plugin", (
        'pyproject.toml needs [project.entry-points.pytest11] "ek.agents.pytest_plugin" = "ek.agents.pytest_plugin"'
    )


def test_installed_entry_point_resolves_to_the_plugin_module() -> None:
    found = [ep for ep in entry_points(group="pytest11") if ep.name == "ek.agents.pytest_plugin"]
    if not found:
        pytest.skip("ek-agents is installed without its pytest11 entry point (reinstall it)")
    import ek.agents.pytest_plugin

    assert [ep.value for ep in found] == ["ek.agents.pytest_plugin"]
    assert found[0].load() is ek.agents.pytest_plugin


@pytest.fixture(scope="module")
def probe_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway virtualenv that sees this environment's packages (ek included) and in which
    the ``ek`` pytest11 entry point is installed (a one-file distribution declaring it)."""
    root = tmp_path_factory.mktemp("probe-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(site, "ek_probe_parent.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    dist = Path(site, "ek_probe-0.0.dist-info")
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ek-probe\nVersion: 0.0\n")
    (dist / "entry_points.txt").write_text(
        "[pytest11]\nek.agents.pytest_plugin = ek.agents.pytest_plugin\n"
    )
    return python


@pytest.mark.slow
def test_verifier_runs_do_not_load_the_ek_plugin(probe_python: Path, tmp_path: Path) -> None:
    from ek.agents.verifier import run_hidden_tests

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))}
    seen = subprocess.run(
        [
            str(probe_python),
            "-c",
            "from importlib.metadata import entry_points as e; "
            "print(sorted(p.value for p in e(group='pytest11') if p.name == 'ek.agents.pytest_plugin'))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert "ek.agents.pytest_plugin" in seen.stdout  # the entry point is installed there

    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_probe.py").write_text(PROBE)
    # control: plain pytest in that interpreter autoloads the plugin, so the probe fails
    # (deepeval's and langsmith's plugins are blocked only because they take seconds to load)
    quiet = ["-p", "no:cacheprovider", "-p", "no:deepeval", "-p", "no:langsmith_plugin"]
    control = subprocess.run(
        [str(probe_python), "-m", "pytest", "-q", *quiet, "test_probe.py"],
        cwd=hidden,
        capture_output=True,
        text=True,
        env=env,
    )
    assert control.returncode == 1, control.stdout + control.stderr
    assert "ek.agents.pytest_plugin" in control.stdout

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    verdict = run_hidden_tests(hidden, workspace, python=probe_python, timeout=120)
    assert verdict.passed, (verdict.status, verdict.reason, verdict.output[-2000:])
