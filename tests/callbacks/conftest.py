"""Stores on SQLite (a temp file) and on PostgreSQL (a fresh schema per test, from
support.postgres: ``postgres_url`` and ``pg_schema``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_provider_tronenergy.callbacks.store import CallbackStore


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
