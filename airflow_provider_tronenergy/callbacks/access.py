"""Opening the callback store from tasks, sensors and triggers: one store per URL per process.

Everything in a worker or a triggerer that reads stored transfers (the transfer
sensor's pokes, the reconcile operator, the transfer triggers and their shared
poll) opens the store here, so all of them share one engine and pool per URL and
agree on which URL is meant: ``store_url``, else ``$TRONENERGY_CALLBACK_STORE``,
else ``[tronenergy] callback_store``, else a SQLite file in ``$AIRFLOW_HOME``.
"""

from __future__ import annotations

import functools

from sqlalchemy.engine import make_url

from airflow_provider_tronenergy.callbacks.store import LOCATION, CallbackStore


def checked_store_url(store_url: str | None) -> str | None:
    """Refuse a URL carrying a password: task and trigger kwargs are not a secret store."""
    if store_url and make_url(store_url).password:
        raise ValueError(
            "store_url must not contain a password (trigger kwargs are stored in the "
            "metadata DB); configure TRONENERGY_CALLBACK_STORE in the triggerer instead")
    return store_url or None


@functools.lru_cache(maxsize=16)
def _store_for(url: str) -> CallbackStore:
    return CallbackStore(url)


def open_store(store_url: str | None) -> CallbackStore:
    """One store (one engine, one pool) per URL per process, shared by every consumer."""
    return _store_for(LOCATION.url(store_url))


def forget_stores() -> None:
    """Drop the per-process stores (tests; a process that must reconnect from scratch)."""
    _store_for.cache_clear()
