"""The four stores, checked: each opened, its schema at this release's version (not older,
not newer), and shared where the executor runs tasks on several hosts.

The check reads ``tronenergy_schema_version`` and changes nothing; a SQLite file that does
not exist is not created. ``--migrate`` (:func:`migrate`) is the one writing step, said by
the person: each store opened as its tasks open it, which creates or migrates its tables.
Whether a store is shared is ``sqlstore.shared_problem(location, url)``'s to say.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlengine, sqlstore
from airflow_provider_tronenergy.callbacks.store import LOCATION as CALLBACK_LOCATION
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.callbacks.store.schema import SCHEMA as CALLBACK_SCHEMA
from airflow_provider_tronenergy.callbacks.store.schema import StoreTables
from airflow_provider_tronenergy.callbacks.store.schema import migrations as callback_steps
from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.schema import LOCATION as LEDGER_LOCATION
from airflow_provider_tronenergy.deposits.schema import MIGRATIONS as LEDGER_STEPS
from airflow_provider_tronenergy.deposits.schema import SCHEMA as LEDGER_SCHEMA
from airflow_provider_tronenergy.doctor.report import Check
from airflow_provider_tronenergy.payout.journal import SCHEMA as PAYOUT_SCHEMA
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.payout.journal import migrations as payout_steps
from airflow_provider_tronenergy.purchase_journal.store import LOCATION as JOURNAL_LOCATION
from airflow_provider_tronenergy.purchase_journal.store import SCHEMA as JOURNAL_SCHEMA
from airflow_provider_tronenergy.purchase_journal.store import PurchaseJournal
from airflow_provider_tronenergy.purchase_journal.store import migrations as journal_steps

VERSIONS: Final = "tronenergy_schema_version"
MIGRATE: Final = "tronenergy-doctor --migrate"


def _journal_newest() -> int:
    """The purchase journal's newest version, from its steps (no database opened: an
    in-memory one is refused under a distributed executor like any SQLite)."""
    return sqlstore.newest_version(
        journal_steps(sa.Table("tronenergy_purchase_journal", sa.MetaData())))


def _payouts_newest() -> int:
    metadata = sa.MetaData()
    return sqlstore.newest_version(payout_steps(sa.Table("tronenergy_payout_journal", metadata),
                                                sa.Table("tronenergy_payout_lease", metadata)))


def _callbacks_newest() -> int:
    return sqlstore.newest_version(
        callback_steps(StoreTables.declare(sa.MetaData(), "tronenergy_")))


def _open_journal(url: str) -> None:
    journal = PurchaseJournal(url)
    try:
        journal.ensure_schema()
    finally:
        journal.close()


def _open_payouts(url: str) -> None:
    journal = PayoutJournal(url)
    try:
        journal.ensure_schema()
    finally:
        journal.close()


def _open_callbacks(url: str) -> None:
    store = CallbackStore(url, pool_size=1)
    try:
        store.ensure_schema()
    finally:
        store.close()


def _open_ledger(url: str) -> None:
    with DepositLedger(url) as ledger:
        ledger.db  # noqa: B018 - opening it creates or migrates its tables


@dataclass(frozen=True)
class Store:
    """One store: its name, where it lives (``sqlstore.Location``), its row in the version
    table, this release's version of it, and how its tasks open it."""

    name: str
    location: sqlstore.Location
    schema: str
    newest: Callable[[], int]
    open: Callable[[str], None]

    @property
    def setting(self) -> str:
        return f"{self.location.env} or [tronenergy] {self.location.conf_key}"


STORES: Final = (
    Store("purchase journal", JOURNAL_LOCATION, JOURNAL_SCHEMA, _journal_newest, _open_journal),
    Store("payout journal", JOURNAL_LOCATION, PAYOUT_SCHEMA, _payouts_newest, _open_payouts),
    Store("callback store", CALLBACK_LOCATION, CALLBACK_SCHEMA, _callbacks_newest,
          _open_callbacks),
    Store("deposit ledger", LEDGER_LOCATION, LEDGER_SCHEMA,
          lambda: sqlstore.newest_version(LEDGER_STEPS), _open_ledger),
)


def secrets_of(stores: Sequence[Store] = STORES) -> set[str]:
    """The stores' database passwords (for the report's redaction)."""
    found = set()
    for store in stores:
        try:
            password = sqlstore.parse_url(store.location.url()).password
        except sqlstore.StoreError:
            continue
        if password:
            found.add(str(password))
    return found


