"""Fixtures shared by the operator tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.purchase_journal import PurchaseJournal


@pytest.fixture
def journal(tmp_path, monkeypatch) -> Iterator[PurchaseJournal]:
    """A SQLite purchase journal in tmp_path, also the one the operators open."""
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    journal = PurchaseJournal(url)
    yield journal
    journal.close()


@pytest.fixture
def payout_journal(tmp_path, monkeypatch) -> Iterator[PayoutJournal]:
    """A SQLite payout journal in tmp_path, in the database the operators open."""
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    journal = PayoutJournal(url)
    yield journal
    journal.close()
