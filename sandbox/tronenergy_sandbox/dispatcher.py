"""Callback delivery: signed ``tron.transfer`` POSTs with the service's retry schedule.

Runs as one background task on the sandbox's event loop, so request handling
never waits for a receiver. Deliveries live in the world's database: a pending
delivery survives a restart and is attempted again when the sandbox comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

import httpx

from tronenergy_protocol.signing import sign_callback
from tronenergy_sandbox.credentials import Credentials
from tronenergy_sandbox.deliveries import DueDelivery
from tronenergy_sandbox.world import World

log = logging.getLogger("tronenergy.sandbox.callbacks")


def callback_body(data: dict[str, Any], timestamp: int) -> bytes:
    event = {"event": "tron.transfer", "timestamp": timestamp, "data": data}
    return json.dumps(event, separators=(",", ":")).encode()


class Dispatcher:
    def __init__(
        self,
        world: World,
        credentials: Credentials,
        *,
        timeout: float = 5.0,
        concurrency: int = 200,
        idle_poll: float = 0.5,
    ) -> None:
        self.world = world
        self.credentials = credentials
        self.timeout = timeout
        self.idle_poll = idle_poll
        self._semaphore = asyncio.Semaphore(concurrency)
        self._limits = httpx.Limits(max_connections=concurrency,
                                    max_keepalive_connections=concurrency)
        self._inflight: set[int] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._wake = asyncio.Event()
        self._client: httpx.AsyncClient | None = None
        self._loop_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._client = httpx.AsyncClient(timeout=self.timeout, limits=self._limits,
                                         trust_env=False)
        self._loop_task = asyncio.create_task(self._run(), name="sandbox-dispatcher")

    async def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()

    def wake(self) -> None:
        self._wake.set()

    async def _run(self) -> None:
        while True:
            try:
                for delivery in self.world.due_deliveries(exclude=self._inflight):
                    self._inflight.add(delivery.id)
                    task = asyncio.create_task(self._deliver(delivery, manual=False))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                next_at = self.world.next_due_at()
            except Exception:  # the loop must survive anything a delivery throws
                log.exception("dispatcher tick failed")
                next_at = None
            wait = self.idle_poll
            if next_at is not None:
                wait = min(wait, max(0.005, next_at - self.world.clock()))
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)

    async def resend(self, delivery_id: int) -> dict[str, Any]:
        """Manual resend, as the service's console offers: one attempt now."""
        delivery = self.world.delivery_for_resend(delivery_id)
        return await self._deliver(delivery, manual=True)

    async def _deliver(self, delivery: DueDelivery, *, manual: bool) -> dict[str, Any]:
        try:
            async with self._semaphore:
                return await self._attempt(delivery, manual=manual)
        finally:
            if not manual:
                self._inflight.discard(delivery.id)

    async def _attempt(self, delivery: DueDelivery, *, manual: bool) -> dict[str, Any]:
        assert self._client is not None, "dispatcher not started"
        secret = self.world.webhook_secret_for(delivery.address) or \
            self.credentials.webhook_secret
        now = int(time.time())
        body = callback_body(delivery.data, now)
        headers = {
            "Content-Type": "application/json",
            "X-Signature": sign_callback(secret, body),
            "X-Timestamp": str(now),
        }
        started = self.world.clock()
        status_code: int | None = None
        response_body: str | None = None
        error: str | None = None
        try:
            response = await self._client.post(delivery.url, content=body, headers=headers)
            status_code = response.status_code
            response_body = response.text[:2000]
        except httpx.TimeoutException:
            error = f"timeout after {self.timeout:g} s"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"
        result = self.world.record_attempt(
            delivery.id, manual=manual, status_code=status_code,
            response_body=response_body, error=error, started=started,
        )
        log.info(
            "callback delivery=%s attempt=%s%s tx=%s -> %s status=%s body=%r error=%s -> %s",
            delivery.id, result["attempts"], " (manual)" if manual else "",
            delivery.data.get("tx_hash", "")[:12], delivery.url, status_code,
            (response_body or "")[:200], error, result["status"],
        )
        return result
