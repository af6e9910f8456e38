"""The files: a snapshot and hash of the hidden tests, the checks' folder, the interpreter's.

The hidden tests are read into memory and hashed when the checker is built
(:func:`snapshot_tests`, :func:`digest`); the tests pytest will collect are listed statically
(:func:`discover`). Each run works in a folder of its own under :func:`check_parent` (the
workspace copy and the folder's removal are :mod:`~ek.agents.verifier._tree`'s).
:class:`SiteBaseline` records the test interpreter's standard library and site-packages
folders so that a check can tell that they changed.

Example:
    >>> files, source = snapshot_tests({"test_a.py": "def test_one():\\n    assert True\\n"})
    >>> discover(files), source
    (('test_a.py::test_one',), None)
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import re
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ek._validate import short_repr
from ek.agents.verifier._tree import BYTECODE
from ek.jsonio import path_text

__all__ = [
    "SiteBaseline",
    "check_parent",
    "digest",
    "discover",
    "read_back",
    "site_baseline",
    "snapshot_tests",
]

_TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")


# --------------------------------------------------------------------------- the hidden tests
def _snapshot_mapping(tests: Mapping[Any, Any]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for k, v in tests.items():
        if not isinstance(k, str) or not k:
            raise TypeError(
                f"tests mapping keys must be non-empty str paths, got {short_repr(k, 100)}"
            )
        rel = Path(k)
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(
                f"tests mapping keys must be relative paths inside the tests root, got {short_repr(k, 200)}"
            )
        data = v.encode("utf-8") if isinstance(v, str) else v
        if not isinstance(data, bytes):
            raise TypeError(
                f"tests[{short_repr(k, 200)}] must be str or bytes, got {type(v).__name__}"
            )
        files[rel.as_posix()] = data
    return files


def _snapshot_dir(src: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", ".pytest_cache"))
        for name in sorted(filenames):
            if name.endswith(BYTECODE):
                continue
            p = Path(dirpath) / name
            files[p.relative_to(src).as_posix()] = p.read_bytes()
    return files


def snapshot_tests(tests: Any) -> tuple[dict[str, bytes], Path | None]:
    """Read the hidden tests into memory: ``{posix relative path: bytes}`` and their source.

    Args:
        tests: A test file, a directory (read recursively, bytecode skipped), or a
            ``{relative path: str or bytes}`` mapping.

    Returns:
        The files, and the resolved path they were read from (``None`` for a mapping).

    Example:
        >>> snapshot_tests({"sub/test_b.py": b"x = 1\\n"})
        ({'sub/test_b.py': b'x = 1\\n'}, None)
    """
    if isinstance(tests, Mapping):
        return _snapshot_mapping(tests), None
    if not isinstance(tests, (str, os.PathLike)):
        raise TypeError(
            f"tests must be a path (file or directory) or a {{path: source}} mapping, got {type(tests).__name__}"
        )
    text = path_text("hidden_tests: tests", tests)
    if not text:
        raise ValueError("tests must be a test file or directory, got an empty path")
    src = Path(text)
    if src.is_file():
        return {src.name: src.read_bytes()}, src.resolve()
    if not src.is_dir():
        raise ValueError(
            f"tests must be an existing test file or directory, got {short_repr(str(src), 200)}"
        )
    return _snapshot_dir(src), src.resolve()


def digest(files: Mapping[str, bytes]) -> str:
    """SHA-256 over every ``(path, length, content)``, in path order.

    Example:
        >>> digest({"a": b"1"}) == digest({"a": b"1"}) != digest({"a": b"2"})
        True
    """
    h = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _tests_in(tree: ast.Module, rel: str) -> list[str]:
    found: list[str] = []
    funcs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, funcs) and node.name.startswith("test"):
            found.append(f"{rel}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found.extend(
                f"{rel}::{node.name}::{sub.name}"
                for sub in node.body
                if isinstance(sub, funcs) and sub.name.startswith("test")
            )
    return found


def discover(files: Mapping[str, bytes]) -> tuple[str, ...]:
    """Statically list the tests pytest's default rules will collect (before parametrisation).

    ``test*`` functions and ``Test*`` classes' ``test*`` methods of ``test_*.py`` /
    ``*_test.py`` files.

    Example:
        >>> discover({"x_test.py": b"class TestK:\\n    def test_m(self): pass\\n",
        ...           "helpers.py": b"def test_no(): pass\\n"})
        ('x_test.py::TestK::test_m',)
    """
    found: list[str] = []
    for rel in sorted(files):
        if not _TEST_FILE.match(rel.rsplit("/", 1)[-1]):
            continue
        try:
            tree = ast.parse(files[rel], filename=rel)
        except SyntaxError as e:
            raise ValueError(f"hidden test file {rel!r} does not parse: {e}") from e
        found.extend(_tests_in(tree, rel))
    return tuple(found)


def read_back(root: Path, names: Iterable[str]) -> dict[str, bytes]:
    """Read ``names`` under ``root`` again (an unreadable file reads as a marker, never equal).

    Example:
        >>> read_back(Path("/nonexistent-ek"), ["a.py"])
        {'a.py': b'\\x00<missing>'}
    """
    out: dict[str, bytes] = {}
    for rel in names:
        try:
            out[rel] = (root / rel).read_bytes()
        except OSError:
            out[rel] = b"\0<missing>"
    return out


# --------------------------------------------------------------------------- folders
def check_parent() -> Path:
    """The folder that holds every check's files for this user: ``<tmp>/ek-verifier-<uid>``.

    Made with mode 0700; refused (a fresh random folder is used instead) if it is a symlink,
    not a directory, not ours or open to others. The workspace process cannot list it (its
    Landlock rules hide it), so no check can find another's files.

    Example:
        >>> check_parent().is_dir()
        True
    """
    p = Path(tempfile.gettempdir()) / f"ek-verifier-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(p, 0o700)
    st = os.lstat(p)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return Path(tempfile.mkdtemp(prefix="ek-verifier-"))
    return p


# --------------------------------------------------------------------------- site-packages
_PROBE = (
    "import json, site, sys, sysconfig; print(json.dumps({'path': sys.path, "
    "'site': site.getsitepackages(), 'stdlib': [sysconfig.get_path('stdlib'), "
    "sysconfig.get_path('platstdlib')]}))"
)


def _sig(st: os.stat_result) -> tuple[int, ...]:
    # ctime cannot be set by a process (utime sets only atime and mtime): any write shows.
    return (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class SiteBaseline:
    """The standard library and site-packages folders of one interpreter, from a moment on.

    Records each root's top-level entries (a directory by type and inode, a file by type,
    size, mtime, ctime and inode) and the time it was taken. :meth:`changed` says what differs
    now: a new, removed or changed top-level entry (a ``.pth`` file, a package), or one of the
    given files (the modules the trusted test process loaded) missing or changed since then:
    its ctime is later. A process cannot set a ctime back (``utime`` sets only atime and
    mtime), so a change that is later undone still shows. ``__pycache__`` is skipped: the
    test processes never read bytecode (``-B``, ``-X pycache_prefix`` under ``/dev/null``).

    Example:
        >>> d = Path(tempfile.mkdtemp())
        >>> _ = (d / "mod.py").write_text("X = 1\\n")
        >>> base = SiteBaseline([str(d)])
        >>> base.changed([str(d / "mod.py")]) is None
        True
        >>> _ = (d / "evil.pth").write_text("import os\\n")
        >>> base.changed([]).startswith("new, removed or changed entry 'evil.pth'")
        True
    """

    def __init__(self, roots: Iterable[str]) -> None:
        self.roots = sorted({os.path.realpath(r) for r in roots})
        self.tops = {r: self._top(r) for r in self.roots}
        self.since = time.time_ns()

    @staticmethod
    def _top(root: str) -> dict[str, tuple[int, ...]]:
        out: dict[str, tuple[int, ...]] = {}
        try:
            with os.scandir(root) as it:
                for e in it:
                    if e.name != "__pycache__":
                        st = e.stat(follow_symlinks=False)
                        dir_sig = (stat.S_IFMT(st.st_mode), st.st_ino)
                        out[e.name] = dir_sig if stat.S_ISDIR(st.st_mode) else _sig(st)
        except OSError:
            return {}
        return out

    def _under_a_root(self, path: str) -> bool:
        return any(path.startswith(r + os.sep) for r in self.roots)

    def changed(self, loaded: Iterable[str]) -> str | None:
        """What changed since the baseline, or None: top-level entries, then ``loaded`` files."""
        for r in self.roots:
            now = self._top(r)
            if now != self.tops[r]:
                diff = sorted(set(now.items()) ^ set(self.tops[r].items()))
                return (
                    f"new, removed or changed entry {diff[0][0]!r} in the test interpreter's "
                    f"library folder {r!r}"
                )
        for f in loaded:
            real = os.path.realpath(f)
            if "__pycache__" in real or not self._under_a_root(real):
                continue
            try:
                if os.lstat(real).st_ctime_ns <= self.since:
                    continue
            except OSError:
                pass
            return f"the module file {real!r} of the test interpreter changed"
        return None


_BASELINES: dict[str, SiteBaseline] = {}
_BASELINES_LOCK = threading.Lock()


def site_baseline(python: str) -> SiteBaseline | str:
    """The :class:`SiteBaseline` of ``python``, taken at this process's first check with it.

    One per interpreter and process, shared by every checker: a ``.pth`` that one check's
    workspace manages to write is seen by every later check, whatever its checker. (A
    legitimate install into that environment while the process runs is seen the same way.)
    """
    with _BASELINES_LOCK:
        if python not in _BASELINES:
            try:
                out = subprocess.run(
                    [python, "-I", "-c", _PROBE], capture_output=True, timeout=60,
                    stdin=subprocess.DEVNULL, env={"PATH": os.defpath, "LC_ALL": "C.UTF-8"},
                )  # fmt: skip
                info = json.loads(out.stdout)
            except (OSError, ValueError, subprocess.TimeoutExpired) as e:
                return f"cannot ask {python!r} for its library folders: {e}"
            _BASELINES[python] = SiteBaseline(_roots(info))
        return _BASELINES[python]


def _roots(info: Mapping[str, Any]) -> list[str]:
    """Site-packages folders (existing or not) and the ``sys.path`` entries of the stdlib."""
    stdlib = [p for p in info["stdlib"] if isinstance(p, str)]
    roots = [p for p in info["site"] if isinstance(p, str)]
    for p in info["path"]:
        if not isinstance(p, str) or not os.path.isdir(p):
            continue
        if p.endswith(("site-packages", "dist-packages")) or any(p.startswith(s) for s in stdlib):
            roots.append(p)
    return roots
