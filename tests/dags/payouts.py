"""Payout DAGs driven by dag_run.conf (tests/operators/test_payout.py).

Every value comes from the run's conf through templates (native objects, so the rows
stay a list). ``retries=1`` with no delay: a test sees whether a failure was retried.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import DAG

from airflow_provider_tronenergy.operators.payout import TronPayoutOperator

START = pendulum.datetime(2026, 1, 1, tz="UTC")
ARGS = {"retries": 1, "retry_delay": timedelta(0)}

DAGS: dict[str, DAG] = {}
# te_payouts_other: a second DAG sending from the same hot wallet (the wallet's lease).
for name, deferrable in (("te_payouts", False), ("te_payouts_deferrable", True),
                         ("te_payouts_other", False)):
    with DAG(name, schedule=None, start_date=START, catchup=False, default_args=ARGS,
             render_template_as_native_obj=True) as dag:
        TronPayoutOperator(
            task_id="send", payouts="{{ dag_run.conf['payouts'] }}",
            sender_address="{{ dag_run.conf['sender'] }}",
            batch_id="{{ dag_run.conf.get('batch_id', '') }}",
            max_burn_trx="{{ dag_run.conf.get('max_burn_trx', '0') }}",
            max_fee_limit_trx="{{ dag_run.conf.get('max_fee_limit_trx', '100') }}",
            on_ambiguous="{{ dag_run.conf.get('on_ambiguous', 'fail') }}",
            permission_id="{{ dag_run.conf.get('permission_id', 0) }}",
            cosigner_conn_ids="{{ dag_run.conf.get('cosigners', []) }}",
            confirm_node_conn_id="{{ dag_run.conf.get('confirm_node_conn_id', '') }}",
            deferrable=deferrable,
            # The machinery as a mapping of PayoutTuning's fields, templated per run.
            tuning={
                "confirm_timeout_seconds": "{{ dag_run.conf.get('confirm_timeout_seconds', 120) }}",
                "wallet_wait_seconds": "{{ dag_run.conf.get('wallet_wait_seconds', 300) }}",
                "clock_tolerance_seconds":
                    "{{ dag_run.conf.get('clock_tolerance_seconds', 60) }}",
                "poll_interval_seconds": "0.5"})
    DAGS[name] = dag
