"""LLM-as-judge seams: JudgeSignal, JudgeMetric, pairwise_judge, judge_validation.

ek never imports an LLM SDK: the judge is an **injected callable**, sync or async, that you
write around your own client. The call shapes are:

* :class:`JudgeSignal` (reference-free, a :class:`~ek.base.Signal`): ``judge(output, criteria)``
* :class:`JudgeMetric` (needs gold, a :class:`~ek.base.Metric`): ``judge(output, criteria, gold)``
* :func:`pairwise_judge`: ``judge(first, second, criteria)`` returning the preference for the
  *first* output in [0, 1] (or ``"A"`` / ``"B"`` / ``"tie"``)

Each returns a number on the judge's declared ``scale``. A judge that raises, times out,
returns a non-number, NaN or a value outside its scale gives a :class:`JudgeError` naming what
went wrong (or, with ``on_error="record"`` on the metric, a recorded NaN score with the reason),
**never a silent 0**.

**Async judges.** From synchronous code an async judge is run with ``asyncio.run``. Inside a
running event loop (Jupyter, an async harness, Inspect) a synchronous call cannot block on it:
it raises :class:`JudgeError` (``kind="event-loop"``) before calling the judge; use the async
variants ``await signal.acall(output)``, ``await metric.acall(pred, gold)`` and
``await apairwise_judge(...)``, which also run sync judges in a worker thread.

**An unvalidated judge is a liability, not a metric.** Certify it against human labels with
:func:`judge_validation` (Krippendorff's alpha / Cohen's kappa) before trusting it, and calibrate
it (:func:`ek.quality.fit_isotonic`) before gating on it: a raw judge score is not a probability.

Example:
    >>> def judge(output, criteria):            # your LLM call goes here
    ...     return 4.0 if "because" in output else 2.0
    >>> helpful = JudgeSignal(judge, "Is the answer justified?", scale=(1, 5))
    >>> helpful("yes, because the log says so"), helpful.cost_tier
    (4.0, 5)
"""

from __future__ import annotations

import asyncio
import math
import numbers
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ek._validate import is_number, positive_number, short_repr
from ek.agents._judged import (
    JUDGED_METHODS,
    SAMPLING_DESIGNS,
    CorrectedRate,
    JudgedTrials,
    corrected_difference,
    corrected_success_rate,
)
from ek.agents._judged_run import (
    JudgedComparison,
    JudgedRun,
    check_labels,
    judged_difference,
    judged_run,
    judged_text,
    load_labels,
)
from ek.agents._labelling import LabelPlan, labels_needed, trials_to_label
from ek.base import ReadOnlyDict, Score, check_scores, is_episode
from ek.calling import CallTimeoutError, EventLoopRunningError, acall, call, is_async_callable
from ek.iaa import cohen_kappa_result, interval_alpha_pairs, krippendorff_alpha_result
from ek.quality import JUDGE_COST_TIER
from ek.stats import Interval, bootstrap_interval

__all__ = [
    "JUDGED_METHODS",
    "KRIPPENDORFF_CITATION",
    "SAMPLING_DESIGNS",
    "CorrectedRate",
    "JudgeError",
    "JudgeMetric",
    "JudgeSignal",
    "JudgeValidation",
    "JudgedComparison",
    "JudgedRun",
    "JudgedTrials",
    "LabelPlan",
    "PairwiseResult",
    "apairwise_judge",
    "check_labels",
    "corrected_difference",
    "corrected_success_rate",
    "judge_validation",
    "judged_difference",
    "judged_run",
    "judged_text",
    "labels_needed",
    "load_labels",
    "mean_position_bias",
    "pairwise_judge",
    "trials_to_label",
]

KRIPPENDORFF_CITATION = (
    "Krippendorff, K. (2004). Content Analysis: An Introduction to Its Methodology, 2nd ed., "
    "Sage, section 12.4: rely on variables with alpha >= .800; consider variables with "
    ".667 <= alpha < .800 only for drawing tentative conclusions."
)

_NAN = float("nan")
JudgeFn = Callable[..., Any]


