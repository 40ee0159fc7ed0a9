"""The TRX pre-flight reads its recipients' TRX through the node connection's Multicall.

``plan_trx`` must know which recipients have an account (a transfer to one without creates
it, at a fee). With a Multicall named, ``getEthBalance`` (the TVM's ``BALANCE``) reads the
recipients' TRX ``multicall_chunk`` per request: a balance above 0 is an account; only those
holding 0 are read with ``getaccount`` (an account may hold 0 TRX). Counted on the sandbox's
side (a latency fault of 0 ms counts the requests it saw); the plan is then checked against
what the chain charges the transfers, to the sun.
"""

from __future__ import annotations

from collections.abc import Iterator
from math import ceil

import pytest
from node.test_trx_transfers import build, sign

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.tokens import TRX_TOKEN
from airflow_provider_tronenergy.payout.rows import payouts
from airflow_provider_tronenergy.payout.trx import plan_trx
from payout.test_preflight import Counting
from payout.test_preflight_multicall import counted
from support.chain import USDT, Chain, manual_chain
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.chain.multicall import MULTICALL

CONSTANT = "/wallet/triggerconstantcontract"
ACCOUNT = "/wallet/getaccount"


@pytest.fixture
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


def client(chain: Chain, **settings: object) -> TronNodeClient:
    return TronNodeClient(chain.sandbox.root_url, usdt_contract=USDT, max_retries=0,
                          **settings)  # type: ignore[arg-type]


def recipients(chain: Chain) -> tuple[list[str], str, list[str]]:
    """Three accounts holding TRX, one account holding none, two addresses without one."""
    holders = [chain.control.wallet(trx=str(n)) for n in (1, 2, 3)]
    emptied = chain.control.wallet(trx="1")
    chain.control.wallet(emptied, trx="0")  # the account stays: accounts are never removed
    return holders, emptied, [random_address(), random_address()]


def test_trx_balances_read_as_the_tvm_reads_them(chain):
    """``getEthBalance`` through ``aggregate``: an account's sun, 0 for an account holding
    none and for an address without an account; None without a Multicall."""
    holders, emptied, new = recipients(chain)
    everyone = [*holders, emptied, *new]
    with client(chain, multicall=MULTICALL, multicall_chunk=4) as node:
        assert node.get_trx_balances(holders[0], everyone) == {
            holders[0]: 1_000_000, holders[1]: 2_000_000, holders[2]: 3_000_000,
            emptied: 0, new[0]: 0, new[1]: 0}
        assert node.get_account(emptied).activated and not node.get_account(new[0]).activated
    with client(chain) as node:
        assert node.get_trx_balances(holders[0], everyone) is None


@pytest.mark.parametrize("multicall", [True, False])
def test_the_plan_reads_fewer_accounts_and_equals_the_chains_charges(chain, multicall):
    """A TRX batch to three holders, an account with 0 TRX and two new addresses (one paid
    twice). With a Multicall: one balances request and ``getaccount`` only for the three
    holding 0; without: ``getaccount`` for all six. Either way the plan creates exactly the
    two new accounts, and each transfer's fee is the one the chain charged, to the sun."""
    key, sender = chain.account(trx="50")
    holders, emptied, new = recipients(chain)
    amounts = [(holders[0], "1"), (new[0], "2"), (emptied, "1.5"), (holders[1], "1"),
               (new[1], "1"), (holders[2], "0.5"), (new[0], "1")]
    rows = payouts([{"recipient": to, "amount": amount, "token": "TRX"}
                    for to, amount in amounts], batch_id="trx-mc", tokens=lambda _: TRX_TOKEN)
    settings = {"multicall": MULTICALL, "multicall_chunk": 4} if multicall else {}
    constant, accounts = counted(chain, CONSTANT), counted(chain, ACCOUNT)
    with client(chain, **settings) as plain:
        node = Counting(plain)
        plan = plan_trx(node, sender, rows, signatures=1, permission_id=0, shared=False,
                        concurrency=4)
        assert plan.accounts_created == 2
        assert (constant(), accounts()) == ((ceil(6 / 4), 3) if multicall else (0, 6))
        assert node.calls["get_account"] == accounts()
        before = plain.get_account(sender).trx_sun
        fees = []
        for row in rows:
            tx = build(plain, sender, row.recipient, row.units)
            answer = plain.broadcast(sign(tx, key))
            assert answer.accepted, answer.describe()
            chain.blocks(1)
            info = plain.get_transaction_info(tx.txid)
            assert info is not None and info.succeeded
            fees.append(info.fee)
        assert [c.fee_sun for c in plan.costs] == fees
        assert [c.creates_account for c in plan.costs] == [
            False, True, False, False, True, False, False]
        assert before - plain.get_account(sender).trx_sun == plan.trx_needed_sun
        assert plain.get_account(emptied).trx_sun == 1_500_000
