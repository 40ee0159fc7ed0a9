"""What a purchase will cost, worked out before anything is bought.

Pure arithmetic on the service's own price answer, in Decimal, rounded up to
the sun like the service charges, so the money guards compare like with like.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any

from airflow_provider_tronenergy.protocol.energy import (
    ACTIVATION_COST_SUN,
    BURN_SUN_PER_ENERGY,
    ENERGY_FIRST_TRANSFER,
    ENERGY_PER_TRANSFER,
    transfer_energy,
)

__all__ = ["ACTIVATION_COST", "BURN_TRX_PER_ENERGY", "ENERGY_FIRST_TRANSFER",
           "ENERGY_PER_TRANSFER", "Quote", "burn_cost", "hours", "rental_cost", "text",
           "transfer_energy", "trx"]

SUN = Decimal("0.000001")
ACTIVATION_COST = (ACTIVATION_COST_SUN * SUN).normalize()
BURN_TRX_PER_ENERGY = (BURN_SUN_PER_ENERGY * SUN).normalize()


def text(amount: Decimal) -> str:
    """Exact and JSON-safe: ``Decimal("6.500000")`` -> ``"6.5"``."""
    return format(amount.normalize(), "f")


def rental_cost(energy: int, price_per_10k: Decimal) -> Decimal:
    return (Decimal(energy) * price_per_10k / 10_000).quantize(SUN, rounding=ROUND_CEILING)


def burn_cost(energy: int, sun_per_energy: int = BURN_SUN_PER_ENERGY) -> Decimal:
    """TRX burned for ``energy`` at ``sun_per_energy`` (the chain's, else the default)."""
    return (Decimal(energy) * sun_per_energy * SUN).quantize(SUN)


@dataclass(frozen=True)
class Quote:
    energy: int
    rent_time: Decimal
    price_per_10k: Decimal
    energy_cost: Decimal
    activation_cost: Decimal = Decimal(0)
    burn_sun_per_energy: int = BURN_SUN_PER_ENERGY

    @property
    def total(self) -> Decimal:
        return self.energy_cost + self.activation_cost

    @property
    def burn_cost(self) -> Decimal:
        return burn_cost(self.energy, self.burn_sun_per_energy)

    def to_dict(self) -> dict[str, Any]:
        return {
            "energy": self.energy,
            "rent_time": text(self.rent_time),
            "price_per_10k": text(self.price_per_10k),
            "energy_cost": text(self.energy_cost),
            "activation_cost": text(self.activation_cost),
            "total": text(self.total),
            "burn_cost": text(self.burn_cost),
        }


def hours(rent_time: Decimal) -> str:
    """``1`` -> ``1 h``, ``0.25`` -> ``15 min``, ``24`` -> ``24 h``."""
    if rent_time < 1:
        return f"{int((rent_time * 60).to_integral_value())} min"
    return f"{rent_time.normalize():f} h"


def trx(amount: Decimal) -> str:
    """Two decimals for people; the exact amount stays in the returned dict."""
    return f"{amount.quantize(Decimal('0.01'), rounding=ROUND_CEILING):,} TRX"
