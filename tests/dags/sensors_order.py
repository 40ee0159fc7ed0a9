"""TronEnergyOrderSensor DAGs driven by dag_run.conf (tests/sensors).

Sensors get ``retries=1``: a failed or cancelled order must fail the task on its
first try all the same (AirflowFailException), which the tests check.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_tronenergy.sensors.order import TronEnergyOrderSensor

START = pendulum.datetime(2026, 1, 1, tz="UTC")
ORDER_ID = "{{ dag_run.conf['order_id'] }}"
ARGS = {"retries": 1, "retry_delay": timedelta(0)}


@task
def spend(order: dict[str, Any]) -> str:
    """Stands for the payout that needs the energy: it receives the sensor's XCom."""
    return f"spent energy of order {order['order_id']} (tx {order['tx_hash']})"


DAGS: dict[str, DAG] = {}
for name, deferrable, timeout in (
    ("te_order_sensor_poke", False, 60.0),
    ("te_order_sensor_deferrable", True, 60.0),
    ("te_order_sensor_deferrable_timeout", True, 0.5),
):
    with DAG(name, schedule=None, start_date=START, catchup=False, default_args=ARGS) as dag:
        wait = TronEnergyOrderSensor(task_id="wait", order_id=ORDER_ID, poke_interval=0.05,
                                     timeout=timeout, deferrable=deferrable)
        spend(wait.output)
    DAGS[name] = dag
