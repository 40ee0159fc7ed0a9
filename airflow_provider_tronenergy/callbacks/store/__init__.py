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

Built by composition: a :class:`sqlstore.Database` (URL, engine, the serialised
write transaction, versioned migrations), the tables declared once
(:mod:`.schema`), and three collaborators given the database and their
tables: :class:`.writes.TransferWriter` (the insert paths),
:class:`.offsets.ConsumerOffsets` and :class:`.conflicts.Conflicts`. The
reads are here. The log is append-only: columns may be added, existing ones are
never rewritten.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks.conflicts import Conflict, Conflicts
from airflow_provider_tronenergy.callbacks.events import (
    RecordResult,
    StoredTransfer,
    VerifiedTransfer,
    threshold_micro,
)
from airflow_provider_tronenergy.callbacks.store.hourly import HourlyCounts
from airflow_provider_tronenergy.callbacks.store.offsets import ConsumerOffsets
from airflow_provider_tronenergy.callbacks.store.schema import (
    SCHEMA,
    StoreTables,
    migrations,
)
from airflow_provider_tronenergy.callbacks.store.writes import TransferWriter

log = logging.getLogger(__name__)

DEFAULT_FILENAME: Final = "tronenergy_callbacks.db"
ENV_STORE_URL: Final = "TRONENERGY_CALLBACK_STORE"
LOCATION: Final = sqlstore.Location(ENV_STORE_URL, "callback_store", DEFAULT_FILENAME,
                                    "callback store")
MAX_LIMIT: Final = 10_000


def store_url(explicit: str | None = None) -> str:
    """``explicit``, else ``$TRONENERGY_CALLBACK_STORE``, else ``[tronenergy]
    callback_store``, else a SQLite file in ``$AIRFLOW_HOME`` (or ~/airflow)."""
    return LOCATION.url(explicit)


