"""What a purchase will cost, worked out before anything is bought.

Pure arithmetic on the service's own price answer, in Decimal, rounded up to
the sun like the service charges, so the money guards compare like with like.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any

SUN = Decimal("0.000001")
ENERGY_PER_TRANSFER = 65_000
# A first transfer of a token to an address writes a new storage slot (decisions.md 5).
ENERGY_FIRST_TRANSFER = 131_000
ACTIVATION_COST = Decimal("1.1")
# Burning instead of renting costs 100 sun per energy.
BURN_TRX_PER_ENERGY = Decimal("0.0001")


def text(amount: Decimal) -> str:
    """Exact and JSON-safe: ``Decimal("6.500000")`` -> ``"6.5"``."""
    return format(amount.normalize(), "f")


def rental_cost(energy: int, price_per_10k: Decimal) -> Decimal:
    return (Decimal(energy) * price_per_10k / 10_000).quantize(SUN, rounding=ROUND_CEILING)


def burn_cost(energy: int) -> Decimal:
    return (Decimal(energy) * BURN_TRX_PER_ENERGY).quantize(SUN)


def transfer_energy(transfer_count: int) -> int:
    """Energy for one transfer to an address, from check-address's ``transfer_count``.

    1 means the recipient already holds the token (65,000); more means a first
    transfer, which costs 131,000 (not 2 x 65,000: the figure is the chain's).
    """
    return ENERGY_PER_TRANSFER if transfer_count <= 1 else ENERGY_FIRST_TRANSFER


@dataclass(frozen=True)
class Quote:
    energy: int
    rent_time: Decimal
    price_per_10k: Decimal
    energy_cost: Decimal
    activation_cost: Decimal = Decimal(0)

    @property
    def total(self) -> Decimal:
        return self.energy_cost + self.activation_cost

    @property
    def burn_cost(self) -> Decimal:
        return burn_cost(self.energy)

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
