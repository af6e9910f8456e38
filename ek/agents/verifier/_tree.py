"""Trees the agent may still change: the workspace copy and the removal of a check's folders.

A process the agent left behind can swap a directory or a file of its workspace for a symbolic
link at any moment (atomically, with ``renameat2(RENAME_EXCHANGE)``), between the moment the
checker lists a name and the moment it opens it. So nothing here opens a path by name from the
top: :func:`copy_workspace` opens every directory and file relative to its parent directory's
descriptor with ``O_NOFOLLOW`` (a link swapped in fails to open and is skipped), reads a file's
type and size from the open descriptor (``fstat``), creates each copy with ``O_CREAT | O_EXCL |
O_NOFOLLOW`` and sets its mode with ``fchmod``. One directory of each side is open at a time: the
walk goes back up through ``..`` and checks that it arrives where it came from, so the depth of
the tree costs neither descriptors nor path length. Every directory is compared with the hidden
tests' folder (device and inode): a workspace that contains it, or lies inside it, is refused
(:class:`TestsInWorkspace`). :func:`remove_tree` removes a tree without recursion, moving each
directory up to the top before emptying it, also without following a link.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = Path(tempfile.mkdtemp())
    >>> (tmp / "ws").mkdir(), (tmp / "copy").mkdir(), (tmp / "ws" / "a.py").write_text("A = 1\\n")
    (None, None, 6)
    >>> copy_workspace(tmp / "ws", tmp / "copy", 10, 1000), (tmp / "copy" / "a.py").read_text()
    ([], 'A = 1\\n')
    >>> remove_tree(tmp), tmp.exists()
    (None, False)
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import secrets
import stat
from collections.abc import Collection
from pathlib import Path

__all__ = [
    "BYTECODE",
    "TestsInWorkspace",
    "WorkspaceError",
    "copy_workspace",
    "identity",
    "remove_tree",
]

#: File names the copy skips (the test processes never read bytecode; see ``process.py``).
BYTECODE = (".pyc", ".pyo")

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in after the listing does not block the open; O_NOCTTY: a terminal
# does not become ours. Both are refused after the open by fstat (not a regular file).
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20


class WorkspaceError(Exception):
    """The workspace cannot be copied within its limits, or changed shape while being copied."""


class TestsInWorkspace(WorkspaceError):
    """The workspace contains, or lies inside, the hidden tests' folder."""

    __test__ = False  # a name pytest would otherwise try to collect


def identity(st: os.stat_result) -> tuple[int, int]:
    """A file's identity: ``(device, inode)``, the same whichever path reaches it.

    Example:
        >>> identity(os.stat("/")) == identity(os.stat("/."))
        True
    """
    return st.st_dev, st.st_ino


