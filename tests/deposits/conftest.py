"""Deposit worlds on SQLite and PostgreSQL (support.deposits)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from support.deposits import DepositWorld, open_world


@pytest.fixture
def world(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[DepositWorld]:
    """On SQLite."""
    yield from open_world(request, tmp_path, "sqlite")


@pytest.fixture
def pg_world(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[DepositWorld]:
    """On PostgreSQL (store and ledger)."""
    yield from open_world(request, tmp_path, "postgresql")
