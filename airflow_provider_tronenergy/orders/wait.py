"""Waiting for an energy order to end: the rules, written once for task, sensor and trigger.

A purchase answers at once with a ``pending`` order; delegation follows seconds
(or, when the chain is busy, minutes) later. Whoever waits (a purchase operator
in its worker, :class:`~airflow_provider_tronenergy.sensors.order.TronEnergyOrderSensor`
poke by poke, :class:`~airflow_provider_tronenergy.triggers.order.TronEnergyOrderTrigger`
in the triggerer) reads the order with :class:`OrderWatch`, so all of them agree on
what each answer means:

* a terminal order ends the wait with its own event (``success``, ``failed``,
  ``cancelled``);
* no answer, a 5xx or a 429 says nothing about the order: polling goes on (a 429's
  ``Retry-After`` lengthens the next pause), logged once when the trouble starts;
* a refusal only a person fixes (the service's authentication codes 40001-40003: a
  missing or unknown API key, a bad signature, a clock outside the window) ends the wait
  with an ``error`` event marked ``"retryable": false``, naming the connection and the
  fix: the task fails once, since every retry is refused alike;
* any other failure (unknown order, a malformed answer) will not change on its own:
  the wait ends at once with an ``error`` event;
* past ``end_time`` the wait ends with ``timeout``, after at least one read, so an
  order that has ended is never reported late.

The outcome is always one JSON-safe event built by :func:`order_event`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

from airflow_provider_tronenergy.client import (
    AuthenticationError,
    Order,
    OrderStatus,
    RateLimitedError,
    ServerError,
    TransportError,
    TronEnergyError,
)


class Log(Protocol):
    """What a wait logs through: a stdlib logger, an adapter, or Airflow's task logger."""

    def info(self, msg: str, /, *args: Any) -> Any: ...

    def warning(self, msg: str, /, *args: Any) -> Any: ...


EventStatus = Literal["success", "failed", "cancelled", "timeout", "error"]
EVENT_STATUSES: tuple[EventStatus, ...] = ("success", "failed", "cancelled", "timeout", "error")

TRANSIENT_ERRORS: tuple[type[TronEnergyError], ...] = (TransportError, ServerError,
                                                       RateLimitedError)
"""Failures that say nothing about the order: polling simply goes on."""

PERSON_FIXES: tuple[type[TronEnergyError], ...] = (AuthenticationError,)
"""Refusals no retry changes: the connection's key or secret (or the host's clock) is wrong."""

_TERMINAL_EVENT: dict[OrderStatus, EventStatus] = {
    OrderStatus.SUCCESS: "success",
    OrderStatus.FAILED: "failed",
    OrderStatus.CANCELLED: "cancelled",
}

_VERB = {
    OrderStatus.PENDING: "is pending",
    OrderStatus.PROCESSING: "is processing",
    OrderStatus.SUCCESS: "succeeded",
    OrderStatus.FAILED: "failed",
    OrderStatus.CANCELLED: "was cancelled",
}


def describe_order(order: Order) -> str:
    """One human sentence about an order, e.g. ``energy order 8f3... succeeded: 65,000 ...``.

    Only a success is told as ``verb: what, cost, tx``; any other status puts the
    order's details in parentheses, so a quoted cost never reads as money spent.
    """
    parts = []
    if order.energy_amount is not None:
        target = f" for {order.target_address}" if order.target_address else ""
        rent = f" ({order.rent_time} h)" if order.rent_time is not None else ""
        parts.append(f"{order.energy_amount:,} energy{target}{rent}")
    if order.cost is not None:
        parts.append(f"{order.cost} TRX")
    sentence = f"energy order {order.order_id} {_VERB[order.status]}"
    if order.status is OrderStatus.SUCCESS:
        if order.tx_hash:
            parts.append(f"tx {order.tx_hash}")
        return f"{sentence}: {', '.join(parts)}" if parts else sentence
    return f"{sentence} ({', '.join(parts)})" if parts else sentence


def order_event(
    order_id: str,
    *,
    order: Order | None = None,
    status: EventStatus | None = None,
    message: str | None = None,
) -> dict[str, Any]:
    """The JSON-safe payload of an order's outcome (the trigger's event, reusable by tasks).

    ``{"status", "order_id", "order", "message"}``: status is ``success``, ``failed`` or
    ``cancelled`` (taken from a terminal ``order`` when not given), ``timeout`` or
    ``error`` (``order`` is then the last one seen, or None); ``order`` is
    ``Order.to_dict()`` or None; ``message`` is one human sentence.
    """
    if order is not None and order.order_id != order_id:
        raise ValueError(f"order_event: the order is {order.order_id}, not {order_id}")
    if status is None:
        if order is None or order.status not in _TERMINAL_EVENT:
            raise ValueError("order_event: status is required unless a terminal order is given")
        status = _TERMINAL_EVENT[order.status]
    if status not in EVENT_STATUSES:
        raise ValueError(f"order_event: status must be one of {', '.join(EVENT_STATUSES)}")
    if status in ("success", "failed", "cancelled") and (
        order is None or _TERMINAL_EVENT.get(order.status) != status
    ):
        raise ValueError(f"order_event: a {status} event needs an order whose status is {status}")
    if message is None:
        if order is not None and status in ("success", "failed", "cancelled"):
            message = describe_order(order)
        elif status == "timeout":
            seen = order.status.value if order is not None else "unknown"
            message = f"energy order {order_id} did not end in time (last seen: {seen})"
        else:
            message = f"could not follow energy order {order_id}"
    return {
        "status": status,
        "order_id": order_id,
        "order": order.to_dict() if order is not None else None,
        "message": message,
    }


