"""Triggers that turn stored ``tron.transfer`` callbacks into Airflow events.

The callback receiver appends every verified transfer to the callback store.
These triggers read that log; they never talk to the service:

- :class:`TronEnergyTransferTrigger` waits for one matching transfer (behind
  :class:`~airflow_provider_tronenergy.sensors.transfer.TronEnergyTransferSensor`);
- :class:`TronEnergyTransferWatchTrigger` feeds an ``AssetWatcher``: one Asset event
  per new matching transfer, the consumer's offset committed only after Airflow
  persisted the event.

On Airflow >= 3.3 every trigger on one store shares one poll of it (the
triggerer's shared streams), so 500 waiting sensors cost the database what one
does. Older releases run each trigger's own poll loop (``run``).

With ``proven=True`` (the default) a transfer is handed on only once the deposit ledger
credited it, with the chain's figures; a disputed callback never
(:mod:`airflow_provider_tronenergy.deposits.handover`, the one rule the sensor's poke
follows too). The ledger is the triggerer's (``TRONENERGY_DEPOSITS_DB`` or ``[tronenergy]
deposits_ledger``); no kwarg names it.

A store or ledger the triggerer may not open (``StoreNotShared``) fails a waiting sensor
once; the watcher follows :mod:`.stops` (one ``error`` event naming its ``consumer``, read
again every :data:`STOP_RECHECK_SECONDS`, on from the committed offset once it opens).

Store URLs in trigger kwargs are stored in the metadata database, so a URL with
a password is refused: leave ``store_url`` unset and configure
``TRONENERGY_CALLBACK_STORE`` or ``[tronenergy] callback_store`` in the triggerer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Hashable, Sequence
from typing import Any, TypeVar

from airflow.triggers.base import BaseEventTrigger, TriggerEvent
from sqlalchemy.exc import SQLAlchemyError

from airflow_provider_tronenergy.callbacks.access import checked_store_url, open_store
from airflow_provider_tronenergy.callbacks.events import StoredTransfer
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.deposits.handover import (
    STREAM_BATCH,
    Handover,
    HeldStream,
    TransferFilter,
)
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.templated import optional_text
from airflow_provider_tronenergy.triggers.stops import Stopped, Stops, stopped, until_fixed

__all__ = ["TronEnergyTransferTrigger", "TronEnergyTransferWatchTrigger"]
T = TypeVar("T")
log = logging.getLogger(__name__)
RUN_COMMIT_GRACE = 5.0
"""Seconds an event handed to the triggerer waits before its offset is committed, when
Airflow cannot confirm persistence (no shared streams): see
``TronEnergyTransferWatchTrigger.run``."""
STOP_RECHECK_SECONDS = 60.0
"""Seconds between a stopped watcher's reads of what stopped it (a store it may not open)."""

try:  # Airflow >= 3.3: ack-mode shared streams
    from airflow.triggers.shared_stream import AdvanceItem, SharedStreamProducer
except ImportError:  # pragma: no cover - exercised on the lowest supported Airflow
    SharedStreamProducer = object  # type: ignore[assignment,misc]
    AdvanceItem = Any  # type: ignore[assignment,misc]


