"""Task-success and cost-per-successful-task: the two metrics that drive the whole thing.

Two reference-based metrics over an :class:`~ek.agents.base.Episode`, both of which fit
:func:`ek.evaluate.evaluate` because their corpus aggregate is a **ratio of two sums**, never a mean of
per-item scores:

- :class:`TaskSuccessMetric` grades the **final state**, not the surface text. The oracle is
  *injected*: ek never owns an LLM or a sandbox, so a checker is a plugged-in strategy (a
  database-state comparison, a hidden-test run, a programmatic predicate). Aggregate = the
  success **rate**.
- :class:`CostPerSuccessMetric` is **Cost-of-Pass**: ``E[cost] / P(success)``. Aggregate =
  ``sum(dollars) / sum(successes)``, ``inf`` when nothing succeeded.

**A safety property, not a nicety:** the checker must run somewhere the agent's trajectory
cannot reach (see :mod:`ek.agents.verifier`). An audited agent-benchmark red-team produced a
~10-line ``conftest.py`` that pytest auto-loads and that rewrote *every* test outcome to
"passed", scoring near-perfect without solving a single task.

Example:
    >>> from ek.agents.base import Cost, Episode
    >>> from ek.agents.cost import per_million
    >>> ep = Episode(task_id="t1", output="42", cost=Cost(input_tokens=1_000_000))
    >>> TaskSuccessMetric()(ep, "42").value
    1.0
    >>> m = CostPerSuccessMetric(price=per_million(2.0, 6.0))
    >>> round(m(ep, "42").value, 4)          # this episode's dollars
    2.0
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from ek._validate import as_verdict, short_repr, thaw
from ek.base import Score, check_scores, is_episode
from ek.canon import default_canonicalizer
from ek.registry import UnknownNameError, register, registered, resolve

from ._spec import TaskSpec
from .cost import ModelPrice, check_pricing, corpus_cost_of_pass, episode_dollars, price_cost

__all__ = [
    "Checker",
    "CostPerSuccessMetric",
    "TaskSuccessMetric",
    "check_name",
    "final_state_match",
    "output_match",
    "recorded_success",
    "resolve_checker",
    "task_success",
]


@runtime_checkable
class Checker(Protocol):
    """The success oracle: did this episode leave the world in the required state?

    Injected, never owned by ek: a real suite plugs in a database-state comparison, a
    hidden-test runner, or a programmatic predicate. It must run **isolated** from the agent.
    """

    def __call__(self, episode: Any, gold: Any) -> bool: ...


def _gold_value(gold: Any) -> Any:
    return gold.gold if isinstance(gold, TaskSpec) else gold


def output_match(episode: Any, gold: Any) -> bool:
    """Canonicalized exact match on the final answer (the GAIA-style oracle).

    The weakest useful oracle, and the default only because it needs nothing. Prefer a
    state-based or executable checker whenever the task has one. Strings compare after the
    default canonicalizer (NFC, casefold, whitespace folded); a number and a string compare by
    their text (``42`` matches ``"42"``).

    Example:
        >>> from ek.agents.base import Episode
        >>> output_match(Episode("t", output="  Paris "), "paris")
        True
    """
    _require_episode(episode, "output_match")
    canon = default_canonicalizer()
    out, g = episode.output, _gold_value(gold)
    as_text = (
        isinstance(out, str) != isinstance(g, str)
        and isinstance(out, (str, int, float))
        and isinstance(g, (str, int, float))
    )
    want = canon(thaw(str(g) if as_text else g))  # malformed gold raises
    try:
        got = canon(thaw(str(out) if as_text else out))
    except ValueError:  # model output nested past the limit, or an int too long to print
        return False
    return bool(got == want)


def final_state_match(episode: Any, gold: Any) -> bool:
    """Compare the episode's **final state** with the goal state (the tau-bench oracle).

    Exact structural equality (tuples and lists are the same; no canonicalisation: a database
    value that differs in case is a different database). An episode with no final state fails.

    Example:
        >>> from ek.agents.base import Episode
        >>> final_state_match(Episode("t", final_state={"o1": "refunded"}), {"o1": "refunded"})
        True
    """
    _require_episode(episode, "final_state_match")
    state = getattr(episode, "final_state", None)
    want = thaw(_gold_value(gold))  # malformed gold raises
    if state is None:
        return False
    try:
        return bool(thaw(state) == want)
    except ValueError:  # a final state nested past the limit (or cyclic) matches no goal
        return False


def recorded_success(episode: Any, gold: Any) -> bool:
    """Trust a ``success`` already recorded on the episode (e.g. by an external harness).

    Raises:
        ValueError: the episode recorded no verdict (``success is None``): an absent verdict
            is not a failure of the agent, it is a missing measurement.
    """
    _require_episode(episode, "recorded_success")
    s = getattr(episode, "success", None)
    if s is None:
        raise ValueError(
            f"episode {short_repr(episode.task_id)} has no recorded success; use another checker"
        )
    return bool(s)


register("checkers", "output", output_match)
register("checkers", "final_state", final_state_match)
register("checkers", "recorded", recorded_success)


def resolve_checker(check: str | Callable[[Any, Any], Any] | None) -> Callable[[Any, Any], Any]:
    """A checker from a registered name (``"output"``, ``"final_state"``, ``"recorded"``, ...), a
    callable, or ``None`` (``"output"``).

    Raises:
        UnknownNameError: ``check`` names no registered checker (a name registered as a checker
            *factory*, such as ``"hidden_tests"``, says how to build the checker).
        TypeError: ``check`` is neither a name nor a callable.

    Example:
        >>> resolve_checker("final_state") is final_state_match
        True
    """
    name = "output" if check is None else check
    factories = registered("checker_factories") if isinstance(name, str) else []
    if name in factories and name not in registered("checkers"):
        raise UnknownNameError(
            f"{short_repr(name)} is a checker factory, not a checker: build the checker and pass it, "
            f"e.g. check={name}(...) (from the module that defines it); registered checkers "
            f"are {registered('checkers')}"
        )
    fn = resolve("checkers", name)
    if not callable(fn):
        raise TypeError(
            f"check must be a registered checker name or an (episode, gold) -> bool callable, got {short_repr(check)}"
        )
    return fn


def check_name(check: Any) -> str:
    """A readable name for a checker (its registered name, ``__name__`` or class name).

    The name is what a run store records (and compares on resume), so two different anonymous
    checkers must not share one: a lambda is named by its module and a digest of its code,
    ``"<lambda> in module, code 1a2b3c4d"`` (the same lambda written again, or moved to another
    line, keeps its name; a different body gets another), and a ``functools.partial`` by the
    function it wraps.

    Example:
        >>> check_name("final_state"), check_name(output_match)
        ('final_state', 'output_match')
        >>> check_name(lambda ep, gold: True)  # doctest: +ELLIPSIS
        '<lambda> in ..., code ...'
        >>> check_name(lambda ep, gold: True) == check_name(lambda ep, gold: True)
        True
        >>> check_name(lambda ep, gold: True) == check_name(lambda ep, gold: False)
        False
    """
    if isinstance(check, str):
        return check
    if isinstance(check, functools.partial):
        return f"partial({check_name(check.func)})"
    name = getattr(check, "__name__", None)
    if not isinstance(name, str):
        return type(check).__name__
    code = getattr(check, "__code__", None)
    if name == "<lambda>" and code is not None:
        module = getattr(check, "__module__", None) or "?"
        digest = hashlib.sha256(repr(_code_key(code)).encode()).hexdigest()[:8]
        return f"<lambda> in {module}, code {digest}"
    return name


def _code_key(code: Any) -> tuple[Any, ...]:
    """What a code object computes, without where it was written (line numbers, addresses)."""
    consts = tuple(_code_key(c) if hasattr(c, "co_code") else c for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars)


def _require_episode(pred: Any, metric: str) -> None:
    if not is_episode(pred):
        raise TypeError(
            f"{metric} expects an Episode (task_id, trajectory, output), got {type(pred).__name__}: {short_repr(pred)}"
        )


def task_success(
    episode: Any, gold: Any, check: Callable[[Any, Any], Any], name: str | None = None
) -> Score:
    """The pure function behind :class:`TaskSuccessMetric` (``name`` labels the checker)."""
    label = name or check_name(check)
    err = getattr(episode, "error", None)
    verdict: Any = None
    if err:
        # The agent raised or timed out: a counted failure of the agent, not of the checker.
        ok, reason = False, f"agent error: {err}"
    else:
        res = check(episode, gold)
        ok = bool(as_verdict(f"checker {label!r}", res))  # the one verdict rule
        reason = f"{label} check {'passed' if ok else 'failed'}"
        # A checker may return a richer, truthy verdict (e.g. HiddenTestVerdict): keep its reason.
        why = getattr(res, "reason", None)
        if isinstance(why, str) and why:
            reason = f"{reason}: {why}"
        if callable(getattr(res, "to_dict", None)):
            verdict = res.to_dict()
    detail: dict[str, Any] = {
        "passed": ok,
        "successes": int(ok),
        "n": 1,
        "higher_is_better": True,
        "reason": reason,
        "checker": label,
    }
    if verdict is not None:
        detail["verdict"] = verdict
    return Score(1.0 if ok else 0.0, detail)


class TaskSuccessMetric:
    """Did the episode complete the task? (``1.0``/``0.0``; aggregate = success rate).

    Args:
        check: A :class:`Checker`: a registered name (``"output"``, ``"final_state"``,
            ``"recorded"``, ...) or any ``(episode, gold) -> bool`` callable (a built
            ``hidden_tests(...)`` checker, a predicate). ``None`` (the default) means
            ``"output"`` when the metric is called directly, and **the suite's checker** inside
            :func:`~ek.agents.harness.run_suite` (see below); **inject a state-based or executable
            oracle for a real suite.** ``gold`` may be a :class:`~ek.agents.base.TaskSpec` (its
            ``gold`` is used by the built-in checkers). The checker returns a verdict by the
            one rule of :func:`ek._validate.as_verdict`: a bool (or a rich verdict with a bool
            ``passed``, or a numpy bool); ``"false"``, ``0`` or NaN is a ``TypeError``, never
            read by its truthiness.

    Inside ``run_suite`` a metric gives the suite's own verdict, so a run reports one success
    rate: a metric built without ``check`` adopts the suite's checker, one built with the same
    checker as the suite keeps it, and one built with a different checker is refused with a
    ``ValueError`` naming both (:meth:`with_check` builds the metric for another checker).

    Example:
        >>> from ek.agents.base import Episode
        >>> m = TaskSuccessMetric()
        >>> m.check is None, m(Episode("t", output="Paris"), "paris").value    # "output"
        (True, 1.0)
        >>> m.with_check("final_state")
        TaskSuccessMetric(check='final_state')
    """

    name = "task_success"
    higher_is_better = True
    #: The detail fields :meth:`aggregate` sums (its sufficient statistics: a run's tally keeps
    #: them per task and merges by adding, :mod:`ek.agents._run.sums`); a Score without ``n`` is one.
    sums = ("successes", "n")
    sum_defaults: ClassVar[Mapping[str, float]] = {"n": 1.0}

    def __init__(self, check: Any = None) -> None:
        self.check = check
        self._check = resolve_checker(check)

    def with_check(self, check: Any) -> TaskSuccessMetric:
        """The same metric with another success checker (``self`` is not changed)."""
        return TaskSuccessMetric(check)

    def __call__(self, pred: Any, gold: Any) -> Score:
        _require_episode(pred, "TaskSuccessMetric")
        return task_success(pred, gold, self._check, _label(self.check))

    def aggregate(self, scores: Sequence[Score]) -> float:
        """The success **rate** over the corpus: ``sum(successes) / sum(n)`` (NaN when empty)."""
        check_scores(scores, "TaskSuccessMetric", ("successes",))
        n = sum(float(s.detail.get("n", 1)) for s in scores)
        if n == 0:
            return math.nan  # no episode: the rate is undefined
        return sum(float(s.detail["successes"]) for s in scores) / n

    def __repr__(self) -> str:
        return f"TaskSuccessMetric(check={_label(self.check)!r})"


def _label(check: Any) -> str:
    return check_name("output" if check is None else check)


def cost_per_success(
    episode: Any,
    gold: Any,
    check: Callable[[Any, Any], Any],
    price: ModelPrice | Mapping[str, ModelPrice] | None,
    name: str | None = None,
) -> Score:
    """The pure function behind :class:`CostPerSuccessMetric`: this episode's dollars and success."""
    ok = task_success(episode, gold, check, name)
    src = price
    d = episode_dollars(episode, src)
    if d is None:
        unpriced = sorted({k for c in episode.costs("agent") for k in price_cost(c, src).unpriced})
        models = sorted({c.model or "<unknown>" for c in episode.costs("agent")})
        why = (
            "no agent usage recorded"
            if not episode.costs("agent")
            else f"no rate for {unpriced} of {models}"
        )
        reason = f"dollars unknown ({why}); {ok.reason}"
        value = math.nan
    else:
        reason = f"${d:.6g}; {ok.reason}"
        value = d
    return Score(
        value,
        {
            "dollars": d,
            "successes": int(ok.detail["successes"]),
            "success": bool(ok.detail["passed"]),
            "n": 1,
            "higher_is_better": False,
            "reason": reason,
            "checker": ok.detail["checker"],
        },
    )


