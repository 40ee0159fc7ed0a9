"""The world's SQLite database: schema, connection, transactions and meta values.

Every part of the world (credentials, chain, account, orders, monitoring,
deliveries) is a mixin over this class, so they share one connection and one
transaction discipline. All calls run on the event loop's thread, one at a time,
which makes each operation atomic without locks; ``_tx`` (BEGIN IMMEDIATE) groups
the writes one operation must make together, so a crash never leaves half of one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chain_accounts (address TEXT PRIMARY KEY, activated INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS holdings (
    address TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY (address, token));
CREATE TABLE IF NOT EXISTS orders (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    target_address TEXT NOT NULL,
    to_address TEXT,
    energy_amount INTEGER NOT NULL,
    rent_time TEXT NOT NULL,
    cost_sun INTEGER NOT NULL,
    energy_cost_sun INTEGER NOT NULL,
    activation_sun INTEGER NOT NULL,
    status TEXT NOT NULL,
    tx_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    processing_at REAL NOT NULL,
    complete_at REAL NOT NULL,
    outcome TEXT NOT NULL DEFAULT 'success');
CREATE INDEX IF NOT EXISTS orders_status ON orders (status);
CREATE TABLE IF NOT EXISTS monitored (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    tokens TEXT NOT NULL,
    webhook_url TEXT NOT NULL,
    webhook_secret TEXT,
    is_active INTEGER NOT NULL,
    created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS transfers (
    tx_hash TEXT PRIMARY KEY, from_address TEXT NOT NULL, to_address TEXT NOT NULL,
    amount TEXT NOT NULL, token TEXT NOT NULL, block_number INTEGER NOT NULL,
    block_timestamp INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL,
    tx_hash TEXT NOT NULL,
    data TEXT NOT NULL,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL,
    created_at REAL NOT NULL,
    last_attempt_at REAL,
    last_status_code INTEGER);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, next_attempt_at);
CREATE TABLE IF NOT EXISTS delivery_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    manual INTEGER NOT NULL,
    at REAL NOT NULL,
    status_code INTEGER,
    response_body TEXT,
    error TEXT,
    duration_ms INTEGER NOT NULL);
"""


def iso(ts: float | None) -> str | None:
    """A stored epoch-seconds timestamp as the service's ISO-8601 UTC text."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat().replace("+00:00", "Z")


class Database:
    """One connection (a file with ``--state``, else memory) and the meta key-value table."""

    def __init__(
        self,
        path: str | None,
        *,
        time_scale: float,
        clock: Callable[[], float],
    ) -> None:
        self.time_scale = time_scale
        self.clock = clock
        self.db = sqlite3.connect(
            path or ":memory:", isolation_level=None, check_same_thread=False
        )
        self.db.row_factory = sqlite3.Row
        if path:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _meta_default(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def close(self) -> None:
        self.db.close()
