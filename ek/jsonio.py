"""ek's one JSON codec for non-finite floats, and atomic JSON files (core, instance-free).

Strict JSON has no NaN or infinity. Every JSON that ek writes (trial stores, baselines, run
summaries, report output, the score metadata and details the host adapters hand to Inspect AI,
DeepEval and Ragas) spells them one way, the way JavaScript and ``float()`` do:

==============================  ==================================================
Python value                    JSON written by :func:`to_json_safe`
==============================  ==================================================
``float("nan")``                ``"NaN"``
``float("inf")``                ``"Infinity"``
``float("-inf")``               ``"-Infinity"``
the *string* ``"NaN"`` (etc.)   ``{"$str": "NaN"}`` (escaped, so nothing is lost)
==============================  ==================================================

:func:`from_json_safe` inverts it exactly, and also reads the tagged form that ek's files used
before (``{"$float": "nan" | "inf" | "-inf"}``), so older baselines and stores still load.
:func:`decode_float` reads one number field in any of these spellings.

Files are written atomically (:func:`write_json_atomic`: a temporary file in the same folder,
fsynced, then renamed over the target), so a crash leaves either the old file or the new one,
never half of one.

Example:
    >>> to_json_safe({"a": (1.0, float("inf")), "b": "NaN"})
    {'a': [1.0, 'Infinity'], 'b': {'$str': 'NaN'}}
    >>> from_json_safe({"a": [1.0, "Infinity"], "b": {"$str": "NaN"}, "c": {"$float": "-inf"}})
    {'a': [1.0, inf], 'b': 'NaN', 'c': -inf}
    >>> decode_float("NaN"), decode_float({"$float": "inf"}), decode_float(2)
    (nan, inf, 2.0)
"""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import stat
from collections.abc import Mapping
from typing import IO, Any

__all__ = [
    "MAX_DEPTH",
    "NONFINITE_SPELLINGS",
    "create_beside",
    "decode_float",
    "dumps",
    "encode_float",
    "from_json_safe",
    "loads",
    "open_regular_file",
    "path_text",
    "read_json",
    "readable_file",
    "to_json_safe",
    "unique_keys",
    "writable_file",
    "write_json_atomic",
]

MAX_PATH = 4096
"""The longest path accepted (Linux's ``PATH_MAX``): a longer one is refused before ``open``."""

#: The written spelling of each non-finite float.
NONFINITE_SPELLINGS: Mapping[str, float] = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
}
_FLOAT_TAG = "$float"  # read only: the spelling of ek files written before the one codec
_STR_TAG = "$str"  # a string that would otherwise read back as a float


class _Spelled(str):
    """The spelling of a non-finite float produced by :func:`encode_float`.

    A ``str`` (``json`` writes it as one); the subclass only tells :func:`to_json_safe` that it
    is already encoded, so data that is made JSON-safe twice (a ``to_dict()`` written by
    :func:`write_json_atomic`) is not escaped a second time.
    """

    __slots__ = ()


_SPELLED = {s: _Spelled(s) for s in NONFINITE_SPELLINGS}


def encode_float(x: float) -> float | str:
    """``x`` itself when finite, else its spelling (``"NaN"``, ``"Infinity"``, ``"-Infinity"``).

    Example:
        >>> encode_float(0.5), encode_float(float("-inf"))
        (0.5, '-Infinity')
    """
    if math.isfinite(x):
        return x
    if math.isnan(x):
        return _SPELLED["NaN"]
    return _SPELLED["Infinity" if x > 0 else "-Infinity"]


MAX_DEPTH = 400
"""The deepest nesting :func:`to_json_safe` and :func:`from_json_safe` walk (a ValueError past it:
a cycle, or data no ek file holds; the episode and store writers stop at 200 levels)."""


def _too_deep(fn: str) -> ValueError:
    return ValueError(f"{fn}: data nested deeper than {MAX_DEPTH} levels (or cyclic)")


