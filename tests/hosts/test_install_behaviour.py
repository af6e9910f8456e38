"""What ``pip install ek-agents[<extra>]`` does to a user's environment (real installs).

Installs from the package index, so ``make test-hosts`` runs it (it sets ``EK_HOST_MATRIX_UV``
to a uv executable); elsewhere it skips. Each test builds a fresh environment with uv (with pip
seeded), installs a host the way a user already has it, then installs ek's wheel with its extra
using plain ``pip``, as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ek.adapters._versions import HOSTS

UV = os.environ.get("EK_HOST_MATRIX_UV", "")
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not UV, reason="installs from the package index: run by `make test-hosts`"
)


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    # outside the checkout: its own ek/ must not shadow the installed wheel
    proc = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=1800, cwd=tempfile.gettempdir()
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT))
    (found,) = out.glob("ek_agents-*.whl")
    return found


def _env(tmp_path: Path, *host: str) -> str:
    env = tmp_path / "venv"
    _run(UV, "venv", "-q", "--seed", "--python", sys.executable, str(env))
    py = str(env / "bin" / "python")
    _run(UV, "pip", "install", "-q", "--python", py, *host)
    return py


def _version(py: str, dist: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    return _run(py, "-c", code).stdout.strip().splitlines()[-1]


def _installed(py: str) -> dict[str, str]:
    """Every distribution in the environment (by its normalized name) and its version."""
    code = (
        "import importlib.metadata as m, json, re; print(json.dumps({re.sub(r'[-_.]+', '-', "
        "d.metadata['Name']).lower(): d.version for d in m.distributions()}))"
    )
    return json.loads(_run(py, "-c", code).stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("extra", "host"),
    [
        # the floor of the range, as a user pinned it
        ("inspect", [f"inspect-ai=={HOSTS['inspect'].floor}"]),
        # the case: the agent framework at 2.36 beside pydantic-evals
        ("pydantic-evals", ["pydantic-evals==2.36.0", "pydantic-ai-slim==2.36.0"]),
    ],
)
def test_installing_ek_leaves_a_supported_host_as_it_was(
    tmp_path: Path, wheel: Path, extra: str, host: list[str]
) -> None:
    py = _env(tmp_path, *host)
    before = _installed(py)
    assert all(before[h.split("==")[0]] == h.split("==")[1] for h in host), before
    _run(py, "-m", "pip", "install", "-q", f"{wheel}[{extra}]")
    after = _installed(py)
    # pip kept the user's host, its companion and every package they brought where they were
    # (it may only add what the extra needs and the host lacked, and ek itself)
    changed = {d: (v, after.get(d)) for d, v in before.items() if after.get(d) != v}
    assert changed == {}, changed
    _run(py, "-m", "pip", "check")  # and left a consistent environment
    _run(py, "-c", f"import ek.adapters.{extra.replace('-', '_')}")


def test_an_unsupported_host_is_refused_naming_the_range(tmp_path: Path, wheel: Path) -> None:
    host = HOSTS["deepeval"]
    py = _env(tmp_path, "deepeval==3.9.5")
    # DeepEval 3.9.5 drops a test case's metadata without a word: the reason it is refused
    code = "from deepeval.test_case import LLMTestCase as T; print('metadata' in T.model_fields)"
    assert _run(py, "-c", code).stdout.split()[-1] == "False"  # (after DeepEval's banner)
    # pip refuses the extra beside the user's pin, naming ek's range
    proc = _run(py, "-m", "pip", "install", f"{wheel}[deepeval]", "deepeval==3.9.5", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and host.floor in out and "deepeval" in out, out[-3000:]
    assert _version(py, "deepeval") == "3.9.5"  # and changed nothing
    # installed without the extra, the adapter refuses to import, naming the range and the fix
    _run(py, "-m", "pip", "install", "-q", "--no-deps", str(wheel))
    proc = _run(py, "-c", "import ek.adapters.deepeval", check=False)
    assert proc.returncode != 0
    assert f"found deepeval 3.9.5 (before {host.floor}" in proc.stderr, proc.stderr[-3000:]
    assert f"Fix: pip install '{host.requirement}'" in proc.stderr
