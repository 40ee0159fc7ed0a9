"""Prepare a batch of USDT payouts from one hot wallet: activate, rent energy, wait.

Every hour (catchup off) this DAG takes a payout batch (a CSV file of
``recipient,amount`` or a list in the params), and makes the hot wallet ready
to send it cheaply:

1. **load_payouts** validates every row (base58check address, positive amount
   with at most 6 decimals). Bad rows fail the run, each reported by line:
   a payout is never silently dropped.
2. **check_recipients** checks every recipient in one batched task, and
   **preflight_on_chain** reads the hot wallet through the ``tron_node_conn_id``
   param's node. A param that names no connection (or is empty) fails the run
   here, before anything is activated or bought; to prepare without on-chain
   checks, set it to ``null`` (``None``) on purpose.
3. **plan_energy** works out the energy the batch needs and how to buy it at the
   lowest cost, and quotes the whole batch (activations + energy): it refuses
   before anything is activated or bought if the quote exceeds ``max_spend_trx``
   or the available balance.
4. **approve_batch**: when the quote is above ``approval_above_trx`` (empty: never
   ask), the run waits for a person in Airflow's **Required Actions**, the plan
   in the request. Approve: the run goes on. Reject, or no answer within 4 hours:
   nothing is activated or bought, every later task is skipped.
5. **activate_recipients** activates the recipients that need it (1.1 TRX each;
   already active ones are skipped, so a retry never pays twice).
6. **buy_energy** rents that energy to the hot wallet: every order of the plan in
   one task, one order after another, so a batch of 10,000 recipients (170 orders
   or so) is one task instance, not 170. Each order carries a ``purchase_key`` made
   of the sender, the ``batch_id``, a hash of the payout rows and the order's
   index, so the purchase journal recognises it: a retry, a cleared task or a
   **rerun of the same batch** reuses every order whose energy is still valid and
   buys only the rest; an order, refill or top-up is bought only while the batch's
   key has spent, over all its runs, within ``max_spend_trx``. ``batch_id`` names
   the batch (the payroll period, an invoice run); left empty it is the run's data
   interval, which a retry, a clear or a rerun of the run keeps and the next
   scheduled run changes: next period's identical payroll buys its own energy. With
   a node, an order is reused only while the wallet still has its energy on chain;
   otherwise the energy missing is bought, once. An order whose outcome is unknown
   (the answer was lost, the worker died mid-purchase) stops the batch there, and
   every later run, until a person resolves it with ``tronenergy-purchases
   resolve``; with the param ``on_ambiguous`` set to ``"ask"`` it becomes a
   Required Action instead: a person says it was placed (with its order id: the
   batch goes on with it), was not placed (the batch buys it, once), or aborts. The
   journal keeps the answer for every later run.
7. **wait_for_orders** waits for all the orders in one deferrable sensor task (the
   triggerer reads them within the connection's request budget). A failed or
   cancelled order fails the run loudly; **confirm_on_chain** sees the
   delegations on chain (unless ``tron_node_conn_id`` is ``null``).
8. **publish_batch_ready** emits the ``payout batch ready`` Asset event whose
   payload is the plan: per-recipient energy and share of what was paid, totals,
   what renting saved against burning the energy it provided (the energy the
   wallet already had is not counted), ``figures`` saying what each figure
   compares, and who approved the batch and when. With a node, the
   energy is the node's estimate per recipient and burning is priced at the
   chain's own fees, read once in the pre-flight; ``prices`` names the source
   of each figure (``chain``, or ``default`` for the documented constants).

## How the energy is bought, and why

A USDT transfer costs 65,000 energy to a recipient that already holds USDT and
131,000 to one that never did. Rental is priced per energy, so the cheapest
plan buys exactly what the batch needs, in as few orders as the price
endpoint's ``max_energy`` allows (and none under its ``min_energy``):

- recipients that hold USDT: **buy-count** (``count`` x 65,000, one order for up
  to ``max_energy // 65,000`` transfers: 76 at 5,000,000): exactly their need,
  and the mode made for batch payouts;
- first-time recipients: **buy** ``n x 131,000`` energy in one order. buy-count
  would buy only 65,000 each (the transfers would then burn TRX), and
  **auto-buy** would estimate the same 131,000 but take one order (and one
  purchase call) per recipient for the same price;
- **smart-buy** is not used: it activates and buys in one call per recipient,
  but activation is already done, in one batched and retry-safe task, before any
  energy is bought; smart-buy would add an order per recipient and nothing else.

Energy is rented for ``rent_time`` hours: send the payouts within that window.
The preparation is the provider's payout room (``airflow_provider_tronenergy.payout``:
``sheet`` reads the rows, ``onchain`` asks the node, ``energy_plan`` plans and quotes,
``ready`` makes the event); this file only wires it into tasks, each task's errors
turned into its verdict by ``as_airflow()`` (bad input fails without retry, a node not
answering is retried, no batch skips).

## One task for all orders, or one per order

To see each order as its own task in the grid, map the single purchase and
sensor operators over the plan's orders instead (``TronEnergyBuyByCountOperator``
/ ``TronEnergyBuyOperator`` ``.partial(...).expand_kwargs(...)`` and
``TronEnergyOrderSensor``); the journal protects them the same way. It costs a
task instance per order and per wait: docs/performance.md measures both shapes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import DAG, Asset, Param, task

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.operators.address import (
    TronEnergyActivateAddressOperator,
    TronEnergyCheckAddressOperator,
)
from airflow_provider_tronenergy.operators.approval import TronEnergyBatchApprovalOperator
from airflow_provider_tronenergy.operators.batch_buy import TronEnergyBatchBuyOperator
from airflow_provider_tronenergy.payout import energy_plan, onchain, ready, sheet
from airflow_provider_tronenergy.sensors.orders import TronEnergyOrdersSensor

PAYOUT_BATCH_READY = Asset("tronenergy://payout-batch-ready", group="tronenergy")
CONN_ID = "tronenergy_default"

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
    params={
        "payouts_file": Param("", type="string",
                              description="CSV with recipient,amount rows (header optional)"),
        "payouts": Param([], type="array", description="or the rows themselves"),
        "sender_address": Param("", type="string", description="the hot wallet that pays"),
        "batch_id": Param("", type="string", description=(
            "which batch this is (the payroll period, an invoice run): its orders are reused "
            "only by the same batch_id; empty: the run's data interval")),
        "rent_time": Param("1", enum=["1"], description=(
            "hours the energy is rented: 1, the only purchase duration the price "
            "endpoint quotes, so the cost ceiling can be checked before buying")),
        "max_spend_trx": Param("100", type="string", description=(
            "what the batch may spend: its quote (activations and energy) is refused above "
            "it, and its purchases stop there in every try and run, refills and top-ups "
            "counted")),
        "max_order_trx": Param(None, type=["string", "null"], description=(
            "what one order (a refill, a top-up) or one activation may cost; null: each "
            "is bounded by max_spend_trx")),
        "on_ambiguous": Param("fail", enum=["fail", "ask"], description=(
            "a purchase whose outcome is unknown: fail and wait for `tronenergy-purchases "
            "resolve`, or ask a person in Required Actions (placed / not placed / abort)")),
        "approval_above_trx": Param("", type="string", description=(
            "ask a person (Required Actions) before any spend when the quote, activations "
            "and energy, is above this many TRX; empty: never ask")),
        "tron_node_conn_id": Param("tron_node_default", type=["string", "null"], description=(
            "a tron_node connection: check balances and energy on hand before buying, and "
            "the delegations after; null: no on-chain checks, on purpose (an id that names "
            "no connection, or an empty one, fails the run before anything is bought)")),
        "trx_reserve": Param("10", type="string",
                             description="TRX the hot wallet must keep beyond the batch"),
        "energy_margin": Param("0", type="string",
                               description="energy on hand kept back, not counted"),
        "confirm_solidified": Param(True, type="boolean", description=(
            "wait until the delegations are in solidified blocks (final); false: the head "
            "block, which a fork may still leave")),
        "confirm_timeout": Param("300", type="string",
                                 description="seconds to see the delegations on chain"),
    },
    render_template_as_native_obj=True,
) as dag:

    @task
    def load_payouts(params: dict[str, Any]) -> list[dict[str, str]]:
        with as_airflow():  # a bad row or parameter fails at once; no batch: skipped
            return sheet.load_payouts(params)

    @task
    def recipients(payouts: list[dict[str, str]]) -> list[str]:
        return sheet.recipients(payouts)

    @task
    def needing_activation(checks: list[dict[str, Any]]) -> list[str]:
        return [c["address"] for c in checks if c["need_activate"]]

    @task(multiple_outputs=False)
    def preflight_on_chain(payouts: list[dict[str, str]], checks: list[dict[str, Any]],
                           params: dict[str, Any]) -> dict[str, Any]:
        with as_airflow():  # a wallet that cannot pay fails at once; a node down retries
            return onchain.check_batch(payouts, checks, params)

    @task(multiple_outputs=False)
    def plan_energy(payouts: list[dict[str, str]], checks: list[dict[str, Any]],
                    chain: dict[str, Any], params: dict[str, Any],
                    **context: Any) -> dict[str, Any]:
        hook = TronEnergyHook(CONN_ID)
        try:
            with as_airflow():  # a refused spend fails the task at once
                return energy_plan.plan_energy(hook.get_conn(), payouts, checks, params,
                                               chain, context=context)
        finally:
            hook.close()

    @task(multiple_outputs=False)
    def confirm_on_chain(plan: dict[str, Any], orders: list[dict[str, Any]],
                         params: dict[str, Any]) -> dict[str, Any]:
        with as_airflow():  # a delegation failed or not seen fails at once
            return onchain.confirm_batch(plan, orders, params)

    @task(outlets=[PAYOUT_BATCH_READY], multiple_outputs=False)
    def publish_batch_ready(plan: dict[str, Any], orders: list[dict[str, Any]],
                            activations: list[dict[str, Any]],
                            confirmation: dict[str, Any], approval: dict[str, Any],
                            outlet_events: Any = None) -> dict[str, Any]:
        event = ready.batch_ready(plan, orders, activations, confirmation, approval)
        if outlet_events is not None:
            outlet_events[PAYOUT_BATCH_READY].extra = event
        return event

    payouts = load_payouts()
    checked = TronEnergyCheckAddressOperator(
        task_id="check_recipients", addresses=recipients(payouts), tronenergy_conn_id=CONN_ID)
    chain = preflight_on_chain(payouts, checked.output)
    plan = plan_energy(payouts, checked.output, chain)
    # Nothing that spends runs before the gate; rejected, it skips everything after it.
    approval = TronEnergyBatchApprovalOperator(
        task_id="approve_batch", plan=plan,
        approval_above_trx="{{ params.approval_above_trx }}")
    activated = TronEnergyActivateAddressOperator(
        task_id="activate_recipients", addresses=needing_activation(checked.output),
        tronenergy_conn_id=CONN_ID, max_order_trx="{{ params.max_order_trx }}")
    approval >> activated
    # Every order of the plan in one task, and one wait for all of them: the task
    # instances of a run do not grow with the batch (no orders: both return []).
    bought = TronEnergyBatchBuyOperator(
        task_id="buy_energy", orders=plan, tronenergy_conn_id=CONN_ID,
        rent_time="{{ params.rent_time }}", max_spend_trx="{{ params.max_spend_trx }}",
        max_order_trx="{{ params.max_order_trx }}",
        on_ambiguous="{{ params.on_ambiguous }}",
        tron_node_conn_id="{{ params.tron_node_conn_id }}")
    approval >> bought
    waited = TronEnergyOrdersSensor(
        task_id="wait_for_orders", order_ids=bought.output, tronenergy_conn_id=CONN_ID,
        deferrable=True, poke_interval=2, timeout=3600)
    publish_batch_ready(plan, waited.output, activated.output,
                        confirm_on_chain(plan, waited.output), approval.output)
