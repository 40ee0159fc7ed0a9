"""TronEnergyTransferTrigger and TronEnergyTransferWatchTrigger on their own (any Airflow 3), on a
real SQLite store: serialization, refused secrets, filter semantics, and the standalone
``run()`` poll loops that Airflow < 3.3 uses (and dag.test() uses on every release).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import time
from decimal import Decimal

import pytest

from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.deposits.handover import TransferFilter
from airflow_provider_tronenergy.triggers import transfer as transfer_module
from airflow_provider_tronenergy.triggers.transfer import (
    TronEnergyTransferTrigger,
    TronEnergyTransferWatchTrigger,
)
from support import store_fixtures
from support.triggers import Collector, Outage, PollClock, record, until
from tronenergy_protocol.address import random_address


def rebuild(trigger):
    """What the triggerer does with a row of the metadata DB: encode the kwargs as
    Airflow stores them, as JSON, decode, import the class path, construct."""
    from airflow.serialization.serialized_objects import BaseSerialization

    classpath, kwargs = trigger.serialize()
    stored = json.dumps(BaseSerialization.serialize(kwargs))
    module, _, name = classpath.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert cls is type(trigger)
    return cls(**BaseSerialization.deserialize(json.loads(stored)))


# -- serialization and secrets --------------------------------------------------------------


def test_transfer_trigger_serialize_round_trip(store_url):
    address, sender = random_address(), random_address()
    trigger = TronEnergyTransferTrigger(
        address=address, after_id=41, token="usdt", min_amount="10.000001",
        from_address=sender, store_url=store_url, poll_interval_seconds=0.5,
        end_time=1_900_000_000.5)
    classpath, kwargs = trigger.serialize()
    assert classpath == "airflow_provider_tronenergy.triggers.transfer.TronEnergyTransferTrigger"
    assert kwargs == {"address": address, "after_id": 41, "token": "usdt",
                      "min_amount": "10.000001", "from_address": sender,
                      "store_url": store_url, "poll_interval_seconds": 0.5,
                      "end_time": 1_900_000_000.5, "proven": True}
    again = rebuild(trigger)
    assert again.serialize() == (classpath, kwargs)
    assert again.filter == trigger.filter == TransferFilter(
        addresses=frozenset({address}), token="USDT", min_micro=10_000_001,
        from_address=sender)
    assert again.shared_stream_key() == trigger.shared_stream_key() is None  # its own poll


def test_watch_trigger_serialize_round_trip(store_url):
    first, second = random_address(), random_address()
    trigger = TronEnergyTransferWatchTrigger(proven=False, addresses=[second, first], token="TRX",
                                             min_amount="0.5", consumer="deposits",
                                             store_url=store_url, poll_interval_seconds=1)
    classpath, kwargs = trigger.serialize()
    assert classpath == ("airflow_provider_tronenergy.triggers.transfer."
                         "TronEnergyTransferWatchTrigger")
    # Sorted: the same watcher always serializes (and hashes, for AssetWatcher) the same.
    assert kwargs == {"addresses": sorted([first, second]), "token": "TRX",
                      "min_amount": "0.5", "consumer": "deposits", "store_url": store_url,
                      "poll_interval_seconds": 1.0, "proven": False}
    again = rebuild(trigger)
    assert again.serialize() == (classpath, kwargs)
    assert again.filter == trigger.filter
    assert again.shared_stream_key() == trigger.shared_stream_key()
    single = TronEnergyTransferWatchTrigger(proven=False, addresses=first)
    assert single.serialize()[1]["addresses"] == [first]
    assert single.serialize()[1]["store_url"] is None  # the triggerer's own setting


@pytest.mark.parametrize("make", [
    lambda **kw: TronEnergyTransferTrigger(
        proven=False, address=random_address(), after_id=0, **kw),
    lambda **kw: TronEnergyTransferWatchTrigger(proven=False, addresses=[random_address()], **kw),
], ids=["trigger", "watch"])
def test_store_url_with_password_is_refused(make, store_url):
    store_fixtures.assert_store_password_refused(make, store_url)


# -- filter semantics -----------------------------------------------------------------------


def test_filter_semantics_match_the_store_query(store: CallbackStore):
    """Each filter, applied in memory (shared stream) and by the store (run, poke), agrees."""
    to, other, sender = random_address(), random_address(), random_address()
    stored = [
        record(store, to, "10", "TRX", sender),
        record(store, to, "9.999999", "TRX", sender),
        record(store, to, "9.9999999", "TRX"),   # floors to 9.999999: below 10
        record(store, to, "10.000001", "usdt"),  # the receiver upper-cases the token
        record(store, to, "10.0000001", "USDT"),
        record(store, to, "0.000001", "TRX"),
        record(store, other, "1000", "TRX", sender),
    ]
    cases = {
        # (address, token, min_amount, from): indexes into ``stored`` that match
        (to, None, None, None): {0, 1, 2, 3, 4, 5},
        (to, "trx", None, None): {0, 1, 2, 5},
        (to, "TRX", "10", None): {0},
        (to, None, "10", None): {0, 3, 4},
        (to, None, "10.000001", None): {3},
        (to, "Usdt", "10.000001", None): {3},
        (to, None, "9.999999", None): {0, 1, 2, 3, 4},
        (to, None, "0", None): {0, 1, 2, 3, 4, 5},
        (to, None, None, sender): {0, 1},
        (to, "TRX", "10", sender): {0},
        (other, None, "10", sender): {6},
        (other, "USDT", None, None): set(),
    }
    for (address, token, min_amount, sender_filter), expected in cases.items():
        flt = TransferFilter.of(address, token, min_amount, sender_filter)
        in_memory = {i for i, t in enumerate(stored) if flt.matches(t)}
        queried = {t.id for t in store.list_transfers(
            address, 0, 100, token=token, min_amount=min_amount, from_address=sender_filter)}
        case = (address == other, token, min_amount, sender_filter is not None)
        assert in_memory == expected, case
        assert queried == {stored[i].id for i in expected}, case


def test_filter_over_several_addresses_and_exact_thresholds():
    a, b = random_address(), random_address()
    flt = TransferFilter.of([a, b], None, Decimal("10.5"), None)
    assert flt.addresses == frozenset({a, b})
    assert flt.min_micro == 10_500_000
    assert TransferFilter.of(None, None, None, None) == TransferFilter()
    for inexact in ("10.0000001", "-1", "NaN", "Infinity"):
        with pytest.raises(ValueError):
            TransferFilter.of(a, None, inexact, None)


def test_unset_optional_filters_mean_any(store: CallbackStore):
    """Templates render a missing value as "None" or "": no filter, in every path."""
    to = random_address()
    usdt = record(store, to, "1", "USDT")
    trigger = TronEnergyTransferTrigger(
        proven=False, address=to, after_id=0, token="None", min_amount="",
        from_address="None")
    assert (trigger.token, trigger.min_amount, trigger.from_address) == (None, None, None)
    assert trigger.filter == TransferFilter.of(to, None, None, None)
    assert trigger.filter.matches(usdt)
    event = asyncio.run(anext(trigger.run()))
    assert event.payload["transfer"]["tx_hash"] == usdt.tx_hash
    watch = TronEnergyTransferWatchTrigger(
        proven=False, addresses=[to], token="", min_amount="None")
    assert (watch.token, watch.min_amount) == (None, None)


# -- TronEnergyTransferTrigger.run ----------------------------------------------------------------


def test_run_fires_with_the_first_match_after_after_id(store: CallbackStore):
    to = random_address()
    before = record(store, to, "50")  # already there when the sensor started: never fires
    after_id = store.max_id()
    record(store, random_address(), "50")          # another recipient
    record(store, to, "4.999999")                  # below min_amount
    record(store, to, "50", "USDT")                # another token
    first = record(store, to, "5")                 # the boundary matches
    record(store, to, "60")
    trigger = TronEnergyTransferTrigger(proven=False, address=to, after_id=after_id, token="trx",
                                        min_amount="5", poll_interval_seconds=0.01)

    async def run_all():
        return [event.payload async for event in trigger.run()]

    events = asyncio.run(run_all())
    assert len(events) == 1
    assert events[0]["status"] == "success"
    payload = events[0]["transfer"]
    assert payload["tx_hash"] == first.tx_hash != before.tx_hash
    assert payload == {
        "id": first.id, "tx_hash": first.tx_hash, "from": first.from_address, "to": to,
        "amount": "5", "token": "TRX", "block_number": first.block_number,
        "block_timestamp_ms": first.block_timestamp_ms,
        "received_at": first.received_at.isoformat(), "proven": False}
    json.dumps(payload)  # the event must be JSON-safe: no Decimal, no datetime


def test_run_waits_for_a_transfer_stored_later(counting_store, poll_clock: PollClock):
    store = counting_store.store
    to = random_address()
    record(store, to, "100")
    trigger = TronEnergyTransferTrigger(
        proven=False, address=to, after_id=store.max_id(), min_amount="10")

    async def scenario():
        collector = Collector(trigger.run())
        await poll_clock.wait_for_sleeps(1)   # polled once, found nothing, sleeping
        assert collector.payloads == [] and counting_store.lookup == 1
        record(store, to, "9.999999")
        record(store, random_address(), "100")
        await poll_clock.tick()
        assert collector.payloads == [] and counting_store.lookup == 2
        wanted = record(store, to, "10")
        record(store, to, "11")
        await poll_clock.tick(done=collector.task.done)
        await until(collector.task.done, what="run() to end after its event")
        return wanted, collector.payloads

    wanted, events = asyncio.run(scenario())
    assert [e["status"] for e in events] == ["success"]
    assert events[0]["transfer"]["tx_hash"] == wanted.tx_hash
    assert events[0]["transfer"]["amount"] == "10"
    assert counting_store.stream == 0  # run() asks only for its own recipient


def test_run_times_out_past_end_time(store: CallbackStore):
    to = random_address()
    record(store, to, "1")
    after_id = store.max_id()

    async def first_event(trigger):
        return (await anext(trigger.run())).payload

    past = TronEnergyTransferTrigger(
        proven=False, address=to, after_id=after_id, end_time=time.time() - 1)
    assert asyncio.run(first_event(past)) == {
        "status": "timeout", "message": f"no matching transfer to {to} in time"}
    soon = TronEnergyTransferTrigger(
        proven=False, address=to, after_id=after_id, poll_interval_seconds=0.02,
        end_time=time.time() + 0.2)
    assert asyncio.run(first_event(soon))["status"] == "timeout"
    # A match already stored wins over an end_time already past.
    found = record(store, to, "2")
    late = TronEnergyTransferTrigger(
        proven=False, address=to, after_id=after_id, end_time=time.time() - 1)
    event = asyncio.run(first_event(late))
    assert event["status"] == "success" and event["transfer"]["tx_hash"] == found.tx_hash


# -- TronEnergyTransferWatchTrigger.run (no shared streams) ---------------------------------------


def test_watch_run_fires_new_transfers_only_and_resumes(store, poll_clock, monkeypatch):
    monkeypatch.setattr(transfer_module, "RUN_COMMIT_GRACE", 0.0)
    a, b = random_address(), random_address()
    old = record(store, a, "5")

    def watcher():
        return TronEnergyTransferWatchTrigger(
            proven=False, addresses=[a, b], min_amount="1", consumer="c")

    async def scenario():
        first = Collector(watcher().run())
        await poll_clock.wait_for_sleeps(1)
        assert store.committed_offset("c") == old.id  # a new consumer starts at the present
        t1 = record(store, a, "1")
        record(store, b, "0.999999")
        record(store, random_address(), "7")
        t2 = record(store, b, "2")
        await poll_clock.tick()
        await poll_clock.tick()  # handed over a cycle ago: committed now
        fired = [p["tx_hash"] for p in first.payloads]
        offset = store.committed_offset("c")
        await first.stop()
        # A restart resumes from the committed offset: nothing fires twice.
        t3 = record(store, a, "3")
        second = Collector(watcher().run())
        await poll_clock.tick()
        refired = [p["tx_hash"] for p in second.payloads]
        await second.stop()
        return (t1, t2, t3), fired, offset, refired

    (t1, t2, t3), fired, offset, refired = asyncio.run(scenario())
    assert fired == [t1.tx_hash, t2.tx_hash]
    assert offset == t2.id
    assert refired == [t3.tx_hash]


def test_watch_run_never_loses_an_event_it_could_not_confirm(store, poll_clock):
    """Without shared streams no persistence confirmation exists: a restart right after
    an event was handed over fires it again rather than losing it."""
    a = random_address()

    async def scenario():
        first = Collector(TronEnergyTransferWatchTrigger(
            proven=False, addresses=[a], consumer="c").run())
        await poll_clock.wait_for_sleeps(1)
        start = store.committed_offset("c")
        t1 = record(store, a, "1")
        await poll_clock.tick()
        fired = list(first.payloads)
        await first.stop()  # the triggerer dies before the grace period is over
        second = Collector(TronEnergyTransferWatchTrigger(
            proven=False, addresses=[a], consumer="c").run())
        await poll_clock.wait_for_sleeps(poll_clock.sleeps + 1)
        again = list(second.payloads)
        await second.stop()
        return t1, start, fired, again

    t1, start, fired, again = asyncio.run(scenario())
    assert start == 0
    assert [p["tx_hash"] for p in fired] == [t1.tx_hash]
    assert [p["tx_hash"] for p in again] == [t1.tx_hash]
    assert store.committed_offset("c") == 0


def test_consumer_started_on_an_empty_store_gets_transfers_stored_while_down(
        store, poll_clock, monkeypatch):
    """Offset 0 committed by a consumer is not "never started": it must not jump ahead."""
    monkeypatch.setattr(transfer_module, "RUN_COMMIT_GRACE", 0.0)
    a = random_address()

    async def scenario():
        first = Collector(TronEnergyTransferWatchTrigger(
            proven=False, addresses=[a], consumer="c").run())
        await poll_clock.wait_for_sleeps(1)
        await first.stop()
        while_down = record(store, a, "1")  # the triggerer was down
        second = Collector(TronEnergyTransferWatchTrigger(
            proven=False, addresses=[a], consumer="c").run())
        await until(lambda: second.payloads != [], what="the event stored while down")
        await second.stop()
        return while_down, second.payloads

    while_down, fired = asyncio.run(scenario())
    assert store.committed_offset("c") is not None
    assert [p["tx_hash"] for p in fired] == [while_down.tx_hash]


def test_the_poll_without_shared_streams_waits_out_a_store_outage(store: CallbackStore):
    """``run()`` (Airflow < 3.3) retries a failed poll instead of failing the watcher."""
    address = random_address()
    trigger = TronEnergyTransferWatchTrigger(proven=False, addresses=[address], consumer="deposits",
                                             poll_interval_seconds=0.01)
    store.start_offset("deposits")
    stored = record(store, address, "3")
    outage = Outage(transfer_module.open_store(None), "list_transfers", 2)
    event = asyncio.run(asyncio.wait_for(anext(trigger.run()), 30))
    assert event.payload["tx_hash"] == stored.tx_hash
    assert outage.seen == 3
