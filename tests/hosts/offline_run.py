"""Run an example offline: the test suite's network guard first, then the script or command.

Usage (from the repository root, with the environment's python)::

    python tests/hosts/offline_run.py examples/ragas_example.py
    python tests/hosts/offline_run.py --call deepeval.cli.main:app test run examples/x.py

Any connection to a non-local address raises ``_offline.NetworkBlocked`` (see tests/_offline.py).
"""

from __future__ import annotations

import importlib
import runpy
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> None:
    sys.path.insert(0, str(TESTS))
    import _offline

    _offline.install()
    if argv[:1] == ["--call"]:
        module, _, attr = argv[1].partition(":")
        sys.argv = [module, *argv[2:]]
        getattr(importlib.import_module(module), attr)()
        return
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
