"""The gate's task bootstrap of metric differences, over per-task sums, draws shared.

Each metric check of :func:`ek.agents.gate.agent_regression_gate` is a percentile bootstrap
over tasks (Efron & Tibshirani 1993, ch. 13) of ``aggregate(current) - aggregate(baseline)``:
``n_resamples`` times, draw the tasks with replacement (``random.Random(seed)``; the shared
tasks jointly when paired), and recompute each run's aggregate on the drawn tasks.

Two things make it proportional to tasks, not trials, and done once for all metrics:

* a metric whose aggregate is a ratio of sums (:func:`ek.agents.tally.summed_detail`) is
  resampled from its per-task sums: a replicate adds the drawn tasks' sums and calls the
  metric's own ``aggregate`` on one merged Score (any other metric re-aggregates the drawn
  tasks' Scores, as always);
* metrics with the same number of tasks share one sequence of draws: each metric used to seed
  its own ``random.Random(seed)`` and draw the same indices, so the draws, and every interval,
  are as before; they are made once.

Example:
    >>> import ek.agents.metrics
    >>> from ek.base import Score
    >>> cur = {t: [Score(1.0, {"successes": 1, "n": 1})] for t in "abcd"}
    >>> base = {t: [Score(float(t < "c"), {"successes": int(t < "c"), "n": 1})] for t in "abcd"}
    >>> b = MetricBootstrap("task_success", cur, base, list("abcd"))
    >>> (iv,) = bootstrap_differences([b], 0.95, 200, 0)
    >>> iv.point, iv.low >= 0.0, iv.method
    (0.5, True, 'task-bootstrap-paired(n_resamples=200, seed=0)')
"""

from __future__ import annotations

import math
import operator
import random
import sys
from array import array
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat

from ek.base import Score
from ek.stats import Interval

from .summary import metric_aggregator
from .tally import merge_scores, summed_detail

__all__ = ["IndexDraws", "MetricBootstrap", "bootstrap_differences"]

_NAN = math.nan


def _columns(
    scores: Mapping[str, Sequence[Score]], ids: Sequence[str], fields: Mapping[str, float | None]
) -> list[list[float]]:
    """Per key, the per-task sums of ``ids`` (an unknown sum as NaN)."""
    keys = tuple(fields)
    cols: list[list[float]] = [[] for _ in keys]
    for t in ids:
        det = merge_scores(scores[t], fields, f"task {t!r}").detail
        for col, key in zip(cols, keys):
            v = det[key]
            col.append(_NAN if v is None else float(v))
    return cols


def _picker(idx: Sequence[int]) -> Callable[[Sequence[float]], Sequence[float]]:
    """``col -> the values col[i] for i in idx``, in order (``itemgetter`` of a single index
    gives the value itself, not a tuple)."""
    if len(idx) == 1:
        only = idx[0]
        return lambda col: (col[only],)
    return operator.itemgetter(*idx)


class MetricBootstrap:
    """One metric's two runs, ready to resample.

    Args:
        metric: The registered metric whose aggregate applies.
        cur: ``task_id -> Scores`` of the current run (per trial, or merged per task).
        base: The same for the baseline.
        shared: The shared task ids for a paired bootstrap, or ``None`` for independent
            resampling of each run's tasks.
    """

    def __init__(
        self,
        metric: str,
        cur: Mapping[str, Sequence[Score]],
        base: Mapping[str, Sequence[Score]],
        shared: Sequence[str] | None,
    ) -> None:
        self.agg, self.exact = metric_aggregator(metric)
        self.paired = shared is not None
        self.cur_ids = list(shared) if shared is not None else list(cur)
        self.base_ids = list(shared) if shared is not None else list(base)
        self._cur, self._base = cur, base
        fields = summed_detail(metric)
        self._keys = tuple(fields or ())
        self._cc = _columns(cur, self.cur_ids, fields) if fields is not None else None
        self._bc = _columns(base, self.base_ids, fields) if fields is not None else None
        self.values = (
            self._full(self._cc, cur, self.cur_ids),
            self._full(self._bc, base, self.base_ids),
        )

    def _full(
        self,
        cols: list[list[float]] | None,
        scores: Mapping[str, Sequence[Score]],
        ids: Sequence[str],
    ) -> float:
        if cols is None:
            return self.agg([s for t in ids for s in scores[t]])
        return self._agg_sums([sum(c) for c in cols])

    def _agg_sums(self, sums: Sequence[float]) -> float:
        detail = {k: (None if math.isnan(v) else v) for k, v in zip(self._keys, sums)}
        return self.agg([Score(_NAN, detail)])

    @property
    def key(self) -> tuple[int, int, bool]:
        """What the draws depend on: the two task counts and pairing."""
        return len(self.cur_ids), len(self.base_ids), self.paired

    def replicate(self, ic: Sequence[int], ib: Sequence[int]) -> float:
        """The difference on one resample (indices into the current and baseline task ids)."""
        if self._cc is None or self._bc is None:
            cur = [s for i in ic for s in self._cur[self.cur_ids[i]]]
            base = [s for i in ib for s in self._base[self.base_ids[i]]]
            return self.agg(cur) - self.agg(base)
        pick_c, pick_b = _picker(ic), _picker(ib)  # each column's drawn values in one C call
        c = self._agg_sums([sum(pick_c(col)) for col in self._cc])
        return c - self._agg_sums([sum(pick_b(col)) for col in self._bc])

    def method(self, n_resamples: int, seed: int) -> str:
        """The :attr:`~ek.stats.Interval.method` recorded."""
        kind = "paired" if self.paired else "independent"
        return f"task-bootstrap-{kind}(n_resamples={n_resamples}, seed={seed})"


