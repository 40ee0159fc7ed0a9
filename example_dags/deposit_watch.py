"""Watch deposit addresses and credit each incoming deposit exactly once.

Two DAGs:

- **deposit_addresses_register** (daily): declares the set of deposit addresses
  to the service's monitoring (``TronEnergyAddMonitorOperator`` is idempotent: addresses
  already watched stay as they are), with the callback URL of the receiver
  (the Airflow API server plugin at ``/tronenergy/callbacks``, or a standalone
  ``tronenergy-receiver``).
- **deposit_credit** (event-driven): scheduled on the ``tronenergy://deposits``
  Asset, whose ``AssetWatcher`` turns each newly stored callback into one Asset
  event (``TronEnergyTransferWatchTrigger``). Its task credits each deposit into a
  ledger table keyed by ``tx_hash``, so even a redelivered event (possible only
  if the triggerer dies between Airflow persisting an event and the watcher
  committing its offset) credits nothing twice. It then catches up from the
  callback store (``deposits.catch_up``): Airflow 3.3 can leave the last Asset
  events of a burst in no run until a later deposit arrives, and the store, not
  the event, is the record of what arrived. Each ledger row names the run that
  credited it.

Settings, read when a task runs (never when the file is parsed):

- Airflow Variable ``tronenergy_deposit_addresses``: a JSON list of deposit
  addresses (e.g. ``AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES='["T..."]'``); only
  transfers into these are credited;
- Airflow Variable ``tronenergy_callback_url``: where the service sends callbacks;
- the credited-deposits ledger: ``[tronenergy] deposits_ledger`` (or
  ``$TRONENERGY_DEPOSITS_DB``), a SQLAlchemy URL; default a SQLite file in
  ``$AIRFLOW_HOME`` (:class:`airflow_provider_tronenergy.deposits.DepositLedger`).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import DAG, Asset, AssetWatcher, Variable, task

from airflow_provider_tronenergy.deposits import DepositLedger, event_transfer
from airflow_provider_tronenergy.operators.monitor import TronEnergyAddMonitorOperator
from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferWatchTrigger

ADDRESSES_VARIABLE = "tronenergy_deposit_addresses"
START = pendulum.datetime(2026, 1, 1, tz="UTC")
log = logging.getLogger(__name__)

DEPOSITS = Asset(
    "tronenergy://deposits",
    group="tronenergy",
    watchers=[AssetWatcher(
        name="tronenergy_deposits",
        # Every stored transfer; the credit task keeps those into deposit addresses.
        trigger=TronEnergyTransferWatchTrigger(consumer="deposit_credit", poll_interval=2.0),
    )],
)

with DAG(
    dag_id="deposit_addresses_register",
    description="Declare the deposit addresses to the service's monitoring",
    schedule="@daily",
    start_date=START,
    catchup=False,
    tags=["tronenergy", "deposits"],
    doc_md=__doc__,
    default_args={"retries": 2, "retry_delay": timedelta(seconds=30)},
    render_template_as_native_obj=True,
) as dag_register:
    TronEnergyAddMonitorOperator(
        task_id="watch_deposit_addresses",
        addresses=f"{{{{ var.json.get('{ADDRESSES_VARIABLE}', []) }}}}",
        webhook_url="{{ var.value.get('tronenergy_callback_url', "
                    "'http://localhost:8080/tronenergy/callbacks') }}",
        label="deposits", tokens=["USDT", "TRX"])


with DAG(
    dag_id="deposit_credit",
    description="Credit each deposit once, as its callback arrives",
    schedule=[DEPOSITS],
    start_date=START,
    catchup=False,
    tags=["tronenergy", "deposits"],
    doc_md=__doc__,
    # No max_active_runs=1: with it, Airflow (apache/airflow#56050, seen on 3.3.2)
    # leaves the events that arrive while the one run is active without a run until the
    # next deposit comes, which may be never. Runs never share an event and the ledger is
    # keyed by tx_hash, so runs at once credit nothing twice.
    # Crediting is idempotent, so a try that met a database outage (the ledger, or the
    # callback store the catch-up reads) is simply tried again.
    default_args={"retries": 3, "retry_delay": timedelta(seconds=15)},
) as dag_credit:

    @task
    def credit_deposits(**context: Any) -> list[dict[str, Any]]:
        addresses = set(Variable.get(ADDRESSES_VARIABLE, default=[], deserialize_json=True))
        events = context["triggering_asset_events"][DEPOSITS]
        # Transfers handed over in dag_run.conf are accepted too (manual replays, demos).
        given = [event_transfer(e.extra) for e in events]
        given += list((context["dag_run"].conf or {}).get("transfers", []))
        deposits = [t for t in given if t is not None and t["to"] in addresses]
        if len(deposits) < len(given):
            log.warning("%d of %d transfers are not into a deposit address (or carry no "
                        "transfer): not credited", len(given) - len(deposits), len(given))
        run_id = context["run_id"]
        ledger = DepositLedger()  # the ledger the configuration names
        try:
            credited = ledger.credit(deposits, credited_by=run_id)
            # Deposits whose event reached no run yet (or never will, in time): the store.
            caught_up = ledger.catch_up(addresses, credited_by=run_id)
        finally:
            ledger.close()
        if caught_up:
            log.info("%d stored deposits had not been credited from their events: credited "
                     "now", len(caught_up))
        credited += caught_up
        for t in credited:
            log.info("credited %s %s to %s (tx %s)", t["amount"], t["token"], t["to"],
                     t["tx_hash"])
        return credited

    credit_deposits()
