"""Group commit: concurrent callbacks share one transaction and one fsync.

Each request appends its verified event to a pending list and waits on a
future. When no commit is running, the pending events go to the store's
blocking ``record_many`` on a dedicated thread as one batch (one statement or
transaction, one fsync); when it returns, each request's future is resolved —
so a 200 always follows the durable commit of that request's own row — and
whatever queued meanwhile is dispatched as the next batch. Batches grow with
load and a lone request waits for nothing.

Callbacks, not a writer task: the event loop does the least work per request
(an append, a future) and per batch (one thread hand-off, one wake-up), which
matters because it is the same loop that parses and verifies every request.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from airflow_provider_tronenergy.callbacks.events import RecordResult, TransferEvent

log = logging.getLogger(__name__)


class Recorder(Protocol):
    def record_many(self, events: Sequence[TransferEvent]) -> list[RecordResult]: ...


class Overloaded(RuntimeError):
    """Too many callbacks wait for a commit: answer 503 and let the service retry."""


class CommitTimeout(RuntimeError):
    """Not committed within the deadline: answer 503 (the row may still land later)."""


@dataclass
class CommitStats:
    batches: int = 0
    rows: int = 0
    largest_batch: int = 0
    failures: int = 0
    commit_seconds: float = 0.0
    """Wall time from hand-off to the thread until the loop saw the result."""


_Item = tuple[TransferEvent, "asyncio.Future[RecordResult]"]


class GroupCommitter:
    """``await committer.submit(event)`` returns once ``event`` is durably stored.

    It raises :class:`CommitTimeout` after ``commit_timeout`` seconds instead: a
    200 must never come so late that the service has already given up on it.
    """

    def __init__(
        self,
        store: Recorder,
        *,
        max_batch: int = 500,
        max_pending: int = 10_000,
        commit_timeout: float = 4.0,
    ) -> None:
        self.store = store
        self.max_batch = max_batch
        self.max_pending = max_pending
        self.commit_timeout = commit_timeout
        self.stats = CommitStats()
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="tronenergy-commit")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: collections.deque[_Item] = collections.deque()
        # (deadline, future) in submission order, so deadlines are sorted: one timer
        # task enforces them all, cheaper than a timer per request.
        self._deadlines: collections.deque[tuple[float, asyncio.Future[RecordResult]]] = (
            collections.deque())
        self._sweeper: asyncio.Task[None] | None = None
        self._in_flight: list[_Item] | None = None
        self._scheduled = False
        self._closed = False

    def _bind(self) -> asyncio.AbstractEventLoop:
        """Attach to the running loop on first use: mounted apps get no lifespan events."""
        if self._closed:
            raise RuntimeError("receiver is shutting down")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._pending.clear()
            self._deadlines.clear()
            self._in_flight = None
            self._scheduled = False
            self._sweeper = loop.create_task(self._sweep(), name="tronenergy-commit-deadlines")
        return loop

    def submit(self, event: TransferEvent) -> asyncio.Future[RecordResult]:
        """Queue ``event``; the future resolves once it is durably committed.

        A future that times out (or is cancelled) is never resolved later, so no
        late 200 exists; its row may still land, and the service's retry is then
        a duplicate that gets its 200.
        """
        loop = self._bind()
        if len(self._pending) >= self.max_pending:
            raise Overloaded(f"{len(self._pending)} callbacks are already waiting for a commit")
        future: asyncio.Future[RecordResult] = loop.create_future()
        self._pending.append((event, future))
        self._deadlines.append((loop.time() + self.commit_timeout, future))
        if self._in_flight is None and not self._scheduled:
            # Not at once: requests parsed in this same loop iteration join the batch.
            self._scheduled = True
            loop.call_soon(self._dispatch, loop)
        return future

    def _dispatch(self, loop: asyncio.AbstractEventLoop) -> None:
        self._scheduled = False
        if self._in_flight is not None or not self._pending or self._loop is not loop:
            return
        batch = [self._pending.popleft()
                 for _ in range(min(self.max_batch, len(self._pending)))]
        self._in_flight = batch
        started = loop.time()
        work = self._executor.submit(self.store.record_many, [event for event, _ in batch])
        work.add_done_callback(
            lambda done: loop.call_soon_threadsafe(self._finished, loop, batch, done, started))

    def _finished(
        self,
        loop: asyncio.AbstractEventLoop,
        batch: list[_Item],
        work: concurrent.futures.Future[list[RecordResult]],
        started: float,
    ) -> None:
        if self._loop is not loop:  # the loop was replaced meanwhile: nobody waits
            return
        self._in_flight = None
        exc = work.exception()
        if exc is not None:
            self.stats.failures += 1
            log.error("committing %d callback(s) failed (%s: %s); they get a 503 and are "
                      "retried by the service", len(batch), type(exc).__name__, exc)
            _fail(batch, exc)
        else:
            self.stats.commit_seconds += loop.time() - started
            self.stats.batches += 1
            self.stats.rows += len(batch)
            self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
            for (_, future), result in zip(batch, work.result(), strict=True):
                if not future.done():
                    future.set_result(result)
        if self._pending and not self._closed:
            self._dispatch(loop)

    async def _sweep(self) -> None:
        """Fail every future still waiting past its deadline with :class:`CommitTimeout`."""
        loop = asyncio.get_running_loop()
        tick = min(0.05, self.commit_timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = loop.time()
            while self._deadlines and self._deadlines[0][0] <= now:
                _, future = self._deadlines.popleft()
                if not future.done():
                    future.set_exception(CommitTimeout(
                        f"not committed within {self.commit_timeout:g} s"))

    async def aclose(self) -> None:
        """Stop: requests still waiting get an error (never a false 200)."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        pending = list(self._pending) + (self._in_flight or [])
        self._pending.clear()
        _fail(pending, RuntimeError("receiver is shutting down"))
        await asyncio.to_thread(self._executor.shutdown, wait=True)


def _fail(batch: list[_Item], exc: BaseException) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(exc)
