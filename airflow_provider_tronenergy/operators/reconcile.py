"""Compare what the service says it sent with what the callback store holds.

The service has no backfill: a callback that never reached the receiver (it
was down through every retry, or answered non-2xx) is lost unless someone
notices. This operator notices, per monitored address.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import AirflowException, BaseOperator

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.callbacks.access import checked_store_url, open_store
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.templated import optional_text

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context


class TronEnergyReconcileCallbacksOperator(BaseOperator):
    """Report, per monitored address, callbacks the service sent that the store lacks.

    :param status: which monitored addresses to reconcile (``active``, ``inactive``
        or None for all).
    :param fail_on_gap: fail the task when any address has missing callbacks.
    :param store_url: the callback store (default as for the receiver).

    Returns ``{"addresses": [...], "missing_total": n}``; each entry has the
    service's ``total_callbacks``, the ``stored`` count and ``missing``.
    """

    template_fields: Sequence[str] = ("status", "tronenergy_conn_id")

    def __init__(self, *, tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
                 status: str | None = None, fail_on_gap: bool = True,
                 store_url: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tronenergy_conn_id = tronenergy_conn_id
        self.status = status
        self.fail_on_gap = fail_on_gap
        self.store_url = checked_store_url(store_url)

    def execute(self, context: Context) -> dict[str, Any]:
        hook = TronEnergyHook(self.tronenergy_conn_id)
        try:
            with as_airflow():  # an id that names no connection: failed, not retried
                client = hook.get_conn()
            # A template renders a missing status as "None": that means all addresses.
            monitored = list(client.iter_monitored_addresses(
                status=optional_text(self.status)))
        finally:
            hook.close()
        with as_airflow():  # a store on one host's file where tasks run on several: failed
            store = open_store(self.store_url)
        stored = store.count_by_recipient([m.address for m in monitored])
        rows: list[dict[str, Any]] = []
        for item in monitored:
            have = int(stored.get(item.address, 0))
            missing = max(0, item.total_callbacks - have)
            rows.append({"address": item.address, "label": item.label,
                         "is_active": item.is_active, "total_callbacks": item.total_callbacks,
                         "stored": have, "missing": missing})
            if missing:
                self.log.warning("%s (%s): the service sent %d callbacks, the store holds %d: "
                                 "%d missing", item.address, item.label or "no label",
                                 item.total_callbacks, have, missing)
        missing_total = sum(r["missing"] for r in rows)
        self.log.info("reconciled %d monitored addresses: %d callbacks missing",
                      len(rows), missing_total)
        if missing_total and self.fail_on_gap:
            gaps = ", ".join(f"{r['address']} ({r['missing']})" for r in rows if r["missing"])
            raise AirflowException(
                f"{missing_total} callbacks the service sent are not in the store: {gaps}. "
                "Resend them from the service's console, then run this task again.")
        return {"addresses": rows, "missing_total": missing_total}
