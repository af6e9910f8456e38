"""The workspace process: the ONLY process that imports and runs the agent's code.

The checker never imports this module to use it: it copies this file's source text into the
run and starts it as ``python -I -B -X utf8 child.py`` from the trusted test process
(:mod:`ek.agents.verifier._runner`), its config on stdin (never on its command line, which any
process may read). Before any workspace code is imported it sandboxes itself
(:func:`sandbox`): resource limits, no capabilities, no new privileges, and on Linux with
Landlock a filesystem allow-list (read everywhere except the checker's folders, the hidden
tests' source and the ``/proc`` entries of every other process; write only the workspace copy
and a scratch folder), no TCP, no signals or abstract sockets outside itself; then it forgets
the paths it hid. Then it serves requests (import, getattr, call, operators ...) from the
trusted process over two pipes, one JSON message a line (:func:`serve`). Values cross as plain
data; anything else stays here and crosses as a numbered reference. Nothing it sends can
decide a verdict: the tests' assertions and comparisons run in the trusted process, on the
plain values it returns.

Keep this module importable without side effects and free of non-stdlib imports.
"""

from __future__ import annotations

import base64
import builtins
import ctypes
import importlib
import json
import operator
import os
import pathlib
import resource
import sys
import traceback
from collections.abc import Callable
from typing import Any

__all__ = ["main", "sandbox", "serve"]

_PLAIN = (type(None), bool, int, float, str)
_OUT_LIMIT = 1_000_000

# --------------------------------------------------------------------------- the sandbox
_LL_READ_DIR = 1 << 3
_LL_READ = (1 << 0) | (1 << 2) | _LL_READ_DIR  # EXECUTE, READ_FILE, READ_DIR
_LL_FILE = (1 << 0) | (1 << 1) | (1 << 2)  # the rights that apply to a file
_LL_WRITE_V1 = (1 << 1) | sum(1 << b for b in range(4, 13))  # WRITE_FILE, REMOVE_*, MAKE_*
_LL_REFER, _LL_TRUNCATE = 1 << 13, 1 << 14
_SYS_CREATE, _SYS_ADD, _SYS_RESTRICT = 444, 445, 446  # the same on x86-64 and arm64
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP = 38, 24


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _set_limits(limits: dict[str, int]) -> dict[str, int]:
    """Apply ``resource.setrlimit`` to this process (inherited by its children)."""
    names = {
        "memory": resource.RLIMIT_AS,
        "cpu": resource.RLIMIT_CPU,
        "processes": getattr(resource, "RLIMIT_NPROC", None),
        "file_size": resource.RLIMIT_FSIZE,
        "core": resource.RLIMIT_CORE,
    }
    done: dict[str, int] = {}
    for name, value in limits.items():
        res = names.get(name)
        if res is None:
            continue
        _, hard = resource.getrlimit(res)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(res, (value, value))
            done[name] = value
        except (OSError, ValueError):
            pass
    return done


def _count_processes(uid: int) -> int:
    """Threads of the processes that the user ``uid`` owns now (RLIMIT_NPROC counts them all)."""
    n = 0
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{entry}/task"))
            except OSError:
                pass
    return n


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


def _drop_capabilities(libc: Any) -> None:
    """Drop every capability: the bounding set (for what it runs), then this process's own."""
    try:
        last = int(pathlib.Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        last = 40
    for cap in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    no_caps = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable; two 32-bit words
    libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), ctypes.byref(no_caps))


def _capabilities() -> str:
    """This process's effective capabilities, as /proc shows them (``?``: unknown)."""
    try:
        for line in pathlib.Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return line.split()[1]
    except OSError:
        pass
    return "?"


