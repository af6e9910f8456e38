"""The scoring rule: what one argument's verdict costs (:func:`charge`), and one predicted call
compared with one gold call of the same tool, argument by argument (:func:`compare`).

:func:`charge` is the only place that says what an argument is worth. Every count of the
package comes from it: a pair's weighted TP/FP/FN (what :class:`~ek.agents.toolcalls.
ToolCallMetric` scores), a pair's edit cost (what :class:`~ek.agents.trajectory.
TrajectoryMetric` charges for a substitution), and the pair costs the assignment minimises
(:func:`pair_cost`, also inside the class reduction of :mod:`~ek.agents.toolcalls._assign`).

Each argument of a pair gets an :class:`ArgVerdict`: ``match``, ``wrong`` (present, value or
type wrong), ``missing`` (expected, absent) or ``extra`` (given but not expected, or not a
parameter of the tool); the pair, a :class:`CallMatch` with the counts its charges add up to. With a tool schema BFCL's typed checks apply
(:func:`~ek.agents.toolcalls._bfcl.typed_check`), required arguments must be present and
undeclared ones are rejected; without one, the predicted call's frozen values are matched
against the compiled gold patterns.

Example:
    >>> from ek.canon import resolve_canonicalizer
    >>> from ek.agents.toolcalls._parse import prepare_gold, prepare_predicted
    >>> ctx = Context(None, resolve_canonicalizer("default"))
    >>> (p,) = prepare_predicted([{"name": "f", "args": {"a": 1, "b": 9}}], ctx)
    >>> (g,) = prepare_gold([{"name": "f", "args": {"a": 1, "b": 2}}], ctx)
    >>> c = compare(p, g, ctx)
    >>> [(a.arg, a.verdict) for a in c.args], c.exact, (c.tp, c.fp, c.fn, c.cost)
    ([('a', 'match'), ('b', 'wrong')], False, (2.0, 1.0, 1.0, 1.0))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from ek.agents.toolcalls._bfcl import typed_check
from ek.agents.toolcalls._parse import ExpectedCall, PredictedCall
from ek.agents.toolcalls._values import Context, accepts
from ek.fields import FieldCounts

__all__ = [
    "ArgVerdict",
    "CallMatch",
    "Charge",
    "Objective",
    "charge",
    "compare",
    "identical",
    "pair_cost",
]

#: What a pair costs in the assignment: ``"f1"`` = the pair's FP + FN (what ToolCallMetric
#: counts), ``"edit"`` = its edit cost (what TrajectoryMetric counts).
Objective = Literal["f1", "edit"]


class Charge(NamedTuple):
    """What one argument adds to its pair: weighted true positives, false positives, false
    negatives, and its edit cost."""

    tp: float
    fp: float
    fn: float
    cost: float


def charge(verdict: str, importance: float) -> Charge:
    """What an argument with this verdict and importance adds to its pair: the scoring rule.

    A match earns its importance as TP; a wrong value costs it as FP and FN (what was said and
    what was missed); a missing argument as FN; an extra one as FP. The edit cost (what
    TrajectoryMetric charges) counts the importance of every argument that is not a match once.

    Raises:
        ValueError: ``verdict`` is not ``match``, ``wrong``, ``missing`` or ``extra``.

    Example:
        >>> charge("wrong", 2.0)
        Charge(tp=0.0, fp=2.0, fn=2.0, cost=2.0)
        >>> charge("match", 2.0), charge("missing", 2.0).fn, charge("extra", 2.0).fp
        (Charge(tp=2.0, fp=0.0, fn=0.0, cost=0.0), 2.0, 2.0)
    """
    if verdict == "match":
        return Charge(importance, 0.0, 0.0, 0.0)
    if verdict == "wrong":
        return Charge(0.0, importance, importance, importance)
    if verdict == "missing":
        return Charge(0.0, 0.0, importance, importance)
    if verdict == "extra":
        return Charge(0.0, importance, 0.0, importance)
    raise ValueError(f"verdict must be 'match', 'wrong', 'missing' or 'extra', got {verdict!r}")


def pair_cost(counts: Charge | CallMatch, objective: Objective) -> float:
    """What an argument's charge, or a whole pair, costs under ``objective``.

    Example:
        >>> pair_cost(charge("wrong", 1.0), "f1"), pair_cost(charge("wrong", 1.0), "edit")
        (2.0, 1.0)
    """
    return counts.fp + counts.fn if objective == "f1" else counts.cost


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


class CallMatch(NamedTuple):
    """A predicted call held against a gold call of the same tool, with its per-argument
    verdicts and what their charges add up to (:func:`charge`).

    ``exact`` (every argument a match) is BFCL's verdict for the pair; ``tp`` is the tool's
    weight plus the charges' TP; ``fp``, ``fn`` and ``cost`` (the edit cost: the importance of
    the arguments that differ, each counted once) are the charges' sums.
    """

    gold_index: int
    pred_index: int
    tool: str
    args: tuple[ArgVerdict, ...]
    exact: bool
    tp: float
    fp: float
    fn: float
    cost: float

    @property
    def counts(self) -> FieldCounts:
        """The pair's weighted TP/FP/FN."""
        return FieldCounts(self.tp, self.fp, self.fn)

    @property
    def wrong_args(self) -> tuple[ArgVerdict, ...]:
        """The arguments that were not a match."""
        return tuple(a for a in self.args if a.verdict != "match")


