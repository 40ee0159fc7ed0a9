"""Deposit worlds on SQLite and PostgreSQL (support.deposits)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from airflow_provider_tronenergy.callbacks import CallbackStore, create_app
from support.callbacks import ServedApp
from support.chain import manual_chain
from support.deposits import DepositWorld, urls


def open_world(request: pytest.FixtureRequest, tmp_path: Any,
               backend: str) -> Iterator[DepositWorld]:
    store_url, kwargs, ledger_url = urls(backend, request, tmp_path)
    store = CallbackStore(store_url, **kwargs)
    with manual_chain() as chain, ServedApp(create_app(
            store, chain.sandbox.webhook_secret)) as receiver:
        world = DepositWorld(chain, store, receiver, ledger_url)
        try:
            yield world
        finally:
            world.close()
            store.close()


@pytest.fixture
def world(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[DepositWorld]:
    """On SQLite."""
    yield from open_world(request, tmp_path, "sqlite")


@pytest.fixture
def pg_world(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[DepositWorld]:
    """On PostgreSQL (store and ledger)."""
    yield from open_world(request, tmp_path, "postgresql")
