"""Stores on SQLite (a temp file) and on PostgreSQL (a fresh schema per test, dropped after)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.callbacks.store import CallbackStore

PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_DATABASE = "test"


def _postgres_url() -> str | None:
    """The first of the two trust-auth users that can connect, or None (unreachable)."""
    for user in ("postgres", "root"):
        url = f"postgresql://{user}@{PG_HOST}:{PG_PORT}/{PG_DATABASE}"
        engine = CallbackStore(url).engine
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
            return url
        except Exception:
            continue
        finally:
            engine.dispose()
    return None


@pytest.fixture(scope="session")
def postgres_url() -> str:
    url = _postgres_url()
    if url is None:
        pytest.skip(f"PostgreSQL unreachable at {PG_HOST}:{PG_PORT}/{PG_DATABASE} "
                    "(trust auth, user postgres or root)")
    return url


@pytest.fixture
def pg_schema(postgres_url: str) -> Iterator[str]:
    schema = f"tronenergy_test_{secrets.token_hex(6)}"
    engine = CallbackStore(postgres_url).engine
    with engine.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield schema
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'callbacks.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path):
    """Makes stores on one database: several calls give independent engines (processes)."""
    made: list[CallbackStore] = []
    if request.param == "sqlite":
        url, kwargs = f"sqlite:///{tmp_path / 'callbacks.db'}", {}
    else:
        url = request.getfixturevalue("postgres_url")
        kwargs = {"schema": request.getfixturevalue("pg_schema")}

    def make() -> CallbackStore:
        store = CallbackStore(url, **kwargs)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(store_factory) -> CallbackStore:
    return store_factory()


@pytest.fixture
def sqlite_store(sqlite_url: str) -> Iterator[CallbackStore]:
    store = CallbackStore(sqlite_url)
    yield store
    store.close()
