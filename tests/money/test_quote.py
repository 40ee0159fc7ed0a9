"""What a purchase will cost: exact Decimal arithmetic, rounded up to the sun like the service."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_provider_tronenergy.money.quote import (
    ACTIVATION_COST,
    BURN_TRX_PER_ENERGY,
    SUN,
    Quote,
    allocate,
    burn_cost,
    hours,
    rental_cost,
    text,
    trx,
)
from tronenergy_sandbox import pricing


def test_the_chain_and_service_figures_in_trx():
    assert (Decimal("1.1"), Decimal("0.0001")) == (ACTIVATION_COST, BURN_TRX_PER_ENERGY)
    assert burn_cost(65_000) == Decimal("6.5")
    assert burn_cost(131_000) == Decimal("13.1")
    assert burn_cost(1) == SUN * 100


def test_a_rental_is_rounded_up_to_the_next_sun():
    """The service never undercharges, so neither does the quote the guards compare."""
    assert rental_cost(65_000, Decimal("0.45")) == Decimal("2.925")  # exact: kept
    # 33,333 x 0.123457 / 10,000 = 0.4115192181: up to the next whole sun.
    assert rental_cost(33_333, Decimal("0.123457")) == Decimal("0.411520")
    assert rental_cost(1, Decimal("0.000001")) == SUN  # a ten-thousandth of a sun: one sun


@given(energy=st.integers(min_value=1, max_value=10**9),
       price_sun=st.integers(min_value=1, max_value=10**9))
def test_a_rental_is_the_smallest_whole_sun_at_or_above_the_exact_cost(energy: int,
                                                                      price_sun: int):
    price = price_sun * SUN
    cost = rental_cost(energy, price)
    exact = Decimal(energy) * price / 10_000
    assert cost == cost.quantize(SUN)
    assert exact <= cost < exact + SUN


@pytest.mark.parametrize("rent_time", sorted(pricing.PRICE_PER_10K_SUN))
@pytest.mark.parametrize("energy", [32_000, 65_000, 65_001, 131_000, 4_999_999])
def test_the_quote_is_what_the_sandbox_charges(rent_time: Decimal, energy: int):
    price = pricing.quote(rent_time)["price_per_10k"]
    charged = pricing.sun_to_trx(pricing.energy_cost_sun(energy, rent_time))
    assert rental_cost(energy, price) == charged


def test_a_quote_totals_rental_and_activation_and_compares_with_burning():
    quote = Quote(energy=131_000, rent_time=Decimal(1), price_per_10k=Decimal("0.45"),
                  energy_cost=Decimal("5.895"), activation_cost=ACTIVATION_COST)
    assert quote.total == Decimal("6.995")
    assert quote.burn_cost == Decimal("13.1")
    plain = Quote(energy=65_000, rent_time=Decimal(1), price_per_10k=Decimal("0.45"),
                  energy_cost=Decimal("2.925"))
    assert plain.activation_cost == 0 and plain.total == Decimal("2.925")


def test_a_quote_as_a_dict_is_exact_text_json_can_carry():
    """No float anywhere: each amount is its exact decimal text, without trailing zeros."""
    quote = Quote(energy=65_000, rent_time=Decimal("0.25"), price_per_10k=Decimal("0.360000"),
                  energy_cost=Decimal("2.340000"), activation_cost=Decimal("1.100000"))
    shown = quote.to_dict()
    assert shown == {"energy": 65_000, "rent_time": "0.25", "price_per_10k": "0.36",
                     "energy_cost": "2.34", "activation_cost": "1.1", "total": "3.44",
                     "burn_cost": "6.5"}
    assert json.loads(json.dumps(shown)) == shown
    assert all(isinstance(value, (str, int)) for value in shown.values())


@pytest.mark.parametrize(("amount", "shown"), [
    (Decimal("6.500000"), "6.5"),
    (Decimal("1E+2"), "100"),  # never an exponent
    (Decimal("0.000001"), "0.000001"),
    (Decimal("0"), "0"),
    (Decimal("123456789.000010"), "123456789.00001"),
])
def test_text_is_exact_plain_decimal(amount: Decimal, shown: str):
    assert text(amount) == shown
    assert Decimal(text(amount)) == amount


@pytest.mark.parametrize(("rent_time", "shown"), [
    (Decimal("1"), "1 h"), (Decimal("24"), "24 h"), (Decimal("1.0"), "1 h"),
    (Decimal("0.25"), "15 min"), (Decimal("0.17"), "10 min"), (Decimal("0.08"), "5 min"),
    (Decimal("1.5"), "1.5 h"),
])
def test_hours_reads_like_a_person_would_say_it(rent_time: Decimal, shown: str):
    assert hours(rent_time) == shown


@pytest.mark.parametrize(("amount", "shown"), [
    (Decimal("2.925"), "2.93 TRX"),
    (Decimal("2.921"), "2.93 TRX"),  # rounded up: never shows less than is spent
    (Decimal("2.9"), "2.90 TRX"),
    (Decimal("1234.5"), "1,234.50 TRX"),
    (Decimal("0.000001"), "0.01 TRX"),
])
def test_trx_for_people_has_two_decimals_rounded_up(amount: Decimal, shown: str):
    assert trx(amount) == shown


def test_allocate_splits_to_the_sun_and_sums_exactly():
    """A per-recipient share of what was paid sums to what was paid (issue 25)."""
    assert allocate(Decimal("23.355"), [65_000] * 3 + [131_000] * 4) == \
        [Decimal("2.11137")] * 3 + [Decimal("4.255223")] * 2 + [Decimal("4.255222")] * 2
    assert allocate(Decimal("0.000001"), [1, 1, 1]) == [Decimal("0.000001"), 0, 0]
    assert allocate(Decimal("1"), [0, 0]) == [Decimal("0.5"), Decimal("0.5")]
    assert allocate(Decimal("1.5"), []) == []
    assert allocate(Decimal("0.0000015"), [1, 1]) == [Decimal("0.0000008"), Decimal("0.0000007")]


@given(st.integers(min_value=0, max_value=10**12),
       st.lists(st.integers(min_value=0, max_value=10**7), min_size=1, max_size=50))
def test_allocate_is_exact_and_within_a_sun_of_the_proportion(sun, weights):
    total = Decimal(sun) * SUN
    shares = allocate(total, weights)
    assert sum(shares) == total and len(shares) == len(weights)
    whole = sum(weights) or len(weights)
    for share, weight in zip(shares, weights, strict=True):
        exact = total * (weight if sum(weights) else 1) / whole
        assert abs(share - exact) < SUN
