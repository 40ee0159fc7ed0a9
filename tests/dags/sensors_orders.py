"""TronEnergyOrdersSensor DAGs (one task for a batch's orders) driven by dag_run.conf.

``retries=1``: a failed or cancelled order must fail the task on its first try all the
same (AirflowFailException), which the tests check.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_tronenergy.sensors.orders import TronEnergyOrdersSensor

START = pendulum.datetime(2026, 1, 1, tz="UTC")
ARGS = {"retries": 1, "retry_delay": timedelta(0)}


@task
def spend(orders: list[dict[str, Any]]) -> list[str]:
    """Stands for the payouts that need the energy: they receive the sensor's XCom."""
    return [order["tx_hash"] for order in orders]


DAGS: dict[str, DAG] = {}
for name, deferrable in (("te_orders_sensor_poke", False),
                         ("te_orders_sensor_deferrable", True)):
    with DAG(name, schedule=None, start_date=START, catchup=False, default_args=ARGS,
             render_template_as_native_obj=True) as dag:
        wait = TronEnergyOrdersSensor(task_id="wait", order_ids="{{ dag_run.conf['order_ids'] }}",
                                      poke_interval=0.05, timeout=60, deferrable=deferrable)
        spend(wait.output)
    DAGS[name] = dag
