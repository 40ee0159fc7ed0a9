"""TronEnergyTransferTrigger through Airflow 3.3's real SharedStreamManager, in-process.

Many waiting sensors must not multiply database load: every trigger on one store
subscribes with the same ``shared_stream_key``, one ``open_shared_stream`` poll
loop serves them all, and each trigger's ``filter_shared_stream`` picks its own
transfer out of the broadcast. The poll's sleeps run on a test clock, so "per poll
cycle" is counted, never timed.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferTrigger
from support.triggers import CountingStore, PollClock, Triggerer, record, settle, until
from tronenergy_protocol.address import random_address

shared_stream = pytest.importorskip(
    "airflow.triggers.shared_stream",
    reason="Airflow < 3.3 has no airflow.triggers.shared_stream (shared streams): "
           "the triggers run their own poll loops there (run(), tested in "
           "test_transfer.py)")

SharedStreamManager = shared_stream.SharedStreamManager


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The kwargs of every open_shared_stream call: one per shared poll loop started."""
    calls: list[dict] = []
    original = TronEnergyTransferTrigger.open_shared_stream.__func__  # type: ignore[attr-defined]

    async def counted(cls, kwargs):
        calls.append(kwargs)
        async for item in original(cls, kwargs):
            yield item

    monkeypatch.setattr(TronEnergyTransferTrigger, "open_shared_stream", classmethod(counted))
    return calls


def waiting_trigger(i: int, address: str, after_id: int, **kw) -> TronEnergyTransferTrigger:
    """Odd triggers want >= 10, every third one TRX only; the rest take any transfer."""
    return TronEnergyTransferTrigger(proven=False, address=address, after_id=after_id,
                                     min_amount="10" if i % 2 else None,
                                     token="TRX" if i % 3 == 0 else None,
                                     poll_interval_seconds=2.0, **kw)


def test_500_triggers_share_one_poll_and_exactly_the_matching_ones_fire(
        counting_store: CountingStore, poll_clock: PollClock, opened):
    store = counting_store.store
    addresses = [random_address() for _ in range(500)]
    early = record(store, addresses[0], "100")  # stored before the sensors started
    after_id = store.max_id()
    triggers = {i: waiting_trigger(i, a, after_id) for i, a in enumerate(addresses)}
    assert len({t.shared_stream_key() for t in triggers.values()}) == 1

    async def scenario():
        triggerer = Triggerer(SharedStreamManager())
        for i, trigger in triggers.items():
            triggerer.start(i, trigger)
        await poll_clock.wait_for_sleeps(1)
        # Each trigger catches up once, for what was stored before it joined.
        await until(lambda: counting_store.lookup == 500, what="500 catch-up lookups")
        await settle()
        assert triggerer.events == []
        assert len(opened) == 1 and poll_clock.sleeping == 1  # one poll loop for 500

        for _ in range(3):  # idle cycles: one store query each, whoever waits
            await poll_clock.tick()
        assert counting_store.stream == poll_clock.sleeps == 4

        t7 = record(store, addresses[7], "10")             # min 10: the boundary fires
        record(store, addresses[9], "9.999999", "TRX")     # min 10: below
        record(store, addresses[9], "50", "USDT")          # TRX only
        t100 = record(store, addresses[100], "0.000001", "usdt")
        t0 = record(store, addresses[0], "12.5", "TRX")
        record(store, addresses[498], "1", "USDT")          # TRX only
        record(store, random_address(), "1000")             # nobody waits for it
        await poll_clock.tick()
        first = {7, 100, 0}
        await until(lambda: all(triggerer.tasks[i].done() for i in first),
                    what="the three matching triggers")
        await until(lambda: all(triggerer.pulled[i] == 7 for i in triggers if i not in first),
                    what="every other trigger to see all seven transfers")
        await settle()
        fired_first = triggerer.fired()

        t9 = record(store, addresses[9], "10", "TRX")
        await poll_clock.tick()
        await until(lambda: triggerer.tasks[9].done(), what="trigger 9")
        await settle()
        waiting = [i for i, task in triggerer.tasks.items() if not task.done()]
        counts = (counting_store.stream, poll_clock.sleeps, counting_store.lookup,
                  counting_store.max_id_calls, len(opened))
        await triggerer.stop()
        return (t0, t7, t9, t100), fired_first, triggerer.fired(), waiting, counts

    (t0, t7, t9, t100), fired_first, fired, waiting, counts = asyncio.run(scenario())
    assert set(fired_first) == {0, 7, 100}
    assert set(fired) == {0, 7, 9, 100}
    for i, transfer in ((0, t0), (7, t7), (9, t9), (100, t100)):
        assert fired[i] == [{"status": "success", "transfer": fired[i][0]["transfer"]}]
        assert fired[i][0]["transfer"]["tx_hash"] == transfer.tx_hash
    assert fired[0][0]["transfer"]["tx_hash"] != early.tx_hash
    assert len(waiting) == 496
    stream_queries, cycles, lookups, max_ids, loops = counts
    # One store query per poll cycle for all 500, one max_id when the poll opened, and
    # the one-off catch-up lookups: none of it grows with cycles.
    assert stream_queries == cycles == 6
    assert (lookups, max_ids, loops) == (500, 1, 1)


