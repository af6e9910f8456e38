"""tools/complexity.py: radon's count over every function, method and closure, and the
``# noqa: C901`` exemption only with a reason (the check ``make lint`` runs over ek and adapters)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("radon")

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("complexity", ROOT / "tools" / "complexity.py")
assert _spec is not None and _spec.loader is not None
complexity = importlib.util.module_from_spec(_spec)
sys.modules["complexity"] = complexity  # dataclasses look the module up by name
_spec.loader.exec_module(complexity)

# 15 `and`s: radon counts each boolean operator, so 1 + 15 = 16 (mccabe would say 1)
_COND = " and ".join("abcdefghijklmnop")
_ARGS = ", ".join("abcdefghijklmnop")


def _fn(name: str, comment: str = "", indent: str = "") -> str:
    return f"{indent}def {name}({_ARGS}):{comment}\n{indent}    return {_COND}\n"


def test_boolean_operators_count_and_the_bound_is_15() -> None:
    src = _fn("over") + "def ok(a, b):\n    return a and b\n"
    found = complexity.check_source(src, "m.py")
    assert [(f.name, f.complexity) for f in found] == [("over", 16)]  # 1 + 15 `and`
    assert str(found[0]) == "m.py:1: over has complexity 16 (max 15)"


def test_noqa_needs_a_reason() -> None:
    src = _fn("kept", "  # noqa: C901 - a flat table of the host's shapes") + _fn(
        "bare", "  # noqa: C901"
    )
    assert [f.name for f in complexity.check_source(src, "m.py")] == ["bare"]


def test_noqa_on_a_later_line_of_a_long_signature() -> None:
    src = f"def kept(\n    {_ARGS},\n):  # noqa: C901 - one state machine\n    return {_COND}\n"
    assert complexity.check_source(src, "m.py") == []
    # a noqa in the body does not exempt the function
    body = f"def f({_ARGS}):\n    return {_COND}  # noqa: C901 - no\n"
    assert [f.name for f in complexity.check_source(body, "m.py")] == ["f"]


def test_methods_once_and_closures_by_their_path() -> None:
    src = (
        "class A:\n"
        + _fn("m", indent="    ")
        + "    def outer(self):\n"
        + _fn("inner", indent="        ")
        + "        return inner\n"
    )
    found = complexity.check_source(src, "m.py")
    # radon lists a method alone and inside its class: reported once; a closure is not in its
    # parent's count, so it is checked on its own
    assert sorted(f.name for f in found) == ["A.m", "A.outer.inner"]


def test_command_line_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(_fn("over"), encoding="utf-8")
    good = tmp_path / "good.py"
    good.write_text("def f(a):\n    return a\n", encoding="utf-8")
    tool = str(ROOT / "tools" / "complexity.py")
    run = subprocess.run([sys.executable, tool, str(bad)], capture_output=True, text=True)
    assert run.returncode == 1 and "over has complexity 16" in run.stdout
    assert "noqa: C901 - <why>" in run.stderr
    run = subprocess.run([sys.executable, tool, str(good)], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == ""
