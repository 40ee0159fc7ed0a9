"""A plan's orders bought in one task, then waited for in one task (tests/operators)."""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import DAG

from airflow_provider_tronenergy.operators.batch_buy import TronEnergyBatchBuyOperator
from airflow_provider_tronenergy.sensors.orders import TronEnergyOrdersSensor

with DAG("te_batch_buy", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
         catchup=False, render_template_as_native_obj=True,
         default_args={"retries": 1, "retry_delay": timedelta(0)}) as dag:
    bought = TronEnergyBatchBuyOperator(
        task_id="buy", orders="{{ dag_run.conf['orders'] }}", rent_time="1",
        max_spend_trx="{{ dag_run.conf.get('max_spend', '100') }}",
        max_order_trx="{{ dag_run.conf.get('max_order') }}",
        tron_node_conn_id="{{ dag_run.conf.get('node_conn_id') }}")  # None: no node
    TronEnergyOrdersSensor(task_id="wait", order_ids=bought.output, poke_interval=0.05,
                           timeout=60, deferrable=True)