class OrderWatch:
    """One wait's memory (last order, failures in a row) and what each read of it means.

    :param order_id: the order followed.
    :param poll_interval: seconds between reads.
    :param end_time: epoch seconds after which the wait ends with ``timeout``; None
        leaves the deadline to the caller (a sensor's own ``timeout``).
    :param log: where status changes and the start and end of trouble are told.
    :param conn_id: the connection the order is read through, named in a refusal's fix.
    """

    def __init__(self, order_id: str, *, poll_interval: float, end_time: float | None,
                 log: Log, conn_id: str | None = None) -> None:
        self.order_id = order_id
        self.conn_id = conn_id
        self.poll_interval = poll_interval
        self.end_time = end_time
        self.log = log
        self.last: Order | None = None
        self.failures = 0
        self.last_error: TronEnergyError | None = None
        self._pause = poll_interval

    def read(self, order: Order) -> dict[str, Any] | None:
        """An answer: the event when the order has ended, else None (keep waiting)."""
        if self.failures:
            self.log.info("energy order %s: the service answers again after %d failed "
                          "reads", self.order_id, self.failures)
            self.failures, self.last_error = 0, None
        if self.last is None or order.status != self.last.status:
            self.log.info("%s", describe_order(order))
        self.last = order
        self._pause = self.poll_interval
        return order_event(self.order_id, order=order) if order.status.is_terminal() else None

    def failed(self, exc: TronEnergyError) -> dict[str, Any] | None:
        """A failed read: None when it is transient (keep waiting), else the ``error`` event
        (``"retryable": false`` for a refusal only a person fixes)."""
        if isinstance(exc, PERSON_FIXES):
            return self.refused(exc)
        if not isinstance(exc, TRANSIENT_ERRORS):
            return order_event(self.order_id, order=self.last, status="error",
                               message=f"could not read energy order {self.order_id}: {exc}")
        self.failures += 1
        self.last_error = exc
        if self.failures == 1:
            self.log.warning("energy order %s: the service did not answer (%s); will read it "
                             "again", self.order_id, exc)
        self._pause = self.poll_interval
        if isinstance(exc, RateLimitedError) and exc.retry_after:
            self._pause = max(self._pause, exc.retry_after)
        return None

    def refused(self, exc: TronEnergyError) -> dict[str, Any]:
        """The ``error`` event of a refusal only a person fixes: not retried, the fix named."""
        conn = f"connection {self.conn_id!r}" if self.conn_id else "the tronenergy connection"
        message = (f"could not read energy order {self.order_id}: the service refused "
                   f"{conn} ({exc}); every retry would be refused alike: fix the API key "
                   f"and API secret of {conn} (or this host's clock, for a timestamp "
                   "outside the window), then clear the task")
        self.log.warning("%s", message)
        return {**order_event(self.order_id, order=self.last, status="error",
                              message=message), "retryable": False}

    def next_step(self, answer: Order | TronEnergyError) -> dict[str, Any] | float:
        """After one read: the event that ends the wait, or seconds to sleep until the next."""
        event = self.failed(answer) if isinstance(answer, TronEnergyError) else self.read(answer)
        if event is not None:
            return event
        if self.end_time is None:
            return self._pause
        remaining = self.end_time - time.time()
        return min(self._pause, remaining) if remaining > 0 else self.timeout_event()

    def timeout_event(self) -> dict[str, Any]:
        """The ``timeout`` event: what was last seen, and why reads failed if they did."""
        deadline = datetime.fromtimestamp(self.end_time or time.time(), tz=timezone.utc)
        seen = f"still {self.last.status.value}" if self.last is not None else "never read"
        message = (f"energy order {self.order_id} did not end by "
                   f"{deadline.isoformat(timespec='seconds')} ({seen})")
        if self.last_error is not None:
            message += f"; the last poll failed: {self.last_error}"
        self.log.warning("%s", message)
        return order_event(self.order_id, order=self.last, status="timeout", message=message)


def wait_for_order(get_order: Callable[[str], Order], watch: OrderWatch) -> dict[str, Any]:
    """Read the order until the watch has an event (blocking; for tasks in a worker)."""
    while True:
        answer: Order | TronEnergyError
        try:
            answer = get_order(watch.order_id)
        except TronEnergyError as exc:
            answer = exc
        step = watch.next_step(answer)
        if isinstance(step, dict):
            return step
        time.sleep(step)


async def await_order(get_order: Callable[[str], Awaitable[Order]],
                      watch: OrderWatch) -> dict[str, Any]:
    """Read the order until the watch has an event (async; for the triggerer)."""
    while True:
        answer: Order | TronEnergyError
        try:
            answer = await get_order(watch.order_id)
        except TronEnergyError as exc:
            answer = exc
        step = watch.next_step(answer)
        if isinstance(step, dict):
            return step
        await asyncio.sleep(step)
