"""The isolated test process: its files, command and environment, its pipes, its limits.

:func:`prepare_private` writes the runner and the proxy (the source text of
:mod:`ek.agents.verifier._runner` and :mod:`ek.agents.verifier._proxy`, never imported by the
child as part of ``ek``) and the checker's own ``pytest.ini`` into a private directory, and the
workspace process's code (:mod:`ek.agents.verifier._child`) into its own; :func:`build_command`,
:func:`child_command` and :func:`build_env` make command lines and an environment from scratch
(no command line names the hidden tests or a configuration: those travel on stdin);
:func:`run_isolated` starts the trusted test process in its own session, hands it the report's
HMAC key and its configuration's path on stdin, drains its output (head and tail kept, see
:class:`Bounded`) and its report pipe with one ``select`` loop (no reader thread, no wait on a
pipe that a stray process keeps open), counts its descendants' threads, and at the deadline or
past the process limit asks it to kill its tree (``SIGTERM``; it is their subreaper), then kills
its whole process group.

Neither Python process reads or writes bytecode: ``-B`` and a ``pycache_prefix`` under
``/dev/null`` (:data:`NO_BYTECODE`), a path that can never be a directory, so every module they
run is compiled from the source the checker verifies, and no check shares a cache that another
check's workspace, or any process of the agent, could write into.

Example:
    >>> cmd = build_command("python", Path("/p/runner.py"))
    >>> cmd[:6], cmd[-1]
    (['python', '-I', '-B', '-X', 'utf8', '-X'], '/p/runner.py')
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "INI",
    "NO_BYTECODE",
    "REPORT_LIMIT",
    "Bounded",
    "ProcessResult",
    "StartError",
    "build_command",
    "build_env",
    "count_descendants",
    "prepare_private",
    "pytest_args",
    "run_isolated",
    "source_of",
]

#: The test processes' ``pycache_prefix``: a path under ``/dev/null``, never a directory, so no
#: bytecode is ever read there (and, with ``-B``, none is written).
NO_BYTECODE = os.path.join(os.devnull, "ek-no-bytecode")

#: Most bytes of report read; more and the run is an ``error``.
REPORT_LIMIT = 16_000_000

#: The checker's own ini file (``-c``): no ini file of the workspace is ever read.
INI = """[pytest]
addopts =
python_files = test_*.py *_test.py
python_classes = Test
python_functions = test
xfail_strict = true
"""


@functools.cache
def source_of(module: str) -> str:
    """The source text of ``ek.agents.verifier.<module>``, read from the installed package.

    Example:
        >>> "def main()" in source_of("_runner") and "def serve(" in source_of("_child")
        True
    """
    return resources.files(__package__).joinpath(f"{module}.py").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- bounded readers
class Bounded:
    """Keep the head and tail of a byte stream (at most ``limit`` bytes) and count the rest.

    Example:
        >>> b = Bounded(4)
        >>> b.add(b"abcdefgh")
        >>> b.text()
        'ab\\n... [4 bytes of output dropped] ...\\ngh'
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        """Append ``chunk``: it fills the head first, then the tail, dropping the tail's oldest."""
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
        """Head and tail decoded (invalid UTF-8 replaced), with a marker where bytes were dropped."""
        mid = f"\n... [{self.dropped} bytes of output dropped] ...\n" if self.dropped else ""
        return (
            bytes(self.head).decode("utf-8", "replace")
            + mid
            + bytes(self.tail).decode("utf-8", "replace")
        )


# --------------------------------------------------------------------------- the command
def prepare_private(private: Path, child_dir: Path) -> tuple[Path, Path, Path]:
    """Write the runner, the proxy and the ini file into ``private``, the child into ``child_dir``.

    Returns:
        The paths of the runner, of the ini file and of the child.
    """
    runner = private / "runner.py"
    runner.write_text(source_of("_runner"), encoding="utf-8")
    (private / "_ek_verifier_proxy.py").write_text(source_of("_proxy"), encoding="utf-8")
    ini = private / "pytest.ini"
    ini.write_text(INI, encoding="utf-8")
    child = child_dir / "child.py"
    child.write_text(source_of("_child"), encoding="utf-8")
    return runner, ini, child


