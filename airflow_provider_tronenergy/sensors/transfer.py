"""Wait for a transfer to arrive at an address, from the stored callbacks.

With ``proven=True`` (the default) a transfer is handed on only once the deposit ledger
credited it (the chain proved it), with the chain's figures; a disputed callback never
is: the rule of :class:`~airflow_provider_tronenergy.deposits.handover.Handover`, the same
for a poke and for the trigger.

"After the sensor started" is made durable: the store's last id when the
sensor first runs is kept in ``task_state_store`` (when Airflow has it), so a
rescheduled or retried sensor still counts transfers from the same point.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    AirflowSensorTimeout,
    BaseSensorOperator,
    PokeReturnValue,
    conf,
)

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.callbacks.access import checked_store_url, open_store
from airflow_provider_tronenergy.callbacks.events import threshold_micro
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.client.errors import ValidationError
from airflow_provider_tronenergy.deposits.handover import STREAM_BATCH, Handover, TransferFilter
from airflow_provider_tronenergy.templated import is_unset, optional_text
from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferTrigger
from tronenergy_protocol.numbers import parse_int

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

AFTER_ID_KEY = "tronenergy_transfer_after_id"


class TronEnergyTransferSensor(BaseSensorOperator):
    """Succeeds with the first stored transfer to ``address`` that matches.

    :param address: the watched (monitored) recipient address.
    :param token: only transfers of this token (e.g. ``USDT``); any when None.
    :param min_amount: only transfers of at least this amount (exact decimal text).
    :param from_address: only transfers from this sender.
    :param after_id: count transfers stored after this id; default: those stored
        after the sensor first ran.
    :param store_url: the callback store; default from ``TRONENERGY_CALLBACK_STORE``
        or ``[tronenergy] callback_store`` (a URL with a password is refused).
    :param deferrable: wait in the triggerer (with ``proven=False``, sharing one store
        poll with every other waiting sensor).
    :param proven: hand on a transfer only once the deposit ledger credited it (proven
        on chain by a sweep's proof or the scan), its payload the chain's figures
        (``"proven": true``, the filters applied to them); a disputed callback is never
        handed on. False hands on the callback's word at once (``"proven": false``).
        The ledger is the workers' (``TRONENERGY_DEPOSITS_DB`` / ``[tronenergy]
        deposits_ledger``), written by the DAG that credits deposits.
    """

    template_fields: Sequence[str] = ("address", "token", "min_amount", "from_address",
                                      "after_id")

    def __init__(self, *, address: str, token: str | None = None,
                 min_amount: str | None = None, from_address: str | None = None,
                 after_id: int | str | None = None, store_url: str | None = None,
                 poke_interval: timedelta | float = 5.0,
                 deferrable: bool = conf.getboolean("operators", "default_deferrable",
                                                    fallback=False),
                 proven: bool = True, **kwargs: Any) -> None:
        super().__init__(poke_interval=poke_interval, **kwargs)
        self.address = address
        self.token = token
        self.min_amount = min_amount
        self.from_address = from_address
        self.after_id = after_id
        self.store_url = checked_store_url(store_url)
        self.deferrable = deferrable
        self.proven = proven
        self._start_id: int | None = None

    def _validate(self) -> None:
        # Templates render a missing value as "None" (or ""): that is "no filter", the same
        # in poke mode (a store query) and in the trigger.
        self.token = optional_text(self.token)
        self.min_amount = optional_text(self.min_amount)
        self.from_address = optional_text(self.from_address)
        try:
            checks.address(self.address, "address")
            if self.from_address:
                checks.address(self.from_address, "from_address")
        except ValidationError as exc:
            raise AirflowFailException(str(exc)) from None
        if self.min_amount is not None:
            try:
                threshold_micro(self.min_amount)
            except (ArithmeticError, ValueError) as exc:
                raise AirflowFailException(
                    f"min_amount {self.min_amount!r} is not a non-negative decimal with at "
                    f"most 6 decimal places: {exc}") from None

    def _resolve_after_id(self, context: Context) -> int:
        if not is_unset(self.after_id):
            try:
                return parse_int(self.after_id, "after_id")
            except ValueError as exc:
                raise AirflowFailException(str(exc)) from None
        store_state = context.get("task_state_store")
        if store_state is not None:
            saved = store_state.get(AFTER_ID_KEY)
            if saved is not None:
                return parse_int(saved, AFTER_ID_KEY)
        with as_airflow():  # a store on one host's file where tasks run on several: failed
            start = open_store(self.store_url).max_id()
        if store_state is not None:
            store_state.set(AFTER_ID_KEY, start)
        return start

    def execute(self, context: Context) -> Any:
        self._validate()
        self._start_id = self._resolve_after_id(context)
        self.log.info("waiting for a transfer to %s stored after id %d", self.address,
                      self._start_id)
        if not self.deferrable:
            return super().execute(context)
        timeout = float(self.timeout)  # seconds; BaseSensorOperator keeps them as floats
        self.defer(
            trigger=TronEnergyTransferTrigger(
                address=self.address, after_id=self._start_id, token=self.token,
                min_amount=self.min_amount, from_address=self.from_address,
                store_url=self.store_url,
                poll_interval_seconds=float(self.poke_interval),
                end_time=time.time() + timeout, proven=self.proven,
            ),
            method_name="execute_complete",
        )

    def poke(self, context: Context) -> PokeReturnValue:
        with as_airflow():  # the store or the ledger refused (StoreNotShared): failed
            return self._poke()

    def _poke(self) -> PokeReturnValue:
        store = open_store(self.store_url)
        after = self._start_id or 0
        if not self.proven:
            found = store.list_transfers(self.address, after, 1, token=self.token,
                                         min_amount=self.min_amount,
                                         from_address=self.from_address)
            payload = found[0].to_payload() if found else None
        else:
            rows = store.list_transfers(self.address, after, STREAM_BATCH, token=self.token)
            handover = Handover(TransferFilter.of(self.address, self.token, self.min_amount,
                                                  self.from_address), proven=True)
            payload, settled = handover.first(rows)
            if settled:  # decided for good (disputed, or not matching on chain)
                self._start_id = rows[settled - 1].id
        if payload is None:
            return PokeReturnValue(is_done=False)
        self.log.info("transfer %s of %s %s arrived (%s)", payload["tx_hash"], payload["amount"],
                      payload["token"], "proven on chain" if payload["proven"] else "not proven")
        return PokeReturnValue(is_done=True, xcom_value=payload)

    def execute_complete(self, context: Context, event: dict[str, Any]) -> dict[str, Any]:
        if event.get("status") == "success":
            transfer: dict[str, Any] = event["transfer"]
            self.log.info("transfer %s of %s %s arrived", transfer["tx_hash"],
                          transfer["amount"], transfer["token"])
            return transfer
        message = event.get("message") or f"transfer wait ended: {event}"
        if event.get("status") == "timeout":
            raise AirflowSensorTimeout(message)  # like poke mode's timeout: no retry
        if event.get("retryable") is False:  # a store the triggerer may not open
            raise AirflowFailException(message)
        raise AirflowException(message)
