"""Fixtures for the payout tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.payout.journal import PayoutJournal
from support.chain import manual_chain
from support.payouts import Payouts


@pytest.fixture
def world(tmp_path: Path) -> Iterator[Payouts]:
    """A funded sender on a sandbox chain whose blocks move only when the test says."""
    with manual_chain() as chain:
        payouts = Payouts(chain, tmp_path)
        try:
            yield payouts
        finally:
            payouts.close()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def journal_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def make(journal_url: str, request: pytest.FixtureRequest
         ) -> Iterator[Callable[[], PayoutJournal]]:
    """Independent journals on one database, as separate workers have."""
    kwargs: dict[str, Any] = {}
    if journal_url.startswith("postgresql"):
        kwargs["schema"] = request.getfixturevalue("pg_schema")
    made: list[PayoutJournal] = []

    def factory() -> PayoutJournal:
        made.append(PayoutJournal(journal_url, **kwargs))
        return made[-1]

    yield factory
    for journal in made:
        journal.close()
