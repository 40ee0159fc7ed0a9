"""A user's own DAG built from the shipped preparation (no example code): Airflow's default
text rendering, the batch named by the run's conf (tests/operators/test_payout_prep.py)."""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG

from airflow_provider_tronenergy.operators.payout_pipeline import prepare_payout_batch

with DAG("te_payout_prep_user", schedule=None,
         start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False) as dag:
    prepare_payout_batch(
        payouts_file="{{ dag_run.conf['payouts_file'] }}",
        sender_address="{{ dag_run.conf['sender'] }}", batch_id="payroll-{{ ds }}",
        max_spend_trx="{{ dag_run.conf.get('max_spend', '100') }}",
        approval_above_trx=None, tron_node_conn_id=None,
        orders_poke_interval_seconds=0.05, orders_timeout_seconds=60)
