"""What the ``ek_episode`` fixture gives a test: the trial's identity, its seed, and ``record()``.

One :class:`EpisodeRecorder` per trial. ``record(episode, gold=...)`` keeps the trial's
:class:`~ek.agents.base.Episode` and scores it against the gold with the metrics
:func:`~ek.agents.harness.run_suite` would use (tool calls and trajectory by default, each called
as ``metric(episode, gold)``: the same number as a direct call); ``price=``/``prices=`` price its
tokens for Cost-of-Pass. The trial's verdict is the test's own: its assertions.

The recorder also has ``trial`` and ``seed`` (and ``rng``), so it can stand in for the context a
stochastic agent reads: ``agent(task, ek_episode)``. The seed is
:func:`~ek.agents.harness.trial_seed` of the session seed (``--ek-seed``, 0 by default), the
test's node id and the trial: reproducible, and different in every trial.

Example:
    >>> from ek.agents.base import Episode, Step, TaskSpec
    >>> rec = EpisodeRecorder("t.py::test_refund", trial=1, trials=3, seed=7)
    >>> task = TaskSpec("A1", gold_calls=[Step("refund", {"order": "A1"})])
    >>> rec.record(Episode("A1", trajectory=[Step("refund", {"order": "A1"})]), gold=task)
    >>> sorted(rec.scores), rec.scores["tool_calls"].value
    (['tool_calls', 'trajectory'], 1.0)
    >>> rec.trial, rec.trials, rec.rng.random() == EpisodeRecorder("x", seed=7).rng.random()
    (1, 3, True)
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from typing import Any

from ek.agents._episode import Episode
from ek.agents.cost import ModelPrice, pricing_to_dict
from ek.agents.metrics import CostPerSuccessMetric
from ek.base import Score
from ek.jsonio import from_json_safe, to_json_safe

__all__ = ["EpisodeRecorder", "plain_json", "trial_payload"]


def plain_json(value: Any) -> Any:
    """``value`` as plain JSON types (non-finite floats spelled as ek's codec spells them), so it
    crosses a pytest-xdist channel unchanged.

    Example:
        >>> plain_json({"a": (1.0, float("nan"))})
        {'a': [1.0, 'NaN']}
    """
    return json.loads(json.dumps(to_json_safe(value), allow_nan=False))


def _default_metrics() -> list[Any]:
    from ek.agents.toolcalls import ToolCallMetric
    from ek.agents.trajectory import TrajectoryMetric

    return [ToolCallMetric(), TrajectoryMetric()]


def _score(metric: Any, episode: Episode, gold: Any) -> tuple[str, Score]:
    name = getattr(metric, "name", None)
    if not isinstance(name, str) or not name or not callable(metric):
        raise TypeError(
            f"ek_episode.record: each metric must be callable with a non-empty str name, "
            f"got {metric!r:.100}"
        )
    s = metric(episode, gold)
    if not isinstance(s, Score):
        raise TypeError(
            f"ek_episode.record: metric {name!r} returned {type(s).__name__}, not a Score"
        )
    return name, s


class EpisodeRecorder:
    """The ``ek_episode`` fixture's value: one trial of one ek test.

    Attributes:
        task_id: The test's node id (without the trial's parametrization id).
        trial: This trial (0-based).
        trials: The test's trials.
        seed: This trial's seed (see the module docstring).
    """

    def __init__(self, task_id: str, *, trial: int = 0, trials: int = 1, seed: int = 0) -> None:
        self.task_id = task_id
        self.trial = trial
        self.trials = trials
        self.seed = seed
        self._rng: random.Random | None = None
        self._episode: Episode | None = None
        self._scores: dict[str, Score] = {}
        self._payload: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return (
            f"EpisodeRecorder({self.task_id!r}, trial={self.trial}, trials={self.trials}, "
            f"seed={self.seed})"
        )

    @property
    def rng(self) -> random.Random:
        """A ``random.Random`` seeded with :attr:`seed` (made on first use)."""
        if self._rng is None:
            self._rng = random.Random(self.seed)
        return self._rng

    @property
    def episode(self) -> Episode | None:
        """The recorded episode, or ``None`` before :meth:`record`."""
        return self._episode

    @property
    def scores(self) -> Mapping[str, Score]:
        """The recorded episode's scores by metric name (empty without gold or metrics)."""
        return dict(self._scores)

    def record(
        self,
        episode: Episode,
        gold: Any = None,
        *,
        metrics: Iterable[Any] | None = None,
        price: ModelPrice | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        """Record this trial's episode (once per trial) and score it against ``gold``.

        Args:
            episode: The agent's :class:`~ek.agents.base.Episode`.
            gold: What the metrics compare against: a :class:`~ek.agents.base.TaskSpec` (its
                ``gold_calls`` and tools), gold calls, or a gold trajectory.
            metrics: The metrics to score with, each called ``metric(episode, gold)``; default
                tool calls and trajectory when ``gold`` is given, none otherwise.
            price: One :class:`~ek.agents.cost.ModelPrice` for every cost of the episode.
            prices: A ``{model: ModelPrice}`` catalogue (e.g. from
                :func:`~ek.agents.cost.load_prices`); with neither, dollars are known only
                where the episode's costs carry them.

        Raises:
            TypeError: ``episode`` is not an Episode, a price is not a ModelPrice, or a metric
                is malformed.
            ValueError: a second ``record`` in the same trial, or a metric name used twice.
        """
        if not isinstance(episode, Episode):
            raise TypeError(
                "ek_episode.record expects an ek Episode (ek.agents.base.Episode), got "
                f"{type(episode).__name__}: {episode!r:.100}"
            )
        if self._episode is not None:
            raise ValueError(
                f"ek_episode.record was already called in trial {self.trial} of {self.task_id}; "
                "record one episode per trial"
            )
        CostPerSuccessMetric(price=price, prices=prices)  # validates the price arguments
        chosen = (
            list(metrics) if metrics is not None else _default_metrics() if gold is not None else []
        )
        scores: dict[str, Score] = {}
        for m in chosen:
            name, s = _score(m, episode, gold)
            if name in scores:
                raise ValueError(f"ek_episode.record: two metrics are named {name!r}")
            scores[name] = s
        pricing = pricing_to_dict(price, prices)
        self._payload = {  # made now, in the test, so that nothing can fail in pytest's hooks
            "episode": plain_json(episode.to_dict()),
            "scores": {
                n: {"value": plain_json(s.value), "detail": plain_json(dict(s.detail))}
                for n, s in scores.items()
            },
            "pricing": plain_json(pricing) if pricing is not None else None,
        }
        self._episode = episode
        self._scores = scores

    def payload(self) -> dict[str, Any] | None:
        """What this trial recorded, as plain JSON (``None`` when nothing was recorded)."""
        return self._payload


def _check_payload(data: Any) -> None:
    """The shape :meth:`EpisodeRecorder.record` writes, else a ValueError saying what is off."""
    if not isinstance(data, dict) or set(data) != {"episode", "scores", "pricing"}:
        raise ValueError(f"expected {{episode, scores, pricing}}, got {data!r:.100}")
    if not isinstance(data["episode"], dict) or not isinstance(data["scores"], dict):
        raise ValueError("its episode and scores must be JSON objects")
    for name, sd in data["scores"].items():
        if not isinstance(sd, dict) or not isinstance(sd.get("detail"), dict) or "value" not in sd:
            raise ValueError(f"score {name!r:.50} must be {{value, detail}}, got {sd!r:.100}")
    Episode.from_dict(from_json_safe(data["episode"]))  # an episode the controller can read


def trial_payload(rec: Any) -> tuple[dict[str, Any] | None, str | None]:
    """What a trial's ``ek_episode`` recorded, checked before it leaves the trial:
    ``(payload, None)``, or ``(None, why)`` when the test wrote junk into the fixture (its
    ``payload`` replaced, or a recorded trial that is not what :meth:`~EpisodeRecorder.record`
    wrote). The plugin fails that trial with ``why`` instead of failing in its own hooks.

    Example:
        >>> trial_payload(EpisodeRecorder("t"))
        (None, None)
        >>> rec = EpisodeRecorder("t"); rec._payload = {"episode": object()}
        >>> trial_payload(rec)[1]  # doctest: +ELLIPSIS
        'ek_episode holds a recorded trial that is not what record() wrote (Object of type object is not JSON serializable)'
    """
    if not isinstance(rec, EpisodeRecorder) or "payload" in vars(rec):
        return None, "ek_episode was overwritten: its payload is not what record() wrote"
    data = EpisodeRecorder.payload(rec)  # the class's own method, whatever the test assigned
    if data is None:
        return None, None
    try:
        plain = json.loads(json.dumps(data, allow_nan=False))  # plain JSON, or refused
        _check_payload(plain)
    except (TypeError, ValueError, RecursionError) as e:
        why = str(e) if len(str(e)) <= 200 else str(e)[:197] + "..."
        return None, f"ek_episode holds a recorded trial that is not what record() wrote ({why})"
    return plain, None
