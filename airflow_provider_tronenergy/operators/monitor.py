"""Operators that register and unregister addresses for transfer callbacks.

Both are idempotent, so a scheduled DAG can declare the set of watched
addresses and re-run safely: "already monitored" and "not monitored" are the
states the task wanted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow_provider_tronenergy.client import ConflictError, NotFoundError
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.fanout import RateGate
from airflow_provider_tronenergy.operators.batch import (
    Problems,
    TronEnergyAddressBatchOperator,
)
from airflow_provider_tronenergy.templated import as_flag

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
    """

    template_fields: Sequence[str] = ("addresses", "webhook_url", "monitor_label", "tokens")

    def __init__(self, *, webhook_url: str | None = None, label: str | None = None,
                 tokens: Sequence[str] | None = None, fail_if_exists: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.webhook_url = webhook_url
        self.monitor_label = label  # BaseOperator.label is taken
        self.tokens = tokens
        self.fail_if_exists = fail_if_exists

    def execute(self, context: Context) -> dict[str, Any] | list[dict[str, Any]]:
        problems = Problems()
        webhook_url = problems.read(lambda: checks.webhook_url(self.webhook_url or None), None)
        label = problems.read(lambda: checks.label(self.monitor_label), None)
        tokens = problems.read(lambda: _tokens(self.tokens), None)
        fail_if_exists = problems.read(
            lambda: as_flag(self.fail_if_exists, "fail_if_exists"), True)
        addresses, single = self.prepare(problems)
        client = self.client()
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
