"""Cyclomatic complexity as radon counts it: no function in ``ek/`` or ``adapters/`` above 15.

ruff's mccabe check (C90) does not count ``and``/``or``, conditional expressions or
comprehension filters; radon does, so this is the bound that holds (``make lint`` runs it).
Every function, method and closure is checked. A function may stay above the bound only with a
``# noqa: C901`` on its ``def`` line (any line of its signature) followed by the reason, e.g.::

    def parse(tokens):  # noqa: C901 - one state machine over the token kinds, split it reads worse

A bare ``# noqa: C901`` (no reason) does not count. Exits 1 naming each function over the bound.

Usage: ``python tools/complexity.py [--max N] [PATH ...]`` (default: ``ek adapters``, 15).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

MAX_COMPLEXITY = 15
DEFAULT_PATHS = ("ek", "adapters")

# the noqa comment for C901, then an optional separator and at least one word of reason
_NOQA = re.compile(r"#\s*noqa:\s*C901\b\s*[-:—,;(]?\s*(?P<reason>\w.*)?$")


@dataclass(frozen=True)
class Finding:
    """A function over the bound: where it is, its name and radon's count."""

    path: str
    line: int
    name: str
    complexity: int
    limit: int = MAX_COMPLEXITY

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name} has complexity {self.complexity} (max {self.limit})"


def _functions(blocks: Iterable[object]) -> Iterator[tuple[str, Function]]:
    """``(qualified name, function)`` for every function, method and closure radon found, once
    each (a closure is not in its parent's count; radon lists a method alone and in its class)."""
    seen = set()
    for name, fn in _walk(blocks, ""):
        if (fn.lineno, name) not in seen:
            seen.add((fn.lineno, name))
            yield name, fn


def _walk(blocks: Iterable[object], parent: str) -> Iterator[tuple[str, Function]]:
    for b in blocks:
        if isinstance(b, Function):
            name = f"{parent}.{b.name}" if parent else b.fullname
            yield name, b
            yield from _walk(b.closures, name)
        else:  # a class: its methods and nested classes
            yield from _walk(getattr(b, "methods", ()), "")
            yield from _walk(getattr(b, "inner_classes", ()), "")


def _signature_lines(tree: ast.AST) -> dict[int, range]:
    """``def`` line -> the lines of its signature (up to the line before the body)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body_start = node.body[0].lineno
            out[node.lineno] = range(node.lineno, max(node.lineno + 1, body_start))
    return out


def has_reasoned_noqa(lines: list[str], signature: range) -> bool:
    """True when a line of the signature carries ``# noqa: C901`` followed by a reason.

    Example:
        >>> has_reasoned_noqa(["def f():  # noqa: C901 - a flat table of cases"], range(1, 2))
        True
        >>> has_reasoned_noqa(["def f():  # noqa: C901"], range(1, 2))
        False
    """
    for no in signature:
        m = _NOQA.search(lines[no - 1]) if no <= len(lines) else None
        if m is not None and m.group("reason"):
            return True
    return False


def check_source(source: str, path: str, limit: int = MAX_COMPLEXITY) -> list[Finding]:
    """The functions of ``source`` above ``limit`` without a reasoned ``# noqa: C901``."""
    lines = source.splitlines()
    signatures = _signature_lines(ast.parse(source, path))
    found = []
    for name, fn in _functions(cc_visit(source)):
        if fn.complexity <= limit:
            continue
        if has_reasoned_noqa(lines, signatures.get(fn.lineno, range(fn.lineno, fn.lineno + 1))):
            continue
        found.append(Finding(path, fn.lineno, name, fn.complexity, limit))
    return found


def _files(paths: Iterable[str]) -> Iterator[Path]:
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(f for f in p.rglob("*.py") if "__pycache__" not in f.parts)
        elif p.suffix == ".py":
            yield p
        else:
            raise SystemExit(f"complexity: {p} is neither a directory nor a .py file")


def main(argv: list[str] | None = None) -> int:
    """Check the paths; print each finding; 1 when any, else 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    ap.add_argument("--max", type=int, default=MAX_COMPLEXITY, dest="limit")
    args = ap.parse_args(argv)
    found = [
        f
        for path in _files(args.paths)
        for f in check_source(path.read_text(encoding="utf-8"), str(path), args.limit)
    ]
    for f in found:
        print(f)
    if found:
        print(
            f"{len(found)} function(s) above complexity {args.limit} (radon): split them by "
            "concept, or add '# noqa: C901 - <why>' on the def line",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
