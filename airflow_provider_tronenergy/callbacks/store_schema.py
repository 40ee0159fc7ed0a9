"""The callback store's tables, declared once, and how an existing store is brought up to date.

Tables: ``<prefix>transfers`` (the append-only log), ``<prefix>consumer_offsets``,
``<prefix>conflicts`` (validly signed callbacks that contradict a stored
transfer, :mod:`.conflicts`) and ``<prefix>meta``. No column is NUMERIC or float:
SQLite's NUMERIC affinity would turn decimals into floats; an amount is its
decimal text plus an integer in 1e-6 units.

Versions: ``<prefix>schema_version`` (row ``callback_store``, kept by
:meth:`sqlstore.Database.migrate`) records the version; :func:`migrations` lists
the steps. The previous release kept the version in ``<prefix>meta`` (key
``schema_version``): :class:`MetaVersion` reads it as the starting version of such
a store, and keeps it in step, so that release, opening a store migrated past it,
still refuses it instead of writing to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore

SCHEMA: Final = "callback_store"
"""The store's row in ``<prefix>schema_version``."""
SCHEMA_VERSION: Final = 2
"""Version 2 added ``<prefix>conflicts``."""
META_KEY: Final = "schema_version"


def _id() -> sa.Column[int]:
    return sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                     primary_key=True, autoincrement=True)


@dataclass(frozen=True)
class StoreTables:
    """One store's four tables (``prefix`` and the metadata's schema name them)."""

    transfers: sa.Table
    offsets: sa.Table
    conflicts: sa.Table
    meta: sa.Table

    @classmethod
    def declare(cls, metadata: sa.MetaData, prefix: str) -> StoreTables:
        """The tables in their newest shape, in ``metadata``."""
        p = prefix
        transfers = sa.Table(
            f"{p}transfers", metadata,
            _id(),
            sa.Column("tx_hash", sa.String(64), nullable=False),
            sa.Column("token", sa.String(64), nullable=False),
            sa.Column("from_address", sa.String(34), nullable=False),
            sa.Column("to_address", sa.String(34), nullable=False),
            sa.Column("amount", sa.String(96), nullable=False),
            sa.Column("amount_micro", sa.BigInteger(), nullable=False),
            sa.Column("block_number", sa.BigInteger(), nullable=False),
            sa.Column("block_timestamp_ms", sa.BigInteger(), nullable=False),
            sa.Column("sent_at", sa.BigInteger(), nullable=False),
            sa.Column("received_at_ms", sa.BigInteger(), nullable=False),
            sa.Column("verified_by", sa.String(16), nullable=False),
            sa.Column("signature", sa.String(64), nullable=False),
            sa.Column("raw_body", sa.LargeBinary(), nullable=False),
            # The commit that stored the row (unique per batch): lets a writer tell its
            # own rows from earlier deliveries of the same transfers.
            sa.Column("receipt", sa.String(16), nullable=False),
            sa.UniqueConstraint("tx_hash", name=f"{p}transfers_tx_hash_key"),
            sa.Index(f"{p}transfers_to_id", "to_address", "id"),
            sqlite_autoincrement=True,  # never reuse an id, even after a manual delete
        )
        offsets = sa.Table(
            f"{p}consumer_offsets", metadata,
            sa.Column("consumer", sa.String(250), primary_key=True),
            sa.Column("last_id", sa.BigInteger(), nullable=False),
            sa.Column("updated_at_ms", sa.BigInteger(), nullable=False),
        )
        conflicts = sa.Table(
            f"{p}conflicts", metadata,
            _id(),
            sa.Column("tx_hash", sa.String(64), nullable=False),
            sa.Column("fields", sa.String(64), nullable=False),
            sa.Column("stored_id", sa.BigInteger(), nullable=False),
            sa.Column("from_address", sa.String(34), nullable=False),
            sa.Column("to_address", sa.String(34), nullable=False),
            sa.Column("amount", sa.String(96), nullable=False),
            sa.Column("token", sa.String(64), nullable=False),
            sa.Column("received_at_ms", sa.BigInteger(), nullable=False),
            sa.Column("verified_by", sa.String(16), nullable=False),
            sa.Column("signature", sa.String(64), nullable=False),
            sa.Column("raw_body", sa.LargeBinary(), nullable=False),
            sa.Column("body_sha256", sa.String(64), nullable=False),
            sa.UniqueConstraint("tx_hash", "body_sha256", name=f"{p}conflicts_body_key"),
            sqlite_autoincrement=True,
        )
        meta = sa.Table(
            f"{p}meta", metadata,
            sa.Column("key", sa.String(64), primary_key=True),
            sa.Column("value", sa.String(255), nullable=False),
        )
        return cls(transfers, offsets, conflicts, meta)

    @property
    def all(self) -> tuple[sa.Table, ...]:
        """Every table, in the order they are created (dropped in reverse)."""
        return (self.transfers, self.offsets, self.conflicts, self.meta)


def migrations(tables: StoreTables) -> dict[int, sqlstore.Step]:
    """``{n: step}``: the step that moves a store from version ``n - 1`` to ``n``."""

    def add_conflicts_table(conn: Connection) -> None:
        # Version 2; Database.migrate has usually created it already, in its newest shape.
        tables.conflicts.create(conn, checkfirst=True)

    return {2: add_conflicts_table}


@dataclass(frozen=True)
class MetaVersion:
    """The version where the previous release kept it: ``<prefix>meta``'s ``schema_version``
    (a :class:`sqlstore.LegacyVersion`)."""

    meta: sa.Table

    def read(self, conn: Connection) -> int | None:
        """The version the previous release recorded, or None."""
        m = self.meta
        value = conn.execute(sa.select(m.c.value).where(m.c.key == META_KEY)).scalar()
        return None if value is None else int(value)

    def write(self, conn: Connection, version: int) -> None:
        """Keep the previous release's record in step (it refuses a newer store)."""
        m = self.meta
        updated = conn.execute(m.update().where(m.c.key == META_KEY).values(value=str(version)))
        if not updated.rowcount:
            conn.execute(m.insert().values(key=META_KEY, value=str(version)))
