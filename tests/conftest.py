"""Test configuration: offline, no telemetry, and a guard that fails any outbound connection.

Every host framework's telemetry is switched off before anything imports it; the guard below
patches socket connections so that a test which tries to reach a non-local address fails loudly
(instead of hanging or quietly phoning home). Loopback and Unix sockets stay allowed (asyncio,
dask's LocalCluster and subprocess pipes need them).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from _offline import install

_SCRATCH = Path(tempfile.mkdtemp(prefix="ek-tests-home-"))
atexit.register(shutil.rmtree, _SCRATCH, True)  # each test process removes its own

_ENV = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_FILE_SYSTEM": "READ_ONLY",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
    "DEEPEVAL_GRPC_LOGGING": "0",
    "RAGAS_DO_NOT_TRACK": "true",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "ANONYMIZED_TELEMETRY": "False",
    "DO_NOT_TRACK": "1",
    "XDG_DATA_HOME": str(_SCRATCH / "xdg-data"),
    "XDG_CACHE_HOME": str(_SCRATCH / "xdg-cache"),
    "XDG_CONFIG_HOME": str(_SCRATCH / "xdg-config"),
    "INSPECT_LOG_DIR": str(_SCRATCH / "inspect-logs"),
}
for _k, _v in _ENV.items():
    os.environ[_k] = _v
os.environ.pop("INSPECT_TELEMETRY", None)  # Inspect reads it as a `module.function` hook
for _k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "CONFIDENT_API_KEY"):
    os.environ.pop(_k, None)

DATA = Path(__file__).parent / "data"

install()

try:  # no test may depend on the machine's speed: hypothesis has no deadline, here or in CI
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - the core-only venv has hypothesis too
    pass
else:
    _hypothesis_settings.register_profile("ek", deadline=None)
    _hypothesis_settings.load_profile("ek")


@pytest.fixture
def data_dir() -> Path:
    """The folder of test data copied from the reference sources (see tests/data/README.md)."""
    return DATA


@pytest.fixture
def no_network() -> Iterator[None]:
    """Explicit marker fixture: the guard is always on; this documents that a test relies on it."""
    yield