def to_json_safe(obj: Any, _depth: int = 0) -> Any:
    """Plain, strict JSON data: mappings -> dicts, tuples/sets -> lists, non-finite floats spelled.

    A string that spells a non-finite float is escaped as ``{"$str": ...}``; other objects that
    JSON cannot hold become their ``to_dict()`` (when they have one) or their ``repr``.
    :func:`from_json_safe` inverts it. Encoding what it returned again changes nothing.

    Example:
        >>> to_json_safe({1: {float("nan")}, "x": "Infinity"})
        {'1': ['NaN'], 'x': {'$str': 'Infinity'}}
        >>> d = {"a": float("inf"), "b": "Infinity"}
        >>> to_json_safe(to_json_safe(d)) == to_json_safe(d)
        True
    """
    if obj is None or isinstance(obj, (bool, int)):
        return obj
    if _depth > MAX_DEPTH:
        raise _too_deep("to_json_safe")
    d = _depth + 1
    if isinstance(obj, (str, float)):
        return _leaf_json_safe(obj)
    if isinstance(obj, Mapping):
        if _tagged(obj)[0]:  # already encoded (or an older file's tag): keep it
            return {str(k): str(v) for k, v in obj.items()}
        out: dict[str, Any] = {}
        for k, v in obj.items():  # a loop, not a comprehension: one stack frame per level
            out[str(k)] = to_json_safe(v, d)
        return out
    if isinstance(obj, (list, tuple)):
        items = []
        for v in obj:
            items.append(to_json_safe(v, d))
        return items
    if isinstance(obj, (set, frozenset)):
        return [to_json_safe(v, d) for v in sorted(obj, key=repr)]
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_json_safe(to_dict(), d)
    return _repr_text(obj)


def _leaf_json_safe(obj: str | float) -> Any:
    """A string (escaped when it spells a non-finite float) or a float (spelled when non-finite)."""
    if isinstance(obj, float):
        return encode_float(obj)
    if obj in NONFINITE_SPELLINGS and not isinstance(obj, _Spelled):
        return {_STR_TAG: str(obj)}
    return obj


def _repr_text(obj: Any) -> str:
    """What JSON holds of an object it cannot: its ``repr`` (its type, when ``repr`` raises)."""
    try:
        return repr(obj)
    except Exception:  # an object whose repr raises is written as its type
        return f"<{type(obj).__name__} object>"


def _tagged(obj: Mapping[Any, Any]) -> tuple[bool, Any]:
    """``(True, value)`` for a one-key ``$float`` / ``$str`` tag, else ``(False, None)``."""
    if len(obj) != 1:
        return False, None
    if isinstance(obj.get(_FLOAT_TAG), str):
        try:
            return True, float(obj[_FLOAT_TAG])
        except ValueError:
            return False, None
    if isinstance(obj.get(_STR_TAG), str):
        return True, obj[_STR_TAG]
    return False, None


def from_json_safe(obj: Any, _depth: int = 0) -> Any:
    """Inverse of :func:`to_json_safe`; also reads the older ``{"$float": "inf"}`` tags.

    Example:
        >>> from_json_safe(to_json_safe([float("nan"), "NaN", {"$float": "inf"}]))
        [nan, 'NaN', inf]
    """
    if isinstance(obj, str):
        return NONFINITE_SPELLINGS.get(obj, obj)
    if _depth > MAX_DEPTH and isinstance(obj, (dict, list)):
        raise _too_deep("from_json_safe")
    if isinstance(obj, dict):
        ok, value = _tagged(obj)
        if ok:
            return value
        out: dict[Any, Any] = {}
        for k, v in obj.items():  # a loop, not a comprehension: one stack frame per level
            out[k] = from_json_safe(v, _depth + 1)
        return out
    if isinstance(obj, list):
        items = []
        for v in obj:
            items.append(from_json_safe(v, _depth + 1))
        return items
    return obj


def decode_float(value: Any) -> float:
    """One number field in any spelling ek has written (a number, ``"NaN"``/``"Infinity"``/
    ``"-Infinity"``, a ``{"$float": ...}`` tag); ``None`` and anything else read as NaN.

    Example:
        >>> decode_float("-Infinity"), decode_float(None), decode_float(True)
        (-inf, nan, 1.0)
    """
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        return NONFINITE_SPELLINGS.get(value, math.nan)
    if isinstance(value, dict):
        ok, v = _tagged(value)
        if ok and isinstance(v, float):
            return v
    return math.nan


