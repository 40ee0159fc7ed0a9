"""Fixtures of the human-in-the-loop tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_provider_tronenergy.purchase_journal import PurchaseJournal
from support.journals import opened


@pytest.fixture
def journal(tmp_path, monkeypatch) -> Iterator[PurchaseJournal]:
    """A SQLite purchase journal in tmp_path, also the one the purchase operators open."""
    yield from opened(PurchaseJournal, tmp_path, monkeypatch)
