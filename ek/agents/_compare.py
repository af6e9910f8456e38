"""Comparing one predicted call with one gold call of the same tool, argument by argument.

Each argument gets a verdict (``match``, ``wrong``, ``missing``, ``extra``) weighted by its
importance; with a tool schema BFCL's typed checks apply (:mod:`ek.agents._bfcltypes`), required
arguments must be present and undeclared ones are rejected; without one, values compare as
canonical, frozen values against the compiled gold pattern.

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> from ek.agents._calls import _prepare_gold, _prepare_pred
    >>> ctx = _Ctx(None, resolve_canonicalizer("default"), {})
    >>> (p,) = _prepare_pred([{"name": "f", "args": {"a": 1, "b": 9}}], ctx)
    >>> (g,) = _prepare_gold([{"name": "f", "args": {"a": 1, "b": 2}}], ctx)
    >>> pr = _compare(p, g, ctx)
    >>> [(a.arg, a.verdict) for a in pr.verdicts], pr.exact, (pr.tp, pr.fp, pr.fn)
    ([('a', 'match'), ('b', 'wrong')], False, (2.0, 1.0, 1.0))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ek.agents._bfcltypes import _typed_check
from ek.agents._callargs import _Ctx, _match
from ek.agents._callresults import ArgVerdict

if TYPE_CHECKING:
    from ek.agents._calls import _GCall, _PCall

__all__ = ["_V", "_Pair", "_compare", "_exact_pair"]


class _Pair(NamedTuple):
    verdicts: tuple[ArgVerdict, ...]
    exact: bool
    tp: float
    fp: float
    fn: float
    cost: float


_V = tuple.__new__  # a NamedTuple without its Python-level __new__


def _compare(p: _PCall, g: _GCall, ctx: _Ctx) -> _Pair:
    """Compare one predicted call with one gold call of the same tool, argument by argument."""
    tool = g.tool
    info = ctx.tool(tool)
    imps = info.imps
    dimp = info.dimp
    fields = info.fields
    types_of = info.types
    tp = info.weight
    fp = fn = cost = 0.0
    n_match = 0  # an importance of 0 leaves fp and fn at 0: count the verdicts as well
    out: list[ArgVerdict] = []
    pargs = p.args
    gargs = g.args
    for k, pat in g.pats.items():
        i = imps.get(k, dimp)
        fs = None if fields is None else fields.get(k)
        if k in pargs:
            pv = pargs[k]
            if fields is not None and fs is None:
                fp += i
                cost += i
                out.append(
                    _V(ArgVerdict, (k, "extra", i, pv, gargs[k], f"not a parameter of {tool}"))
                )
                continue
            types = None if fs is None else types_of[k]
            if types is not None:
                why = _typed_check(pv, gargs[k], types, ctx)
            else:
                why = None if _match(p.fargs[k], pat) else "value not acceptable"
            if why is None:
                tp += i
                n_match += 1
                out.append(_V(ArgVerdict, (k, "match", i, pv, gargs[k], "")))
            else:
                fp += i
                fn += i
                cost += i
                out.append(_V(ArgVerdict, (k, "wrong", i, pv, gargs[k], why)))
        elif k in g.optional and not (fs is not None and fs.required):
            continue
        else:
            fn += i
            cost += i
            why = "required by the tool's schema" if k in g.optional else "expected, not given"
            out.append(_V(ArgVerdict, (k, "missing", i, None, gargs[k], why)))
    for k, pv in pargs.items():
        if k not in gargs:
            i = imps.get(k, dimp)
            fp += i
            cost += i
            why = (
                f"not a parameter of {tool}"
                if fields is not None and k not in fields
                else "not expected"
            )
            out.append(_V(ArgVerdict, (k, "extra", i, pv, None, why)))
    if fields is not None:
        for k, fs in fields.items():
            if fs.required and k not in pargs and k not in gargs:
                i = imps.get(k, dimp)
                fn += i
                cost += i
                out.append(
                    _V(ArgVerdict, (k, "missing", i, None, None, "required by the tool's schema"))
                )
    exact = fp == 0.0 and fn == 0.0 and n_match == len(out)
    return _V(_Pair, (tuple(out), exact, tp, fp, fn, cost))


def _exact_pair(p: _PCall, g: _GCall, ctx: _Ctx) -> _Pair:
    """The verdicts of a pair already known to be identical (fast path)."""
    info = g.info
    imps = info.imps
    dimp = info.dimp
    tp = info.weight
    gargs = g.args
    out = []
    for k, pv in p.args.items():
        i = imps.get(k, dimp)
        tp += i
        out.append(ArgVerdict(k, "match", i, pv, gargs[k], ""))
    return _Pair(tuple(out), True, tp, 0.0, 0.0, 0.0)
