"""The callback store's writes: a batch of verified transfers in one durable commit.

Used by :class:`~airflow_provider_tronenergy.callbacks.store.CallbackStore` (see its
module for the guarantees), which brings the schema up to date first. Three paths,
by backend and batch size: one autocommit statement on SQLite, one simple-query
message on PostgreSQL with psycopg2, and a serialised transaction otherwise; all
insert with ``ON CONFLICT (tx_hash) DO NOTHING``, one multi-row statement that
SQLAlchemy builds (compiled once per batch size).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import sqlite3
import threading
import weakref
from collections.abc import Sequence
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks.events import RecordResult, VerifiedTransfer
from airflow_provider_tronenergy.sqlengine import SQLA_2

INSERT_COLUMNS: Final = (
    "tx_hash", "token", "from_address", "to_address", "amount", "amount_micro",
    "block_number", "block_timestamp_ms", "sent_at", "received_at_ms", "verified_by",
    "signature", "raw_body", "receipt",
)


class TransferWriter:
    """The insert paths of one store's ``<prefix>transfers``. Thread-safe."""

    def __init__(self, db: sqlstore.Database, transfers: sa.Table) -> None:
        self.db = db
        self.transfers = transfers
        self.backend = db.backend
        # Old SQLite builds allow only 999 bound variables per statement.
        variables = 999 if sqlite3.sqlite_version_info < (3, 32, 0) else 32_766
        self.rows_per_statement = min(500, variables // len(INSERT_COLUMNS))
        self._statements: dict[tuple[str, int], str] = {}
        # Drawn by next_receipt on first use, and again in a forked child.
        self.receipt_owner = 0
        self._receipt_prefix = ""
        self._receipt_counter = itertools.count()
        # PostgreSQL: each writing thread keeps one autocommit connection of its own (the
        # receiver has one writer thread). Held weakly here, only so close() can reach
        # them: a thread that ends takes its connection with it.
        self.one_message = self.backend == "postgresql" and db.engine.dialect.driver == "psycopg2"
        self._writer_local = threading.local()
        self.connections: weakref.WeakSet[Any] = weakref.WeakSet()
        self._connections_lock = threading.Lock()

    def close(self) -> None:
        """Close the writing threads' kept connections."""
        with self._connections_lock:
            kept = list(self.connections)
            self.connections.clear()
        for raw in kept:
            with contextlib.suppress(Exception):
                raw.close()

    def record_many(self, events: Sequence[VerifiedTransfer]) -> list[RecordResult]:
        """Insert in one transaction (one fsync); a tx_hash already stored is a duplicate.

        When this returns, every row is durably committed. Rows go in with
        ``INSERT .. ON CONFLICT (tx_hash) DO NOTHING``: the constraint is what keeps
        a transfer single. The ``duplicate`` flags are exact too: PostgreSQL returns
        the inserted rows; on SQLite, when fewer rows went in than were offered, the
        batch's random ``receipt`` (stored on each row) tells its own rows apart.
        """
        receipt = self.next_receipt()
        fresh: dict[str, tuple[Any, ...]] = {}
        for event in events:
            fresh.setdefault(event.tx_hash, _row_values(event, receipt))
        rows = list(fresh.values())
        inserted: set[str] = set()
        if self.backend == "sqlite" and len(rows) <= self.rows_per_statement:
            inserted = self._insert_sqlite_statement(rows, receipt)
        elif self.one_message and len(rows) <= self.rows_per_statement:
            inserted = self._insert_postgres_message(rows)
        else:
            with self.db.write(locked=True) as conn:
                for start in range(0, len(rows), self.rows_per_statement):
                    chunk = rows[start:start + self.rows_per_statement]
                    inserted |= self._insert_chunk(conn, chunk, receipt)
        results = []
        for event in events:
            new = event.tx_hash in inserted
            inserted.discard(event.tx_hash)  # a repeat within the batch is a duplicate
            results.append(RecordResult(event.tx_hash, duplicate=not new))
        return results

    def next_receipt(self) -> str:
        """16 hex digits unique to one commit: a random per-process prefix and a counter.

        Not ``secrets.token_hex`` per batch: reading the OS's randomness releases
        the GIL, and every release costs the commit thread a wait to win it back
        from the busy event loop. The prefix is redrawn in a forked child, so two
        processes never share a sequence.
        """
        pid = os.getpid()
        if pid != self.receipt_owner:
            self._receipt_prefix = secrets.token_hex(3)
            self._receipt_counter = itertools.count()
            self.receipt_owner = pid
        return f"{self._receipt_prefix}{next(self._receipt_counter) % 16**10:010x}"

    def _insert_sqlite_statement(self, rows: list[tuple[Any, ...]], receipt: str) -> set[str]:
        """The whole batch as one autocommit statement: its own transaction and fsync.

        On SQLite a lone statement is atomic and, with ``synchronous=FULL``, durable
        when it returns: write lock, rows, commit and fsync all happen inside one
        ``sqlite3_step``. So the commit thread gives up the GIL once per batch, not
        once each for BEGIN, INSERT and COMMIT; each time it must win the GIL back
        from a busy event loop, which can take the interpreter's whole switch
        interval (5 ms).
        """
        raw = self.db.engine.raw_connection()
        try:
            cursor = raw.cursor()
            try:
                cursor.execute(self._driver_sql("insert", len(rows)),
                               tuple(value for row in rows for value in row))
                count = cursor.rowcount
                if count == len(rows) or count <= 0:
                    return {row[0] for row in rows} if count > 0 else set()
                hashes = [row[0] for row in rows]
                cursor.execute(self._driver_sql("own_rows", len(hashes)), (receipt, *hashes))
                return {str(tx) for tx, in cursor.fetchall()}
            finally:
                cursor.close()
        finally:
            raw.close()

    def _insert_postgres_message(self, rows: list[tuple[Any, ...]]) -> set[str]:
        """Lock, insert and commit in one round trip: one simple-query message.

        PostgreSQL runs the statements of one message as a single implicit
        transaction and commits it before answering, so the advisory lock (the
        id-order guarantee) is held from before the insert until after the commit,
        exactly as in ``Database.write(locked=True)``. The transaction path costs four round trips
        (pool pre-ping, lock, insert, commit), and every one of them makes the
        commit thread win the GIL back from the busy event loop. psycopg2 only: it
        binds parameters on the client, so a message may hold several statements.
        """
        raw = self._writer_connection()
        try:
            cursor = raw.cursor()
            try:
                cursor.execute(f"SELECT pg_advisory_xact_lock({self.db.lock_key}); "
                               + self._driver_sql("insert", len(rows)),
                               tuple(value for row in rows for value in row))
                return {str(tx) for tx, in cursor.fetchall()}
            finally:
                cursor.close()
        except Exception:
            # The connection may be broken or mid-transaction: never reuse it.
            self._drop_writer_connection(raw)
            raise

    def _writer_connection(self) -> Any:
        raw: Any = getattr(self._writer_local, "connection", None)
        if raw is None:
            fairy = self.db.engine.raw_connection()  # pre-pinged once, here
            fairy.detach()  # ours until closed: it leaves the pool's accounting
            raw = fairy.dbapi_connection if SQLA_2 else fairy.connection
            raw.autocommit = True
            self._writer_local.connection = raw
            with self._connections_lock:
                self.connections.add(raw)
        return raw

    def _drop_writer_connection(self, raw: Any) -> None:
        self._writer_local.connection = None
        with self._connections_lock:
            self.connections.discard(raw)
        with contextlib.suppress(Exception):
            raw.close()

    def _insert_chunk(
        self, conn: Connection, chunk: list[tuple[Any, ...]], receipt: str
    ) -> set[str]:
        """Insert ``chunk`` inside a transaction; return the tx_hashes actually inserted."""
        params = tuple(value for row in chunk for value in row)
        result = conn.exec_driver_sql(self._driver_sql("insert", len(chunk)), params)
        if self.backend == "postgresql":
            return {str(tx) for tx, in result}
        count = result.rowcount
        if count == len(chunk) or count <= 0:
            return {row[0] for row in chunk} if count > 0 else set()
        hashes = [row[0] for row in chunk]
        found = conn.exec_driver_sql(self._driver_sql("own_rows", len(hashes)), (receipt, *hashes))
        return {str(tx) for tx, in found}

    def _driver_sql(self, kind: str, count: int) -> str:
        """The SQL of :meth:`_insert_statement` or :meth:`_own_rows_statement` for ``count``
        rows, compiled once per size with positional markers, and run on the driver.

        Built by SQLAlchemy (``insert().values([...])`` with the dialect's ``ON CONFLICT
        DO NOTHING``) but compiled once and cached: SQLAlchemy recompiles a multi-row
        VALUES construct on every call, which costs more than the commit, on a thread
        that competes with the event loop for the GIL. One multi-row statement is also
        one round trip, and on SQLite one GIL release instead of one per row.
        """
        sql = self._statements.get((kind, count))
        if sql is None:
            build = self._insert_statement if kind == "insert" else self._own_rows_statement
            statement, names = build(count)
            positional: Any = type(self.db.engine.dialect)  # the same dialect, ? or %s markers
            dialect = positional(paramstyle="qmark" if self.backend == "sqlite" else "format")
            compiled = statement.compile(dialect=dialect)
            if list(compiled.positiontup or ()) != names:  # the order the callers bind in
                raise sqlstore.StoreError("unexpected parameter order in a compiled insert")
            sql = self._statements[(kind, count)] = str(compiled)
        return sql

    def _insert_statement(self, count: int) -> tuple[Any, list[str]]:
        """``INSERT .. VALUES (..) x count ON CONFLICT (tx_hash) DO NOTHING`` (PostgreSQL:
        ``RETURNING tx_hash``), its parameters row by row in :data:`INSERT_COLUMNS` order."""
        t = self.transfers
        rows = [{c: sa.bindparam(f"r{i}c{j}", type_=t.c[c].type)
                 for j, c in enumerate(INSERT_COLUMNS)} for i in range(count)]
        statement = self.db.insert(t).values(rows).on_conflict_do_nothing(
            index_elements=["tx_hash"])
        if self.backend == "postgresql":
            statement = statement.returning(t.c.tx_hash)
        return statement, [f"r{i}c{j}" for i in range(count) for j in range(len(INSERT_COLUMNS))]

    def _own_rows_statement(self, count: int) -> tuple[Any, list[str]]:
        """Which of ``count`` tx_hashes carry this batch's receipt (receipt first, then them)."""
        t = self.transfers
        hashes = [sa.bindparam(f"h{i}", type_=t.c.tx_hash.type) for i in range(count)]
        statement = sa.select(t.c.tx_hash).where(
            t.c.receipt == sa.bindparam("receipt", type_=t.c.receipt.type),
            t.c.tx_hash.in_(hashes))
        return statement, ["receipt", *(f"h{i}" for i in range(count))]


def _row_values(event: VerifiedTransfer, receipt: str) -> tuple[Any, ...]:
    """One row in :data:`INSERT_COLUMNS` order (tx_hash first)."""
    return (
        event.tx_hash, event.token, event.from_address, event.to_address, event.amount,
        event.amount_micro, event.block_number, event.block_timestamp_ms, event.sent_at,
        event.received_at_ms, event.verified_by, event.signature, event.raw_body, receipt,
    )