def _python(python: str) -> list[str]:
    # -I: no PYTHON* variable, no user site, neither the script's nor the working directory on
    # sys.path; -B and NO_BYTECODE: no bytecode read (not even a __pycache__ planted in
    # site-packages) and none written.
    return [python, "-I", "-B", "-X", "utf8", "-X", f"pycache_prefix={NO_BYTECODE}"]


def build_command(python: str, runner: Path) -> list[str]:
    """The trusted test process's command line: the isolated interpreter and the runner.

    Its configuration's path arrives on stdin, after the HMAC key (:func:`run_isolated`).
    """
    return [*_python(python), str(runner)]


def child_command(python: str, child: Path) -> list[str]:
    """The workspace process's command line; its configuration arrives on stdin.

    Example:
        >>> child_command("python", Path("/c/child.py"))[-1]
        '/c/child.py'
    """
    return [*_python(python), str(child)]


def pytest_args(ini: Path, tests_dir: Path, basetemp: Path, plugins: Iterable[str]) -> list[str]:
    """pytest's arguments: the checker's ini, no conftest, explicit plugins only.

    Example:
        >>> pytest_args(Path("/p/pytest.ini"), Path("/t"), Path("/s/bt"), ["xdist"])[-3:]
        ['-p', 'xdist', '/t']
    """
    args = [
        "-c", str(ini), "--rootdir", str(tests_dir), "--confcutdir", str(tests_dir),
        "--noconftest", "-p", "no:cacheprovider", "--import-mode=prepend",
        "--basetemp", str(basetemp), "--continue-on-collection-errors",
        "-q", "--no-header", "--color=no", "--tb=short", "-p", "no:faulthandler",
    ]  # fmt: skip
    for plugin in plugins:
        args += ["-p", plugin]
    args.append(str(tests_dir))
    return args


def build_env(home: Path, tmp: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """An environment built from scratch (nothing inherited), plus the user's ``extra``.

    Example:
        >>> env = build_env(Path("/s/home"), Path("/s/tmp"), {"TZ": "UTC"})
        >>> env["HOME"], env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"], env["TZ"]
        ('/s/home', '1', 'UTC')
    """
    return {
        "PATH": os.defpath,
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "NO_COLOR": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        **extra,
    }


# --------------------------------------------------------------------------- the run
class StartError(Exception):
    """The test interpreter could not be started (the ``OSError`` is the cause)."""


@dataclass(frozen=True)
class ProcessResult:
    """What the test process left behind.

    Args:
        exit_code: Its exit status; ``None`` when it was killed (timeout or process limit).
        timed_out: True when it did not finish within the timeout.
        output: Its bounded stdout and stderr (head and tail), the workspace process's too.
        lines: The report's non-blank lines, in order.
        overflow: True when the report exceeded :data:`REPORT_LIMIT`.
        too_many_processes: The number of processes and threads seen when they went past the
            limit, or 0.
    """

    exit_code: int | None
    timed_out: bool
    output: str
    lines: tuple[bytes, ...]
    overflow: bool
    too_many_processes: int = 0


def _processes() -> dict[int, tuple[int, int]]:
    """Every process's parent and number of threads, from ``/proc/<pid>/stat``."""
    out: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                out[int(entry)] = int(fields[1]), int(fields[17])  # ppid, num_threads
            except (OSError, ValueError, IndexError):
                pass
    return out


def count_descendants(pid: int) -> int:
    """How many threads the processes that descend from ``pid`` run (each process counts at
    least one, as for ``RLIMIT_NPROC``); Linux ``/proc``, 0 elsewhere.

    Example:
        >>> count_descendants(2**22 + 1)
        0
    """
    if not os.path.isdir("/proc"):
        return 0
    children: dict[int, list[tuple[int, int]]] = {}
    for child, (parent, threads) in _processes().items():
        children.setdefault(parent, []).append((child, threads))
    n, todo = 0, [pid]
    while todo:
        for child, threads in children.get(todo.pop(), []):
            n += max(threads, 1)
            todo.append(child)
    return n


class _Drain:
    """The two pipes of one run, read with ``select`` until both close or time is up."""

    def __init__(self, out_fd: int, report_fd: int, max_output: int) -> None:
        self.sel = selectors.DefaultSelector()
        self.out = Bounded(max_output)
        self.report: list[bytes] = []
        self.size = 0
        self.overflow = False
        for fd in (out_fd, report_fd):
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ)
        self.report_fd = report_fd

    def open(self) -> bool:
        return bool(self.sel.get_map())

    def pump(self, wait: float) -> None:
        for key, _ in self.sel.select(timeout=max(wait, 0.0)):
            fd = int(key.fd)
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.sel.unregister(fd)
                if fd == self.report_fd:
                    os.close(fd)
            elif fd != self.report_fd:
                self.out.add(chunk)
            else:
                self.size += len(chunk)
                if self.size > REPORT_LIMIT:
                    self.overflow = True
                else:
                    self.report.append(chunk)

    def close(self) -> None:
        for key in list(self.sel.get_map().values()):
            self.sel.unregister(key.fd)
            if key.fd == self.report_fd:
                with contextlib.suppress(OSError):
                    os.close(self.report_fd)
        self.sel.close()