def recorded_version(url: sa.engine.URL, schema: str) -> int | None:
    """The version ``schema``'s row says, or None (no version table, or no row). Reads only:
    a SQLite file that does not exist is not created (:class:`FileNotFoundError`)."""
    if url.get_backend_name() == "sqlite":
        database = url.database or ""
        if database in ("", ":memory:") or not os.path.exists(database):
            raise FileNotFoundError(database or ":memory:")
    engine = sqlengine.create_engine(url, pool_size=1)
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table(VERSIONS):
                return None
            row = conn.execute(sa.text(f"SELECT version FROM {VERSIONS} "
                                       "WHERE store = :store"), {"store": schema}).scalar()
            return None if row is None else int(row)
    finally:
        engine.dispose()


def shared_problem(store: Store, url: str) -> str | None:
    """``sqlstore.shared_problem`` for the store: why its place would be refused, or None."""
    return sqlstore.shared_problem(store.location, url)


def schema_check(store: Store) -> Check:
    """The store opens and its schema is at this release's version."""
    name = store.name
    try:
        url = sqlstore.parse_url(store.location.url())
    except sqlstore.StoreError as exc:
        return Check.failed(name, str(exc), f"set {store.setting} to a sqlite:// or "
                            "postgresql:// URL")
    where = sqlstore.safe_url(url)
    newest = store.newest()
    try:
        version = recorded_version(url, store.schema)
    except FileNotFoundError:
        return Check.failed(name, f"{where}: no such database file (not created yet)",
                            f"run {MIGRATE} once to create it, after {store.setting} names "
                            "where it must live")
    except sa.exc.SQLAlchemyError as exc:
        return Check.failed(name, f"{where}: cannot be opened: {type(exc).__name__}: "
                            f"{str(exc).splitlines()[0][:300]}",
                            f"make the database reachable from this host, or set "
                            f"{store.setting}")
    if version is None:
        return Check.failed(name, f"{where}: its tables are not created",
                            f"run {MIGRATE} once")
    if version > newest:
        return Check.failed(name, f"{where}: schema version {version} is newer than this "
                            f"release's {newest}", "upgrade airflow-provider-tronenergy on "
                            "this host (every host runs the release that migrated it)")
    if version < newest:
        return Check.failed(name, f"{where}: schema version {version}, this release's is "
                            f"{newest}", f"run {MIGRATE} once (before the tasks open it)")
    return Check.passed(name, f"{where}: schema version {version}")


def executor_check(executor: str, stores: Sequence[Store] = STORES) -> Check:
    """Every store is shared (or said single-host) under the configured executor."""
    name = "executor and stores"
    problems = []
    for store in stores:
        try:
            problem = shared_problem(store, store.location.url())
        except sqlstore.StoreError as exc:
            problem = str(exc)
        if problem is not None:
            problems.append(f"{store.name}: {problem}")
    if problems:
        return Check.failed(name, f"executor {executor}: " + "; ".join(dict.fromkeys(problems)),
                            "give each store named a URL every host reaches (PostgreSQL), "
                            "or say it is single-host (<ENV>_SINGLE_HOST=true)")
    return Check.passed(name, f"executor {executor}: every store is where every task reaches it")


def migrate(stores: Sequence[Store] = STORES) -> list[Check]:
    """``--migrate``: create or migrate each store whose place is not refused (a per-host
    store under a distributed executor is not created: that would be the mistake)."""
    done = []
    for store in stores:
        name = f"migrate {store.name}"
        try:
            url = store.location.url()
            problem = shared_problem(store, url)
            if problem is not None:
                done.append(Check.failed(name, f"not created: {problem}",
                                         f"set {store.setting} first"))
                continue
            store.open(url)
        except (sqlstore.StoreError, sa.exc.SQLAlchemyError) as exc:
            done.append(Check.failed(name, f"{type(exc).__name__}: "
                                     f"{str(exc).splitlines()[0][:300]}",
                                     f"make the database reachable, or set {store.setting}"))
            continue
        done.append(Check.passed(name, f"{sqlstore.safe_url(sqlstore.parse_url(url))}: at "
                                 f"schema version {store.newest()}"))
    return done
