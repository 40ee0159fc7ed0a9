"""The pre-flight reads the holders' balances through a multicall: a few requests, not one each.

When a sweep since preparation could make the batch burn, ``read_recipients="auto"``
reads each recipient counted as a holder. Without a multicall contract on the node
connection that is one estimate per holder (1.71 node requests per payout for
10,000 in ``bench/payout_send.py``); with one, ``balanceOf`` for up to
``multicall_chunk`` holders per ``triggerconstantcontract`` request, counted here on
the sandbox's side (a latency fault of 0 ms counts the requests it saw).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from math import ceil
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import UnreliableNode
from airflow_provider_tronenergy.payout.funds import PayoutRefused
from payout.test_preflight import FIRST, HOLDER, Counting, batch, clear, wallet
from support.chain import USDT, Chain, manual_chain
from support.payouts import Payouts
from tronenergy_sandbox.chain.multicall import MULTICALL

CONSTANT = "/wallet/triggerconstantcontract"


@pytest.fixture
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


def batched(world: Payouts, chunk: int) -> TronNodeClient:
    """The node client with the sandbox's multicall named, ``chunk`` balances a request."""
    return TronNodeClient(world.chain.sandbox.root_url, usdt_contract=USDT, max_retries=0,
                          multicall=MULTICALL, multicall_chunk=chunk)


def counted(chain: Chain, path: str) -> Any:
    """How many requests the sandbox saw on ``path`` from now (read it by calling)."""
    fault = chain.control.fault(kind="latency", path=path, latency_ms=0)

    def seen() -> int:
        return next(int(f["fired"]) for f in chain.control.faults() if f["id"] == fault["id"])

    return seen


def sweep(chain: Chain, *recipients: str) -> None:
    for recipient in recipients:
        chain.control.post(f"/addresses/{recipient}/balances", {"usdt": "0"})


@pytest.mark.parametrize("chunk", [3, 100])
def test_swept_holders_are_found_by_balance_in_one_request_per_chunk(chain, tmp_path, chunk):
    """7 holders and a first-time recipient, the sender staked for exactly their figures
    and no burn allowed: two holders swept since preparation. The pre-flight reads the 7
    holders' balances in ceil(7 / chunk) requests (no estimate per holder), counts the two
    swept ones as first transfers and refuses the batch, naming the energy it needs."""
    exact = 7 * HOLDER + FIRST
    world = wallet(chain, tmp_path, staked=exact)
    rows = batch(world, holders=7, firsts=1)
    sweep(chain, rows[2].recipient, rows[5].recipient)
    node = Counting(batched(world, chunk))
    constant = counted(chain, CONSTANT)
    needs = exact + 2 * (FIRST - HOLDER)
    with pytest.raises(PayoutRefused, match=f"energy: the batch needs {needs:,}"):
        clear(world, node, rows)
    # one balanceOf for the sender's funds, then the holders' balances
    assert constant() == 1 + ceil(7 / chunk)
    assert node.calls["get_usdt_balances"] == 1
    assert node.calls["estimate_transfer_energy"] == 3  # the kinds only: none per holder
    always = clear(world, Counting(batched(world, chunk)), rows, read_recipients="always",
                   max_burn_trx=Decimal(100))
    assert always.emptied == {rows[2].recipient, rows[5].recipient}
    assert always.recipients_read == 7
    assert always.funds.energy_needed == needs
    assert [p.energy for p in always.rows] == [HOLDER, HOLDER, FIRST, HOLDER, HOLDER, FIRST,
                                               HOLDER, FIRST]
    world.close()


def test_a_sender_with_the_energy_for_every_sweep_reads_no_balance(chain, tmp_path):
    """Energy for every holder turning first-time: a sweep cannot make the batch burn,
    so nothing is read, multicall or not (auto)."""
    world = wallet(chain, tmp_path, staked=8 * FIRST)
    rows = batch(world, holders=7, firsts=1)
    sweep(chain, rows[0].recipient)
    node = Counting(batched(world, 100))
    cleared = clear(world, node, rows)
    assert node.calls["get_usdt_balances"] == 0 and cleared.recipients_read == 0
    world.close()


def test_without_a_multicall_each_holder_is_estimated(chain, tmp_path):
    """The connection names no multicall: the balances cannot be read in a batch, and each
    holder is estimated as before (one request each), with the same finding."""
    exact = 4 * HOLDER + FIRST
    world = wallet(chain, tmp_path, staked=exact)
    rows = batch(world, holders=4, firsts=1)
    sweep(chain, rows[3].recipient)
    assert world.node.get_usdt_balances(world.address, [rows[0].recipient]) is None
    node = Counting(world.node)
    cleared = clear(world, node, rows, read_recipients="always", max_burn_trx=Decimal(100))
    assert node.calls["estimate_transfer_energy"] == 3 + 4  # the kinds, then each holder
    assert cleared.emptied == {rows[3].recipient}
    assert cleared.funds.energy_needed == exact + FIRST - HOLDER
    world.close()


def test_a_malformed_multicall_answer_stops_the_pre_flight(chain, tmp_path: Path):
    """A node (or a contract) answering one balance too few: an unreliable node, nothing
    judged on it, nothing signed."""
    from eth_abi import encode

    world = wallet(chain, tmp_path, staked=3 * HOLDER + FIRST)
    rows = batch(world, holders=3, firsts=1)
    short = bytes(encode(["uint256", "bytes[]"], [5, [bytes(32)] * 2])).hex()
    node = batched(world, 100)
    sender_units = node.get_usdt_balance(world.address)
    chain.control.fault(kind="tamper", path=CONSTANT,
                        patch={"constant_result.0": f'"{short}"'})
    with pytest.raises(UnreliableNode, match="aggregate answered 2 results for 3 calls"):
        clear(world, node, rows)
    chain.control.clear_faults()
    assert node.get_usdt_balance(world.address) == sender_units
    assert world.on_chain() == [] and world.journal.recent() == []
    node.close()
    world.close()
