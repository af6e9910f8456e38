"""``ek_policy``: policy violations as an Inspect scorer (``ek/ek_policy``).

The sample's conversation (its messages: user turns, the agent's text and calls, tool results)
is the record the rules read, so confirmation rules work on Inspect samples as on recorded
conversations; see :mod:`ek.agents.policy`. The rules are the scorer's ``policies`` (rule objects
or their ``to_dict()`` dicts, e.g. ``-S policies=[...]`` on ``inspect score``) plus those the
sample's task declares (``metadata["ek_task"]``: ``TaskSpec.policies`` and each tool's).

The value holds ``policy`` (1.0 clean, else weighted by severity) and, with a ``check``,
``success``; the explanation lists the violations' reasons and says "near-miss" for a success
that broke a rule; ``metadata["ek"]`` records the sums, so ``ek-agents report`` and ``gate`` read
the ``policy`` metric (its violation rate and near-misses) from the log.

Example:
    ``Task(..., scorer=[task_success(check="final_state"),
    ek_policy([Order("lookup_order", "refund_order", same=("order_id",))], check="final_state")])``
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from ek.agents.base import Episode
from ek.agents.policy import MESSAGES_KEY, Rule

from ._meta import EK
from ._metrics import ek_aggregate
from ._names import qualified, register_bare_alias
from ._scorers import EkScoring, episode_from_state

__all__ = ["SCORER_NAMES", "ek_policy", "episode_with_conversation"]

#: The registered scorer names.
SCORER_NAMES = ("ek/ek_policy",)


def episode_with_conversation(state: TaskState) -> Episode:
    """The sample's episode (:func:`~ek.adapters.inspect.episode_from_state`) with its
    messages as the conversation (``metadata["messages"]``, JSON dumps)."""
    episode = episode_from_state(state)
    messages = [m.model_dump(mode="json", exclude_none=True) for m in state.messages]
    return episode.replace(metadata={**episode.metadata, MESSAGES_KEY: messages})


@scorer(
    metrics=[{"success": [accuracy(), stderr()], "policy": [ek_aggregate("policy")]}],
    name=qualified("ek_policy"),
)
def ek_policy(
    policies: Iterable[Rule | Mapping[str, Any]] | None = None,
    check: Any = None,
    gold: Any = None,
) -> Scorer:
    """Policy violations per sample; the ``policy`` column is the compliance rate.

    Args:
        policies: Rules (or their dicts) checked on every sample, besides the task's.
        check: The success checker (``"output"``, ``"final_state"``, ...): with one, the scorer
            decides success and counts near-misses (successes that broke a rule).
        gold: Where the gold comes from (as for every ek scorer; default ``ek_task`` when the
            sample has one, else the target).
    """
    scoring = EkScoring(
        ["policy"],
        check=check,
        gold=gold,
        options={"policies": list(policies or ()) or None},
    )

    async def score(state: TaskState, target: Target) -> Score:
        try:
            episode = episode_with_conversation(state)
        except Exception as e:  # never an errored eval: unscored, with the reason
            why = f"could not build the episode: {type(e).__name__}: {e}"
            return Score.unscored(
                reason="scoring_failed", explanation=why, metadata={EK: {"error": why}}
            )
        return scoring.score(state, target, episode)

    return score


register_bare_alias(ek_policy)  # so `inspect score LOG` reloads what the log recorded
