"""What a purchase will cost, worked out before anything is bought.

Pure arithmetic on the service's own price answer, in Decimal, rounded up to
the sun like the service charges, so the money guards compare like with like.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any

from tronenergy_protocol.energy import (
    ACTIVATION_COST_SUN,
    BURN_SUN_PER_ENERGY,
    ENERGY_FIRST_TRANSFER,
    ENERGY_PER_TRANSFER,
    transfer_energy,
)

__all__ = ["ACTIVATION_COST", "BURN_TRX_PER_ENERGY", "ENERGY_FIRST_TRANSFER",
           "ENERGY_PER_TRANSFER", "Quote", "allocate", "burn_cost", "hours", "rental_cost",
           "text", "transfer_energy", "trx", "trx_exact"]

SUN = Decimal("0.000001")
ACTIVATION_COST = (ACTIVATION_COST_SUN * SUN).normalize()
BURN_TRX_PER_ENERGY = (BURN_SUN_PER_ENERGY * SUN).normalize()


def text(amount: Decimal) -> str:
    """Exact and JSON-safe: ``Decimal("6.500000")`` -> ``"6.5"``."""
    return format(amount.normalize(), "f")


def rental_cost(energy: int, price_per_10k: Decimal) -> Decimal:
    """What renting ``energy`` costs at the service's ``price_per_10k``, rounded up to the sun."""
    return (Decimal(energy) * price_per_10k / 10_000).quantize(SUN, rounding=ROUND_CEILING)


def burn_cost(energy: int, sun_per_energy: int = BURN_SUN_PER_ENERGY) -> Decimal:
    """TRX burned for ``energy`` at ``sun_per_energy`` (the chain's, else the default)."""
    return (Decimal(energy) * sun_per_energy * SUN).quantize(SUN)


def allocate(total: Decimal, weights: Sequence[int]) -> list[Decimal]:
    """``total`` split in proportion to ``weights``, to the sun, summing exactly to ``total``.

    A per-recipient share of what was paid must add up to what was paid: each
    share is rounded down to the sun (or ``total``'s finer unit) and the sun
    left over goes, one each, to the largest remainders, the earlier row first
    on a tie, so the split is the same on every run. All weights zero: equal
    shares.
    """
    if not weights:
        return []
    exponent = min(-6, int(total.as_tuple().exponent))
    units = int(total.scaleb(-exponent))  # exact: total has no finer digit
    shares = list(weights) if any(weights) else [1] * len(weights)
    whole = sum(shares)
    parts = [divmod(units * share, whole) for share in shares]
    left = units - sum(part for part, _ in parts)
    favoured = set(sorted(range(len(parts)), key=lambda i: (-parts[i][1], i))[:left])
    return [Decimal(part + (i in favoured)).scaleb(exponent)
            for i, (part, _) in enumerate(parts)]


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


def trx_exact(amount: Decimal) -> str:
    """The exact amount, as a report and an event show it: ``23.355`` -> ``23.355 TRX``.

    For a line that names money spent, which a person compares with the report
    and the event: two rounded decimals (23.36) would not match them.
    """
    return f"{text(amount)} TRX"
