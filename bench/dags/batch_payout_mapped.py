"""The payout example with one mapped task per order: what bench/payout_scale.py compares.

``batch_payout_preparation_mapped`` is the example DAG
(``example_dags/batch_payout_preparation.py``) with the other shape of its buying
and waiting: ``TronEnergyBuyByCountOperator`` / ``TronEnergyBuyOperator`` mapped
over the plan's orders (one task instance per order) and ``TronEnergyOrderSensor``
mapped over their ids (one per order), the shape the example had before issue 15
and the one to pick to see each order in the grid. Every other task is the
example's own (its task functions and params), so only the shape differs. It is a
measurement, not an example: it lives with the bench, outside ``example_dags/``.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, task

# The example's own task functions and params, so that only the shape differs.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "example_dags"))

import batch_payout_preparation as example

from airflow_provider_tronenergy.airflow_errors import as_airflow
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
from airflow_provider_tronenergy.payout import onchain, ready
from airflow_provider_tronenergy.sensors.order import TronEnergyOrderSensor

CONN_ID = example.CONN_ID

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

    # No orders (the wallet had the energy) skips the mapped tasks, not these two.
    @task(trigger_rule="none_failed_min_one_success", multiple_outputs=False)
    def confirm_on_chain(plan: dict[str, Any], orders: list[dict[str, Any]] | None,
                         params: dict[str, Any]) -> dict[str, Any]:
        with as_airflow():  # a delegation failed or not seen fails at once
            return onchain.confirm_batch(plan, orders or [], params)

    @task(outlets=[example.PAYOUT_BATCH_READY], trigger_rule="none_failed_min_one_success",
          multiple_outputs=False)
    def publish_batch_ready(plan: dict[str, Any], orders: list[dict[str, Any]] | None,
                            activations: list[dict[str, Any]] | None,
                            confirmation: dict[str, Any],
                            approval: dict[str, Any]) -> dict[str, Any]:
        return ready.batch_ready(plan, orders or [], activations or [], confirmation,
                                 approval)

    payouts = example.load_payouts()
    checked = TronEnergyCheckAddressOperator(
        task_id="check_recipients", addresses=example.recipients(payouts),
        tronenergy_conn_id=CONN_ID)
    chain = example.preflight_on_chain(payouts, checked.output)
    plan = example.plan_energy(payouts, checked.output, chain)
    approval = TronEnergyBatchApprovalOperator(
        task_id="approve_batch", plan=plan,
        approval_above_trx="{{ params.approval_above_trx }}")
    activated = TronEnergyActivateAddressOperator(
        task_id="activate_recipients", addresses=example.needing_activation(checked.output),
        tronenergy_conn_id=CONN_ID)
    approval >> activated
    buy = {"tronenergy_conn_id": CONN_ID, "rent_time": "{{ params.rent_time }}",
           "max_order_trx": "{{ params.max_spend_trx }}",
           "on_ambiguous": "{{ params.on_ambiguous }}"}
    holder_orders, newcomer_orders = count_orders(plan), buy_orders(plan)
    approval >> [holder_orders, newcomer_orders]
    holders = TronEnergyBuyByCountOperator.partial(task_id="buy_for_holders", **buy) \
        .expand_kwargs(holder_orders)
    newcomers = TronEnergyBuyOperator.partial(task_id="buy_for_new_recipients", **buy) \
        .expand_kwargs(newcomer_orders)
    waited = TronEnergyOrderSensor.partial(
        task_id="wait_for_orders", tronenergy_conn_id=CONN_ID, deferrable=True,
        poke_interval=2, timeout=3600,
    ).expand(order_id=order_ids(holders.output, newcomers.output))
    publish_batch_ready(plan, waited.output, activated.output,
                        confirm_on_chain(plan, waited.output), approval.output)
