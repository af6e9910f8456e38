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

import ast
import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Union

from ek.registry import register

__all__ = [
    "VERDICT_STATUSES",
    "HiddenTestChecker",
    "HiddenTestVerdict",
    "hidden_tests",
    "run_hidden_tests",
]

#: Every status a :class:`HiddenTestVerdict` can carry; only ``"passed"`` is a success.
VERDICT_STATUSES = ("passed", "failed", "timeout", "tampering", "collection_error", "error")

PathLike = Union[str, "os.PathLike[str]"]

_TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")
_ENV_PREFIXES = ("PYTHON", "PYTEST", "EK_VERIFIER")
_ABORTED = {2: "interrupted", 3: "internal error", 4: "usage error"}


@dataclass(frozen=True)
class HiddenTestVerdict:
    """The outcome of one hidden-test run; truthy exactly when it passed.

    A checker must return a bool for ``TaskSuccessMetric``; this object *is* one for ``if`` and
    ``bool()`` (``__bool__`` is :attr:`passed`) while keeping the reason.

    Args:
        passed: True only when every expected hidden test ran and passed and the canaries
            behaved.
        status: One of :data:`VERDICT_STATUSES`.
        reason: A human-readable explanation.
        failed_tests: Node ids (relative to the tests root) that failed, errored, were skipped
            or did not run.
        duration: Wall-clock seconds of the whole check.
        output: The bounded tail of pytest's output (for a human; never parsed).
        detail: A machine-readable breakdown (per-test outcomes, missing tests, collection
            errors, exit code, skipped workspace paths).

    Example:
        >>> v = HiddenTestVerdict(True, "passed", "all 2 hidden tests passed")
        >>> bool(v), v.to_dict()["status"]
        (True, 'passed')
    """

    passed: bool
    status: str
    reason: str
    failed_tests: tuple[str, ...] = ()
    duration: float = 0.0
    output: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.passed, bool):
            raise TypeError(f"passed must be a bool, got {self.passed!r:.100}")
        if self.status not in VERDICT_STATUSES:
            raise ValueError(f"status must be one of {VERDICT_STATUSES}, got {self.status!r}")
        if self.passed != (self.status == "passed"):
            raise ValueError(
                f"passed={self.passed} contradicts status={self.status!r}; "
                "passed must be True exactly when status is 'passed'"
            )
        if not isinstance(self.reason, str) or not self.reason:
            raise ValueError(f"reason must be a non-empty str, got {self.reason!r:.100}")
        object.__setattr__(self, "failed_tests", tuple(self.failed_tests))
        object.__setattr__(self, "detail", MappingProxyType(dict(self.detail)))

    def __bool__(self) -> bool:
        return self.passed

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what a harness stores in a score's detail)."""
        return {
            "passed": self.passed,
            "status": self.status,
            "reason": self.reason,
            "failed_tests": list(self.failed_tests),
            "duration": self.duration,
            "detail": json.loads(json.dumps(dict(self.detail), default=str)),
        }


