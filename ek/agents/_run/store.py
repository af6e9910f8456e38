"""The trial store: a JSON-lines file that makes a suite run resumable.

Layout: the first line is a **header** (``{"ek_store": 1, "run": RunProvenance, "suite":
{"fingerprint", "tasks"}, "k", "seed", "ek_version", ...}``); every further line is one
**finished trial** (``{"task_id", "trial", "success", "check", "episode", "scores"}``).
A suite of more than :data:`TASKS_PER_LINE` tasks writes its task list (``tasks``: task id ->
slices) on lines of its own right after the header (``{"ek_tasks": {...}}``, that many tasks a
line; the header records ``task_lines``), so no line grows with the suite; readers put the
header back together (:func:`header_bytes`). A store of a smaller suite is written as before,
and a store written before this (its whole task list in the header line) reads as before:
no reader limits a line's length.

Reading: :func:`read_store` holds every record; :func:`iter_store` streams them, one at a time,
for a report or a gate whose memory must not grow with the file. :class:`TrialStore` holds no
record either: opening streams the file (keeping the finished trials' keys, a byte a trial),
:meth:`TrialStore.stored` streams the records back with their byte offsets, and a record is read
back at its offset with :func:`parse_record` (:mod:`ek.agents._run.stored`).

Optional fields (absent in a store written without them; a reader that does not know them reads
the store as before): ``retries`` (infrastructure retries before the trial's result) and
``infra_error`` (the trial ended in an infrastructure error after every retry: its ``success``
is ``false`` so every reader can parse it, and this ek leaves it out of the counts; see
:mod:`ek.agents._infra`). The header may record ``metrics`` (each metric's configuration,
:mod:`ek.agents._fingerprint`), ``budget``, ``adaptive`` and ``fault``.

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
  silently corrupt both. So is a checker whose configuration (``checker``: its description and
  fingerprint, see :mod:`ek.agents._fingerprint`: a hidden-test checker's tests, a
  ``functools.partial``'s keywords, the values a lambda closes over) differs from the one the
  header records, and a metric whose configuration (``metrics``: name -> class, settings and
  fingerprint) differs from the one the header records under the same name. A checker that
  cannot be described in full (its ``undescribed`` parts), or a store that records its checker
  by name only, is resumed only on an explicit opt-in (``resume_undescribed_checker``). The
  header also records the agent (``agent``); :func:`~ek.agents.harness.run_suite` warns when a
  resume runs another one.
* One writer at a time: :meth:`TrialStore.open` takes an exclusive, non-blocking ``flock`` on the
  file (released on close, and by the kernel when the process dies, so a SIGKILL leaves no stale
  lock) and refuses a second writer with :class:`StoreLockedError`, as it refuses a file that
  another writer renamed over the path while it was being opened. :func:`replace_store` (a
  whole store written at once, as the pytest plugin writes a session's) takes the same lock
  before it renames its file into place, and replaces only a store of its own source. Where
  ``fcntl`` does not exist (Windows) no lock is taken: run one writer per store there.
* Every record is validated on read (``success`` a bool, ``trial`` in ``[0, k)``, the episode's
  ``task_id`` the record's; the same trial twice with different verdicts is refused), with the
  file and line in the message. Every line, header and records alike, is parsed with one rule
  by every reader (the whole-file reader and the sharded one): a JSON object that names a key
  twice is a corrupt line (JSON leaves open which value counts, and the sharded reader routes a
  record by the task id its line begins with).
* A store is a regular file (or, for a writer, no file yet): a FIFO, a directory or a device
  is refused before any work, never opened (a FIFO's ``open`` would block forever).

Example:
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> h = {"run": {"agent": "bot"}, "suite": {"fingerprint": "f"}, "k": 2}
    >>> with TrialStore.open(p, h) as st:
    ...     _ = st.append({"task_id": "a", "trial": 0, "success": True, "episode": {"task_id": "a"}})
    >>> st = TrialStore.open(p, h); sorted(st.finished); st.close()
    [('a', 0)]
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

from ek._validate import as_verdict, is_number, positive_int, positive_number, trial_count
from ek.agents._fingerprint import config_diff, same_config
from ek.jsonio import (
    create_beside,
    dumps,
    from_json_safe,
    open_regular_file,
    path_text,
    to_json_safe,
    unique_keys,
)

__all__ = [
    "STORE_VERSION",
    "TASKS_PER_LINE",
    "StoreError",
    "StoreLockedError",
    "StoreMismatchError",
    "StoreSnapshot",
    "StoreStream",
    "TrialStore",
    "header_bytes",
    "is_store_file",
    "iter_store",
    "parse_record",
    "read_store",
    "replace_store",
    "task_shard",
]

#: Format version of the header line.
STORE_VERSION = 1
#: A suite with more tasks than this gets its task list on separate lines after the header,
#: this many tasks a line, so no line grows with the suite.
TASKS_PER_LINE = 1000
_TASK_LINES = "task_lines"  # header key: how many task lines follow it
_TASKS_KEY = "ek_tasks"  # the key of a task line
_COMPARED = ("run", "suite", "k")
# compared when the new header has them (``run_suite`` always records the checker)
_COMPARED_IF_GIVEN = ("check",)
# compared when either header has them (an option that changes verdicts: a budget, a fault
# plan, an adaptive rule, a per-trial time limit; absent from a store written without it)
_COMPARED_IF_EITHER = ("budget", "fault", "adaptive", "timeout")
# mappings compared entry by entry, for the names both headers record (each metric's config)
_COMPARED_BY_NAME = ("metrics",)


class StoreError(ValueError):
    """A store file is unreadable or corrupt (the message names the file and the line)."""


class StoreMismatchError(StoreError):
    """The store belongs to another experiment (different provenance, suite or k)."""


class StoreLockedError(StoreError):
    """Another writer (this process or another) holds the store open."""


def _lock(fh: IO[bytes], path: str) -> None:
    """An exclusive, non-blocking lock on the open store (POSIX ``flock``; none without fcntl).

    Also refused: a file that is no longer the one at ``path`` once locked (another writer
    renamed a new store over it meanwhile: trials written to the old one would be lost)."""
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
    mine = os.fstat(fh.fileno())
    try:
        now = os.stat(path)
    except FileNotFoundError:
        now = None
    if now is None or (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
        raise StoreLockedError(
            f"{path} was replaced by another writer while it was being opened; open it again"
        )


def _dumps(obj: Any) -> str:
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError):  # NaN/inf or a non-JSON object somewhere: take the slow path
        return dumps(obj, compact=True)
    if '"NaN"' in text or 'Infinity"' in text or '"$' in text:
        return dumps(obj, compact=True)  # a string that must be escaped to read back as itself
    return text


def header_bytes(header: Mapping[str, Any]) -> bytes:
    """The header as written: one line, and its task list on lines of its own when long.

    A ``tasks`` mapping (task id -> slices) of more than :data:`TASKS_PER_LINE` tasks leaves the
    header line (which records how many task lines follow, ``task_lines``) and follows it,
    :data:`TASKS_PER_LINE` tasks a line (``{"ek_tasks": {...}}``). Readers put it back together,
    so a header reads back the same either way; a smaller suite's store is written as before.

    Example:
        >>> header_bytes({"ek_store": 1, "k": 1, "tasks": {"a": []}})
        b'{"ek_store":1,"k":1,"tasks":{"a":[]}}\\n'
        >>> big = {"ek_store": 1, "tasks": {f"t{i}": [] for i in range(TASKS_PER_LINE + 1)}}
        >>> header_bytes(big).count(b"\\n"), header_bytes(big).split(b"\\n")[0]
        (3, b'{"ek_store":1,"task_lines":2}')
    """
    tasks = header.get("tasks")
    if not isinstance(tasks, Mapping) or len(tasks) <= TASKS_PER_LINE:
        return (_dumps(header) + "\n").encode("utf-8")
    head = {k: v for k, v in header.items() if k != "tasks"}
    items = list(tasks.items())
    chunks = [items[i : i + TASKS_PER_LINE] for i in range(0, len(items), TASKS_PER_LINE)]
    head[_TASK_LINES] = len(chunks)
    lines = [_dumps(head)] + [_dumps({_TASKS_KEY: dict(c)}) for c in chunks]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _write_all(fh: IO[bytes], data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = fh.write(view)
        if not n:  # pragma: no cover - a regular file accepts at least one byte
            raise OSError(f"could not write to {getattr(fh, 'name', fh)!r}")
        view = view[n:]


# Every line is parsed with one rule: a JSON object that names a key twice is refused (Python
# keeps the last value, but the sharded reader routes a record by the task id its line begins
# with: the two readers would count a duplicate-keyed record differently).
_DECODE = json.JSONDecoder(object_pairs_hook=unique_keys).decode


def _text(line: str | bytes) -> str:
    if isinstance(line, bytes):  # as json.loads decodes UTF-8, without guessing the encoding
        line = line.decode("utf-8")
        if line[:1] == "\ufeff":
            line = line[1:]
    return line


def _loads(line: str | bytes, decode: Callable[[str], Any] = _DECODE) -> Any:
    line = _text(line)
    obj = decode(line)
    # the spellings ek.jsonio writes (non-finite floats, tagged strings); a line without any
    # (the common case: _dumps writes every other line with plain json) needs no decoding walk
    if '"NaN"' in line or 'Infinity"' in line or '"$float"' in line or '"$str"' in line:
        return from_json_safe(obj)
    return obj


@dataclass(frozen=True)
class StoreSnapshot:
    """What a store file holds: its header, its finished trial records, and whether its last
    line was torn (and would be repaired by :meth:`TrialStore.open`)."""

    path: str
    header: Mapping[str, Any]
    records: tuple[Mapping[str, Any], ...]
    torn_tail: bool


def _key(rec: Mapping[str, Any], where: str) -> tuple[str, int]:
    if not isinstance(rec, Mapping):
        raise StoreError(f"{where}: a trial record must be a JSON object, got {type(rec).__name__}")
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
    try:
        as_verdict("success", rec["success"])  # the one verdict rule: here, a JSON bool
    except TypeError:
        raise StoreError(
            f"{where}: 'success' must be a JSON bool, got {type(rec['success']).__name__}: "
            f"{rec['success']!r:.100}"
        ) from None
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


class _Scan:
    """Reads a store line by line: the header, its task lines, then each trial record.

    The one reader behind :func:`read_store`, :func:`iter_store` and :meth:`TrialStore.open`.
    Remembers, per task, which trials it has seen and their verdicts: one byte a trial up to
    the highest trial index read (at most the header's ``k``, itself at most
    :data:`~ek._validate.MAX_TRIALS`), not the records' size.
    """

    def __init__(self, path: str, decode: Callable[[str], Any] = _DECODE) -> None:
        self.path = path
        self._decode = decode  # json.loads for lines this rule read already (see stored())
        self.header: dict[str, Any] | None = None
        self._task_lines = 0  # task lines the header announced and not yet read
        self._k: int | None = None
        self._seen: dict[str, bytearray] = {}

    @property
    def complete(self) -> bool:
        """True once the header and all the task lines it announced were read."""
        return self.header is not None and self._task_lines == 0

    def feed(self, raw: bytes, no: int) -> dict[str, Any] | None:
        """The trial record on line ``no`` (first of its (task, trial)), else ``None``."""
        if not raw.strip():
            return None
        try:
            obj = _loads(raw, self._decode)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise StoreError(
                f"{self.path}:{no}: corrupt line (not JSON: {e}); refusing to guess"
            ) from None
        except ValueError as e:  # a duplicate key (unique_keys), or nesting past the limit
            raise StoreError(f"{self.path}:{no}: corrupt line ({e}); refusing to guess") from None
        if not isinstance(obj, dict):
            raise StoreError(f"{self.path}:{no}: expected a JSON object, got {type(obj).__name__}")
        header = self.header
        if header is None:
            self._start(obj, no)
            return None
        if self._task_lines:
            self._tasks(header, obj, no)
            return None
        return self._record(header, obj, no)

    def _start(self, obj: dict[str, Any], no: int) -> None:
        if "ek_store" not in obj:
            raise StoreError(f"{self.path}:{no}: not an ek-agents trial store (no header line)")
        if obj["ek_store"] != STORE_VERSION:
            raise StoreError(
                f"{self.path}: store format {obj['ek_store']!r} is not supported "
                f"(this ek reads {STORE_VERSION})"
            )
        lines = obj.pop(_TASK_LINES, 0)
        if not isinstance(lines, int) or isinstance(lines, bool) or lines < 0:
            raise StoreError(
                f"{self.path}:{no}: {_TASK_LINES!r} must be an int >= 0, got {lines!r:.100}"
            )
        if lines:
            obj["tasks"] = {}
        self.header, self._task_lines = obj, lines
        self._k = _header_k(obj.get("k"), f"{self.path}:{no}")

    def _tasks(self, header: dict[str, Any], obj: dict[str, Any], no: int) -> None:
        chunk = obj.get(_TASKS_KEY)
        if not isinstance(chunk, dict) or len(obj) != 1:
            raise StoreError(
                f"{self.path}:{no}: expected a task line {{{_TASKS_KEY!r}: {{task_id: slices}}}} "
                f"({self._task_lines} more announced by the header), got {_short(obj)}"
            )
        header["tasks"].update(chunk)
        self._task_lines -= 1

    def _record(
        self, header: dict[str, Any], obj: dict[str, Any], no: int
    ) -> dict[str, Any] | None:
        k = self._k or 1  # set with the header (an int in [1, MAX_TRIALS])
        t, i = _check_record(obj, k, f"{self.path}:{no}")
        ok = obj["success"]
        seen = self._seen.setdefault(t, bytearray())
        if i >= len(seen):  # one byte a trial, grown to the highest trial seen (at most k)
            seen.extend(bytes(i + 1 - len(seen)))
        before = seen[i]
        if not before:
            seen[i] = 2 if ok else 1
            return obj
        before_ok = before == 2
        if before_ok != ok:  # cannot happen through TrialStore (it holds an exclusive lock)
            raise StoreError(
                f"{self.path}:{no}: task {t!r:.200} trial {i} is recorded twice with "
                "different verdicts; refusing to choose one"
            )
        return None  # an identical verdict twice: keep the first record


def _header_k(k: Any, where: str) -> int:
    """A header's ``k``: an int in ``[1, MAX_TRIALS]`` (what ``run_suite`` accepts), else a
    :class:`StoreError` (a string, a float or ``10**9`` would mislead every reader)."""
    try:
        return trial_count("k", k)
    except (TypeError, ValueError) as e:
        raise StoreError(f"{where}: the store header's {e}") from None


def _short(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 100 else text[:97] + "..."


def _torn(tail: bytes) -> bool:
    """True when ``tail`` (a last line without its newline) is not a complete JSON object (a
    complete one is read, and refused if it breaks a rule, as any other line)."""
    try:
        return not isinstance(json.loads(_text(tail)), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return True


def _scan_file(
    path: str, fh: IO[bytes], on_record: Callable[[int, dict[str, Any]], None] | None = None
) -> tuple[dict[str, Any] | None, int, bool]:
    """Read a store from the start of ``fh``, one line at a time: the header, the byte length
    of the valid prefix, and whether a torn tail was found; each record (first of each (task,
    trial) kept) goes to ``on_record(offset, record)``. A header whose task lines are not all
    there yet (a crash while the header was written) is no header."""
    scan = _Scan(path)
    end = 0
    torn = False
    for no, raw in enumerate(fh, 1):  # no line limit: a header or a record is as long as it is
        if not raw.endswith(b"\n") and _torn(raw):  # only the last line lacks its newline
            torn = True
            break
        rec = scan.feed(raw, no)
        if rec is not None and on_record is not None:
            on_record(end, rec)
        end += len(raw)
    return (scan.header if scan.complete else None), end, torn


def _ends_with_newline(fh: IO[bytes], end: int) -> bool:
    """Is the byte before ``end`` of the open file a newline?"""
    return os.pread(fh.fileno(), 1, end - 1) == b"\n"


def parse_record(raw: bytes, where: str) -> dict[str, Any]:
    """One record line read back at its offset, or a :class:`StoreError` naming ``where``.

    The line passed the one parse rule of every line when the store was opened or the record
    written (its reader checks that the file is the same); read back, it is decoded as that
    rule decodes it, without the check for a key named twice (a third of the time)."""
    try:
        obj = _loads(raw, json.loads)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise StoreError(f"{where}: not a trial record ({e})") from None
    if not isinstance(obj, dict) or "task_id" not in obj:
        raise StoreError(f"{where}: not a trial record, got {_short(obj)}")
    return obj


class _Finished(Set[tuple[str, int]]):
    """The ``(task_id, trial)`` keys of a store's finished trials: one byte per trial number up
    to the highest one seen, per task (no object per trial)."""

    def __init__(self) -> None:
        self._by_task: dict[str, bytearray] = {}
        self._n = 0

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> set[Any]:
        return set(it)  # what a set operation (``&``, ``-``) gives: a plain set

    def add(self, key: tuple[str, int]) -> None:
        """Note a finished trial (again: no change)."""
        t, i = key
        seen = self._by_task.setdefault(t, bytearray())
        if i >= len(seen):
            seen.extend(bytes(i + 1 - len(seen)))
        if not seen[i]:
            seen[i] = 1
            self._n += 1

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        seen = self._by_task.get(key[0])
        i = key[1]
        return seen is not None and isinstance(i, int) and 0 <= i < len(seen) and bool(seen[i])

    def __iter__(self) -> Iterator[tuple[str, int]]:
        for t, seen in self._by_task.items():
            for i, b in enumerate(seen):
                if b:
                    yield t, i

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"<{self._n} finished trial(s) of {len(self._by_task)} task(s)>"


def task_shard(task_id: str, shards: int) -> int:
    """Which of ``shards`` shards a task's records belong to (``0 <= shard < shards``): a CRC-32
    of its UTF-8 bytes, the same in every process and on every run.

    Example:
        >>> task_shard("refund-1", 2) == task_shard("refund-1", 2)
        True
    """
    return zlib.crc32(task_id.encode("utf-8", "surrogatepass")) % shards


#: How a record written by this module begins: its task id, as a JSON string, comes first.
_RECORD_START = b'{"task_id":"'


def _line_shard(raw: bytes, shards: int) -> int | None:
    """The shard of a record line read from its first bytes, or ``None`` when that would need
    parsing (another writer's key order, or an escape in the task id: then the record's parsed
    ``task_id`` decides, as :func:`task_shard` of it). A JSON string without a backslash is its
    UTF-8 bytes, so both ways give the same shard."""
    if not raw.startswith(_RECORD_START):
        return None
    start = len(_RECORD_START)
    end = raw.find(b'"', start)
    if end < 0 or raw.find(b"\\", start, end) >= 0:
        return None
    return zlib.crc32(raw[start:end]) % shards


class StoreStream:
    """A store read once, as a stream: :attr:`header` at once, the records as they are read.

    Memory holds one record at a time (plus a byte per seen trial to refuse a trial recorded
    twice with different verdicts), whatever the file's size. Iterate once; the file is closed
    when the iteration ends (or on :meth:`close`, or leaving a ``with`` block).
    :attr:`torn_tail` is known once the iteration has ended. :attr:`line` is the line number of
    the record last yielded, :attr:`offset` the byte offset where its line starts (where
    :class:`~ek.agents._run.stored.StoredTrials` reads it back).

    With ``shard=(i, n)`` only the records of the tasks in shard ``i`` of ``n``
    (:func:`task_shard`) are yielded, and those of other tasks are mostly skipped unparsed:
    ``n`` processes, one shard each, read a large store together, every trial once (a task's
    records, its duplicates included, all fall in one shard). A line skipped unparsed is not
    checked by this reader: the reader of its shard checks it.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
        >>> h = {"run": {"agent": "bot"}, "suite": {"fingerprint": "f"}, "k": 1}
        >>> with TrialStore.open(p, h) as st:
        ...     _ = st.append({"task_id": "a", "trial": 0, "success": True})
        >>> with iter_store(p) as s:
        ...     s.header["k"], [r["task_id"] for r in s]
        (1, ['a'])
    """

    def __init__(self, path: str, shard: tuple[int, int] | None = None) -> None:
        self.path = path
        self.torn_tail = False
        self.line = 0
        self.offset = 0
        self._shard = shard
        # a FIFO or a directory is refused here, never opened to block
        self._fh: IO[bytes] | None = open_regular_file("iter_store", path)
        self._scan = _Scan(path)
        self._no = 0
        self._end = 0  # the byte offset after the last line read
        try:
            self._read_header()
        except BaseException:
            self.close()
            raise

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        fh = self._fh
        if fh is None:
            return
        for raw in fh:  # no line limit: a header or a record is as long as it is
            self._no += 1
            if not raw.endswith(b"\n") and _torn(raw):  # only the last line lacks its newline
                self.torn_tail = True
                return
            self._end += len(raw)
            yield self._no, raw

    def _read_header(self) -> None:
        self._it = self._lines()
        for no, raw in self._it:
            self._scan.feed(raw, no)  # the header and its task lines: no record yet
            if self._scan.complete:
                break
        if self._scan.header is None or not self._scan.complete:
            what = "no header line" if self._scan.header is None else "its header is incomplete"
            raise StoreError(f"{self.path}: empty trial store ({what})")
        self.header: dict[str, Any] = self._scan.header

    def __iter__(self) -> Iterator[dict[str, Any]]:
        mine, shards = self._shard or (0, 1)
        try:
            for no, raw in self._it:
                # the line's shard from its first bytes, or None: known once it is parsed
                at = _line_shard(raw, shards) if shards > 1 else mine
                if at is not None and at != mine:
                    continue  # another shard's task
                rec = self._scan.feed(raw, no)
                if rec is None or (at is None and task_shard(rec["task_id"], shards) != mine):
                    continue
                self.line, self.offset = no, self._end - len(raw)
                yield rec
        finally:
            self.close()

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> StoreStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def iter_store(
    path: str | os.PathLike[str], *, shard: tuple[int, int] | None = None
) -> StoreStream:
    """Open a store to read it once, as a stream (see :class:`StoreStream`); never modifies it.

    Args:
        path: The store file.
        shard: ``(i, n)``: only the records of the tasks in shard ``i`` of ``n``.

    Raises:
        StoreError: the file has no (complete) header; while iterating, a corrupt line before
            the last one.
    """
    if shard is not None:
        i, n = shard
        positive_int("iter_store shard count", n)
        if not (type(i) is int and 0 <= i < n):
            raise ValueError(f"iter_store: shard index must be an int in [0, {n}), got {i!r:.50}")
    return StoreStream(path_text("iter_store", path), shard)


def read_store(path: str | os.PathLike[str]) -> StoreSnapshot:
    """Read a store without modifying it (a torn last line is ignored, not repaired).

    Holds every record in memory; :func:`iter_store` reads one at a time.

    Raises:
        StoreError: the file has no header or a corrupt line before the last one.
    """
    with iter_store(path) as s:
        records = tuple(s)
        return StoreSnapshot(s.path, s.header, records, s.torn_tail)


def _header_of(fh: IO[bytes], path: str) -> dict[str, Any] | None:
    """The header of the store open as ``fh`` (``None`` for an empty file)."""
    scan = _Scan(path)
    with open(os.dup(fh.fileno()), "rb") as rfh:  # a reader of the same (locked) file
        rfh.seek(0)
        for no, raw in enumerate(rfh, 1):
            scan.feed(raw, no)
            if scan.complete:
                return scan.header
    if scan.header is None:
        return None
    raise StoreError(f"{path}: its header is incomplete")


def replace_store(
    path: str | os.PathLike[str], header: Mapping[str, Any], records: Iterable[Mapping[str, Any]]
) -> None:
    """Write a whole store at ``path`` in one step, replacing an earlier one written by the same
    tool; never a store another writer holds, nor one another tool wrote.

    For a tool that writes a run's trials at once (the pytest plugin writes each session's):
    the records go to a temporary file beside ``path`` (written and fsynced by
    :class:`TrialStore`), which is renamed over ``path`` only while this holds the lock of the
    store already there (the lock :meth:`TrialStore.open` takes). So:

    * a writer that holds the store (a ``run_suite`` resuming it) makes this refuse with
      :class:`StoreLockedError`, and nothing is written;
    * a writer that opens ``path`` meanwhile is refused (it finds the lock held, or, once the
      lock is released, that the file it locked was replaced): it opens the new file again;
    * an existing store is replaced only when its header's ``source`` is ``header["source"]``
      (the same tool's earlier output); another store (a resumable ``run_suite`` store, whose
      trials would be lost) or a file that is no store is refused with
      :class:`StoreMismatchError`.

    Raises:
        StoreLockedError: another writer holds the store at ``path``.
        StoreMismatchError: ``path`` holds a store of another source, or another file.
        ValueError / TypeError: ``path`` is not a regular file's path (a FIFO, a directory).
        OSError: the folder cannot be written.
    """
    p = path_text("replace_store", path)
    if not isinstance(header, Mapping):
        raise TypeError(f"replace_store: header must be a mapping, got {type(header).__name__}")
    source = header.get("source")
    fh = open_regular_file("replace_store", p, write=True)  # created empty when absent
    tmp: str | None = None
    try:
        _lock(fh, p)
        try:
            old = _header_of(fh, p)
        except StoreError as e:
            raise StoreMismatchError(
                f"{p} exists and is not a store this tool wrote ({e}); refusing to replace it"
            ) from None
        if old is not None and old.get("source") != source:
            raise StoreMismatchError(
                f"{p} holds a store written by {old.get('source') or 'run_suite'!r:.100}, not "
                f"by {source!r:.100}; replacing it would lose its trials: use another path"
            )
        # the new store keeps the old file's permissions, as writing over it in place would
        fd, tmp = create_beside(p, prefix=".ek-store-", suffix=".jsonl")
        os.close(fd)
        # one fsync at close: the file is renamed into place only once complete
        with TrialStore.open(
            tmp, header, fsync_every=1 << 30, fsync_interval=1e9, background_fsync=False
        ) as st:
            for rec in records:
                st.append(rec)
        os.replace(tmp, p)  # while the old file's lock is held
        tmp = None
    finally:
        fh.close()
        if tmp is not None and os.path.exists(tmp):
            os.remove(tmp)


def is_store_file(path: str | os.PathLike[str]) -> bool:
    """True when the regular file at ``path`` starts like a trial store's header (read without
    a line limit: an old store's header holds its whole task list on one line).

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
        >>> with TrialStore.open(p, {"run": {}, "suite": {"fingerprint": "f"}, "k": 1}):
        ...     pass
        >>> is_store_file(p), is_store_file(os.devnull)
        (True, False)
    """
    try:
        fh = open_regular_file("is_store_file", path)
    except (OSError, ValueError, TypeError):
        return False
    with fh:
        head = fh.read(64).lstrip()
        if head.startswith(b'{"ek_store"'):
            return True
        if not head.startswith(b"{"):
            return False
        fh.seek(0)
        line = fh.readline(1 << 20).strip()
    try:
        first = json.loads(line) if line else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(first, dict) and "ek_store" in first


def _by_name_diffs(old: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    """``"metrics['x']: settings.tol: 0.5 -> 0.2"`` for each entry both headers record with
    another fingerprint (an entry only one header has is not a mismatch)."""
    out = []
    for key in _COMPARED_BY_NAME:
        a, b = to_json_safe(old.get(key)), want.get(key)
        if not isinstance(a, Mapping) or not isinstance(b, Mapping):
            continue
        for name in sorted(set(a) & set(b)):
            if not same_config(a[name], b[name]):
                out.append(f"{key}[{name!r}]: {_changes(a[name], b[name])}")
    return out


def _changes(a: Any, b: Any) -> str:
    diff = config_diff(a, b)
    return "; ".join(diff) if diff else f"store has {a!r:.300}, run has {b!r:.300}"


def _checker_diffs(old: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    """The checker's configuration (``checker``, when the new header records one) changed."""
    new, prev = want.get("checker"), old.get("checker")
    if not isinstance(new, Mapping) or not isinstance(prev, Mapping):
        return []
    if same_config(prev, new):
        return []
    return [f"checker {str(new.get('name'))!r:.100}: {_changes(prev, new)}"]


