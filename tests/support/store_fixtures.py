"""Fixtures for tests on the callback store that transfer sensors, triggers and reconcile read.

A fresh SQLite store per test (also the process default), the triggers' per-URL
store cache emptied around each test, and the receiver that fills the store from
the sandbox's signed callbacks. A test module or conftest takes them by assigning::

    store_url, store = store_fixtures.store_url, store_fixtures.store
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.callbacks import access
from airflow_provider_tronenergy.callbacks.app import create_app
from airflow_provider_tronenergy.callbacks.store import ENV_STORE_URL, CallbackStore
from support.callbacks import ServedApp
from support.signed import api  # noqa: F401 (fixture, used as store_fixtures.api)
from tronenergy_sandbox import SandboxServer


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
def receiver(sandbox: SandboxServer, store: CallbackStore) -> Iterator[ServedApp]:
    """The callback receiver on the store the DAG run reads (TRONENERGY_CALLBACK_STORE)."""
    with ServedApp(create_app(store, sandbox.webhook_secret)) as served:
        yield served


PASSWORD_URL = "postgresql://tron:s3cr3t-pw@db.internal:5432/callbacks"


def assert_store_password_refused(make: Callable[..., Any], store_url: str) -> None:
    """Whatever takes a ``store_url`` (trigger kwargs, a task's rendered field) refuses one
    with a password, without echoing it, and keeps any other URL as given."""
    with pytest.raises(ValueError, match="must not contain a password") as refused:
        make(store_url=PASSWORD_URL)
    assert "s3cr3t-pw" not in str(refused.value)
    # Without a password (or none at all, leaving it to the triggerer) it is kept as given.
    assert make(store_url="postgresql://tron@db.internal:5432/callbacks").store_url == \
        "postgresql://tron@db.internal:5432/callbacks"
    assert make(store_url=store_url).store_url == store_url
    assert make().store_url is None
