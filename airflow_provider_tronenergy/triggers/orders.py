"""Wait for every order of a batch in one trigger: one task for all orders, not one each.

A 10,000-recipient payout is a hundred or more orders. One sensor task per order
costs Airflow's per-task overhead a hundred times over; this trigger waits for all
of them in the triggerer, each order with the hook's one wait
(:meth:`~airflow_provider_tronenergy.hooks.tronenergy.TronEnergyHook.await_order`),
so they share the connection's :class:`~airflow_provider_tronenergy.orders.poll.OrderPoller`
(one client, one request budget, one 429 pause).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Sequence
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.triggers.order import failure_event


def orders_event(status: str, order_ids: Sequence[str], events: dict[str, dict[str, Any]],
                 message: str) -> dict[str, Any]:
    """The JSON-safe payload: ``{"status", "order_ids", "orders", "message"}``.

    ``status`` is ``success`` (every order succeeded) or the status of the first order
    that did not (``failed``, ``cancelled``, ``timeout``, ``error``); ``orders`` maps
    each order id to its own event (:func:`~..orders.wait.order_event`), for the
    orders that ended before the batch's wait did.
    """
    return {"status": status, "order_ids": list(order_ids), "orders": events,
            "message": message}


class TronEnergyOrdersTrigger(BaseTrigger):
    """Follow many orders of one connection; one event when all succeeded or one did not.

    A failed, cancelled, timed-out or unreadable order ends the wait at once (the
    batch cannot be sent as planned, so there is no point in waiting for the rest);
    its event is the batch's message. Only identifiers travel to the triggerer.

    :param order_ids: the orders to follow (duplicates are followed once).
    :param tronenergy_conn_id: Airflow connection of type ``tronenergy``.
    :param poll_interval_seconds: seconds between reads of each order.
    :param end_time: epoch seconds after which the wait ends with ``timeout``.
    """

    def __init__(self, order_ids: Sequence[str],
                 tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
                 poll_interval_seconds: float = 5.0, *, end_time: float) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        if isinstance(order_ids, str) or not all(
                isinstance(o, str) and o.strip() for o in order_ids):
            raise ValueError("TronEnergyOrdersTrigger: order_ids must be a list of non-empty "
                             "order id strings")
        if not poll_interval_seconds > 0 or not math.isfinite(poll_interval_seconds):
            raise ValueError("TronEnergyOrdersTrigger: poll_interval_seconds must be a positive "
                             "number of seconds")
        if not math.isfinite(end_time):
            raise ValueError("TronEnergyOrdersTrigger: end_time must be epoch seconds")
        self.order_ids = list(dict.fromkeys(order_ids))
        self.tronenergy_conn_id = tronenergy_conn_id
        self.poll_interval_seconds = float(poll_interval_seconds)
        self.end_time = float(end_time)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Identifiers only: the connection (and so every secret) is read in the triggerer."""
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"order_ids": self.order_ids, "tronenergy_conn_id": self.tronenergy_conn_id,
                 "poll_interval_seconds": self.poll_interval_seconds, "end_time": self.end_time})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Wait for each order concurrently; fire once, at the first that did not succeed."""
        yield TriggerEvent(await self._wait())  # type: ignore[no-untyped-call]

    async def _wait(self) -> dict[str, Any]:
        hook = TronEnergyHook(self.tronenergy_conn_id)
        waits = {asyncio.ensure_future(self._one(hook, order_id)): order_id
                 for order_id in self.order_ids}
        done: dict[str, dict[str, Any]] = {}
        try:
            for finished in asyncio.as_completed(waits):
                event = await finished
                done[event["order_id"]] = event
                if event["status"] != "success":
                    return orders_event(
                        event["status"], self.order_ids, done,
                        f"{event['message']} ({len(done) - 1} of {len(self.order_ids)} orders "
                        "had succeeded; the batch's wait ends here)")
        finally:
            for wait in waits:
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        self.log.info("all %d energy orders succeeded", len(self.order_ids))
        return orders_event("success", self.order_ids, done,
                            f"all {len(self.order_ids)} energy orders succeeded")

    async def _one(self, hook: TronEnergyHook, order_id: str) -> dict[str, Any]:
        try:
            return await hook.await_order(order_id, poll_interval=self.poll_interval_seconds,
                                          end_time=self.end_time, log=self.log)
        except Exception as exc:  # any failure must reach the task as an event, not vanish
            self.log.exception("could not follow energy order %s", order_id)
            return failure_event(order_id, exc)
