"""TronEnergyTransferWatchTrigger in ack mode, through Airflow 3.3's real SharedStreamManager.

The test plays the triggerer: it takes each event off ``filter_shared_stream``,
binds it with ``bind_pending_event`` (as ``run_trigger`` does) and confirms it with
``confirm_persisted`` only when the test says the metadata DB has it. The consumer
offset in the store must follow the confirmations, never the events; a "restart"
(``stop_all``, a new manager, the trigger rebuilt from its serialized kwargs) must
fire again exactly what was not confirmed.
"""

from __future__ import annotations

import asyncio

import pytest

from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.triggers.transfer import (
    TronEnergyTransferWatchTrigger,
    _OffsetProducer,
)
from support.triggers import Outage, PollClock, Triggerer, record, settle, until
from tronenergy_protocol.address import random_address

shared_stream = pytest.importorskip(
    "airflow.triggers.shared_stream",
    reason="Airflow < 3.3 has no airflow.triggers.shared_stream (ack-mode shared "
           "streams): the watch trigger runs its own poll loop there (run(), tested in "
           "test_transfer.py)")

SharedStreamManager = shared_stream.SharedStreamManager
AdvanceItem = shared_stream.AdvanceItem
AdvanceOutcome = shared_stream.AdvanceOutcome
AckTimeout = shared_stream.AckTimeout
CONSUMER = "deposits"


def watcher(*addresses: str) -> TronEnergyTransferWatchTrigger:
    """As the triggerer builds it: from the serialized kwargs of the watcher's trigger."""
    trigger = TronEnergyTransferWatchTrigger(
        proven=False, addresses=list(addresses), min_amount="1",
        consumer=CONSUMER, poll_interval_seconds=2.0)
    return TronEnergyTransferWatchTrigger(**trigger.serialize()[1])


def hashes(triggerer: Triggerer) -> list[str]:
    return [payload["tx_hash"] for _, _, payload in triggerer.events]


def test_offset_moves_only_with_persist_confirmations_across_restarts(
        store: CallbackStore, poll_clock: PollClock):
    a, b = random_address(), random_address()
    old = record(store, a, "5")  # before the consumer existed: never fires

    def offset() -> int | None:
        return store.committed_offset(CONSUMER)

    async def scenario():
        manager = SharedStreamManager(ack_timeout=600)
        first = Triggerer(manager)
        first.start(1, watcher(a, b))
        await poll_clock.wait_for_sleeps(1)
        assert offset() == old.id  # a new consumer starts at the present

        t3 = record(store, a, "1")
        t4 = record(store, random_address(), "50")  # nobody watches it
        t5 = record(store, b, "2")
        record(store, b, "0.999999")                 # below min_amount
        await poll_clock.tick()
        await until(lambda: len(first.events) == 2, what="two events")
        await until(lambda: first.pulled[1] == 4, what="the trigger to see all four")
        await settle()
        assert hashes(first) == [t3.tx_hash, t5.tx_hash]
        (_, seq3, payload3), (_, seq5, _) = first.events
        assert seq3 is not None and seq5 is not None
        assert payload3 == {"id": t3.id, "tx_hash": t3.tx_hash, "from": t3.from_address,
                            "to": a, "amount": "1", "token": "TRX",
                            "block_number": t3.block_number,
                            "block_timestamp_ms": t3.block_timestamp_ms,
                            "received_at": t3.received_at.isoformat(), "proven": False}
        assert offset() == old.id  # taken is not persisted: nothing committed

        manager.confirm_persisted([seq3])
        # t3 persisted; t4 matched nothing: both done, the offset moves past them ...
        await until(lambda: offset() == t4.id, what="the commit of t3 and t4")
        await settle()
        assert offset() == t4.id  # ... and stops before t5, still unconfirmed

        # Restart before t5's confirmation arrives: only t5 fires again.
        await manager.stop_all()
        await first.stop()
        manager = SharedStreamManager(ack_timeout=600)
        second = Triggerer(manager)
        second.start(1, watcher(a, b))
        await until(lambda: len(second.events) == 1, what="t5 again")
        await until(lambda: second.pulled[1] == 2, what="t5 and the small one")
        await settle()
        assert hashes(second) == [t5.tx_hash]
        assert offset() == t4.id
        manager.confirm_persisted([second.events[0][1]])
        await until(lambda: offset() == store.max_id(), what="the commit of t5 and after")

        # Restart again: everything was confirmed, so nothing fires but what is new.
        await manager.stop_all()
        await second.stop()
        t6 = record(store, a, "3")
        manager = SharedStreamManager(ack_timeout=600)
        third = Triggerer(manager)
        third.start(1, watcher(a, b))
        await until(lambda: len(third.events) == 1, what="t6")
        await poll_clock.tick()
        await settle()
        assert hashes(third) == [t6.tx_hash]
        manager.confirm_persisted([third.events[0][1]])
        await until(lambda: offset() == t6.id, what="the commit of t6")
        await manager.stop_all()
        await third.stop()

    asyncio.run(scenario())


