"""``deepeval test run examples/deepeval_test_example.py`` in a subprocess, offline.

The child runs in a temp directory with its own ``pytest.ini`` (so the project's addopts,
including ``-p no:deepeval``, do not apply), HOME and XDG dirs in that directory, telemetry and
file writes off, and a ``sitecustomize.py`` on ``PYTHONPATH`` that installs the socket guard of
``tests/_offline.py`` and **exits 97 if anything even tried** a non-local connection.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("deepeval")

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
EXAMPLE = ROOT / "examples" / "deepeval_test_example.py"

SITECUSTOMIZE = """
import atexit, os, socket, sys
sys.path.insert(0, {tests!r})
import _offline

_offline.install()
_attempts = []
_connect, _gai = socket.socket.connect, socket.getaddrinfo


def _record_connect(self, address):
    if not _offline._is_local(address):
        _attempts.append(repr(address))
    return _connect(self, address)


def _record_gai(host, *args, **kwargs):
    h = host.decode() if isinstance(host, bytes) else host
    if h is not None and not _offline._is_local((h,)) and h != socket.gethostname():
        _attempts.append(repr(h))
    return _gai(host, *args, **kwargs)


socket.socket.connect = _record_connect
socket.getaddrinfo = _record_gai


@atexit.register
def _fail_on_network():
    if _attempts:
        sys.stderr.write("NETWORK ATTEMPTS: %s\\n" % _attempts)
        sys.stderr.flush()
        os._exit(97)
"""


def _offline_env(tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir()
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "PYTHONPATH": str(tmp / "site"),
        "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
        "DEEPEVAL_FILE_SYSTEM": "READ_ONLY",
        "DEEPEVAL_DISABLE_DOTENV": "1",
        "DEEPEVAL_NO_INSPECT_PROMPT": "1",
        "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
        "RAGAS_DO_NOT_TRACK": "true",
        "DO_NOT_TRACK": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NO_COLOR": "1",
        "COLUMNS": "300",
    }


@pytest.mark.slow
def test_deepeval_test_run_subprocess(tmp_path: Path) -> None:
    deepeval_cli = Path(sys.executable).parent / "deepeval"
    if not deepeval_cli.exists():
        pytest.skip(f"no deepeval CLI next to {sys.executable}")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE.format(tests=str(TESTS)))
    work = tmp_path / "work"
    work.mkdir()
    # named test_*: `deepeval test run` before 4.0.10 refuses any other file name
    shutil.copy(EXAMPLE, work / f"test_{EXAMPLE.name}")
    (work / "pytest.ini").write_text(
        "[pytest]\naddopts = -p no:cacheprovider\nasyncio_default_fixture_loop_scope = function\n"
    )
    before = sorted(p.name for p in work.iterdir())
    proc = subprocess.run(
        [str(deepeval_cli), "test", "run", f"test_{EXAMPLE.name}"],
        cwd=work,
        env=_offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "NETWORK ATTEMPTS" not in out
    assert "3 passed" in out, out[-4000:]
    # ek's metric names reach DeepEval's results table.
    assert "ek:ToolCallMetric" in out and "ek:TrajectoryMetric" in out, out[-4000:]
    # DeepEval records the double refund and the malformed refund that ek failed (inside
    # pytest.raises) as failures.
    assert "Passed: 1 | Failed: 2" in out, out[-4000:]
    # READ_ONLY: no .deepeval results in the working directory.
    assert sorted(p.name for p in work.iterdir()) == before
