"""The trial store: a JSON-lines file that makes a suite run resumable.

Layout: the first line is a **header** (``{"ek_store": 1, "run": RunProvenance, "suite":
{"fingerprint", "tasks"}, "k", "seed", "ek_version", ...}``); every further line is one
**finished trial** (``{"task_id", "trial", "success", "check", "episode", "scores"}``).

Optional fields (absent in a store written without them; a reader that does not know them reads
the store as before): ``retries`` (infrastructure retries before the trial's result) and
``infra_error`` (the trial ended in an infrastructure error after every retry: its ``success``
is ``false`` so every reader can parse it, and this ek leaves it out of the counts; see
:mod:`ek.agents.infra`). The header may record ``metrics`` (each metric's configuration,
:mod:`ek.agents.fingerprint`), ``budget``, ``adaptive`` and ``fault``.

Durability, precisely:

* Each trial's line is handed to the operating system with one unbuffered ``write`` as soon
  as the trial finishes, so a killed process (SIGKILL, OOM, a crash) loses no finished trial:
  the kernel still holds the bytes.
* ``fsync`` (to survive a **power loss** or kernel crash) is done in batches (group commit):
  after every ``fsync_every`` trials (default 64) or, when a trial finishes, if
  ``fsync_interval`` seconds (default 1.0) have passed since the last one; and always on
  :meth:`TrialStore.close`. By default the batch fsync runs on a background thread
  (``background_fsync=True``) so a slow disk never stalls the trials; one fsync is in flight at a
  time, and a batch that comes due meanwhile is synced by the next trigger. A power loss can
  therefore cost the trials written since the start of the last completed fsync: about
  ``fsync_every`` trials or ``fsync_interval`` seconds' worth, plus those that finished while
  an fsync was in flight (longer only if no trial finished since then to trigger the timed
  sync). Lost trials are simply re-run on resume.
* A crash in the middle of a ``write`` can leave a **torn last line** (no trailing newline, not
  valid JSON). Opening the store detects it and truncates it away (earlier lines are untouched);
  a complete last line that merely lacks its newline is kept. A malformed line *before* the last
  one is corruption, not a crash, and is refused.
* Opening an existing store with a different provenance, suite fingerprint, ``k`` or checker
  (``check``, when the header records one) is refused: mixing trials of two experiments would
  silently corrupt both. So is a metric whose configuration (``metrics``: name -> class,
  settings and fingerprint, see :mod:`ek.agents.fingerprint`) differs from the one the header
  records under the same name.
* One writer at a time: :meth:`TrialStore.open` takes an exclusive, non-blocking ``flock`` on the
  file (released on close, and by the kernel when the process dies, so a SIGKILL leaves no stale
  lock) and refuses a second writer with :class:`StoreLockedError`. Where ``fcntl`` does not
  exist (Windows) no lock is taken: run one writer per store there.
* Every record is validated on read (``success`` a bool, ``trial`` in ``[0, k)``, the episode's
  ``task_id`` the record's; the same trial twice with different verdicts is refused), with the
  file and line in the message.

Example:
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> h = {"run": {"agent": "bot"}, "suite": {"fingerprint": "f"}, "k": 2}
    >>> with TrialStore.open(p, h) as st:
    ...     st.append({"task_id": "a", "trial": 0, "success": True, "episode": {"task_id": "a"}})
    >>> st = TrialStore.open(p, h); sorted(st.finished); st.close()
    [('a', 0)]
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

from ek._validate import is_number, positive_int, positive_number
from ek.jsonio import dumps, from_json_safe, to_json_safe

__all__ = [
    "STORE_VERSION",
    "StoreError",
    "StoreLockedError",
    "StoreMismatchError",
    "StoreSnapshot",
    "TrialStore",
    "read_store",
]

#: Format version of the header line.
STORE_VERSION = 1
_COMPARED = ("run", "suite", "k")
# compared when the new header has them (``run_suite`` always records the checker)
_COMPARED_IF_GIVEN = ("check",)
# compared when either header has them (an option that changes verdicts: a budget, a fault
# plan, an adaptive rule; absent from a store written without it)
_COMPARED_IF_EITHER = ("budget", "fault", "adaptive")
# mappings compared entry by entry, for the names both headers record (each metric's config)
_COMPARED_BY_NAME = ("metrics",)


class StoreError(ValueError):
    """A store file is unreadable or corrupt (the message names the file and the line)."""


class StoreMismatchError(StoreError):
    """The store belongs to another experiment (different provenance, suite or k)."""


class StoreLockedError(StoreError):
    """Another writer (this process or another) holds the store open."""


def _lock(fh: IO[bytes], path: str) -> None:
    """An exclusive, non-blocking lock on the open store (POSIX ``flock``; none without fcntl)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: documented, no lock
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise StoreLockedError(
            f"{path} is open for writing by another run (it holds the store's lock); "
            "two writers would interleave their trials. Wait for it to finish or use "
            "another store file."
        ) from None


