"""The callback store's tables, declared once, and how an existing store is brought up to date.

Tables: ``<prefix>transfers`` (the append-only log), ``<prefix>consumer_offsets``,
``<prefix>conflicts`` (validly signed callbacks that contradict a stored
transfer, :mod:`.conflicts`), ``<prefix>hourly`` (transfers stored and redeliveries,
counted per hour: :mod:`.hourly`). No column is NUMERIC or float:
SQLite's NUMERIC affinity would turn decimals into floats; an amount is its
decimal text plus an integer in 1e-6 units.

Versions: ``<prefix>schema_version`` (row ``callback_store``, kept by
:meth:`sqlstore.Database.migrate`) records the version; :func:`migrations` lists
the steps a later release adds (none yet: version 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore

SCHEMA: Final = "callback_store"
"""The store's row in ``<prefix>schema_version``."""
HOUR_MS: Final = 3_600_000


def _id() -> sa.Column[int]:
    return sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                     primary_key=True, autoincrement=True)


@dataclass(frozen=True)
class StoreTables:
    """One store's tables (``prefix`` and the metadata's schema name them)."""

    transfers: sa.Table
    offsets: sa.Table
    conflicts: sa.Table
    hourly: sa.Table

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
        hourly = sa.Table(
            f"{p}hourly", metadata,  # one row per hour that stored or redelivered any
            sa.Column("hour_ms", sa.BigInteger(), primary_key=True, autoincrement=False),
            sa.Column("stored", sa.BigInteger(), nullable=False),
            sa.Column("duplicates", sa.BigInteger(), nullable=False),
        )
        # The trigger that keeps ``stored`` is created with the table.
        sa.event.listen(hourly, "after_create",
                        lambda target, connection, **kw: count_stored(connection, transfers,
                                                                      hourly))
        return cls(transfers, offsets, conflicts, hourly)

    @property
    def all(self) -> tuple[sa.Table, ...]:
        """Every table, in the order they are created (dropped in reverse)."""
        return (self.transfers, self.offsets, self.conflicts, self.hourly)


def migrations(tables: StoreTables) -> dict[int, sqlstore.Step]:
    """``{n: step}``: the step that moves a store from version ``n - 1`` to ``n``; none
    yet, the first release is version 1 (a later release adds its steps here, from 2)."""
    del tables
    return {}


def _names(conn: Connection, transfers: sa.Table, hourly: sa.Table) -> dict[str, str]:
    quote = conn.dialect.identifier_preparer
    schema = f"{quote.quote_schema(transfers.schema)}." if transfers.schema else ""
    return {"transfers": quote.format_table(transfers), "hourly": quote.format_table(hourly),
            "trigger": quote.quote(f"{transfers.name}_hourly"),
            "function": schema + quote.quote(f"{transfers.name}_hourly"),
            "hour": f"received_at_ms - received_at_ms % {HOUR_MS}"}


def count_stored(conn: Connection, transfers: sa.Table, hourly: sa.Table) -> None:
    """The trigger that counts every stored transfer in ``<prefix>hourly``, in the insert's
    own transaction: exact whatever writes (any receiver, any release), and the receiver's
    Python path is unchanged. A redelivery inserts nothing, so it fires nothing."""
    n = _names(conn, transfers, hourly)
    if conn.dialect.name == "postgresql":  # once per statement, over the rows it inserted
        conn.execute(sa.text(
            f"CREATE OR REPLACE FUNCTION {n['function']}() RETURNS trigger LANGUAGE plpgsql "
            f"AS $$ BEGIN INSERT INTO {n['hourly']} (hour_ms, stored, duplicates) "
            f"SELECT {n['hour']}, count(*), 0 FROM inserted GROUP BY 1 "
            f"ON CONFLICT (hour_ms) DO UPDATE SET stored = {n['hourly']}.stored "
            "+ EXCLUDED.stored; RETURN NULL; END $$"))
        conn.execute(sa.text(
            f"CREATE TRIGGER {n['trigger']} AFTER INSERT ON {n['transfers']} REFERENCING NEW "
            f"TABLE AS inserted FOR EACH STATEMENT EXECUTE PROCEDURE {n['function']}()"))
    else:
        conn.execute(sa.text(
            f"CREATE TRIGGER IF NOT EXISTS {n['trigger']} AFTER INSERT ON {n['transfers']} "
            f"BEGIN INSERT INTO {n['hourly']} (hour_ms, stored, duplicates) VALUES "
            f"(NEW.received_at_ms - NEW.received_at_ms % {HOUR_MS}, 1, 0) "
            "ON CONFLICT (hour_ms) DO UPDATE SET stored = "
            "stored + 1; END"))
