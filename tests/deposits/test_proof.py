"""Every deposit credit checked on chain: correctly signed callbacks the chain contradicts are
kept as disputed with their reason, never credited; a callback seen before its block is
solid waits and is credited once it is. The sandbox is the service (it signs and sends the
callbacks) and the node; the real receiver stores them.

Before proofs (``credit_from_store`` crediting on the callback's word), each of the attacks
here was credited: the issue's own trial credited 6,588 USDT for 1 USDT received.
"""

from __future__ import annotations

import json

import sqlalchemy as sa

from support.deposits import DepositWorld
from tronenergy_sandbox.chain.attacks import LOOKALIKE_USDT


def claims(world: DepositWorld) -> dict[str, tuple[str, str]]:
    """tx_hash -> (state, reason)."""
    return {tx: (state, reason) for tx, state, reason in world.rows(
        "SELECT tx_hash, state, reason FROM deposit_claims")}


def claim(world: DepositWorld, tx_hash: str) -> dict[str, object]:
    with world.ledger() as ledger:
        found = ledger.claim(tx_hash)
    assert found is not None
    return found.to_dict()


def test_a_deposit_seen_before_its_block_is_solid_is_credited_once_it_is(world):
    tx = world.transfer("25.5")
    world.stored(tx)
    assert world.sweep() == []  # the callback came at once: its block is not solid yet
    assert claims(world) == {tx: ("waiting", "not_solid")}
    assert world.sweep() == []  # still not solid: tried again, still waiting
    world.solidify()
    [credited] = world.sweep()  # the offset had passed it; the claim remembered it
    assert (credited.tx_hash, credited.index, credited.units) == (tx, 0, 25_500_000)
    assert world.rows() == [(tx, 0, "25.5", "callback")]
    assert claims(world) == {tx: ("proven", "proven")}
    assert world.sweep() == []  # once
    [(block, contract, stamp)] = world.rows(
        "SELECT block_number, contract, block_timestamp_ms FROM credited_deposits")
    chain = world.chain.info(tx, solid=True)
    assert (block, stamp) == (chain["blockNumber"], chain["blockTimeStamp"])
    assert contract == world.node.usdt_contract


def test_a_callback_for_a_transaction_that_does_not_exist(world):
    forged = world.forge("5000")
    world.stored(forged)
    assert world.sweep() == []
    assert claims(world) == {forged: ("waiting", "not_found_yet")}  # within the deadline
    world.chain.blocks(20)  # 60 s of the chain's clock: past the 30 s deadline
    assert world.sweep() == []
    assert claims(world) == {forged: ("disputed", "not_found")}
    assert world.rows() == []
    shown = claim(world, forged)
    assert shown["callback"]["amount"] == "5000"  # type: ignore[index]


def test_an_inflated_amount(world):
    """A real 1 USDT transfer the service missed, then claimed as 1,000."""
    tx = world.transfer("1", callback=False)
    world.forge("1000", tx_hash=tx)
    world.stored(tx)
    world.solidify()
    assert world.sweep() == []
    assert claims(world) == {tx: ("disputed", "other_amount")}
    shown = claim(world, tx)
    assert shown["callback"]["amount"] == "1000"  # type: ignore[index]
    [on_chain] = shown["chain"]["transfers"]  # type: ignore[index]
    assert (on_chain["to"], on_chain["units"]) == (world.address, "1000000")
    assert world.rows() == []


def test_a_transaction_that_failed_on_chain(world):
    tx = world.transfer("300", failed=True)  # the service still sends its callback
    world.stored(tx)
    world.solidify()
    assert world.sweep() == []
    assert claims(world) == {tx: ("disputed", "failed")}
    assert world.rows() == []


def test_a_look_alike_token(world):
    """Another TRC-20 contract that calls itself USDT: the callback says USDT."""
    tx = world.transfer("750", contract="lookalike")
    world.stored(tx)
    assert world.store.get_transfer(tx).token == "USDT"
    world.solidify()
    assert world.sweep() == []
    assert claims(world) == {tx: ("disputed", "other_contract")}
    shown = claim(world, tx)
    assert shown["chain"]["other_contracts"][0]["contract"] == LOOKALIKE_USDT  # type: ignore[index]
    assert world.rows() == []


