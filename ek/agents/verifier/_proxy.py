"""The trusted test process's side of the workspace: proxies, and the finder that serves them.

Runs INSIDE the trusted test process (its source text is copied into each run next to the
runner, never imported there as part of ``ek``). A hidden test's ``import solution`` does not
import the agent's code here: :class:`WorkspaceFinder` (consulted *after* the standard library
and site-packages, so an installed package always wins over a workspace module of the same
name) returns a proxy module, and every use of it (attribute, call, operator) is a request to
the workspace process (:mod:`ek.agents.verifier._child`). What comes back is untrusted data:
plain values (``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``complex`` and
lists, tuples, dicts, sets of them) are rebuilt here, so a test's ``assert add(2, 3) == 5``
compares real integers in this process; anything else is a numbered reference
(:class:`RemoteObject`). Errors raised there are raised here: a built-in ``Exception`` type
as itself, a workspace exception class as a local class of the same name derived from the
nearest built-in one. A message that is not well formed, or the workspace process leaving
with status 0 in the middle of a request, is reported as tampering through ``on_event``.

**Comparisons are decided here.** A workspace object compared with a value of the test
(``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``) never sees that value: it is asked
for the plain value of the built-in data type it derives from (an ``int`` subclass's
``int``, a named tuple's ``tuple``, ...), and that value is compared here; an object that
derives from no such type cannot be compared with the test's values, and the test fails
(:class:`UntrustedComparison`). Two workspace objects are compared there, and the answer
must be exactly a ``bool``.

**What it accepts is bounded**: one message at most :data:`MESSAGE_LIMIT` bytes, all of a
run's messages at most the ``transfer`` limit (past either, the workspace process is stopped
and the run reported over its limit through ``on_event``), and the workspace's printed text
at most :data:`OUT_LIMIT` characters (the rest is dropped, with a note).

Keep this module importable without side effects and free of non-stdlib imports.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import importlib.abc
import importlib.machinery
import json
import os
import pathlib
import subprocess
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NoReturn

__all__ = [
    "MESSAGE_LIMIT",
    "OUT_LIMIT",
    "Bridge",
    "ProtocolError",
    "RemoteError",
    "RemoteObject",
    "UntrustedComparison",
    "WorkspaceDied",
    "WorkspaceFinder",
]

#: Most bytes of one message from the workspace process.
MESSAGE_LIMIT = 4 << 20
#: Most characters of the workspace's printed text passed on to the test session in one run.
OUT_LIMIT = 1 << 20
_SAFE_EXC = {
    n for n in dir(builtins)
    if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), Exception)
}  # fmt: skip


class ProtocolError(Exception):
    """The workspace process sent something that is not a well-formed message."""


class WorkspaceDied(Exception):
    """The workspace process is gone (crashed, killed by a limit, or exited)."""


class RemoteError(Exception):
    """An error raised in the workspace process that is not an ``Exception`` (e.g. SystemExit)."""


class UntrustedComparison(BaseException):
    """A test compared a workspace object in a way only the workspace could answer.

    A ``BaseException``, so that no ``except Exception`` (or ``pytest.raises(Exception)``) in a
    test takes it for the comparison's answer: the test fails, with this reason.
    """


# --------------------------------------------------------------------------- proxies
class RemoteType(type):
    """Metaclass of the local stand-in of a workspace class: calls and attributes go there."""

    _ek_tid: int

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _bridge().request({"op": "call", "id": cls._ek_tid, "args": _enc(list(args)),
                                  "kwargs": _enc(kwargs)})  # fmt: skip

    def __getattr__(cls, name: str) -> Any:
        if name.startswith(("_ek_", "__")):
            raise AttributeError(name)
        return _bridge().request({"op": "getattr", "id": cls._ek_tid, "name": name})

    def __instancecheck__(cls, obj: Any) -> bool:
        if "_ek_tid" not in cls.__dict__:
            return type.__instancecheck__(cls, obj)
        if not isinstance(obj, RemoteObject):
            return False
        return _bridge().op("isinstance", obj, cls) is True

    def __subclasscheck__(cls, sub: Any) -> bool:
        if "_ek_tid" not in cls.__dict__ or not isinstance(sub, RemoteType):
            return type.__subclasscheck__(cls, sub)
        return _bridge().request({"op": "issubclass", "id": sub._ek_tid,
                                  "args": _enc([cls])}) is True  # fmt: skip


class RemoteObject(metaclass=RemoteType):
    """A workspace object that stays in the workspace process; every use is a request there."""

    __slots__ = ("_ek_id",)
    _ek_id: int

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_ek_"):
            raise AttributeError(name)
        return _bridge().request({"op": "getattr", "id": self._ek_id, "name": name})

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "_ek_id":
            object.__setattr__(self, name, value)
        else:
            _bridge().request({"op": "setattr", "id": self._ek_id, "name": name,
                               "value": _enc(value)})  # fmt: skip

    def __delattr__(self, name: str) -> None:
        _bridge().request({"op": "delattr", "id": self._ek_id, "name": name})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _bridge().request({"op": "call", "id": self._ek_id, "args": _enc(list(args)),
                                  "kwargs": _enc(kwargs)})  # fmt: skip

    def __iter__(self) -> Any:
        return self._ek_op("iter")

    def __str__(self) -> str:
        return _text(self._ek_op("str"))

    def __repr__(self) -> str:
        return _text(self._ek_op("repr"))

    def __bool__(self) -> bool:
        return _typed(self._ek_op("bool"), bool)

    def __len__(self) -> int:
        return _typed(self._ek_op("len"), int)

    def __hash__(self) -> int:
        return _typed(self._ek_op("hash"), int)

    def __index__(self) -> int:
        return _typed(self._ek_op("index"), int)

    def __int__(self) -> int:
        return _typed(self._ek_op("int"), int)

    def __float__(self) -> float:
        return _typed(self._ek_op("float"), float)

    def __dir__(self) -> list[str]:
        names = self._ek_op("dir")
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def __enter__(self) -> Any:
        return self._ek_op("enter")

    def __exit__(self, *exc: Any) -> Any:
        return self._ek_op("exit")

    def _ek_op(self, name: str, *args: Any) -> Any:
        return _bridge().op(name, self, *args)


def _forward(name: str) -> Callable[..., Any]:
    def method(self: RemoteObject, *args: Any) -> Any:
        return self._ek_op(name, *args)

    method.__name__ = f"__{name}__"
    return method


# --------------------------------------------------------------------------- comparisons
#: What each comparison claims when it answers this (``ne``: equality).
_CLAIMS = {"eq": True, "ne": False, "lt": True, "le": True, "gt": True, "ge": True,
           "contains": True}  # fmt: skip
_HERE: dict[str, Callable[[Any, Any], Any]] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "contains": lambda container, item: item in container,
}  # fmt: skip
#: The exact types a plain value arrives as (what :meth:`_Values.decode` rebuilds).
_PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set,
                frozenset)  # fmt: skip
_NO_VALUE = object()


def _compare(name: str) -> Callable[..., Any]:
    def method(self: RemoteObject, other: Any) -> Any:
        if isinstance(other, RemoteObject):  # two workspace objects: the workspace's own say
            return _workspace_answer(self, name, other)
        mine = _plain_value(self)
        if mine is _NO_VALUE:
            _probe(self, name)
            raise UntrustedComparison(
                f"a test compared a workspace object of type {type(self).__name__!r} with "
                f"its own {type(other).__name__} ({name!r}); the workspace's answer cannot be "
                "trusted and the object derives from no built-in data type to compare here: "
                "make the workspace return plain data (int, float, str, list, dict ...)"
            )
        return _HERE[name](mine, other)

    method.__name__ = f"__{name}__"
    return method


def _workspace_answer(obj: RemoteObject, name: str, other: RemoteObject) -> bool:
    """Two workspace objects compared by the workspace: exactly a bool, or the test fails."""
    result = obj._ek_op(name, other)
    if type(result) is not bool:
        raise UntrustedComparison(
            f"the workspace answered {name!r} between two of its objects with a "
            f"{type(result).__name__}, not a bool: a comparison's answer must be True or False"
        )
    if result is _CLAIMS[name]:
        _probe(obj, name)
    return result


def _plain_value(obj: RemoteObject) -> Any:
    """The plain value the workspace object stands for, asked without showing it the test's
    value (its built-in data type's conversion: ``int(x)`` of an ``int`` subclass ...), or
    ``_NO_VALUE``."""
    try:
        value = _bridge().op("plain", obj)
    except (ProtocolError, WorkspaceDied):
        raise
    except Exception:  # no built-in data type among its bases, or its conversion raised
        return _NO_VALUE
    return value if type(value) in _PLAIN_TYPES else _NO_VALUE


def _probe(obj: RemoteObject, name: str) -> None:
    """Ask a comparison again about an opaque object the workspace has never seen: an object
    that claims equality (or order, or membership) with that too answers anything with yes
    (an "always equal" object): no honest value does, and it is tampering."""
    try:
        answer = _bridge().op(name, obj, object())
    except (ProtocolError, WorkspaceDied):
        raise
    except Exception:  # e.g. TypeError: not orderable against an object: an honest answer
        return
    if answer is _CLAIMS[name]:
        _bridge().tamper(
            f"a workspace object of type {type(obj).__name__!r} answers {name!r} with "
            f"{_CLAIMS[name]} even for an object it has never seen (an always-equal object)"
        )


for _name in _CLAIMS:
    setattr(RemoteObject, f"__{_name}__", _compare(_name))
for _name in [
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift", "radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow",
    "rmatmul", "rand", "ror", "rxor", "rlshift", "rrshift", "getitem", "setitem", "delitem",
    "next", "neg", "pos", "abs", "invert", "complex",
]:  # fmt: skip
    setattr(RemoteObject, f"__{_name}__", _forward(_name))


class RemoteException:
    """Mixin of the local stand-in of a workspace exception class."""

    def __getattr__(self, name: str) -> Any:
        ref = self.__dict__.get("_ek_id")
        if ref is None or name.startswith("_ek_"):
            raise AttributeError(name)
        return _bridge().request({"op": "getattr", "id": ref, "name": name})


def _text(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"the workspace returned {type(v).__name__} for str()/repr()")
    return v


def _typed(v: Any, t: type) -> Any:
    if type(v) is not t and not (t is int and type(v) is bool):
        raise TypeError(f"the workspace returned {type(v).__name__}, expected {t.__name__}")
    return v


# --------------------------------------------------------------------------- values
class _Values:
    """Turns this process's values into messages and the workspace's messages into values."""

    def __init__(self) -> None:
        self.types: dict[int, type] = {}
        self.prefs: dict[int, Any] = {}

    def local_type(self, meta: Any) -> type:
        if not isinstance(meta, dict) or not isinstance(meta.get("id"), int):
            raise ProtocolError(f"bad type description {meta!r:.100}")
        tid, name, exc = meta["id"], str(meta.get("name", "?"))[:200], meta.get("exc")
        if tid not in self.types:
            if exc is not None and exc not in _SAFE_EXC:
                raise ProtocolError(f"bad exception base {exc!r:.100}")
            if exc is not None and meta.get("builtin") is True and name == exc:
                self.types[tid] = getattr(builtins, exc)
            elif exc is not None:
                base = getattr(builtins, exc)
                self.types[tid] = type(name, (base, RemoteException), {"_ek_tid": tid})
            else:
                self.types[tid] = RemoteType(
                    name, (RemoteObject,), {"__slots__": (), "_ek_tid": tid}
                )
        return self.types[tid]

    def decode(self, v: Any) -> Any:
        if v is None or type(v) in (bool, int, float, str):
            return v
        if type(v) is list:
            return [self.decode(x) for x in v]
        if type(v) is not dict:
            raise ProtocolError(f"bad value {v!r:.100}")
        if v.get("$") == "ref":
            return self._ref(v)
        return self._tagged(v.get("$"), v.get("v"))

    def _tagged(self, tag: Any, val: Any) -> Any:
        """A value sent as ``{"$": tag, "v": val}``: bytes, a complex number, a collection."""
        if tag == "bytes" and isinstance(val, str):
            return base64.b64decode(val, validate=True)
        if tag == "complex" and isinstance(val, list) and len(val) == 2:
            return complex(*(_typed(x, float) if type(x) is float else _typed(x, int) for x in val))
        if tag in ("tuple", "set", "frozenset", "dict") and type(val) is list:
            return self._collection(tag, [self.decode(x) for x in val])
        raise ProtocolError(f"bad value {{'$': {tag!r:.50}, 'v': {val!r:.100}}}")

    @staticmethod
    def _collection(tag: str, items: list[Any]) -> Any:
        if tag == "dict":
            if not all(type(x) is list and len(x) == 2 for x in items):
                raise ProtocolError("bad dict")
            return {k: x for k, x in items}
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)

    def _ref(self, v: dict[str, Any]) -> Any:
        kind = v.get("kind")
        if kind == "class":
            return self.local_type(v)
        if kind not in ("object", "module") or not isinstance(v.get("id"), int):
            raise ProtocolError(f"bad reference {v!r:.100}")
        cls: type = self.local_type(v.get("type"))
        if not isinstance(cls, RemoteType):
            cls = RemoteObject  # an exception instance handed out as a value
        obj: Any = object.__new__(cls)  # type: ignore[arg-type]
        obj._ek_id = v["id"]
        return obj

    def encode(self, v: Any, depth: int = 0) -> Any:
        t = type(v)
        if v is None or t in (bool, int, float, str):
            return v
        if depth < 50 and t in (list, tuple, set, frozenset, dict, bytes, complex):
            return self._encode_builtin(v, t, depth)
        if isinstance(v, pathlib.PurePath):
            return {"$": "path", "v": str(v)}
        if isinstance(v, RemoteObject):
            return {"$": "ref", "id": v._ek_id}
        if isinstance(v, type) and "_ek_tid" in v.__dict__:
            return {"$": "ref", "id": v.__dict__["_ek_tid"]}
        if isinstance(v, RemoteException) and "_ek_id" in v.__dict__:
            return {"$": "ref", "id": v.__dict__["_ek_id"]}
        self.prefs[len(self.prefs) + 1] = v
        return {"$": "pref", "id": len(self.prefs)}

    def _encode_builtin(self, v: Any, t: type, depth: int) -> Any:
        if t is list:
            return [self.encode(x, depth + 1) for x in v]
        if t is dict:
            return {"$": "dict", "v": [[self.encode(k, depth + 1), self.encode(x, depth + 1)]
                                       for k, x in v.items()]}  # fmt: skip
        if t is bytes:
            return {"$": "bytes", "v": base64.b64encode(v).decode()}
        if t is complex:
            return {"$": "complex", "v": [v.real, v.imag]}
        return {"$": t.__name__, "v": [self.encode(x, depth + 1) for x in v]}

    def error(self, err: Any) -> BaseException:
        if not isinstance(err, dict):
            raise ProtocolError(f"bad error {err!r:.100}")
        msg, tb = str(err.get("msg", ""))[:2000], str(err.get("tb", ""))[-4000:]
        cls = self.local_type(err.get("type"))
        if isinstance(cls, RemoteType):  # not an Exception there (SystemExit, pytest's Skipped ...)
            return RemoteError(f"{cls.__name__}: {msg}\n--- in the workspace process ---\n{tb}")
        exc = cls(msg)
        if issubclass(cls, RemoteException) and isinstance(err.get("ref"), int):
            exc.__dict__["_ek_id"] = err["ref"]
        exc.add_note(f"--- raised in the workspace process ---\n{tb}")
        return exc


# --------------------------------------------------------------------------- the connection
class Bridge:
    """The workspace process, started on first use, and the conversation with it.

    Args:
        command: How to start it (``python -I ... child.py``); its config goes to its stdin,
            with the two pipe ends added here.
        config: The child's config (workspace, limits, Landlock paths); ``limits["transfer"]``
            also bounds what this side accepts.
        cwd: Its working directory (the workspace copy).
        env: Its environment.
        out_fd: Where its own stdout / stderr go (the checker's bounded output).
        on_event: Called with ``("sandbox", status)`` once it started, with ``("tamper",
            reason)`` when it misbehaves in a way no honest program does, and with ``("limit",
            reason)`` when it sends more than this side accepts.
    """

    def __init__(
        self,
        command: Sequence[str],
        config: dict[str, Any],
        cwd: str,
        env: dict[str, str],
        out_fd: int,
        on_event: Callable[[str, Any], None],
    ) -> None:
        self.command, self.config, self.cwd, self.env = list(command), config, cwd, env
        self.out_fd, self.on_event = out_fd, on_event
        self.proc: subprocess.Popen[bytes] | None = None
        self.dead: str | None = None
        self.values = _Values()
        self.transfer = int(config["limits"]["transfer"])
        self.received = 0
        self.out_left = OUT_LIMIT

    def start(self) -> None:
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        cfg = {**self.config, "rfd": req_r, "wfd": resp_w}
        self.proc = subprocess.Popen(
            self.command, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
            stdout=self.out_fd, stderr=self.out_fd, pass_fds=(req_r, resp_w),
            start_new_session=True,
        )  # fmt: skip
        os.close(req_r)
        os.close(resp_w)
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):  # its config on stdin: never on its command line
            self.proc.stdin.write(json.dumps(cfg).encode("utf-8"))
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        self.wfd = req_w
        self.rfile = os.fdopen(resp_r, "rb")
        hello = self.receive()
        if not isinstance(hello.get("hello"), dict):
            self.tamper(f"the workspace process did not start cleanly: {hello!r:.200}")
        self.on_event("sandbox", hello.get("hello"))

    def tamper(self, reason: str) -> NoReturn:
        self.on_event("tamper", reason)
        self.kill(f"stopped: {reason}")
        raise ProtocolError(reason)

    def over_limit(self, reason: str) -> NoReturn:
        self.on_event("limit", reason)
        self.kill(f"stopped: {reason}")
        raise WorkspaceDied(self.dead)

    def kill(self, why: str) -> None:
        self.dead = self.dead or why
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, 9)
            self.proc.wait()

    def receive(self) -> dict[str, Any]:
        try:
            line = self.rfile.readline(MESSAGE_LIMIT + 1)
        except OSError:
            line = b""
        if not line:
            self._died()
        self.received += len(line)
        if len(line) > MESSAGE_LIMIT:
            self.over_limit(
                f"the workspace process sent a message of more than {MESSAGE_LIMIT} bytes "
                "(the most one message may hold)"
            )
        if self.received > self.transfer:
            self.over_limit(
                f"the workspace process sent more than {self.transfer} bytes in this run "
                "(limits['transfer'])"
            )
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            self.tamper(f"the workspace process wrote a malformed message: {line[:120]!r}")
        if not isinstance(msg, dict):
            self.tamper(f"the workspace process wrote a malformed message: {line[:120]!r}")
        return msg

    def _died(self) -> NoReturn:
        assert self.proc is not None
        rc = self.proc.wait()
        if rc == 0:
            self.tamper("the workspace process exited with status 0 in the middle of a request")
        how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
        self.dead = f"the workspace process died ({how})"
        raise WorkspaceDied(self.dead)

    def send(self, msg: dict[str, Any]) -> None:
        data = (json.dumps(msg) + "\n").encode("utf-8", "replace")
        try:
            while data:
                data = data[os.write(self.wfd, data) :]
        except OSError:
            self._died()

    def request(self, msg: dict[str, Any]) -> Any:
        """Send ``msg``, serve callbacks until the answer arrives, return it decoded."""
        if self.dead is not None:
            raise WorkspaceDied(self.dead)
        if self.proc is None:
            self.start()
        self.send(msg)
        while True:
            answer = self.receive()
            if "out" in answer:
                self.echo(answer)
            elif answer.get("op") == "callback":
                self.callback(answer)
            elif "ok" in answer:
                return self.values.decode(answer["ok"])
            elif "err" in answer:
                raise self.values.error(answer["err"])
            else:
                self.tamper(f"the workspace process wrote an unexpected message: {answer!r:.120}")

    def echo(self, answer: dict[str, Any]) -> None:
        """Pass the workspace's printed text on to the test session, up to :data:`OUT_LIMIT`."""
        if self.out_left < 0:  # past the limit, and the note is written
            return
        text = str(answer["out"])
        if len(text) > self.out_left:
            text = text[: self.out_left] + (
                f"\n[... the workspace printed more than {OUT_LIMIT} characters in this run: "
                "the rest is dropped ...]\n"
            )
            self.out_left = -1
        else:
            self.out_left -= len(text)
        stream = sys.stderr if answer.get("stream") == 2 else sys.stdout
        stream.write(text)

    def callback(self, msg: dict[str, Any]) -> None:
        fn = self.values.prefs.get(msg.get("id"))  # type: ignore[arg-type]
        if fn is None:
            self.tamper("the workspace process called back an unknown function")
        try:
            args = self.values.decode(msg.get("args"))
            kwargs = self.values.decode(msg.get("kwargs"))
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise ProtocolError("bad callback arguments")
            result = {"ok": self.values.encode(fn(*args, **kwargs))}
        except ProtocolError:
            raise
        except Exception as e:
            result = {"err": f"{type(e).__name__}: {e}"[:2000]}
        self.send(result)

    def op(self, name: str, target: RemoteObject, *args: Any) -> Any:
        return self.request({"op": name, "id": target._ek_id, "args": _enc(list(args))})

    def import_module(self, name: str) -> Any:
        return self.request({"op": "import", "name": name})


_BRIDGE: list[Bridge] = []


def _bridge() -> Bridge:
    return _BRIDGE[0]


def _enc(v: Any) -> Any:
    return _bridge().values.encode(v)


# --------------------------------------------------------------------------- the import hook
class _ProxyLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        remote = _bridge().import_module(spec.name)
        module = ModuleType(spec.name)
        module.__dict__["_ek_remote"] = remote

        def __getattr__(name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return getattr(remote, name)

        module.__dict__["__getattr__"] = __getattr__
        module.__path__ = []  # a package, so that submodules are found through the finder too
        return module

    def exec_module(self, module: ModuleType) -> None:
        pass


class WorkspaceFinder(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: a module nothing installed provides, but the workspace has,
    becomes a proxy of the module imported in the workspace process."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".", 1)[0] not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, _ProxyLoader(), is_package=True)


def install(bridge: Bridge, workspace: str) -> None:
    """Serve the workspace's top-level modules through ``bridge`` from now on."""
    _BRIDGE[:] = [bridge]
    names = set()
    for entry in os.listdir(workspace):
        stem = entry[:-3] if entry.endswith(".py") else entry
        if stem.isidentifier() and (
            entry.endswith(".py") or os.path.isdir(os.path.join(workspace, entry))
        ):
            names.add(stem)
    sys.meta_path.append(WorkspaceFinder(names))
