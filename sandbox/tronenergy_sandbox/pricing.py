"""The sandbox's price list and energy rules (decisions.md section 5).

Amounts are integer sun here; the HTTP layer turns them into TRX decimals.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Any, Final

from tronenergy_protocol import energy

SUN_PER_TRX: Final = 1_000_000
ENERGY_PER_TRANSFER: Final = energy.ENERGY_PER_TRANSFER
ENERGY_FIRST_TRANSFER: Final = energy.ENERGY_FIRST_TRANSFER
ACTIVATION_COST_SUN: Final = energy.ACTIVATION_COST_SUN
BURN_SUN_PER_ENERGY: Final = energy.BURN_SUN_PER_ENERGY
MIN_ENERGY: Final = 32_000
MAX_ENERGY: Final = 5_000_000
TOKEN_FOR_ESTIMATES: Final = "USDT"

# Price of 10,000 energy, in sun, by rental duration in hours.
PRICE_PER_10K_SUN: Final[dict[Decimal, int]] = {
    Decimal("0.08"): 300_000,
    Decimal("0.17"): 330_000,
    Decimal("0.25"): 360_000,
    Decimal("1"): 450_000,
    Decimal("24"): 900_000,
}

# rent_time values each endpoint accepts. The spec lists price (0.08, 0.17, 1)
# and smart-buy (0.25, 1, 24); buy, auto-buy and buy-count follow smart-buy,
# because the spec groups every purchase endpoint under one rent_time rule.
PRICE_RENT_TIMES: Final = frozenset({Decimal("0.08"), Decimal("0.17"), Decimal("1")})
PURCHASE_RENT_TIMES: Final = frozenset({Decimal("0.25"), Decimal("1"), Decimal("24")})


def energy_cost_sun(energy: int, rent_time: Decimal) -> int:
    """Rental cost, rounded up to the next sun (the service never undercharges)."""
    exact = Decimal(energy) * PRICE_PER_10K_SUN[rent_time] / Decimal(10_000)
    return int(exact.to_integral_value(rounding=ROUND_CEILING))


def sun_to_trx(sun: int) -> Decimal:
    return (Decimal(sun) / SUN_PER_TRX).quantize(Decimal("0.000001"))


def trx_to_sun(trx: Decimal) -> int:
    sun = trx * SUN_PER_TRX
    if sun != sun.to_integral_value():
        raise ValueError("amount has more than 6 decimal places")
    return int(sun)


def quote(rent_time: Decimal) -> dict[str, Any]:
    """The price endpoint's answer for one rental duration."""
    return {
        "price_65k_1hour": sun_to_trx(energy_cost_sun(ENERGY_PER_TRANSFER, Decimal("1"))),
        "price_per_10k": sun_to_trx(PRICE_PER_10K_SUN[rent_time]),
        "energy_per_transfer": ENERGY_PER_TRANSFER,
        "min_energy": MIN_ENERGY,
        "max_energy": MAX_ENERGY,
        "rent_time": rent_time,
    }
