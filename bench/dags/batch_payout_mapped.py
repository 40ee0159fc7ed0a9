"""The payout example with one mapped task per order: what bench/payout_scale.py compares.

``batch_payout_preparation_mapped`` is the example DAG
(``example_dags/batch_payout_preparation.py``) with the other shape of its buying
and waiting: ``TronEnergyBuyByCountOperator`` / ``TronEnergyBuyOperator`` mapped
over the plan's orders (one task instance per order) and ``TronEnergyOrderSensor``
mapped over their ids (one per order), the shape the example had before issue 15
and the one to pick to see each order in the grid. Every other task is the
example's own (the shipped preparation operators, the example's params), so only the
shape differs. It is a
measurement, not an example: it lives with the bench, outside ``example_dags/``.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, XComArg, task

# The example's params, so that only the shape differs.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "example_dags"))

import batch_payout_preparation as example

from airflow_provider_tronenergy.operators.address import (
    TronEnergyActivateAddressOperator,
    TronEnergyCheckAddressOperator,
)
from airflow_provider_tronenergy.operators.approval import (
    TronEnergyBatchApprovalOperator,
)
from airflow_provider_tronenergy.operators.energy import (
    TronEnergyBuyByCountOperator,
    TronEnergyBuyOperator,
)
from airflow_provider_tronenergy.operators.payout_prep import (
    ACTIVATIONS_KEY,
    RECIPIENTS_KEY,
    TronPayoutBatchReadyOperator,
    TronPayoutConfirmOperator,
    TronPayoutLoadOperator,
    TronPayoutPlanOperator,
    TronPayoutPreflightOperator,
)
from airflow_provider_tronenergy.sensors.order import TronEnergyOrderSensor

CONN_ID = "tronenergy_default"
P = "{{{{ params.{} }}}}".format

with DAG(
    dag_id="batch_payout_preparation_mapped",
    description="The payout example with a mapped purchase and sensor task per order",
    schedule=None,
    start_date=example.dag.start_date,
    catchup=False,
    default_args=dict(example.dag.default_args),
    params=copy.deepcopy(example.dag.params),
    render_template_as_native_obj=True,
    tags=["tronenergy", "bench"],
) as dag:

    # Airflow maps a task only over another task's return value, never over one key of
    # it, so each kind of order reaches its mapped purchase through a task of its own.
    @task
    def count_orders(plan: dict[str, Any]) -> list[dict[str, Any]]:
        return list(plan["count_orders"])

    @task
    def buy_orders(plan: dict[str, Any]) -> list[dict[str, Any]]:
        return list(plan["buy_orders"])

    @task(trigger_rule="none_failed")
    def order_ids(holder_orders: list[dict[str, Any]] | None,
                  new_orders: list[dict[str, Any]] | None) -> list[str]:
        return [o["order_id"] for o in [*(holder_orders or []), *(new_orders or [])]]

    payouts = TronPayoutLoadOperator(
        task_id="load_payouts", payouts_file=P("payouts_file"), payouts=P("payouts"),
        sender_address=P("sender_address"), rent_time=P("rent_time"),
        max_spend_trx=P("max_spend_trx"), batch_id=P("batch_id"))
    checked = TronEnergyCheckAddressOperator(
        task_id="check_recipients", addresses=XComArg(payouts, key=RECIPIENTS_KEY),
        tronenergy_conn_id=CONN_ID)
    chain = TronPayoutPreflightOperator(
        task_id="preflight_on_chain", payouts=payouts.output, checks=checked.output,
        sender_address=P("sender_address"), tron_node_conn_id=P("tron_node_conn_id"),
        reserve_trx=P("reserve_trx"))
    plan = TronPayoutPlanOperator(
        task_id="plan_energy", payouts=payouts.output, checks=checked.output,
        chain=chain.output, sender_address=P("sender_address"), rent_time=P("rent_time"),
        max_spend_trx=P("max_spend_trx"), batch_id=P("batch_id"),
        energy_margin=P("energy_margin"), tronenergy_conn_id=CONN_ID)
    approval = TronEnergyBatchApprovalOperator(
        task_id="approve_batch", plan=plan.output,
        approval_above_trx=P("approval_above_trx"))
    activated = TronEnergyActivateAddressOperator(
        task_id="activate_recipients", addresses=XComArg(plan, key=ACTIVATIONS_KEY),
        tronenergy_conn_id=CONN_ID)
    approval >> activated
    buy = {"tronenergy_conn_id": CONN_ID, "rent_time": P("rent_time"),
           "max_order_trx": P("max_spend_trx"), "on_ambiguous": P("on_ambiguous")}
    holder_orders, newcomer_orders = count_orders(plan.output), buy_orders(plan.output)
    approval >> [holder_orders, newcomer_orders]
    holders = TronEnergyBuyByCountOperator.partial(task_id="buy_for_holders", **buy) \
        .expand_kwargs(holder_orders)
    newcomers = TronEnergyBuyOperator.partial(task_id="buy_for_new_recipients", **buy) \
        .expand_kwargs(newcomer_orders)
    waited = TronEnergyOrderSensor.partial(
        task_id="wait_for_orders", tronenergy_conn_id=CONN_ID, deferrable=True,
        poke_interval=2, timeout=3600,
    ).expand(order_id=order_ids(holders.output, newcomers.output))
    # No orders (the wallet had the energy) skips the mapped tasks, not these two.
    confirmed = TronPayoutConfirmOperator(
        task_id="confirm_on_chain", plan=plan.output, orders=waited.output,
        tron_node_conn_id=P("tron_node_conn_id"), confirm_solidified=P("confirm_solidified"),
        confirm_timeout_seconds=P("confirm_timeout_seconds"),
        trigger_rule="none_failed_min_one_success")
    TronPayoutBatchReadyOperator(
        task_id="publish_batch_ready", plan=plan.output, orders=waited.output,
        activations=activated.output, confirmation=confirmed.output,
        approval=approval.output, trigger_rule="none_failed_min_one_success")