class JudgeError(RuntimeError):
    """A judge call failed: it raised, timed out, or returned something outside its scale.

    Attributes:
        kind: ``"raised"``, ``"timeout"``, ``"invalid"`` or ``"event-loop"``.
        judge: The name of the judge (signal/metric) that failed.
    """

    def __init__(self, message: str, *, kind: str, judge: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.judge = judge


# --------------------------------------------------------------------------------------------
# calling a judge (sync or async, optional timeout) and checking its answer
# --------------------------------------------------------------------------------------------


def _event_loop_error(who: str) -> JudgeError:
    return JudgeError(
        f"judge {short_repr(who)} is async and an event loop is already running in this thread, so a "
        "synchronous call cannot wait for it; use the async variant (await .acall(...) or "
        "await apairwise_judge(...))",
        kind="event-loop",
        judge=who,
    )


def _raised(who: str, e: BaseException) -> JudgeError:
    return JudgeError(
        f"judge {short_repr(who)} raised {type(e).__name__}: {e}", kind="raised", judge=who
    )


def _timed_out(who: str, timeout: float | None) -> JudgeError:
    return JudgeError(
        f"judge {short_repr(who)} timed out after {timeout} s", kind="timeout", judge=who
    )


def _invoke(judge: JudgeFn, args: tuple[Any, ...], timeout: float | None, who: str) -> Any:
    """Call ``judge(*args)`` synchronously (an async judge runs with asyncio.run), through
    :func:`ek.calling.call`; every failure becomes a :class:`JudgeError`."""
    try:
        return call(judge, args, timeout=timeout)
    except EventLoopRunningError:
        raise _event_loop_error(who) from None
    except CallTimeoutError:
        raise _timed_out(who, timeout) from None
    except asyncio.TimeoutError as e:
        if is_async_callable(judge):  # an async judge's own timeout reads as one
            raise _timed_out(who, timeout) from None
        raise _raised(who, e) from e
    except Exception as e:
        raise _raised(who, e) from e


async def _ainvoke(judge: JudgeFn, args: tuple[Any, ...], timeout: float | None, who: str) -> Any:
    """Await ``judge(*args)`` through :func:`ek.calling.acall` (a sync judge runs in a worker
    thread, so the loop is not blocked); every failure becomes a :class:`JudgeError`."""
    try:
        return await acall(judge, args, timeout=timeout)
    except (CallTimeoutError, asyncio.TimeoutError):
        raise _timed_out(who, timeout) from None
    except Exception as e:
        raise _raised(who, e) from e


def _score(value: Any, scale: tuple[float, float], who: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise JudgeError(
            f"judge {short_repr(who)} must return a number on its scale {list(scale)}, got "
            f"{type(value).__name__}: {short_repr(value, 100)} (parse the model's reply inside the judge "
            "callable)",
            kind="invalid",
            judge=who,
        )
    try:
        v = float(value)
    except (OverflowError, ValueError):
        v = math.nan  # an int too large for a float: off any scale
    if math.isnan(v) or not scale[0] <= v <= scale[1]:
        raise JudgeError(
            f"judge {short_repr(who)} returned {short_repr(v)}, outside its scale [{scale[0]:g}, {scale[1]:g}]",
            kind="invalid",
            judge=who,
        )
    return v


_PREFERENCE_WORDS = {"a": 1.0, "first": 1.0, "b": 0.0, "second": 0.0, "tie": 0.5}


def _preference(value: Any, who: str) -> float:
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _PREFERENCE_WORDS:
            return _PREFERENCE_WORDS[key]
        raise JudgeError(
            f"pairwise judge {short_repr(who)} returned {short_repr(value)}; expected a preference for the first "
            f"output in [0, 1] or one of {sorted(_PREFERENCE_WORDS)}",
            kind="invalid",
            judge=who,
        )
    return _score(value, (0.0, 1.0), who)


def _check_judge(judge: Any) -> JudgeFn:
    if not callable(judge):
        raise TypeError(f"judge must be a callable (sync or async), got {type(judge).__name__}")
    return judge


def _check_criteria(criteria: Any) -> str:
    if not isinstance(criteria, str) or not criteria.strip():
        raise ValueError(f"criteria must be a non-empty str, got {short_repr(criteria, 100)}")
    return criteria


def _check_scale(scale: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(scale[0]), float(scale[1]))
        ok = len(scale) == 2 and math.isfinite(lo) and math.isfinite(hi) and lo < hi
    except (TypeError, ValueError, IndexError, KeyError):  # KeyError: a mapping, e.g. {}
        ok = False
    if not ok:
        raise ValueError(
            f"scale must be (low, high) with finite low < high, got {short_repr(scale, 100)}"
        )
    return lo, hi


def _check_timeout(timeout: Any) -> float | None:
    if timeout is None:
        return None
    return positive_number(
        "timeout", timeout, "{owner} must be None or a number of seconds > 0, got {value!r}"
    )


# --------------------------------------------------------------------------------------------
# JudgeSignal and JudgeMetric
# --------------------------------------------------------------------------------------------


class JudgeSignal:
    """A reference-free, criteria-only LLM judge as a :class:`~ek.base.Signal` (cost tier 5).

    The criteria are bound at construction; ``signal(output)`` calls
    ``judge(output, criteria)`` and returns its raw score, checked against ``scale``. The raw
    score is **not** a probability: validate the judge (:func:`judge_validation`) and calibrate
    it (:func:`ek.quality.fit_isotonic`) before gating on it (:func:`ek.quality.estimate_quality`
    refuses otherwise). LLM-as-judge: Zheng et al. (2023), "Judging LLM-as-a-Judge with
    MT-Bench and Chatbot Arena", arXiv 2306.05685.

    Args:
        judge: ``(output, criteria) -> number``, sync or async.
        criteria: What the judge assesses (a non-empty str).
        scale: ``(low, high)`` of the judge's valid scores.
        timeout: Seconds to wait for one call (``None`` waits forever). A sync judge with a
            timeout runs in a daemon thread that is abandoned, not killed, on timeout.
        name: The signal's name.

    Raises:
        JudgeError: on a call that raises, times out, or returns a non-number or a value
            outside ``scale``.

    Example:
        >>> s = JudgeSignal(lambda out, crit: 7, "concise?", scale=(0, 5))
        >>> try:
        ...     s("text")
        ... except JudgeError as e:
        ...     print(e.kind, "|", e)
        invalid | judge 'judge' returned 7.0, outside its scale [0, 5]
    """

    cost_tier: int = JUDGE_COST_TIER
    is_judge: bool = True
    higher_is_better: bool = True

    def __init__(
        self,
        judge: JudgeFn,
        criteria: str,
        *,
        scale: tuple[float, float] = (0.0, 1.0),
        timeout: float | None = None,
        name: str = "judge",
    ) -> None:
        self.judge = _check_judge(judge)
        self.criteria = _check_criteria(criteria)
        self.scale = _check_scale(scale)
        self.timeout = _check_timeout(timeout)
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str, got {short_repr(name)}")
        self.name = name

    def __call__(self, output: Any) -> float:
        """The judge's raw score for ``output``."""
        res = _invoke(self.judge, (output, self.criteria), self.timeout, self.name)
        return _score(res, self.scale, self.name)

    async def acall(self, output: Any) -> float:
        """Async variant of ``__call__`` (use inside a running event loop)."""
        res = await _ainvoke(self.judge, (output, self.criteria), self.timeout, self.name)
        return _score(res, self.scale, self.name)

    def __repr__(self) -> str:
        return f"JudgeSignal(name={self.name!r}, criteria={self.criteria!r}, scale={self.scale})"


class JudgeMetric:
    """A reference-based LLM judge as a :class:`~ek.base.Metric` (it needs gold).

    ``metric(pred, gold)`` calls ``judge(output, criteria, gold)`` where ``output`` is
    ``pred.output`` for an episode (or ``extract(pred)``), else ``pred``. The score's detail
    holds ``score``, ``passed`` (when a ``threshold`` is set), ``higher_is_better``, a
    ``reason``, and the sums the aggregate needs (``score_sum``, ``n_scored``, ``n_failed``).
    The aggregate is ``sum(score_sum) / sum(n_scored)``: failed calls are excluded and counted,
    never scored 0.

    Args:
        judge: ``(output, criteria, gold) -> number``, sync or async.
        criteria: What the judge assesses.
        scale: ``(low, high)`` of valid scores.
        threshold: Optional verdict ``score >= threshold`` (a raw-score cut: validate the judge).
        timeout: Seconds per call (see :class:`JudgeSignal`).
        on_error: ``"raise"`` (default) raises :class:`JudgeError`; ``"record"`` returns a NaN
            score with ``detail["failed"] = True`` and the reason.
        extract: Maps a prediction to what the judge sees (default: an episode's ``output``).
        name: The metric's name.

    Example:
        >>> m = JudgeMetric(lambda out, crit, gold: float(out == gold), "same answer?",
        ...                 threshold=0.5)
        >>> s = m("42", "42"); s.value, s.passed
        (1.0, True)
        >>> bad = JudgeMetric(lambda o, c, g: "yes", "same?", on_error="record")("42", "42")
        >>> bad.is_nan, bad.detail["failed"], bad.detail["error_kind"]
        (True, True, 'invalid')
        >>> m.aggregate([s, bad, m("41", "42")])
        0.5
    """

    higher_is_better: bool = True
    is_judge: bool = True
    #: The detail fields :meth:`aggregate` sums (its sufficient statistics, :mod:`ek.agents._run.sums`);
    #: a Score without them counts for nothing.
    sums = ("n_scored", "score_sum")
    sum_defaults: ClassVar[Mapping[str, float]] = {"n_scored": 0.0, "score_sum": 0.0}

    def __init__(
        self,
        judge: JudgeFn,
        criteria: str,
        *,
        scale: tuple[float, float] = (0.0, 1.0),
        threshold: float | None = None,
        timeout: float | None = None,
        on_error: str = "raise",
        extract: Callable[[Any], Any] | None = None,
        name: str = "judge",
    ) -> None:
        self.judge = _check_judge(judge)
        self.criteria = _check_criteria(criteria)
        self.scale = _check_scale(scale)
        self.timeout = _check_timeout(timeout)
        if threshold is not None:
            if not is_number(threshold):
                raise TypeError(f"threshold must be a number or None, got {short_repr(threshold)}")
            if not self.scale[0] <= threshold <= self.scale[1]:
                raise ValueError(f"threshold must lie in scale {list(self.scale)}, got {threshold}")
        self.threshold = threshold
        if on_error not in ("raise", "record"):
            raise ValueError(f"on_error must be 'raise' or 'record', got {short_repr(on_error)}")
        self.on_error = on_error
        if extract is not None and not callable(extract):
            raise TypeError(f"extract must be callable or None, got {type(extract).__name__}")
        self.extract = extract
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str, got {short_repr(name)}")
        self.name = name

    def _output(self, pred: Any) -> Any:
        if self.extract is not None:
            return self.extract(pred)
        return pred.output if is_episode(pred) else pred

    def _ok(self, v: float) -> Score:
        detail: dict[str, Any] = {
            "score": v,
            "scale": list(self.scale),
            "criteria": self.criteria,
            "higher_is_better": True,
            "score_sum": v,
            "n_scored": 1,
            "n_failed": 0,
            "failed": False,
        }
        if self.threshold is None:
            detail["reason"] = f"judge score {v:g} on [{self.scale[0]:g}, {self.scale[1]:g}]"
        else:
            ok = v >= self.threshold
            detail["passed"] = ok
            detail["reason"] = (
                f"judge score {v:g} {'>=' if ok else '<'} threshold {self.threshold:g}"
            )
        return Score(v, detail)

    def _failed(self, e: JudgeError) -> Score:
        if self.on_error == "raise":
            raise e
        detail: dict[str, Any] = {
            "failed": True,
            "error": str(e),
            "error_kind": e.kind,
            "criteria": self.criteria,
            "higher_is_better": True,
            "score_sum": 0.0,
            "n_scored": 0,
            "n_failed": 1,
            "reason": f"judge failed ({e.kind}): {e}",
        }
        if self.threshold is not None:
            detail["passed"] = False
        return Score(_NAN, detail)

    def __call__(self, pred: Any, gold: Any) -> Score:
        """Judge ``pred`` against ``gold``."""
        try:
            res = _invoke(self.judge, (self._output(pred), self.criteria, gold), self.timeout, self.name)  # fmt: skip
            return self._ok(_score(res, self.scale, self.name))
        except JudgeError as e:
            return self._failed(e)

    async def acall(self, pred: Any, gold: Any) -> Score:
        """Async variant of ``__call__``."""
        try:
            res = await _ainvoke(self.judge, (self._output(pred), self.criteria, gold), self.timeout, self.name)  # fmt: skip
            return self._ok(_score(res, self.scale, self.name))
        except JudgeError as e:
            return self._failed(e)

    def aggregate(self, scores: Sequence[Score]) -> float:
        """``sum(score_sum) / sum(n_scored)`` (NaN when nothing was scored)."""
        check_scores(scores, "JudgeMetric")
        n = sum(int(s.detail.get("n_scored", 0)) for s in scores)
        if n == 0:
            return _NAN
        return math.fsum(float(s.detail.get("score_sum", 0.0)) for s in scores) / n

    def __repr__(self) -> str:
        return f"JudgeMetric(name={self.name!r}, criteria={self.criteria!r}, scale={self.scale})"


# --------------------------------------------------------------------------------------------
# pairwise judging
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairwiseResult:
    """The outcome of :func:`pairwise_judge` (both orders asked, then averaged).

    Attributes:
        preference: P(a is better), the mean of the two orders after un-swapping
            (``(ab + (1 - ba)) / 2``); 0.5 is a tie.
        winner: ``"a"``, ``"b"`` or ``"tie"``.
        position_bias: ``(ab + ba) / 2 - 0.5``: the extra preference the judge gives whatever
            is shown first (positive) or second (negative); 0 for a position-consistent judge.
        disagreed: True when the two orders pick different winners (the verdict flipped with
            the position).
        ab: The judge's preference for the first output with ``a`` shown first.
        ba: The judge's preference for the first output with ``b`` shown first.
        reason: A human-readable summary.
    """

    preference: float
    winner: str
    position_bias: float
    disagreed: bool
    ab: float
    ba: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "preference": self.preference,
            "winner": self.winner,
            "position_bias": self.position_bias,
            "disagreed": self.disagreed,
            "ab": self.ab,
            "ba": self.ba,
            "reason": self.reason,
        }


def _side(p: float) -> str:
    return "first" if p > 0.5 else "second" if p < 0.5 else "tie"


def _pairwise(ab: float, ba: float) -> PairwiseResult:
    pref = (ab + (1.0 - ba)) / 2.0
    bias = (ab + ba) / 2.0 - 0.5
    # order 1 picks a when ab > .5; order 2 picks a when ba < .5 (a is then second)
    v1 = {"first": "a", "second": "b", "tie": "tie"}[_side(ab)]
    v2 = {"first": "b", "second": "a", "tie": "tie"}[_side(ba)]
    winner = "a" if pref > 0.5 else "b" if pref < 0.5 else "tie"
    disagreed = v1 != v2
    reason = f"P(a better) = {pref:.3f} ({winner}); position bias {bias:+.3f}"
    if disagreed:
        reason += f"; the orders disagree (a first -> {v1}, b first -> {v2})"
    return PairwiseResult(pref, winner, bias, disagreed, ab, ba, reason)


def pairwise_judge(
    judge: JudgeFn, a: Any, b: Any, criteria: str, *, timeout: float | None = None
) -> PairwiseResult:
    """Compare ``a`` and ``b`` with a pairwise judge, asking in **both orders** and averaging.

    Position bias in LLM judges is a double-digit effect (Zheng et al. 2023, arXiv 2306.05685,
    §3.3; Wang et al. 2023, "Large Language Models are not Fair Evaluators", arXiv 2305.17926),
    so one order is never enough. The judge is called as ``judge(first, second, criteria)`` and
    returns its preference for the *first* output in [0, 1] (or ``"A"``/``"B"``/``"tie"``).
    For a judge whose preference is ``true preference + bias`` the average cancels the bias
    exactly, and ``position_bias`` measures it.

    Args:
        judge: ``(first, second, criteria) -> preference for first``, sync or async.
        a: One output.
        b: The other output.
        criteria: What "better" means.
        timeout: Seconds per call.

    Raises:
        JudgeError: a call raised, timed out, or returned an invalid preference.

    Example:
        >>> def biased(first, second, criteria):   # always prefers what it sees first
        ...     return 0.8
        >>> r = pairwise_judge(biased, "x", "y", "better?")
        >>> r.preference, r.winner, round(r.position_bias, 3), r.disagreed
        (0.5, 'tie', 0.3, True)
    """
    judge = _check_judge(judge)
    criteria = _check_criteria(criteria)
    timeout = _check_timeout(timeout)
    who = getattr(judge, "__name__", "pairwise judge")
    ab = _preference(_invoke(judge, (a, b, criteria), timeout, who), who)
    ba = _preference(_invoke(judge, (b, a, criteria), timeout, who), who)
    return _pairwise(ab, ba)


async def apairwise_judge(
    judge: JudgeFn, a: Any, b: Any, criteria: str, *, timeout: float | None = None
) -> PairwiseResult:
    """Async variant of :func:`pairwise_judge` (the two orders run concurrently)."""
    judge = _check_judge(judge)
    criteria = _check_criteria(criteria)
    timeout = _check_timeout(timeout)
    who = getattr(judge, "__name__", "pairwise judge")
    r1, r2 = await asyncio.gather(
        _ainvoke(judge, (a, b, criteria), timeout, who),
        _ainvoke(judge, (b, a, criteria), timeout, who),
    )
    return _pairwise(_preference(r1, who), _preference(r2, who))


def mean_position_bias(results: Sequence[PairwiseResult]) -> float:
    """The judge's average position bias over many comparisons (NaN for none).

    Example:
        >>> round(mean_position_bias([_pairwise(0.9, 0.5), _pairwise(0.7, 0.7)]), 6)
        0.2
    """
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise TypeError(
            f"mean_position_bias expects a sequence of PairwiseResults, got {type(results).__name__}"
        )
    for i, r in enumerate(results):
        if not isinstance(r, PairwiseResult):
            raise TypeError(
                f"mean_position_bias expects PairwiseResults, item {i} is {type(r).__name__}"
            )
    if not results:
        return _NAN
    return math.fsum(r.position_bias for r in results) / len(results)


# --------------------------------------------------------------------------------------------
# judge validation against human labels
# --------------------------------------------------------------------------------------------

_KAPPA_WEIGHTS: dict[str, Any] = {
    "nominal": None,
    "ordinal": "linear",
    "interval": "quadratic",
    "ratio": "quadratic",
}
_MAX_KAPPA_LABELS = 20


@dataclass(frozen=True)
class JudgeValidation:
    """A judge certified (or not) against human labels; see :func:`judge_validation`.

    Attributes:
        alpha: Krippendorff's alpha between judge and human (NaN if undefined).
        alpha_interval: Bootstrap interval for alpha (units resampled; seed recorded).
        kappa: Cohen's kappa (weights by level), NaN when undefined or the scores are
            continuous (more than 20 distinct values).
        kappa_weights: ``None``, ``"linear"`` or ``"quadratic"``.
        agreement: Fraction of units where judge and human agree (within ``tolerance``).
        n: Units with both a judge score and a human label.
        n_missing: Units dropped because one side is missing (e.g. a failed judge call).
        level: Krippendorff level used.
        threshold: The alpha the judge must reach.
        passed: The verdict.
        reason: Why it passed or failed.
        citation: Where the threshold comes from.
        detail: Further breakdown (kappa reason, bootstrap settings, criterion used).
    """

    alpha: float
    alpha_interval: Interval
    kappa: float
    kappa_weights: str | None
    agreement: float
    n: int
    n_missing: int
    level: str
    threshold: float
    passed: bool
    reason: str
    citation: str = KRIPPENDORFF_CITATION
    detail: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes ``None``)."""

        def f(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "alpha": f(self.alpha),
            "alpha_interval": self.alpha_interval.to_dict(),
            "kappa": f(self.kappa),
            "kappa_weights": self.kappa_weights,
            "agreement": f(self.agreement),
            "n": self.n,
            "n_missing": self.n_missing,
            "level": self.level,
            "threshold": self.threshold,
            "passed": self.passed,
            "reason": self.reason,
            "citation": self.citation,
            "detail": dict(self.detail),
        }


def _is_missing(v: Any) -> bool:
    return (
        v is None
        or isinstance(v, BaseException)
        or (isinstance(v, float) and math.isnan(v))
        or (isinstance(v, Score) and v.is_nan)
    )


def _unwrap(v: Any) -> Any:
    return v.value if isinstance(v, Score) else v


def _check_validation_inputs(
    judge_scores: Any, human_labels: Any, level: Any, threshold: Any
) -> None:
    if isinstance(judge_scores, (str, bytes)) or not isinstance(judge_scores, Sequence):
        raise TypeError(f"judge_scores must be a sequence, got {type(judge_scores).__name__}")
    if isinstance(human_labels, (str, bytes)) or not isinstance(human_labels, Sequence):
        raise TypeError(f"human_labels must be a sequence, got {type(human_labels).__name__}")
    if len(judge_scores) != len(human_labels):
        raise ValueError(
            f"judge_scores and human_labels must cover the same units, got "
            f"{len(judge_scores)} and {len(human_labels)}"
        )
    if level not in _KAPPA_WEIGHTS:
        raise ValueError(f"level must be one of {list(_KAPPA_WEIGHTS)}, got {short_repr(level)}")
    if not is_number(threshold):
        raise TypeError(f"threshold must be a number, got {short_repr(threshold)}")
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be an alpha in [-1, 1], got {threshold}")


def _alpha_interval(
    pairs: Sequence[tuple[Any, Any]],
    alpha_res: Any,
    level: str,
    numeric: bool,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> Interval:
    """Alpha with its percentile-bootstrap interval over units (NaN when undefined)."""
    alpha = alpha_res.value
    if len(pairs) < 2 or math.isnan(alpha):
        return Interval(_NAN, _NAN, _NAN, confidence, "percentile-bootstrap", alpha_res.reason)

    def stat(idx: Sequence[float]) -> float:
        sub = [pairs[int(i)] for i in idx]
        if level == "interval" and numeric:
            return interval_alpha_pairs([(float(a), float(b)) for a, b in sub])
        return krippendorff_alpha_result([[a for a, _ in sub], [b for _, b in sub]], level).value

    iv = bootstrap_interval(
        [float(i) for i in range(len(pairs))],
        stat,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    return Interval(alpha, iv.low, iv.high, iv.confidence, iv.method, iv.reason)


def _kappa(js: Sequence[Any], hs: Sequence[Any], weights: Any) -> tuple[float, str]:
    """Cohen's kappa and its reason (NaN for no pairs or continuous scores)."""
    distinct = {v for v in [*js, *hs] if isinstance(v, Hashable)}
    if not js:
        return _NAN, "no complete pairs"
    if len(distinct) > _MAX_KAPPA_LABELS:
        return (
            _NAN,
            f"{len(distinct)} distinct values: continuous scores, kappa not meaningful (use alpha)",
        )
    try:
        k_res = cohen_kappa_result(js, hs, weights)
    except TypeError as e:
        return _NAN, str(e)
    return k_res.value, k_res.reason