# --------------------------------------------------------------------------- the runner
# Written into a private directory for each run and executed as ``python -I -B runner.py``.
# Everything it needs is imported before the workspace reaches sys.path.
_RUNNER = r"""
import json, os, sys

_FD = int(os.environ.pop("EK_VERIFIER_FD"))
_WS = sys.argv[1]
_dumps, _write = json.dumps, os.write


def _emit(rec):
    data = (_dumps(rec) + "\n").encode("utf-8", "replace")
    while data:
        data = data[_write(_FD, data):]


def _text(x):
    try:
        return str(x)[-1500:]
    except BaseException as e:  # noqa: BLE001
        return "<unprintable: %s>" % type(e).__name__


try:
    import pytest
except BaseException as e:  # noqa: BLE001
    _emit({"event": "boot_error", "error": "%s: %s" % (type(e).__name__, e)})
    os._exit(3)


class _Reporter:
    def pytest_sessionstart(self, session):
        # Only now, with pytest and this reporter imported, may the workspace be imported, and
        # after the standard library so that it cannot shadow it.
        site = [i for i, p in enumerate(sys.path) if p.endswith(("site-packages", "dist-packages"))]
        sys.path.insert(site[0] if site else len(sys.path), _WS)
        _emit({"event": "start", "pytest": pytest.__version__})

    def pytest_collectreport(self, report):
        if report.failed:
            _emit({"event": "collect_error", "nodeid": report.nodeid, "longrepr": _text(report.longrepr)})
        elif report.skipped:
            _emit({"event": "collect_skip", "nodeid": report.nodeid, "longrepr": _text(report.longrepr)})

    def pytest_runtest_logreport(self, report):
        rec = {"event": "test", "nodeid": report.nodeid, "when": report.when, "outcome": report.outcome}
        if hasattr(report, "wasxfail"):
            rec["xfail"] = True
        if report.failed:
            rec["longrepr"] = _text(report.longrepr)
        _emit(rec)

    def pytest_sessionfinish(self, session, exitstatus):
        _emit({"event": "finish", "exitstatus": int(exitstatus)})


_rc = pytest.main(sys.argv[2:], plugins=[_Reporter()])
_emit({"event": "exit", "rc": int(_rc)})
os.close(_FD)
sys.stdout.flush()
sys.stderr.flush()
os._exit(int(_rc) & 0xFF)
"""

_INI = """[pytest]
addopts =
python_files = test_*.py *_test.py
python_classes = Test
python_functions = test
xfail_strict = true
"""


# --------------------------------------------------------------------------- snapshots
def _snapshot_tests(tests: Any) -> tuple[dict[str, bytes], Path | None]:
    """Read the hidden tests into memory: ``{posix relative path: bytes}`` and their source."""
    if isinstance(tests, Mapping):
        files: dict[str, bytes] = {}
        for k, v in tests.items():
            if not isinstance(k, str) or not k:
                raise TypeError(f"tests mapping keys must be non-empty str paths, got {k!r:.100}")
            rel = Path(k)
            if rel.is_absolute() or ".." in rel.parts:
                raise ValueError(
                    f"tests mapping keys must be relative paths inside the tests root, got {k!r}"
                )
            data = v.encode("utf-8") if isinstance(v, str) else v
            if not isinstance(data, bytes):
                raise TypeError(f"tests[{k!r}] must be str or bytes, got {type(v).__name__}")
            files[rel.as_posix()] = data
        return files, None
    if not isinstance(tests, (str, os.PathLike)):
        raise TypeError(
            f"tests must be a path (file or directory) or a {{path: source}} mapping, got {type(tests).__name__}"
        )
    src = Path(tests)
    if src.is_file():
        return {src.name: src.read_bytes()}, src.resolve()
    if not src.is_dir():
        raise ValueError(f"tests must be an existing test file or directory, got {str(src)!r}")
    files = {}
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", ".pytest_cache"))
        for name in sorted(filenames):
            if name.endswith((".pyc", ".pyo")):
                continue
            p = Path(dirpath) / name
            files[p.relative_to(src).as_posix()] = p.read_bytes()
    return files, src.resolve()


