"""The trusted test process's side of the workspace: proxies, and the finder that serves them.

Runs INSIDE the trusted test process (its source text is copied into each run next to the
runner, never imported there as part of ``ek``). A hidden test's ``import solution`` does not
import the agent's code here: :class:`WorkspaceFinder` (consulted *after* the standard library
and site-packages, so an installed package always wins over a workspace module of the same
name) returns a proxy module, and every use of it (attribute, call, operator) is a request to
the workspace process (:mod:`ek.agents.verifier.child`). What comes back is untrusted data:
plain values (``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``complex`` and
lists, tuples, dicts, sets of them) are rebuilt here, so a test's ``assert add(2, 3) == 5``
compares real integers in this process; anything else is a numbered reference
(:class:`RemoteObject`). Errors raised there are raised here: a built-in ``Exception`` type
as itself, a workspace exception class as a local class of the same name derived from the
nearest built-in one. A message that is not well formed, or the workspace process leaving
with status 0 in the middle of a request, is reported as tampering through ``on_tamper``.

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
    "Bridge",
    "ProtocolError",
    "RemoteError",
    "RemoteObject",
    "WorkspaceDied",
    "WorkspaceFinder",
]

_LINE_LIMIT = 64_000_000
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


_CLAIMS = {"eq": True, "ne": False, "lt": True, "le": True, "gt": True, "ge": True,
           "contains": True}  # fmt: skip


def _forward(name: str) -> Callable[..., Any]:
    def method(self: RemoteObject, *args: Any) -> Any:
        result = self._ek_op(name, *args)
        if name in _CLAIMS and result is _CLAIMS[name]:
            _probe(self, name)
        return result

    method.__name__ = f"__{name}__"
    return method


def _probe(obj: RemoteObject, name: str) -> None:
    """A comparison claimed equality (or order, or membership): ask again about an opaque
    object the workspace has never seen. An object that says it equals that too answers
    anything with yes (an "always equal" object): no honest value does."""
    if _bridge().op(name, obj, object()) is _CLAIMS[name]:
        _bridge().tamper(
            f"a workspace object of type {type(obj).__name__!r} answers {name!r} with "
            f"{_CLAIMS[name]} even for an object it has never seen (an always-equal object)"
        )


for _name in [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
    "radd",
    "rsub",
    "rmul",
    "rtruediv",
    "rfloordiv",
    "rmod",
    "rpow",
    "rmatmul",
    "rand",
    "ror",
    "rxor",
    "rlshift",
    "rrshift",
    "getitem",
    "setitem",
    "delitem",
    "contains",
    "next",
    "neg",
    "pos",
    "abs",
    "invert",
    "complex",
]:
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
        tag, val = v.get("$"), v.get("v")
        if tag == "ref":
            return self._ref(v)
        if tag == "bytes" and isinstance(val, str):
            return base64.b64decode(val, validate=True)
        if tag == "complex" and isinstance(val, list) and len(val) == 2:
            return complex(*(_typed(x, float) if type(x) is float else _typed(x, int) for x in val))
        if tag in ("tuple", "set", "frozenset", "dict") and type(val) is list:
            items = [self.decode(x) for x in val]
            if tag == "dict":
                if not all(type(x) is list and len(x) == 2 for x in items):
                    raise ProtocolError("bad dict")
                return {k: x for k, x in items}
            return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        raise ProtocolError(f"bad value {v!r:.100}")

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
        command: How to start it (``python -I ... child.py <config>``); the two pipe ends are
            added to its config here.
        config: The child's config (workspace, limits, Landlock paths).
        cwd: Its working directory (the workspace copy).
        env: Its environment.
        out_fd: Where its own stdout / stderr go (the checker's bounded output).
        on_event: Called with ``("sandbox", status)`` once it started and with
            ``("tamper", reason)`` when it misbehaves in a way no honest program does.
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

    def start(self) -> None:
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        cfg = {**self.config, "rfd": req_r, "wfd": resp_w}
        self.proc = subprocess.Popen(
            [*self.command, json.dumps(cfg)], cwd=self.cwd, env=self.env,
            stdin=subprocess.DEVNULL, stdout=self.out_fd, stderr=self.out_fd,
            pass_fds=(req_r, resp_w), start_new_session=True,
        )  # fmt: skip
        os.close(req_r)
        os.close(resp_w)
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

    def kill(self, why: str) -> None:
        self.dead = self.dead or why
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, 9)
            self.proc.wait()

    def receive(self) -> dict[str, Any]:
        try:
            line = self.rfile.readline(_LINE_LIMIT)
        except OSError:
            line = b""
        if not line:
            self._died()
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
                stream = sys.stderr if answer.get("stream") == 2 else sys.stdout
                stream.write(str(answer["out"]))
            elif answer.get("op") == "callback":
                self.callback(answer)
            elif "ok" in answer:
                return self.values.decode(answer["ok"])
            elif "err" in answer:
                raise self.values.error(answer["err"])
            else:
                self.tamper(f"the workspace process wrote an unexpected message: {answer!r:.120}")

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
