"""Sending payouts on the sandbox chain: journal first, then broadcast; the chain decides.

Every test counts on the chain (``GET /sandbox/chain/transactions``): one successful
transfer per payout, whatever happened in between, and never a second signature
while an earlier transaction of the same payout can still execute.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest

from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.payout.funds import FeeLimitPolicy, PayoutRefused
from airflow_provider_tronenergy.payout.journal import PayoutState
from airflow_provider_tronenergy.payout.send import PayoutConflict, Step
from support.payouts import Payouts


def settle(world: Payouts, batch_id: str = "b1", blocks: int = 1, **kwargs: Any):
    world.chain.blocks(blocks)
    return world.watch(batch_id, **kwargs).step()


class LostAnswers:
    """A node whose broadcast answers never arrive: before or after it took the bytes."""

    def __init__(self, node: Any, *, delivered: bool) -> None:
        self._node, self.delivered, self.calls = node, delivered, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._node, name)

    def broadcast(self, signed: dict[str, Any]) -> Any:
        self.calls += 1
        if self.delivered:
            self._node.broadcast(signed)
        raise NodeError("node call wallet/broadcasthex failed (ReadTimeout)")


def test_a_batch_is_signed_journaled_broadcast_and_confirmed_once(world):
    recipients = world.recipients(5)
    rows = world.rows(recipients)
    sent = world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert (sent.signed, sent.accepted) == (5, 5)
    status = settle(world)
    assert (status.confirmed, status.in_flight, status.done) == (5, 0, True)
    again = world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert (again.signed, again.broadcast, again.count(Step.DONE)) == (0, 0, 5)
    assert world.successes_per_recipient() == Counter(recipients)
    for attempt in world.journal.batch("b1"):
        assert attempt.state is PayoutState.CONFIRMED and attempt.attempt == 1
        assert attempt.receipt["result"] == "SUCCESS"
        assert attempt.receipt["energy_total"] > 60_000


@pytest.mark.parametrize("delivered", [False, True], ids=["never-sent", "answer-lost"])
def test_an_unknown_broadcast_is_sent_again_as_the_same_bytes(world, delivered):
    rows = world.rows(world.recipients(3))
    lossy = LostAnswers(world.node, delivered=delivered)
    first = world.sender(node=lossy).send(rows, sender=world.address, token="USDT",
                                          batch_id="b1")
    assert (first.signed, first.accepted) == (3, 0)
    journaled = {a.identity: a.txid for a in world.journal.batch("b1")}
    assert all(a.state is PayoutState.SIGNED for a in world.journal.batch("b1"))
    again = world.sender(scope="worker-2").send(rows, sender=world.address, token="USDT",
                                                batch_id="b1")
    assert (again.signed, again.count(Step.REBROADCAST), again.accepted) == (0, 3, 3)
    assert settle(world).confirmed == 3
    assert {a.identity: a.txid for a in world.journal.batch("b1")} == journaled
    assert sorted(t["txid"] for t in world.on_chain()) == sorted(journaled.values())


def test_a_transaction_that_expired_unsent_is_signed_anew_only_once_solid(world):
    rows = world.rows(world.recipients(2))
    never = LostAnswers(world.node, delivered=False)
    world.sender(node=never, expiration_s=30).send(rows, sender=world.address, token="USDT",
                                                   batch_id="b1")
    old = {a.identity: a.txid for a in world.journal.batch("b1")}
    world.chain.blocks(12)  # past the expiration by the head, not yet by a solid block
    waiting = world.sender(node=never).send(rows, sender=world.address, token="USDT",
                                            batch_id="b1")
    assert (waiting.signed, waiting.count(Step.WAIT)) == (0, 2)
    world.chain.blocks(20)  # now a solidified block is past it too
    fresh = world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert fresh.signed == 2
    assert settle(world).confirmed == 2
    history = world.journal.history(rows[0].identity)
    assert [a.state for a in history] == [PayoutState.EXPIRED, PayoutState.CONFIRMED]
    assert history[1].txid != old[rows[0].identity]
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)


def test_a_paused_chain_past_the_expiration_drops_the_transaction_and_it_is_resent(world):
    rows = world.rows(world.recipients(2))
    world.chain.control.post("/chain/pause")
    sent = world.sender(expiration_s=30).send(rows, sender=world.address, token="USDT",
                                              batch_id="b1")
    assert sent.accepted == 2
    world.chain.blocks(20)  # paused: no block comes, the chain's clock stands still
    assert world.watch().step().in_flight == 2
    world.chain.control.post("/chain/resume")
    world.chain.blocks(1)
    status = world.watch().step()
    assert status.in_flight == 2 and status.confirmed == 0  # dropped, not yet judged
    world.chain.blocks(20)
    assert world.watch().step().to_sign == 2
    world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert settle(world).confirmed == 2
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)


def test_a_failed_transfer_waits_for_a_person_and_is_resent_only_when_told(world):
    """OUT_OF_ENERGY on chain: signed at the factor in force, and USDT's energy factor rises
    before the block takes it (a fee_limit cap below the need is refused before signing)."""
    rows = world.rows(world.recipients(1, holders=False), amount="1")
    world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    world.chain.control.post("/chain/contract", {"energy_factor": 100_000})  # the next block
    status = settle(world)
    world.chain.control.post("/chain/contract", {"energy_factor": 34_000})
    world.chain.blocks(1)
    assert (status.failed, status.done) == (1, True)
    failed = world.journal.batch("b1")[0]
    assert failed.receipt["result"] == "OUT_OF_ENERGY"
    again = world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert (again.signed, again.count(Step.PERSON)) == (0, 1)
    world.journal.resolve(rows[0].identity, resend=True, by="ops", note="fee limit raised")
    assert world.sender().send(rows, sender=world.address, token="USDT",
                               batch_id="b1").signed == 1
    assert settle(world).confirmed == 1
    assert world.successes_per_recipient() == Counter([rows[0].recipient])


def test_the_fee_limit_is_the_nodes_estimate_when_the_chain_charges_more_than_it_did(world):
    """A row without the preparation's estimate was sized at a constant 131,000 energy: with
    USDT's energy factor raised, a first transfer needs more than that and its margin, and it
    ended OUT_OF_ENERGY although the TRX was there. Now the node's estimate sizes it."""
    world.chain.control.post("/chain/contract", {"energy_factor": 50_000})
    world.chain.blocks(1)  # in force from the next block
    rows = world.rows(world.recipients(2, holders=False), amount="1")
    assert all(p.energy is None for p in rows)
    estimate = world.node.estimate_transfer_energy(world.address, rows[0].recipient, 1)
    assert estimate is not None and estimate > 131_000 * 1.2
    done = world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert done.signed == 2
    status = settle(world)
    assert (status.confirmed, status.failed) == (2, 0)
    energy_fee = world.node.get_chain_parameters().energy_fee
    for attempt in world.journal.batch("b1"):
        assert attempt.receipt["result"] == "SUCCESS"
        assert attempt.receipt["energy_total"] == estimate
        assert attempt.fee_limit_sun == FeeLimitPolicy().fee_limit_sun(estimate, energy_fee)
    assert world.successes_per_recipient() == Counter(p.recipient for p in rows)


