"""Canonicalizers: functions that put values into a comparable form before matching.

A canonicalizer maps a value to its canonical form. Strings are normalised; lists, tuples and
dicts are canonicalised element-wise (keys kept, list order kept); other values pass through.
They live in the ``"canonicalizers"`` registry namespace: ``"default"``, ``"bfcl"``, ``"raw"``.

Example:
    >>> canon = default_canonicalizer()
    >>> canon("  New\\tYORK ")
    'new york'
    >>> canon({"city": "Caf\\u0065\\u0301", "n": [1, "A  b"]})   # NFC: e + combining acute -> é
    {'city': 'café', 'n': [1, 'a b']}
    >>> resolve_canonicalizer("bfcl")("San_Francisco, CA")
    'sanfranciscoca'
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from ek._validate import short_repr
from ek.registry import register, resolve

__all__ = [
    "Canonicalizer",
    "bfcl_canonicalizer",
    "bfcl_standardize",
    "canonicalize_text",
    "default_canonicalizer",
    "raw_canonicalizer",
    "resolve_canonicalizer",
]

Canonicalizer = Callable[[Any], Any]

# BFCL's standardize_string removes exactly these nine characters (its regex [ \,\.\/\-\_\*\^]).
_BFCL_DROP = str.maketrans("", "", " ,./-_*^")


def canonicalize_text(s: str) -> str:
    """Unicode NFC, casefold, runs of whitespace folded to one space, ends stripped.

    Example:
        >>> canonicalize_text("Straße\\n  Nord")
        'strasse nord'
    """
    # str.split() splits on exactly the characters the regex ``\s`` matches (str.isspace), so
    # this is re.sub(r"\s+", " ", ...).strip() at a third of its cost.
    return " ".join(unicodedata.normalize("NFC", s).casefold().split())


def bfcl_standardize(s: str) -> str:
    """BFCL's ``standardize_string``: drop `` ,./-_*^``, lowercase, ``'`` -> ``"``.

    Example:
        >>> bfcl_standardize("Don't-Stop")
        'don"tstop'
    """
    if not isinstance(s, str):
        raise TypeError(f"bfcl_standardize expects a str, got {type(s).__name__}")
    return s.translate(_BFCL_DROP).lower().replace("'", '"')


def _deep(fn: Callable[[str], str]) -> Canonicalizer:
    def canon(value: Any) -> Any:
        if isinstance(value, str):
            return fn(value)
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, Mapping):
            return {k: canon(v) for k, v in value.items()}
        if isinstance(value, list):
            return [canon(v) for v in value]
        if isinstance(value, tuple):
            return tuple(canon(v) for v in value)
        return value

    canon.__name__ = f"canonicalize_{fn.__name__}"
    return canon


_DEFAULT = _deep(canonicalize_text)
_BFCL = _deep(bfcl_standardize)


def _identity(value: Any) -> Any:
    return value


def default_canonicalizer() -> Canonicalizer:
    """The default canonicalizer: :func:`canonicalize_text` applied to every string, deeply."""
    return _DEFAULT


def bfcl_canonicalizer() -> Canonicalizer:
    """BFCL's string standardisation (:func:`bfcl_standardize`) applied to every string, deeply."""
    return _BFCL


def raw_canonicalizer() -> Canonicalizer:
    """No canonicalisation: values compare as given."""
    return _identity


register("canonicalizers", "default", _DEFAULT)
register("canonicalizers", "bfcl", _BFCL)
register("canonicalizers", "raw", _identity)


def resolve_canonicalizer(spec: str | Canonicalizer | None) -> Canonicalizer:
    """A canonicalizer from a registered name, a callable, or ``None`` (the default one).

    Raises:
        TypeError: ``spec`` is neither a name nor a callable.
    """
    if spec is None:
        return _DEFAULT
    fn = resolve("canonicalizers", spec)
    if not callable(fn):
        raise TypeError(
            f"canonicalizer must be a registered name or a callable, got {short_repr(spec)}"
        )
    return fn