def _stop(proc: subprocess.Popen[bytes], grace: float) -> None:
    """Ask the runner to kill its tree (SIGTERM), then kill its whole process group."""
    with contextlib.suppress(OSError):
        proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _start(cmd: list[str], cwd: Path, env: Mapping[str, str], wfd: int) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            cmd, cwd=cwd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, pass_fds=(wfd,), start_new_session=True,
        )  # fmt: skip
    except OSError as e:
        raise StartError(str(e)) from e


def _watch(
    proc: subprocess.Popen[bytes], drain: _Drain, timeout: float, max_processes: int
) -> tuple[bool, int]:
    """Drain the pipes until the process ends: ``(timed out, processes seen past the limit)``."""
    deadline, next_count = time.monotonic() + timeout, 0.0
    while proc.poll() is None:
        now = time.monotonic()
        if now >= deadline:
            return True, 0
        if now >= next_count:
            next_count = now + 0.25
            n = count_descendants(proc.pid)
            if n > max_processes:
                return False, n
        drain.pump(min(0.25, deadline - now) if drain.open() else 0.05)
        if not drain.open():
            time.sleep(0.05)
    return False, 0


def run_isolated(
    cmd: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    config: dict[str, Any],
    config_path: Path,
    key: bytes,
    timeout: float,
    max_output: int,
    max_processes: int,
) -> ProcessResult:
    """Run the trusted test process; never longer than ``timeout`` (plus a short grace).

    ``config`` is written to ``config_path`` with the report pipe's descriptor added; the HMAC
    ``key`` and then ``config_path`` go through stdin (no command line names them).

    Raises:
        StartError: The interpreter could not be started.
    """
    rfd, wfd = os.pipe()
    config_path.write_text(json.dumps({**config, "report_fd": wfd}), encoding="utf-8")
    try:
        proc = _start(cmd, cwd, env, wfd)
    except StartError:
        os.close(rfd)
        raise
    finally:
        os.close(wfd)
    assert proc.stdin is not None and proc.stdout is not None
    with contextlib.suppress(OSError):
        proc.stdin.write(key.hex().encode() + b"\n" + os.fsencode(config_path) + b"\n")
        proc.stdin.close()
    drain = _Drain(proc.stdout.fileno(), rfd, max_output)
    timed_out, too_many = False, 0
    try:
        timed_out, too_many = _watch(proc, drain, timeout, max_processes)
        if timed_out or too_many:
            _stop(proc, grace=5.0)
        end = time.monotonic() + 2.0  # the runner killed its tree; read what is left
        while drain.open() and time.monotonic() < end:
            drain.pump(end - time.monotonic())
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        drain.close()
        proc.stdout.close()
    lines = tuple(ln for ln in b"".join(drain.report).split(b"\n") if ln.strip())
    rc = None if timed_out or too_many else proc.returncode
    return ProcessResult(rc, timed_out, drain.out.text(), lines, drain.overflow, too_many)