def measure(counting_store: CountingStore, poll_clock: PollClock, waiting: int,
            cycles: int) -> tuple[float, int]:
    """Shared-poll store queries per poll cycle with ``waiting`` triggers, and poll loops."""
    store = counting_store.store
    after_id = store.max_id()
    triggers = [TronEnergyTransferTrigger(proven=False, address=random_address(), after_id=after_id,
                                          poll_interval_seconds=2.0) for _ in range(waiting)]

    async def scenario():
        manager = SharedStreamManager()
        triggerer = Triggerer(manager)
        for i, trigger in enumerate(triggers):
            triggerer.start(i, trigger)
        await poll_clock.wait_for_sleeps(poll_clock.sleeps + 1)
        await until(lambda: counting_store.lookup >= waiting, what="catch-up lookups")
        queries, loops = counting_store.stream, poll_clock.sleeping
        for n in range(cycles):
            record(store, random_address(), "1")  # traffic for nobody
            if n % 2:
                record(store, random_address(), "2")
            await poll_clock.tick()
        per_cycle = (counting_store.stream - queries) / cycles
        await triggerer.stop()
        await manager.stop_all()
        return per_cycle, loops

    counting_store.stream = counting_store.lookup = 0
    return asyncio.run(scenario())


def test_store_queries_per_poll_cycle_are_the_same_for_1_and_500_triggers(
        counting_store: CountingStore, poll_clock: PollClock, opened):
    one, loops_one = measure(counting_store, poll_clock, 1, cycles=5)
    many, loops_many = measure(counting_store, poll_clock, 500, cycles=5)
    assert (loops_one, loops_many) == (1, 1)
    assert one == many == 1.0
    assert len(opened) == 2  # one poll loop per measurement


def test_a_trigger_joining_late_catches_up_on_what_was_already_broadcast(
        counting_store: CountingStore, poll_clock: PollClock, opened):
    store = counting_store.store
    watched, late_address = random_address(), random_address()
    start = store.max_id()

    async def scenario():
        triggerer = Triggerer(SharedStreamManager())
        triggerer.start(1, TronEnergyTransferTrigger(proven=False, address=watched, after_id=start))
        await poll_clock.wait_for_sleeps(1)
        missed = record(store, late_address, "5")
        await poll_clock.tick()  # broadcast before the second trigger subscribed
        await until(lambda: triggerer.pulled[1] == 1, what="the broadcast")
        assert triggerer.events == []
        triggerer.start(2, TronEnergyTransferTrigger(
            proven=False, address=late_address, after_id=start))
        await until(lambda: triggerer.tasks[2].done(), what="the late trigger")
        fired = triggerer.fired()
        await triggerer.stop()
        return missed, fired

    missed, fired = asyncio.run(scenario())
    assert list(fired) == [2]
    assert fired[2][0]["transfer"]["tx_hash"] == missed.tx_hash
    assert len(opened) == 1  # it joined the running poll


def test_shared_triggers_time_out_on_their_own(counting_store, poll_clock, opened):
    store = counting_store.store
    after_id = store.max_id()
    patient, past, soon = (random_address() for _ in range(3))

    async def scenario():
        triggerer = Triggerer(SharedStreamManager())
        triggerer.start(1, TronEnergyTransferTrigger(
            proven=False, address=patient, after_id=after_id))
        triggerer.start(2, TronEnergyTransferTrigger(proven=False, address=past, after_id=after_id,
                                                     end_time=time.time() - 1))
        triggerer.start(3, TronEnergyTransferTrigger(proven=False, address=soon, after_id=after_id,
                                                     end_time=time.time() + 0.2))
        await until(lambda: triggerer.tasks[2].done() and triggerer.tasks[3].done(),
                    what="both deadlines")
        still_waiting = not triggerer.tasks[1].done()
        found = record(store, patient, "1")
        await poll_clock.tick(done=triggerer.tasks[1].done)
        await until(triggerer.tasks[1].done, what="the patient trigger")
        fired = triggerer.fired()
        await triggerer.stop()
        return still_waiting, found, fired

    still_waiting, found, fired = asyncio.run(scenario())
    assert still_waiting
    assert [e["status"] for e in fired[2]] == ["timeout"]
    assert [e["status"] for e in fired[3]] == ["timeout"]
    assert fired[3][0]["message"] == f"no matching transfer to {soon} in time"
    assert fired[1] == [{"status": "success", "transfer": fired[1][0]["transfer"]}]
    assert fired[1][0]["transfer"]["tx_hash"] == found.tx_hash
    assert len(opened) == 1


def test_a_transfer_stored_before_the_trigger_started_never_fires_it(
        counting_store: CountingStore, poll_clock: PollClock, opened):
    """The shared poll may broadcast a transfer stored before a trigger's after_id (the
    poll had not read it yet when the sensor started): the trigger must skip it."""
    store = counting_store.store
    watched = random_address()

    async def scenario():
        triggerer = Triggerer(SharedStreamManager())
        triggerer.start(1, TronEnergyTransferTrigger(proven=False, address=random_address(),
                                                     after_id=store.max_id()))
        await poll_clock.wait_for_sleeps(1)
        before = record(store, watched, "5")  # not polled yet ...
        triggerer.start(2, TronEnergyTransferTrigger(
            proven=False, address=watched, after_id=store.max_id()))
        await until(lambda: counting_store.lookup == 2, what="the second catch-up lookup")
        await poll_clock.tick()  # ... broadcast now, after the sensor started
        await until(lambda: triggerer.pulled[2] == 1, what="the broadcast")
        await settle()
        assert triggerer.events == []
        after = record(store, watched, "5")
        await poll_clock.tick(done=triggerer.tasks[2].done)
        await until(triggerer.tasks[2].done, what="the second trigger")
        fired = triggerer.fired()
        await triggerer.stop()
        return before, after, fired

    before, after, fired = asyncio.run(scenario())
    assert list(fired) == [2]
    assert fired[2][0]["transfer"]["tx_hash"] == after.tx_hash != before.tx_hash
