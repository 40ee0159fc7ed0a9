"""Transfer triggers against a real SQLite callback store in tmp_path (store fixtures in
support.store_fixtures, helpers in support.triggers)."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.triggers import transfer as transfer_module
from support import store_fixtures
from support.triggers import AsyncioWithClock, CountingStore, PollClock

store_url, store = store_fixtures.store_url, store_fixtures.store
fresh_trigger_stores = store_fixtures.fresh_trigger_stores  # autouse: every test here


@pytest.fixture
def counting_store(store: CallbackStore, monkeypatch: pytest.MonkeyPatch) -> CountingStore:
    """Every trigger in this process reads ``store`` through one counting wrapper."""
    counting = CountingStore(store)
    monkeypatch.setattr(transfer_module, "open_store", lambda store_url=None: counting)
    return counting


@pytest.fixture
def poll_clock(monkeypatch: pytest.MonkeyPatch) -> PollClock:
    """The triggers' poll sleeps end only when the test ticks this clock."""
    clock = PollClock()
    monkeypatch.setattr(transfer_module, "asyncio", AsyncioWithClock(clock))
    return clock
