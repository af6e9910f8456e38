"""Prices, dollars and Cost-of-Pass: the other half of the objective.

**No hard-coded prices.** A :class:`ModelPrice` is passed in (:func:`per_million` builds one) or
resolved from a catalogue you choose and version (:func:`load_prices` parses LiteLLM's MIT price
JSON: the data file, never the SDK). **With no rate, dollars are** ``None`` **, never a
fabricated** ``0.0``: a silent zero makes a costly agent look free. A token kind with a
non-zero count and no rate makes the total ``None`` and :func:`price_cost` names what was
unpriced.

**Cost-of-Pass** (Erol et al., 2025, arXiv:2504.13359) is the expected cost of one success,
``E[cost] / P(success) = sum(dollars) / sum(successes)``, and ``inf`` when nothing succeeded:
a model that never succeeds is not cheap, it is unusable.

Example:
    >>> from ek.agents.base import Cost
    >>> p = per_million(2.50, 10.00, cache_read=1.25)      # USD per million tokens
    >>> dollars(Cost(input_tokens=1_000_000, output_tokens=100_000), p)
    3.5
    >>> dollars(Cost(input_tokens=10), None) is None             # no rate: unknown, not free
    True
    >>> cost_of_pass(7.0, 2), cost_of_pass(7.0, 0)
    (3.5, inf)
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ek._validate import check_keys, check_mapping, finite, is_number, opt_str, short_repr, to_float
from ek.agents._episode import TOKEN_KINDS, Cost, Episode
from ek.base import ReadOnlyDict
from ek.jsonio import readable_file

__all__ = [
    "CostReport",
    "CostTally",
    "ModelPrice",
    "PricedCost",
    "UsageTotals",
    "check_pricing",
    "corpus_cost_of_pass",
    "cost_of_pass",
    "cost_report",
    "dollars",
    "episode_dollars",
    "load_prices",
    "per_million",
    "price_cost",
    "pricing_from_dict",
    "pricing_to_dict",
    "resolve_price",
]

_RATES = ("input", "output", "cache_read", "cache_write", "reasoning")


@dataclass(frozen=True)
class ModelPrice:
    """USD **per token** by token kind; ``None`` means "no rate known" (never read as 0).

    Args:
        input: Uncached input tokens.
        output: Output tokens (all of them, unless ``reasoning`` is set).
        cache_read: Input tokens read from a prompt cache.
        cache_write: Input tokens written to a prompt cache.
        reasoning: Reasoning tokens when priced apart from other output; ``None`` bills them
            at the ``output`` rate (they are part of output).
        model: The model this price is for (informational).
        source: Where the rates came from (a catalogue name and version, a URL, a date).
        extra: Other per-token rates a catalogue lists (audio, image, long-context tiers),
            kept for reference; :func:`dollars` does not apply them.

    Example:
        >>> ModelPrice(input=1e-6, output=2e-6).cache_read is None
        True
    """

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None
    model: str | None = None
    source: str | None = None
    extra: Mapping[str, float] = field(default_factory=ReadOnlyDict)

    def __post_init__(self) -> None:
        for k in _RATES:
            v = getattr(self, k)
            if v is not None:
                object.__setattr__(self, k, finite(f"ModelPrice.{k}", v, minimum=0.0))
        opt_str("ModelPrice.model", self.model)
        opt_str("ModelPrice.source", self.source)
        extra = check_mapping("ModelPrice.extra", self.extra)
        rates = {
            k: finite(f"ModelPrice.extra[{k!r:.60}]", v, minimum=0.0) for k, v in extra.items()
        }
        object.__setattr__(self, "extra", ReadOnlyDict(rates))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``None`` rates omitted)."""
        d: dict[str, Any] = {k: getattr(self, k) for k in _RATES if getattr(self, k) is not None}
        for k in ("model", "source"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        if self.extra:
            d["extra"] = dict(self.extra)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelPrice:
        """Inverse of :meth:`to_dict`."""
        allowed = {*_RATES, "model", "source", "extra"}
        check_keys("ModelPrice", data, allowed)
        return cls(**dict(data))


def check_pricing(
    price: Any, prices: Any
) -> tuple[ModelPrice | None, Mapping[str, ModelPrice] | None]:
    """``(price, prices)`` checked where a run, a metric or a report takes them: ``price`` a
    :class:`ModelPrice` or ``None``, ``prices`` a ``{model name: ModelPrice}`` mapping or
    ``None``; else a TypeError naming what was given.

    Example:
        >>> check_pricing(None, {1: per_million(1, 2)})
        Traceback (most recent call last):
        ...
        TypeError: prices must map model names (str) to ModelPrice, got key int: 1
    """
    if price is not None and not isinstance(price, ModelPrice):
        raise TypeError(
            f"price must be a ModelPrice or None, got {type(price).__name__}: {short_repr(price)}"
        )
    if prices is None:
        return price, None
    if not isinstance(prices, Mapping):
        raise TypeError(
            f"prices must be a {{model: ModelPrice}} mapping or None, got "
            f"{type(prices).__name__}: {short_repr(prices)}"
        )
    for m, p in prices.items():
        if not isinstance(m, str):
            raise TypeError(
                f"prices must map model names (str) to ModelPrice, got key "
                f"{type(m).__name__}: {short_repr(m)}"
            )
        if not isinstance(p, ModelPrice):
            raise TypeError(
                f"prices[{short_repr(m, 60)}] must be a ModelPrice, got {type(p).__name__}: "
                f"{short_repr(p)}"
            )
    return price, prices


def pricing_to_dict(
    price: ModelPrice | None, prices: Mapping[str, ModelPrice] | None
) -> dict[str, Any] | None:
    """A run's price setting as JSON-ready data (what a run store records), ``None`` for none.

    Example:
        >>> pricing_to_dict(ModelPrice(output=1e-5), None)
        {'price': {'output': 1e-05}}
        >>> pricing_from_dict(pricing_to_dict(None, {"m": ModelPrice(input=2e-6)}))
        (None, {'m': ModelPrice(input=2e-06, output=None, cache_read=None, cache_write=None, reasoning=None, model=None, source=None, extra={})})
    """
    if price is None and prices is None:
        return None
    if price is not None:
        return {"price": price.to_dict()}
    return {"prices": {m: p.to_dict() for m, p in (prices or {}).items()}}


def pricing_from_dict(
    data: Mapping[str, Any] | None,
) -> tuple[ModelPrice | None, dict[str, ModelPrice] | None]:
    """Inverse of :func:`pricing_to_dict`: ``(price, prices)``."""
    if data is None:
        return None, None
    if not isinstance(data, Mapping):
        raise TypeError(f"pricing must be a mapping or None, got {type(data).__name__}")
    if data.get("price") is not None:
        return ModelPrice.from_dict(data["price"]), None
    raw = data.get("prices")
    if raw is None:
        return None, None
    if not isinstance(raw, Mapping):
        raise TypeError(f"pricing['prices'] must be a mapping, got {type(raw).__name__}")
    return None, {str(m): ModelPrice.from_dict(p) for m, p in raw.items()}


def per_million(
    input: float,
    output: float,
    *,
    cache_read: float | None = None,
    cache_write: float | None = None,
    reasoning: float | None = None,
    model: str | None = None,
    source: str | None = None,
) -> ModelPrice:
    """A :class:`ModelPrice` from rates in USD **per million** tokens (as price pages quote them).

    Example:
        >>> per_million(3.0, 15.0).output
        1.5e-05
    """

    def conv(name: str, v: float | None) -> float | None:
        return None if v is None else finite(f"per_million({name})", v, minimum=0.0) / 1e6

    return ModelPrice(
        input=conv("input", input),
        output=conv("output", output),
        cache_read=conv("cache_read", cache_read),
        cache_write=conv("cache_write", cache_write),
        reasoning=conv("reasoning", reasoning),
        model=model,
        source=source,
    )


@dataclass(frozen=True)
class PricedCost:
    """The dollars of one :class:`Cost` and, when ``None``, which token kinds had no rate."""

    dollars: float | None
    unpriced: tuple[str, ...] = ()
    model: str | None = None
    source: str = "price"  # "price", "recorded" (the source's own bill), or "none"


def resolve_price(model: str | None, catalog: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """Find ``model`` in a ``{name: ModelPrice}`` catalogue, tolerating provider prefixes.

    Tries the exact name, then the name without its provider prefix(es) (``openai/gpt-4o`` ->
    ``gpt-4o``), then the unique catalogue entry whose unprefixed name equals it
    (``gpt-4o`` -> ``openai/gpt-4o`` when that is the only such key).

    Example:
        >>> cat = {"gpt-4o": per_million(2.5, 10), "vertex_ai/gemini-pro": per_million(1, 2)}
        >>> resolve_price("openai/gpt-4o", cat) is cat["gpt-4o"]
        True
        >>> resolve_price("gemini-pro", cat) is cat["vertex_ai/gemini-pro"]
        True
        >>> resolve_price("nope", cat) is None
        True
    """
    if model is None:
        return None
    if not isinstance(model, str):
        raise TypeError(f"model must be a str or None, got {type(model).__name__}")
    if not isinstance(catalog, Mapping):
        raise TypeError(
            f"catalog must be a mapping of model name to ModelPrice, got {type(catalog).__name__}"
        )
    if model in catalog:
        return catalog[model]
    parts = model.split("/")
    for i in range(1, len(parts)):
        tail = "/".join(parts[i:])
        if tail in catalog:
            return catalog[tail]
    base = parts[-1]
    hits = []
    for k in catalog:
        if not isinstance(k, str):
            raise TypeError(
                f"catalog must map model names (str) to ModelPrice, got key "
                f"{type(k).__name__}: {short_repr(k)}"
            )
        if k.rsplit("/", 1)[-1] == base:
            hits.append(k)
    if len(hits) == 1:
        return catalog[hits[0]]
    return None


def _price_of(
    model: str | None, price: ModelPrice | Mapping[str, ModelPrice] | None
) -> ModelPrice | None:
    """The price of ``model``'s costs: ``price`` itself, or its catalogue entry for ``model``."""
    if price is None or isinstance(price, ModelPrice):
        return price
    if isinstance(price, Mapping):
        return resolve_price(model, price)
    raise TypeError(
        f"price must be a ModelPrice, a {{model: ModelPrice}} catalogue or None, got {short_repr(price)}"
    )


def price_cost(cost: Cost, price: ModelPrice | Mapping[str, ModelPrice] | None) -> PricedCost:
    """Price one :class:`Cost` and say what could not be priced.

    A rate you pass wins over dollars the source recorded; with neither, the result is
    ``None``. Reasoning tokens are part of output: without a reasoning rate they are billed at
    the output rate.

    Example:
        >>> from ek.agents.base import Cost
        >>> price_cost(Cost(input_tokens=5, cache_read_tokens=5), per_million(1, 1)).unpriced
        ('cache_read_tokens',)
    """
    if not isinstance(cost, Cost):
        raise TypeError(f"price_cost expects a Cost, got {type(cost).__name__}: {short_repr(cost)}")
    p = _price_of(cost.model, price)
    if p is None:
        if cost.dollars is not None:
            return PricedCost(cost.dollars, (), cost.model, "recorded")
        kinds = tuple(k for k in TOKEN_KINDS if k != "reasoning_tokens" and getattr(cost, k))
        return PricedCost(None, kinds or ("all",), cost.model, "none")
    reasoning = cost.reasoning_tokens if p.reasoning is not None else 0  # else billed as output
    total = 0.0
    unpriced: list[str] = []
    for kind, n, rate in (
        ("input_tokens", cost.input_tokens, p.input),
        ("cache_read_tokens", cost.cache_read_tokens, p.cache_read),
        ("cache_write_tokens", cost.cache_write_tokens, p.cache_write),
        ("output_tokens", cost.output_tokens - reasoning, p.output),
        ("reasoning_tokens", reasoning, p.reasoning),
    ):
        if n == 0:
            continue
        if rate is None:
            unpriced.append(kind)
        else:
            total += n * rate
    if unpriced:
        return PricedCost(None, tuple(unpriced), cost.model, "price")
    return PricedCost(total, (), cost.model, "price")


def dollars(cost: Cost, price: ModelPrice | Mapping[str, ModelPrice] | None) -> float | None:
    """The dollars of ``cost`` under ``price`` (a :class:`ModelPrice` or a catalogue).

    ``None`` when any used token kind has no rate (never ``0.0``); see :func:`price_cost` for
    which kinds were unpriced.
    """
    return price_cost(cost, price).dollars


def episode_dollars(
    episode: Episode,
    price: ModelPrice | Mapping[str, ModelPrice] | None = None,
    *,
    role: str | None = "agent",
) -> float | None:
    """The summed dollars of an episode's costs of ``role`` (``None`` = every role).

    ``None`` when any of them is unpriced, or when the episode recorded no usage at all
    (unknown usage is not zero usage).

    Example:
        >>> from ek.agents.base import Cost, Episode
        >>> ep = Episode("t", cost=[Cost(input_tokens=10**6), Cost(output_tokens=10**6, role="judge")])
        >>> episode_dollars(ep, per_million(1, 2)), episode_dollars(ep, per_million(1, 2), role=None)
        (1.0, 3.0)
    """
    if not isinstance(episode, Episode):
        raise TypeError(f"episode_dollars expects an Episode, got {type(episode).__name__}")
    costs = episode.costs(role)
    if not costs:
        return None
    total = 0.0
    for c in costs:
        d = dollars(c, price)
        if d is None:
            return None
        total += d
    return total


def cost_of_pass(total_dollars: float | None, successes: float) -> float | None:
    """Cost-of-Pass = ``sum(dollars) / sum(successes)`` (arXiv:2504.13359).

    Returns ``inf`` when nothing succeeded (infeasible: not cheap) and ``None`` when the dollars
    are unknown.

    Raises:
        ValueError: negative or non-finite inputs.
    """
    if not is_number(successes):
        raise TypeError(f"successes must be a number, got {short_repr(successes)}")
    if not math.isfinite(to_float("successes", successes)) or successes < 0:
        raise ValueError(f"successes must be a finite number >= 0, got {short_repr(successes)}")
    if total_dollars is None:
        return None
    d = finite("total_dollars", total_dollars, minimum=0.0)
    if successes == 0:
        return math.inf  # nothing succeeded: the cost of one success is unbounded
    return d / successes


def corpus_cost_of_pass(parts: Iterable[tuple[float | None, float]]) -> float:
    """Cost-of-Pass of a corpus from each item's ``(dollars, successes)``: THE rule.

    :func:`cost_of_pass` of the summed dollars and summed successes (a ratio of two sums, never
    a mean of per-item ratios): ``inf`` when nothing succeeded. NaN when there is no item, or
    when any item's dollars are unknown (``None`` or NaN: an unknown part makes the total
    unknown) or its successes are NaN. :meth:`ek.agents.metrics.CostPerSuccessMetric.aggregate`,
    the Inspect adapter's ``ek/cost_of_pass_metric`` and its epoch reducers all call it.

    Raises:
        ValueError: negative dollars or successes.

    Example:
        >>> corpus_cost_of_pass([(0.5, 1), (1.5, 0), (1.0, 1)])    # (0.5 + 1.5 + 1.0) / 2
        1.5
        >>> corpus_cost_of_pass([(1.0, 0)]), corpus_cost_of_pass([(1.0, 1), (None, 1)])
        (inf, nan)
    """
    total, succ, n = 0.0, 0.0, 0
    for d, c in parts:
        n += 1
        if d is None or math.isnan(d) or math.isnan(c):
            return math.nan
        total += d
        succ += c
    if n == 0:
        return math.nan
    cop = cost_of_pass(total, succ)
    return math.nan if cop is None else cop


@dataclass(frozen=True)
class UsageTotals:
    """Summed tokens by kind and dollars (``None`` when any part was unpriced) for one group."""

    tokens: Mapping[str, int]
    dollars: float | None
    n_costs: int
    unpriced: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "tokens": dict(self.tokens),
            "dollars": self.dollars,
            "n_costs": self.n_costs,
            "unpriced": list(self.unpriced),
        }


@dataclass(frozen=True)
class CostReport:
    """Where the money went, and what one success costs.

    ``total`` covers every role; ``agent_dollars`` and ``cost_of_pass`` count only the agent's
    spend (the simulator's and the judge's are shown apart in ``by_role``).
    """

    n_episodes: int
    successes: int
    total: UsageTotals
    by_role: Mapping[str, UsageTotals]
    by_model: Mapping[str, UsageTotals]
    agent_dollars: float | None
    cost_of_pass: float | None
    unpriced_models: tuple[str, ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``inf`` written as the string ``"inf"``)."""
        cop = self.cost_of_pass
        return {
            "n_episodes": self.n_episodes,
            "successes": self.successes,
            "total": self.total.to_dict(),
            "by_role": {k: v.to_dict() for k, v in self.by_role.items()},
            "by_model": {k: v.to_dict() for k, v in self.by_model.items()},
            "agent_dollars": self.agent_dollars,
            "cost_of_pass": "inf" if cop is not None and math.isinf(cop) else cop,
            "unpriced_models": list(self.unpriced_models),
            "reason": self.reason,
        }


#: A cost's token counts, in :data:`TOKEN_KINDS` order.
_token_counts = operator.attrgetter(*TOKEN_KINDS)

#: What :class:`CostTally` adds of one cost: its role and model (``"<unknown>"`` when
#: unnamed), its token counts in :data:`TOKEN_KINDS` order, and its price.
_Prepared = tuple[tuple[str, str], tuple[int, ...], "PricedCost"]


#: A dollar amount this large is summed as a plain float (the exact sum of many of them could
#: overflow while it is kept; dollars are never negative, so the result is then infinite).
_HUGE_DOLLARS = 2.0**960


class _Group:
    """The costs of one (role, model) group: their number, token sums and dollars.

    Dollars are summed exactly (Shewchuk's non-overlapping partials, what :func:`math.fsum`
    keeps), so a sum does not depend on the order the costs were added in, nor on how the
    episodes were split between tallies that are merged later: every reader of a run reports
    the same figure. One unpriced cost makes the group's dollars unknown.
    """

    __slots__ = ("huge", "n", "partials", "tokens", "unknown", "unpriced")

    def __init__(self) -> None:
        self.n = 0
        self.tokens = [0] * len(TOKEN_KINDS)
        self.partials: list[float] = []
        self.huge = 0.0  # dollars of _HUGE_DOLLARS or more (or infinite), summed plainly
        self.unknown = False
        self.unpriced: set[str] = set()

    def add(self, tokens: Sequence[int], pc: PricedCost) -> None:
        self.n += 1
        self.tokens = list(map(operator.add, self.tokens, tokens))
        if pc.dollars is None:
            self.unknown = True
            self.unpriced.update(pc.unpriced)
        elif not self.unknown:
            self.add_dollars(pc.dollars)

    def add_dollars(self, x: float) -> None:
        if not x < _HUGE_DOLLARS:
            self.huge += x
            return
        partials, i = self.partials, 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    def absorb(self, other: _Group) -> None:
        """Add another tally's group of the same key (exactly, as if its costs were added)."""
        self.n += other.n
        self.tokens = list(map(operator.add, self.tokens, other.tokens))
        self.unknown |= other.unknown
        self.unpriced |= other.unpriced
        self.huge += other.huge
        for x in other.partials:
            self.add_dollars(x)


def _totals(groups: Sequence[_Group], unknown: bool = False) -> UsageTotals:
    """The totals of several groups (``unknown``: their dollars are unknown whatever they hold)."""
    n = sum(g.n for g in groups)
    tokens = [sum(col) for col in zip(*(g.tokens for g in groups))] or [0] * len(TOKEN_KINDS)
    usd: float | None = None
    if n and not unknown and not any(g.unknown for g in groups):
        parts = [x for g in groups for x in g.partials]
        huge = sum(g.huge for g in groups)
        usd = math.fsum(parts) + huge if huge else math.fsum(parts)
    unpriced = sorted(set().union(*(g.unpriced for g in groups)))
    return UsageTotals(ReadOnlyDict(zip(TOKEN_KINDS, tokens)), usd, n, tuple(unpriced))


class CostTally:
    """:func:`cost_report` one episode at a time: memory independent of the episodes' number.

    ``add`` each episode's costs and verdict as they are read; :meth:`report` gives exactly the
    :class:`CostReport` that :func:`cost_report` gives for the same episodes in the same order
    (:func:`cost_report` is this tally run over a list).

    Example:
        >>> from ek.agents.base import Cost
        >>> t = CostTally(prices={"m": per_million(1.0, 4.0)})
        >>> t.add((Cost(input_tokens=10**6, model="m"),), True)
        >>> t.add((Cost(input_tokens=10**6, model="m"),), False)
        >>> r = t.report(); r.agent_dollars, r.successes, r.cost_of_pass
        (2.0, 1, 2.0)
    """

    def __init__(
        self,
        *,
        price: ModelPrice | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        price, prices = check_pricing(price, prices)
        self._src: ModelPrice | Mapping[str, ModelPrice] | None = (
            price if price is not None else prices
        )
        self._groups: dict[tuple[str, str], _Group] = {}  # (role, model) -> its costs
        self._unpriced: set[str] = set()
        self._resolved: dict[str | None, Any] = {}
        self.n_episodes = 0
        self.n_success = 0
        self._no_usage = 0

    def price(self, costs: Sequence[Cost]) -> list[PricedCost]:
        """The costs priced as this tally prices them (to :meth:`add` to several tallies that
        share a price, pricing once)."""
        src = self._src
        if not isinstance(src, Mapping):  # one price, none, or a wrong one (price_cost says)
            return [price_cost(c, src) for c in costs]
        out = []
        for c in costs:  # a catalogue: each model resolved once (the same price_cost result)
            if not isinstance(c, Cost):
                raise TypeError(
                    f"price_cost expects a Cost, got {type(c).__name__}: {short_repr(c)}"
                )
            model = c.model
            p = self._resolved.get(model, self)
            if p is self:
                p = self._resolved[model] = resolve_price(model, src)
            out.append(price_cost(c, p))
        return out

    def prepare(
        self, costs: Sequence[Cost], priced: Sequence[PricedCost] | None = None
    ) -> list[_Prepared]:
        """What :meth:`add_prepared` adds of an episode's costs: to add one episode to several
        tallies that share a price (a run's and its slices'), preparing and pricing once."""
        pcs = priced if priced is not None else self.price(costs)
        return [
            ((c.role, c.model or "<unknown>"), _token_counts(c), pc) for c, pc in zip(costs, pcs)
        ]

    def add(
        self, costs: Sequence[Cost], success: bool, priced: Sequence[PricedCost] | None = None
    ) -> None:
        """One episode: its costs (``Episode.cost``), whether it succeeded, and optionally
        the costs already priced by :meth:`price` of a tally with the same price."""
        self.add_prepared(self.prepare(costs, priced), success)

    def add_prepared(self, items: Sequence[_Prepared], success: bool) -> None:
        """One episode, its costs as :meth:`prepare` gave them, and whether it succeeded."""
        self.n_episodes += 1
        self.n_success += bool(success)
        agent = False
        groups = self._groups
        for key, tokens, pc in items:
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group()
            group.add(tokens, pc)
            if pc.dollars is None:
                self._unpriced.add(key[1])
            agent = agent or key[0] == "agent"
        if not agent:
            self._no_usage += 1  # unknown usage is not zero usage: agent dollars unknown

    @classmethod
    def merged(cls, parts: Sequence[CostTally]) -> CostTally:
        """One tally of several with the same price, each over other episodes (shards of a
        store read in several processes): the report of all the episodes, figures identical
        (dollars are summed exactly, whatever the order)."""
        out = cls(price=None, prices=None)
        if parts:
            out._src = parts[0]._src
        for p in parts:
            for key, group in p._groups.items():
                mine = out._groups.get(key)
                if mine is None:
                    mine = out._groups[key] = _Group()
                mine.absorb(group)
            out._unpriced |= p._unpriced
            out.n_episodes += p.n_episodes
            out.n_success += p.n_success
            out._no_usage += p._no_usage
        return out

    def report(self) -> CostReport:
        """The :class:`CostReport` of the episodes added so far."""
        n = self.n_episodes
        groups = self._groups
        roles = sorted({r for r, _ in groups})
        models = sorted({m for _, m in groups})
        agent = _totals([g for (r, _), g in groups.items() if r == "agent"], self._no_usage > 0)
        agent_dollars = agent.dollars if n else None
        cop = cost_of_pass(agent_dollars, self.n_success)
        return CostReport(
            n_episodes=n,
            successes=self.n_success,
            total=_totals(list(groups.values())),
            by_role=ReadOnlyDict(
                {r: _totals([g for (gr, _), g in groups.items() if gr == r]) for r in roles}
            ),
            by_model=ReadOnlyDict(
                {m: _totals([g for (_, gm), g in groups.items() if gm == m]) for m in models}
            ),
            agent_dollars=agent_dollars,
            cost_of_pass=cop,
            unpriced_models=tuple(sorted(self._unpriced)),
            reason=self._reason(agent_dollars, cop),
        )

    def _reason(self, agent_dollars: float | None, cop: float | None) -> str:
        """Why the report's Cost-of-Pass is what it is."""
        n = self.n_episodes
        if not n:
            return "no episodes"
        if agent_dollars is None:
            why = []
            if self._unpriced:
                why.append(f"no rate for {sorted(self._unpriced)}")
            if self._no_usage:
                why.append(f"{self._no_usage} episode(s) recorded no agent usage")
            return "agent dollars unknown: " + "; ".join(why)
        if cop is not None and math.isinf(cop):
            return f"${agent_dollars:.6g} spent and no success: Cost-of-Pass is infinite"
        return f"${agent_dollars:.6g} for {self.n_success} success(es) over {n} episode(s)"


def cost_report(
    episodes: Iterable[Episode],
    *,
    price: ModelPrice | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
    successes: Sequence[bool] | None = None,
) -> CostReport:
    """Totals by token kind, by role and by model, dollars, Cost-of-Pass, and unpriced models.

    Args:
        episodes: The episodes (all trials of a run).
        price: One price for every cost (wins over ``prices``).
        prices: A ``{model: ModelPrice}`` catalogue resolved per cost's model.
        successes: One verdict per episode; default: each episode's recorded ``success``
            (``None`` counts as not successful).

    Example:
        >>> from ek.agents.base import Cost, Episode
        >>> eps = [Episode("a", cost=Cost(input_tokens=10**6, model="m"), success=True),
        ...        Episode("b", cost=Cost(input_tokens=10**6, model="m"), success=False)]
        >>> r = cost_report(eps, prices={"m": per_million(1.0, 4.0)})
        >>> r.agent_dollars, r.successes, r.cost_of_pass
        (2.0, 1, 2.0)
    """
    eps = list(episodes)
    if successes is not None:
        if isinstance(successes, (str, bytes, Mapping)) or not isinstance(successes, Sequence):
            raise TypeError(
                f"cost_report: successes must be a sequence of bools (one per episode), got "
                f"{type(successes).__name__}"
            )
        successes = list(successes)
    if successes is not None and len(successes) != len(eps):
        raise ValueError(
            f"cost_report needs one success flag per episode, got {len(successes)} for {len(eps)} episodes"
        )
    tally = CostTally(price=price, prices=prices)
    for i, ep in enumerate(eps):
        if not isinstance(ep, Episode):
            raise TypeError(f"cost_report expects Episodes, item {i} is {type(ep).__name__}")
        tally.add(ep.cost, bool(successes[i]) if successes is not None else ep.success is True)
    return tally.report()


# ----------------------------------------------------------------------------- LiteLLM catalogue

#: LiteLLM field -> ModelPrice rate, for the standard tier.
_LITELLM_FIELDS = {
    "input_cost_per_token": "input",
    "output_cost_per_token": "output",
    "cache_read_input_token_cost": "cache_read",
    "cache_creation_input_token_cost": "cache_write",
    "output_cost_per_reasoning_token": "reasoning",
}
_TIERS = ("batches", "priority", "flex", "ultrafast")
# A LiteLLM field is a per-token rate when it reads "..._cost_per[_<kind>]_token..." or
# "..._token_cost...". Per-1k-token, per-second, per-character and per-image fields are other units.
_PER_TOKEN = re.compile(r"cost_per_(?:[a-z]+_)?token(?!s)|_token_cost")


def _tiered(field_name: str, tier: str | None) -> str:
    return field_name if tier is None else f"{field_name}_{tier}"


def load_prices(
    path: str | os.PathLike[str],
    *,
    tier: str | None = None,
    cache_fallback: bool = False,
    source: str | None = None,
) -> dict[str, ModelPrice]:
    """Parse LiteLLM's ``model_prices_and_context_window.json`` into ``{model: ModelPrice}``.

    The data file only, never the SDK. Rates are USD per token. ``sample_spec`` (documentation)
    is skipped; a missing rate stays ``None`` (unknown), an explicit ``0.0`` stays zero. Every
    other per-token rate the entry lists (audio, image, ``*_above_Nk_tokens`` long-context
    tiers, ``cache_creation_input_token_cost_above_1hr``, service tiers) is kept in
    ``ModelPrice.extra`` under its LiteLLM name; ek does not apply them, because an episode's
    :class:`Cost` sums many requests and long-context tiers are decided per request.

    Args:
        path: The JSON file.
        tier: A service tier (``"batches"``, ``"priority"``, ``"flex"``, ``"ultrafast"``) whose
            rates replace the standard ones where the entry lists them.
        cache_fallback: Bill cache reads/writes at the input rate when the entry has no cache
            rate, as LiteLLM's own calculator does. Off by default: ek prefers "unknown".
        source: Recorded in each price's ``source`` (default: the file name).

    Raises:
        ValueError: the file is not a JSON object, or ``tier`` is unknown.
    """
    if tier is not None and tier not in _TIERS:
        raise ValueError(f"tier must be one of {list(_TIERS)} or None, got {short_repr(tier)}")
    p = readable_file("load_prices", path)
    data = _price_file(p)
    src = source or os.path.basename(p)
    return {
        name: _litellm_price(name, entry, tier, cache_fallback, src)
        for name, entry in data.items()
        if name != "sample_spec" and isinstance(entry, dict)
    }


def _price_file(p: str) -> dict[str, Any]:
    """The JSON object a price file holds (a ValueError naming the file otherwise)."""
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except (ValueError, RecursionError) as e:  # not JSON, not UTF-8, or nested too deeply
        raise ValueError(
            f"{p}: not a JSON price file ({type(e).__name__}: {str(e)[:200]})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a JSON object of models, got {type(data).__name__}")
    return data


def _litellm_price(
    name: str, entry: Mapping[str, Any], tier: str | None, cache_fallback: bool, src: str
) -> ModelPrice:
    """One LiteLLM entry as a ModelPrice: the standard rates (the tier's where it lists
    them), and every other per-token rate in ``extra``."""
    rates: dict[str, float | None] = {}
    for lf, rate in _LITELLM_FIELDS.items():
        v = entry.get(_tiered(lf, tier), entry.get(lf)) if tier else entry.get(lf)
        rates[rate] = float(v) if is_number(v) else None
    if cache_fallback and rates["input"] is not None:
        for k in ("cache_read", "cache_write"):
            if rates[k] is None:
                rates[k] = rates["input"]
    used = {_tiered(lf, tier) for lf in _LITELLM_FIELDS} | set(_LITELLM_FIELDS)
    extra = {
        k: float(v)
        for k, v in entry.items()
        if k not in used and _PER_TOKEN.search(k) and is_number(v)
    }
    return ModelPrice(**rates, model=name, source=src, extra=extra)
