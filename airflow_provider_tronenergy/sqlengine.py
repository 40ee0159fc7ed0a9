"""Engines for the provider's SQL stores: SQLite on one host, PostgreSQL for several.

SQLite connections are durable and wait (WAL, ``synchronous=FULL``, a busy timeout) and
start their transactions themselves, so a writer can take the lock up front (``BEGIN
IMMEDIATE``); PostgreSQL connections are pooled and pinged. SQLAlchemy Core only, so the
same code runs on SQLAlchemy 1.4 (Airflow 3.0.x) and 2.x. Which URL a store opens, and
whether it may, is :mod:`~airflow_provider_tronenergy.sqlstore`'s.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.pool import QueuePool, StaticPool

SQLA_2: Final = int(sa.__version__.split(".")[0]) >= 2


def with_driver(url: URL) -> URL:
    """``postgresql://`` means psycopg2 on SQLAlchemy 1.4/2.0 but psycopg 3 on 2.1:
    pick whichever of the two is installed, so one URL works everywhere."""
    if url.drivername != "postgresql":
        return url
    for module, driver in (("psycopg2", "postgresql+psycopg2"), ("psycopg", "postgresql+psycopg")):
        if importlib.util.find_spec(module) is not None:
            return url.set(drivername=driver)
    return url



def create_engine(url: URL, pool_size: int = 5) -> Engine:
    """An engine whose SQLite transactions can take the write lock up front.

    Run a connection with ``execution_options(tronenergy_immediate=True)`` to
    start its transactions with ``BEGIN IMMEDIATE`` (a writer waits for the lock
    instead of failing when a read transaction would have to upgrade).
    """
    kwargs: dict[str, Any] = {} if SQLA_2 else {"future": True}
    if url.get_backend_name() != "sqlite":
        kwargs.update(pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)
        return sa.create_engine(url, **kwargs)
    database = url.database or ""
    memory = database in ("", ":memory:") or "mode=memory" in str(url)
    if not memory:
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    kwargs["poolclass"] = StaticPool if memory else QueuePool
    if not memory:
        kwargs.update(pool_size=pool_size, max_overflow=pool_size)
    engine = sa.create_engine(url, **kwargs)
    sa.event.listen(engine, "connect", sqlite_on_connect(memory))
    sa.event.listen(engine, "begin", sqlite_on_begin)
    return engine


def sqlite_on_connect(memory: bool) -> Callable[[Any, Any], None]:
    """Durable, waiting SQLite connections whose transactions the engine starts itself."""

    def on_connect(dbapi_connection: Any, connection_record: Any) -> None:
        # Take transaction control from pysqlite, so "begin" below decides how a
        # transaction starts (and DDL is transactional too).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
                # Checkpoint every ~40 MB of WAL rather than 4 MB: random-keyed indexes
                # dirty a page per row, and rarer checkpoints write each page back once
                # for many commits. Durability does not depend on checkpoints; the WAL
                # is fsync'd on every commit.
                cursor.execute("PRAGMA wal_autocheckpoint=10000")
                cursor.execute(f"PRAGMA journal_size_limit={64 * 1024 * 1024}")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA busy_timeout=30000")
        finally:
            cursor.close()

    return on_connect


def sqlite_on_begin(conn: Connection) -> None:
    """``BEGIN IMMEDIATE`` for connections that asked for it, else a plain ``BEGIN``."""
    immediate = conn.get_execution_options().get("tronenergy_immediate", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
