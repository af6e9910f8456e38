"""A stable description of a metric's, a checker's or an agent's configuration, so a resumed
store never mixes settings.

A trial store records, in its header, each metric's configuration (:func:`metric_config`), the
checker's (:func:`callable_config`: ``"checker"``) and the agent's (``"agent"``): a name, a type
and a JSON description of the settings, with a sha256 fingerprint of that description.
:func:`ek.agents.harness.run_suite` refuses to resume a store whose header records a metric of
the same name, or a checker, under another configuration (the stored scores or verdicts were
computed with other settings; reusing them would silently mix two of them under one name),
and warns when the agent changed.

How an object is described (the same in every process; nothing by ``id()``):

* plain data as itself (a string longer than :data:`MAX_TEXT` characters, or a container of
  more than :data:`MAX_ITEMS` items, by its length and sha256, exactly);
* an object with an ``ek_config()`` method by what it returns: the protocol for anything whose
  settings decide its results (:class:`~ek.agents.verifier.HiddenTestChecker` returns its
  hidden tests' digest, expected tests, timeout, interpreter, limits...);
* a ``functools.partial`` by its function, arguments and keywords; a function by its qualified
  name, the values it closes over and its default arguments (a lambda also by a digest of its
  code: two lambdas in one module differ); a bound method by its function and its object;
* an object with ``to_dict`` by it; a dataclass by its fields; any other object by its
  ``__init__`` arguments kept as attributes of the same name (the way DeepEval re-instantiates
  a metric); private attributes (caches) are never read.

What cannot be described is named in ``undescribed`` (an object whose ``__init__`` arguments
are not all kept as attributes, a closure cell not yet filled, an attribute that raises):
a checker with anything undescribed is resumed only on an explicit opt-in
(``run_suite(resume_undescribed_checker=True)``), since two of them could differ unseen.
Values a function reads from module globals are not part of its description.

Example:
    >>> from ek.agents.metrics import TaskSuccessMetric
    >>> a, b = metric_config(TaskSuccessMetric()), metric_config(TaskSuccessMetric())
    >>> a == b, a["name"], a["type"]
    (True, 'task_success', 'ek.agents.metrics.TaskSuccessMetric')
    >>> metric_config(TaskSuccessMetric("final_state"))["fingerprint"] == a["fingerprint"]
    False
    >>> def at_least(threshold):
    ...     return lambda ep, gold: ep.score >= threshold
    >>> c5, c7 = callable_config(at_least(0.5)), callable_config(at_least(0.7))
    >>> c5["settings"]["closure"], c5["fingerprint"] == c7["fingerprint"], c5["undescribed"]
    ({'threshold': 0.5}, False, [])
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import inspect
import json
import math
import os
from collections.abc import Mapping
from typing import Any

from ek._validate import short_repr

__all__ = [
    "MAX_ITEMS",
    "MAX_TEXT",
    "callable_config",
    "config_diff",
    "describe",
    "metric_config",
    "same_config",
]

_MAX_DEPTH = 6
#: A string longer than this is described by its length and sha256.
MAX_TEXT = 1000
#: A container with more items than this is described by its length and sha256.
MAX_ITEMS = 100


def _qualname(obj: Any) -> str:
    mod = getattr(obj, "__module__", None) or "?"
    return f"{mod}.{getattr(obj, '__qualname__', getattr(obj, '__name__', type(obj).__name__))}"


def _number(x: float) -> Any:
    return x if math.isfinite(x) else repr(x)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _code_digest(code: Any) -> str:
    """What a code object computes, without where it was written (line numbers, addresses)."""

    def key(c: Any) -> tuple[Any, ...]:
        consts = tuple(key(x) if hasattr(x, "co_code") else repr(x) for x in c.co_consts)
        return (c.co_code.hex(), consts, c.co_names, c.co_varnames, c.co_freevars)

    return hashlib.sha256(repr(key(code)).encode()).hexdigest()[:16]


class _Describer:
    """One description: the walk, and the parts it could not describe (``undescribed``)."""

    def __init__(self) -> None:
        self.undescribed: list[str] = []
        self._path: set[int] = set()  # ids on the current path: a cycle is named, not walked

    def note(self, where: str, what: str) -> None:
        self.undescribed.append(f"{where or 'the object'}: {what}")

    def walk(self, obj: Any, where: str, depth: int) -> Any:
        if obj is None or isinstance(obj, (bool, int)):
            return obj
        if isinstance(obj, str):
            return obj if len(obj) <= MAX_TEXT else {"text": len(obj), "sha256": _digest(obj)}
        if isinstance(obj, float):
            return _number(obj)
        if isinstance(obj, (bytes, bytearray)):
            return {"bytes": len(obj), "sha256": hashlib.sha256(obj).hexdigest()}
        if isinstance(obj, enum.Enum):
            return f"{_qualname(type(obj))}.{obj.name}"
        if depth > _MAX_DEPTH:
            self.note(where, f"nested deeper than {_MAX_DEPTH} levels")
            return {"type": _qualname(type(obj))}
        if id(obj) in self._path:
            return {"cycle": _qualname(type(obj))}
        self._path.add(id(obj))
        try:
            return self._compound(obj, where, depth + 1)
        except Exception as e:  # a hostile object (a repr or an items() that raises)
            self.note(where, f"describing a {type(obj).__name__} raised {type(e).__name__}")
            return {"type": _qualname(type(obj))}
        finally:
            self._path.discard(id(obj))

    def _compound(self, obj: Any, where: str, depth: int) -> Any:
        if isinstance(obj, Mapping):
            out = {
                str(k): self.walk(v, f"{where}[{str(k)[:40]!r}]", depth)
                for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))
            }
            return _squeezed(out, len(out))
        if isinstance(obj, (list, tuple)):
            items = [self.walk(v, f"{where}[{i}]", depth) for i, v in enumerate(obj)]
            return _squeezed(items, len(items))
        if isinstance(obj, (set, frozenset)):
            items = sorted((self.walk(v, f"{where}{{}}", depth) for v in obj), key=repr)
            return _squeezed(items, len(items))
        if isinstance(obj, os.PathLike):
            return {"path": self.walk(os.fspath(obj), where, depth)}
        config = getattr(type(obj), "ek_config", None)
        if callable(config) and not isinstance(obj, type):
            return {"type": _qualname(type(obj)), "config": self._call(obj, config, where, depth)}
        if isinstance(obj, functools.partial):
            return self._partial(obj, where, depth)
        if inspect.ismethod(obj):
            return {
                "method": _qualname(obj.__func__),
                "self": self.walk(obj.__self__, f"{where}.__self__", depth),
            }
        if inspect.isfunction(obj):
            return self._function(obj, where, depth)
        if isinstance(obj, type) or inspect.isroutine(obj):
            return {"callable": _qualname(obj)}
        return self._object(obj, where, depth)

    def _call(self, obj: Any, method: Any, where: str, depth: int) -> Any:
        try:
            return self.walk(method(obj), f"{where}.ek_config()", depth)
        except Exception as e:
            self.note(where, f"ek_config() raised {type(e).__name__}")
            return None

    def _partial(self, obj: functools.partial[Any], where: str, depth: int) -> Any:
        return {
            "partial": self.walk(obj.func, f"{where}.func", depth),
            "args": self.walk(list(obj.args), f"{where}.args", depth),
            "keywords": self.walk(dict(obj.keywords), f"{where}.keywords", depth),
        }

    def _function(self, fn: Any, where: str, depth: int) -> Any:
        out: dict[str, Any] = {"callable": _qualname(fn)}
        code = fn.__code__
        if fn.__name__ == "<lambda>":
            out["code"] = _code_digest(code)
        closure: dict[str, Any] = {}
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not filled yet
                self.note(f"{where}.{name}", "a closure cell with no value yet")
                continue
            closure[name] = self.walk(value, f"{where} closure {name!r}", depth)
        if closure:
            out["closure"] = closure
        if fn.__defaults__:
            out["defaults"] = self.walk(list(fn.__defaults__), f"{where} defaults", depth)
        if fn.__kwdefaults__:
            out["kwdefaults"] = self.walk(fn.__kwdefaults__, f"{where} defaults", depth)
        return out

    def _object(self, obj: Any, where: str, depth: int) -> Any:
        to_dict = getattr(obj, "to_dict", None)
        if callable(to_dict):
            try:
                return {"type": _qualname(type(obj)), "value": self.walk(to_dict(), where, depth)}
            except Exception:
                pass
        return {"type": _qualname(type(obj)), "settings": self.settings(obj, where, depth)}

    def settings(self, obj: Any, where: str, depth: int) -> dict[str, Any]:
        """The settings of an object: dataclass fields, else its ``__init__`` arguments kept as
        attributes of the same name (private names skipped; a missing one is undescribed)."""
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            names = [f.name for f in dataclasses.fields(obj)]
        else:
            names = self._init_names(obj, where)
        out = {}
        for n in names:
            if n.startswith("_"):
                continue
            try:
                value = getattr(obj, n)
            except AttributeError:
                self.note(where, f"a {type(obj).__name__} whose argument {n!r} is not kept")
                continue
            except Exception as e:
                self.note(where, f"reading {type(obj).__name__}.{n} raised {type(e).__name__}")
                continue
            out[n] = self.walk(value, f"{where}.{n}", depth)
        return out

    def _init_names(self, obj: Any, where: str) -> list[str]:
        try:
            params = list(inspect.signature(type(obj)).parameters.values())
        except (TypeError, ValueError):
            self.note(where, f"a {type(obj).__name__} whose arguments cannot be read")
            return []
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            self.note(where, f"a {type(obj).__name__} that takes *args or **kwargs")
        return [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _squeezed(value: Any, n: int) -> Any:
    return value if n <= MAX_ITEMS else {"items": n, "sha256": _digest(value)}


def describe(obj: Any) -> Any:
    """A JSON-ready, process-independent description of ``obj`` (see the module docstring).

    Example:
        >>> describe({"b": (1, 2.5), "a": None}), describe(len)
        ({'a': None, 'b': [1, 2.5]}, {'callable': 'builtins.len'})
    """
    return _Describer().walk(obj, "", 0)


def _config(name: str, kind: str, settings: Any, undescribed: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "type": kind,
        "settings": settings,
        "fingerprint": _digest({"type": kind, "settings": settings}),
        "undescribed": undescribed,
    }


def metric_config(metric: Any) -> dict[str, Any]:
    """``{"name", "type", "settings", "fingerprint", "undescribed"}`` of a metric (see the
    module docstring).

    ``fingerprint`` is the sha256 of the canonical JSON of ``type`` and ``settings``.
    """
    name = getattr(metric, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(
            f"metric_config expects a metric (with a str name), got {type(metric).__name__}"
        )
    d = _Describer()
    kind = _qualname(type(metric))
    settings = d.settings(metric, name, 0)
    return _config(name, kind, settings, d.undescribed)


def callable_config(obj: Any, name: str | None = None) -> dict[str, Any]:
    """``{"name", "type", "settings", "fingerprint", "undescribed"}`` of a checker or an agent:
    its whole description as ``settings`` (see the module docstring), ``undescribed`` listing
    what could not be described (empty when the description is complete).

    Example:
        >>> import functools
        >>> def close(ep, gold, tol=0.1):
        ...     return abs(ep - gold) <= tol
        >>> a = callable_config(functools.partial(close, tol=0.5))
        >>> a["settings"]["keywords"], a["undescribed"]
        ({'tol': 0.5}, [])
        >>> a["fingerprint"] == callable_config(functools.partial(close, tol=0.2))["fingerprint"]
        False
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"callable_config name must be a str or None, got {type(name).__name__}")
    label = name if name is not None else getattr(obj, "__name__", None)
    if not isinstance(label, str):
        label = type(obj).__name__
    d = _Describer()
    settings = d.walk(obj, label, 0)
    return _config(label, _qualname(type(obj)), settings, d.undescribed)


