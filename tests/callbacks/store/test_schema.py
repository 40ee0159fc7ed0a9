"""A callback store of the previous release (its version in ``<prefix>meta``, no
``<prefix>schema_version``) is brought up to date in place, on SQLite and PostgreSQL:
its rows survive, only the missing steps run, the version is recorded in both places,
and a store newer than the code still refuses to open."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks import store as store_module
from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.callbacks.store.schema import StoreTables, migrations
from airflow_provider_tronenergy.callbacks.verify import parse_transfer
from airflow_provider_tronenergy.protocol.signing import sign_callback
from airflow_provider_tronenergy.sqlstore import StoreError
from support.callbacks import callback_body, transfer_data

SECRET = "whsec_upgrade_tests"

# The previous release's tables, as its code created them (SQLite; PostgreSQL differs
# in {id} and {blob}). Version 1 had no conflicts table.
PREVIOUS_RELEASE_DDL = {
    "transfers": """CREATE TABLE {p}transfers (
        id {id}, tx_hash VARCHAR(64) NOT NULL, token VARCHAR(64) NOT NULL,
        from_address VARCHAR(34) NOT NULL, to_address VARCHAR(34) NOT NULL,
        amount VARCHAR(96) NOT NULL, amount_micro BIGINT NOT NULL,
        block_number BIGINT NOT NULL, block_timestamp_ms BIGINT NOT NULL,
        sent_at BIGINT NOT NULL, received_at_ms BIGINT NOT NULL,
        verified_by VARCHAR(16) NOT NULL, signature VARCHAR(64) NOT NULL,
        raw_body {blob} NOT NULL, receipt VARCHAR(16) NOT NULL,
        CONSTRAINT tronenergy_transfers_tx_hash_key UNIQUE (tx_hash))""",
    "index": "CREATE INDEX tronenergy_transfers_to_id ON {p}transfers (to_address, id)",
    "offsets": """CREATE TABLE {p}consumer_offsets (
        consumer VARCHAR(250) NOT NULL, last_id BIGINT NOT NULL,
        updated_at_ms BIGINT NOT NULL, PRIMARY KEY (consumer))""",
    "meta": """CREATE TABLE {p}meta (
        "key" VARCHAR(64) NOT NULL, value VARCHAR(255) NOT NULL, PRIMARY KEY ("key"))""",
    "conflicts": """CREATE TABLE {p}conflicts (
        id {id}, tx_hash VARCHAR(64) NOT NULL, fields VARCHAR(64) NOT NULL,
        stored_id BIGINT NOT NULL, from_address VARCHAR(34) NOT NULL,
        to_address VARCHAR(34) NOT NULL, amount VARCHAR(96) NOT NULL,
        token VARCHAR(64) NOT NULL, received_at_ms BIGINT NOT NULL,
        verified_by VARCHAR(16) NOT NULL, signature VARCHAR(64) NOT NULL,
        raw_body {blob} NOT NULL, body_sha256 VARCHAR(64) NOT NULL,
        CONSTRAINT tronenergy_conflicts_body_key UNIQUE (tx_hash, body_sha256))""",
}
TYPES = {
    "sqlite": {"id": "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT", "blob": "BLOB"},
    "postgresql": {"id": "BIGSERIAL NOT NULL PRIMARY KEY", "blob": "BYTEA"},
}


def event(**data: object) -> VerifiedTransfer:
    body = callback_body(transfer_data(**data))
    return parse_transfer(body, signature=sign_callback(SECRET, body), verified_by="key")


class Previous:
    """A database holding a callback store as the previous release left it."""

    def __init__(self, url: str, schema: str | None) -> None:
        self.url, self.schema = url, schema
        self.engine = sqlstore.create_engine(sqlstore.parse_url(url))
        self.backend = self.engine.dialect.name
        self.prefix = f'"{schema}".tronenergy_' if schema else "tronenergy_"
        self.old = event(amount="12.50")

    def create(self, version: int) -> None:
        """Its tables, a transfer, an offset, a kept conflict (from version 2) and the
        version in ``<prefix>meta``."""
        p = self.prefix
        with self.engine.begin() as conn:
            for name, ddl in PREVIOUS_RELEASE_DDL.items():
                if name != "conflicts" or version >= 2:
                    conn.execute(sa.text(ddl.format(p=p, **TYPES[self.backend])))
            old = self.old
            conn.execute(sa.text(
                f"INSERT INTO {p}transfers (tx_hash, token, from_address, to_address, amount,"
                " amount_micro, block_number, block_timestamp_ms, sent_at, received_at_ms,"
                " verified_by, signature, raw_body, receipt) VALUES (:tx, :token, :sender,"
                " :to, :amount, 12500000, 1, 2, 3, 4, 'key', :signature, :raw, 'r0')"),
                {"tx": old.tx_hash, "token": old.token, "sender": old.from_address,
                 "to": old.to_address, "amount": old.amount, "signature": old.signature,
                 "raw": old.raw_body})
            conn.execute(sa.text(f"INSERT INTO {p}consumer_offsets VALUES ('watcher', 1, 5)"))
            if version >= 2:
                conn.execute(sa.text(
                    f"INSERT INTO {p}conflicts (tx_hash, fields, stored_id, from_address,"
                    " to_address, amount, token, received_at_ms, verified_by, signature,"
                    " raw_body, body_sha256) VALUES (:tx, 'amount', 1, :sender, :to, '13',"
                    " :token, 6, 'key', :signature, :raw, 'sha')"),
                    {"tx": old.tx_hash, "token": old.token, "sender": old.from_address,
                     "to": old.to_address, "signature": old.signature, "raw": b"{}"})
            conn.execute(sa.text(f"INSERT INTO {p}meta VALUES ('schema_version', :v)"),
                         {"v": str(version)})

    def versions(self) -> tuple[dict[str, int], str | None]:
        """What ``<prefix>schema_version`` and ``<prefix>meta`` hold now."""
        with self.engine.connect() as conn:
            inspector = sa.inspect(conn)
            recorded = {}
            if inspector.has_table("tronenergy_schema_version", schema=self.schema):
                recorded = dict(conn.execute(sa.text(
                    f"SELECT store, version FROM {self.prefix}schema_version")).all())
            meta = conn.execute(sa.text(f"SELECT value FROM {self.prefix}meta WHERE "
                                        "\"key\" = 'schema_version'")).scalar()
        return recorded, meta

    def open(self) -> CallbackStore:
        return CallbackStore(self.url, schema=self.schema)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def previous(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Previous]:
    if request.param == "sqlite":
        made = Previous(f"sqlite:///{tmp_path / 'callbacks.db'}", None)
    else:
        made = Previous(request.getfixturevalue("postgres_url"),
                        request.getfixturevalue("pg_schema"))
    yield made
    made.engine.dispose()


@pytest.mark.parametrize("version", [1, 2])
def test_a_store_of_the_previous_release_is_upgraded(previous: Previous, version: int,
                                                     caplog: pytest.LogCaptureFixture):
    previous.create(version)
    store = previous.open()
    try:
        with caplog.at_level(logging.INFO, logger="airflow_provider_tronenergy.sqlstore"):
            (kept,) = store.list_transfers()
        # The version is read from <prefix>meta: only the steps after it run (2 and 3 for
        # version 1, 3 for version 2).
        migrated = [r.getMessage() for r in caplog.records if "migrated" in r.getMessage()]
        assert [m.rsplit(" ", 1)[-1] for m in migrated] == ["2", "3"][version - 1:]
        assert previous.versions() == ({"callback_store": 3}, "3")
        # Step 3 is additive: the hourly counts, the stored transfer counted in its hour.
        with previous.engine.connect() as conn:
            assert sa.inspect(conn).has_table("tronenergy_hourly", schema=previous.schema)
        assert store.hourly.per_hour(0, 2**62) == {0: (1, 0)}  # received at 4 ms
        old = previous.old
        assert (kept.tx_hash, kept.amount_text, kept.amount_micro) == \
            (old.tx_hash, "12.50", 12_500_000)
        assert store.audit_record(old.tx_hash) == (old.raw_body, old.signature)
        assert store.get_offset("watcher") == 1
        assert [c.fields for c in store.list_conflicts()] == ([("amount",)] if version == 2
                                                             else [])
        # It takes new transfers after the old ids, and tells retries from contradictions.
        new = event()
        assert [r.duplicate for r in store.record_many([new, old])] == [False, True]
        hours = store.hourly.per_hour(0, 2**62)
        assert sum(n for n, _ in hours.values()) == 2  # the old and the new, by the trigger
        assert sum(d for _, d in hours.values()) == 1  # the retry
        assert store.get_transfer(new.tx_hash).id > kept.id  # type: ignore[union-attr]
        forged = event(tx_hash=old.tx_hash, amount="99", to=old.to_address,
                       token=old.token, **{"from": old.from_address})
        assert store.record(forged).conflict == ("amount",)
        assert len(store.list_conflicts()) == version
        assert store.commit_offset("watcher", 7) == 7
    finally:
        store.close()
    again = previous.open()  # the next process finds it recorded
    try:
        assert len(again.list_transfers()) == 2
        assert previous.versions() == ({"callback_store": 3}, "3")
    finally:
        again.close()


def test_only_the_missing_steps_run_and_both_records_follow(previous: Previous,
                                                            monkeypatch: pytest.MonkeyPatch):
    """With a step 4, a version 2 store runs steps 3 and 4 only; both records then say 4,
    so this code (newest 3) and the previous release (it reads <prefix>meta) refuse it."""
    previous.create(2)
    ran: list[int] = []

    def counted(n: int, step: sqlstore.Step) -> sqlstore.Step:
        def run(conn: sa.Connection) -> None:
            ran.append(n)
            step(conn)
        return run

    def with_step_4(tables: StoreTables) -> dict[int, sqlstore.Step]:
        steps = {**migrations(tables), 4: lambda conn: None}
        return {n: counted(n, step) for n, step in steps.items()}

    monkeypatch.setattr(store_module, "migrations", with_step_4)
    store = previous.open()
    try:
        assert len(store.list_transfers()) == 1
    finally:
        store.close()
    assert ran == [3, 4]
    assert previous.versions() == ({"callback_store": 4}, "4")
    monkeypatch.undo()
    newer = previous.open()
    try:
        with pytest.raises(StoreError, match="newer"):
            newer.max_id()
    finally:
        newer.close()


def test_a_previous_release_store_newer_than_the_code_refuses(previous: Previous):
    previous.create(2)
    with previous.engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {previous.prefix}meta SET value = '99'"))
    store = previous.open()
    try:
        with pytest.raises(StoreError, match="newer"):
            store.list_transfers()
    finally:
        store.close()
    assert previous.versions() == ({}, "99")  # nothing recorded: the attempt rolled back
