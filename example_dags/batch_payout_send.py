"""Send a prepared USDT payout batch, exactly once, and publish what the chain measured.

Scheduled on the ``payout batch ready`` Asset that ``batch_payout_preparation``
publishes once the recipients are activated and the energy is delegated:

1. **ready_batch** takes that event (the one that triggered the run; run by hand,
   the newest one); its rows keep each payout's token (USDT, TRX, any TRC-20: the
   preparation planned each contract's energy);
2. **send_payouts** (``TronPayoutOperator``) checks the hot wallet on chain (tokens,
   TRX, energy: with the rental on it, nothing should burn), signs each payout,
   journals it before broadcasting, and waits in the triggerer for the receipts.
   A retry, a clear or a second run for the same event re-sends nothing: each
   payout's identity is the batch and its row, and the payout journal decides;
3. **publish_payouts_sent** emits the ``payouts sent`` Asset event: per payout its
   tx, the energy the chain charged and any TRX burned; for the batch the energy
   rented against the energy charged, the TRX burned anyway and the saving renting
   made, **measured on chain** (``payout.sent``).

## Why a DAG of its own, not the last stage of preparation

* **The key.** Only this DAG reads the ``tron_signer`` connection. Run its tasks on a
  queue of their own (``queue="payouts"``) whose workers alone can read that secret;
  the preparation DAG, which talks to the energy service, never can.
* **Once per prepared batch.** Preparation may run every hour and stop at the
  approval gate; sending happens only for a batch that is ready, and can be re-run
  on its own (the journal re-sends nothing) without re-running preparation.
* **Two people.** The spend on energy is approved in preparation; the payouts
  themselves leave from here, with their own failure handling (``on_ambiguous``).

Send within the rental window (``rent_time``, 1 h): this DAG runs as soon as the event
is published.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import DAG, Asset, Param, task

from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.payout import sent

PAYOUT_BATCH_READY = Asset("tronenergy://payout-batch-ready", group="tronenergy")
PAYOUTS_SENT = Asset("tronenergy://payouts-sent", group="tronenergy")

with DAG(
    dag_id="batch_payout_send",
    description="Send a prepared USDT payout batch exactly once; publish the measured saving",
    schedule=[PAYOUT_BATCH_READY],
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    doc_md=__doc__,
    tags=["tronenergy", "payouts"],
    default_args={"retries": 2, "retry_delay": timedelta(seconds=30)},
    params={
        "tron_node_conn_id": Param("tron_node_default", type="string",
                                   description=("the node that checks, broadcasts, "
                                                "confirms; required: an id that names no "
                                                "connection fails before anything is signed")),
        "tron_signer_conn_id": Param("tron_signer_default", type="string",
                                     description="the hot wallet's key or external signer"),
        "max_burn_trx": Param("0", type="string", description=(
            "TRX the batch may burn for energy it lacks; 0: the rental must cover it")),
        "on_ambiguous": Param("fail", enum=["fail", "ask"], description=(
            "a payout failed on chain: fail (resolve with tronenergy-payouts) or ask a "
            "person in Required Actions")),
        "confirm_solidified": Param(True, type="boolean", description=(
            "confirm on solidified blocks (final, about a minute on mainnet); false: on the "
            "head block, sooner, but a fork may still drop a transfer called confirmed")),
    },
    render_template_as_native_obj=True,
) as dag:

    @task(inlets=[PAYOUT_BATCH_READY], multiple_outputs=False)
    def ready_batch(**context: Any) -> dict[str, Any]:
        triggering = context.get("triggering_asset_events")
        events = list(triggering[PAYOUT_BATCH_READY]) if triggering else []
        events = events or list(context["inlet_events"][PAYOUT_BATCH_READY])
        if not events:
            raise ValueError("no payout batch ready event: run batch_payout_preparation first")
        return dict(events[-1].extra)

    @task
    def payout_rows(ready: dict[str, Any]) -> list[dict[str, Any]]:
        return sent.rows_of(ready)

    @task(outlets=[PAYOUTS_SENT], multiple_outputs=False)
    def publish_payouts_sent(ready: dict[str, Any], result: dict[str, Any],
                             outlet_events: Any = None) -> dict[str, Any]:
        payload = sent.payouts_sent(ready, result)
        if outlet_events is not None:
            outlet_events[PAYOUTS_SENT].extra = payload
        return payload

    ready = ready_batch()
    send = TronPayoutOperator(
        task_id="send_payouts", payouts=payout_rows(ready),
        sender_address="{{ ti.xcom_pull(task_ids='ready_batch')['sender'] }}",
        batch_id="{{ ti.xcom_pull(task_ids='ready_batch')['batch_id'] }}",
        tron_node_conn_id="{{ params.tron_node_conn_id }}",
        tron_signer_conn_id="{{ params.tron_signer_conn_id }}",
        max_burn_trx="{{ params.max_burn_trx }}", on_ambiguous="{{ params.on_ambiguous }}",
        confirm_solidified="{{ params.confirm_solidified }}", deferrable=True)
    ready >> send
    publish_payouts_sent(ready, send.output)