# --------------------------------------------------------------------------- the copy
class _Copy:
    """One workspace copy in progress: the open directories, the totals, what was skipped."""

    def __init__(
        self, root: int, root_path: str, limits: tuple[int, int], avoid: Collection[tuple[int, int]]
    ) -> None:
        self.root, self.root_path = root, root_path
        self.max_files, self.max_bytes = limits
        self.avoid = avoid
        self.n_files = 0
        self.n_bytes = 0
        self.skipped: list[str] = []
        self.src = -1  # the directory being copied, and its copy
        self.dst = -1

    def count(self, size: int) -> None:
        self.n_files += 1
        self.n_bytes += size
        if self.n_files > self.max_files or self.n_bytes > self.max_bytes:
            raise WorkspaceError(
                f"workspace exceeds the copy limits (max_files={self.max_files} files and "
                f"directories, max_bytes={self.max_bytes}); got at least {self.n_files} "
                f"files and directories / {self.n_bytes} bytes"
            )

    def checked(self, fd: int) -> tuple[int, int]:
        """The identity of an open directory of the workspace; refused if it is the tests'."""
        ident = identity(os.fstat(fd))
        if ident in self.avoid:
            raise TestsInWorkspace("the workspace contains, or lies inside, the hidden tests")
        return ident

    def not_inside_avoided(self) -> None:
        """Walk up from the root through ``..`` to ``/``: no folder on the way is the tests'."""
        fd = os.dup(self.root)
        try:
            ident = self.checked(fd)
            while True:
                try:
                    up = os.open("..", _DIR, dir_fd=fd)
                except OSError:
                    return  # a folder we may not open: nothing above it can be checked
                os.close(fd)
                fd = up
                above = self.checked(fd)
                if above == ident:
                    return  # "/" is its own parent
                ident = above
        finally:
            os.close(fd)

    # -- one directory
    def directory(self, rel: str) -> list[str]:
        """Copy the files of the open directory; make its subdirectories; their names, last first."""
        with os.scandir(self.src) as it:
            entries = sorted(it, key=lambda e: e.name)
        subdirs = []
        for e in entries:
            path = rel + e.name
            if e.is_symlink():
                self.link(e.name, path, rel)
            elif e.is_dir(follow_symlinks=False):
                if e.name == "__pycache__":
                    self.skipped.append(f"{path} (bytecode cache)")
                else:
                    self.count(0)
                    os.mkdir(e.name, 0o700, dir_fd=self.dst)
                    subdirs.append(e.name)
            elif not e.is_file(follow_symlinks=False):
                self.skipped.append(f"{path} (special file)")
            elif e.name.endswith(BYTECODE):
                self.skipped.append(f"{path} (bytecode)")
            else:
                self.file(_open_or_none(e.name, _FILE, self.src), e.name, path)
        subdirs.reverse()
        return subdirs

    def link(self, name: str, path: str, rel: str) -> None:
        """A link is copied as the file it names only when that file lies in the workspace."""
        try:
            target = os.readlink(name, dir_fd=self.src)
        except OSError:  # EINVAL: no longer a link; ENOENT: gone
            self.skipped.append(f"{path} (changed while being copied)")
            return
        inside = _beneath(self.root_path, rel, target)
        fd = None if inside is None else self.open_beneath(inside)
        if fd is None:
            self.skipped.append(f"{path} (symlink to {target})")
        else:
            self.file(fd, name, path, f"symlink to {target}")

    def open_beneath(self, rel: str) -> int | None:
        """Open ``rel`` under the root, one component at a time, no link followed (or None)."""
        parts = rel.split("/")
        fd = os.dup(self.root)
        try:
            for part in parts[:-1]:
                nxt = os.open(part, _DIR, dir_fd=fd)
                os.close(fd)
                fd = nxt
            return os.open(parts[-1], _FILE, dir_fd=fd)
        except OSError:
            return None
        finally:
            os.close(fd)

    def file(self, fd: int | None, name: str, path: str, what: str = "special file") -> None:
        """Copy the open file ``fd`` (None: it could not be opened) as ``name``; closes ``fd``."""
        if fd is None:
            self.skipped.append(f"{path} (changed while being copied)")
            return
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                self.skipped.append(f"{path} ({what})")
                return
            self.count(st.st_size)
            _write_copy(fd, st, name, self.dst)
        finally:
            os.close(fd)

    # -- the walk
    def down(self, name: str) -> bool:
        """Enter the subdirectory ``name`` on both sides (False: it is no longer a directory)."""
        sub = _open_or_none(name, _DIR, self.src)
        if sub is None:
            return False
        try:
            sub_dst = os.open(name, _DIR, dir_fd=self.dst)
        except OSError:
            os.close(sub)
            raise
        os.close(self.src)
        os.close(self.dst)
        self.src, self.dst = sub, sub_dst
        return True

    def up(self, expected: tuple[int, int]) -> None:
        """Back to the parent on both sides; it must be the directory the walk came from."""
        parent = os.open("..", _DIR, dir_fd=self.src)
        if identity(os.fstat(parent)) != expected:
            os.close(parent)
            raise WorkspaceError("the workspace changed while it was copied (a folder moved)")
        parent_dst = os.open("..", _DIR, dir_fd=self.dst)
        os.close(self.src)
        os.close(self.dst)
        self.src, self.dst = parent, parent_dst

    def walk(self) -> None:
        """Copy the whole tree, depth first, holding one directory of each side open."""
        stack = [(self.checked(self.src), self.directory(""), "")]
        while stack:
            _, todo, rel = stack[-1]
            if not todo:
                stack.pop()
                if stack:
                    self.up(stack[-1][0])
                continue
            name = todo.pop()
            if not self.down(name):
                self.skipped.append(f"{rel}{name} (changed while being copied)")
                continue
            sub = f"{rel}{name}/"
            stack.append((self.checked(self.src), self.directory(sub), sub))


def _open_or_none(name: str, flags: int, dir_fd: int) -> int | None:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError:  # ELOOP: a link now; ENOTDIR, ENOENT: swapped or gone since the listing
        return None


def _beneath(root_path: str, rel: str, target: str) -> str | None:
    """The workspace-relative path a link's target names, if it stays inside the workspace.

    Example:
        >>> _beneath("/ws", "pkg/", "mod.py"), _beneath("/ws", "", "/ws/a/b.py")
        ('pkg/mod.py', 'a/b.py')
        >>> _beneath("/ws", "pkg/", "../../etc/passwd"), _beneath("/ws", "", "/etc/passwd")
        (None, None)
    """
    if target.startswith("/"):
        prefix = root_path.rstrip("/") + "/"
        if not target.startswith(prefix):
            return None
        target, rel = target[len(prefix) :], ""
    norm = posixpath.normpath(rel + target)
    if norm in (".", "..") or norm.startswith(("../", "/")):
        return None
    return norm


