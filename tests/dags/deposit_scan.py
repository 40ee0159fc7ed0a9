"""Deposit scan DAGs driven by dag_run.conf (tests/operators/test_deposit_scan.py).

``addresses`` and ``start`` come from the run's conf (native rendering: a list stays a
list); one pass, or following the chain for ``follow_for_seconds`` seconds in the worker or
deferred to the triggerer.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import DAG

from airflow_provider_tronenergy.operators.deposit_scan import TronNodeDepositScanOperator

START = pendulum.datetime(2026, 1, 1, tz="UTC")
ARGS = {"retries": 1, "retry_delay": timedelta(0)}

DAGS: dict[str, DAG] = {}
for name, deferrable in (("te_deposit_scan_worker", False),
                         ("te_deposit_scan_deferrable", True)):
    with DAG(name, schedule=None, start_date=START, catchup=False, default_args=ARGS,
             render_template_as_native_obj=True) as dag:
        TronNodeDepositScanOperator(
            task_id="scan", addresses="{{ dag_run.conf['addresses'] }}",
            tokens="{{ dag_run.conf.get('tokens', ['USDT']) }}",
            start="{{ dag_run.conf['start'] }}",
            follow_for_seconds="{{ dag_run.conf.get('follow_for_seconds', 0) }}",
            scan_interval_seconds=0.1,
            max_requests_per_second=500, deferrable=deferrable)
    DAGS[name] = dag
