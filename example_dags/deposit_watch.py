"""Watch deposit addresses and credit each incoming deposit exactly once.

Three DAGs:

- **deposit_addresses_register** (daily): declares the set of deposit addresses
  to the service's monitoring (``TronEnergyAddMonitorOperator`` is idempotent: addresses
  already watched stay as they are), with the callback URL of the receiver
  (the Airflow API server plugin at ``/tronenergy/callbacks``, or a standalone
  ``tronenergy-receiver``). First it records in the deposit ledger when each address was
  registered (the ``tron_node`` connection's solidified head; the earliest registration
  of an address is kept): the scan reads each address from there.
- **deposit_credit** (event-driven): scheduled on the ``tronenergy://deposits``
  Asset, whose ``AssetWatcher`` turns each newly stored callback into one Asset
  event (``TronEnergyTransferWatchTrigger``). The events only wake it: its task
  credits from the callback store, the record of what arrived
  (``DepositLedger.credit_from_store``: every callback into a deposit address stored
  since the ledger's offset, **proven on chain first** through the ``tron_node``
  connection: its transaction solidified, succeeded and moved exactly that amount of
  the connection's USDT contract (or TRX) into that address; the ledger credits the
  chain's figures, keyed by the transaction hash and the log), so a
  redelivered event, a run whose events came late (Airflow 3.3 can leave the last
  Asset events of a burst in no run until a later deposit arrives) or two runs at
  once credit each deposit once. A callback whose block is not solid yet waits and is
  credited by a later run; one the chain contradicts (forged, inflated, failed, a
  look-alike token, another recipient) is kept as disputed and never credited
  (``tronenergy-deposits list``). Each ledger row names the run that credited it.
  Nothing handed to a run is credited (``dag_run.conf`` included): to replay a
  deposit, resend its callback from the service, which the receiver verifies and
  stores.
- **deposit_scan** (every 10 minutes): the safety net for callbacks that never came
  (a receiver down past the service's retries, a callback the service skipped):
  ``TronNodeDepositScanOperator`` reads every solidified block since the ledger's
  checkpoint and credits each transfer of USDT or TRX into a deposit address through the
  same key, so a deposit is credited once whichever of callback or scan saw it first.
  Its first run starts at the earliest registration block of the addresses it watches,
  so a deposit whose callbacks were all lost before that run is credited; an address
  added later is read back to its own registration block once. For addresses registered
  elsewhere (not through this DAG), Variable ``tronenergy_deposit_scan_start`` names a
  block to start at; the earlier of the two wins. Neither: the solidified head of that
  moment, never genesis.

Settings, read when a task runs (never when the file is parsed):

- Airflow Variable ``tronenergy_deposit_addresses``: a JSON list of deposit
  addresses (e.g. ``AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES='["T..."]'``); only
  transfers into these are credited, each judged once, by the run that reads it from
  the store (``DepositLedger.credit_earlier`` credits, on purpose, what was stored into
  an address before it was added);
- the ``tron_node`` connection (``tron_node_default``) the proofs read the chain through;
  Airflow Variable ``tronenergy_deposit_confirmations``: unset (default) proves on the
  solidity API, N accepts a block N blocks deep; ``tronenergy_deposit_settle_seconds``
  (default 90): how long a run waits for the blocks of callbacks it has seen to solidify
  (what is still waiting then is credited by a later run);
- the callback store: ``TRONENERGY_CALLBACK_STORE`` (or ``[tronenergy]
  callback_store``), read access is enough;
- Airflow Variable ``tronenergy_callback_url``: where the service sends callbacks;
- the credited-deposits ledger: ``[tronenergy] deposits_ledger`` (or
  ``$TRONENERGY_DEPOSITS_DB``), a SQLAlchemy URL; default a SQLite file in
  ``$AIRFLOW_HOME`` (:class:`airflow_provider_tronenergy.deposits.DepositLedger`).
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

import pendulum
from airflow.providers.common.compat.sdk import AirflowFailException
from airflow.sdk import DAG, Asset, AssetWatcher, Variable, task

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.deposits import DepositLedger, ProofSettings, Prover
from airflow_provider_tronenergy.deposits.proof import NODE_NEEDED
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.operators.deposit_scan import TronNodeDepositScanOperator
from airflow_provider_tronenergy.operators.monitor import TronEnergyAddMonitorOperator
from airflow_provider_tronenergy.triggers.stops import stops_in, watcher_payloads
from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferWatchTrigger

ADDRESSES_VARIABLE = "tronenergy_deposit_addresses"
CONFIRMATIONS_VARIABLE = "tronenergy_deposit_confirmations"
SETTLE_VARIABLE = "tronenergy_deposit_settle_seconds"
SCAN_START_VARIABLE = "tronenergy_deposit_scan_start"
CONSUMER = "deposit_credit"
SETTLE_SECONDS = 90.0
"""How long a run waits for the blocks of the callbacks it has seen (mainnet solidifies a
block about 57 s after it is made)."""
SETTLE_POLL = 3.0
START = pendulum.datetime(2026, 1, 1, tz="UTC")
log = logging.getLogger(__name__)

DEPOSITS = Asset(
    "tronenergy://deposits",
    group="tronenergy",
    watchers=[AssetWatcher(
        name="tronenergy_deposits",
        # Every stored transfer; the credit task keeps those into deposit addresses. Not
        # proven: these events only wake the run that proves and credits (waiting for the
        # proof here would wait for this very DAG).
        trigger=TronEnergyTransferWatchTrigger(
            proven=False, consumer=CONSUMER, poll_interval_seconds=2.0),
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
        label="deposits", tokens=["USDT", "TRX"],
        tron_node_conn_id="tron_node_default")  # the registration's block: its solid head


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
    # callback store it reads) is simply tried again.
    default_args={"retries": 3, "retry_delay": timedelta(seconds=15)},
) as dag_credit:

    @task
    def credit_deposits(**context: Any) -> list[dict[str, Any]]:
        """Credit what the callback store holds since the ledger's offset; the events that
        triggered the run only woke it; one from a watcher that stopped (a callback store the
        triggerer may not open) fails the run, not retried: a person fixes what it says."""
        stops = stops_in(watcher_payloads(context), consumer=CONSUMER)
        if stops:
            raise AirflowFailException(f"the deposits watcher stopped: {stops[-1]}; nothing "
                                       "credited (the scan still credits from the chain)")
        events = context["triggering_asset_events"][DEPOSITS]
        log.info("woken by %d deposit event(s): crediting from the callback store", len(events))
        if (context["dag_run"].conf or {}).get("transfers"):
            log.warning("dag_run.conf transfers are not credited: only what the callback store "
                        "verified is; resend the callback from the service to replay a deposit")
        addresses = Variable.get(ADDRESSES_VARIABLE, default=[], deserialize_json=True)
        if not addresses:
            log.warning("Variable %s names no deposit address: nothing read or credited",
                        ADDRESSES_VARIABLE)
        confirmations = Variable.get(CONFIRMATIONS_VARIABLE, default=None)
        settings = ProofSettings(confirmations=int(confirmations) if confirmations else None)
        settle = float(Variable.get(SETTLE_VARIABLE, default=SETTLE_SECONDS))
        with as_airflow():  # no node connection: failed, not retried, nothing credited
            hook = TronNodeHook.required(TronNodeHook.default_conn_name, needs=NODE_NEEDED)
        # A ledger or callback store on one host's file under a distributed executor
        # (StoreNotShared): failed, not retried, nothing credited.
        with as_airflow(), hook.get_conn() as node, DepositLedger() as ledger:
            prover = Prover(node, settings)
            credited = ledger.credit_from_store(addresses, prover=prover,
                                                credited_by=context["run_id"])
            # A callback comes as its block is made; the block is solid about a minute
            # later. Wait that long for the claims waiting on a block, so that the last
            # deposit of a burst is not left for a run that no new deposit may wake.
            deadline = time.monotonic() + settle
            while _waiting_for_blocks(ledger) and time.monotonic() < deadline:
                time.sleep(min(SETTLE_POLL, max(0.0, deadline - time.monotonic())))
                credited += ledger.credit_from_store(addresses, prover=prover,
                                                     credited_by=context["run_id"])
            if _waiting_for_blocks(ledger):
                log.warning("callbacks still wait for their blocks: the next run credits "
                            "them (tronenergy-deposits list)")
        for t in credited:
            log.info("credited %s units to %s (tx %s, log %d, block %d: proven on chain)",
                     t.units, t.to_address, t.tx_hash, t.index, t.block_number)
        return [t.to_dict() for t in credited]

    credit_deposits()


with DAG(
    dag_id="deposit_scan",
    description="Credit every deposit the chain holds, callback or not",
    schedule=timedelta(minutes=10),
    start_date=START,
    catchup=False,
    max_active_runs=1,  # scheduled on time, not on the Asset: one pass at a time is enough
    tags=["tronenergy", "deposits"],
    doc_md=__doc__,
    default_args={"retries": 3, "retry_delay": timedelta(seconds=30)},
    render_template_as_native_obj=True,
) as dag_scan:

    @task.short_circuit
    def has_deposit_addresses() -> bool:
        """No deposit address yet: nothing to scan for (the scan refuses an empty list)."""
        return bool(Variable.get(ADDRESSES_VARIABLE, default=[], deserialize_json=True))

    has_deposit_addresses() >> TronNodeDepositScanOperator(
        task_id="scan_deposits",
        addresses=f"{{{{ var.json.get('{ADDRESSES_VARIABLE}', []) }}}}",
        tokens=["USDT", "TRX"],
        start=f"{{{{ var.value.get('{SCAN_START_VARIABLE}', 'solid') }}}}",
    )


def _waiting_for_blocks(ledger: DepositLedger) -> bool:
    """Any claim waiting for its block to be solid (or deep enough)?"""
    return any(c.reason in ("not_solid", "not_deep") for c in ledger.claims(("waiting",)))