class CostPerSuccessMetric:
    """Cost-of-Pass: dollars per **successfully completed** task (**lower is better**).

    The per-episode ``Score.value`` is that episode's dollar cost (NaN when unknown); the real
    number is the corpus :meth:`aggregate`, ``sum(dollars) / sum(successes)``, which is ``inf``
    when nothing succeeded. ``detail["higher_is_better"]`` is ``False`` on every score so a
    regression gate reads the direction from the score itself.

    Args:
        check: The success oracle (as in :class:`TaskSuccessMetric`; ``None`` = ``"output"``
            when called directly, the suite's checker inside ``run_suite``).
        price: A :class:`~ek.agents.cost.ModelPrice` applied to every episode, or ``None`` to
            resolve each cost's model against ``prices``.
        prices: A ``{model: ModelPrice}`` catalogue (see :func:`ek.agents.cost.load_prices`).

    **One Cost-of-Pass per run.** Inside :func:`~ek.agents.harness.run_suite` this metric's
    aggregate is the same figure as ``SuiteResult.cost.cost_of_pass``: it takes the suite's
    verdicts (a metric built without ``check`` adopts the suite's checker; a different explicit
    checker is refused with a ``ValueError`` naming both) and the suite's prices (a metric built
    without ``price``/``prices`` adopts the suite's; a suite given none uses the metric's; two
    different price settings are refused). :meth:`with_check` and :meth:`with_prices` build the
    metric for another checker or price table.

    Example:
        >>> from ek.agents.cost import per_million
        >>> m = CostPerSuccessMetric(price=per_million(1.0, 2.0))
        >>> m.with_check("final_state").check, m.with_prices(prices={}).price is None
        ('final_state', True)
    """

    name = "cost_per_success"
    higher_is_better = False
    #: The detail fields :meth:`aggregate` sums (its sufficient statistics, :mod:`ek.agents._run.sums`).
    sums = ("dollars", "successes")

    def __init__(
        self,
        check: Any = None,
        *,
        price: ModelPrice | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        price, prices = check_pricing(price, prices)
        self.check = check
        self._check = resolve_checker(check)
        self.price = price
        self.prices = prices

    def with_check(self, check: Any) -> CostPerSuccessMetric:
        """The same metric with another success checker (``self`` is not changed)."""
        return CostPerSuccessMetric(check, price=self.price, prices=self.prices)

    def with_prices(
        self, price: ModelPrice | None = None, prices: Mapping[str, ModelPrice] | None = None
    ) -> CostPerSuccessMetric:
        """The same metric with another price (or catalogue) (``self`` is not changed)."""
        return CostPerSuccessMetric(self.check, price=price, prices=prices)

    def __call__(self, pred: Any, gold: Any) -> Score:
        _require_episode(pred, "CostPerSuccessMetric")
        src = self.price if self.price is not None else self.prices
        return cost_per_success(pred, gold, self._check, src, _label(self.check))

    def aggregate(self, scores: Sequence[Score]) -> float:
        """``sum(dollars) / sum(successes)``: a ratio of two sums, never a mean of ratios.

        ``inf`` when nothing succeeded; NaN when any episode's dollars are unknown (an unknown
        part makes the total unknown) or the corpus is empty
        (:func:`ek.agents.cost.corpus_cost_of_pass`).
        """
        check_scores(scores, "CostPerSuccessMetric", ("dollars", "successes"))
        return corpus_cost_of_pass(_dollars_successes(s.detail) for s in scores)

    def __repr__(self) -> str:
        return f"CostPerSuccessMetric(check={_label(self.check)!r}, price={self.price!r}, prices={'<catalogue>' if self.prices else None})"


def _dollars_successes(detail: Mapping[str, Any]) -> tuple[float | None, float]:
    """A Cost-of-Pass score's ``(dollars, successes)`` (successes not read when dollars are
    unknown: the corpus figure is NaN then anyway)."""
    d = detail.get("dollars")
    if d is None:
        return None, math.nan
    return float(d), float(detail["successes"])


def _register_defaults() -> None:
    """Register the built-in metrics in the ``"metrics"`` namespace: default instances.

    A registered metric is a metric (``resolve("metrics", name)(episode, gold)`` scores); its
    class, ``type(resolve("metrics", name))``, builds a configured one.
    """
    register("metrics", "task_success", TaskSuccessMetric())
    register("metrics", "cost_per_success", CostPerSuccessMetric())


_register_defaults()