def _read_roots(excluded: list[str]) -> list[str]:
    """The smallest set of paths that covers the whole tree except ``excluded`` subtrees and
    the ``/proc`` entries of every other process (their command lines, among other things).
    A process started later has no entry in the set either: its ``/proc`` entry stays hidden."""
    me = f"/proc/{os.getpid()}"
    ex = {os.path.realpath(p) for p in excluded}
    chains = {os.path.dirname(p) for p in ex} | {"/proc"}
    for p in list(chains):
        while p != os.path.dirname(p):
            p = os.path.dirname(p)
            chains.add(p)
    roots: list[str] = []
    todo = ["/"]
    while todo:
        d = todo.pop()
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            p = os.path.join(d, name)
            if p in ex or os.path.islink(p) or (d == "/proc" and name.isdigit() and p != me):
                continue
            (todo if p in chains else roots).append(p)
    return roots


def _add_rule(libc: Any, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= _LL_FILE | _LL_TRUNCATE
        attr = _PathBeneath(access, fd)
        libc.syscall(_SYS_ADD, ruleset, 1, ctypes.byref(attr), 0)
    finally:
        os.close(fd)


def _landlock(libc: Any, cfg: dict[str, Any]) -> int:
    """Restrict the filesystem, TCP, signals and abstract sockets; returns the ABI (0: none)."""
    abi = libc.syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return 0
    write = _LL_WRITE_V1 | (_LL_REFER if abi >= 2 else 0) | (_LL_TRUNCATE if abi >= 3 else 0)
    fields = [_LL_READ | write, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0]
    size = 8 * (3 if abi >= 6 else 2 if abi >= 4 else 1)
    attr = (ctypes.c_uint64 * 3)(*fields)
    ruleset = libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        return 0
    try:
        for p in _read_roots(cfg["hide"]):
            _add_rule(libc, ruleset, p, _LL_READ)
        _add_rule(libc, ruleset, "/proc", _LL_READ_DIR)  # which processes exist, not their files
        for p in cfg["read"]:
            _add_rule(libc, ruleset, p, _LL_READ)
        for p in cfg["write"]:
            _add_rule(libc, ruleset, p, _LL_READ | write)
        if libc.syscall(_SYS_RESTRICT, ruleset, 0) != 0:
            return 0
    finally:
        os.close(ruleset)
    return int(abi)


def sandbox(cfg: dict[str, Any]) -> dict[str, Any]:
    """Limit this process before any workspace code runs; returns what was applied.

    ``cfg`` holds ``limits`` (``memory``, ``cpu``, ``processes``, ``file_size`` for
    ``resource.setrlimit``), and for Landlock the paths to ``hide`` (no access), to ``read``
    and to ``write``. Whatever the platform lacks is reported as not applied, never faked.
    """
    limits = dict(cfg["limits"])
    if "processes" in limits and os.getuid() != 0:
        limits["processes"] += _count_processes(os.getuid())  # the count is per user
    status: dict[str, Any] = {"limits": _set_limits({**limits, "core": 0}), "uid": os.getuid()}
    status["no_new_privs"] = False
    status["landlock"] = 0
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)  # the C library the interpreter runs on
        status["no_new_privs"] = libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
        if status["no_new_privs"]:
            status["landlock"] = _landlock(libc, cfg)
        _drop_capabilities(libc)
        status["capabilities"] = _capabilities()
    return status


# --------------------------------------------------------------------------- values
class _Table:
    """The objects handed out by reference, by number (the same object, the same number)."""

    def __init__(self) -> None:
        self.objs: dict[int, Any] = {}
        self.ids: dict[int, int] = {}

    def ref(self, obj: Any) -> int:
        key = id(obj)
        if key not in self.ids:
            self.ids[key] = len(self.objs) + 1
            self.objs[self.ids[key]] = obj
        return self.ids[key]


_TABLE = _Table()


def _exc_base(cls: type) -> str | None:
    """The nearest builtin ``Exception`` subclass of ``cls`` (None: not an Exception)."""
    for base in cls.__mro__:
        if getattr(builtins, base.__name__, None) is base and issubclass(base, Exception):
            return base.__name__
    return None