def test_a_recipient_the_node_cannot_estimate_for_is_not_signed(world, tmp_path):
    rows = world.rows(world.recipients(1, holders=False), amount="1")
    (tmp_path / "dry").mkdir()
    dry = Payouts(world.chain, tmp_path / "dry", usdt=None)  # holds no USDT: no estimate
    try:
        with pytest.raises(PayoutRefused, match="energy estimate: the node gives none"):
            dry.sender().send(rows, sender=dry.address, token="USDT", batch_id="b1")
        assert dry.journal.recent() == [] and dry.on_chain() == []
    finally:
        dry.close()


def test_two_workers_on_one_batch_send_each_payout_once(world):
    rows = world.rows(world.recipients(40))
    barrier = threading.Barrier(2)

    def work(scope: str) -> None:
        sender = world.sender(scope=scope, chunk=10)
        barrier.wait()
        sender.send(rows, sender=world.address, token="USDT", batch_id="b1")

    threads = [threading.Thread(target=work, args=(f"worker-{n}",)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert settle(world).confirmed == 40
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)
    assert all(a.attempt == 1 for a in world.journal.batch("b1"))


def test_a_stale_claim_is_taken_over_and_a_fresh_one_is_waited_for(world):
    rows = world.rows(world.recipients(1))
    from airflow_provider_tronenergy.payout.journal import Claim

    claim = Claim(identity=rows[0].identity, after=None, batch_id="b1", row=0,
                  sender=world.address, recipient=rows[0].recipient, token="USDT",
                  units=rows[0].units)
    won, _ = world.journal.claim([claim], "dead-worker")
    assert len(won) == 1
    fresh = world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert (fresh.signed, fresh.count(Step.WAIT)) == (0, 1)
    stale = world.sender(lease_s=0).send(rows, sender=world.address, token="USDT",
                                         batch_id="b1")
    assert stale.signed == 1
    assert [a.state for a in world.journal.history(rows[0].identity)] == [
        PayoutState.ABANDONED, PayoutState.SENT]


def test_an_identity_reused_for_another_payout_is_refused_before_signing(world):
    recipients = world.recipients(2)
    world.sender().send(world.rows(recipients[:1], ids=True), sender=world.address,
                        token="USDT", batch_id="b1")
    other = world.rows(recipients[1:], ids=True)  # payout id b1-0 again, another recipient
    with pytest.raises(PayoutConflict, match="b1-0"):
        world.sender().send(other, sender=world.address, token="USDT", batch_id="b1")
    assert len(world.journal.history("id:b1-0")) == 1
