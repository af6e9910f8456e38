"""The runner: the trusted test process, which runs pytest and NEVER imports workspace code.

The checker does not import this module to use it: it copies this file's source text (and
:mod:`~ek.agents.verifier._proxy`'s, as ``_ek_verifier_proxy.py``) into a private directory
of each run and executes ``python -I -B -X utf8 -X pycache_prefix=/dev/null/... runner.py``;
the report's HMAC key and the path of its configuration arrive on stdin. In order, the runner:

1. reads the key and the config; becomes a child subreaper (Linux), so that every
   process the workspace starts, even a ``setsid()`` daemon, stays its descendant, and kills
   them all at the end or on ``SIGTERM``;
2. reads every hidden test file and checks its SHA-256 against the checker's snapshot, then
   keeps them in memory: test modules are compiled from that copy (with pytest's assertion
   rewriting), never read again from disk;
3. runs pytest with the reporter: a workspace module that a test imports is a proxy
   (:mod:`~ek.agents.verifier._proxy`) of the module imported in the sandboxed workspace
   process (:mod:`~ek.agents.verifier._child`), started on first use;
4. streams one record a line through the report pipe, each signed with HMAC-SHA256 over its
   sequence number and content: ``start``, ``sandbox``, each test phase (``test``),
   ``collect_error`` / ``collect_skip``, ``tamper``, ``limit``, ``finish``, ``exit`` (which lists the
   files of every module this process loaded, for the checker's site-packages check); or a
   single ``boot_error``.

Keep this module importable without side effects: only the standard library at the top,
pytest and the proxy inside :func:`main`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib.abc
import importlib.util
import json
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the annotations only; at run time pytest is imported inside main()
    import pytest

__all__ = ["Emitter", "kill_tree", "main"]

# Bound before anything else runs here.
_dumps, _write = json.dumps, os.write
_PR_SET_CHILD_SUBREAPER = 36


class Emitter:
    """Writes signed records: ``<hex HMAC-SHA256> <json with "seq">`` a line."""

    def __init__(self, fd: int, key: bytes) -> None:
        self.fd, self.key, self.seq = fd, key, 0

    def emit(self, rec: dict[str, Any]) -> None:
        body = _dumps({**rec, "seq": self.seq}, default=str)
        self.seq += 1
        mac = hmac.new(self.key, body.encode("utf-8", "replace"), hashlib.sha256).hexdigest()
        data = f"{mac} {body}\n".encode("utf-8", "replace")
        while data:
            data = data[_write(self.fd, data) :]


def _text(x: object) -> str:
    try:
        return str(x)[-1500:]
    except BaseException as e:  # an object under test whose __str__ raises anything at all
        return f"<unprintable: {type(e).__name__}>"


# --------------------------------------------------------------------------- processes
def _subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        return ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children(me: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(b")", 1)[1].split()[1]) == me:
            out.append(int(entry))
    return out


def kill_tree() -> None:
    """SIGKILL every descendant (as a subreaper, orphans come back to us) and reap them."""
    me = os.getpid()
    for _ in range(10_000):
        kids = _children(me) if os.path.isdir("/proc") else []
        for pid in kids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not kids:
            return
        time.sleep(0.002)


# --------------------------------------------------------------------------- the hidden tests
def _module_names(files: dict[str, bytes]) -> dict[str, str]:
    """pytest's ``prepend`` module name of every ``.py`` file (ambiguous names left out)."""
    names: dict[str, str | None] = {}
    for rel in files:
        if not rel.endswith(".py"):
            continue
        parts = rel[:-3].split("/")
        i = len(parts) - 1
        while i > 0 and "/".join(parts[:i]) + "/__init__.py" in files:
            i -= 1
        dotted = ".".join(parts[i:])
        if dotted.endswith(".__init__"):
            dotted = dotted[: -len(".__init__")]
        names[dotted] = None if dotted in names else rel
    return {k: v for k, v in names.items() if v is not None}


class _MemoryLoader(importlib.abc.Loader):
    def __init__(self, path: str, source: bytes, config: Any) -> None:
        self.path, self.source, self.config = path, source, config

    def exec_module(self, module: Any) -> None:
        import ast

        tree = ast.parse(self.source, filename=self.path)
        try:
            from _pytest.assertion.rewrite import rewrite_asserts

            rewrite_asserts(tree, self.source, self.path, self.config)
        except ImportError:  # an older or newer pytest: plain asserts still work
            pass
        exec(compile(tree, self.path, "exec", dont_inherit=True), module.__dict__)


class TestSourceFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: hidden test modules come from the verified in-memory copy."""

    def __init__(self, root: str, files: dict[str, bytes], config: Any) -> None:
        self.root, self.files, self.config = root, files, config
        self.names = _module_names(files)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        rel = self.names.get(fullname)
        if rel is None:
            return None
        full = os.path.join(self.root, rel)
        pkg = [os.path.dirname(full)] if rel.endswith("__init__.py") else None
        loader = _MemoryLoader(full, self.files[rel], self.config)
        return importlib.util.spec_from_file_location(
            fullname, full, loader=loader, submodule_search_locations=pkg
        )


def _load_tests(root: str, digests: dict[str, str]) -> dict[str, bytes] | str:
    """Every file read once and checked against the checker's digests (or why not)."""
    files: dict[str, bytes] = {}
    for rel, want in digests.items():
        try:
            with open(os.path.join(root, rel), "rb") as f:
                data = f.read()
        except OSError as e:
            return f"cannot read hidden test file {rel!r}: {e}"
        if hashlib.sha256(data).hexdigest() != want:
            return f"hidden test file {rel!r} changed before the test session"
        files[rel] = data
    return files


# --------------------------------------------------------------------------- the reporter
class _Reporter:
    """The pytest plugin that installs the import hooks and signs every outcome."""

    def __init__(self, em: Emitter, cfg: dict[str, Any], files: dict[str, bytes]) -> None:
        self.em, self.cfg, self.files = em, cfg, files

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        import _ek_verifier_proxy as proxy_mod

        sys.meta_path.insert(0, TestSourceFinder(self.cfg["tests"], self.files, session.config))
        bridge = proxy_mod.Bridge(
            self.cfg["child_command"], self.cfg["child_config"], self.cfg["workspace"],
            self.cfg["child_env"], self.cfg["out_fd"], self.event,
        )  # fmt: skip
        proxy_mod.install(bridge, self.cfg["workspace"])
        self.em.emit({"event": "start", "pytest": self.cfg["pytest_version"]})

    def event(self, kind: str, data: Any) -> None:
        if kind == "sandbox":
            self.em.emit({"event": "sandbox", "status": data})
        else:  # "tamper" or "limit"
            self.em.emit({"event": kind, "reason": _text(data)})

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed or report.skipped:
            event = "collect_error" if report.failed else "collect_skip"
            rec = {"event": event, "nodeid": report.nodeid, "longrepr": _text(report.longrepr)}
            self.em.emit(rec)

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
        self.em.emit(rec)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.em.emit({"event": "finish", "exitstatus": int(exitstatus)})


def _loaded_files() -> list[str]:
    out = set()
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if isinstance(f, str):
            out.add(f)
    return sorted(out)[:50_000]


def _on_sigterm(signum: int, frame: Any) -> None:
    kill_tree()
    os._exit(128 + signum)


def main() -> None:
    """Run pytest on the hidden tests (HMAC key, then the config's path, on stdin)."""
    key = bytes.fromhex(sys.stdin.readline().strip())
    with open(sys.stdin.readline().rstrip("\n"), encoding="utf-8") as f:
        cfg = json.load(f)
    em = Emitter(int(cfg["report_fd"]), key)
    signal.signal(signal.SIGTERM, _on_sigterm)
    _subreaper()
    files = _load_tests(cfg["tests"], cfg["digests"])
    if isinstance(files, str):
        em.emit({"event": "boot_error", "error": files, "tampered": True})
        os._exit(3)
    cfg["out_fd"] = os.dup(1)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import _ek_verifier_proxy  # noqa: F401  (the private copy, next to this file)
        import pytest
    except BaseException as e:  # whatever stops the import: report it, never a traceback alone
        em.emit({"event": "boot_error", "error": f"{type(e).__name__}: {e}"})
        os._exit(3)
    finally:
        del sys.path[0]
    cfg["pytest_version"] = pytest.__version__
    rc = pytest.main(cfg["args"], plugins=[_Reporter(em, cfg, files)])
    kill_tree()
    em.emit({"event": "exit", "rc": int(rc), "loaded": _loaded_files()})
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(rc) & 0xFF)


if __name__ == "__main__":
    main()