def _digest(files: Mapping[str, bytes]) -> str:
    h = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _discover(files: Mapping[str, bytes]) -> tuple[str, ...]:
    """Statically list the tests pytest's default rules will collect (before parametrisation)."""
    found: list[str] = []
    for rel in sorted(files):
        if not _TEST_FILE.match(rel.rsplit("/", 1)[-1]):
            continue
        try:
            tree = ast.parse(files[rel], filename=rel)
        except SyntaxError as e:
            raise ValueError(f"hidden test file {rel!r} does not parse: {e}") from e
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
                "test"
            ):
                found.append(f"{rel}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                for sub in node.body:
                    if isinstance(
                        sub, (ast.FunctionDef, ast.AsyncFunctionDef)
                    ) and sub.name.startswith("test"):
                        found.append(f"{rel}::{node.name}::{sub.name}")
    return tuple(found)


def _read_back(root: Path, names: Iterable[str]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for rel in names:
        try:
            out[rel] = (root / rel).read_bytes()
        except OSError:
            out[rel] = b"\0<missing>"
    return out


class _WorkspaceError(Exception):
    pass


def _copy_workspace(src: Path, dst: Path, max_files: int, max_bytes: int) -> list[str]:
    """Copy ``src`` into ``dst``: directories and regular files only; returns what was skipped.

    A symlink is copied as the file it points to only when that file lies inside the
    workspace; links that leave the workspace, directory links, special files (FIFOs, sockets,
    devices) and bytecode (``__pycache__``, ``*.pyc``) are skipped.
    """
    root = os.path.realpath(src)
    skipped: list[str] = []
    n_files = n_bytes = 0
    stack = [(src, dst)]
    while stack:
        s_dir, d_dir = stack.pop()
        with os.scandir(s_dir) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            rel = os.path.relpath(e.path, src)
            st = e.stat(follow_symlinks=False)
            target = e.path
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(e.path)
                if os.path.commonpath([root, real]) != root or not os.path.isfile(real):
                    skipped.append(f"{rel} (symlink to {real})")
                    continue
                target, st = real, os.stat(real)
            if stat.S_ISDIR(st.st_mode):
                if e.name == "__pycache__":
                    skipped.append(f"{rel} (bytecode cache)")
                    continue
                os.mkdir(os.path.join(d_dir, e.name))
                stack.append((Path(e.path), Path(d_dir) / e.name))
            elif stat.S_ISREG(st.st_mode):
                if e.name.endswith((".pyc", ".pyo")):
                    skipped.append(f"{rel} (bytecode)")
                    continue
                n_files += 1
                n_bytes += st.st_size
                if n_files > max_files or n_bytes > max_bytes:
                    raise _WorkspaceError(
                        f"workspace exceeds the copy limits (max_files={max_files}, "
                        f"max_bytes={max_bytes}); got at least {n_files} files / {n_bytes} bytes"
                    )
                shutil.copyfile(target, os.path.join(d_dir, e.name), follow_symlinks=False)
                os.chmod(os.path.join(d_dir, e.name), stat.S_IMODE(st.st_mode) | stat.S_IRUSR)
            else:
                skipped.append(f"{rel} (special file)")
    return skipped


# --------------------------------------------------------------------------- bounded readers
class _Bounded:
    """Keep the head and tail of a byte stream (at most ``limit`` bytes) and count the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        half = self.limit // 2
        room = half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.limit - half:
            cut = len(self.tail) - (self.limit - half)
            self.dropped += cut
            del self.tail[:cut]

    def text(self) -> str:
        mid = f"\n... [{self.dropped} bytes of output dropped] ...\n" if self.dropped else ""
        return (
            bytes(self.head).decode("utf-8", "replace")
            + mid
            + bytes(self.tail).decode("utf-8", "replace")
        )


def _drain_output(stream: Any, sink: _Bounded) -> None:
    try:
        for chunk in iter(lambda: stream.read1(65536), b""):
            sink.add(chunk)
    except (OSError, ValueError):
        pass


def _drain_report(fd: int, sink: list[bytes], limit: int, overflow: list[bool]) -> None:
    total = 0
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                overflow[0] = True
                continue
            sink.append(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- the judge
def _combine(phases: Mapping[str, str], xfail: bool) -> str:
    if "failed" in phases.values():
        return "failed"
    if phases.get("setup") == "skipped" or phases.get("call") == "skipped":
        return "xfailed" if xfail else "skipped"
    if phases.get("call") == "passed":
        return "passed"
    return "incomplete"


def _base_key(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def _judge(
    lines: list[bytes],
    *,
    exit_code: int | None,
    expected: tuple[str, ...],
    canary_pass: str,
    canary_fail: str,
    overflow: bool = False,
) -> tuple[str, str, tuple[str, ...], dict[str, Any]]:
    """Decide a verdict from the reporter's records. Never looks at the exit code for success.

    Returns ``(status, reason, failed_tests, detail)``.
    """
    detail: dict[str, Any] = {"exit_code": exit_code}
    if overflow:
        return "error", "the test report exceeded its size limit", (), detail
    records: list[dict[str, Any]] = []
    for raw in lines:
        try:
            rec = json.loads(raw)
        except ValueError:
            return (
                "tampering",
                f"malformed report record {raw[:80]!r}: something else wrote to the report",
                (),
                detail,
            )
        if not isinstance(rec, dict) or not isinstance(rec.get("event"), str):
            return "tampering", f"malformed report record {raw[:80]!r}", (), detail
        records.append(rec)
    events = [r["event"] for r in records]
    boot = [r for r in records if r["event"] == "boot_error"]
    if boot:
        return (
            "error",
            f"the test interpreter cannot run pytest: {boot[0].get('error')}",
            (),
            detail,
        )
    n_start, n_finish, n_exit = events.count("start"), events.count("finish"), events.count("exit")
    if n_start > 1 or n_finish > 1 or n_exit > 1:
        return (
            "tampering",
            "the report holds more than one session start/finish (forged records or a re-executed process)",
            (),
            detail,
        )
    if n_start == 0 or n_finish == 0:
        when = "started" if n_start == 0 else "finished"
        if exit_code == 0:
            return (
                "tampering",
                f"the test process exited with status 0 before the test session {when} "
                "(os._exit / sys.exit from the code under test?)",
                (),
                detail,
            )
        return (
            "error",
            f"the test process died before the test session {when} (exit code {exit_code})",
            (),
            detail,
        )
    if (
        events[0] != "start"
        or events.index("finish") < len(events) - 1 - n_exit
        or (n_exit and events[-1] != "exit")
    ):
        return (
            "tampering",
            "report records out of order (records after the session finished?)",
            (),
            detail,
        )

    phases: dict[str, dict[str, str]] = {}
    xfail: set[str] = set()
    longrepr: dict[str, str] = {}
    collect_errors: dict[str, str] = {}
    collect_skips: list[str] = []
    for r in records:
        if r["event"] == "test":
            nid, when = str(r.get("nodeid")), str(r.get("when"))
            if when in phases.setdefault(nid, {}):
                return "tampering", f"duplicate report for {nid!r} ({when})", (), detail
            phases[nid][when] = str(r.get("outcome"))
            if r.get("xfail"):
                xfail.add(nid)
            if "longrepr" in r:
                longrepr.setdefault(nid, str(r["longrepr"]))
        elif r["event"] == "collect_error":
            collect_errors[str(r.get("nodeid"))] = str(r.get("longrepr", ""))
        elif r["event"] == "collect_skip":
            collect_skips.append(str(r.get("nodeid")))
    outcomes = {nid: _combine(ph, nid in xfail) for nid, ph in phases.items()}
    finish = next(r for r in records if r["event"] == "finish")
    status_code = finish.get("exitstatus")
    cp, cf = outcomes.get(canary_pass), outcomes.get(canary_fail)
    detail["canaries"] = {"must_pass": cp, "must_fail": cf}
    if cf is not None and (cf != "failed" or phases[canary_fail].get("call") != "failed"):
        return (
            "tampering",
            f"the canary test that must fail was reported {cf!r}: test outcomes are being rewritten",
            (),
            detail,
        )
    if cp is not None and cp != "passed":
        return (
            "tampering",
            f"the canary test that must pass was reported {cp!r}: the test session was manipulated",
            (),
            detail,
        )
    if status_code in _ABORTED:
        detail["collection_errors"] = sorted(collect_errors)
        return (
            "error",
            f"pytest aborted the session ({_ABORTED[status_code]}, exit status {status_code})",
            (),
            detail,
        )
    if cf is None or cp is None:
        return (
            "tampering",
            "a canary test did not run: tests were deselected or the run was manipulated",
            (),
            detail,
        )

    canary_module = canary_pass.split("::", 1)[0]
    if canary_module in collect_errors:
        return "tampering", "the canary module failed to collect", (), detail
    hidden = {nid: o for nid, o in outcomes.items() if nid not in (canary_pass, canary_fail)}
    present = {_base_key(n) for n in hidden}
    missing = [k for k in expected if _base_key(k) not in present]
    failed = sorted(n for n, o in hidden.items() if o != "passed")
    detail.update(
        outcomes=dict(sorted(hidden.items())),
        missing=missing,
        collection_errors=sorted(collect_errors),
        collection_skipped=sorted(collect_skips),
        longrepr={k: longrepr[k] for k in failed if k in longrepr},
    )
    bad = tuple(failed + missing)
    if collect_errors:
        first = next(iter(sorted(collect_errors)))
        msg = collect_errors[first].strip().splitlines()
        return (
            "collection_error",
            f"{len(collect_errors)} hidden test module(s) failed to collect ({first}: "
            f"{msg[-1] if msg else 'error'}); {len(bad)} expected test(s) did not pass",
            bad,
            detail,
        )
    if bad:
        counts: dict[str, int] = {}
        for n in failed:
            counts[hidden[n]] = counts.get(hidden[n], 0) + 1
        parts = [f"{v} {k}" for k, v in sorted(counts.items())]
        if missing:
            parts.append(f"{len(missing)} not run")
        return (
            "failed",
            f"{len(bad)} hidden test(s) did not pass ({', '.join(parts)}): {', '.join(bad[:5])}",
            bad,
            detail,
        )
    if not hidden:
        return "failed", "no hidden test ran", (), detail
    return "passed", f"all {len(hidden)} hidden test(s) passed", (), detail


# --------------------------------------------------------------------------- the checker
def _workspace_of(episode: Any) -> Any:
    if isinstance(episode, (str, os.PathLike)):
        return episode
    fs = getattr(episode, "final_state", None)
    if isinstance(fs, (str, os.PathLike)):
        return fs
    if isinstance(fs, Mapping) and "workspace" in fs:
        return fs["workspace"]
    md = getattr(episode, "metadata", None)
    if isinstance(md, Mapping) and "workspace" in md:
        return md["workspace"]
    return None


def _canary_source(names: tuple[str, str]) -> str:
    """Two tests with unpredictable names and numbers: ``names[0]`` passes, ``names[1]`` fails."""
    a, b = secrets.randbelow(10**6) + 1, secrets.randbelow(10**6) + 1
    bodies = [
        (names[0], f"    assert {a} + {b} == {a + b}\n"),
        (names[1], f"    assert {a} * {b} == {a * b + 1 + secrets.randbelow(999)}\n"),
    ]
    if secrets.randbelow(2):
        bodies.reverse()
    return "".join(f"def {n}():\n{body}\n\n" for n, body in bodies)


class HiddenTestChecker:
    """An isolated hidden-test checker; build it with :func:`hidden_tests`.

    Call it as a checker, ``check(episode, gold) -> HiddenTestVerdict`` (truthy when passed),
    or run it on a directory with :meth:`verify`. :attr:`last_verdict` is the verdict of the
    calling thread's latest call.
    """

    __name__ = "hidden_tests"

    def __init__(
        self,
        tests: Any,
        *,
        workspace: PathLike | Callable[[Any], Any] | None = None,
        timeout: float = 60.0,
        python: PathLike | None = None,
        expected: Iterable[str] | None = None,
        plugins: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        max_output: int = 20_000,
        max_files: int = 20_000,
        max_bytes: int = 100_000_000,
    ) -> None:
        files, source = _snapshot_tests(tests)
        if not files:
            raise ValueError(f"tests must contain at least one file, got none from {tests!r:.200}")
        conftests = [r for r in files if r.rsplit("/", 1)[-1] == "conftest.py"]
        if conftests:
            raise ValueError(
                f"hidden tests must not rely on conftest.py (conftest loading is disabled so that no "
                f"workspace conftest can load either); move fixtures into the test modules, got {conftests}"
            )
        found = _discover(files)
        if expected is None:
            exp = found
        else:
            if isinstance(expected, str):
                raise TypeError(
                    f"expected must be an iterable of node ids, got a str {expected!r:.100}"
                )
            exp = tuple(expected)
            bad = [e for e in exp if not isinstance(e, str) or "::" not in e]
            if bad:
                raise ValueError(
                    f"expected must hold node ids like 'test_x.py::test_y', got {bad[:3]!r}"
                )
        if not exp:
            raise ValueError(
                "no hidden tests found: expected test_*.py / *_test.py files with test* functions "
                f"or Test* classes, got files {sorted(files)[:10]}"
            )
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        if timeout == float("inf"):
            raise ValueError("timeout must be finite, got inf")
        if (
            workspace is not None
            and not callable(workspace)
            and not isinstance(workspace, (str, os.PathLike))
        ):
            raise TypeError(
                f"workspace must be a path, a callable(episode) -> path, or None, got {type(workspace).__name__}"
            )
        plug = tuple(plugins)
        for p in plug:
            if not isinstance(p, str) or not re.fullmatch(r"[A-Za-z0-9_.:-]+", p):
                raise ValueError(
                    f"plugins must be plugin names like 'pytest_asyncio', got {p!r:.100}"
                )
        extra = dict(env or {})
        for k, v in extra.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"env must map str to str, got {k!r:.50}: {v!r:.50}")
            if k.upper().startswith(_ENV_PREFIXES):
                raise ValueError(
                    f"env must not configure Python, pytest or the verifier ({'/'.join(_ENV_PREFIXES)}*), got {k!r}"
                )
        for label, n in (
            ("max_output", max_output),
            ("max_files", max_files),
            ("max_bytes", max_bytes),
        ):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"{label} must be an int >= 1, got {n!r}")
        self._files = files
        self._source = source
        self._digest = _digest(files)
        self._expected = exp
        self.workspace = workspace
        self.timeout = float(timeout)
        self.python = os.fspath(python) if python is not None else sys.executable
        self.plugins = plug
        self.env = MappingProxyType(extra)
        self.max_output = max_output
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._local = threading.local()

    # -- properties
    @property
    def digest(self) -> str:
        """SHA-256 of the hidden tests as read when the checker was built."""
        return self._digest

    @property
    def expected(self) -> tuple[str, ...]:
        """The node ids (without parameters) that must be present and pass."""
        return self._expected

    @property
    def last_verdict(self) -> HiddenTestVerdict | None:
        """The verdict of this thread's latest call (``None`` before the first)."""
        return getattr(self._local, "verdict", None)

    def __repr__(self) -> str:
        src = str(self._source) if self._source else f"{len(self._files)} in-memory file(s)"
        return f"HiddenTestChecker({src!r}, tests={len(self._expected)}, timeout={self.timeout})"

    # -- the checker protocol
    def __call__(self, episode: Any, gold: Any = None) -> HiddenTestVerdict:
        """Check an episode (``gold`` is ignored: the hidden tests are the gold)."""
        ws = self.workspace(episode) if callable(self.workspace) else self.workspace
        if ws is None:
            ws = _workspace_of(episode)
        return self.verify(ws)

    def verify(self, workspace: Any) -> HiddenTestVerdict:
        """Run the hidden tests against a copy of ``workspace`` and return the verdict."""
        t0 = time.monotonic()
        status, reason, failed, detail, output = self._verify(workspace)
        verdict = HiddenTestVerdict(
            status == "passed",
            status,
            reason,
            failed,
            round(time.monotonic() - t0, 3),
            output,
            detail,
        )
        self._local.verdict = verdict
        return verdict

    # -- implementation
    def _verify(self, workspace: Any) -> tuple[str, str, tuple[str, ...], dict[str, Any], str]:
        if workspace is None:
            return (
                "error",
                "no workspace: pass workspace= or put a path in episode.final_state / metadata['workspace']",
                (),
                {},
                "",
            )
        if not isinstance(workspace, (str, os.PathLike)):
            return (
                "error",
                f"workspace must be a path, got {type(workspace).__name__}: {workspace!r:.100}",
                (),
                {},
                "",
            )
        ws = Path(workspace)
        if not ws.is_dir():
            return "error", f"workspace {str(ws)!r} is not a directory", (), {}, ""
        if self._source is not None:
            try:
                now, _ = _snapshot_tests(self._source)
            except OSError as e:
                return (
                    "tampering",
                    f"the hidden tests at {str(self._source)!r} can no longer be read: {e}",
                    (),
                    {},
                    "",
                )
            if _digest(now) != self._digest:
                return (
                    "tampering",
                    f"the hidden tests at {str(self._source)!r} changed since the checker was built",
                    (),
                    {},
                    "",
                )
            real_ws, real_src = os.path.realpath(ws), str(self._source)
            src_dir = real_src if os.path.isdir(real_src) else os.path.dirname(real_src)
            if os.path.commonpath([real_ws, src_dir]) in (real_ws, src_dir):
                return (
                    "tampering",
                    "the workspace contains, or lies inside, the hidden tests",
                    (),
                    {},
                    "",
                )
        if os.name != "posix":
            return (
                "error",
                f"hidden_tests needs a POSIX system (process groups, pass_fds), got {os.name!r}",
                (),
                {},
                "",
            )

        dirs: list[str] = []
        try:
            ws_copy = tempfile.mkdtemp(prefix="ek-ws-")
            dirs.append(ws_copy)
            tests_dir = tempfile.mkdtemp(prefix="ek-tests-")
            dirs.append(tests_dir)
            private = tempfile.mkdtemp(prefix="ek-verifier-")
            dirs.append(private)
            try:
                skipped = _copy_workspace(ws, Path(ws_copy), self.max_files, self.max_bytes)
            except _WorkspaceError as e:
                return "error", str(e), (), {}, ""
            except OSError as e:
                return "error", f"cannot copy the workspace {str(ws)!r}: {e}", (), {}, ""
            return self._run(Path(ws_copy), Path(tests_dir), Path(private), skipped)
        finally:
            for d in dirs:
                shutil.rmtree(d, ignore_errors=True)

    def _run(
        self, ws_copy: Path, tests_dir: Path, private: Path, skipped: list[str]
    ) -> tuple[str, str, tuple[str, ...], dict[str, Any], str]:
        for rel, data in self._files.items():
            p = tests_dir / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        while True:
            mod = f"test_{secrets.token_hex(6)}.py"
            if mod not in self._files:
                break
        names = (f"test_{secrets.token_hex(5)}", f"test_{secrets.token_hex(5)}")
        canary_src = _canary_source(names)
        (tests_dir / mod).write_text(canary_src, encoding="utf-8")
        canary_files = {mod: canary_src.encode("utf-8")}
        if _digest(_read_back(tests_dir, self._files)) != self._digest:
            return "tampering", "the hidden tests changed while being copied", (), {}, ""
        runner = private / "runner.py"
        runner.write_text(_RUNNER, encoding="utf-8")
        ini = private / "pytest.ini"
        ini.write_text(_INI, encoding="utf-8")
        for sub in ("home", "tmp", "basetemp"):
            (private / sub).mkdir()

        cmd = [
            self.python, "-I", "-B", "-X", "utf8", str(runner), str(ws_copy),
            "-c", str(ini), "--rootdir", str(tests_dir), "--confcutdir", str(tests_dir),
            "--noconftest", "-p", "no:cacheprovider", "--import-mode=prepend",
            "--basetemp", str(private / "basetemp"), "--continue-on-collection-errors",
            "-q", "--no-header", "--color=no", "--tb=short",
        ]  # fmt: skip
        for plugin in self.plugins:
            cmd += ["-p", plugin]
        cmd.append(str(tests_dir))
        env = {
            "PATH": os.defpath,
            "HOME": str(private / "home"),
            "TMPDIR": str(private / "tmp"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "NO_COLOR": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            **self.env,
        }
        rfd, wfd = os.pipe()
        env["EK_VERIFIER_FD"] = str(wfd)
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=ws_copy,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(wfd,),
                start_new_session=True,
            )
        except OSError as e:
            os.close(rfd)
            return "error", f"cannot start the test interpreter {self.python!r}: {e}", (), {}, ""
        finally:
            os.close(wfd)
        out = _Bounded(self.max_output)
        lines: list[bytes] = []
        overflow = [False]
        readers = [
            threading.Thread(target=_drain_output, args=(proc.stdout, out), daemon=True),
            threading.Thread(
                target=_drain_report, args=(rfd, lines, 16_000_000, overflow), daemon=True
            ),
        ]
        for t in readers:
            t.start()
        timed_out = False
        try:
            rc: int | None = proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            rc = None
        finally:
            with contextlib.suppress(OSError):  # the whole group: stray children die too
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for t in readers:
            t.join(timeout=5.0)
        if proc.stdout is not None:
            proc.stdout.close()
        output = out.text()
        detail: dict[str, Any] = {"skipped_paths": skipped} if skipped else {}
        if timed_out:
            detail["exit_code"] = None
            return (
                "timeout",
                f"the hidden tests did not finish within {self.timeout:g} s",
                (),
                detail,
                output,
            )
        after = _read_back(tests_dir, [*self._files, mod])
        if (
            _digest({k: after[k] for k in self._files}) != self._digest
            or after[mod] != canary_files[mod]
        ):
            detail["exit_code"] = rc
            return "tampering", "the hidden tests were modified during the run", (), detail, output
        data = b"".join(lines)
        records = [ln for ln in data.split(b"\n") if ln.strip()]
        status, reason, failed, d = _judge(
            records, exit_code=rc, expected=self._expected, canary_pass=f"{mod}::{names[0]}",
            canary_fail=f"{mod}::{names[1]}", overflow=overflow[0],
        )  # fmt: skip
        d.update(detail)
        return status, reason, failed, d, output


def hidden_tests(
    tests: Any,
    *,
    workspace: PathLike | Callable[[Any], Any] | None = None,
    timeout: float = 60.0,
    python: PathLike | None = None,
    expected: Iterable[str] | None = None,
    plugins: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    max_output: int = 20_000,
    max_files: int = 20_000,
    max_bytes: int = 100_000_000,
) -> HiddenTestChecker:
    """Build an isolated hidden-test checker: ``check=hidden_tests("tests/hidden")``.

    Requires pytest **in the interpreter that runs the tests** (``python``), not in ek.

    Args:
        tests: The trusted hidden tests: a test file, a directory (read recursively), or a
            ``{relative path: source}`` mapping. Read and hashed now; a later change of the
            files is reported as tampering. ``conftest.py`` is refused (conftest loading is off).
        workspace: The agent's final workspace: a path, a ``callable(episode) -> path``, or
            ``None`` to take it from the episode (a path as ``episode.final_state``,
            ``final_state["workspace"]``, or ``episode.metadata["workspace"]``). Prefer a
            harness-side value: a path read from the episode is chosen by the agent.
        timeout: Seconds before the whole test process group is killed (status ``"timeout"``).
        python: The interpreter that runs pytest (default :data:`sys.executable`).
        expected: Node ids (``"test_x.py::test_y"``, parameters stripped) that must pass;
            default: the tests found statically in ``test_*.py`` / ``*_test.py`` files.
        plugins: pytest plugins to enable explicitly with ``-p`` (autoloading is off).
        env: Extra environment variables for the test process (no ``PYTHON*``/``PYTEST*``).
        max_output: Bytes of pytest output kept (head and tail).
        max_files: Most files copied from the workspace (more: status ``"error"``).
        max_bytes: Most bytes copied from the workspace (more: status ``"error"``).

    Returns:
        A :class:`HiddenTestChecker`: ``check(episode, gold)`` returns a
        :class:`HiddenTestVerdict` whose truth value is the pass flag.

    Example:
        >>> check = hidden_tests({"test_a.py": "def test_one():\\n    assert True\\n"})
        >>> check.expected, check.timeout
        (('test_a.py::test_one',), 60.0)
    """
    return HiddenTestChecker(
        tests,
        workspace=workspace,
        timeout=timeout,
        python=python,
        expected=expected,
        plugins=plugins,
        env=env,
        max_output=max_output,
        max_files=max_files,
        max_bytes=max_bytes,
    )


def run_hidden_tests(tests: Any, workspace: PathLike, **options: Any) -> HiddenTestVerdict:
    """One-shot: run ``tests`` against ``workspace`` and return the :class:`HiddenTestVerdict`.

    ``options`` are those of :func:`hidden_tests`.
    """
    return hidden_tests(tests, **options).verify(workspace)


register("checkers", "hidden_tests", hidden_tests)
