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

Store URLs in trigger kwargs are stored in the metadata database, so a URL with
a password is refused: leave ``store_url`` unset and configure
``TRONENERGY_CALLBACK_STORE`` or ``[tronenergy] callback_store`` in the triggerer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

from airflow.triggers.base import BaseEventTrigger, TriggerEvent
from sqlalchemy.exc import SQLAlchemyError

from airflow_provider_tronenergy.callbacks.access import checked_store_url, open_store
from airflow_provider_tronenergy.callbacks.events import StoredTransfer, threshold_micro
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.templated import optional_text

STREAM_BATCH = 500
T = TypeVar("T")
log = logging.getLogger(__name__)
RUN_COMMIT_GRACE = 5.0
"""Seconds an event handed to the triggerer waits before its offset is committed, when
Airflow cannot confirm persistence (no shared streams): see
``TronEnergyTransferWatchTrigger.run``."""

try:  # Airflow >= 3.3: ack-mode shared streams
    from airflow.triggers.shared_stream import AdvanceItem, SharedStreamProducer
except ImportError:  # pragma: no cover - exercised on the lowest supported Airflow
    SharedStreamProducer = object  # type: ignore[assignment,misc]
    AdvanceItem = Any  # type: ignore[assignment,misc]


@dataclass(frozen=True)
class TransferFilter:
    addresses: frozenset[str] | None = None
    token: str | None = None
    min_micro: int | None = None
    from_address: str | None = None

    @classmethod
    def of(cls, addresses: Sequence[str] | str | None, token: str | None,
           min_amount: Decimal | str | None, from_address: str | None) -> TransferFilter:
        if isinstance(addresses, str):
            addresses = [addresses]
        return cls(
            addresses=frozenset(addresses) if addresses else None,
            token=token.upper() if token else None,
            min_micro=None if min_amount in (None, "") else threshold_micro(min_amount),
            from_address=from_address or None,
        )

    def matches(self, transfer: StoredTransfer) -> bool:
        return (
            (self.addresses is None or transfer.to_address in self.addresses)
            and (self.token is None or transfer.token == self.token)
            and (self.min_micro is None or transfer.amount_micro >= self.min_micro)
            and (self.from_address is None or transfer.from_address == self.from_address)
        )


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


async def poll_store(store: CallbackStore, after_id: int,
                     poll_interval: float) -> AsyncIterator[StoredTransfer]:
    """Every transfer with id > ``after_id``, forever: one query per poll for everyone."""
    cursor = after_id
    while True:
        batch = await until_done("the poll", poll_interval, store.list_transfers, None, cursor,
                                 STREAM_BATCH)
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
    ``{"status": "timeout", "message": ...}`` past ``end_time``.
    """

    def __init__(self, *, address: str, after_id: int, token: str | None = None,
                 min_amount: str | None = None, from_address: str | None = None,
                 store_url: str | None = None, poll_interval: float = 2.0,
                 end_time: float | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.address = address
        self.after_id = int(after_id)
        self.token = optional_text(token)
        self.min_amount = optional_text(min_amount)
        self.from_address = optional_text(from_address)
        self.store_url = checked_store_url(store_url)
        self.poll_interval = float(poll_interval)
        self.end_time = end_time
        self.filter = TransferFilter.of(address, self.token, self.min_amount, self.from_address)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}", {
            "address": self.address, "after_id": self.after_id, "token": self.token,
            "min_amount": self.min_amount, "from_address": self.from_address,
            "store_url": self.store_url, "poll_interval": self.poll_interval,
            "end_time": self.end_time,
        })

    # -- one poll shared by every waiting trigger on the same store (Airflow >= 3.3) ---------

    def shared_stream_key(self) -> Hashable | None:
        return ("tronenergy.transfers", _store_identity(self.store_url), self.poll_interval)

    @classmethod
    async def open_shared_stream(cls, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        store = open_store(kwargs.get("store_url"))
        start = await until_done("the stream's start", float(kwargs["poll_interval"]),
                                 store.max_id)
        async for transfer in poll_store(store, start, float(kwargs["poll_interval"])):
            yield transfer

    async def filter_shared_stream(
        self, shared_stream: AsyncIterator[Any]
    ) -> AsyncIterator[TriggerEvent]:
        # What was stored before this trigger joined the shared poll: one query, once.
        found = await self._first_stored()
        if found is not None:
            yield self._event(found)
            return
        iterator = aiter(shared_stream)
        while True:
            try:
                transfer = await asyncio.wait_for(anext(iterator), timeout=self._remaining())
            except asyncio.TimeoutError:
                yield self._timeout()
                return
            if transfer.id > self.after_id and self.filter.matches(transfer):
                yield self._event(transfer)
                return

    # -- standalone poll (Airflow < 3.3, or when the triggerer does not share) ----------------

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            found = await self._first_stored()
            if found is not None:
                yield self._event(found)
                return
            remaining = self._remaining()
            if remaining is not None and remaining <= 0:
                yield self._timeout()
                return
            await asyncio.sleep(self.poll_interval if remaining is None
                                else min(self.poll_interval, remaining))

    async def _first_stored(self) -> StoredTransfer | None:
        store = open_store(self.store_url)
        rows = await asyncio.to_thread(
            lambda: store.list_transfers(self.address, self.after_id, 1, token=self.token,
                                         min_amount=self.min_amount,
                                         from_address=self.from_address))
        return rows[0] if rows else None

    def _remaining(self) -> float | None:
        return None if self.end_time is None else max(0.0, self.end_time - time.time())

    def _event(self, transfer: StoredTransfer) -> TriggerEvent:
        self.log.info("transfer %s of %s %s to %s arrived", transfer.tx_hash,
                      transfer.amount_text, transfer.token, transfer.to_address)
        return TriggerEvent(  # type: ignore[no-untyped-call]
            {"status": "success", "transfer": transfer.to_payload()})

    def _timeout(self) -> TriggerEvent:
        return TriggerEvent({"status": "timeout",  # type: ignore[no-untyped-call]
                             "message": f"no matching transfer to {self.address} in time"})


class _OffsetProducer(SharedStreamProducer):
    """Reads the store from a consumer's committed offset; commits as Airflow confirms."""

    def __init__(self, store_url: str | None, consumer: str, poll_interval: float) -> None:
        self.store_url = store_url
        self.consumer = consumer
        self.poll_interval = poll_interval
        self.store: CallbackStore | None = None

    async def open_stream(self) -> AsyncIterator[tuple[Any, Any]]:
        self.store = open_store(self.store_url)
        start = await until_done("the start offset", self.poll_interval,
                                 self.store.start_offset, self.consumer)
        async for transfer in poll_store(self.store, start, self.poll_interval):
            yield transfer, transfer.id

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
                last = item.broker_payload
        finally:
            # The clean prefix before a failure is committed all the same: those events
            # were persisted, and redelivering them would fire them twice. So is a prefix
            # whose commit meets a store outage: retried until the store is back.
            if last is not None and self.store is not None:
                await until_done("the offset commit", self.poll_interval,
                                 self.store.commit_offset, self.consumer, int(last))