def _undescribed_checker(old: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    """What keeps the checkers of the store and of the run from being compared in full."""
    new, prev = want.get("checker"), old.get("checker")
    if not isinstance(new, Mapping):
        return []
    unknown = [str(u) for u in new.get("undescribed") or ()]
    if isinstance(prev, Mapping):
        unknown += [f"in the store: {u}" for u in prev.get("undescribed") or ()]
    else:
        unknown.append("the store records its checker by name only (no configuration)")
    return unknown


def _refuse_mismatch(
    p: str, old: Mapping[str, Any], want: Mapping[str, Any], resume_undescribed: bool = False
) -> None:
    """Raise :class:`StoreMismatchError` when ``old`` (the file's header) is another experiment,
    or when its checker and the run's cannot be compared in full (unless ``resume_undescribed``)."""
    compared = (
        *_COMPARED,
        *(k for k in _COMPARED_IF_GIVEN if k in want),
        *(k for k in _COMPARED_IF_EITHER if k in want or k in old),
    )
    diffs = [k for k in compared if to_json_safe(old.get(k)) != want.get(k)]
    detail = (
        [f"{k}: store has {old.get(k)!r:.300}, run has {want.get(k)!r:.300}" for k in diffs]
        + _checker_diffs(old, want)
        + _by_name_diffs(old, want)
    )
    if detail:
        raise StoreMismatchError(
            f"{p} belongs to another experiment ({'; '.join(detail)}). Resume only with the "
            "same provenance, suite, k, checker and metric configurations (a checker or a "
            "metric whose settings changed under the same name would mix two of them), or use "
            "a new store file."
        )
    unknown = [] if resume_undescribed else _undescribed_checker(old, want)
    if unknown:
        raise StoreMismatchError(
            f"{p}: the checker cannot be compared in full with the one that wrote the store "
            f"({'; '.join(unknown[:3])}), so a changed configuration would go unseen and mix "
            "two checkers' verdicts. Resume anyway only if it is the same checker: "
            "run_suite(..., resume_undescribed_checker=True); or use a new store file."
        )


class TrialStore:
    """An append-only, resumable JSON-lines log of finished trials (see the module docstring).

    Use :meth:`open`; :attr:`finished` holds the ``(task_id, trial)`` keys of the trials in the
    file (compact: a byte per trial number and task), :meth:`stored` reads their records back
    (streamed, with each one's byte offset), and :meth:`append` returns where it wrote a record.
    Nothing holds the file's records: memory grows with tasks, not with the file. Not
    thread-safe: append from one thread (the harness appends from its event loop).
    """

    def __init__(
        self,
        path: str,
        fh: IO[bytes],
        header: Mapping[str, Any],
        *,
        end: int,
        fsync_every: int,
        fsync_interval: float,
        repaired: bool,
        background_fsync: bool = True,
    ) -> None:
        self.path = path
        self.header = dict(header)
        self.finished: _Finished = _Finished()
        self.repaired = repaired
        self._fh: IO[bytes] | None = fh
        self._read_end = end  # the records read back by stored(): those in the file at open
        self._size = os.fstat(fh.fileno()).st_size  # where the next record starts
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
        resume_undescribed_checker: bool = False,
    ) -> TrialStore:
        """Open (or create) the store at ``path`` for an experiment described by ``header``.

        A new or empty file gets ``header`` as its first line. An existing one must have the
        same ``run``, ``suite`` and ``k``, and the same checker and metric configurations
        where the header records them (else :class:`StoreMismatchError`); a torn last line is
        truncated away.

        Args:
            path: The JSON-lines file.
            header: ``run`` (provenance dict), ``suite`` (with a ``fingerprint``), ``k`` and any
                other fields to record (``ek_store`` is added).
            fsync_every: fsync after this many appended trials (>= 1).
            fsync_interval: ...or when this many seconds passed since the last fsync (> 0).
            background_fsync: Run the batch fsync on a background thread (default) or inline.
            resume_undescribed_checker: Resume although the header's ``checker`` (or the
                store's) could not be described in full (its ``undescribed`` parts, or a store
                that records the checker by name only): the caller vouches that it is the same
                checker. Without it such a resume is refused.
        """
        positive_int("fsync_every", fsync_every)
        positive_number("fsync_interval", fsync_interval)
        missing = [k for k in _COMPARED if k not in header]
        if missing:
            raise ValueError(f"a store header needs {list(_COMPARED)}, missing {missing}")
        _header_k(header["k"], "TrialStore.open")  # what every reader will require
        p = path_text("TrialStore.open", path)
        want = {"ek_store": STORE_VERSION, **to_json_safe(dict(header))}
        # a regular file or none: a FIFO would block this open, a directory or device fail later
        fh = open_regular_file("TrialStore.open", p, write=True)
        try:
            return cls._open_locked(
                p,
                fh,
                want,
                fsync_every,
                fsync_interval,
                background_fsync=background_fsync,
                resume_undescribed=resume_undescribed_checker,
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
        resume_undescribed: bool = False,
    ) -> TrialStore:
        _lock(fh, p)
        finished = _Finished()
        with open(os.dup(fh.fileno()), "rb") as rfh:  # a reader of the file this store writes
            rfh.seek(0)
            old, end, torn = _scan_file(p, rfh, lambda _, rec: finished.add(_key(rec, p)))
            size = os.fstat(rfh.fileno()).st_size
        if old is None:
            # new, empty, or only a torn header: start afresh
            os.ftruncate(fh.fileno(), 0)
            _write_all(fh, header_bytes(want))
            os.fsync(fh.fileno())
            return cls(
                p,
                fh,
                want,
                end=0,
                fsync_every=fsync_every,
                fsync_interval=fsync_interval,
                repaired=bool(size),
                background_fsync=background_fsync,
            )
        _refuse_mismatch(p, old, want, resume_undescribed)
        if end < size:  # repair: cut the torn tail, keep every complete line
            os.ftruncate(fh.fileno(), end)
            os.fsync(fh.fileno())
        if end and not _ends_with_newline(fh, end):
            _write_all(fh, b"\n")  # a complete last line without its newline: terminate it
        st = cls(
            p,
            fh,
            old,
            end=end,
            fsync_every=fsync_every,
            fsync_interval=fsync_interval,
            repaired=torn,
            background_fsync=background_fsync,
        )
        st.finished = finished
        return st

    def stored(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """The records that were in the file when it was opened, streamed in file order (the
        first of each (task, trial), as :meth:`open` read them), each with its byte offset."""
        if self._fh is None:
            raise ValueError(f"{self.path}: the store is closed")
        with open(os.dup(self._fh.fileno()), "rb") as rfh:
            rfh.seek(0)
            # every line was read by the one parse rule when the store was opened (a key
            # named twice refused); read again, it needs only decoding, and the record checks
            scan = _Scan(self.path, json.loads)
            at = 0
            for no, raw in enumerate(rfh, 1):
                if at >= self._read_end:
                    return
                rec = scan.feed(raw, no)
                if rec is not None:
                    yield at, rec
                at += len(raw)

    def append(self, record: Mapping[str, Any]) -> int:
        """Write one finished trial as one line, flush it, and fsync per the group-commit
        policy; return the byte offset where its line starts (for :meth:`stored`'s readers)."""
        if self._fh is None:
            raise ValueError(f"{self.path}: the store is closed")
        key = _key(record, self.path)
        data = (_dumps(record) + "\n").encode("utf-8")
        at = self._size
        # one unbuffered write per trial: in the kernel as soon as this returns
        _write_all(self._fh, data)
        self._size += len(data)
        self.finished.add(key)
        self._pending += 1
        if self._pending >= self._every or time.monotonic() - self._last_sync >= self._interval:
            self.sync()
        return at

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
        return (rec for _, rec in self.stored())

    def __enter__(self) -> TrialStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
