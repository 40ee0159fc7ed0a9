"""The purchase operators' shared part: the task's values in, one purchase, the wait.

The purchase itself (journal, quote, guards, place, record) is
:class:`~airflow_provider_tronenergy.purchase.run.Purchase`; this operator reads
and checks the task's values once, builds it, calls it, and does what only
Airflow does: wait for the order (in a worker or the triggerer) and ask a person
when an outcome is unknown (:mod:`~airflow_provider_tronenergy.hitl.purchase`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseOperator,
    conf,
)

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.client import OrderStatus, ValidationError
from airflow_provider_tronenergy.hitl.purchase import Asker
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.links.explorer import TronEnergyDelegationLink, publish
from airflow_provider_tronenergy.money.guard import max_order, max_spend
from airflow_provider_tronenergy.purchase import (
    ON_AMBIGUOUS,
    Mode,
    Purchase,
    Settings,
    UnknownOutcome,
    journal_for,
    refused,
)
from airflow_provider_tronenergy.purchase_journal import (
    default_identity,
    explicit_identity,
    task_scope,
)
from airflow_provider_tronenergy.templated import as_flag, is_unset, money_given

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

class TronEnergyPurchaseOperator(BaseOperator):
    """Shared life of the four purchase modes: validate, journal, quote, guard, buy, wait.

    :param tronenergy_conn_id: connection of type ``tronenergy``.
    :param rent_time: hours the energy is rented for (purchases accept 0.25, 1, 24).
    :param max_order_trx: refuse, before buying, when this purchase's quote is higher.
    :param max_spend_trx: refuse, before buying, when the purchase's quote and what its
        ``purchase_key`` already spent (every try and run, as the purchase journal holds
        it; an unknown outcome counted at its quote) come to more. None (the default): no
        limit beyond one purchase at a time, within the balance.
    :param check_balance: refuse, before buying, when the available balance is short.
    :param dry_run: quote and plan only; nothing is bought.
    :param purchase_key: names the purchase across runs (templated): a later run with
        the same key reuses a still-valid order instead of buying. Default: derived
        from DAG, task, map index, mode and parameters (never the run), which stops
        a new run only while an earlier attempt's outcome is unknown.
    :param reuse_min_validity_seconds: seconds of rental an order must have left to be reused
        instead of buying anew.
    :param wait_for_completion: wait until the order is terminal (success, failed,
        cancelled); a failed or cancelled order fails the task.
    :param deferrable: wait in the triggerer instead of a worker slot.
    :param poll_interval_seconds: seconds between order polls while waiting.
    :param wait_timeout_seconds: seconds to wait for a terminal order before failing.
    :param on_ambiguous: what an attempt does when it, or an earlier one, may or may not
        have bought: ``"fail"`` (default: stop and name the resolve command), ``"ask"``
        (a Required Action in Airflow: placed with its order id, not placed, or abort;
        the answer goes to the journal) or ``"rebuy"``; templated (checked when the DAG
        is parsed unless it is a template).
    :param ask_timeout_seconds: with ``on_ambiguous="ask"``, seconds to wait for the answer
        before the task fails (nothing bought, still unknown); None: no limit.
    """

    mode: ClassVar[str] = ""
    template_fields: Sequence[str] = ("rent_time", "max_order_trx", "max_spend_trx",
                                      "dry_run_mode",
                                      "purchase_key", "on_ambiguous", "tronenergy_conn_id")
    ui_color = "#f9e79f"
    operator_extra_links = (TronEnergyDelegationLink(),)

    def __init__(
        self,
        *,
        tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
        rent_time: Decimal | float | int | str = 1,
        max_order_trx: Decimal | int | str | None = None,
        max_spend_trx: Decimal | int | str | None = None,
        check_balance: bool = True,
        dry_run: bool | str = False,
        purchase_key: str | None = None,
        reuse_min_validity_seconds: float = 300.0,
        wait_for_completion: bool = False,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        poll_interval_seconds: float = 5.0,
        wait_timeout_seconds: float = 3600.0,
        on_ambiguous: str = "fail",
        ask_timeout_seconds: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        money_given(max_order_trx=max_order_trx, max_spend_trx=max_spend_trx)
        if on_ambiguous not in ON_AMBIGUOUS and "{{" not in str(on_ambiguous):
            raise ValueError(f"on_ambiguous must be one of {ON_AMBIGUOUS}, not {on_ambiguous!r}")
        self.tronenergy_conn_id = tronenergy_conn_id
        self.rent_time = rent_time
        self.max_order_trx = max_order_trx
        self.max_spend_trx = max_spend_trx
        self.check_balance = check_balance
        # BaseOperator.dry_run() is a method; the flag lives beside it.
        self.dry_run_mode = dry_run
        self.purchase_key = purchase_key
        self.reuse_min_validity_seconds = reuse_min_validity_seconds
        self.wait_for_completion = wait_for_completion
        self.deferrable = deferrable
        self.poll_interval_seconds = poll_interval_seconds
        self.wait_timeout_seconds = wait_timeout_seconds
        self.on_ambiguous = on_ambiguous
        self.ask_timeout_seconds = ask_timeout_seconds

    # -- what each mode defines ------------------------------------------------------------

    def order(self) -> Mode:
        """The mode's request builder, from the task's (rendered) values."""
        raise NotImplementedError

    @property
    def target(self) -> str:
        """The address that receives the energy."""
        return self.order().target

    # -- the purchase --------------------------------------------------------------------

    @cached_property
    def hook(self) -> TronEnergyHook:
        """One hook (one client, one connection pool) for the whole task."""
        return TronEnergyHook(tronenergy_conn_id=self.tronenergy_conn_id)

    def execute(self, context: Context) -> dict[str, Any]:
        """Buy, or reuse what an earlier attempt bought, or stop when nobody knows."""
        try:
            with as_airflow():
                return self._execute(context)
        finally:
            self.hook.close()

    def _execute(self, context: Context) -> dict[str, Any]:
        client = self.hook.get_conn()
        order = self.order()
        with refused(self.mode):
            call = order.call(client.endpoints)  # the values checked here, once
            request = order.request(call)
            order_limit, spend_limit = max_order(self.max_order_trx), max_spend(self.max_spend_trx)
            identity, explicit = self._identity(context, request)
            dry_run = as_flag(self.dry_run_mode, "dry_run")
            if self.on_ambiguous not in ON_AMBIGUOUS:  # templated: known only now
                raise ValidationError("on_ambiguous", f"must be one of {ON_AMBIGUOUS}, not "
                                      f"{self.on_ambiguous!r}")
        settings = Settings(max_order=order_limit, max_spend=spend_limit,
                            check_balance=self.check_balance,
                            dry_run=dry_run, on_ambiguous=self.on_ambiguous,
                            reuse_min_validity=self.reuse_min_validity_seconds)
        purchase = Purchase(order, call, client, journal_for(self.mode), settings,
                            identity=identity, explicit=explicit,
                            scope=task_scope(context, self.task_id), log=self.log,
                            ask=lambda unknown: self._ask(context, unknown))
        result = purchase.run()
        if result.get("dry_run"):
            return result
        self._publish(context, result)  # before the wait: a failed wait keeps the link
        return self._finish(result, context)

    def _publish(self, context: Context, result: dict[str, Any]) -> None:
        """The order's delegation for the task's link (:mod:`~.links`)."""
        publish(context, self.hook.get_explorer, "delegation", count=1,
                txids=[result.get("tx_hash") or ""],
                addresses=[result.get("target_address") or self.target], log=self.log)

    def _identity(self, context: Context, request: dict[str, Any]) -> tuple[str, bool]:
        if not is_unset(self.purchase_key):
            return explicit_identity(self.purchase_key), True
        ti = context["ti"]
        return default_identity(ti.dag_id, ti.task_id, _map_index(ti), self.mode, request), False

    # -- asking a person -----------------------------------------------------------------

    def _asker(self) -> Asker:
        return Asker(self.tronenergy_conn_id, ask_timeout(self.ask_timeout_seconds), self.log,
                     self.defer, lambda: journal_for(self.mode))

    def _ask(self, context: Context, unknown: UnknownOutcome) -> NoReturn:
        """Write the request for ``unknown`` and wait for its answer (``execute_answer``)."""
        self._asker().ask(context, unknown)

    # -- waiting ---------------------------------------------------------------------------

    def _finish(self, result: dict[str, Any], context: Context) -> dict[str, Any]:
        if not self.wait_for_completion:
            return result
        if self.deferrable:
            from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger

            self.defer(
                trigger=TronEnergyOrderTrigger(
                    order_id=result["order_id"],
                    tronenergy_conn_id=self.tronenergy_conn_id,
                    poll_interval_seconds=self.poll_interval_seconds,
                    end_time=time.time() + self.wait_timeout_seconds,
                ),
                method_name="execute_complete",
                kwargs={"result": result},
            )
        event = self.hook.wait_for_order(result["order_id"],
                                         poll_interval=self.poll_interval_seconds,
                                         timeout=self.wait_timeout_seconds, log=self.log)
        return self._completed(result, event, context)

    def _completed(self, result: dict[str, Any], event: dict[str, Any],
                   context: Context) -> dict[str, Any]:
        """The result of an ended wait: a delivered order, else the matching failure."""
        status = event.get("status")
        if status in ("failed", "cancelled"):
            raise AirflowFailException(
                f"order {result['order_id']} ended {status}: the energy for "
                f"{result['target_address']} was not delivered")
        if status != OrderStatus.SUCCESS.value:  # "retryable": false: a person fixes it
            raise (AirflowFailException if event.get("retryable") is False
                   else AirflowException)(f"waiting for order {result['order_id']} ended "
                                          f"with {status}: {event.get('message')}")
        order = event.get("order") or {}
        self.log.info("order %s succeeded: delegation tx %s", result["order_id"],
                      order.get("tx_hash"))
        done = {**result, "status": status, "tx_hash": order.get("tx_hash", "")}
        self._publish(context, done)  # now with the delegation's transaction
        return done

    def execute_answer(self, context: Context, event: dict[str, Any], identity: str,
                       attempt: int) -> dict[str, Any]:
        """Back from a person's answer (``on_ambiguous="ask"``): record it, then go on."""
        try:
            with as_airflow():
                self._asker().record_answer(event, identity, attempt)
                return self._execute(context)
        finally:
            self.hook.close()

    def execute_complete(self, context: Context, event: dict[str, Any],
                         result: dict[str, Any] | None = None) -> dict[str, Any]:
        """Back from the triggerer: the order's terminal status decides the task."""
        if result is None:  # some runners drop defer kwargs: rebuild from the event
            order = event.get("order") or {}
            result = {"mode": self.mode, "order_id": event.get("order_id"),
                      "target_address": order.get("target_address", self.target),
                      "cost": order.get("cost"), "energy_amount": order.get("energy_amount")}
        return self._completed(result, event, context)


def ask_timeout(seconds: float | None) -> timedelta | None:
    """An ``ask_timeout_seconds`` as the Required Action's timeout (None: no limit)."""
    return None if seconds is None else timedelta(seconds=seconds)


def _map_index(ti: Any) -> int:
    index = getattr(ti, "map_index", -1)
    return int(index) if index is not None else -1


__all__ = ["TronEnergyPurchaseOperator"]