def _words(bits: int, n: int) -> list[int]:
    """The ``n`` 32-bit words of ``bits``, least significant first."""
    raw = bits.to_bytes(4 * n, "little")
    words = array("I")
    if words.itemsize != 4:  # pragma: no cover - no mainstream platform
        return [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4)]
    words.frombytes(raw)
    if sys.byteorder == "big":  # pragma: no cover - the machines ek runs on are little-endian
        words.byteswap()
    return words.tolist()


class IndexDraws:
    """``random.Random(seed).randrange(n)``, drawn many at a time: the same numbers, faster.

    ``randrange(n)`` takes the top ``n.bit_length()`` bits of the generator's next 32-bit word
    and draws again while the result is ``>= n`` (CPython's ``_randbelow_with_getrandbits``);
    ``getrandbits(32 * w)`` returns the next ``w`` words, least significant first. So the words
    are taken in bulk and the same rule is applied to each; words left over are kept for the
    next call, so a sequence of calls draws exactly what the same ``randrange`` calls would.
    (For ``n >= 2**32`` each draw is ``randrange`` itself.)

    Example:
        >>> d, r = IndexDraws(7), random.Random(7)
        >>> d.below(10, 5) == [r.randrange(10) for _ in range(5)]
        True
        >>> d.below(3, 4) == [r.randrange(3) for _ in range(4)]
        True
    """

    _CHUNK = 1 << 16  # words fetched at a time

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._words: list[int] = []
        self._pos = 0

    def _take(self, count: int) -> list[int]:
        """The next ``count`` 32-bit words of the generator."""
        out: list[int] = []
        while len(out) < count:
            if self._pos >= len(self._words):
                n = max(self._CHUNK, count - len(out))
                self._words, self._pos = _words(self._rng.getrandbits(32 * n), n), 0
            j = min(len(self._words), self._pos + count - len(out))
            out += self._words[self._pos : j]
            self._pos = j
        return out

    def below(self, n: int, count: int) -> list[int]:
        """``count`` draws of ``randrange(n)`` (``n >= 1``)."""
        k = n.bit_length()
        if k > 32:  # pragma: no cover - a suite of 2**32 tasks
            if self._pos < len(self._words):
                raise RuntimeError("IndexDraws: mixing word sizes would reorder the draws")
            return [self._rng.randrange(n) for _ in range(count)]
        shift, kept = repeat(32 - k), n.__gt__
        out: list[int] = []
        while len(out) < count:  # each word gives at most one draw: never one word too many
            out += filter(kept, map(operator.rshift, self._take(count - len(out)), shift))
        return out


def _pct(xs: Sequence[float], q: float) -> float:
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    a, b = xs[lo], xs[hi]
    if a == b or math.isinf(a) or math.isinf(b):
        return a if pos - lo < 0.5 else b
    return a + (b - a) * (pos - lo)


def _interval(point: float, reps: Sequence[float], confidence: float, method: str) -> Interval:
    good = sorted(r for r in reps if not math.isnan(r))
    alpha = 1.0 - confidence
    if len(reps) - len(good) > alpha / 2 * len(reps) or not good:
        return Interval(
            point, _NAN, _NAN, confidence, method,
            f"{len(reps) - len(good)} of {len(reps)} replicates undefined",
        )  # fmt: skip
    low, high = _pct(good, alpha / 2), _pct(good, 1 - alpha / 2)
    if not math.isinf(point):
        low, high = min(low, point), max(high, point)
    return Interval(point, low, high, confidence, method)


def bootstrap_differences(
    boots: Sequence[MetricBootstrap], confidence: float, n_resamples: int, seed: int
) -> list[Interval]:
    """Each metric's percentile interval of current - baseline, in the order given.

    Metrics whose draws coincide (:attr:`MetricBootstrap.key`) are resampled in one pass; a
    metric whose aggregate is undefined (NaN) on the runs themselves draws nothing.
    """
    points = [b.values[0] - b.values[1] for b in boots]
    reps: dict[int, list[float]] = {}
    groups: dict[tuple[int, int, bool], list[int]] = {}
    for i, (b, point) in enumerate(zip(boots, points)):
        if not math.isnan(point):
            groups.setdefault(b.key, []).append(i)
            reps[i] = []
    for (nc, nb, paired), members in groups.items():
        draws = IndexDraws(seed)  # the draws of random.Random(seed).randrange, in bulk
        for _ in range(n_resamples):
            ic = draws.below(nc, nc)
            ib = ic if paired else draws.below(nb, nb)
            for i in members:
                reps[i].append(boots[i].replicate(ic, ib))
    out = []
    for i, (b, point) in enumerate(zip(boots, points)):
        method = b.method(n_resamples, seed)
        if i not in reps:
            out.append(
                Interval(_NAN, _NAN, _NAN, confidence, method, "an aggregate is undefined (NaN)")
            )
        else:
            out.append(_interval(point, reps[i], confidence, method))
    return out
