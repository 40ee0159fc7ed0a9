"""The provider's own SQL stores (callbacks, purchase journal, deposit ledger): one foundation.

SQLite for one host (a file under ``$AIRFLOW_HOME``) and PostgreSQL for a deployment
whose workers, receivers and triggerers live on several hosts; their engines are
:mod:`~airflow_provider_tronenergy.sqlengine`'s.

A store holds a :class:`Database`: where it lives (:class:`Location`, one rule for
every store), its engine, its write transaction and its versioned schema. A store on
SQLite is one host's file: while Airflow's executor runs tasks on several hosts, opening
it raises :class:`StoreNotShared` unless the person said, for that store, that one host
is meant (:func:`shared_problem`). Each
store names its tables and an ordered list of migration steps; ``<prefix>schema_version``
records, per store, the version its tables are at, and :meth:`Database.migrate` runs the
missing steps once, in one serialised write transaction (DDL is transactional on both
backends), so whichever process opens a store first migrates it exactly once.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, Connection, make_url

from airflow_provider_tronenergy.errors import NotRetryable, TronEnergyProviderError
from airflow_provider_tronenergy.sqlengine import create_engine, with_driver

log = logging.getLogger(__name__)

BACKENDS: Final = ("sqlite", "postgresql")
CONF_SECTION: Final = "tronenergy"
LOCAL_EXECUTORS: Final = frozenset({"airflow.executors.local_executor.LocalExecutor"})
"""The executors that run every task on the scheduler's host: Airflow 3's one (its
SequentialExecutor and DebugExecutor are gone). Any other, a custom one too, counts as
running tasks on several hosts."""
SAID_TRUE: Final = ("t", "true", "1")
SAID_FALSE: Final = ("f", "false", "0", "")


class StoreError(TronEnergyProviderError, RuntimeError):
    """A store cannot be used as configured (bad URL, unsupported backend, newer schema)."""


class StoreNotShared(StoreError, NotRetryable):
    """A store on one host's SQLite file while Airflow's executor runs tasks on several
    hosts: each host would keep its own record, so nothing is opened; the message names the
    setting to set and the per-store opt-in."""


class StoreSettingError(StoreError, NotRetryable):
    """A store's setting that says nothing it accepts: named, with what it accepts."""


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
    that store's environment variable, ``[tronenergy]`` option and default file name;
    ``name`` is what a person calls the store (its option's words when not given)."""

    env: str
    conf_key: str
    filename: str
    name: str = ""

    @property
    def title(self) -> str:
        return self.name or self.conf_key.replace("_", " ")

    def url(self, explicit: str | None = None) -> str:
        return resolve_url(explicit, env=self.env, conf_key=self.conf_key,
                           filename=self.filename)

    def single_host(self) -> bool:
        """Whether the person said this store is one host's file on purpose:
        ``$<env>_SINGLE_HOST``, else ``[tronenergy] <conf_key>_single_host``."""
        env, key = f"{self.env}_SINGLE_HOST", f"{self.conf_key}_single_host"
        value, setting = os.environ.get(env, "").strip().lower(), env
        if not value:
            value, setting = (airflow_conf(key) or "").strip().lower(), f"[{CONF_SECTION}] {key}"
        if value not in SAID_TRUE + SAID_FALSE:
            raise StoreSettingError(f"{setting} must be true or false (t, true, 1 or f, false, "
                                    f"0, any case), not {value!r}: set one, or unset it")
        return value in SAID_TRUE

    def open_url(self, url: str | URL | None) -> URL:
        """The checked URL this store opens (``url``, else the rule); raises
        :class:`StoreNotShared` where :func:`shared_problem` finds one; a bad opt-in
        (:class:`StoreSettingError`) wherever the store opens, never passed over unread."""
        parsed = parse_url(url if isinstance(url, URL) else self.url(url))
        problem = shared_problem(self, parsed)
        if problem is not None:
            raise StoreNotShared(problem)
        if "airflow" in sys.modules or os.environ.get(f"{self.env}_SINGLE_HOST"):
            self.single_host()  # read where it could be; a standalone process reads no conf
        return parsed


def configured_executors() -> list[str] | None:
    """``[core] executor`` as Airflow parses it (aliases, module paths, a hybrid list, team
    prefixes), each executor as its module path; None outside Airflow. Raises what Airflow
    raises for a setting it refuses.

    A process that has not imported Airflow (the standalone receiver, a script) is outside
    it: importing Airflow's configuration would take over that process's logging, and no
    task runs there (a task's process has always imported Airflow)."""
    if "airflow" not in sys.modules:
        return None
    try:
        from airflow.configuration import conf  # noqa: F401 (Airflow configured at all?)
    except Exception:  # Airflow absent or unconfigurable: a standalone process
        return None
    from airflow.executors.executor_loader import ExecutorLoader

    get = ExecutorLoader.get_executor_names
    # Teams are checked against the metadata DB unless told not to (Airflow 3.1+), and a
    # task's process has no DB.
    names = (get(validate_teams=False)
             if "validate_teams" in inspect.signature(get).parameters else get())
    return [name.module_path for name in names]


def distributed_executors() -> list[str]:
    """The configured executors that may run a task on another host (empty: LocalExecutor
    only, or outside Airflow): Airflow's and its providers' by class name, others by module
    path. A setting Airflow refuses counts as one."""
    try:
        paths = configured_executors() or []
    except Exception as exc:
        return [f"[core] executor, which Airflow refuses ({type(exc).__name__})"]
    return [path.rsplit(".", 1)[-1] if path.startswith("airflow.") else path
            for path in paths if path not in LOCAL_EXECUTORS]


def shared_problem(location: Location, url: str | URL) -> str | None:
    """Why ``location``'s store at ``url`` would be refused, or None when it may open.

    SQLite is one host's file; while Airflow's executor may run tasks on other hosts
    (anything but LocalExecutor: Celery, Kubernetes, Edge, a hybrid, an executor this
    code does not know), each host would keep a store of its own and "no double
    purchase", "exactly once" and "one credit per deposit" would hold per host only.
    Allowed anyway when the person said so for this store (:meth:`Location.single_host`);
    an opt-in that is neither true nor false is a reason too. Raises :class:`StoreError`
    for a URL that is not a store's.
    """
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    remote = distributed_executors()
    if not remote:
        return None
    try:
        if location.single_host():
            return None
    except StoreError as exc:
        return f"the {location.title} is a SQLite file on this host and {exc}"
    env, key = location.env, location.conf_key
    return (f"the {location.title} is a SQLite file on this host ({safe_url(parsed)}) while "
            f"Airflow's executor ({', '.join(remote)}) runs tasks on other hosts, each of "
            "which would keep a store of its own: set "
            f"{env} (or [{CONF_SECTION}] {key}) to a PostgreSQL URL every host reaches, or, if "
            f"every task, trigger and server that uses it runs on this one host, say so with "
            f"{env}_SINGLE_HOST=true (or [{CONF_SECTION}] {key}_single_host = True)")


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


Step = Callable[[Connection], None]
"""One migration step: moves a store's tables from version ``n - 1`` to ``n``."""
FIRST_VERSION: Final = 1
"""The first release's schema version of every store (no steps)."""


def newest_version(steps: Mapping[int, Step]) -> int:
    """The version a store's ``steps`` bring it to: the highest step's, else the first."""
    return max(steps, default=FIRST_VERSION)


def add_index(table: sa.Table, name: str) -> Step:
    """A migration step that creates ``table``'s declared index ``name`` unless it exists.

    A store created at the newest version got the index with its table; one created
    before it gets it here. Additive: no row, column or other index is touched. (For a
    later release's steps; the first release has none.)
    """
    [index] = [i for i in table.indexes if i.name == name]

    def step(conn: Connection) -> None:
        index.create(conn, checkfirst=True)

    return step


def add_missing_columns(conn: Connection, table: sa.Table, names: Sequence[str],
                        sql_type: str = "BIGINT") -> None:
    """A migration step's additive part: ``ALTER TABLE ... ADD COLUMN`` for each of
    ``names`` the table does not have yet (a step may run on a table already in shape;
    for a later release's steps)."""
    have = {c["name"] for c in sa.inspect(conn).get_columns(table.name, schema=table.schema)}
    quoted = conn.dialect.identifier_preparer.format_table(table)
    for name in names:
        if name not in have:
            conn.execute(sa.text(f"ALTER TABLE {quoted} ADD COLUMN {name} {sql_type}"))


class Database:
    """One store's database: its URL, engine, write transaction and schema version.

    Stores hold one (composition): ``Database(url, location, lock_name=...)``.
    ``schema`` (PostgreSQL) and the version table's ``table_prefix`` let several
    stores share one database; ``lock_name`` keys the PostgreSQL advisory lock that
    serialises :meth:`write` ``(locked=True)`` transactions (and migrations).
    """

    def __init__(self, url: str | URL | None, location: Location, *, lock_name: str,
                 schema: str | None = None, table_prefix: str = "tronenergy_",
                 pool_size: int = 5) -> None:
        self.url = location.open_url(url)
        self.backend = self.url.get_backend_name()
        if schema is not None and self.backend != "postgresql":
            raise StoreError("schema= is for PostgreSQL; use table_prefix= on SQLite")
        self.engine = create_engine(self.url, pool_size)
        self.metadata = sa.MetaData(schema=schema)
        self.lock_key = lock_key(f"{schema or ''}.{lock_name}")
        self.versions = sa.Table(
            f"{table_prefix}schema_version", self.metadata,
            sa.Column("store", sa.String(64), primary_key=True),
            sa.Column("version", sa.Integer(), nullable=False),
        )
        self._migrated: set[str] = set()
        self._migrate_lock = threading.Lock()

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden: the only form that may reach a log."""
        return safe_url(self.url)

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()

    @contextmanager
    def write(self, *, locked: bool = False) -> Iterator[Connection]:
        """One write transaction: SQLite takes the write lock up front (``BEGIN
        IMMEDIATE``); on PostgreSQL ``locked`` ones first take the store's advisory lock."""
        with self.engine.connect() as plain:
            conn = plain.execution_options(tronenergy_immediate=True)
            with conn.begin():
                if locked and self.backend == "postgresql":
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"),
                                 {"key": self.lock_key})
                yield conn

    def insert(self, table: sa.Table) -> Any:
        """``INSERT`` in this backend's dialect: the one with ``on_conflict_do_*``."""
        return (pg_insert if self.backend == "postgresql" else sqlite_insert)(table)

    def migrate(self, store: str, tables: Sequence[sa.Table],
                steps: Mapping[int, Step]) -> None:
        """Bring ``store``'s tables to the newest version; once per process.

        ``steps[n]`` moves the tables from version ``n - 1`` to ``n``; the newest version
        is the highest step's (1, the first release's, when there are none). A database
        without the store gets its tables as declared, at the newest version; one at an
        older version gets every step after it. Tables of the store that exist with no
        version recorded were not made by a release: refused, as is a version newer than
        the code's, rather than guessed at.
        """
        if store in self._migrated:
            return
        with self._migrate_lock:
            if store in self._migrated:
                return
            for attempt in range(5):
                try:
                    with self.write(locked=True) as conn:
                        self._migrate(conn, store, tables, steps)
                    break
                except sa.exc.DBAPIError:
                    # Another store in the same database (another lock) created the
                    # version table at the same moment: look again.
                    if attempt == 4:
                        raise
                    time.sleep(0.05 * (attempt + 1))
            self._migrated.add(store)

    def _migrate(self, conn: Connection, store: str, tables: Sequence[sa.Table],
                 steps: Mapping[int, Step]) -> None:
        newest = newest_version(steps)
        v = self.versions
        self.versions.create(conn, checkfirst=True)
        version = conn.execute(sa.select(v.c.version).where(v.c.store == store)).scalar()
        if version is None:
            inspector = sa.inspect(conn)
            found = [t.name for t in tables if inspector.has_table(t.name, schema=t.schema)]
            if found:
                raise StoreError(
                    f"the {store} tables ({', '.join(found)}) exist in {self.safe_url} with "
                    f"no schema version recorded in {v.name}: not made by a release of "
                    "airflow-provider-tronenergy; move them away or point the store at "
                    "another database")
            for table in tables:
                table.create(conn)
            conn.execute(v.insert().values(store=store, version=newest))
            log.info("created the %s tables in %s", store, self.safe_url)
            return
        if version > newest:
            raise StoreError(f"the {store} schema is version {version}, newer than this code "
                             f"({newest}): upgrade airflow-provider-tronenergy")
        for target in range(version + 1, newest + 1):
            steps[target](conn)
            log.info("migrated %s in %s to schema version %d", store, self.safe_url, target)
        if version < newest:
            conn.execute(v.update().where(v.c.store == store).values(version=newest))

    def drop(self, store: str, tables: Sequence[sa.Table]) -> None:
        """Drop ``store``'s tables and forget its version (tests; removing it on purpose).

        The version table stays: other stores in the database may keep their rows there.
        """
        with self.write(locked=True) as conn:
            for table in reversed(tables):
                table.drop(conn, checkfirst=True)
            if sa.inspect(conn).has_table(self.versions.name, schema=self.versions.schema):
                conn.execute(self.versions.delete().where(self.versions.c.store == store))
        self._migrated.discard(store)

    def forget_migrated(self) -> None:
        """Check the schema again on next use (after dropping tables on purpose)."""
        self._migrated.clear()