def compare(p: PredictedCall, g: ExpectedCall, ctx: Context) -> CallMatch:
    """Compare predicted call ``p`` with gold call ``g`` (same tool) argument by argument.

    Verdicts come in the gold call's argument order, then the predicted call's extra
    arguments, then the schema's required arguments that neither side gave.
    """
    verdicts = []
    for k in g.pats:
        verdict = _gold_arg(p, g, k, ctx)
        if verdict is not None:
            verdicts.append(verdict)
    fields = g.info.fields
    for k, given in p.args.items():
        if k not in g.args:
            why = (
                "not expected" if fields is None or k in fields else f"not a parameter of {g.tool}"
            )
            verdicts.append(ArgVerdict(k, "extra", g.info.importance(k), given, None, why))
    for k in g.info.required:
        if k not in p.args and k not in g.args:
            why = "required by the tool's schema"
            verdicts.append(ArgVerdict(k, "missing", g.info.importance(k), None, None, why))
    return _add_up(p, g, verdicts)


def identical(p: PredictedCall, g: ExpectedCall) -> CallMatch:
    """The comparison of a pair claimed by canonical key (the same arguments, canonically
    equal, no schema): every argument a match, in the predicted call's order.

    Example:
        >>> from ek.canon import resolve_canonicalizer
        >>> from ek.agents.toolcalls._parse import prepare_gold, prepare_predicted
        >>> ctx = Context(None, resolve_canonicalizer("default"))
        >>> (p,) = prepare_predicted([{"f": {"b": 2, "a": "X"}}], ctx)
        >>> (g,) = prepare_gold([{"f": {"a": "x", "b": 2}}], ctx)
        >>> c = identical(p, g)
        >>> [a.arg for a in c.args], c.tp == p.mass, c == compare(p, g, ctx)._replace(args=c.args)
        (['b', 'a'], True, True)
    """
    verdicts = [
        ArgVerdict(k, "match", g.info.importance(k), given, g.args[k], "")
        for k, given in p.args.items()
    ]
    return _add_up(p, g, verdicts)


def _gold_arg(p: PredictedCall, g: ExpectedCall, k: str, ctx: Context) -> ArgVerdict | None:
    """The verdict on gold argument ``k`` (``None``: optional, rightly left out)."""
    importance = g.info.importance(k)
    expected = g.args[k]
    if k not in p.args:
        why = _why_missing(g, k)
        return None if why is None else ArgVerdict(k, "missing", importance, None, expected, why)
    given = p.args[k]
    fields = g.info.fields
    if fields is not None and k not in fields:
        why = f"not a parameter of {g.tool}"
        return ArgVerdict(k, "extra", importance, given, expected, why)
    types = g.info.types.get(k)
    if types is not None:
        wrong = typed_check(given, expected, types, ctx)
    else:
        wrong = None if accepts(p.fargs[k], g.pats[k]) else "value not acceptable"
    if wrong is None:
        return ArgVerdict(k, "match", importance, given, expected, "")
    return ArgVerdict(k, "wrong", importance, given, expected, wrong)


def _why_missing(g: ExpectedCall, k: str) -> str | None:
    """Why gold argument ``k``, absent from the predicted call, counts as missing (``None``:
    it may be left out, being optional and not required by the tool's schema)."""
    if k not in g.optional:
        return "expected, not given"
    return "required by the tool's schema" if k in g.info.required else None


def _add_up(p: PredictedCall, g: ExpectedCall, verdicts: Sequence[ArgVerdict]) -> CallMatch:
    """The pair: the tool's weight as TP plus each verdict's :func:`charge`."""
    tp, fp, fn, cost = g.info.weight, 0.0, 0.0, 0.0
    exact = True
    for a in verdicts:
        c = charge(a.verdict, a.importance)
        tp += c.tp
        fp += c.fp
        fn += c.fn
        cost += c.cost
        exact = exact and a.verdict == "match"
    return CallMatch(g.index, p.index, g.tool, tuple(verdicts), exact, tp, fp, fn, cost)
