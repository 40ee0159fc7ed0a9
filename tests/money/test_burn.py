"""Burn prices: the defaults, the chain's, and a plan's copy read back from XCom."""

from __future__ import annotations

from decimal import Decimal

import pytest

from airflow_provider_tronenergy.money.burn import DEFAULT_PRICES, BurnPrices
from airflow_provider_tronenergy.money.quote import Quote, burn_cost
from tronenergy_protocol.energy import (
    ACTIVATION_COST_SUN,
    BURN_SUN_PER_BANDWIDTH,
    BURN_SUN_PER_ENERGY,
)


def test_the_defaults_are_the_documented_constants_and_say_so():
    assert (DEFAULT_PRICES.energy_sun, DEFAULT_PRICES.bandwidth_sun,
            DEFAULT_PRICES.activation_sun) == (BURN_SUN_PER_ENERGY, BURN_SUN_PER_BANDWIDTH,
                                               ACTIVATION_COST_SUN)
    shown = DEFAULT_PRICES.to_dict()
    assert shown["source"] == {"energy_price": "default", "bandwidth_price": "default",
                               "activation_fee": "default", "energy_factor": "not read"}


def test_burn_cost_is_exact_at_any_price():
    assert DEFAULT_PRICES.burn_cost(130_285) == Decimal("13.0285")
    assert BurnPrices(energy_sun=210, source="chain").burn_cost(64_285) == Decimal("13.49985")
    assert burn_cost(64_285, 210) == Decimal("13.49985") and burn_cost(65_000) == Decimal("6.5")
    quote = Quote(energy=64_285, rent_time=Decimal(1), price_per_10k=Decimal("0.45"),
                  energy_cost=Decimal("2.892825"), burn_sun_per_energy=210)
    assert quote.to_dict()["burn_cost"] == "13.49985"


def test_a_plans_prices_read_back_as_they_were():
    prices = BurnPrices(energy_sun=210, bandwidth_sun=500, activation_sun=1_000_000,
                        source="chain", energy_factor=10_000)
    assert BurnPrices.of(prices.to_dict()) == prices
    assert prices.to_dict()["source"]["energy_factor"] == "chain"
    assert BurnPrices.of(None) == DEFAULT_PRICES == BurnPrices.of({})


@pytest.mark.parametrize("change", [
    {"energy_sun": 0}, {"energy_sun": "100"}, {"energy_sun": True}, {"energy_sun": 1.5},
    {"bandwidth_sun": -1}, {"activation_sun": 10**12}, {"source": {"energy_price": "guess"}},
    {"source": None},
])
def test_malformed_prices_are_refused(change):
    with pytest.raises(ValueError):
        BurnPrices.of({**BurnPrices(source="chain").to_dict(), **change})
