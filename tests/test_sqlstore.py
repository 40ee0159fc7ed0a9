"""The stores' one foundation, on a toy store: where it lives, its URL, its writes, its schema.

SQLite in ``tmp_path`` and PostgreSQL in a fresh schema (``support.postgres``): the
same code runs on both, so most tests run on both.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.sqlstore import Database, Location, StoreError

LOCATION = Location(env="TRONENERGY_TOY_URL", conf_key="toy_store", filename="toy.db")
OPTION_ENV = "AIRFLOW__TRONENERGY__TOY_STORE"
STORE = "toy_store"


def toy_tables(db: Database) -> list[sa.Table]:
    """The toy store's newest layout (a later release's version 2 added ``note``), on
    ``db``'s metadata: the framework as a release after the first uses it."""
    if "toy_things" in {t.name for t in db.metadata.tables.values()}:
        return [t for t in db.metadata.tables.values() if t.name == "toy_things"]
    return [sa.Table("toy_things", db.metadata,
                     sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
                     sa.Column("name", sa.String(32), nullable=False),
                     sa.Column("note", sa.String(32), nullable=True))]


def create_version_1(db: Database, *, recorded: bool = True) -> None:
    """The toy store as the first release left it: version 1 (no ``note``) and one row;
    ``recorded=False``: the same tables with no version row (not made by a release)."""
    with db.engine.begin() as conn:
        sa.Table("toy_things", sa.MetaData(schema=db.metadata.schema),
                 sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
                 sa.Column("name", sa.String(32), nullable=False)).create(conn)
        conn.execute(sa.text(f"INSERT INTO {qualified(db, 'toy_things')} (id, name) "
                             "VALUES (1, 'old')"))
        if recorded:
            db.versions.create(conn)
            conn.execute(db.versions.insert().values(store=STORE, version=1))


def qualified(db: Database, name: str) -> str:
    schema = db.metadata.schema
    return f'"{schema}".{name}' if schema else name


class Steps:
    """The toy store's migration steps, counting each run, a rolled back one too."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.ran: list[int] = []

    def add_note(self, conn: sa.Connection) -> None:
        self.ran.append(2)
        columns = {c["name"] for c in sa.inspect(conn).get_columns(
            "toy_things", schema=self.db.metadata.schema)}
        if "note" not in columns:  # a step looks before it changes
            conn.execute(sa.text(
                f"ALTER TABLE {qualified(self.db, 'toy_things')} ADD COLUMN note VARCHAR(32)"))

    def fill_note(self, conn: sa.Connection) -> None:
        self.ran.append(3)
        conn.execute(sa.text(f"UPDATE {qualified(self.db, 'toy_things')} SET note = 'v3' "
                             "WHERE note IS NULL"))

    def mapping(self, newest: int = 3) -> dict[int, sqlstore.Step]:
        return {2: self.add_note, 3: self.fill_note} if newest == 3 else {2: self.add_note}


def recorded(db: Database) -> dict[str, int]:
    with db.engine.connect() as conn:
        return dict(conn.execute(sa.select(db.versions.c.store, db.versions.c.version)).all())


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def open_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Database]]:
    """``open_db()``: one more Database on the test's database, as another worker opens it."""
    if request.param == "sqlite":
        url, kwargs = f"sqlite:///{tmp_path / 'nested' / 'toy.db'}", {}
    else:
        url = request.getfixturevalue("postgres_url")
        kwargs = {"schema": request.getfixturevalue("pg_schema")}
    made: list[Database] = []

    def factory(**more: Any) -> Database:
        made.append(Database(url, LOCATION, lock_name=STORE, **{**kwargs, **more}))
        return made[-1]

    yield factory
    for db in made:
        db.close()


# -- where a store lives, and its URL ---------------------------------------------------


