"""The runner: the code that runs INSIDE the isolated test process, never in the checker's.

The checker does not import this module to use it: it reads this file's source text
(:func:`ek.agents.verifier.process.runner_source`), writes it into a private directory of each
run and executes it as ``python -I -B -X utf8 <private>/runner.py <workspace> <pytest args>``.
The test process therefore never imports the ``ek`` package, and nothing the workspace controls
is on ``sys.path`` before pytest and this reporter are imported. Keep it that way: this module
may import only the standard library (at the top) and pytest (inside :func:`main`), and must
stay importable without side effects (the doctest collector imports it).

The reporter writes one JSON record a line to the file descriptor named by ``EK_VERIFIER_FD``
(removed from the environment at startup): ``start``, each test phase (``test``), collection
errors and skips (``collect_error``, ``collect_skip``), ``finish``, ``exit``; or a single
``boot_error`` when pytest cannot be imported. :mod:`ek.agents.verifier.verdict` judges them.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the annotations only; at run time pytest is imported inside main()
    import pytest

__all__ = ["main"]

# Bound before any code under test runs, so that patching json or os later changes nothing here.
_dumps, _write = json.dumps, os.write


def _emit(fd: int, rec: dict[str, Any]) -> None:
    data = (_dumps(rec) + "\n").encode("utf-8", "replace")
    while data:
        data = data[_write(fd, data) :]


def _text(x: object) -> str:
    try:
        return str(x)[-1500:]
    except BaseException as e:  # an object under test whose __str__ raises anything at all
        return f"<unprintable: {type(e).__name__}>"


class _Reporter:
    """The pytest plugin that streams every outcome through the private pipe."""

    def __init__(self, fd: int, workspace: str, version: str) -> None:
        self.fd = fd
        self.workspace = workspace
        self.version = version

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Only now, with pytest and this reporter imported, may the workspace be imported, and
        # after the standard library so that it cannot shadow it.
        site = [i for i, p in enumerate(sys.path) if p.endswith(("site-packages", "dist-packages"))]
        sys.path.insert(site[0] if site else len(sys.path), self.workspace)
        _emit(self.fd, {"event": "start", "pytest": self.version})

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed or report.skipped:
            event = "collect_error" if report.failed else "collect_skip"
            rec = {"event": event, "nodeid": report.nodeid, "longrepr": _text(report.longrepr)}
            _emit(self.fd, rec)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec: dict[str, Any] = {
            "event": "test",
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
        }
        if hasattr(report, "wasxfail"):
            rec["xfail"] = True
        if report.failed:
            rec["longrepr"] = _text(report.longrepr)
        _emit(self.fd, rec)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        _emit(self.fd, {"event": "finish", "exitstatus": int(exitstatus)})


def main() -> None:
    """Run pytest on ``sys.argv[2:]`` with the reporter; the workspace is ``sys.argv[1]``."""
    fd = int(os.environ.pop("EK_VERIFIER_FD"))
    workspace = sys.argv[1]
    try:
        import pytest
    except BaseException as e:  # whatever stops the import: report it, never a traceback alone
        _emit(fd, {"event": "boot_error", "error": f"{type(e).__name__}: {e}"})
        os._exit(3)
    rc = pytest.main(sys.argv[2:], plugins=[_Reporter(fd, workspace, pytest.__version__)])
    _emit(fd, {"event": "exit", "rc": int(rc)})
    os.close(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(rc) & 0xFF)


if __name__ == "__main__":
    main()
