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
    arguments, then the schema's required arguments that neither side gave. A match earns its
    importance as TP, a wrong argument costs it as FP and FN, an extra one as FP, a missing
    one as FN; ``cost`` counts each argument that is not a match once.
    """
    info = g.info
    fields = info.fields  # (None: no schema)
    imps = info.importances
    dimp = info.default_importance
    pargs = p.args
    gargs = g.args
    verdicts: list[ArgVerdict] = []
    # The counts are kept as each verdict is made, in verdict order: a second pass reading
    # the verdicts back, and the typed and untyped arguments judged in separate functions,
    # cost a tenth of a comparison.
    tp = info.weight
    fp = fn = cost = 0.0
    n_match = 0  # an importance of 0 leaves fp and fn at 0: count the matches too
    for k, pat in g.pats.items():
        i = imps.get(k, dimp)
        if k not in pargs:
            why = _why_missing(g, k)
            if why is not None:  # (None: an optional argument rightly omitted)
                verdicts.append(ArgVerdict(k, "missing", i, None, gargs[k], why))
                fn += i
                cost += i
        elif fields is not None and k not in fields:
            why = f"not a parameter of {g.tool}"
            verdicts.append(ArgVerdict(k, "extra", i, pargs[k], gargs[k], why))
            fp += i
            cost += i
        else:
            types = info.types.get(k)  # (a tool without a schema types nothing)
            if types is not None:
                why = typed_check(pargs[k], gargs[k], types, ctx)
            else:
                why = None if accepts(p.fargs[k], pat) else "value not acceptable"
            if why is None:
                verdicts.append(ArgVerdict(k, "match", i, pargs[k], gargs[k], ""))
                tp += i
                n_match += 1
            else:
                verdicts.append(ArgVerdict(k, "wrong", i, pargs[k], gargs[k], why))
                fp += i
                fn += i
                cost += i
    for k, pv in pargs.items():
        if k not in gargs:
            i = imps.get(k, dimp)
            why = (
                "not expected" if fields is None or k in fields else f"not a parameter of {g.tool}"
            )
            verdicts.append(ArgVerdict(k, "extra", i, pv, None, why))
            fp += i
            cost += i
    if fields is not None:
        for k, fs in fields.items():
            if fs.required and k not in pargs and k not in gargs:
                i = imps.get(k, dimp)
                why = "required by the tool's schema"
                verdicts.append(ArgVerdict(k, "missing", i, None, None, why))
                fn += i
                cost += i
    exact = fp == 0.0 and fn == 0.0 and n_match == len(verdicts)
    return Comparison(tuple(verdicts), exact, tp, fp, fn, cost)


def _why_missing(g: ExpectedCall, k: str) -> str | None:
    """Why gold argument ``k``, absent from the predicted call, counts as missing (``None``:
    it may be left out, being optional and not required by the tool's schema)."""
    if k not in g.optional:
        return "expected, not given"
    fields = g.info.fields
    fs = fields.get(k) if fields is not None else None
    return "required by the tool's schema" if fs is not None and fs.required else None


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
