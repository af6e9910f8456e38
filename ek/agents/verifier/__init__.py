"""Verifier isolation: a hidden-test checker whose verdict the agent's code cannot reach.

An audited agent benchmark was beaten by a ~10-line ``conftest.py`` that pytest auto-loaded and
that rewrote every test outcome to "passed". :func:`hidden_tests` builds a checker that decides
success by running *trusted* hidden tests against a copy of the agent's final workspace, with
the test outcomes decided in a process that never runs the agent's code:

- **two processes**: the trusted test process runs pytest on the hidden tests and never
  imports workspace code; a hidden test's ``import solution`` gives a proxy, and every call
  goes to a separate *workspace process* that alone imports the agent's code. Plain values
  (numbers, strings, bytes, lists, tuples, dicts, sets of them) come back by value, so the
  test's ``assert add(2, 3) == 5`` compares real values in the trusted process; a workspace
  object compared with a test's value is compared there too, as the plain value of the
  built-in type it derives from (or the test fails); an object that claims to equal an object
  it has never seen is ``"tampering"``; what the trusted process accepts from the workspace
  is bounded;
- **the workspace process is sandboxed** before any workspace code runs: resource limits
  (memory, CPU seconds, processes and threads, file size), no capabilities, no new privileges
  and, on Linux with Landlock, no access to the checker's folders, the hidden tests' source or
  other processes' ``/proc`` entries, writes only to its workspace copy, no TCP, no signals
  outside itself; no command line names the tests;
- **the report is signed**: the trusted process streams every outcome with an HMAC (key on its
  stdin, never seen by the workspace process) and sequence number; two **canary tests** with
  random names (one must pass, one must fail) remain as a tripwire;
- the hidden tests are read and **hashed when the checker is built**; the trusted process
  compiles them from a verified in-memory copy; the tests, their source and the test
  interpreter's **site-packages are checked unchanged** before and after each run; no test
  process reads or writes bytecode; the workspace is copied without following any link the
  agent could swap in;
- both processes run ``python -I`` with an environment built from scratch, no plugin
  autoloading, ``--noconftest``, the checker's own ini file; installed packages always win over
  workspace modules of the same name; the runner is the **child subreaper** of everything the
  workspace starts and kills it all at the end or at the timeout; output is bounded;
- the **workspace is named by the caller** (``workspace=`` or :meth:`HiddenTestChecker.verify`),
  never read from the episode unless ``workspace_from_episode=True``.

The core stays pure standard library: **pytest is needed only in the interpreter that runs the
tests** (``python=``, default :data:`sys.executable`). POSIX only; Landlock, the subreaper and
the process count need Linux, and the verdict's ``detail["sandbox"]`` says what was applied.

Residual risk: the agent's code still computes the values the tests check, and on a machine
without Landlock it runs with its user's rights; see ``docs/verifier_isolation.md``.

The package, one concept a module:

- :mod:`~ek.agents.verifier._checker`: :class:`HiddenTestChecker`, :func:`hidden_tests`,
  :func:`run_hidden_tests` (the order of a run);
- :mod:`~ek.agents.verifier._workspace`: the hidden tests' snapshot and hash, the checks'
  folder, the site-packages baseline;
- :mod:`~ek.agents.verifier._tree`: the workspace copy and the removal of a check's folders
  (descriptor-relative, no link followed);
- :mod:`~ek.agents.verifier._canary`: the two canary tests of each run;
- :mod:`~ek.agents.verifier._process`: the trusted test process (command, environment, pipes,
  timeout, process count);
- :mod:`~ek.agents.verifier._runner` and :mod:`~ek.agents.verifier._proxy`: the code that runs
  inside the trusted test process (copied into the run as source text, never imported there as
  part of ``ek``);
- :mod:`~ek.agents.verifier._child`: the code of the sandboxed workspace process (likewise);
- :mod:`~ek.agents.verifier._verdict`: :class:`HiddenTestVerdict`, the signed report and the
  ordered verdict rules.

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

from ek.agents.verifier._checker import HiddenTestChecker, hidden_tests, run_hidden_tests
from ek.agents.verifier._verdict import VERDICT_STATUSES, HiddenTestVerdict

__all__ = [
    "VERDICT_STATUSES",
    "HiddenTestChecker",
    "HiddenTestVerdict",
    "hidden_tests",
    "run_hidden_tests",
]
