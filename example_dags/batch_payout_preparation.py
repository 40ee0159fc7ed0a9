"""Prepare a batch of USDT payouts from one hot wallet: check, plan, approve, activate, rent
energy, confirm, and publish ``payout batch ready`` for ``batch_payout_send``.

Composition only: the steps are the provider's operators, wired by
``prepare_payout_batch`` (docs/payouts.md walks them; docs/operators.md lists each
argument). A run's conf, or the form, fills the params below.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import DAG, Param

from airflow_provider_tronenergy.operators.payout_pipeline import prepare_payout_batch

TEXT, TEXT_OR_NULL = {"type": "string"}, {"type": ["string", "null"]}
PARAMS = {  # name: (default, schema, description)
    "payouts_file": ("", TEXT, "CSV of recipient,amount rows (header optional)"),
    "payouts": ([], {"type": "array"}, "or the rows themselves"),
    "sender_address": ("", TEXT, "the hot wallet that pays"),
    "batch_id": ("", TEXT, "which batch (a payroll period); empty: the run's data interval"),
    "rent_time": ("1", {"enum": ["1"]}, "hours the energy is rented"),
    "max_spend_trx": ("100", TEXT, "what the batch may spend in all its tries and runs"),
    "max_order_trx": (None, TEXT_OR_NULL, "what one order or activation may cost"),
    "on_ambiguous": ("fail", {"enum": ["fail", "ask"]}, "an order whose outcome is unknown"),
    "approval_above_trx": ("", TEXT, "ask a person above this quote; empty: never ask"),
    "tron_node_conn_id": ("tron_node_default", TEXT_OR_NULL, "null: no on-chain checks"),
    "reserve_trx": ("10", TEXT, "TRX the hot wallet keeps beyond the batch"),
    "energy_margin": ("0", TEXT, "energy on hand kept back, not counted"),
    "confirm_solidified": (True, {"type": "boolean"}, "false: the head block is enough"),
    "confirm_timeout_seconds": ("300", TEXT, "seconds to see the delegations on chain"),
}

with DAG(
    dag_id="batch_payout_preparation",
    description="Activate recipients and rent the energy a USDT payout batch needs",
    schedule="@hourly",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    doc_md=__doc__,
    tags=["tronenergy", "payouts"],
    default_args={"retries": 2, "retry_delay": timedelta(seconds=30)},
    params={name: Param(default, description=text, **schema)
            for name, (default, schema, text) in PARAMS.items()},
    render_template_as_native_obj=True,
) as dag:
    # Each argument from the run's param of the same name.
    prepare_payout_batch(**{name: f"{{{{ params.{name} }}}}" for name in PARAMS})
