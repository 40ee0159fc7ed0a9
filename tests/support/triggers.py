"""Helpers for the transfer-trigger tests: transfers recorded straight into a real store,
a store wrapper that counts queries, and a controllable clock for the triggers' poll
sleeps (so "per poll cycle" is a count, never a wall-clock measure).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import sqlalchemy.exc

from airflow_provider_tronenergy.callbacks.events import StoredTransfer
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from support.callbacks import verified_transfer


def record(store: CallbackStore, to: str, amount: str = "12.5", token: str = "TRX",
           sender: str | None = None) -> StoredTransfer:
    """Store one transfer and return it as consumers see it (with its id)."""
    event = verified_transfer(to, amount, token, sender)
    assert not store.record(event).duplicate
    stored = store.get_transfer(event.tx_hash)
    assert stored is not None
    return stored


class CountingStore:
    """Delegates to a real store; counts ``list_transfers`` calls by kind.

    ``stream`` calls are the shared poll's (no recipient: every transfer after the
    cursor); ``lookup`` calls are one trigger's own query for one recipient.
    """

    def __init__(self, store: CallbackStore) -> None:
        self.store = store
        self.stream = 0
        self.lookup = 0
        self.max_id_calls = 0

    def list_transfers(self, address: Any = None, *args: Any, **kwargs: Any) -> Any:
        if address is None:
            self.stream += 1
        else:
            self.lookup += 1
        return self.store.list_transfers(address, *args, **kwargs)

    def max_id(self) -> int:
        self.max_id_calls += 1
        return self.store.max_id()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class PollClock:
    """Stands in for ``asyncio.sleep`` inside the triggers module.

    Each sleep ends only when the test calls :meth:`tick`; ``sleeps`` counts the
    sleeps begun, i.e. the poll cycles completed (a cycle is query, fan-out, sleep).
    """

    def __init__(self) -> None:
        self.sleeps = 0
        self._waiters: list[asyncio.Future[None]] = []

    async def sleep(self, delay: float, result: Any = None) -> Any:
        self.sleeps += 1
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter
        return result

    @property
    def sleeping(self) -> int:
        """Poll loops asleep right now."""
        return sum(1 for waiter in self._waiters if not waiter.done())

    async def wait_for_sleeps(self, count: int, timeout: float = 20.0) -> None:
        """Until ``count`` sleeps have begun (fails, never hangs, when they do not)."""
        await until(lambda: self.sleeps >= count, timeout, f"{count} poll sleeps")

    async def tick(self, done: Callable[[], bool] | None = None) -> None:
        """End the current sleep(s) and wait until the next poll cycle went to sleep
        (or ``done()``: the poller finished instead)."""
        target = self.sleeps + 1
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        await until(lambda: self.sleeps >= target or (done is not None and done()),
                    what="the next poll cycle")


class AsyncioWithClock:
    """The ``asyncio`` module as the triggers module sees it, with a test clock for sleep."""

    def __init__(self, clock: PollClock) -> None:
        self.sleep = clock.sleep

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)


class Collector:
    """Drains a trigger's event iterator in a task, as the triggerer does.

    ``on_event`` runs right after each event is taken, before the next is asked for
    (where the triggerer binds a shared-stream event to its persist confirmation).
    """

    def __init__(self, events: AsyncIterator[Any],
                 on_event: Callable[[Any], None] | None = None) -> None:
        self.payloads: list[Any] = []
        self._on_event = on_event
        self.task = asyncio.ensure_future(self._drain(events))

    async def _drain(self, events: AsyncIterator[Any]) -> None:
        async for event in events:
            self.payloads.append(event.payload)
            if self._on_event is not None:
                self._on_event(event)

    async def stop(self) -> None:
        if not self.task.done():
            self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def until(predicate: Callable[[], bool], timeout: float = 20.0,
                what: str = "condition") -> None:
    """Yield to the loop until ``predicate()``; a bound on waiting, not a timing assert."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.001)


async def settle(rounds: int = 50) -> None:
    """Let every ready task run a few times (no clock involved)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


class Triggerer:
    """What Airflow 3.3's TriggerRunner does with triggers that have a shared_stream_key.

    Subscribes each trigger to a real ``SharedStreamManager``, runs its
    ``filter_shared_stream`` on the broadcast, and binds every event it takes to the
    raw event behind it (``bind_pending_event``), as ``run_trigger`` does; confirming
    persistence (``manager.confirm_persisted``) is left to the test. ``pulled`` counts
    the raw events each trigger took from the shared stream.
    """

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.events: list[tuple[int, int | None, Any]] = []  # (trigger_id, seq, payload)
        self.pulled: dict[int, int] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}

    def start(self, trigger_id: int, trigger: Any) -> None:
        key = trigger.shared_stream_key()
        assert key is not None
        stream = self.manager.subscribe(trigger_id=trigger_id, trigger=trigger, key=key)
        self.pulled[trigger_id] = 0
        self.tasks[trigger_id] = asyncio.ensure_future(
            self._run(trigger_id, trigger, key, self._counted(trigger_id, stream)))

    async def _counted(self, trigger_id: int, stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for raw in stream:
            self.pulled[trigger_id] += 1
            yield raw

    async def _run(self, trigger_id: int, trigger: Any, key: Any,
                   stream: AsyncIterator[Any]) -> None:
        try:
            async for event in trigger.filter_shared_stream(stream):
                seq = self.manager.bind_pending_event(trigger_id=trigger_id, key=key)
                self.events.append((trigger_id, seq, event.payload))
        finally:
            await self.manager.unsubscribe(trigger_id, key)

    def fired(self) -> dict[int, list[Any]]:
        out: dict[int, list[Any]] = {}
        for trigger_id, _, payload in self.events:
            out.setdefault(trigger_id, []).append(payload)
        return out

    async def stop(self) -> None:
        """The triggerer going away: every trigger task cancelled."""
        for task in self.tasks.values():
            if not task.done():
                task.cancel()
        for task in self.tasks.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


class Outage:
    """The store answering ``OperationalError`` to ``method`` for its first ``calls`` calls
    (what a restarted PostgreSQL does to a pooled connection), then as before."""

    def __init__(self, store: CallbackStore, method: str, calls: int) -> None:
        self.left, self.seen = calls, 0
        real = getattr(store, method)

        def flaky(*args, **kwargs):
            self.seen += 1
            if self.left:
                self.left -= 1
                raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("down"))
            return real(*args, **kwargs)

        setattr(store, method, flaky)
