"""Transfer triggers against a real SQLite callback store in tmp_path (helpers in
trigger_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from trigger_helpers import AsyncioWithClock, CountingStore, PollClock

from airflow_provider_tronenergy.callbacks import access
from airflow_provider_tronenergy.callbacks.app import create_app
from airflow_provider_tronenergy.callbacks.store import ENV_STORE_URL, CallbackStore
from airflow_provider_tronenergy.sandbox import SandboxServer
from airflow_provider_tronenergy.triggers import transfer as transfer_module
from support.callbacks import ServedApp
from support.signed import SignedSession


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh SQLite store, also the process default (``TRONENERGY_CALLBACK_STORE``)."""
    url = f"sqlite:///{tmp_path / 'callbacks.db'}"
    monkeypatch.setenv(ENV_STORE_URL, url)
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[CallbackStore]:
    store = CallbackStore(store_url)
    store.ensure_schema()
    yield store
    store.close()


@pytest.fixture(autouse=True)
def fresh_trigger_stores() -> Iterator[None]:
    """Triggers share one store per URL per process: none may leak between tests."""
    access.forget_stores()
    yield
    access.forget_stores()


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


@pytest.fixture
def api(sandbox: SandboxServer) -> SignedSession:
    return SignedSession(sandbox.root_url, sandbox.api_key, sandbox.api_secret)


@pytest.fixture
def receiver(sandbox: SandboxServer, store: CallbackStore) -> Iterator[ServedApp]:
    """The callback receiver on the store the DAG run reads (TRONENERGY_CALLBACK_STORE)."""
    with ServedApp(create_app(store, sandbox.webhook_secret)) as served:
        yield served
