"""A run's trials read back from its store: the read-only sequences behind a stored
:class:`~ek.agents.harness.SuiteResult`'s ``episodes`` and ``scores``.

A run with a store keeps no trial in memory: the ledger holds each trial's verdict and the byte
offset of its record, and the result's ``episodes`` and ``scores[name]`` are
:class:`StoredTrials`, which read the records back when indexed or iterated (in the result's
order: task, then trial), and equal the tuples a run without a store holds. The file's identity
(device, inode, size) is recorded when the run ends: a result read after its store changed (a
later run resumed it, someone replaced or deleted it) raises :class:`StoreChangedError` naming
the file and what changed, instead of returning other trials. A stored result pickles as the
path and the offsets, never an open file.

Example:
    >>> import os, tempfile
    >>> from ek.agents.base import TaskSpec
    >>> from ek.agents.harness import run_suite
    >>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> res = run_suite(lambda task: task.gold, [TaskSpec("a", gold=1)], k=2, store=p)
    >>> res.episodes
    StoredTrials(2 episodes read from the store 'run.jsonl')
    >>> [ep.output for ep in res.episodes], res.episodes == tuple(res.episodes)
    ([1, 1], True)
    >>> with open(p, "a") as f:
    ...     _ = f.write("\\n")
    >>> res.episodes[0]
    Traceback (most recent call last):
    ...
    ek.agents._run.stored.StoreChangedError: ...: the store changed after the run that built this result (its size went from ... to ... bytes); its trials can no longer be read from it. Keep a store unchanged while its result is in use, or run again.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from ek._validate import short_repr
from ek.base import Score

from .._episode import Episode
from .._scoring import with_success
from .store import StoreError, parse_record
from .sums import score_from_record

__all__ = [
    "ReadEpisode",
    "ReadScore",
    "StoreChangedError",
    "StoreFile",
    "StoredTrials",
    "read_scores",
]

T = TypeVar("T")
U = TypeVar("U")


class StoreChangedError(StoreError):
    """A stored result's store file changed or vanished after the run (the message says how)."""


@dataclass(frozen=True)
class StoreFile:
    """A store file as a run left it: its absolute path, device, inode, size and modification
    time (a record rewritten in place, at the same size, changes the last).

    ``growing``: the store of a run that may still be going (what ``ek-agents view`` reads):
    records appended since are allowed, since a store's writer only appends (a resume repairs
    only a torn last line, which no reader took, and :func:`~ek.agents._run.store.replace_store`
    puts a new file in place); the file must stay the same one, no shorter.
    """

    path: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    growing: bool = False

    @classmethod
    def of(cls, path: str, *, growing: bool = False) -> StoreFile:
        """The file at ``path`` as it is now."""
        p = os.path.abspath(path)
        st = os.stat(p)
        return cls(p, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, growing)

    def _change(self, st: os.stat_result | None) -> str | None:
        if st is None:
            return "it was removed"
        if (st.st_dev, st.st_ino) != (self.device, self.inode):
            return "another file was put in its place"
        if self.growing and st.st_size >= self.size:
            return None  # records appended: the ones read are where they were
        if st.st_size != self.size:
            return f"its size went from {self.size} to {st.st_size} bytes"
        if st.st_mtime_ns != self.mtime_ns:
            return "it was written to since (its modification time changed)"
        return None

    def check(self, st: os.stat_result | None) -> None:
        """Raise :class:`StoreChangedError` unless ``st`` (the file's status) is this file's."""
        what = self._change(st)
        if what is not None:
            raise StoreChangedError(
                f"{self.path}: the store changed after "
                f"{'it was read' if self.growing else 'the run that built this result'} ({what}); "
                "its trials can no longer be read from it. Keep a store unchanged while its "
                "result is in use, or run again."
            )

    def records(self, offsets: Sequence[int]) -> Iterator[dict[str, Any]]:
        """The records whose lines start at ``offsets``, in that order (the file checked first)."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed below, also when abandoned
        except FileNotFoundError:
            self.check(None)
            raise
        with fh:
            self.check(os.fstat(fh.fileno()))
            for at in offsets:
                fh.seek(at)
                yield parse_record(fh.readline(), f"{self.path} at byte {at}")


@dataclass(frozen=True)
class ReadEpisode:
    """A record's judged episode (its ``run``, when the record leaves it to the header: the
    run's), as the run that wrote it held it."""

    run: Mapping[str, Any]

    def __call__(self, rec: Mapping[str, Any]) -> Episode:
        d = dict(rec["episode"])
        d.setdefault("run", dict(self.run))
        return with_success(Episode.from_dict(d), bool(rec["success"]))


