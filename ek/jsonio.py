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

import json
import math
import os
import tempfile
from collections.abc import Mapping
from typing import Any

__all__ = [
    "NONFINITE_SPELLINGS",
    "decode_float",
    "dumps",
    "encode_float",
    "from_json_safe",
    "loads",
    "read_json",
    "to_json_safe",
    "write_json_atomic",
]

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


def to_json_safe(obj: Any) -> Any:
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
    if isinstance(obj, str):
        if obj in NONFINITE_SPELLINGS and not isinstance(obj, _Spelled):
            return {_STR_TAG: str(obj)}
        return obj
    if isinstance(obj, float):
        return encode_float(obj)
    if isinstance(obj, Mapping):
        if _tagged(obj)[0]:  # already encoded (or an older file's tag): keep it
            return {str(k): str(v) for k, v in obj.items()}
        return {str(k): to_json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json_safe(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return [to_json_safe(v) for v in sorted(obj, key=repr)]
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_json_safe(to_dict())
    return repr(obj)


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


def from_json_safe(obj: Any) -> Any:
    """Inverse of :func:`to_json_safe`; also reads the older ``{"$float": "inf"}`` tags.

    Example:
        >>> from_json_safe(to_json_safe([float("nan"), "NaN", {"$float": "inf"}]))
        [nan, 'NaN', inf]
    """
    if isinstance(obj, str):
        return NONFINITE_SPELLINGS.get(obj, obj)
    if isinstance(obj, dict):
        ok, value = _tagged(obj)
        if ok:
            return value
        return {k: from_json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [from_json_safe(v) for v in obj]
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


def write_json_atomic(path: str | os.PathLike[str], data: Any, *, indent: int | None = 1) -> None:
    """Write ``data`` as strict JSON to ``path`` atomically (temp file, fsync, rename).

    Non-finite floats are spelled by :func:`to_json_safe`. A crash leaves the old file or the new
    one, never a mixture.
    """
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    text = dumps(data, indent=indent)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
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


def read_json(path: str | os.PathLike[str], *, decode: bool = True) -> Any:
    """Read a JSON file written by :func:`write_json_atomic` (non-finite floats restored).

    ``decode=False`` returns the JSON as written, for a ``from_dict`` that decodes it itself
    (decoding twice would read an escaped ``{"$str": "NaN"}`` back as a float).

    Raises:
        ValueError: the file is not valid JSON (the message names the file).
    """
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
            return from_json_safe(data) if decode else data
        except json.JSONDecodeError as e:
            raise ValueError(f"{os.fspath(path)}: not valid JSON ({e})") from None
