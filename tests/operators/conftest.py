"""Fixtures shared by the operator tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.purchase_journal import PurchaseJournal
from support.journals import opened


@pytest.fixture
def journal(tmp_path, monkeypatch) -> Iterator[PurchaseJournal]:
    """A SQLite purchase journal in tmp_path, also the one the operators open."""
    yield from opened(PurchaseJournal, tmp_path, monkeypatch)


@pytest.fixture
def payout_journal(tmp_path, monkeypatch) -> Iterator[PayoutJournal]:
    """A SQLite payout journal in tmp_path, in the database the operators open."""
    yield from opened(PayoutJournal, tmp_path, monkeypatch)

