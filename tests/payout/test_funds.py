"""The fee_limit comes from the chain's price and the estimate; shortfalls are all named."""

from __future__ import annotations

from decimal import Decimal

import pytest

from airflow_provider_tronenergy.payout.funds import (
    FeeLimitPolicy,
    Funds,
    PayoutRefused,
    refuse_unless_payable,
)

SENDER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


def test_fee_limit_is_the_estimate_at_the_chain_price_with_a_margin_and_a_cap():
    policy = FeeLimitPolicy(margin=Decimal("0.2"), max_trx=Decimal("100"))
    assert policy.fee_limit_sun(64_285, 100) == 7_714_200
    assert policy.fee_limit_sun(64_285, 210) == 16_199_820  # a price rise lifts it
    assert FeeLimitPolicy(max_trx=Decimal(5)).fee_limit_sun(130_285, 100) == 5_000_000


@pytest.mark.parametrize("kwargs", [{"margin": Decimal(-1)}, {"max_trx": Decimal(0)},
                                    {"max_trx": Decimal(15_001)}, {"margin": 0.2}])
def test_a_bad_policy_is_refused(kwargs):
    with pytest.raises(ValueError):
        FeeLimitPolicy(**kwargs)


def funds(**kw) -> Funds:
    base = dict(sender=SENDER, units_needed=10, units_held=10, energy_needed=100_000,
                energy_available=100_000, bandwidth_needed=700, bandwidth_available=700,
                trx_held_sun=0, energy_fee_sun=100, bandwidth_fee_sun=1000, max_burn_sun=0)
    return Funds(**{**base, **kw})


def test_a_covered_batch_passes():
    refuse_unless_payable(funds(), signer_address=SENDER, token="USDT", decimals=6)


def test_every_shortfall_is_named_with_the_signer_first():
    short = funds(units_held=4, energy_available=40_000, bandwidth_available=0,
                  trx_held_sun=1_000_000, max_burn_sun=2_000_000)
    with pytest.raises(PayoutRefused) as info:
        refuse_unless_payable(short, signer_address="TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7",
                              token="USDT", decimals=6)
    lines = str(info.value).splitlines()
    assert lines[1].strip().startswith("signer:")
    assert any("tokens:" in line and "0.000004 USDT" in line for line in lines)
    # 60,000 energy x 100 = 6 TRX burned for energy: over the 2 TRX cap; with 700 bytes of
    # bandwidth x 1,000 sun, 6.7 TRX to burn in all: over the 1 TRX held
    assert any("energy:" in line and "cost 6 TRX" in line for line in lines)
    assert any("TRX:" in line and "needs 6.7 TRX" in line for line in lines)


def test_max_burn_caps_the_energy_burn_only_bandwidth_needs_trx():
    bandwidth_only = funds(bandwidth_available=0, trx_held_sun=700_000)
    refuse_unless_payable(bandwidth_only, signer_address=SENDER, token="USDT", decimals=6)
    with pytest.raises(PayoutRefused, match="TRX: burning"):
        refuse_unless_payable(funds(bandwidth_available=0, trx_held_sun=699_999),
                              signer_address=SENDER, token="USDT", decimals=6)


def test_burning_within_max_burn_is_allowed_when_the_trx_is_there():
    ok = funds(energy_available=90_000, trx_held_sun=2_000_000, max_burn_sun=1_000_000)
    refuse_unless_payable(ok, signer_address=SENDER, token="USDT", decimals=6)
