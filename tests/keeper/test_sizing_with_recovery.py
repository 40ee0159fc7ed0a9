"""The keeper's renewal sizing against usage that recovers (issue 37's recheck).

The keeper reads ``EnergyUsed`` at one block and sizes a renewal by what the wallet
would have once the ending rental took its share of the usage back
(``WalletView.available_after``). On chain the usage keeps recovering until the rental
ends (java-tron's ``ResourceProcessor``, the sandbox's ``chain/recovery.py``), and the
undelegation then moves ``usage x rented / limit`` (``UnDelegateResourceActuator``, the
sandbox's ``ChainLedger._return_delegations``). So what the chain leaves is never less
than what the keeper counted on: its renewal never buys too little because usage
recovered, and it buys at most the recovery of the renew window (a few blocks' worth)
more than needed.
"""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.keeper.decide import WalletView
from tronenergy_sandbox.chain.recovery import WINDOW_SLOTS, recovered

WALLET = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"
RENEW_BLOCKS = 200  # 600 s of renew_before_seconds, in 3 s blocks


def _left_on_chain(limit: int, used: int, rented: int, blocks: int) -> int:
    """What the chain leaves: usage recovered over ``blocks``, then the rental's share moved."""
    now_used = recovered(used, 1, 1 + blocks)
    moved = min(rented, now_used * rented // limit)
    return max(0, (limit - rented) - (now_used - moved))


@pytest.mark.parametrize("blocks", [0, 1, RENEW_BLOCKS, WINDOW_SLOTS // 2])
@pytest.mark.parametrize(("limit", "used", "rented"), [
    (800_000, 453_425, 800_000), (1_310_601, 445_542, 800_000), (900_000, 899_999, 400_000),
    (500_000, 64_285, 100_000)])
def test_what_the_keeper_counts_on_is_never_more_than_the_chain_leaves(limit, used, rented,
                                                                       blocks):
    counted = WalletView(WALLET, limit=limit, used=used, now=0.0).available_after(rented)
    left = _left_on_chain(limit, used, rented, blocks)
    assert counted <= left
    if blocks <= RENEW_BLOCKS:  # within the renew window: the recovery of a few blocks
        assert left - counted <= used * blocks // WINDOW_SLOTS + 2
