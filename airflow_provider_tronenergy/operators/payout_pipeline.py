"""The whole preparation of a payout batch, wired: one call in a DAG, fixed with the package.

:func:`prepare_payout_batch` creates, in the DAG being defined, the tasks of
docs/payouts.md in their order (load, check, pre-flight, plan, approve, activate, buy,
wait, confirm, publish) under the task ids the ``batch_payout_send`` example and the
docs name, from :mod:`.payout_prep` and the provider's other operators. Nothing that
spends runs before the approval gate; rejected, it skips everything after it.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from airflow.sdk import XComArg

from airflow_provider_tronenergy.operators.address import (
    TronEnergyActivateAddressOperator,
    TronEnergyCheckAddressOperator,
)
from airflow_provider_tronenergy.operators.approval import TronEnergyBatchApprovalOperator
from airflow_provider_tronenergy.operators.batch_buy import TronEnergyBatchBuyOperator
from airflow_provider_tronenergy.operators.payout_prep import (
    ACTIVATIONS_KEY,
    RECIPIENTS_KEY,
    TronPayoutBatchReadyOperator,
    TronPayoutConfirmOperator,
    TronPayoutLoadOperator,
    TronPayoutPlanOperator,
    TronPayoutPreflightOperator,
)
from airflow_provider_tronenergy.payout.params import DEFAULT_NODE_CONN
from airflow_provider_tronenergy.sensors.orders import TronEnergyOrdersSensor


def prepare_payout_batch(
        *, sender_address: str, max_spend_trx: Decimal | int | str, payouts_file: str = "",
        payouts: Any = None, batch_id: str = "", rent_time: Decimal | float | int | str = "1",
        max_order_trx: Decimal | int | str | None = None, on_ambiguous: str = "fail",
        approval_above_trx: Decimal | int | str | None = "0",
        tron_node_conn_id: str | None = DEFAULT_NODE_CONN,
        tronenergy_conn_id: str = "tronenergy_default", reserve_trx: Decimal | int | str = "0",
        energy_margin: int | str = "0", confirm_solidified: bool | str = True,
        confirm_timeout_seconds: float | str = "300",
        approval_timeout_seconds: float | None = 4 * 3600,
        orders_poke_interval_seconds: float = 2,
        orders_timeout_seconds: float = 3600) -> TronPayoutBatchReadyOperator:
    """Create the preparation's tasks in the current DAG; returns the one that publishes
    ``payout batch ready``. Every argument but the approval's and the orders' wait
    (``approval_timeout_seconds``: None, no limit; ``orders_*_seconds``) is templated
    (``"{{ params.max_spend_trx }}"``): see docs/operators.md for each."""
    loaded = TronPayoutLoadOperator(
        task_id="load_payouts", payouts_file=payouts_file, payouts=payouts,
        sender_address=sender_address, rent_time=rent_time, max_spend_trx=max_spend_trx,
        batch_id=batch_id)
    # XComArgs stand for the values the operators' signatures name (resolved at run time).
    recipients: Any = XComArg(loaded, key=RECIPIENTS_KEY)
    checked = TronEnergyCheckAddressOperator(
        task_id="check_recipients", addresses=recipients,
        tronenergy_conn_id=tronenergy_conn_id)
    chain = TronPayoutPreflightOperator(
        task_id="preflight_on_chain", payouts=loaded.output, checks=checked.output,
        sender_address=sender_address, tron_node_conn_id=tron_node_conn_id,
        reserve_trx=reserve_trx)
    plan = TronPayoutPlanOperator(
        task_id="plan_energy", payouts=loaded.output, checks=checked.output,
        chain=chain.output, sender_address=sender_address, rent_time=rent_time,
        max_spend_trx=max_spend_trx, batch_id=batch_id, energy_margin=energy_margin,
        tronenergy_conn_id=tronenergy_conn_id)
    planned: Any = plan.output
    approval = TronEnergyBatchApprovalOperator(
        task_id="approve_batch", plan=plan.output, approval_above_trx=approval_above_trx,
        response_timeout=(None if approval_timeout_seconds is None
                          else timedelta(seconds=approval_timeout_seconds)))
    activated = TronEnergyActivateAddressOperator(
        task_id="activate_recipients", addresses=XComArg(plan, key=ACTIVATIONS_KEY),
        tronenergy_conn_id=tronenergy_conn_id, max_order_trx=max_order_trx)
    # Every order of the plan in one task, and one wait for all of them: the task
    # instances of a run do not grow with the batch (no orders: both return []).
    bought = TronEnergyBatchBuyOperator(
        task_id="buy_energy", orders=planned, tronenergy_conn_id=tronenergy_conn_id,
        rent_time=rent_time, max_spend_trx=max_spend_trx, max_order_trx=max_order_trx,
        on_ambiguous=on_ambiguous, tron_node_conn_id=tron_node_conn_id)
    approval >> [activated, bought]
    order_ids: Any = bought.output
    waited = TronEnergyOrdersSensor(
        task_id="wait_for_orders", order_ids=order_ids,
        tronenergy_conn_id=tronenergy_conn_id, deferrable=True,
        poke_interval=orders_poke_interval_seconds, timeout=orders_timeout_seconds)
    confirmed = TronPayoutConfirmOperator(
        task_id="confirm_on_chain", plan=plan.output, orders=waited.output,
        tron_node_conn_id=tron_node_conn_id, confirm_solidified=confirm_solidified,
        confirm_timeout_seconds=confirm_timeout_seconds)
    return TronPayoutBatchReadyOperator(
        task_id="publish_batch_ready", plan=plan.output, orders=waited.output,
        activations=activated.output, confirmation=confirmed.output,
        approval=approval.output)
