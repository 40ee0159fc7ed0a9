"""Wait for an energy order to end, in the triggerer instead of a worker slot.

A purchase answers at once with a ``pending`` order; delegation follows seconds
(or, when the chain is busy, minutes) later. :class:`EnergyOrderTrigger` polls
the order with the async client until it is terminal and fires exactly one
event, built by :func:`order_event` so that sensors and operators which check
the order themselves report it in the very same shape.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any, Literal

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_tronenergy.client import (
    Order,
    OrderStatus,
    RateLimitedError,
    ServerError,
    TransportError,
    TronEnergyError,
)
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook

EventStatus = Literal["success", "failed", "cancelled", "timeout", "error"]
EVENT_STATUSES: tuple[EventStatus, ...] = ("success", "failed", "cancelled", "timeout", "error")

# Failures that say nothing about the order: polling simply goes on.
TRANSIENT_ERRORS: tuple[type[TronEnergyError], ...] = (TransportError, ServerError,
                                                       RateLimitedError)

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


class EnergyOrderTrigger(BaseTrigger):
    """Poll one energy order until it ends (or ``end_time`` passes); fire one event.

    Only identifiers travel to the triggerer: the connection is read there, so no
    secret is ever stored with the trigger. Transient failures (no answer, 5xx, 429)
    are logged and polling goes on; an answer that will not change on its own
    (bad credentials, unknown order) ends the wait with an ``error`` event.

    :param order_id: the order to follow.
    :param tronenergy_conn_id: Airflow connection of type ``tronenergy``.
    :param poll_interval: seconds between polls (a 429's Retry-After lengthens one pause).
    :param end_time: epoch seconds after which a ``timeout`` event is fired; the order
        is always read at least once, so one that ended already is never reported late.
    """

    def __init__(
        self,
        order_id: str,
        tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
        poll_interval: float = 5.0,
        *,
        end_time: float,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        if not isinstance(order_id, str) or not order_id.strip():
            raise ValueError("EnergyOrderTrigger: order_id must be a non-empty string")
        if not poll_interval > 0 or not math.isfinite(poll_interval):
            raise ValueError("EnergyOrderTrigger: poll_interval must be a positive number "
                             "of seconds")
        if not math.isfinite(end_time):
            raise ValueError("EnergyOrderTrigger: end_time must be epoch seconds")
        self.order_id = order_id
        self.tronenergy_conn_id = tronenergy_conn_id
        self.poll_interval = float(poll_interval)
        self.end_time = float(end_time)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "order_id": self.order_id,
                "tronenergy_conn_id": self.tronenergy_conn_id,
                "poll_interval": self.poll_interval,
                "end_time": self.end_time,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        try:
            payload = await self._wait()
        except Exception as exc:  # any failure must reach the task as an event, not vanish
            self.log.exception("could not follow energy order %s", self.order_id)
            payload = order_event(
                self.order_id, status="error",
                message=f"could not follow energy order {self.order_id}: "
                        f"{type(exc).__name__}: {exc}",
            )
        yield TriggerEvent(payload)  # type: ignore[no-untyped-call]

    async def _wait(self) -> dict[str, Any]:
        """Poll until the order ends; the client is closed before the event is fired."""
        hook = TronEnergyHook(self.tronenergy_conn_id)
        last: Order | None = None
        failures = 0
        last_error: TronEnergyError | None = None
        async with await hook.aget_client() as client:
            while True:
                pause = self.poll_interval
                try:
                    order = await client.get_order(self.order_id)
                except TRANSIENT_ERRORS as exc:
                    failures += 1
                    last_error = exc
                    if failures == 1:
                        self.log.warning("energy order %s: the service did not answer (%s); "
                                         "still polling", self.order_id, exc)
                    if isinstance(exc, RateLimitedError) and exc.retry_after:
                        pause = max(pause, exc.retry_after)
                except TronEnergyError as exc:
                    return order_event(
                        self.order_id, order=last, status="error",
                        message=f"could not read energy order {self.order_id}: {exc}",
                    )
                else:
                    if failures:
                        self.log.info("energy order %s: the service answers again after %d "
                                      "failed polls", self.order_id, failures)
                        failures, last_error = 0, None
                    if last is None or order.status != last.status:
                        self.log.info("%s", describe_order(order))
                    last = order
                    if order.status.is_terminal():
                        return order_event(self.order_id, order=order)
                remaining = self.end_time - time.time()
                if remaining <= 0:
                    return self._timeout_event(last, last_error)
                await asyncio.sleep(min(pause, remaining))

    def _timeout_event(self, last: Order | None, error: TronEnergyError | None) -> dict[str, Any]:
        deadline = datetime.fromtimestamp(self.end_time, tz=timezone.utc).isoformat(
            timespec="seconds")
        seen = f"still {last.status.value}" if last is not None else "never read"
        message = f"energy order {self.order_id} did not end by {deadline} ({seen})"
        if error is not None:
            message += f"; the last poll failed: {error}"
        self.log.warning("%s", message)
        return order_event(self.order_id, order=last, status="timeout", message=message)