def read_scores(rec: Mapping[str, Any]) -> dict[str, Score]:
    """A record's Score of every metric it holds, by name."""
    saved = rec.get("scores") or {}
    if not isinstance(saved, Mapping):
        raise TypeError(f"a trial record's 'scores' must be a JSON object, got {short_repr(saved)}")
    return {str(n): score_from_record(sd, str(n)) for n, sd in saved.items()}


@dataclass(frozen=True)
class ReadScore:
    """A record's Score of one metric."""

    name: str

    def __call__(self, rec: Mapping[str, Any]) -> Score:
        saved = rec.get("scores") or {}
        if self.name not in saved:
            raise StoreError(
                f"trial {rec.get('task_id')!r}#{rec.get('trial')}: the store holds no score of "
                f"metric {self.name!r}"
            )
        return score_from_record(saved[self.name], self.name)


class StoredTrials(Sequence[T]):
    """A read-only sequence of one kind of item (episodes, or one metric's Scores) of a run's
    trials, read from the store by offset when indexed or iterated (see the module docstring).

    Args:
        file: The store as the run left it.
        offsets: Each item's record offset, in the sequence's order.
        read: Makes the item of a record (:class:`ReadEpisode`, :class:`ReadScore`).
        what: The items' name, for ``repr`` (``"episodes"``, ``"scores of 'x'"``).
        fresh: ``position -> item`` for items the store does not hold (Scores of a metric
            scored afresh on a resume).
    """

    def __init__(
        self,
        file: StoreFile,
        offsets: array[int],
        read: Callable[[Mapping[str, Any]], T],
        what: str,
        fresh: Mapping[int, T] | None = None,
    ) -> None:
        self._file, self._at, self._read, self._what = file, offsets, read, what
        self._fresh = dict(fresh or {})

    def __len__(self) -> int:
        return len(self._at)

    def take(self, positions: Sequence[int]) -> StoredTrials[T]:
        """The items at ``positions`` (in that order), still read from the store."""
        at = array("q", (self._at[j] for j in positions))
        fresh = {i: self._fresh[j] for i, j in enumerate(positions) if j in self._fresh}
        return StoredTrials(self._file, at, self._read, self._what, fresh)

    def read_as(self, read: Callable[[Mapping[str, Any]], U], what: str) -> StoredTrials[U]:
        """The same records, each made into an item by ``read`` instead (``ek-agents view``
        reads a trial's episode and Scores at once); every item must be in the store."""
        if self._fresh:
            raise ValueError(
                f"{self!r}: {len(self._fresh)} item(s) are not in the store (scored afresh), "
                "so they cannot be read from it otherwise"
            )
        return StoredTrials(self._file, self._at, read, what)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> StoredTrials[T]: ...

    def __getitem__(self, index: int | slice) -> T | StoredTrials[T]:
        if isinstance(index, slice):
            return self.take(range(len(self))[index])
        n = len(self._at)
        if not -n <= index < n:
            raise IndexError(f"index {index} out of range for {n} {self._what}")
        i = index % n
        if i in self._fresh:
            return self._fresh[i]
        return self._read(next(self._file.records([self._at[i]])))

    def __iter__(self) -> Iterator[T]:
        fresh, read = self._fresh, self._read
        if len(fresh) == len(self._at):
            yield from (fresh[i] for i in range(len(fresh)))
            return
        todo = [at for i, at in enumerate(self._at) if i not in fresh] if fresh else self._at
        recs = self._file.records(todo)
        for i in range(len(self._at)):
            yield fresh[i] if i in fresh else read(next(recs))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (str, bytes)) or not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        name = os.path.basename(self._file.path)
        return f"StoredTrials({len(self)} {self._what} read from the store {name!r})"