def _dumps(obj: Any) -> str:
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError):  # NaN/inf or a non-JSON object somewhere: take the slow path
        return dumps(obj, compact=True)
    if '"NaN"' in text or 'Infinity"' in text or '"$' in text:
        return dumps(obj, compact=True)  # a string that must be escaped to read back as itself
    return text


def _write_all(fh: IO[bytes], data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = fh.write(view)
        if not n:  # pragma: no cover - a regular file accepts at least one byte
            raise OSError(f"could not write to {getattr(fh, 'name', fh)!r}")
        view = view[n:]


def _path(path: Any) -> str:
    """``path`` as a str; an int or bool (a file descriptor to ``open``) is not a path."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"a store path must be a str or os.PathLike, got {type(path).__name__}")
    return os.fspath(path)


def _loads(line: str) -> Any:
    return from_json_safe(json.loads(line))


@dataclass(frozen=True)
class StoreSnapshot:
    """What a store file holds: its header, its finished trial records, and whether its last
    line was torn (and would be repaired by :meth:`TrialStore.open`)."""

    path: str
    header: Mapping[str, Any]
    records: tuple[Mapping[str, Any], ...]
    torn_tail: bool


def _key(rec: Mapping[str, Any], where: str) -> tuple[str, int]:
    t, i = rec.get("task_id"), rec.get("trial")
    if not isinstance(t, str) or not is_number(i) or not isinstance(i, int):
        raise StoreError(
            f"{where}: a trial record needs str task_id and int trial, got {t!r:.200}, {i!r:.200}"
        )
    return t, i


def _check_record(rec: Mapping[str, Any], k: Any, where: str) -> tuple[str, int]:
    """The record's key, after checking what a reader relies on (refused with file and line)."""
    t, i = _key(rec, where)
    if isinstance(k, int) and not isinstance(k, bool) and not 0 <= i < k:
        raise StoreError(f"{where}: trial must be in [0, {k}) for k={k}, got {i}")
    if "success" not in rec:
        raise StoreError(f"{where}: a trial record needs a 'success' field, got none")
    if not isinstance(rec["success"], bool):
        raise StoreError(
            f"{where}: 'success' must be a JSON bool, got {type(rec['success']).__name__}: "
            f"{rec['success']!r:.100}"
        )
    ep = rec.get("episode")
    if ep is not None:
        if not isinstance(ep, Mapping):
            raise StoreError(f"{where}: 'episode' must be a JSON object, got {type(ep).__name__}")
        if ep.get("task_id") != t:
            raise StoreError(
                f"{where}: the episode's task_id {ep.get('task_id')!r:.200} differs from the "
                f"record's {t!r:.200}"
            )
    return t, i


def _parse(path: str, data: bytes) -> tuple[dict[str, Any] | None, list[dict[str, Any]], int, bool]:
    """Header, records (first of each (task, trial) kept), the byte length of the valid prefix,
    and whether a torn tail was found."""
    end = len(data)
    torn = False
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        try:
            rec = _loads(tail.decode("utf-8"))
            complete = isinstance(rec, dict)
        except (UnicodeDecodeError, ValueError):
            complete = False
        if not complete:
            end, torn = cut, True
    lines = data[:end].split(b"\n")
    header: dict[str, Any] | None = None
    records: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], bool] = {}
    for no, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = _loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise StoreError(
                f"{path}:{no}: corrupt line (not JSON: {e}); refusing to guess"
            ) from None
        if not isinstance(obj, dict):
            raise StoreError(f"{path}:{no}: expected a JSON object, got {type(obj).__name__}")
        if header is None:
            if "ek_store" not in obj:
                raise StoreError(f"{path}:{no}: not an ek-agents trial store (no header line)")
            if obj["ek_store"] != STORE_VERSION:
                raise StoreError(
                    f"{path}: store format {obj['ek_store']!r} is not supported "
                    f"(this ek reads {STORE_VERSION})"
                )
            header = obj
            continue
        key = _check_record(obj, header.get("k"), f"{path}:{no}")
        if key in seen:  # cannot happen through TrialStore (it holds an exclusive lock)
            if seen[key] != obj["success"]:
                raise StoreError(
                    f"{path}:{no}: task {key[0]!r:.200} trial {key[1]} is recorded twice with "
                    "different verdicts; refusing to choose one"
                )
            continue  # an identical verdict twice: keep the first record
        seen[key] = obj["success"]
        records.append(obj)
    return header, records, end, torn


