"""Signed ``tron.transfer`` callbacks: verify, store durably, hand to consumers.

* :mod:`.verify` - HMAC over the raw body, then strict body validation.
* :mod:`.store` - :class:`CallbackStore`: append-only transfer log and consumer offsets.
* :mod:`.batcher` - group commit: one transaction and one fsync per burst.
* :mod:`.app` - :func:`create_app`: the ASGI receiver (``POST /callbacks``, ``GET /health``).
* :mod:`.cli` - ``tronenergy-receiver``; :mod:`.plugin` - the Airflow API-server plugin.

Nothing here imports Airflow except :mod:`.plugin` (and :mod:`.config`, lazily).
"""

from __future__ import annotations

from airflow_provider_tronenergy.callbacks.app import create_app
from airflow_provider_tronenergy.callbacks.events import RecordResult, StoredTransfer, TransferEvent
from airflow_provider_tronenergy.callbacks.store import CallbackStore, default_url
from airflow_provider_tronenergy.callbacks.verify import (
    RefreshingSecrets,
    Rejection,
    WebhookSecrets,
)
from airflow_provider_tronenergy.sqlstore import StoreError

__all__ = [
    "CallbackStore",
    "RecordResult",
    "RefreshingSecrets",
    "Rejection",
    "StoreError",
    "StoredTransfer",
    "TransferEvent",
    "WebhookSecrets",
    "create_app",
    "default_url",
]
