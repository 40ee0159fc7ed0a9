"""The store on SQLite and on PostgreSQL: dedupe, exact amounts, filters, offsets, ordering."""

from __future__ import annotations

import random
import threading
from decimal import Decimal

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.callbacks import store as store_module
from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.callbacks.verify import parse_transfer
from airflow_provider_tronenergy.sqlstore import StoreError
from support.callbacks import callback_body, transfer_data
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback, verify_callback

SECRET = "whsec_store_tests"


def event(**data: object) -> VerifiedTransfer:
    body = callback_body(transfer_data(**data))
    return parse_transfer(body, signature=sign_callback(SECRET, body), verified_by="key")


def test_duplicates_are_stored_once_and_flagged(store: CallbackStore):
    first, second, third = event(), event(), event()
    results = store.record_many([first, second, first])
    assert [r.duplicate for r in results] == [False, False, True]
    assert store.record(second).duplicate
    assert not store.record(third).duplicate
    # The same hash in upper case (another retry, another serialiser) is the same transfer.
    assert store.record(event(tx_hash=third.tx_hash.upper())).duplicate
    rows = store.list_transfers()
    assert [t.tx_hash for t in rows] == [first.tx_hash, second.tx_hash, third.tx_hash]
    assert rows[0].id < rows[1].id < rows[2].id
    fetched = store.get_transfer(third.tx_hash.upper())
    assert fetched is not None and fetched.raw_body == third.raw_body
    assert fetched.id == rows[2].id and fetched.amount == Decimal("12.5")
    assert store.get_transfer("f" * 64) is None
    assert store.max_id() == rows[2].id


@pytest.mark.parametrize("rows_per_statement", [None, 3])
def test_duplicate_flags_are_exact_in_mixed_batches(store: CallbackStore, rows_per_statement):
    """Old and new rows interleaved, repeats inside a batch, batches split in statements."""
    if rows_per_statement:
        store.writer.rows_per_statement = rows_per_statement  # several statements, one transaction
    old = [event() for _ in range(5)]
    store.record_many(old[1::2])
    new = [event() for _ in range(5)]
    batch = [old[0], new[0], old[1], new[1], new[1], old[3], new[2], new[3], old[0], new[4]]
    results = store.record_many(batch)
    assert [r.tx_hash for r in results] == [e.tx_hash for e in batch]
    assert [r.duplicate for r in results] == \
        [False, False, True, False, True, True, False, False, True, False]
    assert len(store.list_transfers()) == 2 + 6
    assert store.record_many([]) == []


def test_amounts_are_exact_and_compared_in_micro_units(store: CallbackStore):
    to = random_address()
    amounts = ["12.50", "0.000001", "0.0000009", "123456789.123456789", "1",
               "99999999999999999999999"]
    for amount in amounts:
        store.record(event(to=to, amount=amount))
    rows = store.list_transfers(to)
    assert [t.amount_text for t in rows] == amounts  # the text exactly as sent
    assert [t.amount for t in rows] == [Decimal(a) for a in amounts]
    assert all(isinstance(t.amount, Decimal) for t in rows)
    assert [t.amount_micro for t in rows] == [12_500_000, 1, 0, 123_456_789_123_456, 1_000_000,
                                              2**63 - 1]
    assert [t.amount_text for t in store.list_transfers(to, min_amount="1")] == \
        ["12.50", "123456789.123456789", "1", "99999999999999999999999"]
    assert [t.amount_text for t in store.list_transfers(to, min_amount=Decimal("0.000001"))] == \
        ["12.50", "0.000001", "123456789.123456789", "1", "99999999999999999999999"]
    assert [t.amount_text for t in store.list_transfers(to, min_amount="12.500001")] == \
        ["123456789.123456789", "99999999999999999999999"]
    with pytest.raises(ValueError, match="6 decimal"):
        store.list_transfers(to, min_amount="0.0000001")


def test_amount_columns_hold_text_and_integers_never_floats(store: CallbackStore):
    store.record(event(amount="0.10"))
    t = store.tables.transfers
    with store.engine.connect() as conn:
        amount, micro = conn.execute(sa.select(t.c.amount, t.c.amount_micro)).one()
        if store.backend == "sqlite":
            kinds = conn.execute(sa.text(
                f"SELECT typeof(amount), typeof(amount_micro) FROM {t.name}")).one()
            assert tuple(kinds) == ("text", "integer")
    assert (amount, micro) == ("0.10", 100_000)