def _type_meta(cls: type) -> dict[str, Any]:
    return {"id": _TABLE.ref(cls), "name": str(cls.__name__)[:200], "exc": _exc_base(cls),
            "builtin": getattr(builtins, cls.__name__, None) is cls}  # fmt: skip


def encode(v: Any, depth: int = 0) -> Any:
    """A JSON-ready value: plain data by value (exact built-in types only), the rest by reference."""
    t = type(v)
    if t in _PLAIN:
        return v
    if depth < 50:
        if t is list:
            return [encode(x, depth + 1) for x in v]
        if t in (tuple, set, frozenset):
            return {"$": t.__name__, "v": [encode(x, depth + 1) for x in v]}
        if t is dict:
            return {
                "$": "dict",
                "v": [[encode(k, depth + 1), encode(x, depth + 1)] for k, x in v.items()],
            }
        if t is bytes:
            return {"$": "bytes", "v": base64.b64encode(v).decode()}
        if t is complex:
            return {"$": "complex", "v": [v.real, v.imag]}
    if isinstance(v, type):
        return {"$": "ref", "kind": "class", **_type_meta(v)}
    kind = "module" if t.__name__ == "module" else "object"
    return {"$": "ref", "kind": kind, "id": _TABLE.ref(v), "type": _type_meta(t)}


class _Callback:
    """A callable of the trusted process (e.g. a ``key=`` function): calling it asks there."""

    def __init__(self, conn: _Conn, pid: int) -> None:
        self._conn, self._pid = conn, pid

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._conn.request({"op": "callback", "id": self._pid, "args": encode(list(args)),
                                   "kwargs": encode(kwargs)})  # fmt: skip


def decode(v: Any, conn: _Conn) -> Any:
    """A value from the trusted process."""
    if isinstance(v, list):
        return [decode(x, conn) for x in v]
    if not isinstance(v, dict):
        return v
    tag: Any = v.get("$")
    val: Any = v.get("v")
    if tag == "ref":
        return _TABLE.objs[v["id"]]
    if tag == "pref":
        return _Callback(conn, v["id"])
    if tag == "path":
        return pathlib.Path(val)
    if tag == "bytes":
        return base64.b64decode(val)
    if tag == "complex":
        return complex(*val)
    items = [decode(x, conn) for x in val]
    if tag == "dict":
        return {k: x for k, x in items}
    return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)


# --------------------------------------------------------------------------- operations
_BINARY = {
    name: getattr(operator, name if name not in ("and", "or") else name + "_")
    for name in ["eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift", "getitem"]
}  # fmt: skip
_UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": operator.neg, "pos": operator.pos, "abs": abs, "invert": operator.invert,
    "int": int, "float": float, "complex": complex, "index": operator.index, "bool": bool,
    "len": len, "hash": hash, "str": str, "repr": repr, "iter": iter, "next": next,
    "dir": lambda o: sorted(str(n) for n in dir(o)), "enter": lambda o: o.__enter__(),
}  # fmt: skip


_DATA_TYPES: tuple[type, ...] = (int, float, complex, str, bytes, tuple, list, dict, set,
                                 frozenset)  # fmt: skip


def _plain(target: Any) -> Any:
    """``target`` as the built-in data type it derives from (an ``int`` subclass's ``int``, a
    named tuple's ``tuple``): what the trusted process compares with a test's value."""
    for base in _DATA_TYPES:
        if isinstance(target, base):
            return base(target)
    raise TypeError(f"{type(target).__name__} derives from no built-in data type")


def _operate(name: str, target: Any, args: list[Any]) -> Any:
    if name == "plain":
        return _plain(target)
    if name in _UNARY:
        return _UNARY[name](target)
    if name in _BINARY:
        return _BINARY[name](target, args[0])
    if name.startswith("r") and name[1:] in _BINARY:
        return _BINARY[name[1:]](args[0], target)
    if name == "contains":
        return args[0] in target
    if name == "setitem":
        target[args[0]] = args[1]
        return None
    if name == "delitem":
        del target[args[0]]
        return None
    if name == "exit":
        return target.__exit__(None, None, None)
    if name == "isinstance":
        return isinstance(target, args[0])
    if name == "issubclass":
        return isinstance(target, type) and issubclass(target, args[0])
    raise TypeError(f"unsupported operation {name!r}")


