"""Operators that register and unregister addresses for transfer callbacks.

Both are idempotent, so a scheduled DAG can declare the set of watched
addresses and re-run safely: "already monitored" and "not monitored" are the
states the task wanted.

Adding records, in the deposit ledger and before the service is asked, when each address
was registered (``DepositLedger.register``): the solidified head of ``tron_node_conn_id``,
or this worker's clock without one. The deposit scan starts there, so a deposit whose
callbacks were all lost before the scan's first run is still credited
(docs/deposit-scan.md). Recorded first: a registration the service took is never without
its row. Removing leaves the row (docs/decisions.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.client import ConflictError, NotFoundError
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.fanout import RateGate
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.operators.batch import (
    Problems,
    TronEnergyAddressBatchOperator,
)
from airflow_provider_tronenergy.templated import as_flag, optional_text

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context


def _tokens(value: Any) -> list[str] | None:
    """``None`` or an empty list leave the service's default; text is refused, not split."""
    return None if value is None or (isinstance(value, (list, tuple)) and not value) \
        else checks.tokens(value)


class TronEnergyAddMonitorOperator(TronEnergyAddressBatchOperator):
    """Watch one address or several for incoming transfers of ``tokens``.

    :param addresses: TRON address(es) to watch.
    :param webhook_url: where callbacks go; may be omitted when the API key has one.
    :param label: free text shown in the service's console.
    :param tokens: tokens to watch (the service's default is ``["TRX"]``).
    :param fail_if_exists: fail instead of succeeding when already monitored.
    :param record_registration: record in the deposit ledger when each address was
        registered, where the deposit scan reads it from (default); ``False`` for
        addresses that are no deposit addresses (the ledger is not opened).
    :param tron_node_conn_id: the ``tron_node`` connection whose solidified head is the
        registration's block; None (default): the worker's clock, which the scan turns
        into a block (10 minutes earlier, for a clock ahead of the chain); templated.
    """

    template_fields: Sequence[str] = ("addresses", "tronenergy_conn_id", "webhook_url",
                                      "monitor_label", "tokens", "record_registration",
                                      "tron_node_conn_id")

    def __init__(self, *, webhook_url: str | None = None, label: str | None = None,
                 tokens: Sequence[str] | None = None, fail_if_exists: bool = False,
                 record_registration: bool | str = True,
                 tron_node_conn_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.webhook_url = webhook_url
        self.monitor_label = label  # BaseOperator.label is taken
        self.tokens = tokens
        self.fail_if_exists = fail_if_exists
        self.record_registration = record_registration
        self.tron_node_conn_id = tron_node_conn_id

    def execute(self, context: Context) -> dict[str, Any] | list[dict[str, Any]]:
        problems = Problems()
        webhook_url = problems.read(lambda: checks.webhook_url(self.webhook_url or None), None)
        label = problems.read(lambda: checks.label(self.monitor_label), None)
        tokens = problems.read(lambda: _tokens(self.tokens), None)
        fail_if_exists = problems.read(
            lambda: as_flag(self.fail_if_exists, "fail_if_exists"), True)
        record = problems.read(
            lambda: as_flag(self.record_registration, "record_registration"), True)
        addresses, single = self.prepare(problems)
        client = self.client()
        if record:
            self._record(addresses, context)
        gate = RateGate()

        def add(address: str) -> dict[str, Any]:
            try:
                registration = gate.call(lambda: client.add_monitored_address(
                    address, webhook_url=webhook_url, label=label, tokens=tokens))
            except ConflictError:
                if fail_if_exists:
                    raise
                return {"address": address, "status": "active", "added": False}
            return {**registration.to_dict(), "added": True}

        results, failures = self.per_address(addresses, add, "registered")
        self.log.info("watching %d addresses (%d newly added)",
                      sum("error" not in r for r in results),
                      sum(bool(r.get("added")) for r in results))
        return self.finish(results, failures, single, "registered")

    def _record(self, addresses: list[str], context: Context) -> None:
        """Each address's registration in the deposit ledger, before the service is asked."""
        from airflow_provider_tronenergy.deposits.ledger import DepositLedger

        block = at_ms = None
        conn_id = optional_text(self.tron_node_conn_id)  # a template renders None "None"
        with as_airflow():
            if conn_id is not None:
                hook = TronNodeHook(conn_id)
                try:
                    block = hook.get_solid_block().number
                finally:
                    hook.close()
            else:
                at_ms = time.time_ns() // 1_000_000
            with DepositLedger() as ledger:
                ledger.register(addresses, block=block, at_ms=at_ms,
                                registered_by=context["run_id"])
        self.log.info("registration of %d address(es) recorded in the deposit ledger at %s",
                      len(addresses), f"block {block}" if block is not None else
                      f"{at_ms} ms (the worker's clock; the scan reads it as a block)")


class TronEnergyRemoveMonitorOperator(TronEnergyAddressBatchOperator):
    """Stop watching one address or several; an address not monitored is already done."""

    def execute(self, context: Context) -> dict[str, Any] | list[dict[str, Any]]:
        addresses, single = self.prepare()
        client = self.client()
        gate = RateGate()

        def remove(address: str) -> dict[str, Any]:
            try:
                gate.call(lambda: client.remove_monitored_address(address))
            except NotFoundError:
                return {"address": address, "removed": False}
            return {"address": address, "removed": True}

        results, failures = self.per_address(addresses, remove, "removed")
        return self.finish(results, failures, single, "removed")