def test_filters_by_recipient_token_sender_and_position(store: CallbackStore):
    alice, bob, carol, sender = (random_address() for _ in range(4))
    store.record_many([
        event(to=alice, token="TRX", amount="1"),
        event(to=bob, token="USDT", amount="2", **{"from": sender}),
        event(to=alice, token="usdt", amount="3", **{"from": sender}),
        event(to=carol, token="TRX", amount="4"),
    ])
    everything = store.list_transfers()
    ids = [t.id for t in everything]
    assert [t.amount_text for t in store.list_transfers(alice)] == ["1", "3"]
    assert [t.amount_text for t in store.list_transfers([alice, bob])] == ["1", "2", "3"]
    assert store.list_transfers([]) == []
    assert [t.amount_text for t in store.list_transfers(token="usdt")] == ["2", "3"]
    assert store.list_transfers(alice, token="USDT")[0].token == "USDT"
    assert [t.amount_text for t in store.list_transfers(from_address=sender)] == ["2", "3"]
    assert [t.amount_text for t in store.list_transfers(after_id=ids[1])] == ["3", "4"]
    assert [t.amount_text for t in store.list_transfers(after_id=ids[0], limit=2)] == ["2", "3"]
    assert store.list_transfers(after_id=ids[-1]) == []
    assert everything[0].raw_body is None
    with_raw = store.list_transfers(limit=1, include_raw=True)[0]
    assert with_raw.raw_body is not None and b'"tron.transfer"' in with_raw.raw_body
    with pytest.raises(ValueError):
        store.list_transfers(limit=0)


def test_raw_body_and_signature_kept_for_audit(store: CallbackStore):
    stored = event(amount="7.25")
    store.record(stored)
    raw, signature = store.audit_record(stored.tx_hash) or (b"", "")
    assert raw == stored.raw_body
    assert verify_callback(SECRET, raw, signature)
    assert store.audit_record("0" * 64) is None
    payload = store.list_transfers()[0].to_payload()
    assert payload["amount"] == "7.25" and payload["tx_hash"] == stored.tx_hash


def test_count_by_recipient_for_reconciliation(store: CallbackStore):
    alice, bob, nobody = random_address(), random_address(), random_address()
    store.record_many([event(to=alice), event(to=alice), event(to=bob, token="USDT")])
    assert store.count_by_recipient() == {alice: 2, bob: 1}
    assert store.count_by_recipient([alice, nobody]) == {alice: 2, nobody: 0}
    assert store.count_by_recipient([alice, bob], token="usdt") == {alice: 0, bob: 1}
    assert store.count_by_recipient([]) == {}


def test_consumer_offsets_move_forward_only(store: CallbackStore):
    assert store.get_offset("asset-watcher") == 0
    assert store.commit_offset("asset-watcher", 10) == 10
    assert store.commit_offset("asset-watcher", 7) == 10  # a late commit cannot rewind
    assert store.get_offset("asset-watcher") == 10
    assert store.commit_offset("other", 3) == 3
    store.set_offset("asset-watcher", 2)  # an operator's deliberate replay
    assert store.get_offset("asset-watcher") == 2
    assert store.get_offset("other") == 3
    with pytest.raises(ValueError):
        store.commit_offset("asset-watcher", -1)


def test_tables_created_once_and_newer_schema_refused(store_factory):
    first = store_factory()
    first.record(event())
    second = store_factory()  # another process opening the same store
    assert len(second.list_transfers()) == 1
    versions = first.db.versions
    with first.engine.connect() as conn:  # the first release's version
        assert dict(conn.execute(sa.select(versions)).all()) == {"callback_store": 1}
    with first.engine.begin() as conn:
        conn.execute(versions.update().where(versions.c.store == "callback_store")
                     .values(version=99))
    with pytest.raises(StoreError, match="newer"):
        store_factory().max_id()


def test_concurrent_writers_store_each_transfer_once(store_factory):
    """Several processes (here: engines) delivering the same transfers at once."""
    events = [event() for _ in range(120)]
    stores = [store_factory() for _ in range(4)]
    outcomes: list[list[tuple[str, bool]]] = [[] for _ in stores]

    def deliver(index: int) -> None:
        mine = events[:]
        random.Random(index).shuffle(mine)
        for start in range(0, len(mine), 15):
            results = stores[index].record_many(mine[start:start + 15])
            outcomes[index].extend((r.tx_hash, r.duplicate) for r in results)

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    fresh = [tx for outcome in outcomes for tx, duplicate in outcome if not duplicate]
    assert sorted(fresh) == sorted(e.tx_hash for e in events)  # exactly one writer won each
    assert len(stores[0].list_transfers(limit=1000)) == len(events)