def _agreement(pairs: Sequence[tuple[Any, Any]], numeric: bool, tolerance: float) -> float:
    """The share of units where judge and human agree (within ``tolerance`` when numeric)."""
    if not pairs:
        return _NAN
    if numeric:
        return sum(abs(float(a) - float(b)) <= tolerance for a, b in pairs) / len(pairs)
    return sum(a == b for a, b in pairs) / len(pairs)


def judge_validation(
    judge_scores: Sequence[Any],
    human_labels: Sequence[Any],
    *,
    level: str = "interval",
    threshold: float = 0.667,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    tolerance: float = 0.0,
    require_lower_bound: bool = False,
) -> JudgeValidation:
    """Certify a judge against human labels with Krippendorff's alpha and Cohen's kappa.

    The judge passes when alpha >= ``threshold`` (default 0.667: Krippendorff's lower bound for
    drawing even tentative conclusions; he asks for 0.800 for reliable ones, see
    :data:`KRIPPENDORFF_CITATION`). With ``require_lower_bound=True`` the lower end of the
    bootstrap interval must clear it instead (stricter, advisable for small n). The interval
    resamples units (judge-human pairs) with replacement, seeded. Missing entries (``None``,
    NaN, a recorded failure such as a NaN :class:`~ek.base.Score` or an exception object) are
    dropped pairwise and counted in ``n_missing``: a judge that fails often is visible.

    Skipping this step is not a shortcut: **an unvalidated judge is a liability, not a metric.**

    Args:
        judge_scores: The judge's score per unit (numbers, labels, or Scores).
        human_labels: The human label per unit, same order.
        level: Krippendorff level (``"nominal"``, ``"ordinal"``, ``"interval"``, ``"ratio"``);
            kappa uses no / linear / quadratic weights accordingly.
        threshold: Minimum alpha.
        confidence: Coverage of the alpha interval.
        n_resamples: Bootstrap replicates.
        seed: Bootstrap seed.
        tolerance: Numeric distance still counted as agreement in ``agreement``.
        require_lower_bound: Judge by the interval's lower bound instead of the point.

    Example:
        >>> human = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
        >>> good = [1, 2, 3, 4, 5, 1, 2, 3, 5, 5]
        >>> v = judge_validation(good, human, n_resamples=200)
        >>> round(v.alpha, 3), v.passed, v.n
        (0.978, True, 10)
        >>> judge_validation([3, 1, 5, 2, 4, 4, 5, 1, 2, 3], human, n_resamples=200).passed
        False
    """
    _check_validation_inputs(judge_scores, human_labels, level, threshold)
    pairs = [
        (_unwrap(j), _unwrap(h))
        for j, h in zip(judge_scores, human_labels)
        if not (_is_missing(j) or _is_missing(h))
    ]
    n, n_missing = len(pairs), len(judge_scores) - len(pairs)
    js, hs = [p[0] for p in pairs], [p[1] for p in pairs]
    alpha_res = krippendorff_alpha_result([js, hs], level)
    alpha = alpha_res.value
    numeric = all(is_number(v) for v in js + hs)
    iv = _alpha_interval(pairs, alpha_res, level, numeric, confidence, n_resamples, seed)
    weights = _KAPPA_WEIGHTS[level]
    kappa, kappa_reason = _kappa(js, hs, weights)
    agreement = _agreement(pairs, numeric, tolerance)
    criterion = iv.low if require_lower_bound else alpha
    what = "alpha's lower bound" if require_lower_bound else "alpha"
    if math.isnan(criterion):
        passed = False
        reason = f"not validated: alpha undefined ({alpha_res.reason})"
    else:
        passed = criterion >= threshold
        reason = (
            f"{'validated' if passed else 'NOT validated'}: {what} {criterion:.3f} "
            f"{'>=' if passed else '<'} {threshold:g} (alpha {alpha:.3f}, "
            f"{iv.confidence:.0%} CI [{iv.low:.3f}, {iv.high:.3f}], n={n})"
        )
    if n_missing:
        reason += f"; {n_missing} unit(s) without a judge score or label were dropped"
    return JudgeValidation(
        alpha=alpha,
        alpha_interval=iv,
        kappa=kappa,
        kappa_weights=weights,
        agreement=agreement,
        n=n,
        n_missing=n_missing,
        level=level,
        threshold=float(threshold),
        passed=passed,
        reason=reason,
        detail={
            "kappa_reason": kappa_reason,
            "criterion": what,
            "n_resamples": n_resamples,
            "seed": seed,
            "tolerance": tolerance,
        },
    )
