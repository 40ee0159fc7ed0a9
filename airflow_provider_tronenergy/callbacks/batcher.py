"""Group commit: concurrent callbacks share one transaction and one fsync.

Every request puts its verified event on a queue and waits. One writer task
drains whatever has queued up, hands the whole batch to the store's blocking
``record_many`` on a dedicated thread (one transaction, one commit), and only
then resolves each request's future — so a 200 always follows the durable
commit of that request's own row. While one batch commits, the next one
gathers: batches grow with load and a lone request waits for nothing.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from airflow_provider_tronenergy.callbacks.events import RecordResult, TransferEvent

log = logging.getLogger(__name__)


class Recorder(Protocol):
    def record_many(self, events: Sequence[TransferEvent]) -> list[RecordResult]: ...


class Overloaded(RuntimeError):
    """The queue is full: answer 503 and let the service retry."""


class CommitTimeout(RuntimeError):
    """Not committed within the deadline: answer 503 (the row may still land later)."""


@dataclass
class CommitStats:
    batches: int = 0
    rows: int = 0
    largest_batch: int = 0
    failures: int = 0
    commit_seconds: float = 0.0
    """Wall time spent in ``record_many`` (includes waiting for the GIL and the fsync)."""


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
        # (deadline, future) in submission order, so deadlines are sorted: one sweeper
        # enforces them all, cheaper than a timer per request.
        self._deadlines: collections.deque[tuple[float, asyncio.Future[RecordResult]]] = (
            collections.deque()
        )
        self._sweeper: asyncio.Task[None] | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tronenergy-commit")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Item] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._closed = False

    def _started(self) -> asyncio.Queue[_Item]:
        """Start lazily on the running loop: mounted apps get no lifespan events."""
        if self._closed:
            raise RuntimeError("receiver is shutting down")
        loop = asyncio.get_running_loop()
        if self._queue is None or self._loop is not loop or self._writer is None \
                or self._writer.done():
            self._loop = loop
            self._queue = asyncio.Queue()
            self._writer = loop.create_task(self._write_loop(self._queue),
                                            name="tronenergy-group-commit")
            self._deadlines.clear()
            self._sweeper = loop.create_task(self._sweep(), name="tronenergy-commit-deadlines")
        return self._queue

    def submit(self, event: TransferEvent) -> asyncio.Future[RecordResult]:
        """Queue ``event``; the future resolves once it is durably committed.

        Cancelling the future (a timeout, a client gone) does not stop the commit:
        the row may still land, and the service's retry is then a duplicate that
        gets its 200. A cancelled future is never resolved, so no late 200 exists.
        """
        queue = self._started()
        if queue.qsize() >= self.max_pending:
            raise Overloaded(f"{queue.qsize()} callbacks are already waiting for a commit")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[RecordResult] = loop.create_future()
        queue.put_nowait((event, future))
        self._deadlines.append((loop.time() + self.commit_timeout, future))
        return future

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

    async def _write_loop(self, queue: asyncio.Queue[_Item]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await queue.get()]
            while len(batch) < self.max_batch and not queue.empty():
                batch.append(queue.get_nowait())
            events = [event for event, _ in batch]
            started = loop.time()
            try:
                results = await loop.run_in_executor(self._executor, self.store.record_many,
                                                     events)
            except asyncio.CancelledError:
                _fail(batch, RuntimeError("receiver is shutting down"))
                raise
            except Exception as exc:
                self.stats.failures += 1
                log.exception("committing %d callback(s) failed; they get a 503 and are "
                              "retried by the service", len(batch))
                _fail(batch, exc)
                continue
            self.stats.commit_seconds += loop.time() - started
            self.stats.batches += 1
            self.stats.rows += len(batch)
            self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)

    async def aclose(self) -> None:
        """Stop the writer; requests still waiting get an error (never a false 200)."""
        self._closed = True
        for task in (self._writer, self._sweeper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._queue is not None:
            pending = []
            while not self._queue.empty():
                pending.append(self._queue.get_nowait())
            _fail(pending, RuntimeError("receiver is shutting down"))
        self._executor.shutdown(wait=True)


def _fail(batch: list[_Item], exc: BaseException) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(exc)
