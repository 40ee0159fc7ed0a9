"""The keeper's rules, one by one, on figures written out (keeper.decide): no chain needed."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from airflow_provider_tronenergy.client import ValidationRules
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.keeper.decide import (
    Action,
    Market,
    Rental,
    WalletView,
    decide,
)
from airflow_provider_tronenergy.keeper.policy import KeeperPolicy, KeeperPolicyError

WALLET = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"
POLICY = KeeperPolicy(floor=200_000, target=500_000, max_price_per_10k_trx=Decimal("0.5"),
                      max_daily_spend_trx=Decimal("100"), renew_before_seconds=600)
MARKET = Market(price_per_10k=Decimal("0.45"), min_energy=32_000, max_energy=5_000_000)


def view(limit: int, used: int = 0, **kw) -> WalletView:
    return WalletView(WALLET, limit=limit, used=used, now=1_000_000.0, **kw)


def test_below_the_floor_it_tops_up_to_the_target():
    d = decide(POLICY, view(150_000, used=30_000), MARKET, Decimal(0))
    assert (d.action, d.energy, d.cost) == (Action.BUY, 380_000, Decimal("17.1"))
    assert d.available == 120_000 and d.budget_left == Decimal(100)
    assert d.line() == (f"keeper {WALLET}: available 120,000, floor 200,000: buys "
                        "380,000 for 17.1 TRX; budget left 100 TRX; below the floor by 80,000")


def test_at_the_floor_it_holds_and_what_is_ordered_counts():
    held = decide(POLICY, view(200_000), MARKET, Decimal("40.5"))
    assert held.action is Action.HOLD
    assert held.line() == (f"keeper {WALLET}: available 200,000, floor 200,000: hold, buys "
                           "nothing; budget left 59.5 TRX; at or above the floor")
    # 50,000 on chain and 150,000 ordered, not delegated yet: a second wake buys nothing.
    d = decide(POLICY, view(50_000, incoming=150_000), MARKET, Decimal(0))
    assert d.action is Action.HOLD and "150,000 ordered, not on chain yet" in d.reason


def test_the_least_it_buys_is_the_services_minimum():
    d = decide(POLICY, view(495_000, used=296_000), MARKET, Decimal(0))  # 199,000: 1,000 short
    assert (d.action, d.energy) == (Action.BUY, 301_000)
    narrow = KeeperPolicy(floor=200_000, target=210_000, max_price_per_10k_trx=Decimal(1),
                          max_daily_spend_trx=Decimal(100))
    d = decide(narrow, view(199_000), MARKET, Decimal(0))
    assert d.energy == 32_000  # 11,000 needed; the service sells no fewer than 32,000


def test_a_rental_ending_soon_is_renewed_only_while_the_wallet_is_in_use():
    rentals = (Rental("o1", 300_000, ends_at=1_000_000.0 + 300),)  # ends in 5 min
    # 400,000 limit (100,000 staked, 300,000 rented), 100,000 used: 300,000 available now;
    # once the rental ends the chain takes back its share of the use: 300,000 x 1/4 = 75,000.
    # The next rental gets what was used lately plus the floor (300,000), less those 75,000.
    d = decide(POLICY, view(400_000, used=100_000, rentals=rentals), MARKET, Decimal(0))
    assert (d.action, d.energy) == (Action.BUY, 225_000)
    assert ("300,000 rented energy ends within 10 min while the wallet is in use (100,000 "
            "used lately, 75,000 would be left)") in d.reason
    # Busier: 390,000 used + the floor is above the target: up to the target, less what stays
    # (210,000 available x 300,000 / 600,000 of the limit staying).
    busy = decide(POLICY, view(600_000, used=390_000, rentals=rentals), MARKET, Decimal(0))
    assert (busy.action, busy.energy) == (Action.BUY, 500_000 - 105_000)
    idle = decide(POLICY, view(400_000, used=0, rentals=rentals), MARKET, Decimal(0))
    assert idle.action is Action.HOLD  # not in use: it may end
    later = (Rental("o1", 300_000, ends_at=1_000_000.0 + 900),)  # beyond renew_before_seconds
    assert decide(POLICY, view(400_000, used=100_000, rentals=later), MARKET,
                  Decimal(0)).action is Action.HOLD


def test_over_the_price_cap_nothing_is_bought():
    dear = Market(price_per_10k=Decimal("0.51"), min_energy=32_000, max_energy=5_000_000)
    d = decide(POLICY, view(0), dear, Decimal(0))
    assert (d.action, d.energy, d.cost) == (Action.CAPPED, 0, Decimal(0))
    assert "0.51 TRX per 10,000 energy is above the cap 0.5" in d.reason


def test_the_days_budget_cuts_the_purchase_or_stops_it():
    d = decide(POLICY, view(0), MARKET, spent_today=Decimal("90"))  # 10 TRX left
    assert d.action is Action.BUY and d.cost <= Decimal(10)
    assert d.energy == 222_222 and d.cost == Decimal("9.99999")
    assert "cut to what the day's budget has left" in d.reason
    d = decide(POLICY, view(0), MARKET, spent_today=Decimal("99"))  # 1 TRX: < 32,000
    assert (d.action, d.energy) == (Action.OVER_BUDGET, 0)
    assert ": over budget, buys nothing; budget left 1 TRX; below the floor" in d.line()
    d = decide(POLICY, view(0), MARKET, spent_today=Decimal("120"))  # overspent elsewhere
    assert d.action is Action.OVER_BUDGET and d.budget_left == 0


def test_above_the_approval_threshold_a_person_decides():
    asking = KeeperPolicy(floor=200_000, target=500_000, max_price_per_10k_trx=Decimal("0.5"),
                          max_daily_spend_trx=Decimal("100"), approval_above_trx=Decimal("20"))
    assert decide(asking, view(100_000), MARKET, Decimal(0)).action is Action.BUY  # 18 TRX
    d = decide(asking, view(0), MARKET, Decimal(0))  # 22.5 TRX
    assert (d.action, d.energy, d.cost) == (Action.ASK, 500_000, Decimal("22.5"))
    assert ": asks a person about 500,000 for 22.5 TRX; budget left 100 TRX" in d.line()


@pytest.mark.parametrize(("values", "says"), [
    ({"floor": "200000", "target": "100000"}, "target 100,000 must be above the floor"),
    ({"max_price_per_10k_trx": "0"},
     "max_price_per_10k_trx 0 TRX per 10,000 energy must be above 0"),
    ({"max_daily_spend_trx": "-1"}, "max_daily_spend_trx"),
    ({"rent_time": "0"}, "rent_time 0 h must be above 0"),
    ({"floor": "２００"}, "floor"),  # full-width digits are no number
    ({"floor": None}, "floor"),
    ({"floor": "2 transfers"}, "floor and target must both be energy, or both transfers"),
    ({"floor": "2 blocks"}, "floor"),
])
def test_a_policy_that_cannot_be_followed_is_refused(values, says):
    base = {"floor": "200000", "target": "500000", "max_price_per_10k_trx": "0.5",
            "max_daily_spend_trx": "100"}
    with pytest.raises(KeeperPolicyError, match="keeper policy refused") as refused:
        KeeperPolicy.from_values({**base, **values})
    assert says in str(refused.value)


@pytest.mark.parametrize(("hours", "says"), [
    ("0.08", "0.08 h is not both bought and quoted: must be one of 1 (purchases accept "
             "0.25, 1, 24, the price endpoint quotes 0.08, 0.17, 1)"),
    ("0.17", "must be one of 1"),
    ("24", "24 h is not both bought and quoted"),  # bought, but never quoted: no cap
])
def test_a_rent_time_the_service_refuses_is_refused_by_the_purchase_rule(hours, says):
    """The keeper's rent times are the purchase endpoints' (client.validation's rule, the
    one its purchases are checked by), within what the price endpoint quotes."""
    policy = KeeperPolicy.from_values({"floor": "200000", "target": "500000",
                                       "max_price_per_10k_trx": "0.5", "max_daily_spend_trx": "100",
                                       "rent_time": hours})
    with pytest.raises(KeeperPolicyError, match="keeper policy refused: rent_time: ") as no:
        policy.check_rent_time(ValidationRules())
    assert says in str(no.value)
    assert isinstance(no.value, NotRetryable)


def test_the_rent_time_follows_the_connections_rules():
    """1 h is bought and quoted by the spec's service; a connection whose service buys and
    quotes 0.08 h too (its ``purchase_rent_times`` extra) lets the keeper rent it."""
    POLICY.check_rent_time(ValidationRules())
    both = frozenset({Decimal("0.08"), Decimal(1)})
    replace(POLICY, rent_time=Decimal("0.08")).check_rent_time(
        ValidationRules(price_rent_times=both, buy_rent_times=both))


def test_a_policy_from_text_is_exact():
    policy = KeeperPolicy.from_values({"floor": "200000", "target": "500000",
                                       "max_price_per_10k_trx": "0.45",
                                       "max_daily_spend_trx": "12.5",
                                       "approval_above_trx": "", "rent_time": "1"})
    assert policy.to_dict() == {"floor": 200_000, "target": 500_000, "per_transfer": False,
                                "max_price_per_10k_trx": "0.45",
                                "max_daily_spend_trx": "12.5", "approval_above_trx": None,
                                "renew_before_seconds": 600.0, "rent_time": "1"}


def test_a_policy_in_transfers_is_in_energy_at_the_chains_figure():
    counted = KeeperPolicy.from_values({"floor": "3 transfers", "target": " 8 transfers ",
                                        "max_price_per_10k_trx": "0.5",
                                        "max_daily_spend_trx": "100"})
    assert (counted.floor, counted.target, counted.per_transfer) == (3, 8, True)
    energy = counted.in_energy(130_285)
    assert (energy.floor, energy.target, energy.per_transfer) == (390_855, 1_042_280, False)
    assert POLICY.in_energy(130_285) is POLICY
