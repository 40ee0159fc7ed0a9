"""Transfer sensor and callback reconciliation DAGs driven by dag_run.conf (tests/sensors,
tests/operators).

The sensor's optional filters are templated with ``dag_run.conf.get``: a missing
value renders as "None", which the sensor must read as "no filter". Sensors get
``retries=1``: a timeout must fail the task on its first try all the same.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_tronenergy.operators.reconcile import TronEnergyReconcileCallbacksOperator
from airflow_provider_tronenergy.sensors.transfer import TronEnergyTransferSensor

START = pendulum.datetime(2026, 1, 1, tz="UTC")
ARGS = {"retries": 1, "retry_delay": timedelta(0)}


@task(multiple_outputs=False)  # one XCom, the booking record: the tests read it whole
def credit(transfer: dict[str, Any]) -> dict[str, str]:
    """Stands for the deposit booking that needs the transfer: it receives the XCom."""
    return {"tx_hash": transfer["tx_hash"], "credited": f"{transfer['amount']} {transfer['token']}"}


DAGS: dict[str, DAG] = {}
for name, deferrable, timeout in (
    ("te_transfer_sensor_poke", False, 60.0),
    ("te_transfer_sensor_deferrable", True, 60.0),
    ("te_transfer_sensor_deferrable_timeout", True, 0.5),
):
    with DAG(name, schedule=None, start_date=START, catchup=False, default_args=ARGS) as dag:
        wait = TronEnergyTransferSensor(
            task_id="wait", proven=False, address="{{ dag_run.conf['address'] }}",
            token="{{ dag_run.conf.get('token') }}",
            min_amount="{{ dag_run.conf.get('min_amount') }}",
            from_address="{{ dag_run.conf.get('from_address') }}",
            poke_interval=0.05, timeout=timeout, deferrable=deferrable)
        credit(wait.output)
    DAGS[name] = dag

for name, fail_on_gap in (("te_reconcile_strict", True), ("te_reconcile_report", False)):
    with DAG(name, schedule=None, start_date=START, catchup=False) as dag:
        # Unset in conf, the status renders as "None": every monitored address.
        TronEnergyReconcileCallbacksOperator(task_id="reconcile", fail_on_gap=fail_on_gap,
                                             status="{{ dag_run.conf.get('status') }}")
    DAGS[name] = dag

for name, deferrable in (("te_transfer_sensor_proven_poke", False),
                         ("te_transfer_sensor_proven_deferrable", True)):
    with DAG(name, schedule=None, start_date=START, catchup=False, default_args=ARGS) as dag:
        # proven left at its default (True): handed on once the deposit ledger credited it.
        wait = TronEnergyTransferSensor(
            task_id="wait", address="{{ dag_run.conf['address'] }}",
            min_amount="{{ dag_run.conf.get('min_amount') }}",
            poke_interval=0.05, timeout=120.0, deferrable=deferrable)
        credit(wait.output)
    DAGS[name] = dag