def dumps(obj: Any, *, indent: int | None = None, compact: bool = False) -> str:
    """``obj`` as a strict JSON string through :func:`to_json_safe`.

    Example:
        >>> dumps({"cost": float("inf")}, compact=True)
        '{"cost":"Infinity"}'
    """
    seps = (",", ":") if compact else None
    return json.dumps(
        to_json_safe(obj), indent=indent, ensure_ascii=False, allow_nan=False, separators=seps
    )


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's ``(key, value)`` pairs as a dict; a key given twice is a ValueError.

    Use it as ``object_pairs_hook``. JSON leaves a duplicate name's meaning open (Python keeps
    the last value; a reader that looks at the first one sees another record), so a file that
    two readers may read differently is refused instead of guessed at.

    Example:
        >>> json.loads('{"a": 1, "b": 2}', object_pairs_hook=unique_keys)
        {'a': 1, 'b': 2}
        >>> json.loads('{"a": 1, "a": 2}', object_pairs_hook=unique_keys)
        Traceback (most recent call last):
        ...
        ValueError: duplicate key 'a' in a JSON object (readers disagree on which value counts)
    """
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                shown = key if len(key) <= 100 else key[:97] + "..."
                raise ValueError(
                    f"duplicate key {shown!r} in a JSON object (readers disagree on which "
                    "value counts)"
                )
            seen.add(key)
    return out


def loads(text: str | bytes) -> Any:
    """Parse JSON text written by :func:`dumps` (non-finite floats restored)."""
    return from_json_safe(json.loads(text))


def _fsync_folder(folder: str) -> None:
    try:  # make the rename itself durable (POSIX); not every platform can open a directory
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def create_beside(target: str, *, prefix: str, suffix: str) -> tuple[int, str]:
    """A new, empty temporary file in ``target``'s folder, to be renamed over ``target``, with
    the permissions ``open(target, "w")`` would give: an existing target's mode, else 0o666
    less the process's umask (``tempfile.mkstemp`` gives 0o600, and the rename kept it).

    Returns:
        ``(fd, path)``: the file opened for writing, and its path.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     fd, tmp = create_beside(os.path.join(d, "a.json"), prefix=".tmp-", suffix=".json")
        ...     os.close(fd)
        ...     os.path.dirname(tmp) == d, os.path.basename(tmp).startswith(".tmp-")
        (True, True)
    """
    folder = os.path.dirname(os.path.abspath(target))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = os.path.join(folder, f"{prefix}{secrets.token_hex(8)}{suffix}")
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as for open()
        except FileExistsError:  # another writer drew the same name: draw again
            continue
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            return fd, tmp
        except BaseException:
            os.close(fd)
            os.unlink(tmp)
            raise
        os.chmod(tmp, mode)  # writing over a file keeps its mode, as open() does
        return fd, tmp


def write_json_atomic(path: str | os.PathLike[str], data: Any, *, indent: int | None = 1) -> None:
    """Write ``data`` as strict JSON to ``path`` atomically (temp file, fsync, rename).

    Non-finite floats are spelled by :func:`to_json_safe`. A crash leaves the old file or the new
    one, never a mixture. The file gets the permissions ``open(path, "w")`` would give
    (:func:`create_beside`).
    """
    target = writable_file("write_json_atomic", path)
    folder = os.path.dirname(os.path.abspath(target))
    text = dumps(data, indent=indent)
    fd, tmp = create_beside(target, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_folder(folder)


def path_text(owner: str, path: Any) -> str:
    """``path`` as a str, or a short, clear error: a TypeError for a non-path (an int or bool
    is a file descriptor to ``open``), a ValueError for a path no file system accepts (longer
    than :data:`MAX_PATH`, or with a NUL).

    Example:
        >>> path_text("load", "runs/a.jsonl")
        'runs/a.jsonl'
        >>> path_text("load", "x" * 5000)
        Traceback (most recent call last):
        ...
        ValueError: load needs a path, got a path of 5000 characters
    """
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{owner} needs a path (str or os.PathLike), got {type(path).__name__}")
    p = os.fspath(path)
    if not isinstance(p, str):
        raise TypeError(f"{owner} needs a text path, got {type(p).__name__}")
    if len(p) > MAX_PATH or "\x00" in p:
        what = f"a path of {len(p)} characters" if len(p) > MAX_PATH else "a NUL character"
        raise ValueError(f"{owner} needs a path, got {what}")
    return p


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)")):
        if test(mode):
            return kind
    return "a special file (socket or device)"


def readable_file(owner: str, path: Any, what: str = "file") -> str:
    """``path`` (as a str) if it names an existing regular file, else a short, clear error.

    A FIFO would block a reader forever and a directory is no file: both are a ValueError, as is
    a path no file system accepts (longer than :data:`MAX_PATH`, or with a NUL). A missing file
    is ``FileNotFoundError`` (``what`` names the file expected: ``"Inspect log"``); a non-path
    (an int or bool, which ``open`` reads as a file descriptor) is ``TypeError``.

    Example:
        >>> readable_file("load_prices", "/")
        Traceback (most recent call last):
        ...
        ValueError: load_prices: expected a regular file, got a directory: /
        >>> readable_file("load_prices", 1)
        Traceback (most recent call last):
        ...
        TypeError: load_prices needs a path (str or os.PathLike), got int
    """
    p = path_text(owner, path)
    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):  # a missing file, or "file/name"
        raise FileNotFoundError(errno.ENOENT, f"{owner}: no {what} at this path", p) from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{owner}: expected a regular file, got {_kind(mode)}: {p}")
    return p


def writable_file(owner: str, path: Any) -> str:
    """``path`` (as a str) if a regular file may be written there, else a short, clear error.

    The same refusals as :func:`readable_file`, except that a missing file is fine (it will be
    created); an existing FIFO, directory or device is a ValueError (writing would block or
    fail), and so is a path below a file (``notes.txt/run.jsonl``) or in a folder that does not
    exist (nothing creates folders on the way).
    """
    p = path_text(owner, path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        folder = os.path.dirname(os.path.abspath(p))
        if not os.path.isdir(folder):
            raise ValueError(
                f"{owner}: no file can be written at {p} (its folder {folder} does not exist)"
            ) from None
        return p
    except NotADirectoryError:
        raise ValueError(
            f"{owner}: no file can be written at {p} (a part of its folder is a file)"
        ) from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{owner}: expected a regular file, got {_kind(mode)}: {p}")
    return p


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def open_regular_file(owner: str, path: Any, *, write: bool = False) -> IO[bytes]:
    """``path`` opened in binary, refused at once unless it is a regular file.

    Reading (default): a buffered reader of an existing regular file. ``write=True``: an
    unbuffered, appending handle that can also read (the file is created when absent; nothing
    is truncated). A FIFO, a directory or a device is a ValueError naming it, never a blocking
    ``open`` (a FIFO's ``open`` waits for its other end: opened here without blocking, then
    checked on the open descriptor, so a path swapped after the check is caught too).

    Raises:
        TypeError / ValueError: see :func:`readable_file` and :func:`writable_file`.
        FileNotFoundError: reading a missing file (or writing in a missing folder).

    Example:
        >>> open_regular_file("load", "/")
        Traceback (most recent call last):
        ...
        ValueError: load: expected a regular file, got a directory: /
    """
    p = writable_file(owner, path) if write else readable_file(owner, path)
    flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT) if write else os.O_RDONLY
    try:
        fd = os.open(p, flags | _NONBLOCK | _CLOEXEC, 0o666)
    except OSError as e:
        if e.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO without a reader; a directory
            writable_file(owner, p)  # names what the path is now
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"{owner}: expected a regular file, got {_kind(mode)}: {p}")
        return open(fd, "a+b", buffering=0) if write else open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_json(path: str | os.PathLike[str], *, decode: bool = True) -> Any:
    """Read a JSON file written by :func:`write_json_atomic` (non-finite floats restored).

    ``decode=False`` returns the JSON as written, for a ``from_dict`` that decodes it itself
    (decoding twice would read an escaped ``{"$str": "NaN"}`` back as a float).

    Raises:
        ValueError: the file is not valid JSON (the message names the file), is nested too
            deeply to read, or is not a regular file (:func:`readable_file`).
    """
    p = readable_file("read_json", path)
    with open(p, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
            return from_json_safe(data) if decode else data
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: not valid JSON ({e})") from None
        except RecursionError:
            raise ValueError(f"{p}: JSON nested too deeply to read") from None
