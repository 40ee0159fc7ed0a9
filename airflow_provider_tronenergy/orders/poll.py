"""Many deferred order waits, one connection: one client, one request budget, one 429 pause.

A payout batch can leave hundreds of orders waiting in the triggerer at once. Each
wait still follows :class:`~airflow_provider_tronenergy.orders.wait.OrderWatch`
(read, then sleep its poll interval), but every wait of one connection in one
triggerer process reads through one :class:`OrderPoller`:

* one async client, so one connection pool, and no resend inside the client: every
  request the service sees went through the budget;
* a :class:`RequestBudget` of requests per second, evenly spaced and served in
  arrival order: with more waiters than the budget serves per interval, each order
  is read less often, the service never more often;
* a 429 answered to any waiter pauses them all until its ``Retry-After`` has passed.

So the service sees at most the budget, and at most one read per waiting order per
poll interval. The budget is per triggerer process: N triggerers may together send
N times it. It comes from the connection's extra ``order_poll_budget`` (default 10).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from airflow_provider_tronenergy.client import Order, RateLimitedError

if TYPE_CHECKING:
    from airflow_provider_tronenergy.client import TronEnergyAsyncClient

PAUSE_WITHOUT_RETRY_AFTER = 1.0
"""Seconds every waiter holds off after a 429 that gave no ``Retry-After``."""

Opener = Callable[[], Awaitable[tuple["TronEnergyAsyncClient", float]]]
"""Opens a poller's client and says its budget (requests per second): the hook's
``apoll_client``, passed in so that this module does not import the hook that imports it."""

MAX_IN_FLIGHT = 32
"""Reads awaiting an answer at once, whatever the budget (a slow service must not pile up)."""


class RequestBudget:
    """At most ``per_second`` request starts per second, evenly spaced, in arrival order.

    Starts are at least ``1 / per_second`` apart, so no one-second window holds more
    than ``per_second`` of them; :meth:`pause` holds every later start back.
    """

    def __init__(self, per_second: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if not per_second > 0:
            raise ValueError("RequestBudget: per_second must be positive")
        self.per_second = per_second
        self.spacing = 1.0 / per_second
        self._clock = clock
        self._next_start = float("-inf")
        self._paused_until = float("-inf")
        self._lock = asyncio.Lock()  # asyncio's lock wakes its waiters first come, first served

    def pause(self, seconds: float) -> None:
        """Hold every start back for ``seconds`` from now (a 429's Retry-After)."""
        self._paused_until = max(self._paused_until, self._clock() + seconds)

    @property
    def paused_until(self) -> float:
        """The clock reading before which no request starts."""
        return self._paused_until

    async def slot(self) -> None:
        """Return when this request may start; callers queue in arrival order."""
        async with self._lock:
            while True:
                now = self._clock()
                start = max(now, self._next_start, self._paused_until)
                if start <= now:
                    break
                await asyncio.sleep(start - now)  # a pause set meanwhile is seen next round
            self._next_start = now + self.spacing


class OrderPoller:
    """The reads of every order wait of one connection in one triggerer process.

    Built on first use from the connection (read in the triggerer, so no secret is
    stored with a trigger); closed when its last waiter leaves.
    """

    def __init__(self, open_client: Opener) -> None:
        self._open_client = open_client
        self.requests = 0
        self.waiters = 0
        self.budget: RequestBudget | None = None
        self._client: TronEnergyAsyncClient | None = None
        self._opening = asyncio.Lock()
        self._in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)

    async def _open(self) -> tuple[TronEnergyAsyncClient, RequestBudget]:
        async with self._opening:
            if self._client is None or self.budget is None:
                client, per_second = await self._open_client()
                self._client, self.budget = client, RequestBudget(per_second)
            return self._client, self.budget

    async def get_order(self, order_id: str) -> Order:
        """One read of ``order_id``, when the budget allows; a 429 pauses every waiter."""
        client, budget = await self._open()
        await budget.slot()
        async with self._in_flight:
            self.requests += 1
            try:
                return await client.get_order(order_id)
            except RateLimitedError as exc:
                budget.pause(exc.retry_after or PAUSE_WITHOUT_RETRY_AFTER)
                raise

    async def aclose(self) -> None:
        """Close the shared client (its connection pool)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


_POLLERS: dict[tuple[asyncio.AbstractEventLoop, str], OrderPoller] = {}


@asynccontextmanager
async def shared_poller(conn_id: str, open_client: Opener) -> AsyncIterator[OrderPoller]:
    """The poller of connection ``conn_id`` in this event loop, shared while anyone waits.

    ``open_client`` (the hook's :meth:`~.tronenergy.TronEnergyHook.apoll_client`) is
    called by the first read, in the triggerer, never with a secret stored in a trigger.
    """
    key = (asyncio.get_running_loop(), conn_id)
    poller = _POLLERS.get(key)
    if poller is None:
        poller = _POLLERS[key] = OrderPoller(open_client)
    poller.waiters += 1
    try:
        yield poller
    finally:
        poller.waiters -= 1
        if poller.waiters == 0:
            if _POLLERS.get(key) is poller:
                del _POLLERS[key]
            await poller.aclose()