async def until_done(what: str, poll_interval: float, call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` in a thread, retried with backoff while the store cannot be reached.

    A store outage is the store's to end: a poll that failed, or an offset commit for
    events Airflow already persisted, must wait for it, not fail the trigger. A failed
    trigger restarts from the last committed offset and fires again what it had
    fired (duplicate Asset events), or fails every sensor sharing its poll.
    """
    failures = 0
    while True:
        try:
            return await asyncio.to_thread(call, *args)
        except SQLAlchemyError as exc:
            failures += 1
            log.warning("callback store: %s failed (%s); retrying", what, type(exc).__name__)
            await asyncio.sleep(min(poll_interval * 2 ** min(failures, 5), 60.0))


def _nothing() -> None:
    return None


async def poll_store(store: CallbackStore, after_id: int, poll_interval: float,
                     polled: Callable[[], None] = _nothing) -> AsyncIterator[StoredTransfer]:
    """Every transfer with id > ``after_id``, forever: one query per poll for everyone;
    ``polled()`` after each query answered."""
    cursor = after_id
    while True:
        batch = await until_done("the poll", poll_interval, store.list_transfers, None, cursor,
                                 STREAM_BATCH)
        polled()
        for transfer in batch:
            cursor = transfer.id
            yield transfer
        if len(batch) < STREAM_BATCH:
            await asyncio.sleep(poll_interval)


def _store_identity(store_url: str | None) -> str:
    return store_url or "default"


class TronEnergyTransferTrigger(BaseEventTrigger):
    """Fires once, with the first stored transfer after ``after_id`` that matches.

    Events: ``{"status": "success", "transfer": {...}}`` or
    ``{"status": "timeout", "message": ...}`` past ``end_time``. With ``proven`` (the
    default) "matches" is judged on the chain's figures once the deposit ledger credited
    the transfer (:class:`~airflow_provider_tronenergy.deposits.handover.Handover`); such
    a trigger polls on its own (the store and the ledger), not in the shared poll.
    """

    def __init__(self, *, address: str, after_id: int, token: str | None = None,
                 min_amount: str | None = None, from_address: str | None = None,
                 store_url: str | None = None, poll_interval_seconds: float = 2.0,
                 end_time: float | None = None, proven: bool = True) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.address = address
        self.after_id = int(after_id)
        self.token = optional_text(token)
        self.min_amount = optional_text(min_amount)
        self.from_address = optional_text(from_address)
        self.store_url = checked_store_url(store_url)
        self.poll_interval_seconds = float(poll_interval_seconds)
        self.end_time = end_time
        self.proven = bool(proven)
        self.filter = TransferFilter.of(address, self.token, self.min_amount, self.from_address)
        self.handover = Handover(self.filter, proven=self.proven)
        self._settled = self.after_id  # callbacks up to here are decided for good

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}", {
            "address": self.address, "after_id": self.after_id, "token": self.token,
            "min_amount": self.min_amount, "from_address": self.from_address,
            "store_url": self.store_url, "poll_interval_seconds": self.poll_interval_seconds,
            "end_time": self.end_time, "proven": self.proven,
        })

    # -- one poll shared by every waiting trigger on the same store (Airflow >= 3.3) ---------

    def shared_stream_key(self) -> Hashable | None:
        if self.proven:  # a held callback is judged again every poll: its own loop
            return None
        return ("tronenergy.transfers", _store_identity(self.store_url), self.poll_interval_seconds)

    @classmethod
    async def open_shared_stream(cls, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        store = open_store(kwargs.get("store_url"))
        start = await until_done("the stream's start", float(kwargs["poll_interval_seconds"]),
                                 store.max_id)
        async for transfer in poll_store(store, start, float(kwargs["poll_interval_seconds"])):
            yield transfer

    async def filter_shared_stream(
        self, shared_stream: AsyncIterator[Any]
    ) -> AsyncIterator[TriggerEvent]:
        # What was stored before this trigger joined the shared poll: one query, once.
        try:
            found = await self._first_stored()
        except NotRetryable as exc:
            yield self._refused(exc)
            return
        if found is not None:
            yield self._event(found)
            return
        iterator = aiter(shared_stream)  # proven=False only: see shared_stream_key
        while True:
            try:
                transfer = await asyncio.wait_for(anext(iterator), timeout=self._remaining())
            except asyncio.TimeoutError:
                yield self._timeout()
                return
            if transfer.id > self.after_id and self.filter.matches(transfer):
                yield self._event(transfer.to_payload())
                return

    # -- standalone poll (Airflow < 3.3, or when the triggerer does not share) ----------------

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            try:
                found = await self._first_stored()
            except NotRetryable as exc:
                yield self._refused(exc)
                return
            if found is not None:
                yield self._event(found)
                return
            remaining = self._remaining()
            if remaining is not None and remaining <= 0:
                yield self._timeout()
                return
            await asyncio.sleep(self.poll_interval_seconds if remaining is None
                                else min(self.poll_interval_seconds, remaining))

    async def _first_stored(self) -> dict[str, Any] | None:
        """The first transfer to hand on (its payload), by the one rule of ``Handover``."""
        store = open_store(self.store_url)
        if not self.proven:
            rows = await asyncio.to_thread(
                lambda: store.list_transfers(self.address, self.after_id, 1, token=self.token,
                                             min_amount=self.min_amount,
                                             from_address=self.from_address))
            return rows[0].to_payload() if rows else None
        rows = await asyncio.to_thread(lambda: store.list_transfers(
            self.address, self._settled, STREAM_BATCH, token=self.token))
        payload, settled = await asyncio.to_thread(self.handover.first, rows)
        if settled:
            self._settled = rows[settled - 1].id
        return payload

    def _remaining(self) -> float | None:
        return None if self.end_time is None else max(0.0, self.end_time - time.time())

    def _event(self, transfer: dict[str, Any]) -> TriggerEvent:
        self.log.info("transfer %s of %s %s to %s arrived (%s)", transfer["tx_hash"],
                      transfer["amount"], transfer["token"], transfer["to"],
                      "proven on chain" if transfer["proven"] else "not proven")
        return TriggerEvent(  # type: ignore[no-untyped-call]
            {"status": "success", "transfer": transfer})

    def _timeout(self) -> TriggerEvent:
        return TriggerEvent({"status": "timeout",  # type: ignore[no-untyped-call]
                             "message": f"no matching transfer to {self.address} in time"})

    def _refused(self, exc: NotRetryable) -> TriggerEvent:
        """A store or ledger the triggerer may not open (``StoreNotShared``): the task fails,
        not retried (a trigger that raised would be retried)."""
        return TriggerEvent({"status": "error", "retryable": False,  # type: ignore[no-untyped-call]
                             "message": str(exc)})


async def held_stream(store: CallbackStore, held: HeldStream, poll_interval: float,
                      polled: Callable[[], None] = _nothing
                      ) -> AsyncIterator[tuple[dict[str, Any] | None, int]]:
    """Every stored transfer once decided (``proven``): its payload (None: not handed on)
    and the offset that may be committed, forever; held callbacks judged again each poll;
    ``polled()`` after each poll the store and the ledger answered."""
    while True:
        batch = await until_done("the poll", poll_interval, store.list_transfers, None,
                                 held.cursor, STREAM_BATCH)
        decided = await until_done("the ledger read", poll_interval, held.take, batch)
        polled()
        for item in decided:
            yield item
        if len(batch) < STREAM_BATCH:
            await asyncio.sleep(poll_interval)


class _OffsetProducer(SharedStreamProducer):
    """Reads the store from a consumer's committed offset; commits as Airflow confirms."""

    def __init__(self, store_url: str | None, consumer: str, poll_interval: float,
                 handover: Handover | None = None) -> None:
        self.store_url = store_url
        self.consumer = consumer
        self.poll_interval_seconds = poll_interval
        self.handover = handover
        self.store: CallbackStore | None = None

    async def open_stream(self) -> AsyncIterator[tuple[Any, Any]]:
        """``(transfer, id)``; with a proven ``handover``, ``(payload or None, offset)``: each
        callback once decided, the offset never past one still held. A store or ledger
        it may not open: ``(Stopped, None)`` once per cause, and a read again later."""
        async for item in until_fixed(
                self._stream, lambda message: (Stopped(message), None),
                recheck_after=STOP_RECHECK_SECONDS, log=log,
                what=f"the transfer watcher of consumer {self.consumer!r}"):
            yield item

    async def _stream(self, stops: Stops) -> AsyncGenerator[tuple[Any, Any], None]:
        self.store = open_store(self.store_url)
        start = await until_done("the start offset", self.poll_interval_seconds,
                                 self.store.start_offset, self.consumer)
        if self.handover is None or not self.handover.proven:
            async for transfer in poll_store(self.store, start, self.poll_interval_seconds,
                                             stops.resumed):
                yield transfer, transfer.id
            return
        async for item in held_stream(self.store, HeldStream(self.handover, start),
                                      self.poll_interval_seconds, stops.resumed):
            yield item

    async def advance(self, batch: Sequence[Any]) -> None:
        last = None
        try:
            for item in batch:
                outcome = item.outcome
                if outcome.failed or not (outcome.acked or outcome.rejected):
                    # Not persisted (or seen by no one): stop here; the group ends and the
                    # poll restarts from the committed offset, so the event is delivered
                    # again. Committing anything after it would skip it for good.
                    raise RuntimeError(
                        f"transfer {item.broker_payload} was not persisted by Airflow")
                if item.broker_payload is not None:  # a Stopped event moves no offset
                    last = item.broker_payload
        finally:
            # The clean prefix before a failure is committed all the same: those events
            # were persisted, and redelivering them would fire them twice. So is a prefix
            # whose commit meets a store outage: retried until the store is back.
            if last is not None and self.store is not None:
                await until_done("the offset commit", self.poll_interval_seconds,
                                 self.store.commit_offset, self.consumer, int(last))


class TronEnergyTransferWatchTrigger(BaseEventTrigger):
    """One Asset event per new stored transfer that matches, for ``AssetWatcher``.

    Each event's payload is the transfer. The consumer's offset in the store
    moves only after Airflow persisted the events up to it, so a triggerer
    restart resumes where it left off; a crash between persisting and committing
    can deliver those few events again, which is why consumers record deposits
    keyed by ``tx_hash``.

    With ``proven`` (the default) a transfer fires once the deposit ledger credited it, its
    payload the chain's figures; a disputed callback never fires; the offset is not
    committed past a callback still waiting. A watcher that only *wakes* the DAG that
    credits (``deposit_credit``) sets ``proven=False``: it must fire before the proof.

    A store or ledger the triggerer may not open: one ``error`` event
    (:func:`~.stops.stopped`, naming ``consumer``) that the woken run fails on
    (:func:`~.stops.stops_in`), then a read again every :data:`STOP_RECHECK_SECONDS`.
    """

    def __init__(self, *, addresses: Sequence[str] | str | None = None,
                 token: str | None = None, min_amount: str | None = None,
                 consumer: str = "tronenergy-watch", store_url: str | None = None,
                 poll_interval_seconds: float = 2.0, proven: bool = True) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        if isinstance(addresses, str):
            addresses = [addresses]
        self.addresses = sorted(addresses) if addresses else None
        self.token = optional_text(token)
        self.min_amount = optional_text(min_amount)
        self.consumer = consumer
        self.store_url = checked_store_url(store_url)
        self.poll_interval_seconds = float(poll_interval_seconds)
        self.proven = bool(proven)
        self.filter = TransferFilter.of(self.addresses, self.token, self.min_amount, None)
        self.handover = Handover(self.filter, proven=self.proven)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}", {
            "addresses": self.addresses, "token": self.token, "min_amount": self.min_amount,
            "consumer": self.consumer, "store_url": self.store_url,
            "poll_interval_seconds": self.poll_interval_seconds, "proven": self.proven,
        })

    def shared_stream_key(self) -> Hashable | None:
        return ("tronenergy.watch", _store_identity(self.store_url), self.consumer,
                self.proven)

    @classmethod
    def create_shared_stream_producer(cls, kwargs: dict[str, Any]) -> Any:
        handover = None
        if kwargs.get("proven", True):  # the consumer's one filter decides in the producer
            handover = Handover(TransferFilter.of(kwargs.get("addresses"), kwargs.get("token"),
                                                  kwargs.get("min_amount"), None), proven=True)
        return _OffsetProducer(kwargs.get("store_url"), kwargs["consumer"],
                               float(kwargs["poll_interval_seconds"]), handover)

    async def filter_shared_stream(
        self, shared_stream: AsyncIterator[Any]
    ) -> AsyncIterator[TriggerEvent]:
        async for item in shared_stream:
            if isinstance(item, Stopped):
                yield self._stopped(item.message)
            elif self.proven:
                if item is not None:
                    yield self._event(item)
            elif self.filter.matches(item):
                yield self._event(item.to_payload())

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Without shared streams (Airflow < 3.3) Airflow never says an event was persisted.

        So an offset is committed only at a poll at least :data:`RUN_COMMIT_GRACE`
        seconds after the triggerer came back for the next event (it persists what it
        took within about a second): a crash re-fires the last few transfers, which
        consumers dedupe by ``tx_hash``, instead of losing one. A store or ledger it may
        not open stops it as in the shared stream (:mod:`.stops`).
        """
        async for event in until_fixed(
                self._watch, self._stopped, recheck_after=STOP_RECHECK_SECONDS, log=self.log,
                what=f"the transfer watcher of consumer {self.consumer!r}"):
            yield event

    async def _watch(self, stops: Stops) -> AsyncGenerator[TriggerEvent, None]:
        """The watch from the committed offset (``run``'s rules)."""
        store = open_store(self.store_url)
        cursor = committed = await until_done("the start offset", self.poll_interval_seconds,
                                              store.start_offset, self.consumer)
        handed: deque[tuple[float, int]] = deque()  # (when handed over, id), in id order
        if self.proven:
            async for payload, offset in held_stream(store, HeldStream(self.handover, cursor),
                                                     self.poll_interval_seconds, stops.resumed):
                if payload is not None:
                    yield self._event(payload)
                handed.append((time.monotonic(), offset))
                committed = await self._commit_due(store, handed, committed)
            return
        while True:
            batch = await until_done("the poll", self.poll_interval_seconds, store.list_transfers,
                                     None, cursor, STREAM_BATCH)
            stops.resumed()
            for transfer in batch:
                cursor = transfer.id
                if self.filter.matches(transfer):
                    yield self._event(transfer.to_payload())
                handed.append((time.monotonic(), transfer.id))
            committed = await self._commit_due(store, handed, committed)
            if len(batch) < STREAM_BATCH:
                await asyncio.sleep(self.poll_interval_seconds)

    async def _commit_due(self, store: CallbackStore, handed: deque[tuple[float, int]],
                          committed: int) -> int:
        """Commit the offset of what was handed over at least ``RUN_COMMIT_GRACE`` ago."""
        due, upto = time.monotonic() - RUN_COMMIT_GRACE, committed
        while handed and handed[0][0] <= due:
            upto = max(upto, handed.popleft()[1])
        if upto > committed:
            return int(await until_done("the offset commit", self.poll_interval_seconds,
                                        store.commit_offset, self.consumer, upto))
        return committed

    def _stopped(self, message: str) -> TriggerEvent:
        """The one event of a stop: the woken run fails on it, not retried."""
        return TriggerEvent(stopped(message, consumer=self.consumer))  # type: ignore[no-untyped-call]

    def _event(self, transfer: dict[str, Any]) -> TriggerEvent:
        self.log.info("transfer %s: %s %s to %s (%s)", transfer["tx_hash"], transfer["amount"],
                      transfer["token"], transfer["to"],
                      "proven on chain" if transfer["proven"] else "not proven")
        return TriggerEvent(transfer)  # type: ignore[no-untyped-call]
