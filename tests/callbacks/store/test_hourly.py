"""Per hour, on SQLite and PostgreSQL: every stored transfer counted by the trigger, in the
insert's transaction, whichever path wrote it; a retry counted as a redelivery, a first
delivery and a contradiction (a conflict) not; counts from several writers add up."""

from __future__ import annotations

import dataclasses
import threading

import sqlalchemy as sa

from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.callbacks.store.schema import HOUR_MS
from airflow_provider_tronenergy.callbacks.verify import parse_transfer
from support.callbacks import callback_body, transfer_data
from tronenergy_protocol.signing import sign_callback

SECRET = "whsec_hourly_tests"
HOUR = 1_800_000_000_000 // HOUR_MS * HOUR_MS  # some hour in 2027
EVERY = (0, 2**62)


def event(at: int, **data: object) -> VerifiedTransfer:
    body = callback_body(transfer_data(**data))
    made = parse_transfer(body, signature=sign_callback(SECRET, body), verified_by="key")
    return dataclasses.replace(made, received_at_ms=at)


def test_each_stored_transfer_counts_in_its_hour_a_redelivery_as_a_duplicate(
        store: CallbackStore):
    first, other = event(HOUR + 5), event(HOUR + HOUR_MS + 6)
    store.record_many([first, other, first])  # the second `first` is a redelivery
    assert store.hourly.per_hour(*EVERY) == {HOUR: (1, 1), HOUR + HOUR_MS: (1, 0)}
    store.record(dataclasses.replace(other, received_at_ms=HOUR + 10))
    contradiction = event(HOUR + 20, tx_hash=first.tx_hash, amount="999",
                          to=first.to_address, token=first.token,
                          **{"from": first.from_address})
    assert store.record(contradiction).conflict == ("amount",)  # neither stored nor a retry
    store.record(event(HOUR + 2 * HOUR_MS - 1))
    assert store.hourly.per_hour(*EVERY) == {HOUR: (1, 2), HOUR + HOUR_MS: (2, 0)}
    assert store.hourly.per_hour(HOUR + HOUR_MS, HOUR + 2 * HOUR_MS) == \
        {HOUR + HOUR_MS: (2, 0)}


def test_every_insert_path_is_counted(store_factory):
    """One statement, a transaction of several statements, a row written by other code:
    the trigger counts what went in, not what the receiver meant to write."""
    store = store_factory()
    store.writer.rows_per_statement = 3  # a batch of 7 goes in three statements
    batch = [event(HOUR + i) for i in range(7)]
    assert not any(r.duplicate for r in store.record_many(batch))
    t = store.tables.transfers
    with store.engine.begin() as conn:  # another release's writer, say
        row = {c.name: getattr(batch[0], c.name, None) for c in t.c if c.name != "id"}
        conn.execute(t.insert().values(**{**row, "tx_hash": "ab" * 32, "amount": "1",
                                          "amount_micro": 1_000_000, "signature": "00",
                                          "block_number": 1, "block_timestamp_ms": 1,
                                          "sent_at": 1, "received_at_ms": HOUR + 99,
                                          "raw_body": b"{}", "receipt": "x"}))
        stored = conn.execute(sa.select(sa.func.count()).select_from(t)).scalar()
    assert stored == 8
    assert store.hourly.per_hour(*EVERY) == {HOUR: (8, 0)}


def test_counts_from_several_writers_add_up(store_factory):
    stored = store_factory()
    first = event(HOUR)
    stored.record(first)
    writers = [store_factory() for _ in range(3)]

    def deliver(store: CallbackStore, n: int) -> None:
        for i in range(10):
            assert store.record(first).duplicate
            assert not store.record(event(HOUR + HOUR_MS + n * 100 + i)).duplicate

    threads = [threading.Thread(target=deliver, args=(w, n)) for n, w in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert stored.hourly.per_hour(*EVERY) == {HOUR: (1, 30), HOUR + HOUR_MS: (30, 0)}
