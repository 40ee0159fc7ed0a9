"""The chain's energy facts for a TRC20 (USDT) transfer, shared by client side and sandbox.

These are TRON's figures, not the service's prices (decisions.md section 5): a
transfer to an address that already holds the token writes one storage slot,
a first transfer writes a new one and costs about twice as much.
"""

from __future__ import annotations

from typing import Final

ENERGY_PER_TRANSFER: Final = 65_000
"""Energy of one USDT transfer to an address that already holds USDT."""

ENERGY_FIRST_TRANSFER: Final = 131_000
"""Energy of a first USDT transfer to an address (a new storage slot)."""

BURN_SUN_PER_ENERGY: Final = 100
"""What the chain burns per energy (in sun) when no energy is staked or rented."""

ACTIVATION_COST_SUN: Final = 1_100_000
"""What the service charges to activate an address: 1.1 TRX (decisions.md section 5)."""


def transfer_energy(transfer_count: int) -> int:
    """Energy for one transfer to an address, from check-address's ``transfer_count``.

    1 means the recipient already holds the token (65,000); more means a first
    transfer, which costs 131,000 (not 2 x 65,000: the figure is the chain's).
    """
    return ENERGY_PER_TRANSFER if transfer_count <= 1 else ENERGY_FIRST_TRANSFER


BANDWIDTH_PER_TRANSFER: Final = 345
"""Bandwidth (bytes) of one USDT transfer (decisions.md section 5)."""

BURN_SUN_PER_BANDWIDTH: Final = 1_000
"""What the chain burns per bandwidth unit (in sun) beyond free and staked bandwidth."""