def test_consumer_following_offsets_misses_nothing_while_writers_race(store_factory):
    """Ids must become visible in id order, or a consumer at offset N skips late commits."""
    writers = [store_factory() for _ in range(4)]
    reader = store_factory()
    reader.ensure_schema()
    done = threading.Event()
    seen: list[int] = []

    def write(index: int) -> None:
        for _ in range(25):
            writers[index].record_many([event() for _ in range(8)])

    def consume() -> None:
        offset = 0
        while True:
            finished = done.is_set()
            batch = reader.list_transfers(after_id=offset, limit=1000)
            if batch:
                seen.extend(t.id for t in batch)
                offset = batch[-1].id
            elif finished:
                return

    consumer = threading.Thread(target=consume)
    consumer.start()
    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(writers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    done.set()
    consumer.join(60)
    all_ids = [t.id for t in reader.list_transfers(limit=10_000)]
    assert len(all_ids) == 4 * 25 * 8
    assert seen == all_ids


def test_sqlite_is_durable_by_configuration(sqlite_store: CallbackStore):
    sqlite_store.record(event())
    with sqlite_store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_default_url_lives_in_airflow_home(monkeypatch, tmp_path):
    monkeypatch.delenv(store_module.ENV_STORE_URL, raising=False)
    monkeypatch.delenv(OPTION_ENV, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    assert store_module.store_url() == \
        f"sqlite:///{tmp_path / 'home' / 'tronenergy_callbacks.db'}"
    store = CallbackStore()
    store.record(event())
    assert (tmp_path / "home" / "tronenergy_callbacks.db").exists()
    store.close()
    monkeypatch.setenv(store_module.ENV_STORE_URL, "sqlite:////elsewhere.db")
    assert store_module.store_url() == "sqlite:////elsewhere.db"


OPTION_ENV = "AIRFLOW__TRONENERGY__CALLBACK_STORE"


def test_the_callback_store_option_is_honoured_by_every_entry_point(monkeypatch, tmp_path):
    """``[tronenergy] callback_store`` reaches the store however it is opened without a URL:
    the class, the resolver, the per-process access, the receiver's CLI and the plugin."""
    from airflow_provider_tronenergy import callbacks
    from airflow_provider_tronenergy.callbacks import access, app, cli, plugin

    monkeypatch.delenv(store_module.ENV_STORE_URL, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    configured = f"sqlite:///{tmp_path / 'configured.db'}"
    monkeypatch.setenv(OPTION_ENV, configured)
    assert store_module.store_url() == callbacks.store_url() == configured
    opened = [CallbackStore(), cli.open_store(cli.parser().parse_args([]))]
    access.forget_stores()
    opened.append(access.open_store(None))
    built: list[CallbackStore] = []
    monkeypatch.setattr(app, "create_app", lambda store, *a, **kw: built.append(store))
    plugin.build_receiver_app()
    opened += built
    try:
        assert [str(store.url) for store in opened] == [configured] * 4
    finally:
        access.forget_stores()
        for store in opened:
            store.close()
    # The explicit URL and the environment still come first.
    monkeypatch.setenv(store_module.ENV_STORE_URL, "sqlite:////from-env.db")
    assert CallbackStore().url.database == "/from-env.db"
    assert store_module.store_url("sqlite:////explicit.db") == "sqlite:////explicit.db"


def test_unsupported_backend_and_password_never_shown():
    with pytest.raises(StoreError, match="unsupported"):
        CallbackStore("mysql://u:p@localhost/db")
    store = CallbackStore("postgresql://user:hunter2@db.example/tron")
    assert "hunter2" not in repr(store) and "hunter2" not in store.safe_url


@pytest.mark.postgres
def test_postgres_writer_connection_is_replaced_after_the_server_drops_it(
        postgres_url: str, pg_schema: str):
    """Each batch is one message on a kept connection; a dropped one costs one batch."""
    store = CallbackStore(postgres_url, schema=pg_schema)
    try:
        assert store.writer.one_message  # psycopg2: lock, insert and commit in one round trip
        store.record(event())
        (kept,) = list(store.writer.connections)
        with store.engine.connect() as conn:
            conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"),
                         {"pid": kept.get_backend_pid()})
        import psycopg2

        with pytest.raises(psycopg2.OperationalError):
            store.record(event())  # the batch fails: its callbacks get a 503, then retry
        assert not store.writer.connections
        again = event()
        assert store.record(again).duplicate is False  # a fresh connection
        assert store.get_transfer(again.tx_hash) is not None
        assert len(store.list_transfers()) == 2

        def write_once() -> None:
            store.record(event())

        worker = threading.Thread(target=write_once)
        worker.start()
        worker.join(30)
        assert len(store.writer.connections) == 1  # the ended thread's connection went with it
    finally:
        store.close()
    assert not store.writer.connections


def test_dropped_tables_come_back_empty_on_next_use(store: CallbackStore):
    """``drop_tables`` removes the store and its version row; the next use starts afresh."""
    store.record(event())
    store.commit_offset("watcher", 1)
    store.drop_tables()
    assert store.max_id() == 0 and store.committed_offset("watcher") is None
    again = event()
    assert store.record(again).duplicate is False
    versions = store.db.versions
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(versions.c.version)
                            .where(versions.c.store == "callback_store")).scalar() == 1
