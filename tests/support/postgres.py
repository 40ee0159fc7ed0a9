"""PostgreSQL for the suite: the machine's server at 127.0.0.1:5432 (trust auth, database test).

Registered for the whole suite through ``pytest_plugins`` in tests/conftest.py.
A test that needs it skips, saying why, only when the server is unreachable.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore

PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_DATABASE = "test"


def reachable_postgres_url() -> str | None:
    """The first of the two trust-auth users that can connect, or None (unreachable)."""
    for user in ("postgres", "root"):
        url = f"postgresql://{user}@{PG_HOST}:{PG_PORT}/{PG_DATABASE}"
        engine = sqlstore.create_engine(sqlstore.parse_url(url))
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
    url = reachable_postgres_url()
    if url is None:
        pytest.skip(f"PostgreSQL unreachable at {PG_HOST}:{PG_PORT}/{PG_DATABASE} "
                    "(trust auth, user postgres or root)")
    return url


@pytest.fixture
def pg_schema(postgres_url: str) -> Iterator[str]:
    """A fresh schema, dropped after the test."""
    schema = f"tronenergy_test_{secrets.token_hex(6)}"
    engine = sqlstore.create_engine(sqlstore.parse_url(postgres_url))
    with engine.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield schema
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()
