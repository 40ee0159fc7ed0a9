"""The Energy page's stores, on SQLite (temp files) and PostgreSQL (a fresh schema)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.deposits import DepositLedger
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.purchase_journal.store import PurchaseJournal
from airflow_provider_tronenergy.ui.data import Stores


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "sqlite":
        journal_url, store_url, kwargs = (f"sqlite:///{tmp_path / 'journal.db'}",
                                          f"sqlite:///{tmp_path / 'callbacks.db'}", {})
    else:
        journal_url = store_url = request.getfixturevalue("postgres_url")
        kwargs = {"schema": request.getfixturevalue("pg_schema")}
    made = Stores(PurchaseJournal(journal_url, **kwargs), PayoutJournal(journal_url, **kwargs),
                  CallbackStore(store_url, **kwargs),
                  DepositLedger(f"sqlite:///{tmp_path / 'ledger.db'}"))
    yield made
    made.close()
