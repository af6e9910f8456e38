"""Verifier isolation: a hidden-test checker that the agent's workspace cannot configure.

An audited agent benchmark was beaten by a ~10-line ``conftest.py`` that pytest auto-loaded and
that rewrote every test outcome to "passed". :func:`hidden_tests` builds a checker that decides
success by running *trusted* hidden tests against a copy of the agent's final workspace, in a
separate process the workspace cannot configure:

- the workspace and the hidden tests are copied into **separate fresh temporary directories**
  (symlinks that leave the workspace, special files and bytecode are not copied); the tests are
  read and **hashed when the checker is built** and the hash is verified before and after each
  run (a change is reported as tampering);
- pytest runs under ``python -I -B`` (isolated mode: no ``PYTHON*`` variables, no user site, no
  script or working directory on ``sys.path``) with an environment built from scratch
  (``PYTEST_ADDOPTS``, ``PYTEST_PLUGINS``, ``PYTHONPATH`` ... are never passed on), plugin
  autoloading off, ``--noconftest``, the checker's own ``-c`` ini file and ``--rootdir`` (so no
  ``pytest.ini`` / ``pyproject.toml`` / ``setup.cfg`` / ``tox.ini`` of the workspace is read),
  no cache, a timeout that kills the whole process group, and bounded output;
- the workspace is put on ``sys.path`` only from inside the session, after pytest and the
  checker's reporter are imported, and after the standard library (a workspace ``pytest.py``,
  ``_pytest/`` or ``json.py`` cannot take over pytest or the reporter);
- the **exit code is never trusted**: the checker's own reporter streams every outcome through
  a private pipe; every expected test must be present and passed; two **canary tests** with
  random names (one must pass, one must fail) expose outcome rewriting as ``"tampering"``.

The core stays pure standard library: **pytest is needed only in the interpreter that runs the
tests** (``python=``, default :data:`sys.executable`). POSIX only (process groups, ``pass_fds``).

Residual risk: the code under test runs inside the test process, so a determined agent can
still attack that process from the inside (the canaries catch blind outcome rewriting, not an
attack that recognises them). For untrusted agents, also run the checker inside an OS sandbox;
see ``docs/verifier_isolation.md``.

The package, one concept a module:

- :mod:`~ek.agents.verifier.checker`: :class:`HiddenTestChecker`, :func:`hidden_tests`,
  :func:`run_hidden_tests` (the order of a run);
- :mod:`~ek.agents.verifier.workspace`: the hidden tests' snapshot and hash, the workspace copy;
- :mod:`~ek.agents.verifier.canary`: the two canary tests of each run;
- :mod:`~ek.agents.verifier.process`: the isolated process (command, environment, pipes,
  timeout);
- :mod:`~ek.agents.verifier.runner`: the code that runs inside that process (its source text
  is copied into the run, never imported there as part of ``ek``);
- :mod:`~ek.agents.verifier.verdict`: :class:`HiddenTestVerdict` and the ordered verdict rules.

Example:
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "test_add.py").write_text(
    ...     "from solution import add\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n")
    >>> check = hidden_tests(d / "test_add.py", timeout=60)
    >>> check.expected
    ('test_add.py::test_add',)
    >>> v = HiddenTestVerdict(False, "failed", "1 of 1 hidden test(s) failed",
    ...                       failed_tests=("test_add.py::test_add",))
    >>> bool(v), v.status, v.failed_tests
    (False, 'failed', ('test_add.py::test_add',))
"""

from __future__ import annotations

from ek.agents.verifier.checker import HiddenTestChecker, hidden_tests, run_hidden_tests
from ek.agents.verifier.verdict import VERDICT_STATUSES, HiddenTestVerdict

__all__ = [
    "VERDICT_STATUSES",
    "HiddenTestChecker",
    "HiddenTestVerdict",
    "hidden_tests",
    "run_hidden_tests",
]