def same_config(a: Any, b: Any) -> bool:
    """Two recorded configurations are the same: their fingerprints are equal (configurations
    without one are compared whole).

    Example:
        >>> same_config({"fingerprint": "ab", "settings": 1}, {"fingerprint": "ab"})
        True
    """

    def identity(c: Any) -> Any:
        return c.get("fingerprint", c) if isinstance(c, Mapping) else c

    return bool(identity(a) == identity(b))


def config_diff(a: Any, b: Any, *, limit: int = 5) -> list[str]:
    """Where two descriptions differ, first ``limit`` places: ``"settings.tol: 0.5 -> 0.2"``
    (``fingerprint`` and ``undescribed`` are not compared).

    Example:
        >>> config_diff({"settings": {"tol": 0.5, "n": 1}}, {"settings": {"tol": 0.2, "n": 1}})
        ['settings.tol: 0.5 -> 0.2']
    """
    out: list[str] = []
    _diff(a, b, "", out, limit)
    return out


def _diff(a: Any, b: Any, where: str, out: list[str], limit: int, depth: int = 0) -> None:
    if len(out) >= limit or _same(a, b):
        return
    if depth > _MAX_DIFF_DEPTH:  # a description is shallow: past this, name the place
        out.append(f"{where or 'value'}: differs below this level")
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        _diff_mappings(a, b, where, out, limit, depth)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{where}[{i}]", out, limit, depth + 1)
        return
    out.append(f"{where or 'value'}: {_shown(a, b)} -> {_shown(b, a)}")


def _shown(value: Any, other: Any) -> str:
    """``value`` for a message; a long string from where it starts to differ from ``other``
    (two long qualified names differ at their end)."""
    if isinstance(value, str) and isinstance(other, str):
        same = next(
            (i for i, (x, y) in enumerate(zip(value, other)) if x != y), min(len(value), len(other))
        )
        if same > 20:
            return "'..." + short_repr(value[same - 10 :], 70)[1:]
    return short_repr(value, 80)


def _diff_mappings(
    a: Mapping[Any, Any], b: Mapping[Any, Any], where: str, out: list[str], limit: int, depth: int
) -> None:
    for k in sorted(set(a) | set(b), key=str):
        if where == "" and k in ("fingerprint", "undescribed"):
            continue
        key = k[:40] if isinstance(k, str) else short_repr(k, 40)
        _diff(a.get(k), b.get(k), f"{where}.{key}" if where else key, out, limit, depth + 1)


_MAX_DIFF_DEPTH = 20


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (RecursionError, ValueError, TypeError):  # deep or odd values: walked instead
        return False