class CallbackStore:
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
        # The lock is keyed by the transfers table: every receiver and reader of this
        # store serialises its writes on it.
        self.db = sqlstore.Database(url, LOCATION, lock_name=f"{table_prefix}transfers",
                                    schema=schema, table_prefix=table_prefix,
                                    pool_size=pool_size)
        self.url, self.backend, self.engine = self.db.url, self.db.backend, self.db.engine
        self.tables = StoreTables.declare(self.db.metadata, table_prefix)
        self._migrations = migrations(self.tables)
        self.writer = TransferWriter(self.db, self.tables.transfers)
        self.offsets = ConsumerOffsets(self.db, self.tables.offsets)
        self.conflicts = Conflicts(self.db, self.tables.transfers, self.tables.conflicts)
        self.hourly = HourlyCounts(self.db, self.tables.hourly)

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden: the only form that may reach a log."""
        return self.db.safe_url

    def __repr__(self) -> str:
        return f"CallbackStore({self.safe_url!r})"

    def close(self) -> None:
        """Close the writers' kept connections and release the connection pool."""
        self.writer.close()
        self.db.close()

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        self.ensure_schema()
        with self.engine.connect() as conn:
            yield conn

    def ensure_schema(self) -> None:
        """Create the tables (first use) or migrate them; once per process."""
        self.db.migrate(SCHEMA, self.tables.all, self._migrations)

    def ping(self) -> None:
        """Raise unless the store answers (and its tables exist): the health check."""
        with self._read() as conn:
            conn.execute(sa.select(sa.literal(1))).scalar()

    # -- writes --------------------------------------------------------------------

    def record(self, event: VerifiedTransfer) -> RecordResult:
        """Store one transfer (:meth:`record_many` of one)."""
        return self.record_many([event])[0]

    def record_many(self, events: Sequence[VerifiedTransfer]) -> list[RecordResult]:
        """Store a batch in one durable commit; flag duplicates, and contradictions of a
        stored transfer (kept apart in ``<prefix>conflicts``, never stored over it).

        When this returns, every row is durably committed; a ``tx_hash`` already
        stored is a duplicate (:meth:`.TransferWriter.record_many` says how exactly),
        and each true redelivery is counted in its hour (:mod:`.hourly`).
        """
        if not events:
            return []
        self.ensure_schema()
        results = self.writer.record_many(events)
        if any(result.duplicate for result in results):
            # Some were stored already: retries, or contradictions (answered 409).
            results = self.conflicts.check(events, results)
            redelivered = [event.received_at_ms for event, result
                           in zip(events, results, strict=True)
                           if result.duplicate and not result.conflict]
            try:
                self.hourly.add_duplicates(redelivered)
            except sa.exc.SQLAlchemyError as exc:  # a statistic: the transfers committed
                log.warning("%d redeliveries were not counted: %s", len(redelivered),
                            type(exc).__name__)
        return results

    # -- consumer offsets -------------------------------------------------------------

    def get_offset(self, consumer: str) -> int:
        """The last id ``consumer`` has finished with (0 when it never committed)."""
        return self.committed_offset(consumer) or 0

    def committed_offset(self, consumer: str) -> int | None:
        """``consumer``'s committed offset, or None when it never committed one."""
        self.ensure_schema()
        return self.offsets.committed(consumer)

    def commit_offset(self, consumer: str, last_id: int) -> int:
        """Move ``consumer``'s offset forward to ``last_id`` (never back); return it.

        Forward-only, so a late or repeated commit cannot make a consumer re-fire
        events it already handled. Use :meth:`set_offset` to rewind on purpose.
        """
        self.ensure_schema()
        return self.offsets.commit(consumer, last_id, forward_only=True)

    def set_offset(self, consumer: str, last_id: int) -> None:
        """Set ``consumer``'s offset exactly, backwards too (an operator's replay)."""
        self.ensure_schema()
        self.offsets.commit(consumer, last_id, forward_only=False)

    def start_offset(self, consumer: str) -> int:
        """Where a consumer starts: its committed offset, or (new) the present.

        "New" means no offset row at all, not an offset of 0: a consumer that started
        on an empty store has committed 0, and the transfers stored while its
        triggerer was down must still fire it.
        """
        committed = self.committed_offset(consumer)
        if committed is None:
            committed = self.commit_offset(consumer, self.max_id())
        return committed

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
        t = self.tables.transfers
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
        """The stored transfer with ``tx_hash`` (any case), with its raw body; or None."""
        t = self.tables.transfers
        columns = [c for c in t.c if c.name not in ("signature", "receipt")]
        with self._read() as conn:
            row = conn.execute(
                sa.select(*columns).where(t.c.tx_hash == tx_hash.lower())
            ).mappings().first()
        return None if row is None else _transfer(row)

    def audit_record(self, tx_hash: str) -> tuple[bytes, str] | None:
        """``(raw_body, signature)`` as received, to re-verify a stored callback."""
        t = self.tables.transfers
        with self._read() as conn:
            row = conn.execute(
                sa.select(t.c.raw_body, t.c.signature).where(t.c.tx_hash == tx_hash.lower())
            ).first()
        return None if row is None else (bytes(row[0]), str(row[1]))

    def list_conflicts(self, *, tx_hash: str | None = None, after_id: int = 0,
                       limit: int = 100) -> list[Conflict]:
        """Kept callbacks that contradicted a stored transfer (:mod:`.conflicts`)."""
        if not 0 < limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
        self.ensure_schema()
        return self.conflicts.find(tx_hash=tx_hash, after_id=after_id, limit=limit)

    def max_id(self) -> int:
        """The newest id (0 when empty): where a consumer that wants only new events starts."""
        with self._read() as conn:
            value = conn.execute(sa.select(sa.func.max(self.tables.transfers.c.id))).scalar()
        return int(value or 0)

    def count_by_recipient(
        self, addresses: Iterable[str] | None = None, *, token: str | None = None
    ) -> dict[str, int]:
        """Stored transfers per recipient: what reconciliation compares with the service."""
        t = self.tables.transfers
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
        self.db.drop(SCHEMA, self.tables.all)


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
