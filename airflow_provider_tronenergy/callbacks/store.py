"""The durable callback store: an append-only log of verified transfers, plus consumer offsets.

SQLAlchemy Core only, so the same code runs on SQLAlchemy 1.4 (Airflow 3.0.x)
and 2.x, on SQLite (one host: a file under ``$AIRFLOW_HOME``, WAL with
``synchronous=FULL``, so a commit survives power loss) and on PostgreSQL
(several receiver processes or hosts share one store).

Guarantees the rest of the provider relies on:

* **Dedupe by constraint.** ``tx_hash`` is UNIQUE and rows go in with
  ``INSERT .. ON CONFLICT DO NOTHING``: never check-then-insert, so concurrent
  deliveries and several receiver processes cannot store a transfer twice.
* **Ids become visible in order.** Consumers read "rows with id > my offset";
  that is only safe if a smaller id can never commit after a larger one was
  read. SQLite serialises writers (a batch is one autocommit statement, or a
  ``BEGIN IMMEDIATE`` transaction); on PostgreSQL every write transaction first
  takes a transaction-level advisory lock, so ids are assigned and committed in
  one order across processes and hosts. Ids may have gaps.
* **Exact amounts.** The decimal text as sent, plus an integer in 1e-6 units
  for comparisons. No NUMERIC column: SQLite's NUMERIC affinity would turn
  decimals into floats.

Schema changes: tables are created on first use, and ``<prefix>meta`` records
``schema_version`` (now 2: version 2 added ``<prefix>conflicts``, see
:mod:`.conflicts`). A later release that changes the schema bumps the
version and ships forward-only migration steps in :data:`MIGRATIONS`, applied
in order by :meth:`CallbackStore.ensure_schema` inside the same serialised
write transaction (DDL is transactional on both backends), so whichever
process opens the store first migrates it exactly once. The log itself is
append-only: columns may be added, existing ones are never rewritten. A store
whose version is newer than the code refuses to open rather than guess.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, Connection

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks import conflicts
from airflow_provider_tronenergy.callbacks.events import StoredTransfer, threshold_micro
from airflow_provider_tronenergy.callbacks.store_offsets import StoreOffsets
from airflow_provider_tronenergy.callbacks.store_writes import _INSERT_COLUMNS, StoreWrites
from airflow_provider_tronenergy.sqlstore import StoreError

log = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 2
MIGRATIONS: Final[dict[int, Callable[[Connection, CallbackStore], None]]] = {
    2: conflicts.add_conflicts_table,
}
"""``{n: step}``: the step that moves a store from version ``n - 1`` to ``n``."""

DEFAULT_FILENAME: Final = "tronenergy_callbacks.db"
ENV_STORE_URL: Final = "TRONENERGY_CALLBACK_STORE"
LOCATION: Final = sqlstore.Location(ENV_STORE_URL, "callback_store", DEFAULT_FILENAME)
MAX_LIMIT: Final = 10_000


def store_url(explicit: str | None = None) -> str:
    """``explicit``, else ``$TRONENERGY_CALLBACK_STORE``, else ``[tronenergy]
    callback_store``, else a SQLite file in ``$AIRFLOW_HOME`` (or ~/airflow)."""
    return LOCATION.url(explicit)


class CallbackStore(StoreWrites, StoreOffsets):
    """``CallbackStore(url)``: record verified transfers, list them, track consumer offsets.

    Thread-safe; one instance per process is enough. ``schema`` (PostgreSQL) and
    ``table_prefix`` let several stores share one database.
    """

    def __init__(
        self,
        url: str | URL | None = None,
        *,
        table_prefix: str = "tronenergy_",
        schema: str | None = None,
        pool_size: int = 5,
    ) -> None:
        self.url = sqlstore.parse_url(url or store_url())
        self.backend = self.url.get_backend_name()
        if schema is not None and self.backend != "postgresql":
            raise StoreError("schema= is for PostgreSQL; use table_prefix= on SQLite")
        self.engine = sqlstore.create_engine(self.url, pool_size)
        self.metadata = sa.MetaData(schema=schema)
        p = table_prefix
        self.transfers = sa.Table(
            f"{p}transfers", self.metadata,
            sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                      primary_key=True, autoincrement=True),
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
        self.offsets = sa.Table(
            f"{p}consumer_offsets", self.metadata,
            sa.Column("consumer", sa.String(250), primary_key=True),
            sa.Column("last_id", sa.BigInteger(), nullable=False),
            sa.Column("updated_at_ms", sa.BigInteger(), nullable=False),
        )
        self.meta = sa.Table(
            f"{p}meta", self.metadata,
            sa.Column("key", sa.String(64), primary_key=True),
            sa.Column("value", sa.String(255), nullable=False),
        )
        # Validly signed callbacks that contradict a stored transfer (never stored over it).
        self.conflicts = conflicts.conflicts_table(self.metadata, p)
        self._lock_key = sqlstore.lock_key(f"{schema or ''}.{p}transfers")
        self._ready = threading.Event()
        self._ready_lock = threading.Lock()
        self._dialect_insert = pg_insert if self.backend == "postgresql" else sqlite_insert
        # Old SQLite builds allow only 999 bound variables per statement.
        variables = 999 if sqlite3.sqlite_version_info < (3, 32, 0) else 32_766
        self._rows_per_statement = min(500, variables // len(_INSERT_COLUMNS))
        self._insert_statements: dict[tuple[str, int], str] = {}
        # Drawn by _next_receipt on first use, and again in a forked child.
        self._receipt_owner = 0
        self._receipt_prefix = ""
        self._receipt_counter = itertools.count()
        # PostgreSQL: each writing thread keeps one autocommit connection of its own (the
        # receiver has one writer thread). Held weakly here, only so close() can reach
        # them: a thread that ends takes its connection with it.
        self._one_message = (self.backend == "postgresql"
                             and self.engine.dialect.driver == "psycopg2")
        self._writer_local = threading.local()
        self._writers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._writers_lock = threading.Lock()

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden: the only form that may reach a log."""
        return sqlstore.safe_url(self.url)

    def __repr__(self) -> str:
        return f"CallbackStore({self.safe_url!r})"

    def close(self) -> None:
        with self._writers_lock:
            writers = list(self._writers)
            self._writers.clear()
        for raw in writers:
            with contextlib.suppress(Exception):
                raw.close()
        self.engine.dispose()

    @contextmanager
    def _write(self, *, ordered: bool = True) -> Iterator[Connection]:
        """One write transaction; ``ordered`` ones are serialised (module docstring)."""
        with self.engine.connect() as plain:
            conn = plain.execution_options(tronenergy_immediate=True)
            with conn.begin():
                if self.backend == "postgresql" and ordered:
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"),
                                 {"key": self._lock_key})
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        self.ensure_schema()
        with self.engine.connect() as conn:
            yield conn

    # -- schema -----------------------------------------------------------------------

    def ensure_schema(self) -> None:
        """Create the tables (first use) or migrate them; once per process."""
        if self._ready.is_set():
            return
        with self._ready_lock:
            if self._ready.is_set():
                return
            for attempt in range(5):
                try:
                    with self._write() as conn:
                        self._create_or_migrate(conn)
                    break
                except sa.exc.DBAPIError:
                    # Another process raced us through DDL the lock did not cover
                    # (e.g. an older release); look again.
                    if attempt == 4:
                        raise
                    time.sleep(0.05 * (attempt + 1))
            self._ready.set()

    def _create_or_migrate(self, conn: Connection) -> None:
        self.metadata.create_all(conn, checkfirst=True)
        row = conn.execute(
            sa.select(self.meta.c.value).where(self.meta.c.key == "schema_version")
        ).first()
        if row is None:
            conn.execute(self.meta.insert().values(key="schema_version",
                                                   value=str(SCHEMA_VERSION)))
            log.info("created callback store tables in %s", self.safe_url)
            return
        version = int(row[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"callback store schema is version {version}, newer than this code "
                f"({SCHEMA_VERSION}): upgrade airflow-provider-tronenergy"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[target](conn, self)
            log.info("migrated callback store %s to schema version %d", self.safe_url, target)
        if version < SCHEMA_VERSION:
            conn.execute(self.meta.update().where(self.meta.c.key == "schema_version")
                         .values(value=str(SCHEMA_VERSION)))

    def ping(self) -> None:
        """Raise unless the store answers (and its tables exist): the health check."""
        with self._read() as conn:
            conn.execute(sa.select(sa.literal(1))).scalar()

    # -- reads ------------------------------------------------------------------------

    def list_transfers(
        self,
        address: str | Iterable[str] | None = None,
        after_id: int = 0,
        limit: int = 100,
        *,
        token: str | None = None,
        min_amount: Decimal | int | str | None = None,
        from_address: str | None = None,
        include_raw: bool = False,
    ) -> list[StoredTransfer]:
        """Transfers with ``id > after_id`` in id order, optionally filtered.

        ``address`` is the recipient (one or several); ``token`` is compared
        upper-cased; ``min_amount`` is inclusive and exact (at most 6 decimals).
        """
        if not 0 < limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
        t = self.transfers
        columns = [c for c in t.c if c.name not in ("signature", "raw_body", "receipt")]
        if include_raw:
            columns.append(t.c.raw_body)
        query = sa.select(*columns).where(t.c.id > after_id)
        if address is not None:
            addresses = [address] if isinstance(address, str) else list(address)
            if not addresses:
                return []
            query = query.where(t.c.to_address.in_(addresses) if len(addresses) > 1
                                else t.c.to_address == addresses[0])
        if token is not None:
            query = query.where(t.c.token == token.upper())
        if min_amount is not None:
            query = query.where(t.c.amount_micro >= threshold_micro(min_amount))
        if from_address is not None:
            query = query.where(t.c.from_address == from_address)
        query = query.order_by(t.c.id).limit(limit)
        with self._read() as conn:
            rows = conn.execute(query).mappings().all()
        return [_transfer(row) for row in rows]

    def get_transfer(self, tx_hash: str) -> StoredTransfer | None:
        t = self.transfers
        columns = [c for c in t.c if c.name not in ("signature", "receipt")]
        with self._read() as conn:
            row = conn.execute(
                sa.select(*columns).where(t.c.tx_hash == tx_hash.lower())
            ).mappings().first()
        return None if row is None else _transfer(row)

    def audit_record(self, tx_hash: str) -> tuple[bytes, str] | None:
        """``(raw_body, signature)`` as received, to re-verify a stored callback."""
        t = self.transfers
        with self._read() as conn:
            row = conn.execute(
                sa.select(t.c.raw_body, t.c.signature).where(t.c.tx_hash == tx_hash.lower())
            ).first()
        return None if row is None else (bytes(row[0]), str(row[1]))

    def list_conflicts(self, *, tx_hash: str | None = None, after_id: int = 0,
                       limit: int = 100) -> list[conflicts.Conflict]:
        """Kept callbacks that contradicted a stored transfer (:mod:`.conflicts`)."""
        if not 0 < limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
        return conflicts.list_conflicts(self, tx_hash=tx_hash, after_id=after_id, limit=limit)

    def max_id(self) -> int:
        """The newest id (0 when empty): where a consumer that wants only new events starts."""
        with self._read() as conn:
            value = conn.execute(sa.select(sa.func.max(self.transfers.c.id))).scalar()
        return int(value or 0)

    def count_by_recipient(
        self, addresses: Iterable[str] | None = None, *, token: str | None = None
    ) -> dict[str, int]:
        """Stored transfers per recipient: what reconciliation compares with the service."""
        t = self.transfers
        query = sa.select(t.c.to_address, sa.func.count()).group_by(t.c.to_address)
        wanted = None if addresses is None else list(addresses)
        if wanted is not None:
            if not wanted:
                return {}
            query = query.where(t.c.to_address.in_(wanted))
        if token is not None:
            query = query.where(t.c.token == token.upper())
        with self._read() as conn:
            counts = {str(a): int(n) for a, n in conn.execute(query)}
        if wanted is not None:
            return {a: counts.get(a, 0) for a in wanted}
        return counts

    # -- tests and operations ---------------------------------------------------------

    def drop_tables(self) -> None:
        """Drop this store's tables (tests, and removing a store on purpose)."""
        with self._write() as conn:
            self.metadata.drop_all(conn, checkfirst=True)
        self._ready.clear()


def _transfer(row: Any) -> StoredTransfer:
    raw = row.get("raw_body")
    return StoredTransfer(
        id=int(row["id"]),
        tx_hash=row["tx_hash"],
        from_address=row["from_address"],
        to_address=row["to_address"],
        amount=Decimal(row["amount"]),
        amount_text=row["amount"],
        amount_micro=int(row["amount_micro"]),
        token=row["token"],
        block_number=int(row["block_number"]),
        block_timestamp_ms=int(row["block_timestamp_ms"]),
        sent_at=int(row["sent_at"]),
        received_at_ms=int(row["received_at_ms"]),
        verified_by=row["verified_by"],
        raw_body=None if raw is None else bytes(raw),
    )