def handle(msg: dict[str, Any], conn: _Conn) -> Any:
    """Carry out one request of the trusted process."""
    op = msg["op"]
    if op == "import":
        return importlib.import_module(msg["name"])
    target = _TABLE.objs[msg["id"]]
    if op == "getattr":
        return getattr(target, msg["name"])
    if op == "setattr":
        setattr(target, msg["name"], decode(msg["value"], conn))
        return None
    if op == "delattr":
        delattr(target, msg["name"])
        return None
    if op == "call":
        return target(*decode(msg["args"], conn), **decode(msg["kwargs"], conn))
    return _operate(op, target, decode(msg.get("args", []), conn))


# --------------------------------------------------------------------------- the connection
class _Capture:
    """sys.stdout / sys.stderr of the workspace: written text travels with the next message."""

    def __init__(self, stream: int) -> None:
        self.stream = stream
        self.buf: list[str] = []
        self.size = 0
        self.encoding = "utf-8"

    def write(self, s: str) -> int:
        if self.size < _OUT_LIMIT:
            self.buf.append(str(s)[: _OUT_LIMIT - self.size])
            self.size += len(self.buf[-1])
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def take(self) -> str:
        out, self.buf, self.size = "".join(self.buf), [], 0
        return out


class _Conn:
    """The two pipes to the trusted process; requests nest (a callback inside a call)."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfile = os.fdopen(rfd, "rb")
        self.wfd = wfd
        self.out = (_Capture(1), _Capture(2))

    def send(self, msg: dict[str, Any]) -> None:
        for cap in self.out:
            text = cap.take()
            if text:
                self._write({"out": text, "stream": cap.stream})
        self._write(msg)

    def _write(self, msg: dict[str, Any]) -> None:
        data = (json.dumps(msg) + "\n").encode("utf-8", "replace")
        while data:
            data = data[os.write(self.wfd, data) :]

    def reply(self, msg: dict[str, Any]) -> None:
        try:
            self.send({"ok": encode(handle(msg, self))})
        except BaseException as e:  # everything the workspace raises goes back as an error
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-4000:]
            try:
                text = str(e)[:2000]
            except BaseException:
                text = "<unprintable>"
            self.send({"err": {"type": _type_meta(type(e)), "msg": text, "tb": tb,
                               "ref": _TABLE.ref(e)}})  # fmt: skip

    def request(self, msg: dict[str, Any]) -> Any:
        """Ask the trusted process (a callback) and serve its nested requests meanwhile."""
        self.send(msg)
        while True:
            answer = self.receive()
            if "op" in answer:
                self.reply(answer)
            elif "ok" in answer:
                return decode(answer["ok"], self)
            else:
                raise RuntimeError(f"callback failed: {answer.get('err')}")

    def receive(self) -> dict[str, Any]:
        line = self.rfile.readline()
        if not line:
            os._exit(0)
        msg = json.loads(line)
        return msg if isinstance(msg, dict) else {}


def serve(conn: _Conn) -> None:
    """Answer requests until the trusted process closes the pipe."""
    while True:
        conn.reply(conn.receive())


def main() -> None:
    """Sandbox this process, put the workspace on ``sys.path`` (after site-packages), serve."""
    cfg = json.loads(sys.stdin.buffer.read())
    status = sandbox(cfg)
    for key in ("hide", "read", "write"):  # nothing the workspace's code could look up later
        del cfg[key]
    sys.path.append(cfg["workspace"])
    os.chdir(cfg["workspace"])
    conn = _Conn(cfg["rfd"], cfg["wfd"])
    sys.stdout, sys.stderr = conn.out
    conn.send({"hello": status})
    serve(conn)


if __name__ == "__main__":
    main()
