"""Block production on time: pack waiting transactions when their block comes.

Blocks follow the clock and reads pack lazily (``transactions``), so nothing is
lost without this task; it makes execution, and a monitored recipient's
callback, happen when the block is produced even if nobody reads the chain.
It sleeps until the next block holding a waiting transaction (polling at most
every ``idle_poll`` seconds, so a manual clock in tests is followed too).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from tronenergy_sandbox.world import World

log = logging.getLogger("tronenergy.sandbox.chain")


class BlockProducer:
    """One background task on the sandbox's event loop."""

    def __init__(self, world: World, on_packed: Callable[[], None], *,
                 idle_poll: float = 0.25) -> None:
        self.world = world
        self.on_packed = on_packed
        self.idle_poll = idle_poll
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="sandbox-block-producer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def wake(self) -> None:
        """A transaction was accepted: look at the next block's time again."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            wait = self.idle_poll
            try:
                due_at = self.world.next_packing_at()
                if due_at is not None and due_at <= self.world.clock():
                    self.world.advance()
                    self.on_packed()
                    due_at = self.world.next_packing_at()
                if due_at is not None:
                    wait = min(wait, max(0.001, due_at - self.world.clock()))
            except Exception:  # the loop must survive anything a transaction throws
                log.exception("block production failed")
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)