def read_store(path: str | os.PathLike[str]) -> StoreSnapshot:
    """Read a store without modifying it (a torn last line is ignored, not repaired).

    Raises:
        StoreError: the file has no header or a corrupt line before the last one.
    """
    p = _path(path)
    with open(p, "rb") as fh:
        data = fh.read()
    header, records, _, torn = _parse(p, data)
    if header is None:
        raise StoreError(f"{p}: empty trial store (no header line)")
    return StoreSnapshot(p, header, tuple(records), torn)


def _by_name_diffs(old: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    """``"metrics['x']: store has ..., run has ..."`` for each entry both headers record
    differently (an entry only one header has is not a mismatch)."""
    out = []
    for key in _COMPARED_BY_NAME:
        a, b = to_json_safe(old.get(key)), want.get(key)
        if not isinstance(a, Mapping) or not isinstance(b, Mapping):
            continue
        for name in sorted(set(a) & set(b)):
            if a[name] != b[name]:
                out.append(f"{key}[{name!r}]: store has {a[name]!r:.300}, run has {b[name]!r:.300}")
    return out


def _refuse_mismatch(p: str, old: Mapping[str, Any], want: Mapping[str, Any]) -> None:
    """Raise :class:`StoreMismatchError` when ``old`` (the file's header) is another experiment."""
    compared = (
        *_COMPARED,
        *(k for k in _COMPARED_IF_GIVEN if k in want),
        *(k for k in _COMPARED_IF_EITHER if k in want or k in old),
    )
    diffs = [k for k in compared if to_json_safe(old.get(k)) != want.get(k)]
    detail = [
        f"{k}: store has {old.get(k)!r:.300}, run has {want.get(k)!r:.300}" for k in diffs
    ] + _by_name_diffs(old, want)
    if detail:
        raise StoreMismatchError(
            f"{p} belongs to another experiment ({'; '.join(detail)}). Resume only with the "
            "same provenance, suite, k, checker and metric configurations (a metric whose "
            "settings changed under the same name would mix two metrics' scores), or use a new "
            "store file."
        )


class TrialStore:
    """An append-only, resumable JSON-lines log of finished trials (see the module docstring).

    Use :meth:`open`; :attr:`records` holds the trials already in the file and :attr:`finished`
    their ``(task_id, trial)`` keys. Not thread-safe: append from one thread (the harness
    appends from its event loop).
    """

    def __init__(
        self,
        path: str,
        fh: IO[bytes],
        header: Mapping[str, Any],
        records: list[dict[str, Any]],
        *,
        fsync_every: int,
        fsync_interval: float,
        repaired: bool,
        background_fsync: bool = True,
    ) -> None:
        self.path = path
        self.header = dict(header)
        self.records: list[dict[str, Any]] = records
        self.finished: set[tuple[str, int]] = {_key(r, path) for r in records}
        self.repaired = repaired
        self._fh: IO[bytes] | None = fh
        self._every = fsync_every
        self._interval = fsync_interval
        self._pending = 0
        self._last_sync = time.monotonic()
        self.n_fsyncs = 0
        self._pool = (
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ek-store-fsync")
            if background_fsync
            else None
        )
        self._inflight: concurrent.futures.Future[None] | None = None

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        header: Mapping[str, Any],
        *,
        fsync_every: int = 64,
        fsync_interval: float = 1.0,
        background_fsync: bool = True,
    ) -> TrialStore:
        """Open (or create) the store at ``path`` for an experiment described by ``header``.

        A new or empty file gets ``header`` as its first line. An existing one must have the
        same ``run``, ``suite`` and ``k`` (else :class:`StoreMismatchError`); a torn last line
        is truncated away.

        Args:
            path: The JSON-lines file.
            header: ``run`` (provenance dict), ``suite`` (with a ``fingerprint``), ``k`` and any
                other fields to record (``ek_store`` is added).
            fsync_every: fsync after this many appended trials (>= 1).
            fsync_interval: ...or when this many seconds passed since the last fsync (> 0).
            background_fsync: Run the batch fsync on a background thread (default) or inline.
        """
        positive_int("fsync_every", fsync_every)
        positive_number("fsync_interval", fsync_interval)
        missing = [k for k in _COMPARED if k not in header]
        if missing:
            raise ValueError(f"a store header needs {list(_COMPARED)}, missing {missing}")
        p = _path(path)
        want = {"ek_store": STORE_VERSION, **to_json_safe(dict(header))}
        fh = open(p, "ab", buffering=0)  # noqa: SIM115 (the store owns the handle)
        try:
            return cls._open_locked(
                p, fh, want, fsync_every, fsync_interval, background_fsync=background_fsync
            )
        except BaseException:
            fh.close()
            raise

    @classmethod
    def _open_locked(
        cls,
        p: str,
        fh: IO[bytes],
        want: dict[str, Any],
        fsync_every: int,
        fsync_interval: float,
        *,
        background_fsync: bool,
    ) -> TrialStore:
        _lock(fh, p)
        with open(p, "rb") as rfh:
            existing = rfh.read()
        old, records, end, torn = _parse(p, existing)
        if old is None:
            # new, empty, or only a torn header: start afresh
            os.ftruncate(fh.fileno(), 0)
            _write_all(fh, (_dumps(want) + "\n").encode("utf-8"))
            os.fsync(fh.fileno())
            return cls(
                p,
                fh,
                want,
                [],
                fsync_every=fsync_every,
                fsync_interval=fsync_interval,
                repaired=bool(existing),
                background_fsync=background_fsync,
            )
        _refuse_mismatch(p, old, want)
        if end < len(existing):  # repair: cut the torn tail, keep every complete line
            os.ftruncate(fh.fileno(), end)
            os.fsync(fh.fileno())
        if end and not existing[:end].endswith(b"\n"):
            _write_all(fh, b"\n")  # a complete last line without its newline: terminate it
        return cls(
            p,
            fh,
            old,
            records,
            fsync_every=fsync_every,
            fsync_interval=fsync_interval,
            repaired=torn,
            background_fsync=background_fsync,
        )

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one finished trial as one line, flush it, and fsync per the group-commit policy."""
        if self._fh is None:
            raise ValueError(f"{self.path}: the store is closed")
        key = _key(record, self.path)
        # one unbuffered write per trial: in the kernel as soon as this returns
        _write_all(self._fh, (_dumps(record) + "\n").encode("utf-8"))
        self.finished.add(key)
        self._pending += 1
        if self._pending >= self._every or time.monotonic() - self._last_sync >= self._interval:
            self.sync()

    def _fsync(self, fd: int) -> None:
        os.fsync(fd)
        self.n_fsyncs += 1

    def _check_background(self, wait: bool) -> bool:
        """Surface a failed background fsync; True when none is in flight."""
        f = self._inflight
        if f is None:
            return True
        if not wait and not f.done():
            return False
        self._inflight = None
        f.result()  # re-raises an OSError of the background fsync (e.g. EIO, ENOSPC)
        return True

    def sync(self, *, wait: bool = False) -> None:
        """fsync what has been written (a no-op when nothing is pending).

        With ``background_fsync`` the fsync is handed to the store's thread unless ``wait``;
        when one is already in flight, the pending lines stay pending for the next trigger.
        """
        if self._fh is None:
            return
        if self._pool is None or wait:
            self._check_background(wait=True)
            if self._pending or wait:
                self._fsync(self._fh.fileno())
        else:
            if self._pending == 0 or not self._check_background(wait=False):
                return
            self._inflight = self._pool.submit(self._fsync, self._fh.fileno())
        self._pending = 0
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """fsync (waiting for any background fsync) and close (idempotent)."""
        if self._fh is None:
            return
        try:
            if self._pending or self._inflight is not None:
                self.sync(wait=True)
        finally:
            self._fh.close()
            self._fh = None
            if self._pool is not None:
                self._pool.shutdown(wait=True)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records)

    def __enter__(self) -> TrialStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
