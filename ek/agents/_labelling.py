"""How many human labels a judged run needs, and which trials to send to people.

From a pilot (a few labelled trials among the judged ones) :func:`labels_needed` predicts the
width of the corrected success rate's interval (``ppi++``, :mod:`ek.agents.judge`) for a
number of labels and finds the fewest that reach a target width; :func:`trials_to_label`
draws those trials, at random or stratified by the judge's verdict.

The prediction is Cochran's stratified variance (1977, "Sampling Techniques", §5.3 and §5.5)
with the judge's verdict as the strata, the estimator ``ppi++`` uses::

    Var = Σ_s W_s² (1/n_s − 1/N_s) S_s² + S²/N

``W_s`` the share of trials the judge put in verdict ``s`` (known: every trial is judged),
``S_s² = r_s (1 − r_s)`` with ``r_s`` the pilot's true-pass share among the labels of verdict
``s``, ``S² = θ (1 − θ)`` with the pilot's corrected rate. A pilot that saw no disagreement in
a verdict is not read as certainty: ``r_s`` is planned as ``(passes + 1) / (labels + 2)``
(Laplace's rule). Random labels fall in proportion to ``W_s``; stratified labels are
allocated as Neyman's optimum, ``n_s ∝ W_s S_s`` (§5.5), each at most ``N_s``; the pilot's
labels stay where they are. The width is ``2 z √Var`` (a plan, not an interval: Student's t
would add about 2 % at 50 labels).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import short_repr
from ek.agents._judged import SAMPLING_DESIGNS, JudgedTrials
from ek.base import ReadOnlyDict
from ek.stats import check_confidence, check_int, two_sided_z

__all__ = ["LabelPlan", "labels_needed", "trials_to_label"]

_VERDICTS = ("pass", "fail")


@dataclass(frozen=True)
class LabelPlan:
    """How many labels give a target interval width; see :func:`labels_needed`.

    Attributes:
        n_labels: Labels to have in all (the pilot's included).
        by_verdict: Of them, how many among the trials the judge passed and failed
            (``{"pass": n1, "fail": n0}``; for random labels the expected split).
        sampling: ``"random"`` or ``"stratified"``.
        predicted_width: The interval width expected with ``n_labels`` labels.
        target_width: The width asked for.
        reachable: False when even labelling every trial does not reach the target.
        reason: A one-line summary.
        detail: The pilot's figures the plan rests on (``pass_share_by_verdict``,
            ``verdict_shares``, ``rate``).
    """

    n_labels: int
    by_verdict: Mapping[str, int]
    sampling: str
    predicted_width: float
    target_width: float
    reachable: bool
    reason: str
    detail: Mapping[str, Any] = field(default_factory=ReadOnlyDict)


def _next_verdict(alloc: Sequence[int], weights: Sequence[float], caps: Sequence[int]) -> int:
    """Which verdict the next label goes to: the one furthest below its share of the labels
    (``alloc / weight`` smallest, as in a largest-remainder apportionment), -1 when all are
    labelled."""
    open_ = [s for s in range(len(caps)) if alloc[s] < caps[s]]
    if not open_:
        return -1
    return min(open_, key=lambda s: alloc[s] / weights[s])


def _predicted(
    big_ns: Sequence[int], ns: Sequence[int], spreads: Sequence[float], s2: float
) -> float:
    big_n = sum(big_ns)
    var = s2 / big_n
    for big_ns_s, n_s, sp in zip(big_ns, ns, spreads):
        if n_s and big_ns_s:
            var += (big_ns_s / big_n) ** 2 * (1.0 / n_s - 1.0 / big_ns_s) * sp
    return var


def labels_needed(
    verdicts: Sequence[Any],
    labels: Sequence[Any],
    target_width: float,
    *,
    sampling: str = "stratified",
    confidence: float = 0.95,
) -> LabelPlan:
    """The fewest labels whose corrected-rate interval is at most ``target_width`` wide.

    Args:
        verdicts: The judge's verdict on every trial.
        labels: The pilot's labels (a bool where labelled, else ``None``).
        target_width: The interval width wanted (``high − low``), in (0, 1].
        sampling: ``"stratified"`` (Neyman allocation across the judge's verdicts, the
            default) or ``"random"``.
        confidence: The interval's coverage.

    Example:
        >>> verdicts = [True] * 300 + [False] * 700
        >>> pilot = [True] * 8 + [False] * 2 + [None] * 290 + [False] * 10 + [None] * 690
        >>> plan = labels_needed(verdicts, pilot, 0.1)
        >>> plan.n_labels, dict(plan.by_verdict), plan.reachable
        (188, {'pass': 76, 'fail': 112}, True)
    """
    if sampling not in SAMPLING_DESIGNS:
        raise ValueError(f"sampling must be one of {list(SAMPLING_DESIGNS)}, got {short_repr(sampling)}")  # fmt: skip
    if isinstance(target_width, bool) or not isinstance(target_width, (int, float)) or not 0 < target_width <= 1:  # fmt: skip
        raise ValueError(f"target_width must be a width in (0, 1], got {short_repr(target_width)}")
    confidence = check_confidence(confidence)
    a, b, c, d, u1, u0 = JudgedTrials.from_trials(verdicts, labels).totals
    big_ns = (a + c + u1, b + d + u0)
    if min(big_ns) == 0:
        raise ValueError(
            f"the judge gave one verdict to every trial ({big_ns[0]} pass, {big_ns[1]} fail): "
            "its verdicts carry no information to correct; label trials at random and use "
            "their mean"
        )
    # the pilot's true-pass share within each verdict, with Laplace's rule
    shares = ((a + 1) / (a + c + 2), (b + 1) / (b + d + 2))
    spreads = [r * (1 - r) for r in shares]
    big_n = sum(big_ns)
    rate = (big_ns[0] * shares[0] + big_ns[1] * shares[1]) / big_n
    s2 = rate * (1 - rate)
    if sampling == "stratified":
        weights = [big_ns[s] / big_n * math.sqrt(spreads[s]) for s in range(2)]
    else:
        weights = [big_ns[s] / big_n for s in range(2)]
    z = two_sided_z(confidence)
    alloc = [max(a + c, min(big_ns[0], 2)), max(b + d, min(big_ns[1], 2))]
    width = 2 * z * math.sqrt(_predicted(big_ns, alloc, spreads, s2))
    while width > target_width:  # one label at a time: the width only shrinks
        s = _next_verdict(alloc, weights, big_ns)
        if s < 0:
            break
        alloc[s] += 1
        width = 2 * z * math.sqrt(_predicted(big_ns, alloc, spreads, s2))
    n = sum(alloc)
    reachable = width <= target_width
    reason = (
        f"{n} labels ({alloc[0]} judged pass, {alloc[1]} judged fail, {sampling}) give a "
        f"{confidence:.0%} interval about {width:.3f} wide"
        if reachable
        else f"even every trial labelled gives a {confidence:.0%} interval {width:.3f} wide, "
        f"above {target_width:g}: judge more trials"
    )
    return LabelPlan(
        n_labels=n,
        by_verdict=ReadOnlyDict(dict(zip(_VERDICTS, alloc))),
        sampling=sampling,
        predicted_width=width,
        target_width=float(target_width),
        reachable=reachable,
        reason=reason,
        detail=ReadOnlyDict(
            {
                "pass_share_by_verdict": dict(zip(_VERDICTS, shares)),
                "verdict_shares": {v: big_ns[s] / big_n for s, v in enumerate(_VERDICTS)},
                "rate": rate,
            }
        ),
    )


def trials_to_label(
    verdicts: Sequence[Any], labels: Sequence[Any], plan: LabelPlan, *, seed: int = 0
) -> list[int]:
    """The indices of the trials to send to people next, to complete ``plan``.

    Random plans draw among all unlabelled trials; stratified ones draw within each verdict
    up to ``plan.by_verdict``. Seeded (``random.Random(seed)``), returned sorted.

    Example:
        >>> verdicts = [True, False] * 10
        >>> plan = labels_needed(verdicts, [None] * 20, 0.9, sampling="random")
        >>> picked = trials_to_label(verdicts, [None] * 20, plan, seed=1)
        >>> len(picked) == plan.n_labels, picked == sorted(set(picked))
        (True, True)
    """
    if not isinstance(plan, LabelPlan):
        raise TypeError(f"plan must be a LabelPlan (from labels_needed), got {type(plan).__name__}")
    seed = check_int("seed", seed, -(2**63))
    JudgedTrials.from_trials(verdicts, labels)  # checks both
    rng = random.Random(seed)
    free = [i for i, y in enumerate(labels) if y is None]
    if plan.sampling == "random":
        want = max(plan.n_labels - (len(labels) - len(free)), 0)
        return sorted(rng.sample(free, min(want, len(free))))
    picked: list[int] = []
    for verdict, name in ((True, "pass"), (False, "fail")):
        pool = [i for i in free if bool(verdicts[i]) is verdict]
        have = sum(1 for v, y in zip(verdicts, labels) if y is not None and bool(v) is verdict)
        want = max(plan.by_verdict[name] - have, 0)
        picked += rng.sample(pool, min(want, len(pool)))
    return sorted(picked)
