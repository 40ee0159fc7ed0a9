"""Fixtures for the pace tests: one store URL per backend, its tables dropped after."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def pace_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``(url, table_prefix)``: a SQLite file, or the suite's PostgreSQL with a fresh prefix."""
    prefix = f"t{secrets.token_hex(4)}_"
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'journal.db'}", prefix
        return
    url = str(request.getfixturevalue("postgres_url"))
    yield url, prefix
    engine = sqlstore.create_engine(sqlstore.parse_url(url))
    with engine.begin() as conn:
        for name in (f"{prefix}node_pace", f"{prefix}schema_version"):
            conn.execute(sa.text(f'DROP TABLE IF EXISTS "{name}"'))
    engine.dispose()
