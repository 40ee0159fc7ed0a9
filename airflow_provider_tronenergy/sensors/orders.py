"""One sensor task for all the orders of a batch, instead of one mapped sensor per order.

Downstream payouts need every order delivered. Waiting for a batch's orders in one
task keeps the number of task instances independent of the number of orders, and
deferred, the orders share the connection's request budget in the triggerer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseSensorOperator,
    PokeReturnValue,
    conf,
)

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.client import TronEnergyError
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.orders.wait import OrderWatch
from airflow_provider_tronenergy.sensors.order import order_event_result
from airflow_provider_tronenergy.triggers.orders import TronEnergyOrdersTrigger

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context


def orders_event_result(event: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each order's dict, in the batch's order, when all succeeded; else the first failure.

    The failure is raised as :func:`~.order.order_event_result` raises it for one order:
    ``failed`` / ``cancelled`` without retries, ``timeout`` as a sensor timeout.
    """
    if not isinstance(event, dict) or not isinstance(event.get("orders"), dict):
        raise AirflowException(f"expected an energy orders event, got {event!r}")
    if event.get("status") != "success":
        failing = [e for e in event["orders"].values() if e.get("status") != "success"]
        if not failing:
            raise AirflowException(f"energy orders: {event.get('message')}")
        order_event_result({**failing[0], "message": event.get("message")})
    orders = event["orders"]
    missing = [o for o in event.get("order_ids", []) if o not in orders]
    if missing:
        raise AirflowException(f"success event without orders {missing}")
    return [order_event_result(orders[o]) for o in event["order_ids"]]


class TronEnergyOrdersSensor(BaseSensorOperator):
    """Wait until every order of a batch ended; succeed (returning the orders) if all succeeded.

    The first order that fails, is cancelled, or cannot be read ends the wait and
    fails the task (the batch cannot be sent as planned). An empty list succeeds at
    once: a batch the wallet's own energy covers buys nothing.

    :param order_ids: the orders (templated): a list of order ids, or of purchase results
        (dicts with ``order_id``, e.g. :class:`~..operators.batch_buy.TronEnergyBatchBuyOperator`'s
        XComArg); rendered as a native object when it is a template.
    :param tronenergy_conn_id: Airflow connection of type ``tronenergy`` (templated).
    :param poke_interval: seconds between reads of each order (the trigger's poll interval).
    :param timeout: seconds to wait in all before failing with ``AirflowSensorTimeout``.
    :param deferrable: wait in the triggerer (:class:`TronEnergyOrdersTrigger`), where the
        orders share the connection's ``order_poll_budget``.
    """

    template_fields: Sequence[str] = ("order_ids", "tronenergy_conn_id")
    ui_color = "#ffe9a8"

    def __init__(
        self,
        *,
        order_ids: Sequence[str | Mapping[str, Any]] | str,
        tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
        poke_interval: timedelta | float = 5.0,
        timeout: timedelta | float = 3600.0,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(poke_interval=poke_interval, timeout=timeout, **kwargs)
        if not self.poke_interval > 0:
            raise ValueError("TronEnergyOrdersSensor: poke_interval must be positive")
        self.order_ids = order_ids
        self.tronenergy_conn_id = tronenergy_conn_id
        self.deferrable = deferrable
        self._watches: dict[str, OrderWatch] = {}
        self._ended: dict[str, dict[str, Any]] = {}

    @cached_property
    def hook(self) -> TronEnergyHook:
        return TronEnergyHook(self.tronenergy_conn_id)

    def _ids(self) -> list[str]:
        """The order ids: given as ids, or as purchase results (dicts with ``order_id``)."""
        given = self.order_ids
        ids: list[str] = []
        if not isinstance(given, str) and isinstance(given, Sequence):
            for item in given:
                order_id = item.get("order_id") if isinstance(item, Mapping) else item
                if not isinstance(order_id, str) or not order_id.strip():
                    break
                ids.append(order_id)
            else:
                return list(dict.fromkeys(ids))
        raise AirflowFailException(
            f"order_ids is {given!r}, not a list of order ids or purchase results; if it "
            "comes from XCom, render it as a native object (render_template_as_native_obj="
            "True) or pass the XComArg itself")

    def execute(self, context: Context) -> Any:
        """Nothing to wait for, poke in this worker, or defer to the trigger at once."""
        ids = self._ids()
        if not ids:
            self.log.info("no energy orders to wait for")
            return []
        if not self.deferrable:
            # Each try starts afresh: one wait per order, kept across this try's pokes.
            self._watches = {order_id: OrderWatch(order_id, poll_interval=self.poke_interval,
                                                  end_time=None, log=self.log,
                                                  conn_id=self.tronenergy_conn_id)
                             for order_id in ids}
            self._ended = {}
            try:
                return super().execute(context)
            finally:
                self.hook.close()
        self.log.info("deferring: the triggerer follows %d energy orders every %g s each, "
                      "for at most %g s", len(ids), self.poke_interval, self.timeout)
        self.defer(trigger=TronEnergyOrdersTrigger(
            ids, self.tronenergy_conn_id, self.poke_interval,
            end_time=time.time() + self.timeout), method_name="execute_complete")

    def poke(self, context: Context) -> PokeReturnValue:
        """One read of each order still in flight; a failed order or an error raises."""
        with as_airflow():  # an id that names no connection: failed, not retried
            client = self.hook.get_conn()
        for order_id, watch in self._watches.items():
            if order_id in self._ended:
                continue
            try:
                event = watch.read(client.get_order(order_id))
            except TronEnergyError as exc:
                event = watch.failed(exc)
            if event is None:
                continue
            order_event_result(event)  # raises unless it succeeded
            self._ended[order_id] = event
        if len(self._ended) < len(self._watches):
            return PokeReturnValue(is_done=False)
        return PokeReturnValue(is_done=True, xcom_value=[
            order_event_result(self._ended[o]) for o in self._watches])

    def execute_complete(self, context: Context, event: dict[str, Any] | None = None) -> Any:
        """Resume from the trigger: every order's dict, else the first failure."""
        result = orders_event_result(event)
        self.log.info("%s", event["message"] if isinstance(event, dict) else result)
        return result
