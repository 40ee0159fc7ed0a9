"""A sensor that holds downstream tasks until an energy order has really ended.

A purchase answers at once with a ``pending`` order; the energy is delegated
seconds or minutes later, and the order may still fail or be cancelled. Tasks
that spend that energy (payouts, sweeps) should start only after ``success``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    AirflowSensorTimeout,
    AirflowSkipException,
    BaseSensorOperator,
    PokeReturnValue,
    conf,
)

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.client import TronEnergyError
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.orders.wait import OrderWatch
from airflow_provider_tronenergy.templated import is_unset
from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context


def order_event_result(event: dict[str, Any] | None) -> dict[str, Any]:
    """The order dict of a ``success`` event; any other outcome raised as the task's failure.

    ``failed`` / ``cancelled`` raise :class:`AirflowFailException` (retrying cannot change
    an ended order), ``timeout`` raises :class:`AirflowSensorTimeout`, ``error`` raises
    :class:`AirflowException` (a retry may help: the service unreachable for longer than
    the wait), or :class:`AirflowFailException` when it says ``"retryable": false`` (a
    connection that names nothing or is malformed in the triggerer, or whose key or secret
    the service refuses: a person fixes it).
    """
    if not isinstance(event, dict):
        raise AirflowException(f"expected an energy order event, got {event!r}")
    status = event.get("status")
    message = str(event.get("message") or f"energy order {event.get('order_id')}: {status}")
    if status == "success":
        order = event.get("order")
        if not isinstance(order, dict):
            raise AirflowException(f"success event without the order: {message}")
        return order
    if status in ("failed", "cancelled"):
        raise AirflowFailException(message)
    if status == "timeout":
        raise AirflowSensorTimeout(message)
    if status == "error":
        raise (AirflowFailException if event.get("retryable") is False
               else AirflowException)(message)
    raise AirflowException(f"unknown energy order event status {status!r}: {message}")


class TronEnergyOrderSensor(BaseSensorOperator):
    """Wait until an energy order ends; succeed (returning the order) only if it succeeded.

    ``failed`` or ``cancelled`` fails the task at once, without retries, and so does a
    refusal of the connection's key or secret (``orders.wait.PERSON_FIXES``); a transient
    API failure (no answer, 5xx, 429) is only logged, the next poke tries again.
    With ``deferrable=True`` the order is checked once and, if still in flight, the
    wait moves to the triggerer (:class:`TronEnergyOrderTrigger`) and frees the worker.

    :param order_id: the order to wait for (templated; usually a purchase task's XCom,
        e.g. ``"{{ ti.xcom_pull('buy')['order_id'] }}"``).
    :param tronenergy_conn_id: Airflow connection of type ``tronenergy`` (templated).
    :param poke_interval: seconds between checks (also the trigger's poll interval).
    :param timeout: seconds to wait in all before failing with ``AirflowSensorTimeout``;
        an order normally ends within seconds, so the default is one hour.
    :param deferrable: wait in the triggerer; default ``[operators] default_deferrable``.
    """

    template_fields: Sequence[str] = ("order_id", "tronenergy_conn_id")
    ui_color = "#ffe9a8"

    def __init__(
        self,
        *,
        order_id: str,
        tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
        poke_interval: timedelta | float = 5.0,
        timeout: timedelta | float = 3600.0,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(poke_interval=poke_interval, timeout=timeout, **kwargs)
        if not self.poke_interval > 0:
            raise ValueError("TronEnergyOrderSensor: poke_interval must be positive; 0 would poll "
                             "the service without pause")
        self.order_id = order_id
        self.tronenergy_conn_id = tronenergy_conn_id
        self.deferrable = deferrable

    @cached_property
    def hook(self) -> TronEnergyHook:
        return TronEnergyHook(self.tronenergy_conn_id)

    @cached_property
    def watch(self) -> OrderWatch:
        """The wait's memory across pokes; the hook's rules say what each read means."""
        return OrderWatch(self.order_id, poll_interval=self.poke_interval, end_time=None,
                          log=self.log, conn_id=self.tronenergy_conn_id)

    def execute(self, context: Context) -> Any:
        """Poke in this worker, or check once and defer to :class:`TronEnergyOrderTrigger`."""
        if not isinstance(self.order_id, str) or is_unset(self.order_id):
            raise AirflowFailException(
                f"order_id is {self.order_id!r}, not an order id; if it comes from XCom, check "
                "that the purchase task ran and returned an order_id")
        try:
            if not self.deferrable:
                return super().execute(context)
            event = self._read()
        finally:
            self.hook.close()
        if event is not None:
            return self._finish(event)
        self.log.info("deferring: the triggerer checks energy order %s every %g s, for at "
                      "most %g s", self.order_id, self.poke_interval, self.timeout)
        self.defer(
            trigger=TronEnergyOrderTrigger(
                order_id=self.order_id,
                tronenergy_conn_id=self.tronenergy_conn_id,
                poll_interval_seconds=self.poke_interval,
                end_time=time.time() + self.timeout,
            ),
            method_name="execute_complete",
        )

    def poke(self, context: Context) -> PokeReturnValue:
        """One read: done with the order on success; a failed order or an error raises."""
        event = self._read()
        if event is None:
            return PokeReturnValue(is_done=False)
        return PokeReturnValue(is_done=True, xcom_value=order_event_result(event))

    def execute_complete(self, context: Context, event: dict[str, Any] | None = None) -> Any:
        """Resume from the trigger: the order dict on success, else the matching failure."""
        if isinstance(event, dict) and event.get("order_id") not in (None, self.order_id):
            raise AirflowException(f"event for order {event.get('order_id')} reached the "
                                   f"sensor of order {self.order_id}")
        result = order_event_result(event)
        self.log.info("%s", event["message"] if isinstance(event, dict) else result)
        return result

    # -- helpers ------------------------------------------------------------------------

    def _read(self) -> dict[str, Any] | None:
        """The outcome event once the order has ended (or cannot be read), else None."""
        with as_airflow():  # an id that names no connection: failed, not retried
            client = self.hook.get_conn()
        try:
            return self.watch.read(client.get_order(self.order_id))
        except TronEnergyError as exc:
            return self.watch.failed(exc)

    def _finish(self, event: dict[str, Any]) -> dict[str, Any]:
        """Outcome of an order found ended before deferring, honouring soft_fail/never_fail."""
        try:
            return order_event_result(event)
        except AirflowException as exc:
            if self.soft_fail or self.never_fail:
                raise AirflowSkipException(f"skipped (soft_fail/never_fail): {exc}") from exc
            raise
