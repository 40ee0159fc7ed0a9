"""What the chain burns instead: the prices every saving is measured against.

A saving is "burning TRX would have cost X, renting cost Y". X is the chain's:
sun per energy and per bandwidth byte, and what creating an account burns. The
chain changes them by proposal (the energy price went from 210 to 100 sun in
August 2025), so with a ``tron_node`` connection a run reads them once from the
node (:func:`~airflow_provider_tronenergy.payout.onchain.read_prices`) and every
figure it reports names where it came from: ``chain``, or ``default`` (the
documented constants of :mod:`~tronenergy_protocol.energy`,
mainnet's values when they were written) when no node was asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from tronenergy_protocol.energy import (
    ACTIVATION_COST_SUN,
    BURN_SUN_PER_BANDWIDTH,
    BURN_SUN_PER_ENERGY,
)

SUN: Final = Decimal("0.000001")
CHAIN: Final = "chain"
DEFAULT: Final = "default"
MAX_PRICE_SUN: Final = 100 * 1_000_000
"""No one of these prices reaches 100 TRX; a recorded one that does is not believed."""


@dataclass(frozen=True)
class BurnPrices:
    """Sun per energy, sun per bandwidth byte, sun per account created; and where from."""

    energy_sun: int = BURN_SUN_PER_ENERGY
    bandwidth_sun: int = BURN_SUN_PER_BANDWIDTH
    activation_sun: int = ACTIVATION_COST_SUN
    source: str = DEFAULT
    """``chain`` (read from the run's node) or ``default`` (the documented constants)."""
    energy_factor: int | None = None
    """USDT's dynamic energy factor as the node reported it (None: not read)."""

    def burn_cost(self, energy: int) -> Decimal:
        """TRX burned for ``energy`` when none is on hand."""
        return (Decimal(energy) * self.energy_sun * SUN).quantize(SUN)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, for a plan, an event and a report: each figure with its source."""
        factor_source = self.source if self.energy_factor is not None else "not read"
        return {"energy_sun": self.energy_sun, "bandwidth_sun": self.bandwidth_sun,
                "activation_sun": self.activation_sun, "energy_factor": self.energy_factor,
                "source": {"energy_price": self.source, "bandwidth_price": self.source,
                           "activation_fee": self.source, "energy_factor": factor_source}}

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> BurnPrices:
        """Read :meth:`to_dict`'s form back (a plan from XCom); None or empty: the defaults."""
        if not data:
            return DEFAULT_PRICES
        try:
            source = data["source"]["energy_price"]
            factor = data.get("energy_factor")
            prices = cls(energy_sun=_price(data["energy_sun"]),
                         bandwidth_sun=_price(data["bandwidth_sun"]),
                         activation_sun=_price(data["activation_sun"], zero_ok=True),
                         source=source,
                         energy_factor=None if factor is None else _price(factor, zero_ok=True))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"burn prices are malformed: {exc!r}") from None
        if source not in (CHAIN, DEFAULT):
            raise ValueError(f"burn prices name an unknown source {source!r}")
        return prices


def _price(value: Any, *, zero_ok: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) \
            or not (0 if zero_ok else 1) <= value <= MAX_PRICE_SUN:
        raise ValueError(f"burn price {value!r} is not a whole number of sun in range")
    return value


DEFAULT_PRICES: Final = BurnPrices()
"""Today's constants, for a run without a node connection."""
