"""The shared store poll survives a database error instead of failing every waiting sensor."""

from __future__ import annotations

import asyncio
import threading

from sqlalchemy.exc import OperationalError

from airflow_provider_tronenergy.triggers import transfer as module


class FlakyStore:
    """Fails its first query, then answers with one transfer (a stand-in row)."""

    def __init__(self) -> None:
        self.calls = 0

    def list_transfers(self, address, after_id, limit):
        self.calls += 1
        if self.calls == 1:
            raise OperationalError("SELECT", {}, Exception("database is locked"))
        return [type("Row", (), {"id": after_id + 1})()]


def test_poll_store_retries_after_a_database_error(monkeypatch):
    sleeps: list[float] = []
    real_sleep = asyncio.sleep
    this_thread = threading.get_ident()

    async def no_sleep(seconds: float) -> None:
        # asyncio.sleep is patched for the whole process: event loops of other threads
        # (servers other tests left running) keep their real sleep and stay out of the list.
        if threading.get_ident() != this_thread:
            await real_sleep(seconds)
            return
        sleeps.append(seconds)

    monkeypatch.setattr(module.asyncio, "sleep", no_sleep)
    store = FlakyStore()

    async def first():
        async for transfer in module.poll_store(store, 41, 0.5):  # type: ignore[arg-type]
            return transfer
        return None

    row = asyncio.run(first())
    assert row is not None and row.id == 42
    assert store.calls == 2
    assert sleeps and sleeps[0] >= 0.5  # it backed off before retrying
