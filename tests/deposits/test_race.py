"""Callbacks and a chain scan racing on the same deposits, on two workers with a PostgreSQL
ledger: each deposit credited exactly once, whichever path came first; the ledger's total is
the chain's. The callback path is the real one (sandbox service -> receiver -> store ->
proof); the other worker credits what it reads from the chain straight through
``DepositLedger.credit`` as the scan does."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from support.deposits import DepositWorld

pytestmark = pytest.mark.postgres


def test_callback_path_and_direct_credit_race_exactly_once(pg_world: DepositWorld):
    world = pg_world
    other = world.watch(world.chain.account()[1])
    sent = [world.transfer(f"{i}.25", to=world.address if i % 2 else other)
            for i in range(1, 21)]
    world.stored(*sent)
    world.solidify()
    receipts = [world.node.get_transfer_receipt(tx, solidified=True) for tx in sent]
    on_chain = {(t.tx_hash, t.index): t.units for r in receipts if r for t in r.transfers}
    assert len(on_chain) == 20
    with world.ledger() as ledger:
        ledger.offset()  # the tables exist before the race (as in a deployment)
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def callbacks() -> None:
        barrier.wait(timeout=30)
        results["callback"] = world.sweep(addresses=[world.address, other])

    def scan() -> None:
        barrier.wait(timeout=30)
        credited = []
        with world.ledger() as ledger:  # its own engine: another worker
            for receipt in reversed(receipts):  # from the other end: they meet
                assert receipt is not None
                credited += ledger.credit(list(receipt.transfers), token="USDT",
                                          source="scan", credited_by="scan")
        results["scan"] = credited

    threads = [threading.Thread(target=callbacks), threading.Thread(target=scan)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert set(results) == {"callback", "scan"}
    keys = [t.key for path in results.values() for t in path]
    assert sorted(keys) == sorted(on_chain)  # every deposit credited by exactly one worker
    rows = world.rows("SELECT tx_hash, log_index, units, source FROM credited_deposits")
    assert len(rows) == 20
    assert {(tx, i): int(units) for tx, i, units, _ in rows} == on_chain
    assert {source for *_, source in rows} <= {"callback", "scan"}
    with world.ledger() as ledger:
        totals = ledger.totals("USDT")
    assert sum(totals.values()) == sum(on_chain.values())
    assert world.sweep(addresses=[world.address, other]) == []  # and nothing later
