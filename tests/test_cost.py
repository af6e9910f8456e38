"""Prices, dollars, Cost-of-Pass, cost reports and the LiteLLM catalogue parser."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from ek.agents.base import Cost, Episode
from ek.agents.cost import (
    ModelPrice,
    cost_of_pass,
    cost_report,
    dollars,
    episode_dollars,
    load_prices,
    per_million,
    price_cost,
    resolve_price,
)

PRICES = Path(__file__).parent / "data" / "prices" / "litellm_model_prices.json"


class TestDollars:
    def test_hand_derived(self) -> None:
        # 1M input at $2.50/M + 200k cache reads at $1.25/M + 100k output at $10/M
        # = 2.50 + 0.25 + 1.00 = 3.75
        p = per_million(2.50, 10.00, cache_read=1.25)
        c = Cost(input_tokens=1_000_000, cache_read_tokens=200_000, output_tokens=100_000)
        assert dollars(c, p) == pytest.approx(3.75)

    def test_reasoning_inside_output(self) -> None:
        # 100 output tokens of which 40 reasoning. No reasoning rate: all 100 at the output rate.
        c = Cost(output_tokens=100, reasoning_tokens=40)
        assert dollars(c, ModelPrice(input=0.0, output=1.0)) == 100.0
        # With a reasoning rate of 2: 60 * 1 + 40 * 2 = 140 (never 100 + 40 double counted)
        assert dollars(c, ModelPrice(input=0.0, output=1.0, reasoning=2.0)) == 140.0

    def test_no_rate_is_none_never_zero(self) -> None:
        assert dollars(Cost(input_tokens=5), None) is None
        pc = price_cost(Cost(input_tokens=5, cache_write_tokens=3), per_million(1, 1))
        assert pc.dollars is None and pc.unpriced == ("cache_write_tokens",)

    def test_explicit_zero_rate_is_zero(self) -> None:
        assert (
            dollars(Cost(cache_read_tokens=10), ModelPrice(input=1.0, output=1.0, cache_read=0.0))
            == 0.0
        )

    def test_recorded_dollars_used_when_no_price(self) -> None:
        c = Cost(input_tokens=10, dollars=0.42)
        assert price_cost(c, None).source == "recorded" and dollars(c, None) == 0.42
        # a price you pass wins over the recorded bill
        assert dollars(c, ModelPrice(input=1.0, output=1.0)) == 10.0

    def test_catalogue_resolution(self) -> None:
        cat = {"gpt-4o": per_million(2.5, 10), "vertex_ai/gemini-pro": per_million(1, 2)}
        assert dollars(Cost(input_tokens=10**6, model="openai/gpt-4o"), cat) == pytest.approx(2.5)
        assert resolve_price("gemini-pro", cat) is cat["vertex_ai/gemini-pro"]
        assert resolve_price(None, cat) is None
        # ambiguous unprefixed names are not guessed
        assert resolve_price("x", {"a/x": per_million(1, 1), "b/x": per_million(2, 2)}) is None

    def test_episode_dollars_roles(self) -> None:
        ep = Episode(
            "t",
            cost=[
                Cost(input_tokens=10**6, model="m"),
                Cost(output_tokens=10**6, model="m", role="judge"),
            ],
        )
        p = per_million(1, 2)
        assert episode_dollars(ep, p) == pytest.approx(1.0)
        assert episode_dollars(ep, p, role="judge") == pytest.approx(2.0)
        assert episode_dollars(Episode("t"), p) is None  # no usage recorded: unknown, not free

    def test_per_million_validates(self) -> None:
        with pytest.raises(ValueError, match=r"per_million\(input\) must be >= 0.0, got -1"):
            per_million(-1, 1)
        with pytest.raises(ValueError, match="unknown field"):
            ModelPrice.from_dict({"inputs": 1})


class TestCostOfPass:
    def test_values(self) -> None:
        assert cost_of_pass(6.0, 3) == 2.0
        assert cost_of_pass(6.0, 0) == math.inf  # never succeeds: unusable, not cheap
        assert cost_of_pass(None, 3) is None
        assert cost_of_pass(0.0, 0) == math.inf

    def test_validation(self) -> None:
        with pytest.raises(ValueError, match="successes must be a finite number >= 0, got -1"):
            cost_of_pass(1.0, -1)
        with pytest.raises(ValueError, match="total_dollars must be >= 0.0"):
            cost_of_pass(-1.0, 1)


class TestCostReport:
    def test_by_role_and_model(self) -> None:
        p = {"agent-m": per_million(1.0, 2.0), "judge-m": per_million(10.0, 10.0)}
        eps = [
            Episode(
                "a",
                success=True,
                cost=[
                    Cost(input_tokens=10**6, model="agent-m"),
                    Cost(input_tokens=10**5, model="judge-m", role="judge"),
                ],
            ),
            Episode("b", success=False, cost=[Cost(output_tokens=10**6, model="agent-m")]),
            Episode("c", success=True, cost=[Cost(input_tokens=10**6, model="agent-m")]),
        ]
        r = cost_report(eps, prices=p)
        # agent: 1 + 2 + 1 = $4 over 2 successes -> Cost-of-Pass $2; the judge's $1 is apart
        assert r.agent_dollars == pytest.approx(4.0)
        assert r.cost_of_pass == pytest.approx(2.0)
        assert r.by_role["judge"].dollars == pytest.approx(1.0)
        assert r.total.dollars == pytest.approx(5.0)
        assert r.by_model["agent-m"].tokens["input_tokens"] == 2 * 10**6
        assert r.unpriced_models == ()
        json.dumps(r.to_dict())

    def test_unpriced_model_named(self) -> None:
        eps = [Episode("a", success=True, cost=Cost(input_tokens=5, model="mystery"))]
        r = cost_report(eps, prices={"known": per_million(1, 1)})
        assert r.agent_dollars is None and r.cost_of_pass is None
        assert r.unpriced_models == ("mystery",)
        assert "mystery" in r.reason

    def test_zero_successes_infinite(self) -> None:
        r = cost_report(
            [Episode("a", success=False, cost=Cost(input_tokens=10))],
            price=ModelPrice(input=0.1, output=0.1),
        )
        assert r.cost_of_pass == math.inf and r.to_dict()["cost_of_pass"] == "inf"
        assert "infinite" in r.reason

    def test_successes_override_and_length_check(self) -> None:
        eps = [Episode("a", cost=Cost(input_tokens=10)), Episode("b", cost=Cost(input_tokens=10))]
        r = cost_report(eps, price=ModelPrice(input=1.0, output=1.0), successes=[True, False])
        assert r.successes == 1 and r.cost_of_pass == 20.0
        with pytest.raises(ValueError, match="one success flag per episode, got 1 for 2"):
            cost_report(eps, successes=[True])


@pytest.fixture(scope="module")
def catalog() -> dict[str, ModelPrice]:
    return load_prices(PRICES)


class TestLiteLLM:
    def test_counts_and_known_rates(self, catalog: dict[str, ModelPrice]) -> None:
        raw = json.loads(PRICES.read_text())
        assert "sample_spec" not in catalog
        assert len(catalog) == len([k for k in raw if k != "sample_spec"]) == 4877
        g = catalog["gpt-4o"]
        assert (g.input, g.output, g.cache_read, g.cache_write) == (2.5e-06, 1e-05, 1.25e-06, None)
        assert g.extra["input_cost_per_token_batches"] == 1.25e-06

    def test_every_per_token_field_is_read(self, catalog: dict[str, ModelPrice]) -> None:
        # Every per-token price field the file uses lands in a rate or in `extra`, with its value.
        raw = json.loads(PRICES.read_text())
        main = {
            "input_cost_per_token": "input",
            "output_cost_per_token": "output",
            "cache_read_input_token_cost": "cache_read",
            "cache_creation_input_token_cost": "cache_write",
            "output_cost_per_reasoning_token": "reasoning",
        }
        per_token = re.compile(r"cost_per_(?:[a-z]+_)?token(?!s)|_token_cost")
        seen: set[str] = set()
        for name, entry in raw.items():
            if name == "sample_spec":
                continue
            mp = catalog[name]
            for k, v in entry.items():
                if not per_token.search(k) or not isinstance(v, (int, float)):
                    continue
                seen.add(k)
                if k in main:
                    assert getattr(mp, main[k]) == float(v), (name, k)
                else:
                    assert mp.extra[k] == float(v), (name, k)
        # the field families named in the data README are all present
        for fam in [
            "cache_creation_input_token_cost_above_1hr",
            "input_cost_per_audio_token",
            "output_cost_per_audio_token",
            "input_cost_per_image_token",
            "cache_read_input_audio_token_cost",
            "input_cost_per_token_above_200k_tokens",
            "input_cost_per_token_priority",
            "input_cost_per_token_flex",
        ]:
            assert fam in seen, fam

    def test_missing_rate_is_unknown(self, catalog: dict[str, ModelPrice]) -> None:
        raw = json.loads(PRICES.read_text())
        name = next(
            k
            for k, v in raw.items()
            if k != "sample_spec"
            and "input_cost_per_token" in v
            and "cache_read_input_token_cost" not in v
        )
        mp = catalog[name]
        assert mp.cache_read is None
        assert dollars(Cost(cache_read_tokens=10, model=name), catalog) is None
        # LiteLLM's own fallback is opt-in
        fb = load_prices(PRICES, cache_fallback=True)[name]
        assert fb.cache_read == fb.input

    def test_provider_prefixed_names(self, catalog: dict[str, ModelPrice]) -> None:
        assert resolve_price("openai/gpt-4o", catalog) is catalog["gpt-4o"]
        d = dollars(Cost(input_tokens=10**6, output_tokens=10**6, model="openai/gpt-4o"), catalog)
        assert d == pytest.approx(2.5 + 10.0)
        prefixed = next(
            k
            for k in catalog
            if k.count("/") == 1
            and k.split("/")[1] not in catalog
            and sum(1 for j in catalog if j.rsplit("/", 1)[-1] == k.split("/")[1]) == 1
        )
        assert resolve_price(prefixed.split("/")[1], catalog) is catalog[prefixed]

    def test_service_tier(self) -> None:
        pri = load_prices(PRICES, tier="priority")["gpt-4o"]
        assert (pri.input, pri.output, pri.cache_read) == (4.25e-06, 1.7e-05, 2.125e-06)
        with pytest.raises(ValueError, match="tier must be one of"):
            load_prices(PRICES, tier="gold")

    def test_not_an_object(self, tmp_path: Path) -> None:
        p = tmp_path / "x.json"
        p.write_text("[1]")
        with pytest.raises(ValueError, match="expected a JSON object of models, got list"):
            load_prices(p)