def test_a_store_is_found_explicit_then_environment_then_airflow_option_then_home(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv(LOCATION.env, raising=False)
    monkeypatch.delenv(OPTION_ENV, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    assert LOCATION.url() == f"sqlite:///{tmp_path / 'home' / 'toy.db'}"
    monkeypatch.setenv(OPTION_ENV, "sqlite:////from-option.db")
    assert LOCATION.url() == "sqlite:////from-option.db"
    monkeypatch.setenv(LOCATION.env, "  ")  # blank: not set
    assert LOCATION.url() == "sqlite:////from-option.db"
    monkeypatch.setenv(LOCATION.env, " sqlite:////from-env.db ")
    assert LOCATION.url() == "sqlite:////from-env.db"
    assert LOCATION.url("sqlite:////explicit.db") == "sqlite:////explicit.db"
    assert Database(None, LOCATION, lock_name=STORE).url.database == "/from-env.db"


def test_a_bad_or_unsupported_url_is_refused_without_repeating_it():
    with pytest.raises(StoreError, match="not a valid SQLAlchemy URL") as bad:
        sqlstore.parse_url("s3cr3t-pw at db.internal")
    assert "s3cr3t" not in str(bad.value)
    with pytest.raises(StoreError, match="unsupported store backend 'mysql'") as other:
        sqlstore.parse_url("mysql://tron:s3cr3t-pw@db.internal/callbacks")
    assert "s3cr3t" not in str(other.value)


def test_postgresql_urls_get_an_installed_driver_and_others_keep_theirs():
    plain = sqlstore.parse_url("postgresql://tron@db.internal/tron")
    assert plain.drivername in ("postgresql+psycopg2", "postgresql+psycopg")
    __import__(plain.drivername.split("+")[1])  # the one chosen is installed
    assert sqlstore.parse_url("postgresql+psycopg2://tron@db/tron").drivername == \
        "postgresql+psycopg2"
    assert sqlstore.parse_url("sqlite:///x.db").drivername == "sqlite"


def test_the_password_never_reaches_what_may_be_logged():
    db = Database("postgresql://tron:s3cr3t-pw@127.0.0.1:1/tron", LOCATION, lock_name=STORE)
    try:
        assert "s3cr3t-pw" not in db.safe_url and "***" in db.safe_url
        assert db.safe_url.startswith("postgresql+")
        assert "tron:***@127.0.0.1:1/tron" in db.safe_url
    finally:
        db.close()


def test_lock_keys_are_signed_64_bit_stable_across_processes_and_per_schema():
    keys = {sqlstore.lock_key(name) for name in ("callbacks", "journal", "deposits")}
    assert len(keys) == 3 and all(-2**63 <= key < 2**63 for key in keys)
    code = ("from airflow_provider_tronenergy.sqlstore import lock_key; "
            "print(lock_key('journal'))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, timeout=60, env={**os.environ, "PYTHONHASHSEED": "7"})
    assert int(other.stdout) == sqlstore.lock_key("journal")
    url = "postgresql://tron@127.0.0.1:1/tron"
    a, b = (Database(url, LOCATION, lock_name=STORE, schema=s) for s in ("a", "b"))
    assert a.lock_key != b.lock_key
    a.close()
    b.close()


def test_schema_is_for_postgresql_only(tmp_path: Path):
    with pytest.raises(StoreError, match="schema= is for PostgreSQL"):
        Database(f"sqlite:///{tmp_path / 'x.db'}", LOCATION, lock_name=STORE, schema="s")


# -- SQLite's settings --------------------------------------------------------------------


def test_a_sqlite_file_is_durable_and_its_folder_is_made(tmp_path: Path):
    db = Database(f"sqlite:///{tmp_path / 'a' / 'b' / 'toy.db'}", LOCATION, lock_name=STORE)
    try:
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
        assert (tmp_path / "a" / "b" / "toy.db").is_file()
    finally:
        db.close()


def test_an_in_memory_store_is_one_database_for_every_connection():
    db = Database("sqlite://", LOCATION, lock_name=STORE)
    try:
        tables = toy_tables(db)
        db.migrate(STORE, tables, {})
        with db.engine.connect() as held:  # checked out while another writes
            with db.write() as conn:
                conn.execute(tables[0].insert().values(id=1, name="kept"))
            assert held.execute(sa.select(tables[0].c.name)).scalar() == "kept"
    finally:
        db.close()


# -- writes -------------------------------------------------------------------------------


def test_a_writer_waits_for_the_one_before_to_commit(open_db: Callable[..., Database]):
    """SQLite takes its write lock at BEGIN; on PostgreSQL a locked write takes the store's
    advisory lock: either way the second writer starts after the first has committed."""
    first, second = open_db(), open_db()
    locked = first.backend == "postgresql"  # SQLite's BEGIN IMMEDIATE needs no asking
    tables = toy_tables(first)
    first.migrate(STORE, tables, {})
    inside, events = threading.Event(), []

    def later() -> None:
        inside.wait(5)
        with second.write(locked=locked) as conn:
            events.append(("second in", time.monotonic()))
            conn.execute(sa.text(f"SELECT count(*) FROM {qualified(second, 'toy_things')}"))

    thread = threading.Thread(target=later)
    thread.start()
    with first.write(locked=locked) as conn:
        conn.execute(tables[0].insert().values(id=1, name="first"))
        inside.set()
        time.sleep(0.3)
        events.append(("first commits", time.monotonic()))
    thread.join(10)
    assert [name for name, _ in events] == ["first commits", "second in"]


def test_a_write_that_fails_leaves_nothing(open_db: Callable[..., Database]):
    db = open_db()
    tables = toy_tables(db)
    db.migrate(STORE, tables, {})
    with pytest.raises(RuntimeError, match="half-way"), db.write() as conn:
        conn.execute(tables[0].insert().values(id=1, name="half"))
        raise RuntimeError("half-way")
    with db.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(tables[0])).scalar() == 0


def test_insert_speaks_the_backends_upsert(open_db: Callable[..., Database]):
    db = open_db()
    tables = toy_tables(db)
    db.migrate(STORE, tables, {})
    with db.write() as conn:
        for name in ("one", "two"):
            conn.execute(db.insert(tables[0]).values(id=1, name=name)
                         .on_conflict_do_nothing(index_elements=["id"]))
    with db.engine.connect() as conn:
        assert conn.execute(sa.select(tables[0].c.name)).all() == [("one",)]


# -- the versioned schema -----------------------------------------------------------------


def test_a_new_database_gets_the_newest_tables_and_runs_no_step(
        open_db: Callable[..., Database]):
    db = open_db()
    steps = Steps(db)
    db.migrate(STORE, toy_tables(db), steps.mapping())
    assert steps.ran == [] and recorded(db) == {STORE: 3}
    with db.engine.connect() as conn:
        assert sa.inspect(conn).has_table("toy_things", schema=db.metadata.schema)


def test_a_store_of_the_first_release_runs_every_later_step_once(
        open_db: Callable[..., Database]):
    db = open_db()
    create_version_1(db)
    steps = Steps(db)
    db.migrate(STORE, toy_tables(db), steps.mapping())
    db.migrate(STORE, toy_tables(db), steps.mapping())  # once per process
    assert steps.ran == [2, 3] and recorded(db) == {STORE: 3}
    with db.engine.connect() as conn:
        assert conn.execute(sa.text(f"SELECT name, note FROM {qualified(db, 'toy_things')}")
                            ).all() == [("old", "v3")]
    again = open_db()  # the next process finds it recorded
    later = Steps(again)
    again.migrate(STORE, toy_tables(again), later.mapping())
    assert later.ran == []


def test_workers_opening_an_old_store_at_once_migrate_it_exactly_once(
        open_db: Callable[..., Database]):
    """Each step runs in one transaction: the other workers wait for it (the store's
    write lock), rather than run it too and roll back."""
    first = open_db()
    create_version_1(first)
    workers = [open_db() for _ in range(4)]
    steps = [Steps(db) for db in workers]
    start, errors = threading.Barrier(4, timeout=10), []

    def open_store(db: Database, own: Steps) -> None:
        try:
            start.wait()
            db.migrate(STORE, toy_tables(db), own.mapping())
        except Exception as exc:  # shown by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_store, args=pair)
               for pair in zip(workers, steps, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert sorted(n for own in steps for n in own.ran) == [2, 3]
    assert recorded(workers[0]) == {STORE: 3}


def test_workers_opening_a_new_database_at_once_create_the_store_once(
        open_db: Callable[..., Database], caplog: pytest.LogCaptureFixture):
    """The first release's case: no tables yet, four workers open the store together; one
    creates it (the store's write lock), the others find it recorded, none fails."""
    workers = [open_db() for _ in range(4)]
    start, errors = threading.Barrier(4, timeout=10), []

    def open_store(db: Database) -> None:
        try:
            start.wait()
            db.migrate(STORE, toy_tables(db), {})
        except Exception as exc:  # shown by the assertion below
            errors.append(exc)

    caplog.set_level("INFO", logger="airflow_provider_tronenergy.sqlstore")
    threads = [threading.Thread(target=open_store, args=(db,)) for db in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert len([r for r in caplog.records
                if r.getMessage().startswith("created the toy_store")]) == 1
    assert recorded(workers[0]) == {STORE: 1}


def test_a_store_newer_than_the_code_refuses_and_is_left_as_it_was(
        open_db: Callable[..., Database]):
    db = open_db()
    db.migrate(STORE, toy_tables(db), Steps(db).mapping())  # version 3
    older = open_db()  # a worker still on the release whose newest is 2
    with pytest.raises(StoreError, match=r"toy_store schema is version 3, newer than this "
                                         r"code \(2\): upgrade"):
        older.migrate(STORE, toy_tables(older), Steps(older).mapping(newest=2))
    assert recorded(db) == {STORE: 3}


def test_the_schema_is_looked_at_once_per_process_until_told_to_look_again(
        open_db: Callable[..., Database]):
    """Opening a store costs a query only the first time; a store dropped elsewhere on
    purpose is looked at again after ``forget_migrated``."""
    db = open_db()
    tables = toy_tables(db)
    db.migrate(STORE, tables, {})
    with db.engine.begin() as conn:  # another process drops the store
        tables[0].drop(conn)
        conn.execute(db.versions.delete())
    db.migrate(STORE, tables, {})
    with db.engine.connect() as conn:
        assert not sa.inspect(conn).has_table("toy_things", schema=db.metadata.schema)
    db.forget_migrated()
    db.migrate(STORE, tables, {})  # made again
    with db.engine.connect() as conn:
        assert sa.inspect(conn).has_table("toy_things", schema=db.metadata.schema)


def test_tables_with_no_version_recorded_are_refused_and_left_as_they_were(
        open_db: Callable[..., Database]):
    """Tables of the store no release recorded (made by hand, or by a build before the
    first release) are not guessed at: refused, nothing changed, nothing recorded."""
    db = open_db()
    create_version_1(db, recorded=False)
    steps = Steps(db)
    with pytest.raises(StoreError, match=r"toy_store tables \(toy_things\) exist in .* with no "
                                         r"schema version recorded"):
        db.migrate(STORE, toy_tables(db), steps.mapping())
    assert steps.ran == []
    with db.engine.connect() as conn:  # the refusal's transaction made nothing, not even this
        assert not sa.inspect(conn).has_table(db.versions.name, schema=db.metadata.schema)
        assert conn.execute(sa.text(f"SELECT id, name FROM {qualified(db, 'toy_things')}")
                            ).all() == [(1, "old")]


def test_a_store_without_steps_is_at_the_first_version(open_db: Callable[..., Database]):
    db = open_db()
    db.migrate(STORE, toy_tables(db), {})
    assert recorded(db) == {STORE: sqlstore.FIRST_VERSION} == {STORE: 1}
    assert sqlstore.newest_version({}) == 1
    assert sqlstore.newest_version(Steps(db).mapping()) == 3


def test_dropping_a_store_keeps_the_others_version(open_db: Callable[..., Database]):
    db = open_db()
    tables = toy_tables(db)
    db.migrate(STORE, tables, {})
    other = sa.Table("other_things", db.metadata, sa.Column("id", sa.Integer(), primary_key=True))
    db.migrate("other_store", [other], {})
    db.drop(STORE, tables)
    assert recorded(db) == {"other_store": 1}
    with db.engine.connect() as conn:
        inspector = sa.inspect(conn)
        assert not inspector.has_table("toy_things", schema=db.metadata.schema)
        assert inspector.has_table("other_things", schema=db.metadata.schema)
    db.migrate(STORE, tables, {})  # dropped: looked at again, made again
    assert recorded(db) == {"other_store": 1, STORE: 1}


def test_two_prefixes_keep_two_version_tables_in_one_database(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    a = Database(url, LOCATION, lock_name=STORE, table_prefix="a_")
    b = Database(url, LOCATION, lock_name=STORE, table_prefix="b_")
    try:
        a.migrate(STORE, [], {2: lambda conn: None})
        b.migrate(STORE, [], {})
        assert (recorded(a), recorded(b)) == ({STORE: 2}, {STORE: 1})
        assert (a.versions.name, b.versions.name) == ("a_schema_version", "b_schema_version")
    finally:
        a.close()
        b.close()
