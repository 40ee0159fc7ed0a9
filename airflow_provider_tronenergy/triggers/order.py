"""Wait for an energy order to end, in the triggerer instead of a worker slot.

A purchase answers at once with a ``pending`` order; delegation follows seconds
(or, when the chain is busy, minutes) later. :class:`TronEnergyOrderTrigger` waits
with the hook's :meth:`~airflow_provider_tronenergy.hooks.tronenergy.TronEnergyHook.await_order`,
the same rules a task or a sensor that waits in its worker follows, and fires
exactly one event of :func:`~airflow_provider_tronenergy.orders.wait.order_event`'s
shape.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.orders import wait as order_wait


def failure_event(order_id: str, exc: Exception) -> dict[str, Any]:
    """The ``error`` event of a wait that raised; ``"retryable": false`` for a
    ``NotRetryable`` (a connection that names nothing in the triggerer, or is malformed),
    which the task fails on once (a trigger that raised would be retried)."""
    event = order_wait.order_event(
        order_id, status="error",
        message=f"could not follow energy order {order_id}: {type(exc).__name__}: {exc}")
    return {**event, "retryable": False} if isinstance(exc, NotRetryable) else event


class TronEnergyOrderTrigger(BaseTrigger):
    """Poll one energy order until it ends (or ``end_time`` passes); fire one event.

    Only identifiers travel to the triggerer: the connection is read there, so no
    secret is ever stored with the trigger. Transient failures (no answer, 5xx, 429)
    are logged and polling goes on; an answer that will not change on its own
    (bad credentials, unknown order) ends the wait with an ``error`` event, and so does a
    connection that names nothing or is malformed, one the task fails on without a retry.

    :param order_id: the order to follow.
    :param tronenergy_conn_id: Airflow connection of type ``tronenergy``.
    :param poll_interval_seconds: seconds between polls (a 429's Retry-After lengthens one pause).
    :param end_time: epoch seconds after which a ``timeout`` event is fired; the order
        is always read at least once, so one that ended already is never reported late.
    """

    def __init__(
        self,
        order_id: str,
        tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
        poll_interval_seconds: float = 5.0,
        *,
        end_time: float,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        if not isinstance(order_id, str) or not order_id.strip():
            raise ValueError("TronEnergyOrderTrigger: order_id must be a non-empty string")
        if not poll_interval_seconds > 0 or not math.isfinite(poll_interval_seconds):
            raise ValueError("TronEnergyOrderTrigger: poll_interval_seconds must be a positive "
                             "number")
        if not math.isfinite(end_time):
            raise ValueError("TronEnergyOrderTrigger: end_time must be epoch seconds")
        self.order_id = order_id
        self.tronenergy_conn_id = tronenergy_conn_id
        self.poll_interval_seconds = float(poll_interval_seconds)
        self.end_time = float(end_time)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Identifiers only: the connection (and so every secret) is read in the triggerer."""
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "order_id": self.order_id,
                "tronenergy_conn_id": self.tronenergy_conn_id,
                "poll_interval_seconds": self.poll_interval_seconds,
                "end_time": self.end_time,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Wait with the hook's rules; any failure reaches the task as an ``error`` event."""
        try:
            payload = await TronEnergyHook(self.tronenergy_conn_id).await_order(
                self.order_id, poll_interval=self.poll_interval_seconds, end_time=self.end_time,
                log=self.log)
        except Exception as exc:  # any failure must reach the task as an event, not vanish
            self.log.exception("could not follow energy order %s", self.order_id)
            payload = failure_event(self.order_id, exc)
        yield TriggerEvent(payload)  # type: ignore[no-untyped-call]
