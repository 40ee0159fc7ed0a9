"""Opening the provider's own SQL stores (callbacks, purchase journal): one way, two backends.

SQLite for one host (a file under ``$AIRFLOW_HOME``, WAL, ``synchronous=FULL``,
so a commit survives power loss) and PostgreSQL for a deployment whose
workers, receivers and triggerers live on several hosts. SQLAlchemy Core only,
so the same code runs on SQLAlchemy 1.4 (Airflow 3.0.x) and 2.x.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.pool import QueuePool, StaticPool

from airflow_provider_tronenergy.errors import TronEnergyProviderError

SQLA_2: Final = int(sa.__version__.split(".")[0]) >= 2
BACKENDS: Final = ("sqlite", "postgresql")
CONF_SECTION: Final = "tronenergy"


class StoreError(TronEnergyProviderError, RuntimeError):
    """A store cannot be used as configured (bad URL, unsupported backend, newer schema)."""


def airflow_conf(key: str) -> str | None:
    """``[tronenergy] key`` from Airflow's configuration, or None without Airflow."""
    try:
        from airflow.configuration import conf
    except Exception:  # Airflow absent or unconfigurable: a standalone process
        return None
    value = conf.get(CONF_SECTION, key, fallback=None)
    return str(value) if value not in (None, "") else None


def sqlite_in_airflow_home(filename: str) -> str:
    """A SQLite URL for ``filename`` in ``$AIRFLOW_HOME`` (or ~/airflow): zero configuration."""
    home = os.environ.get("AIRFLOW_HOME") or os.path.join(os.path.expanduser("~"), "airflow")
    return f"sqlite:///{os.path.join(os.path.abspath(home), filename)}"


def resolve_url(explicit: str | None, *, env: str, conf_key: str, filename: str) -> str:
    """Where a store lives: ``explicit``, else ``$env``, else ``[tronenergy] conf_key``, else a
    SQLite file in ``$AIRFLOW_HOME``. Read when the store is opened, never at DAG parse."""
    return (explicit or os.environ.get(env, "").strip() or airflow_conf(conf_key)
            or sqlite_in_airflow_home(filename))


@dataclass(frozen=True)
class Location:
    """Where one store lives unless told otherwise: the one rule, :func:`resolve_url`, with
    that store's environment variable, ``[tronenergy]`` option and default file name."""

    env: str
    conf_key: str
    filename: str

    def url(self, explicit: str | None = None) -> str:
        return resolve_url(explicit, env=self.env, conf_key=self.conf_key,
                           filename=self.filename)


def with_driver(url: URL) -> URL:
    """``postgresql://`` means psycopg2 on SQLAlchemy 1.4/2.0 but psycopg 3 on 2.1:
    pick whichever of the two is installed, so one URL works everywhere."""
    if url.drivername != "postgresql":
        return url
    for module, driver in (("psycopg2", "postgresql+psycopg2"), ("psycopg", "postgresql+psycopg")):
        if importlib.util.find_spec(module) is not None:
            return url.set(drivername=driver)
    return url


def parse_url(url: str | URL) -> URL:
    """A checked URL of a supported backend; the error never repeats the URL (password)."""
    try:
        parsed = with_driver(make_url(url))
    except sa.exc.ArgumentError:
        raise StoreError("the store URL is not a valid SQLAlchemy URL") from None
    if parsed.get_backend_name() not in BACKENDS:
        raise StoreError(f"unsupported store backend {parsed.get_backend_name()!r}: "
                         "use sqlite or postgresql")
    return parsed


def lock_key(name: str) -> int:
    """A stable signed 64-bit PostgreSQL advisory-lock key for one named store."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


def safe_url(url: URL) -> str:
    """The URL with any password hidden: the only form that may reach a log."""
    return url.render_as_string(hide_password=True)


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