def test_an_event_never_confirmed_is_not_committed_and_fires_again(
        store: CallbackStore, poll_clock: PollClock):
    """The persist failed (no confirmation within the ack timeout): the trigger fails,
    the offset stays, and the next subscription delivers the transfer again."""
    a = random_address()

    async def scenario():
        manager = SharedStreamManager(ack_timeout=0.2)
        first = Triggerer(manager)
        first.start(1, watcher(a))
        await poll_clock.wait_for_sleeps(1)
        start = store.committed_offset(CONSUMER)
        lost = record(store, a, "7")
        await poll_clock.tick()
        await until(lambda: first.tasks[1].done(), what="the ack timeout")
        failure = first.tasks[1].exception()
        fired = hashes(first)
        after_failure = store.committed_offset(CONSUMER)
        await manager.stop_all()

        manager = SharedStreamManager(ack_timeout=600)
        second = Triggerer(manager)
        second.start(1, watcher(a))
        await until(lambda: len(second.events) == 1, what="the redelivery")
        again = hashes(second)
        await manager.stop_all()
        await second.stop()
        return lost, start, fired, failure, after_failure, again

    lost, start, fired, failure, after_failure, again = asyncio.run(scenario())
    assert fired == [lost.tx_hash]
    assert isinstance(failure, AckTimeout)
    assert after_failure == start == 0
    assert again == [lost.tx_hash]


def test_a_new_consumer_never_fires_for_transfers_stored_before_it(
        store: CallbackStore, poll_clock: PollClock):
    a = random_address()
    before = [record(store, a, amount) for amount in ("1", "2", "3")]

    async def scenario():
        manager = SharedStreamManager(ack_timeout=600)
        triggerer = Triggerer(manager)
        triggerer.start(1, watcher(a))
        await poll_clock.wait_for_sleeps(1)
        await poll_clock.tick()
        await settle()
        assert triggerer.events == [] and triggerer.pulled[1] == 0
        new = record(store, a, "4")
        await poll_clock.tick()
        await until(lambda: len(triggerer.events) == 1, what="the new transfer")
        await poll_clock.tick()
        await settle()
        fired = hashes(triggerer)
        await manager.stop_all()
        await triggerer.stop()
        return new, fired

    new, fired = asyncio.run(scenario())
    assert fired == [new.tx_hash]
    assert before[-1].id < new.id


def test_a_consumer_started_on_an_empty_store_gets_what_arrived_while_down(
        store: CallbackStore, poll_clock: PollClock):
    a = random_address()

    async def scenario():
        manager = SharedStreamManager(ack_timeout=600)
        first = Triggerer(manager)
        first.start(1, watcher(a))
        await poll_clock.wait_for_sleeps(1)
        await manager.stop_all()
        await first.stop()
        assert store.committed_offset(CONSUMER) == 0  # it exists, at 0
        while_down = record(store, a, "1")
        manager = SharedStreamManager(ack_timeout=600)
        second = Triggerer(manager)
        second.start(1, watcher(a))
        await until(lambda: len(second.events) == 1, what="the transfer stored while down")
        fired = hashes(second)
        await manager.stop_all()
        await second.stop()
        return while_down, fired

    while_down, fired = asyncio.run(scenario())
    assert fired == [while_down.tx_hash]


def test_producer_commits_the_clean_prefix_and_stops_at_a_failure(store: CallbackStore):
    producer = _OffsetProducer(None, CONSUMER, 2.0)
    producer.store = store
    clean, failed, unseen = AdvanceOutcome(acked=2, failed=0), AdvanceOutcome(1, 1), \
        AdvanceOutcome(0, 0)

    async def advance(*items):
        await producer.advance([AdvanceItem(payload, outcome) for payload, outcome in items])

    asyncio.run(advance((3, clean), (4, AdvanceOutcome(0, 0, rejected=1))))
    assert store.committed_offset(CONSUMER) == 4
    with pytest.raises(RuntimeError, match="transfer 6 was not persisted"):
        asyncio.run(advance((5, clean), (6, failed), (7, clean)))
    assert store.committed_offset(CONSUMER) == 5  # 5 was persisted; 6 and 7 come again
    with pytest.raises(RuntimeError, match="transfer 8 was not persisted"):
        asyncio.run(advance((8, unseen), (9, clean)))  # seen by no subscriber at all
    assert store.committed_offset(CONSUMER) == 5


def test_an_offset_commit_during_a_store_outage_waits_for_the_store(store: CallbackStore):
    """Events Airflow persisted are committed once the store is back: raising would end the
    group, and the poll would fire them again from the old offset (found by drill 4)."""
    producer = _OffsetProducer(None, CONSUMER, 0.01)
    producer.store = store
    outage = Outage(store, "commit_offset", 3)
    persisted = AdvanceOutcome(acked=1, failed=0)
    asyncio.run(producer.advance([AdvanceItem(10, persisted), AdvanceItem(11, persisted)]))
    assert (outage.seen, store.committed_offset(CONSUMER)) == (4, 11)



def test_a_stream_opened_during_a_store_outage_waits_for_the_store(store: CallbackStore):
    """A group (re)created while the store is down starts once it answers, not failing."""
    from airflow_provider_tronenergy.triggers import transfer as transfer_module

    store.start_offset(CONSUMER)
    stored = record(store, random_address(), "2")
    producer = _OffsetProducer(None, CONSUMER, 0.01)
    outage = Outage(transfer_module.open_store(None), "start_offset", 2)

    async def first() -> tuple[int, int]:
        stream = producer.open_stream()
        try:
            transfer, payload = await asyncio.wait_for(anext(stream), 30)
        finally:
            await stream.aclose()
        return transfer.id, payload

    assert asyncio.run(first()) == (stored.id, stored.id)
    assert outage.seen == 3