class TronEnergyTransferWatchTrigger(BaseEventTrigger):
    """One Asset event per new stored transfer that matches, for ``AssetWatcher``.

    Each event's payload is the transfer. The consumer's offset in the store
    moves only after Airflow persisted the events up to it, so a triggerer
    restart resumes where it left off; a crash between persisting and committing
    can deliver those few events again, which is why consumers record deposits
    keyed by ``tx_hash``.
    """

    def __init__(self, *, addresses: Sequence[str] | str | None = None,
                 token: str | None = None, min_amount: str | None = None,
                 consumer: str = "tronenergy-watch", store_url: str | None = None,
                 poll_interval: float = 2.0) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        if isinstance(addresses, str):
            addresses = [addresses]
        self.addresses = sorted(addresses) if addresses else None
        self.token = optional_text(token)
        self.min_amount = optional_text(min_amount)
        self.consumer = consumer
        self.store_url = checked_store_url(store_url)
        self.poll_interval = float(poll_interval)
        self.filter = TransferFilter.of(self.addresses, self.token, self.min_amount, None)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}", {
            "addresses": self.addresses, "token": self.token, "min_amount": self.min_amount,
            "consumer": self.consumer, "store_url": self.store_url,
            "poll_interval": self.poll_interval,
        })

    def shared_stream_key(self) -> Hashable | None:
        return ("tronenergy.watch", _store_identity(self.store_url), self.consumer)

    @classmethod
    def create_shared_stream_producer(cls, kwargs: dict[str, Any]) -> Any:
        return _OffsetProducer(kwargs.get("store_url"), kwargs["consumer"],
                               float(kwargs["poll_interval"]))

    async def filter_shared_stream(
        self, shared_stream: AsyncIterator[Any]
    ) -> AsyncIterator[TriggerEvent]:
        async for transfer in shared_stream:
            if self.filter.matches(transfer):
                yield self._event(transfer)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Without shared streams (Airflow < 3.3) Airflow never says an event was persisted.

        So an offset is committed only at a poll at least :data:`RUN_COMMIT_GRACE`
        seconds after the triggerer came back for the next event (it persists what it
        took within about a second): a crash re-fires the last few transfers, which
        consumers dedupe by ``tx_hash``, instead of losing one.
        """
        store = open_store(self.store_url)
        cursor = committed = await until_done("the start offset", self.poll_interval,
                                              store.start_offset, self.consumer)
        handed: deque[tuple[float, int]] = deque()  # (when handed over, id), in id order
        while True:
            batch = await until_done("the poll", self.poll_interval, store.list_transfers,
                                     None, cursor, STREAM_BATCH)
            for transfer in batch:
                cursor = transfer.id
                if self.filter.matches(transfer):
                    yield self._event(transfer)
                handed.append((time.monotonic(), transfer.id))
            due, upto = time.monotonic() - RUN_COMMIT_GRACE, committed
            while handed and handed[0][0] <= due:
                upto = handed.popleft()[1]
            if upto > committed:
                committed = await until_done("the offset commit", self.poll_interval,
                                             store.commit_offset, self.consumer, upto)
            if len(batch) < STREAM_BATCH:
                await asyncio.sleep(self.poll_interval)

    def _event(self, transfer: StoredTransfer) -> TriggerEvent:
        self.log.info("transfer %s: %s %s to %s", transfer.tx_hash, transfer.amount_text,
                      transfer.token, transfer.to_address)
        return TriggerEvent(transfer.to_payload())  # type: ignore[no-untyped-call]
