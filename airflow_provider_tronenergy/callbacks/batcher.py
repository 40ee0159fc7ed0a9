"""Group commit: concurrent callbacks share one transaction and one fsync.

Each request appends its verified event to a pending queue and waits on a
future. One writer thread takes everything pending (up to ``max_batch``) to
the store's blocking ``record_many`` as one batch (one statement or
transaction, one fsync), hands the results back to the event loop, and at once
takes whatever queued meanwhile. Each request's future is resolved only after
its batch returned, so a 200 always follows the durable commit of that
request's own row. Batches grow with load and a lone request waits for nothing.

Why a writer that loops rather than one executor job per batch: under load the
next batch is already waiting when a commit returns, and taking it right there
skips a round trip through the event loop and a thread wake-up, each of which
must win the GIL back from a busy loop (up to the interpreter's 5 ms switch
interval). The loop's share stays an append and, per batch, one wake-up.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from airflow_provider_tronenergy.callbacks.events import RecordResult, VerifiedTransfer
from airflow_provider_tronenergy.errors import CallbackError

log = logging.getLogger(__name__)


class Recorder(Protocol):
    def record_many(self, events: Sequence[VerifiedTransfer]) -> list[RecordResult]: ...


class Overloaded(CallbackError, RuntimeError):
    """Too many callbacks wait for a commit: answer 503 and let the service retry."""


class CommitTimeout(CallbackError, RuntimeError):
    """Not committed within the deadline: answer 503 (the row may still land later)."""


@dataclass
class CommitStats:
    batches: int = 0
    rows: int = 0
    largest_batch: int = 0
    failures: int = 0
    commit_seconds: float = 0.0
    """Time spent inside ``record_many`` (the writer thread's clock)."""


_Item = tuple[VerifiedTransfer, "asyncio.Future[RecordResult]"]


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
        self._loop: asyncio.AbstractEventLoop | None = None
        # Appended on the loop, taken by the writer: deque operations are atomic, and
        # the condition is only needed to wake a writer that found nothing to do.
        self._pending: collections.deque[_Item] = collections.deque()
        self._wake = threading.Condition(threading.Lock())
        self._writer_idle = False
        self._writer: threading.Thread | None = None
        self._in_flight: list[_Item] = []
        # (deadline, future) in submission order, so deadlines are sorted: one timer
        # task enforces them all, cheaper than a timer per request.
        self._deadlines: collections.deque[tuple[float, asyncio.Future[RecordResult]]] = (
            collections.deque())
        self._sweeper: asyncio.Task[None] | None = None
        self._closed = False

    def _bind(self) -> asyncio.AbstractEventLoop:
        """Attach to the running loop on first use: mounted apps get no lifespan events."""
        if self._closed:
            raise RuntimeError("receiver is shutting down")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # A new loop (tests, a restarted server): whatever still waits belongs to
            # the old one. The writer stores it anyway; nobody is told 200.
            self._loop = loop
            self._deadlines.clear()
            self._sweeper = loop.create_task(self._sweep(), name="tronenergy-commit-deadlines")
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop,
                                                name="tronenergy-commit", daemon=True)
                self._writer.start()
        return loop

    def submit(self, event: VerifiedTransfer) -> asyncio.Future[RecordResult]:
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
        if self._writer_idle:
            with self._wake:
                self._wake.notify()
        return future

    # -- the writer thread ------------------------------------------------------------

    def _write_loop(self) -> None:
        pending = self._pending
        while True:
            if not pending:
                with self._wake:
                    self._writer_idle = True
                    # Checked again under the lock: an append that saw the writer busy
                    # happened before this check, so nothing sleeps here unnoticed.
                    while not pending and not self._closed:
                        self._wake.wait()
                    self._writer_idle = False
            if self._closed:
                return
            batch = [pending.popleft() for _ in range(min(self.max_batch, len(pending)))]
            self._in_flight = batch
            self._commit(batch)
            self._in_flight = []

    def _commit(self, batch: list[_Item]) -> None:
        started = time.perf_counter()
        try:
            results = self.store.record_many([event for event, _ in batch])
        except Exception as exc:  # every failure becomes a 503 for each of its requests
            self.stats.failures += 1
            log.error("committing %d callback(s) failed (%s: %s); they get a 503 and are "
                      "retried by the service", len(batch), type(exc).__name__, exc)
            self._post(batch, None, exc)
            return
        self.stats.commit_seconds += time.perf_counter() - started
        self.stats.batches += 1
        self.stats.rows += len(batch)
        self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
        self._post(batch, results, None)

    def _post(self, batch: list[_Item], results: list[RecordResult] | None,
              exc: BaseException | None) -> None:
        """Resolve the batch's futures on the loop that owns them.

        Normally one loop; several only when it was replaced while these waited.
        """
        by_loop: dict[asyncio.AbstractEventLoop, tuple[list[_Item], list[RecordResult]]] = {}
        for index, item in enumerate(batch):
            items, part_results = by_loop.setdefault(item[1].get_loop(), ([], []))
            items.append(item)
            if results is not None:
                part_results.append(results[index])
        for loop, (items, part_results) in by_loop.items():
            # A closed loop raises RuntimeError: nobody waits for those answers.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, items, part_results, exc)

    # -- deadlines and shutdown -------------------------------------------------------

    async def _sweep(self) -> None:
        """Fail every future still waiting past its deadline with :class:`CommitTimeout`."""
        loop = asyncio.get_running_loop()
        tick = min(0.05, self.commit_timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = loop.time()
            deadlines = self._deadlines
            # Answered futures leave at once, not when their deadline passes: holding
            # seconds' worth of them would push thousands of objects into the older GC
            # generations per second, and every full collection would stall the loop.
            while deadlines and (deadlines[0][1].done() or deadlines[0][0] <= now):
                _, future = deadlines.popleft()
                if not future.done():
                    future.set_exception(CommitTimeout(
                        f"not committed within {self.commit_timeout:g} s"))

    async def aclose(self) -> None:
        """Stop: requests still waiting get an error (never a false 200)."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        waiting = list(self._pending) + list(self._in_flight)
        self._pending.clear()
        _fail(waiting, RuntimeError("receiver is shutting down"))
        with self._wake:
            self._wake.notify_all()
        if self._writer is not None:
            await asyncio.to_thread(self._writer.join)


def _resolve(batch: list[_Item], results: list[RecordResult],
             exc: BaseException | None) -> None:
    if exc is not None:
        _fail(batch, exc)
        return
    for (_, future), result in zip(batch, results, strict=True):
        if not future.done():
            future.set_result(result)


def _fail(batch: list[_Item], exc: BaseException) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(exc)
