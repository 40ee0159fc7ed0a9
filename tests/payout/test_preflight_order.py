"""The pre-flight's reads in order: a transfer judged in a block newer than the head read
before the funds is still counted, since a lagging node's balance may not show it yet."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.payout.funds import (
    FundsInFlight,
    estimate_energy,
    read_funds,
    refuse_unless_payable,
)
from airflow_provider_tronenergy.payout.journal import PayoutState
from airflow_provider_tronenergy.payout.watch import still_in_flight
from support.chain import manual_chain
from support.payouts import Payouts


class LaggingNode:
    """The provider's node client, but its balance, TRX and resource answers are the ones it
    gave earlier: a busy public node whose backend answering them is some blocks behind."""

    def __init__(self, node: Any, sender: str) -> None:
        self.node = node
        self.stale = {"get_account": node.get_account(sender),
                      "get_resources": node.get_resources(sender),
                      "get_usdt_balance": node.get_usdt_balance(sender)}

    def __getattr__(self, name: str) -> Any:
        if name in self.stale:
            return lambda address: self.stale[name]
        return getattr(self.node, name)


def test_a_transfer_judged_after_the_head_counts_against_a_lagging_balance(tmp_path: Path):
    with manual_chain() as chain:
        world = Payouts(chain, tmp_path, usdt="10", staked=1_000_000)
        try:
            first = world.rows(world.recipients(2), amount="3", batch_id="a", ids=True)
            world.sender().send(first, sender=world.address, token="USDT", batch_id="a")
            lagging = LaggingNode(world.node, world.address)  # answers from before block N+1
            head = world.node.get_now_block()  # block N: read before the funds
            chain.blocks(2)  # the first batch lands in block N+1; a watch records it
            second, _ = estimate_energy(world.node, world.address, world.rows(
                world.recipients(2), amount="3", batch_id="b", ids=True))
            counted = still_in_flight(world.journal, world.node, world.address,
                                      solidified=False, after_ms=head.timestamp_ms,
                                      after_block=head.number)
            assert sorted(a.state for a in counted) == [PayoutState.CONFIRMED] * 2
            assert all(a.block_number is not None and a.block_number > head.number
                       for a in counted)
            funds = read_funds(lagging, world.address, second, max_burn_trx=Decimal(0),
                               in_flight=counted)
            assert funds.units_held == 10_000_000  # the lagging answer: nothing spent yet
            with pytest.raises(FundsInFlight):  # 10 - 6 leaves 4: the batch of 6 waits
                refuse_unless_payable(funds, signer_address=world.address, token="USDT",
                                      decimals=6)
            # A head read after that block: the balance read now shows them spent.
            later = world.node.get_now_block()
            assert still_in_flight(world.journal, world.node, world.address,
                                   solidified=False, after_ms=later.timestamp_ms,
                                   after_block=later.number) == []
        finally:
            world.close()
