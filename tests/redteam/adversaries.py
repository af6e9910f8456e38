"""Issue 30's attacks on the verifier (items 2 to 6), as workspace code; each test is in
``test_verifier_adversaries.py``. The comparison attacks (item 1) are workspaces of the
red-team table (:data:`redteam.attacks.ATTACKS`). ``@@HIDDEN@@`` is the hidden tests' folder
(expanded by :func:`redteam.attacks.materialise`), ``@@PARENT@@`` the checker's folder of
checks and ``@@STOP@@`` a file whose appearance ends a long-running attack (which makes
``@@STOP@@.planting`` once it is under way).
"""

from __future__ import annotations

from pathlib import Path

from redteam.attacks import WRONG

__all__ = [
    "BENCHMARK_SCRAPER",
    "BYTECODE_PLANTER",
    "CMDLINE_SPY",
    "FLOOD",
    "PYCACHE_REPLAY",
    "RACER",
    "THREADS",
]

#: The racing process (a script): swaps names of a workspace in a tight loop.
RACER = Path(__file__).with_name("racer.py")

# (3a) The hidden tests are one file, and its author ran pytest on it: the rewritten bytecode
# beside it holds every test's constants. Run that bytecode here with a recording `add`: each
# `add(a, b) == expected` tells the recorder the expected value.
PYCACHE_REPLAY = """import glob, marshal, sys, types

_ANSWERS = {}


class _Recorder:
    def __init__(self, args):
        self.args = args

    def __eq__(self, other):
        _ANSWERS[self.args] = other
        return True

    __hash__ = object.__hash__


def _replay(pyc):
    with open(pyc, "rb") as f:
        code = marshal.loads(f.read()[16:])
    fake = types.ModuleType("solution")
    fake.add = lambda a, b: _Recorder((a, b))
    mine = sys.modules["solution"]
    sys.modules["solution"] = fake
    try:
        ns = {"__name__": "replayed"}
        exec(code, ns)
        for name, fn in list(ns.items()):
            if name.startswith("test") and callable(fn):
                try:
                    fn()
                except Exception:
                    pass
    finally:
        sys.modules["solution"] = mine


for _pyc in glob.glob("@@HIDDEN@@/__pycache__/*.pyc"):
    try:
        _replay(_pyc)
    except Exception:
        pass


def add(a, b):
    return _ANSWERS.get((a, b), 42)
"""

# (3b) What this process can read of command lines: its own, and every other process's.
CMDLINE_SPY = """import os, sys


def seen():
    out = [" ".join(sys.argv), " ".join(sys.orig_argv)]
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    out.append(f.read().replace(b"\\0", b" ").decode("utf-8", "replace"))
            except OSError:
                pass
    return "\\n".join(out)
"""

# (3c) The harness was started with its benchmark file on its command line (the hidden tests
# in it as a mapping): read every file named on any process's command line, and take the
# answers from the tests' source.
BENCHMARK_SCRAPER = """import os, re

_ANSWERS = {}
for _pid in os.listdir("/proc"):
    if not _pid.isdigit():
        continue
    try:
        with open(f"/proc/{_pid}/cmdline", "rb") as _f:
            _args = _f.read().split(b"\\0")
    except OSError:
        continue
    for _arg in _args:
        try:
            if not _arg or not os.path.isfile(_arg):
                continue
            with open(_arg, encoding="utf-8") as _f:
                _text = _f.read(1 << 20)
        except (OSError, ValueError):
            continue
        for _m in re.finditer(r"add\\((-?\\d+), (-?\\d+)\\) == (-?\\d+)", _text):
            _ANSWERS[(int(_m[1]), int(_m[2]))] = int(_m[3])


def add(a, b):
    return _ANSWERS.get((a, b), 42)
"""

# (4a) Threads, not processes: "refused" if the system stops them (RLIMIT_NPROC counts
# threads for a normal user); otherwise they all wait until the check is stopped.
THREADS = """import threading, time


def threads(n):
    threading.stack_size(64 * 1024)
    try:
        for _ in range(n):
            threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
    except RuntimeError:
        return "refused"
    time.sleep(600)
    return "allowed"
"""

# (4b-d) More than the trusted process should accept: one 6 MiB answer, 80 answers of 1 MiB,
# and 3 MiB of "printed text" written as protocol messages straight into the pipe (past the
# workspace process's own, cooperative, bound on what it prints).
FLOOD = """import gc


def big():
    return "x" * (6 << 20)


def blob():
    return "y" * (1 << 20)


def chatty():
    conn = next(o for o in gc.get_objects() if type(o).__name__ == "_Conn")
    for _ in range(3):
        conn._write({"out": "z" * (1 << 20), "stream": 1})
    return 3
"""

# (5) Without Landlock: plant a valid .pyc of `_pytest.reports` (outcomes of test_solution.py
# rewritten to "passed") wherever a trusted test process might read bytecode, the checks'
# shared cache and every running check's own folder, again and again until told to stop.
_REPORTS_PATCH = """
_ek_orig = TestReport.from_item_and_call.__func__


def _ek_patched(cls, item, call):
    report = _ek_orig(cls, item, call)
    if report.nodeid.startswith("test_solution.py::"):
        report.outcome, report.longrepr = "passed", None
    return report


TestReport.from_item_and_call = classmethod(_ek_patched)
"""
BYTECODE_PLANTER = (
    WRONG.replace("def add", "def _wrong_add")
    + f"""
import glob as _glob, importlib._bootstrap_external as _be, importlib.util as _iu, os as _os
import sys as _sys, time as _time

import _pytest.reports as _reports

_SRC = _reports.__file__
_st = _os.stat(_SRC)
with open(_SRC, encoding="utf-8") as _f:
    _CODE = compile(_f.read() + {_REPORTS_PATCH!r}, _SRC, "exec")
_PYC = _be._code_to_timestamp_pyc(_CODE, _st.st_mtime, _st.st_size)


def _plant(prefix):
    saved = _sys.pycache_prefix
    _sys.pycache_prefix = prefix
    try:
        path = _iu.cache_from_source(_SRC)
    finally:
        _sys.pycache_prefix = saved
    _os.makedirs(_os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(_PYC)


def add(a, b):
    end = _time.time() + 60
    while _time.time() < end and not _os.path.exists("@@STOP@@"):
        targets = ["@@PARENT@@/pycache", *_glob.glob("@@PARENT@@/check-*/private/pycache")]
        for target in targets:
            try:
                _plant(target)
            except OSError:
                pass
        open("@@STOP@@.planting", "w").close()
        _time.sleep(0.01)
    return _wrong_add(a, b)
"""
)
