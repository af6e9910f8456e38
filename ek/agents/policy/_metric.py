"""``PolicyMetric``: policy violations per episode, and the near-misses among the successes.

The value of an episode is 1.0 when it broke no rule, else ``max(0, 1 - sum of severities)``
(:func:`~ek.agents.policy.check_policies`); the corpus aggregate is the ratio of sums
``sum(compliance) / sum(n)``: with every severity 1 this is ``1 - the violation rate``. A
**near-miss** is an episode that succeeded (by the metric's checker; inside ``run_suite``, the
suite's) and broke a rule: its outcome is right, its process is not. :func:`policy_figures` reads
the violation rate and the near-miss share from the same sums.

Example:
    >>> from ek.agents.base import Episode, Step
    >>> from ek.agents.policy import Order
    >>> m = PolicyMetric([Order("verify_identity", "refund")], check="recorded")
    >>> ep = Episode("t1", trajectory=[Step("refund")], success=True)
    >>> s = m(ep, None)
    >>> s.value, s.detail["near_misses"], s.detail["reason"]
    (0.0, 1, '1 violation, first at step 0: refund at step 0 before any successful verify_identity; near-miss: the task succeeded')
    >>> ok = m(Episode("t2", trajectory=[Step("verify_identity"), Step("refund")], success=True), None)
    >>> m.aggregate([s, ok]), policy_figures([s, ok])["near_miss_share"]
    (0.5, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from ek._validate import short_repr
from ek.base import Score, check_scores, is_episode
from ek.registry import register

from ..metrics import check_name, resolve_checker, task_success
from ._policies import as_policies, check_policies, policies_to_list
from ._record import PolicyInputError, Record
from ._rule import Rule

__all__ = ["PolicyMetric", "policies_of", "policy_figures", "policy_score"]


def policies_of(gold: Any) -> tuple[Rule, ...]:
    """The rules a task declares: its own ``policies`` and those of each of its tools.

    ``gold`` is a :class:`~ek.agents.base.TaskSpec` (read by duck-typing: anything with
    ``policies`` and ``tools``); any other gold declares none.
    """
    own = tuple(getattr(gold, "policies", None) or ())
    tools = getattr(gold, "tools", None) or ()
    return own + tuple(r for t in tools for r in (getattr(t, "policies", None) or ()))


def policy_score(
    episode: Any, rules: Sequence[Rule], success: bool, checker: str = "output"
) -> Score:
    """The pure function behind :class:`PolicyMetric`: one episode against ``rules``.

    An episode whose recorded conversation and calls disagree cannot be checked: its value and
    compliance are NaN / ``None`` with the reason (the corpus aggregate is NaN then).
    """
    detail: dict[str, Any] = {
        "n": 1,
        "successes": int(success),
        "higher_is_better": True,
        "checker": checker,
        "rules": len(rules),
    }
    try:
        res = check_policies(Record.from_episode(episode), rules)
    except PolicyInputError as e:
        reason = f"policies not checked: {e}"
        unknown = {"compliance": None, "violated": 0, "near_misses": 0, "passed": False}
        return Score(math.nan, {**detail, **unknown, "reason": reason, "violations": []})
    violated = int(not res.passed)
    first = res.first
    detail.update(
        compliance=res.value,
        violated=violated,
        near_misses=int(success and violated),
        passed=res.passed,
        violations=[v.to_dict() for v in res.violations],
        first_violation=None if first is None else first.to_dict(),
        reason=res.reason + ("; near-miss: the task succeeded" if success and violated else ""),
    )
    return Score(res.value, detail)


class PolicyMetric:
    """Policy violations per episode (value 1.0 when clean); aggregate = compliance rate.

    Args:
        policies: Rules checked on every episode, besides those the task declares
            (``TaskSpec.policies`` and each ``ToolSpec.policies``, read from the gold).
        check: The success checker that decides a near-miss (as in
            :class:`~ek.agents.metrics.TaskSuccessMetric`: ``None`` = ``"output"`` when called
            directly, the suite's checker inside ``run_suite``; ``"recorded"`` for episodes
            whose verdict was recorded elsewhere, e.g. audited conversations).

    Each Score's detail: ``violations`` (each with ``rule``, ``step``, ``reason``,
    ``severity``), ``first_violation``, ``passed`` (no violation), and the sums the aggregate
    and :func:`policy_figures` read: ``compliance``, ``n``, ``violated``, ``successes``,
    ``near_misses``.
    """

    name = "policy"
    higher_is_better = True
    #: The detail fields the aggregate and :func:`policy_figures` sum (:mod:`ek.agents._run.sums`).
    sums = ("compliance", "n", "violated", "successes", "near_misses")
    sum_defaults: ClassVar[Mapping[str, float]] = {"n": 1.0}

    def __init__(
        self, policies: Iterable[Rule | Mapping[str, Any]] = (), check: Any = None
    ) -> None:
        self.policies = as_policies(policies, "PolicyMetric.policies")
        self.check = check
        self._check = resolve_checker(check)

    def with_check(self, check: Any) -> PolicyMetric:
        """The same metric with another success checker (``self`` is not changed)."""
        return PolicyMetric(self.policies, check)

    def ek_config(self) -> dict[str, Any]:
        """What decides this metric's results (a run store records it)."""
        return {"policies": policies_to_list(self.policies), "check": _label(self.check)}

    def __call__(self, pred: Any, gold: Any) -> Score:
        if not is_episode(pred):
            raise TypeError(
                f"PolicyMetric expects an Episode, got {type(pred).__name__}: {short_repr(pred)}"
            )
        rules = self.policies + policies_of(gold)
        label = _label(self.check)
        success = bool(task_success(pred, gold, self._check, label).detail["passed"])
        return policy_score(pred, rules, success, label)

    def aggregate(self, scores: Sequence[Score]) -> float:
        """``sum(compliance) / sum(n)`` (NaN when empty or when an episode could not be checked)."""
        check_scores(scores, "PolicyMetric", ("compliance",))
        total = _sum(scores, "compliance")
        n = _sum(scores, "n", 1.0)
        return math.nan if n == 0 or math.isnan(total) else total / n

    def figures(self, scores: Sequence[Score]) -> dict[str, Any]:
        """The violation rate and the near-miss share beside the aggregate
        (:func:`policy_figures`; ``ek-agents report`` prints them under the metric)."""
        return policy_figures(scores)

    def __repr__(self) -> str:
        return f"PolicyMetric({len(self.policies)} rule(s), check={_label(self.check)!r})"


def _label(check: Any) -> str:
    return check_name("output" if check is None else check)


def _sum(scores: Iterable[Score], key: str, default: float = 0.0) -> float:
    total = 0.0
    for s in scores:
        v = s.detail.get(key, default)
        total += math.nan if v is None else float(v)
    return total


def policy_figures(scores: Sequence[Score]) -> dict[str, Any]:
    """The violation rate and the near-miss share, from :class:`PolicyMetric` Scores (or the
    merged per-task Scores a report keeps).

    Returns:
        ``n``, ``violated``, ``violation_rate`` (``violated / n``), ``successes``,
        ``near_misses`` and ``near_miss_share`` (``near_misses / successes``: the share of the
        successes that broke a policy; NaN with no success).
    """
    check_scores(scores, "policy_figures", ("violated", "near_misses"))
    n = _sum(scores, "n", 1.0)
    out = {k: _sum(scores, k) for k in ("violated", "successes", "near_misses")}
    return {
        "n": n,
        **out,
        "violation_rate": out["violated"] / n if n else math.nan,
        "near_miss_share": out["near_misses"] / out["successes"] if out["successes"] else math.nan,
    }


register("metrics", "policy", PolicyMetric())