def test_another_recipient(world):
    """The chain moved the USDT to someone else; the callback names the deposit address."""
    elsewhere = world.transfer("40", to=world.chain.account()[1], callback=False)
    world.forge("40", tx_hash=elsewhere)
    world.stored(elsewhere)
    world.solidify()
    assert world.sweep() == []
    assert claims(world) == {elsewhere: ("disputed", "other_recipient")}
    assert world.rows() == []


def test_an_unknown_token(world):
    forged = world.forge("99", token="FAKE")
    world.stored(forged)
    assert world.sweep() == []
    assert claims(world) == {forged: ("disputed", "unknown_token")}


def test_a_disputed_claim_is_never_credited_by_a_later_sweep(world):
    tx = world.transfer("1", callback=False)
    world.forge("1000", tx_hash=tx)
    world.stored(tx)
    world.solidify()
    world.sweep()
    world.chain.blocks(5)
    assert world.sweep() == []
    assert claims(world) == {tx: ("disputed", "other_amount")}


def test_trx_deposits_are_proven_by_their_transfer_contract(world):
    real = world.transfer("12.5", token="TRX")
    missed = world.transfer("2", token="TRX", callback=False)
    world.forge("2000", tx_hash=missed, token="TRX")
    world.stored(real, missed)
    world.solidify()
    [credited] = world.sweep()
    assert (credited.tx_hash, credited.contract, credited.units) == (real, None, 12_500_000)
    assert claims(world) == {missed: ("disputed", "other_amount")}
    assert world.rows("SELECT token, amount FROM credited_deposits") == [("TRX", "12.5")]


def test_a_node_that_fails_leaves_the_claim_waiting(world):
    """A failed read proves nothing either way: the claim waits and the next sweep, with a
    node that answers, credits it."""
    tx = world.transfer("3")
    world.stored(tx)
    world.solidify()
    world.chain.control.fault(kind="error", path="/walletsolidity/gettransactioninfobyid",
                              status=503)
    assert world.sweep() == []
    assert claims(world) == {tx: ("waiting", "node_error")}
    world.chain.control.clear_faults()
    assert [t.tx_hash for t in world.sweep()] == [tx]


def test_n_confirmations_instead_of_solidified(world):
    tx = world.transfer("8")
    world.stored(tx)
    world.chain.blocks(2)
    assert world.sweep(confirmations=5) == []
    assert claims(world) == {tx: ("waiting", "not_deep")}
    world.chain.blocks(3)
    assert [t.tx_hash for t in world.sweep(confirmations=5)] == [tx]


def test_the_claims_table_keeps_both_views_as_json(world):
    tx = world.transfer("1", callback=False)
    world.forge("1000", tx_hash=tx)
    world.stored(tx)
    world.solidify()
    world.sweep()
    with world.ledger() as ledger, ledger.engine.connect() as conn:
        said, chain = conn.execute(sa.text(
            "SELECT said, chain FROM deposit_claims")).one()
    assert json.loads(said)["amount"] == "1000"
    assert json.loads(chain)["transfers"][0]["units"] == "1000000"


def test_several_transfers_in_one_transaction_are_several_deposits(world):
    """A contract pays the deposit address three times in one transaction; the one callback
    names one of them: three deposits, each once, keyed by its log."""
    tx = world.transfer("2", times=3)
    world.stored(tx)
    world.solidify()
    credited = world.sweep()
    assert [(t.index, t.to_address, t.units) for t in credited] == [
        (i, world.address, 2_000_000) for i in range(3)]
    assert world.rows() == [(tx, i, "2", "callback") for i in range(3)]
    assert world.sweep() == []
    with world.ledger() as ledger:
        assert ledger.totals("USDT") == {world.address: 6_000_000}
