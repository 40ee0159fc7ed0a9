"""Signed ``tron.transfer`` callbacks: verify, store durably, hand to consumers.

* :mod:`.verify` - HMAC over the raw body, then strict body validation.
* :mod:`.events` - the records: :class:`VerifiedTransfer` (a verified callback, what the
  receiver stores), :class:`StoredTransfer` (a log row), exact amount helpers.
* :mod:`.store` - :class:`CallbackStore`: append-only transfer log and consumer offsets,
  on a ``sqlstore.Database``; its tables and versions in :mod:`.store.schema`, its
  collaborators :mod:`.store.writes` (the insert paths), :mod:`.store.offsets` and
  :mod:`.conflicts` (validly signed callbacks that contradict a stored transfer).
* :mod:`.access` - opening the store from tasks, sensors and triggers (one per URL).
* :mod:`.batcher` - group commit: one transaction and one fsync per burst.
* :mod:`.app` - :func:`create_app`: the ASGI receiver (``POST /callbacks``, ``GET /health``);
  :mod:`.limits` - the standalone server's connection limits.
* :mod:`.config` - where the webhook secrets come from (the store URL: ``store.store_url``).
* :mod:`.cli` - ``tronenergy-receiver``; :mod:`.plugin` - the Airflow API-server plugin.

Nothing here imports Airflow except :mod:`.plugin` (and :mod:`.config`, lazily).
The names below load on first use: a DAG file or a trigger that only reads the
store never imports the receiver's web stack (Starlette, uvicorn).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_provider_tronenergy.callbacks.app import create_app
    from airflow_provider_tronenergy.callbacks.events import (
        RecordResult,
        StoredTransfer,
        VerifiedTransfer,
    )
    from airflow_provider_tronenergy.callbacks.store import CallbackStore, store_url
    from airflow_provider_tronenergy.callbacks.verify import (
        RefreshingSecrets,
        Rejection,
        WebhookSecrets,
    )
    from airflow_provider_tronenergy.sqlstore import StoreError

_HOMES = {
    "create_app": "airflow_provider_tronenergy.callbacks.app",
    "RecordResult": "airflow_provider_tronenergy.callbacks.events",
    "StoredTransfer": "airflow_provider_tronenergy.callbacks.events",
    "VerifiedTransfer": "airflow_provider_tronenergy.callbacks.events",
    "CallbackStore": "airflow_provider_tronenergy.callbacks.store",
    "store_url": "airflow_provider_tronenergy.callbacks.store",
    "RefreshingSecrets": "airflow_provider_tronenergy.callbacks.verify",
    "Rejection": "airflow_provider_tronenergy.callbacks.verify",
    "WebhookSecrets": "airflow_provider_tronenergy.callbacks.verify",
    "StoreError": "airflow_provider_tronenergy.sqlstore",
}


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "CallbackStore",
    "RecordResult",
    "RefreshingSecrets",
    "Rejection",
    "StoreError",
    "StoredTransfer",
    "VerifiedTransfer",
    "WebhookSecrets",
    "create_app",
    "store_url",
]
