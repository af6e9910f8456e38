"""The isolated test process: its files, command and environment, its pipes, its timeout.

:func:`prepare_private` writes the runner (the source text of
:mod:`ek.agents.verifier.runner`, never imported by the child as part of ``ek``) and the
checker's own ``pytest.ini`` into a private directory; :func:`build_command` and
:func:`build_env` make a command line and an environment from scratch; :func:`run_isolated`
starts the process in its own session, drains its output (head and tail kept, see
:class:`Bounded`) and its report pipe, and kills the whole process group when it exits or
times out.

Example:
    >>> cmd = build_command("python", Path("/p/runner.py"), Path("/p/pytest.ini"),
    ...                     Path("/ws"), Path("/tests"), Path("/p/basetemp"), ())
    >>> cmd[:6], cmd[-1]
    (['python', '-I', '-B', '-X', 'utf8', '/p/runner.py'], '/tests')
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import signal
import subprocess
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = [
    "FD_VARIABLE",
    "INI",
    "REPORT_LIMIT",
    "Bounded",
    "ProcessResult",
    "StartError",
    "build_command",
    "build_env",
    "drain_output",
    "drain_report",
    "prepare_private",
    "run_isolated",
    "runner_source",
]

#: The environment variable that tells the runner its report pipe (the runner removes it).
FD_VARIABLE = "EK_VERIFIER_FD"

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


@functools.lru_cache(maxsize=1)
def runner_source() -> str:
    """The source text of :mod:`ek.agents.verifier.runner`, read from the installed package.

    Example:
        >>> "def main()" in runner_source()
        True
    """
    return resources.files(__package__).joinpath("runner.py").read_text(encoding="utf-8")


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


def drain_output(stream: io.BufferedIOBase, sink: Bounded) -> None:
    """Read ``stream`` to its end into ``sink`` (a closed or failing stream just ends it)."""
    try:
        for chunk in iter(lambda: stream.read1(65536), b""):
            sink.add(chunk)
    except (OSError, ValueError):
        pass


def drain_report(fd: int, sink: list[bytes], limit: int, overflow: list[bool]) -> None:
    """Read the report pipe ``fd`` to its end into ``sink``, then close it.

    Past ``limit`` bytes the rest is read and discarded and ``overflow[0]`` is set.
    """
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


# --------------------------------------------------------------------------- the command
def prepare_private(private: Path) -> tuple[Path, Path]:
    """Write the runner and the ini file into ``private`` and make ``home``, ``tmp``, ``basetemp``.

    Returns:
        The paths of the runner and of the ini file.
    """
    runner = private / "runner.py"
    runner.write_text(runner_source(), encoding="utf-8")
    ini = private / "pytest.ini"
    ini.write_text(INI, encoding="utf-8")
    for sub in ("home", "tmp", "basetemp"):
        (private / sub).mkdir()
    return runner, ini


def build_command(
    python: str,
    runner: Path,
    ini: Path,
    ws_copy: Path,
    tests_dir: Path,
    basetemp: Path,
    plugins: Iterable[str],
) -> list[str]:
    """The command line: isolated interpreter, the checker's ini, no conftest, explicit plugins."""
    cmd = [
        python, "-I", "-B", "-X", "utf8", str(runner), str(ws_copy),
        "-c", str(ini), "--rootdir", str(tests_dir), "--confcutdir", str(tests_dir),
        "--noconftest", "-p", "no:cacheprovider", "--import-mode=prepend",
        "--basetemp", str(basetemp), "--continue-on-collection-errors",
        "-q", "--no-header", "--color=no", "--tb=short",
    ]  # fmt: skip
    for plugin in plugins:
        cmd += ["-p", plugin]
    cmd.append(str(tests_dir))
    return cmd


def build_env(private: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """An environment built from scratch (nothing inherited), plus the user's ``extra``.

    Example:
        >>> env = build_env(Path("/p"), {"TZ": "UTC"})
        >>> env["HOME"], env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"], env["TZ"]
        ('/p/home', '1', 'UTC')
    """
    return {
        "PATH": os.defpath,
        "HOME": str(private / "home"),
        "TMPDIR": str(private / "tmp"),
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
        exit_code: Its exit status; ``None`` when it was killed on timeout.
        timed_out: True when it did not finish within the timeout.
        output: Its bounded stdout and stderr (head and tail).
        lines: The report's non-blank lines, in order.
        overflow: True when the report exceeded :data:`REPORT_LIMIT`.
    """

    exit_code: int | None
    timed_out: bool
    output: str
    lines: tuple[bytes, ...]
    overflow: bool


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    """Wait for the process; then kill its whole group (stray children die too). None: timed out."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_isolated(
    cmd: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float, max_output: int
) -> ProcessResult:
    """Run ``cmd`` in a new session with a private report pipe; never longer than ``timeout``.

    Raises:
        StartError: The interpreter could not be started.
    """
    rfd, wfd = os.pipe()
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env={**env, FD_VARIABLE: str(wfd)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(wfd,),
            start_new_session=True,
        )
    except OSError as e:
        os.close(rfd)
        raise StartError(str(e)) from e
    finally:
        os.close(wfd)
    out = Bounded(max_output)
    chunks: list[bytes] = []
    overflow = [False]
    readers = [
        threading.Thread(target=drain_output, args=(proc.stdout, out), daemon=True),
        threading.Thread(
            target=drain_report, args=(rfd, chunks, REPORT_LIMIT, overflow), daemon=True
        ),
    ]
    for t in readers:
        t.start()
    rc = _wait(proc, timeout)
    for t in readers:
        t.join(timeout=5.0)
    if proc.stdout is not None:
        proc.stdout.close()
    lines = tuple(ln for ln in b"".join(chunks).split(b"\n") if ln.strip())
    return ProcessResult(rc, rc is None, out.text(), lines, overflow[0])
