"""The deposit scan on the sandbox's chain, over real HTTP, into a real SQLite ledger.

The drill of issue 34: the receiver is down for longer than every retry while 200 deposits
arrive at 20 addresses; the scan then credits every one exactly once, the ledger's total
equal to the chain's. Around it: several transfers to one address in one transaction are
several deposits; a look-alike token, a failed call and a transfer to another address are
none; the checkpoint (a first run starting at the solid head, a run's block limit, a second
run reading only new blocks, a rescan), TRX deposits, and N confirmations instead of
solidified blocks.
"""

from __future__ import annotations

import random

import pytest

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.scan.core import DepositScan, ScanSettings
from support.control import Control
from support.waiting import wait_until
from tronenergy_protocol.address import random_address

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
RETRY_DELAYS_S = (10, 60, 300)
"""The service's three callback retries (seconds, at time scale 1)."""


@pytest.fixture
def ledger(tmp_path):
    with DepositLedger(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        yield ledger


def place(chain, transfers):
    return Control(chain.sandbox).post("/chain/blocks/transfers",
                                       {"transfers": transfers})["transactions"]


def spend_every_retry(chain, count):
    """Move the manual clock through the first attempt and the three retries of ``count``
    callbacks, each attempt seen made, until every one is ``failed``."""
    control = Control(chain.sandbox)

    def attempted(times):
        deliveries = control.call("GET", "/deliveries")
        return len(deliveries) == count and all(d["attempts"] >= times for d in deliveries)

    for times, delay in enumerate(RETRY_DELAYS_S, start=1):
        wait_until(lambda times=times: attempted(times), timeout=30, message=f"attempt {times}")
        chain.clock.advance(delay + 1)
    wait_until(lambda: {d["status"] for d in control.call("GET", "/deliveries")} == {"failed"},
               timeout=30, message="every callback failed")


def credited(ledger, token="USDT"):
    return {(c.tx_hash, c.log_index): c for c in ledger.credits() if c.token == token}


def test_the_receiver_down_through_every_retry_then_the_scan_credits_all_200_once(
        chain, node, ledger):
    sandbox = chain.sandbox
    addresses = [random_address() for _ in range(20)]
    with TronEnergyClient(sandbox.url, sandbox.api_key, sandbox.api_secret) as service:
        for address in addresses:  # callbacks to a receiver that is down (nothing listens)
            service.add_monitored_address(address, "http://127.0.0.1:9/tron/callback",
                                          tokens=["USDT"])
    rng = random.Random(34)
    head = chain.head()
    deposits = [{"block": head + 1 + i // 4, "to": addresses[i % 20],
                 "units": rng.randint(1, 5_000) * 10_000} for i in range(200)]
    start = head + 1
    placed = place(chain, deposits)
    chain.blocks(50 + 19)  # the deposits' blocks produced and solidified
    spend_every_retry(chain, 200)  # against a receiver that stays down
    scan = DepositScan(ledger, node, addresses,
                       settings=ScanSettings(start=start, page_blocks=7, max_concurrency=4,
                                             max_requests_per_second=500))
    report = scan.run(credited_by="drill")
    assert len(report.credited) == report.found == 200
    rows = credited(ledger)
    assert set(rows) == {(p["txid"], 0) for p in placed}
    assert all(r.source == "scan" for r in rows.values())
    chain_total = sum(node.get_usdt_balance(a) for a in addresses)
    assert chain_total == sum(d["units"] for d in deposits)
    assert sum(ledger.totals("USDT").values()) == chain_total
    again = scan.run()
    assert again.credited == () and len(credited(ledger)) == 200


def test_several_transfers_to_one_address_in_one_transaction_are_several_deposits(
        chain, node, ledger):
    to, elsewhere = random_address(), random_address()
    head = chain.head()
    placed = place(chain, [
        {"block": head - 40, "to": to, "units": [1_000_000, 2_000_000, 3_000_000]},
        {"block": head - 39, "to": elsewhere, "units": 4_000_000}])
    report = DepositScan(ledger, node, [to], settings=ScanSettings(start=head - 45)).run()
    assert sorted((t.tx_hash, t.index, t.units) for t in report.credited) == [
        (placed[0]["txid"], 0, 1_000_000), (placed[0]["txid"], 1, 2_000_000),
        (placed[0]["txid"], 2, 3_000_000)]
    assert {c.contract for c in credited(ledger).values()} == {USDT}


def test_the_scan_finds_a_missed_callbacks_transfer_and_no_look_alike_or_failed_one(
        chain, node, ledger):
    """The sandbox's attacks (``/sandbox/attacks/transfer``): the service misses a
    transfer's callback; a look-alike USDT and a failed call reach the same address."""
    to = random_address()
    start = chain.head()
    control = Control(chain.sandbox)
    missed = control.post("/attacks/transfer", {"from": random_address(), "to": to,
                                                "amount": "12.5", "callback": False})
    for attack in ({"contract": "lookalike"}, {"failed": True}):
        control.post("/attacks/transfer", {"from": random_address(), "to": to,
                                           "amount": "1000", **attack})
    chain.blocks(25)
    report = DepositScan(ledger, node, [to], settings=ScanSettings(start=start)).run()
    assert [(t.tx_hash, t.units) for t in report.credited] == [(missed["tx_hash"], 12_500_000)]
    assert ledger.totals("USDT") == {to: 12_500_000}


def test_the_checkpoint_holds_a_first_start_a_run_limit_and_new_blocks_only(chain, node,
                                                                               ledger):
    to = random_address()
    head = chain.head()
    solid = node.get_solid_block().number
    before = place(chain, [{"block": solid - 5, "to": to, "units": 11}])
    scan = DepositScan(ledger, node, [to], settings=ScanSettings(max_blocks_per_run=30,
                                                              max_requests_per_second=500))
    first = scan.run()  # start "solid": the head it may trust now, never the past
    assert (first.first_block, first.last_block, first.credited) == (solid, solid, ())
    later = place(chain, [{"block": head + 10, "to": to, "units": 22},
                          {"block": head + 35, "to": to, "units": 33}])
    chain.blocks(100)
    second = scan.run()
    assert (second.first_block, second.last_block) == (solid + 1, solid + 30)
    assert [t.tx_hash for t in second.credited] == [later[0]["txid"]]
    assert second.behind > 0
    third = scan.run()
    assert third.first_block == solid + 31
    assert [t.tx_hash for t in third.credited] == [later[1]["txid"]]
    assert scan.checkpoint() == third.last_block
    rescanned = scan.rescan(solid - 10, solid - 1)  # an address added late: on purpose
    assert [t.tx_hash for t in rescanned.credited] == [before[0]["txid"]]
    assert scan.checkpoint() == third.last_block


def test_trx_deposits_are_scanned_by_block_ranges(chain, node, ledger):
    to = random_address()
    head = chain.head()
    placed = place(chain, [{"block": head - 150 + i * 7, "to": to, "units": 1_000_000 + i,
                            "token": "TRX"} for i in range(15)]
                   + [{"block": head - 100, "to": to, "units": 5}])  # USDT: not TRX
    scan = DepositScan(ledger, node, [to], token="TRX",
                       settings=ScanSettings(start=head - 160, blocks_per_range=40,
                                             page_blocks=60, max_requests_per_second=500))
    report = scan.run()
    assert [t.tx_hash for t in report.credited] == [p["txid"] for p in placed[:15]]
    assert report.requests <= 1 + -(-report.blocks // 40) + 3  # the head, ranges, page ends
    assert set(credited(ledger, "TRX")) == {(p["txid"], 0) for p in placed[:15]}
    assert ledger.totals("TRX") == {to: sum(1_000_000 + i for i in range(15))}


def test_n_confirmations_scan_ahead_of_solidification(chain, node, ledger):
    to = random_address()
    head = chain.head()
    placed = place(chain, [{"block": head - 5, "to": to, "units": 8}])
    solid_only = DepositScan(ledger, node, [to], settings=ScanSettings(start=head - 10))
    assert solid_only.run().credited == ()  # block head - 5 is not solidified yet
    scan = DepositScan(ledger, node, [to], settings=ScanSettings(start=head - 10,
                                                                 confirmations=3))
    assert [t.tx_hash for t in scan.run().credited] == [placed[0]["txid"]]


@pytest.mark.parametrize("ranges_lag", [True, False], ids=["whole-backend", "receipts-only"])
def test_a_lagging_backends_empty_answer_holds_the_checkpoint_until_it_catches_up(
        chain, node, ledger, ranges_lag):
    """A node behind a load balancer answers ``[]`` for blocks its backend has not got
    (java-tron's ``Wallet.getTransactionInfoByBlockNum``), as for an empty block. Before the
    check, the scan took them as empty, moved its checkpoint past both deposits and never
    read them again. ``receipts-only``: the range read that checks them reached an
    up-to-date backend, which shows the blocks hold transactions."""
    to = random_address()
    solid = chain.head() - 19
    placed = place(chain, [{"block": solid - 8, "to": to, "units": 5_000_000},
                           {"block": solid - 3, "to": to, "units": 7_000_000}])
    control = Control(chain.sandbox)
    control.post("/chain/lag", {"blocks": 10, "ranges": ranges_lag})
    scan = DepositScan(ledger, node, [to], settings=ScanSettings(start=solid - 19,
                                                                 page_blocks=5))
    held = scan.run()
    assert held.credited == ()
    assert scan.checkpoint() == solid - 10  # the pages the backend has, and no further
    assert held.last_block == solid - 10
    control.post("/chain/lag", {"blocks": 0})
    caught_up = scan.run()
    assert sorted((t.tx_hash, t.units) for t in caught_up.credited) == sorted(
        [(placed[0]["txid"], 5_000_000), (placed[1]["txid"], 7_000_000)])
    assert scan.checkpoint() == caught_up.tip
    assert ledger.totals("USDT") == {to: 12_000_000}
