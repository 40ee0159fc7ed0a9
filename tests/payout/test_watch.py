"""The watch follows a batch by whole blocks within its budget, or by receipts when fewer."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.payout.journal import PayoutState
from airflow_provider_tronenergy.payout.watch import PayoutWatch, still_in_flight


class Counting:
    """The node, counting each call by name."""

    def __init__(self, node: Any) -> None:
        self._node, self.calls = node, Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._node, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(*args, **kwargs)

        return counted


def test_a_large_batch_is_confirmed_by_reading_blocks_not_receipts(world):
    rows = world.rows(world.recipients(60))
    world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    world.chain.blocks(2)
    node = Counting(world.node)
    status = PayoutWatch(world.journal, node, "b1", budget=10, clock=world.chain.clock,
                         solidified=False).step()
    assert status.confirmed == 60 and status.done
    assert node.calls["get_transaction_info"] == 0
    assert node.calls["get_block_receipts"] <= 3 and status.requests <= 10


def test_a_few_payouts_far_behind_are_read_one_receipt_each(world):
    rows = world.rows(world.recipients(2))
    world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    world.chain.blocks(30)
    node = Counting(world.node)
    status = PayoutWatch(world.journal, node, "b1", budget=10, clock=world.chain.clock,
                         solidified=False).step()
    assert status.confirmed == 2
    assert node.calls["get_transaction_info"] == 2 and node.calls["get_block_receipts"] == 0


def test_the_budget_bounds_a_step_and_the_next_step_goes_on(world):
    rows = world.rows(world.recipients(40))
    world.sender(chunk=10).send(rows, sender=world.address, token="USDT", batch_id="b1")
    world.chain.blocks(8)
    node = Counting(world.node)
    watch = PayoutWatch(world.journal, node, "b1", budget=3, clock=world.chain.clock,
                         solidified=False)
    first = watch.step()
    assert first.requests <= 3 and sum(node.calls.values()) <= 3
    while not (status := watch.step()).done:
        pass
    assert status.confirmed == 40


def test_the_watch_sends_unacknowledged_bytes_again(world):
    rows = world.rows(world.recipients(2))

    class Silent:
        def __init__(self, node: Any) -> None:
            self._node = node

        def __getattr__(self, name: str) -> Any:
            return getattr(self._node, name)

        def broadcast(self, signed: dict[str, Any]) -> Any:
            raise NodeError("node call wallet/broadcasthex failed (ConnectTimeout)")

    world.sender(node=Silent(world.node)).send(rows, sender=world.address, token="USDT",
                                               batch_id="b1")
    assert {a.state for a in world.journal.batch("b1")} == {PayoutState.SIGNED}
    assert world.watch().step().in_flight == 2  # nothing on chain yet: sent again
    world.chain.blocks(1)
    assert world.watch().step().confirmed == 2
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)


def test_solidified_confirmation_waits_for_the_solid_block(world):
    rows = world.rows(world.recipients(1))
    world.sender().send(rows, sender=world.address, token="USDT", batch_id="b1")
    world.chain.blocks(2)
    assert world.watch(solidified=True).step().confirmed == 0
    world.chain.blocks(19)
    assert world.watch(solidified=True).step().confirmed == 1


def test_a_budget_below_three_is_refused(world):
    with pytest.raises(ValueError, match="at least 3"):
        PayoutWatch(world.journal, world.node, "b1", budget=2, solidified=False)


def test_a_batch_follows_its_payouts_signed_under_another_batch(world):
    rows = world.rows(world.recipients(3), batch_id="a", ids=True)
    world.sender().send(rows, sender=world.address, token="USDT", batch_id="a")
    world.chain.blocks(2)
    alone = PayoutWatch(world.journal, world.node, "b", solidified=False).step()
    assert alone.total == 0  # its own only
    status = PayoutWatch(world.journal, world.node, "b", follow=["a"],
                         solidified=False).step()
    assert (status.total, status.confirmed, status.done) == (3, 3, True)
    assert {a.state for a in world.journal.batch("a")} == {PayoutState.CONFIRMED}


def test_still_in_flight_records_what_a_block_holds_and_keeps_the_rest(world):
    """The pre-flight's count of the sender's transfers that may still leave its balance:
    every batch's, those a block holds recorded (not counted again), and past-expiration
    ones left out (no later block can take them)."""
    landed = world.rows(world.recipients(2), batch_id="a", ids=True)
    world.sender().send(landed, sender=world.address, token="USDT", batch_id="a")
    world.chain.blocks(2)
    world.chain.control.post("/chain/pause")
    try:
        waiting = world.rows(world.recipients(1), batch_id="b", ids=True)
        world.sender().send(waiting, sender=world.address, token="USDT", batch_id="b")
        head = world.node.get_now_block()
        still = still_in_flight(world.journal, world.node, world.address,
                                solidified=False, after_ms=head.timestamp_ms)
        assert [(a.batch_id, a.state) for a in still] == [("b", PayoutState.SENT)]
        assert {a.state for a in world.journal.batch("a")} == {PayoutState.CONFIRMED}
        [pending] = still
        assert pending.expiration_ms is not None
        assert still_in_flight(world.journal, world.node, world.address,
                               solidified=False, after_ms=pending.expiration_ms + 1) == []
        assert still_in_flight(world.journal, world.node, "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7",
                               solidified=False, after_ms=head.timestamp_ms) == []
    finally:
        world.chain.control.post("/chain/resume")



def test_solidified_confirmation_within_the_smallest_budget(world):
    """Each receipt's block is read by number before it counts: within three requests a
    step, a solidified watch still goes on, a block at a time."""
    rows = world.rows(world.recipients(12))
    world.sender(chunk=3).send(rows, sender=world.address, token="USDT", batch_id="b1")
    world.chain.blocks(25)
    watch = world.watch(solidified=True, budget=3)
    for _ in range(40):
        status = watch.step()
        assert status.requests <= 3
        if status.done:
            break
    assert status.confirmed == 12


def test_a_transfer_in_a_head_block_is_not_counted_though_not_yet_solidified(world):
    """Payouts confirm on solidified blocks: a transfer a head block holds is not recorded
    yet, but the balance read at that head already shows it spent, so the pre-flight does
    not count it again (it did: a second batch, or a cleared task, was refused as payable
    only if payouts in flight fail)."""
    landed = world.rows(world.recipients(2), batch_id="a", ids=True)
    world.sender().send(landed, sender=world.address, token="USDT", batch_id="a")
    world.chain.blocks(2)
    head = world.node.get_now_block()
    assert world.node.get_solid_block().number < head.number - 1  # not solidified yet
    still = still_in_flight(world.journal, world.node, world.address, solidified=True,
                            after_ms=head.timestamp_ms, after_block=head.number)
    assert still == []
    assert {a.state for a in world.journal.batch("a")} == {PayoutState.SENT}  # not recorded
    # read at a head before their block, the balance does not show them: counted
    before = head.number - 2
    assert len(still_in_flight(world.journal, world.node, world.address, solidified=True,
                               after_ms=head.timestamp_ms, after_block=before)) == 2