def _write_copy(fd: int, st: os.stat_result, name: str, dst: int) -> None:
    """Write at most ``st.st_size`` bytes of ``fd`` into a new file ``name`` of ``dst``."""
    out = os.open(name, _NEW, 0o600, dir_fd=dst)
    try:
        left = st.st_size  # what was counted: a file that grows meanwhile is cut there
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            left -= len(chunk)
            while chunk:
                chunk = chunk[os.write(out, chunk) :]
        # no set-user-ID, set-group-ID or sticky bit: the copy is data for the workspace process
        os.fchmod(out, (stat.S_IMODE(st.st_mode) & 0o777) | stat.S_IRUSR)
    finally:
        os.close(out)


def copy_workspace(
    src: Path,
    dst: Path,
    max_files: int,
    max_bytes: int,
    avoid: Collection[tuple[int, int]] = (),
) -> list[str]:
    """Copy ``src`` into ``dst``: directories and regular files only; returns what was skipped.

    ``src`` itself is opened as named (the caller's path); below it no link is followed. A
    symlink is copied as the file it names only when that file lies inside the workspace and
    is reached without another link; links that leave the workspace, directory links, special
    files (FIFOs, sockets, devices), bytecode (``__pycache__``, ``*.pyc``) and entries that
    change type while being copied are skipped and recorded. Copies get the source's
    permission bits (made readable by the owner), never set-user-ID, set-group-ID or sticky.

    Args:
        src: The workspace.
        dst: An empty directory to copy into.
        max_files: Most files and directories copied.
        max_bytes: Most bytes copied.
        avoid: Identities (:func:`identity`) of folders the workspace must neither be, nor
            lie inside, nor contain: the hidden tests'.

    Raises:
        TestsInWorkspace: The workspace contains, or lies inside, a folder of ``avoid``.
        WorkspaceError: More than ``max_files`` files and directories, or ``max_bytes``
            bytes; or a folder moved while the workspace was being copied.
        OSError: ``src`` or ``dst`` cannot be opened as a directory.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> src, dst = Path(tmp.name, "ws"), Path(tmp.name, "copy")
        >>> src.mkdir(), dst.mkdir(), (src / "solution.py").write_text("X = 1\\n")
        (None, None, 6)
        >>> _ = (src / "old.pyc").write_bytes(b"")
        >>> copy_workspace(src, dst, 10, 1000), sorted(p.name for p in dst.iterdir())
        (['old.pyc (bytecode)'], ['solution.py'])
        >>> copy_workspace(src, Path(tmp.name, "copy"), 10, 1000, avoid={identity(os.stat(src))})
        Traceback (most recent call last):
        ...
        ek.agents.verifier._tree.TestsInWorkspace: the workspace contains, or lies inside, the hidden tests
        >>> tmp.cleanup()
    """
    root = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    copy = _Copy(root, os.path.realpath(src), (max_files, max_bytes), frozenset(avoid))
    try:
        if copy.avoid:
            copy.not_inside_avoided()
        copy.src = os.dup(root)
        copy.dst = os.open(dst, _DIR)
        copy.walk()
    finally:
        for fd in (copy.src, copy.dst, root):
            if fd >= 0:
                os.close(fd)
    return copy.skipped


# --------------------------------------------------------------------------- removal
def remove_tree(root: Path) -> None:
    """Remove ``root`` and everything in it, however deep, without recursion.

    Every directory is first moved up to ``root`` itself (``rename`` relative to directory
    descriptors), so no path grows long and no descriptor chain grows deep; no link is
    followed (a directory is opened with ``O_NOFOLLOW`` and made writable with ``fchmod``).
    Errors are ignored (what cannot be removed stays).

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> deep = d.joinpath(*["x"] * 50)
        >>> deep.mkdir(parents=True)
        >>> remove_tree(d)
        >>> d.exists()
        False
    """
    try:
        top = os.open(root, _DIR)
    except OSError:
        return
    try:
        todo = ["."]
        while todo:
            name = todo.pop()
            _empty_dir(top, name, todo)
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(root)


def _open_writable(name: str, dir_fd: int) -> int:
    """Open the directory ``name`` (never a link) and make it ours to empty (mode 0700)."""
    try:
        fd = os.open(name, _DIR, dir_fd=dir_fd)
    except PermissionError:  # a folder the workspace made unreadable: chmod it, never a link
        handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY, dir_fd=dir_fd)
        try:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)  # the very directory the handle holds
        finally:
            os.close(handle)
        fd = os.open(name, _DIR, dir_fd=dir_fd)
    os.fchmod(fd, 0o700)
    return fd


def _empty_dir(top: int, name: str, todo: list[str]) -> None:
    """Unlink the files of ``top/name``, move its directories up into ``top``; rmdir it."""
    try:
        fd = _open_writable(name, top)
    except (OSError, AttributeError):  # AttributeError: no O_PATH on this system
        return
    try:
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        for entry, is_dir in entries:
            try:
                if is_dir:
                    moved = f".ek-rm-{secrets.token_hex(8)}"
                    os.rename(entry, moved, src_dir_fd=fd, dst_dir_fd=top)
                    todo.append(moved)
                else:
                    os.unlink(entry, dir_fd=fd)
            except OSError:
                pass
    finally:
        os.close(fd)
    if name != ".":
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=top)
