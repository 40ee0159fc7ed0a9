"""The chain's energy facts for a TRC20 (USDT) transfer, shared by client side and sandbox.

These are TRON's figures, not the service's prices (decisions.md section 5): a
transfer to an address that already holds the token writes one storage slot,
a first transfer writes a new one and costs about twice as much.

They are the documented defaults of a run without a ``tron_node`` connection. With
one, a run reads the chain's own prices and the node's per-recipient estimates
instead (:mod:`~airflow_provider_tronenergy.money.burn`), because the chain changes
them by proposal (today a transfer costs about 64,285 / 130,285 energy).
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

NEW_SLOT_ENERGY: Final = 15_000
"""What a first transfer adds before the contract's energy factor: java-tron's SSTORE of a
new slot (20,000) instead of a reset (5,000). At USDT's factor 34,000 (x 4.4): 66,000."""

ENERGY_FACTOR_DECIMAL: Final = 10_000
"""java-tron's ``DYNAMIC_ENERGY_FACTOR_DECIMAL``: an energy factor of 10,000 doubles each
instruction's energy (TIP-491)."""


def penalized(energy: int, energy_factor: int) -> int:
    """``energy`` of a contract's instructions with its dynamic-energy penalty (TIP-491)."""
    return energy + energy * energy_factor // ENERGY_FACTOR_DECIMAL
