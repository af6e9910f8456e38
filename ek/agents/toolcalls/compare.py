"""Comparing one predicted call with one gold call of the same tool, argument by argument.

Each argument gets an :class:`ArgVerdict` (``match``, ``wrong``, ``missing``, ``extra``)
weighted by its importance, and the pair a :class:`Comparison`. With a tool schema BFCL's typed
checks apply (:func:`~ek.agents.toolcalls.bfcl.typed_check`), required arguments must be present
and undeclared ones are rejected; without one, the predicted call's frozen values are matched
against the compiled gold patterns.

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> from ek.agents.toolcalls.parse import prepare_gold, prepare_predicted
    >>> ctx = Context(None, resolve_canonicalizer("default"))
    >>> (p,) = prepare_predicted([{"name": "f", "args": {"a": 1, "b": 9}}], ctx)
    >>> (g,) = prepare_gold([{"name": "f", "args": {"a": 1, "b": 2}}], ctx)
    >>> c = compare(p, g, ctx)
    >>> [(a.arg, a.verdict) for a in c.verdicts], c.exact, (c.tp, c.fp, c.fn, c.cost)
    ([('a', 'match'), ('b', 'wrong')], False, (2.0, 1.0, 1.0, 1.0))
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ek.agents.toolcalls.bfcl import typed_check
from ek.agents.toolcalls.parse import ExpectedCall, PredictedCall
from ek.agents.toolcalls.values import Context, accepts

__all__ = ["ArgVerdict", "Comparison", "compare", "identical"]


class ArgVerdict(NamedTuple):
    """How one argument of a matched call fared.

    ``verdict`` is ``match``, ``wrong`` (present, value or type wrong), ``missing`` (expected,
    absent) or ``extra`` (given but not expected, or not a parameter of the tool).
    """

    arg: str
    verdict: str
    importance: float
    predicted: Any
    expected: Any
    reason: str


class Comparison(NamedTuple):
    """The verdicts of one (predicted, gold) pair and what they add up to.

    ``tp`` is the tool's weight plus the importance of every matching argument; ``fp``/``fn``
    the importance of the wrong, extra and missing ones; ``cost`` the importance of each
    argument that differs, counted once; ``exact`` is BFCL's verdict for the pair.
    """

    verdicts: tuple[ArgVerdict, ...]
    exact: bool
    tp: float
    fp: float
    fn: float
    cost: float


def compare(p: PredictedCall, g: ExpectedCall, ctx: Context) -> Comparison:
    """Compare predicted call ``p`` with gold call ``g`` (same tool) argument by argument.

    Verdicts come in the gold call's argument order, then the predicted call's extra
    arguments, then the schema's required arguments that neither side gave.
    """
    info = g.info
    fields = info.fields
    verdicts = _untyped_args(p, g) if fields is None else _typed_args(p, g, ctx)
    for k, pv in p.args.items():
        if k not in g.args:
            why = (
                "not expected" if fields is None or k in fields else f"not a parameter of {g.tool}"
            )
            verdicts.append(ArgVerdict(k, "extra", info.importance(k), pv, None, why))
    if fields is not None:
        for k, fs in fields.items():
            if fs.required and k not in p.args and k not in g.args:
                why = "required by the tool's schema"
                verdicts.append(ArgVerdict(k, "missing", info.importance(k), None, None, why))
    return _tally(info.weight, verdicts)


def _untyped_args(p: PredictedCall, g: ExpectedCall) -> list[ArgVerdict]:
    """The verdicts on the gold arguments of a tool without a schema: the predicted call's
    frozen value against the compiled pattern (an optional argument may be left out)."""
    imps = g.info.importances
    dimp = g.info.default_importance
    verdicts = []
    for k, pat in g.pats.items():
        if k not in p.args:
            if k not in g.optional:
                why = "expected, not given"
                verdicts.append(ArgVerdict(k, "missing", imps.get(k, dimp), None, g.args[k], why))
        elif accepts(p.fargs[k], pat):
            verdicts.append(ArgVerdict(k, "match", imps.get(k, dimp), p.args[k], g.args[k], ""))
        else:
            why = "value not acceptable"
            verdicts.append(ArgVerdict(k, "wrong", imps.get(k, dimp), p.args[k], g.args[k], why))
    return verdicts


def _typed_args(p: PredictedCall, g: ExpectedCall, ctx: Context) -> list[ArgVerdict]:
    """The verdicts on the gold arguments of a tool with a schema (BFCL's checks)."""
    verdicts = []
    for k in g.pats:
        v = _typed_arg(p, g, k, ctx)
        if v is not None:  # (None: an optional argument rightly omitted)
            verdicts.append(v)
    return verdicts


def _typed_arg(p: PredictedCall, g: ExpectedCall, k: str, ctx: Context) -> ArgVerdict | None:
    """The verdict on gold argument ``k`` of a tool with a schema (BFCL's checks)."""
    info = g.info
    i = info.importance(k)
    expected = g.args[k]
    fs = info.fields.get(k) if info.fields is not None else None
    if k not in p.args:
        if k in g.optional and not (fs is not None and fs.required):
            return None
        missing = "required by the tool's schema" if k in g.optional else "expected, not given"
        return ArgVerdict(k, "missing", i, None, expected, missing)
    pv = p.args[k]
    if fs is None:
        return ArgVerdict(k, "extra", i, pv, expected, f"not a parameter of {g.tool}")
    types = info.types[k]
    if types is not None:
        why = typed_check(pv, expected, types, ctx)
    else:
        why = None if accepts(p.fargs[k], g.pats[k]) else "value not acceptable"
    if why is None:
        return ArgVerdict(k, "match", i, pv, expected, "")
    return ArgVerdict(k, "wrong", i, pv, expected, why)


def _tally(weight: float, verdicts: list[ArgVerdict]) -> Comparison:
    """Add up the verdicts of one pair: a match earns its importance as TP, a wrong argument
    costs it as FP and FN, an extra one as FP, a missing one as FN."""
    tp = weight
    fp = fn = cost = 0.0
    n_match = 0  # an importance of 0 leaves fp and fn at 0: count the verdicts too
    for v in verdicts:
        i = v.importance
        if v.verdict == "match":
            tp += i
            n_match += 1
            continue
        if v.verdict != "missing":
            fp += i
        if v.verdict != "extra":
            fn += i
        cost += i
    exact = fp == 0.0 and fn == 0.0 and n_match == len(verdicts)
    return Comparison(tuple(verdicts), exact, tp, fp, fn, cost)


def identical(p: PredictedCall, g: ExpectedCall) -> Comparison:
    """The comparison of a pair claimed by canonical key (the same arguments, canonically
    equal, no schema): every argument a match, in the predicted call's order; ``tp`` is the
    predicted call's mass.

    Example:
        >>> from ek.canon import resolve_canonicalizer
        >>> from ek.agents.toolcalls.parse import prepare_gold, prepare_predicted
        >>> ctx = Context(None, resolve_canonicalizer("default"))
        >>> (p,) = prepare_predicted([{"f": {"b": 2, "a": "X"}}], ctx)
        >>> (g,) = prepare_gold([{"f": {"a": "x", "b": 2}}], ctx)
        >>> c = identical(p, g)
        >>> [a.arg for a in c.verdicts], c.tp == p.mass, c == compare(p, g, ctx)._replace(verdicts=c.verdicts)
        (['b', 'a'], True, True)
    """
    info = g.info
    verdicts = tuple(
        [ArgVerdict(k, "match", info.importance(k), pv, g.args[k], "") for k, pv in p.args.items()]
    )
    return Comparison(verdicts, True, p.mass, 0.0, 0.0, 0.0)
