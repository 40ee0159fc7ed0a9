"""Deposit worlds on SQLite and PostgreSQL (support.deposits)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from support.chain import Chain, manual_chain
from support.deposits import DepositWorld, open_world


@pytest.fixture
def world(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[DepositWorld]:
    """On SQLite."""
    yield from open_world(request, tmp_path, "sqlite")


@pytest.fixture
def pg_world(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[DepositWorld]:
    """On PostgreSQL (store and ledger)."""
    yield from open_world(request, tmp_path, "postgresql")


@pytest.fixture
def chain() -> Iterator[Chain]:
    """A sandbox chain whose blocks the test makes (``support.chain.manual_chain``)."""
    with manual_chain() as chain:
        yield chain


@pytest.fixture
def node(chain: Chain) -> Iterator[TronNodeClient]:
    """The node client of ``chain``."""
    with TronNodeClient(chain.sandbox.root_url) as client:
        yield client
