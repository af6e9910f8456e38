"""Canaries: two tests with random names, one that must pass and one that must fail.

Every run adds a canary module with a random name to the hidden-test copy. Blind outcome
rewriting reports the must-fail canary as passed; deselection loses a canary; a manipulated
session fails the must-pass one. :mod:`ek.agents.verifier._verdict` calls each of those
``tampering``.

Example:
    >>> c = make_canary(taken={"test_solution.py"})
    >>> c.must_pass.startswith(c.module + "::test_"), c.module.endswith(".py")
    (True, True)
    >>> c.must_pass.split("::")[1] in c.source and c.must_fail.split("::")[1] in c.source
    True
"""

from __future__ import annotations

import secrets
from collections.abc import Container
from dataclasses import dataclass

__all__ = ["Canary", "canary_source", "make_canary"]


@dataclass(frozen=True)
class Canary:
    """One run's canary module.

    Args:
        module: Its file name, relative to the tests root (``test_<random>.py``).
        must_pass: Node id of the test that must pass.
        must_fail: Node id of the test that must fail.
        source: The module's source text.
    """

    module: str
    must_pass: str
    must_fail: str
    source: str


def canary_source(names: tuple[str, str]) -> str:
    """Two tests with unpredictable numbers: ``names[0]`` passes, ``names[1]`` fails.

    Example:
        >>> src = canary_source(("test_p", "test_f"))
        >>> ns: dict = {}
        >>> exec(src, ns)
        >>> ns["test_p"]()
        >>> ns["test_f"]()
        Traceback (most recent call last):
        AssertionError
    """
    a, b = secrets.randbelow(10**6) + 1, secrets.randbelow(10**6) + 1
    bodies = [
        (names[0], f"    assert {a} + {b} == {a + b}\n"),
        (names[1], f"    assert {a} * {b} == {a * b + 1 + secrets.randbelow(999)}\n"),
    ]
    if secrets.randbelow(2):
        bodies.reverse()
    return "".join(f"def {n}():\n{body}\n\n" for n, body in bodies)


def make_canary(taken: Container[str]) -> Canary:
    """A canary module whose random name is not in ``taken`` (the hidden tests' paths)."""
    while True:
        module = f"test_{secrets.token_hex(6)}.py"
        if module not in taken:
            break
    names = (f"test_{secrets.token_hex(5)}", f"test_{secrets.token_hex(5)}")
    return Canary(module, f"{module}::{names[0]}", f"{module}::{names[1]}", canary_source(names))
