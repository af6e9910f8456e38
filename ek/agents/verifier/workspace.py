"""The files: a snapshot and hash of the hidden tests, and a limited copy of the workspace.

The hidden tests are read into memory and hashed when the checker is built
(:func:`snapshot_tests`, :func:`digest`); the tests pytest will collect are listed statically
(:func:`discover`). Each run copies the agent's workspace into a fresh directory with
:func:`copy_workspace`: directories and regular files only, within ``max_files`` / ``max_bytes``.

Example:
    >>> files, source = snapshot_tests({"test_a.py": "def test_one():\\n    assert True\\n"})
    >>> discover(files), source
    (('test_a.py::test_one',), None)
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "WorkspaceError",
    "copy_workspace",
    "digest",
    "discover",
    "read_back",
    "snapshot_tests",
]

_TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")
_BYTECODE = (".pyc", ".pyo")


# --------------------------------------------------------------------------- the hidden tests
def _snapshot_mapping(tests: Mapping[Any, Any]) -> dict[str, bytes]:
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
    return files


def _snapshot_dir(src: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", ".pytest_cache"))
        for name in sorted(filenames):
            if name.endswith(_BYTECODE):
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
    src = Path(tests)
    if src.is_file():
        return {src.name: src.read_bytes()}, src.resolve()
    if not src.is_dir():
        raise ValueError(f"tests must be an existing test file or directory, got {str(src)!r}")
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


# --------------------------------------------------------------------------- the workspace copy
class WorkspaceError(Exception):
    """The workspace cannot be copied within its limits."""


class _Copy:
    """One workspace copy in progress: the running totals and what was skipped."""

    def __init__(self, src: Path, max_files: int, max_bytes: int) -> None:
        self.src = src
        self.root = os.path.realpath(src)
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.n_files = 0
        self.n_bytes = 0
        self.skipped: list[str] = []

    def resolve(self, e: os.DirEntry[str], rel: str) -> tuple[str, os.stat_result] | None:
        """The path to copy from and its stat; None (recorded) for a link that leaves."""
        st = e.stat(follow_symlinks=False)
        if not stat.S_ISLNK(st.st_mode):
            return e.path, st
        real = os.path.realpath(e.path)
        if os.path.commonpath([self.root, real]) != self.root or not os.path.isfile(real):
            self.skipped.append(f"{rel} (symlink to {real})")
            return None
        return real, os.stat(real)

    def count(self, size: int) -> None:
        self.n_files += 1
        self.n_bytes += size
        if self.n_files > self.max_files or self.n_bytes > self.max_bytes:
            raise WorkspaceError(
                f"workspace exceeds the copy limits (max_files={self.max_files}, "
                f"max_bytes={self.max_bytes}); got at least {self.n_files} files / {self.n_bytes} bytes"
            )

    def entry(self, e: os.DirEntry[str], d_dir: Path) -> Path | None:
        """Copy one entry into ``d_dir``; returns a directory still to descend into."""
        rel = os.path.relpath(e.path, self.src)
        resolved = self.resolve(e, rel)
        if resolved is None:
            return None
        target, st = resolved
        if stat.S_ISDIR(st.st_mode):
            if e.name == "__pycache__":
                self.skipped.append(f"{rel} (bytecode cache)")
                return None
            os.mkdir(os.path.join(d_dir, e.name))
            return Path(d_dir) / e.name
        if not stat.S_ISREG(st.st_mode):
            self.skipped.append(f"{rel} (special file)")
        elif e.name.endswith(_BYTECODE):
            self.skipped.append(f"{rel} (bytecode)")
        else:
            self.count(st.st_size)
            shutil.copyfile(target, os.path.join(d_dir, e.name), follow_symlinks=False)
            os.chmod(os.path.join(d_dir, e.name), stat.S_IMODE(st.st_mode) | stat.S_IRUSR)
        return None


def copy_workspace(src: Path, dst: Path, max_files: int, max_bytes: int) -> list[str]:
    """Copy ``src`` into ``dst``: directories and regular files only; returns what was skipped.

    A symlink is copied as the file it points to only when that file lies inside the
    workspace; links that leave the workspace, directory links, special files (FIFOs, sockets,
    devices) and bytecode (``__pycache__``, ``*.pyc``) are skipped.

    Raises:
        WorkspaceError: More than ``max_files`` files or ``max_bytes`` bytes.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> src, dst = Path(tmp.name, "ws"), Path(tmp.name, "copy")
        >>> src.mkdir(), dst.mkdir(), (src / "solution.py").write_text("X = 1\\n")
        (None, None, 6)
        >>> _ = (src / "old.pyc").write_bytes(b"")
        >>> copy_workspace(src, dst, 10, 1000), sorted(p.name for p in dst.iterdir())
        (['old.pyc (bytecode)'], ['solution.py'])
        >>> tmp.cleanup()
    """
    copy = _Copy(src, max_files, max_bytes)
    stack = [(src, dst)]
    while stack:
        s_dir, d_dir = stack.pop()
        with os.scandir(s_dir) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            sub = copy.entry(e, d_dir)
            if sub is not None:
                stack.append((Path(e.path), sub))
    return copy.skipped
