"""Prepare a batch of USDT payouts from one hot wallet: activate, rent energy, wait.

Every hour (catchup off) this DAG takes a payout batch (a CSV file of
``recipient,amount`` or a list in the params), and makes the hot wallet ready
to send it cheaply:

1. **load_payouts** validates every row (base58check address, positive amount
   with at most 6 decimals). Bad rows fail the run, each reported by line:
   a payout is never silently dropped.
2. **check_recipients** checks every recipient in one batched task.
3. **activate_recipients** activates the recipients that need it (1.1 TRX each;
   already active ones are skipped, so a retry never pays twice).
4. **plan_energy** works out the energy the batch needs and how to buy it at the
   lowest cost, then refuses before buying anything if the quote exceeds
   ``max_cost_trx`` or the available balance.
5. **buy_for_holders** / **buy_for_new_recipients** rent that energy to the
   hot wallet (dynamically mapped, one task per order). Each order carries a
   ``purchase_key`` made of the sender, a hash of the payout rows and the
   order's index, so the purchase journal recognises it: a retry, a cleared
   task or a **new run of the same batch** reuses an order whose energy is
   still valid instead of buying it again, and an order whose outcome is
   unknown (the worker died mid-purchase) stops every run until a person
   resolves it with ``tronenergy-purchases resolve``.
6. **wait_for_orders** waits for every order with the deferrable sensor. A
   failed or cancelled order fails the run loudly.
7. **publish_batch_ready** emits the ``payout batch ready`` Asset event whose
   payload is the plan: per-recipient energy and cost, totals, and the saving
   against burning TRX.

## How the energy is bought, and why

A USDT transfer costs 65,000 energy to a recipient that already holds USDT and
131,000 to one that never did. Rental is priced per energy, so the cheapest
plan buys exactly what the batch needs, in as few orders as the service's
``max_energy`` allows:

- recipients that hold USDT: **buy-count** (``count`` x 65,000, one order for up
  to 76 transfers): exactly their need, and the mode made for batch payouts;
- first-time recipients: **buy** ``n x 131,000`` energy in one order. buy-count
  would buy only 65,000 each (the transfers would then burn TRX), and
  **auto-buy** would estimate the same 131,000 but take one order (and one
  purchase call) per recipient for the same price;
- **smart-buy** is not used: it activates and buys in one call per recipient,
  but activation is already done, in one batched and retry-safe task, before any
  energy is bought; smart-buy would add an order per recipient and nothing else.

Energy is rented for ``rent_time`` hours: send the payouts within that window.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Sequence
from datetime import timedelta
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Any

import pendulum
from airflow.providers.common.compat.sdk import AirflowFailException, AirflowSkipException
from airflow.sdk import DAG, Asset, Param, task

from airflow_provider_tronenergy.client.validation import address as valid_address
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.operators.energy import (
    ActivateAddressOperator,
    BuyEnergyByCountOperator,
    BuyEnergyOperator,
    CheckAddressOperator,
)
from airflow_provider_tronenergy.operators.quote import (
    ACTIVATION_COST,
    ENERGY_FIRST_TRANSFER,
    burn_cost,
    rental_cost,
    text,
)
from airflow_provider_tronenergy.protocol.numbers import parse_decimal
from airflow_provider_tronenergy.sensors.order import EnergyOrderSensor

PAYOUT_BATCH_READY = Asset("tronenergy://payout-batch-ready", group="tronenergy")
MAX_TRANSFERS_PER_COUNT_ORDER = 76  # 76 x 65,000 <= max_energy 5,000,000
MAX_ENERGY_PER_ORDER = 5_000_000
CONN_ID = "tronenergy_default"


def parse_payouts(rows: Sequence[Sequence[str]], first_line: int = 1) -> list[dict[str, str]]:
    """Validated payouts; every bad row is reported with its line number."""
    payouts: list[dict[str, str]] = []
    errors: list[str] = []
    for line, row in enumerate(rows, start=first_line):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            errors.append(f"line {line}: expected 'recipient,amount', got {len(row)} fields")
            continue
        recipient, raw_amount = (cell.strip() for cell in row)
        try:
            valid_address(recipient, "recipient")
        except ValueError as exc:
            errors.append(f"line {line}: {exc}")
            continue
        try:
            amount = parse_decimal(raw_amount, "amount")
        except ValueError as exc:
            errors.append(f"line {line}: {exc}")
            continue
        if not amount.is_finite() or amount <= 0 or amount != round(amount, 6):
            errors.append(f"line {line}: amount {raw_amount!r} must be positive, 6 decimals max")
            continue
        payouts.append({"recipient": recipient, "amount": text(amount)})
    if errors:
        raise AirflowFailException("bad payout rows (nothing was bought):\n" + "\n".join(errors))
    if not payouts:
        raise AirflowFailException("the payout batch is empty")
    return payouts


def batch_params(params: dict[str, Any]) -> tuple[str, Decimal, Decimal]:
    """Sender, rent time and cost ceiling, checked before anything is checked or paid."""
    try:
        return (valid_address(params["sender_address"], "sender_address"),
                parse_decimal(params["rent_time"], "rent_time"),
                parse_decimal(params["max_cost_trx"], "max_cost_trx"))
    except ValueError as exc:
        raise AirflowFailException(f"bad parameter (nothing was bought): {exc}") from None


def batch_key(sender: str, payouts: Sequence[dict[str, str]]) -> str:
    """Names this batch's purchases: a new run of the same batch reuses its still-valid orders."""
    rows = json.dumps([[p["recipient"], p["amount"]] for p in payouts], separators=(",", ":"))
    return f"payout:{sender}:{hashlib.sha256(rows.encode()).hexdigest()[:16]}"


def plan_orders(checks: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Orders that buy exactly the batch's energy: buy-count for holders, buy for the rest."""
    holders = sum(1 for c in checks if c["transfer_energy"] <= 65_000)
    newcomers = len(checks) - holders
    count_orders = []
    while holders > 0:
        count = min(holders, MAX_TRANSFERS_PER_COUNT_ORDER)
        count_orders.append({"count": count})
        holders -= count
    buy_orders = []
    per_order = MAX_ENERGY_PER_ORDER // ENERGY_FIRST_TRANSFER
    while newcomers > 0:
        n = min(newcomers, per_order)
        buy_orders.append({"energy_amount": n * ENERGY_FIRST_TRANSFER})
        newcomers -= n
    return {"count_orders": count_orders, "buy_orders": buy_orders}


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
        "rent_time": Param("1", enum=["1"], description=(
            "hours the energy is rented: 1, the only purchase duration the price "
            "endpoint quotes, so the cost ceiling can be checked before buying")),
        "max_cost_trx": Param("100", type="string", description="refuse above this quote"),
    },
    render_template_as_native_obj=True,
) as dag:

    @task
    def load_payouts(params: dict[str, Any]) -> list[dict[str, str]]:
        if not params["payouts_file"] and not params["payouts"]:
            # A scheduled run with no batch handed to it has nothing to prepare.
            raise AirflowSkipException("no payouts_file and no payouts: nothing to prepare")
        batch_params(params)  # a bad sender or ceiling fails here, before any activation
        if params["payouts_file"]:
            content = Path(params["payouts_file"]).read_text(encoding="utf-8")
            rows = list(csv.reader(io.StringIO(content)))
            first = 1
            if rows and rows[0] and rows[0][0].strip().lower() == "recipient":
                rows, first = rows[1:], 2
            return parse_payouts(rows, first_line=first)
        return parse_payouts([[str(r.get("recipient", "")), str(r.get("amount", ""))]
                              for r in params["payouts"]])

    @task
    def recipients(payouts: list[dict[str, str]]) -> list[str]:
        return list(dict.fromkeys(p["recipient"] for p in payouts))  # each address once

    @task
    def needing_activation(checks: list[dict[str, Any]]) -> list[str]:
        return [c["address"] for c in checks if c["need_activate"]]

    @task(multiple_outputs=False)
    def plan_energy(payouts: list[dict[str, str]], checks: list[dict[str, Any]],
                    params: dict[str, Any]) -> dict[str, Any]:
        """Quote the whole batch and refuse before buying when it is too dear."""
        hook = TronEnergyHook(CONN_ID)
        client = hook.get_conn()
        sender, rent_time, ceiling = batch_params(params)
        if rent_time not in client.rules.price_rent_times:
            raise AirflowFailException(
                f"rent_time {rent_time} h cannot be quoted by the price endpoint, so the "
                "cost ceiling cannot be checked; nothing was bought")
        price = client.get_price(rent_time).price_per_10k
        energy_by_recipient = {c["address"]: c["transfer_energy"] for c in checks}
        activation_by_recipient = {c["address"]: c["need_activate"] for c in checks}
        rows = []
        for payout in payouts:
            energy = energy_by_recipient[payout["recipient"]]
            rows.append({**payout, "energy": energy,
                         "energy_cost": text(rental_cost(energy, price)),
                         "burn_cost": text(burn_cost(energy)),
                         "activated": activation_by_recipient[payout["recipient"]]})
        total_energy = sum(r["energy"] for r in rows)
        energy_cost = rental_cost(total_energy, price)
        activations = sum(activation_by_recipient.values())
        activation_cost = ACTIVATION_COST * activations
        total = energy_cost + activation_cost
        if total > ceiling:
            raise AirflowFailException(
                f"the batch would cost {total} TRX (energy {energy_cost}, activations "
                f"{activation_cost}), over max_cost_trx {ceiling}; nothing was bought")
        per_transfer = [{"energy": r["energy"]} for r in rows]
        orders = plan_orders([{"transfer_energy": r["energy"]} for r in per_transfer])
        batch = batch_key(sender, payouts)
        return {
            "sender": sender,
            "rent_time": text(rent_time),
            "recipients": rows,
            "transfers": len(rows),
            "activations": activations,
            "total_energy": total_energy,
            "energy_cost_quote": text(energy_cost),
            "activation_cost": text(activation_cost),
            "total_cost_quote": text(total),
            "burn_cost": text(burn_cost(total_energy)),
            "saving_quote": text(burn_cost(total_energy) - energy_cost),
            "price_per_10k": text(price),
            "batch_key": batch,
            "count_orders": [{**o, "target_address": sender, "purchase_key": f"{batch}:count{i}"}
                             for i, o in enumerate(orders["count_orders"])],
            "buy_orders": [{**o, "target_address": sender, "purchase_key": f"{batch}:buy{i}"}
                           for i, o in enumerate(orders["buy_orders"])],
        }

    @task
    def count_orders(plan: dict[str, Any]) -> list[dict[str, Any]]:
        return list(plan["count_orders"])

    @task
    def buy_orders(plan: dict[str, Any]) -> list[dict[str, Any]]:
        return list(plan["buy_orders"])

    @task(trigger_rule="none_failed")
    def order_ids(holder_orders: list[dict[str, Any]] | None,
                  new_orders: list[dict[str, Any]] | None) -> list[str]:
        return [o["order_id"] for o in [*(holder_orders or []), *(new_orders or [])]]

    @task(outlets=[PAYOUT_BATCH_READY], multiple_outputs=False)
    def publish_batch_ready(plan: dict[str, Any], orders: list[dict[str, Any]],
                            activations: list[dict[str, Any]],
                            outlet_events: Any = None) -> dict[str, Any]:
        spent = sum((Decimal(o["cost"]) for o in orders), Decimal(0))
        activation_spent = sum((Decimal(a.get("cost", "0")) for a in activations), Decimal(0))
        ready = {
            **{k: v for k, v in plan.items() if k not in ("count_orders", "buy_orders")},
            "orders": [{"order_id": o["order_id"], "mode": o.get("kind"),
                        "energy": o["energy_amount"], "cost": o["cost"],
                        "status": o["status"], "tx_hash": o.get("tx_hash")} for o in orders],
            "energy_cost": text(spent),
            "activation_cost": text(activation_spent),
            "total_cost": text(spent + activation_spent),
            "saving": text(Decimal(plan["burn_cost"]) - spent),
        }
        ready["saving_factor"] = text(
            (Decimal(plan["burn_cost"]) / spent).quantize(Decimal("0.01"), ROUND_CEILING)
        ) if spent else None
        if outlet_events is not None:
            outlet_events[PAYOUT_BATCH_READY].extra = ready
        return ready

    conn = CONN_ID
    payouts = load_payouts()
    checked = CheckAddressOperator(task_id="check_recipients", addresses=recipients(payouts),
                                   tronenergy_conn_id=conn)
    activated = ActivateAddressOperator(
        task_id="activate_recipients", addresses=needing_activation(checked.output),
        tronenergy_conn_id=conn)
    plan = plan_energy(payouts, checked.output)
    activated >> plan
    holders = BuyEnergyByCountOperator.partial(
        task_id="buy_for_holders", tronenergy_conn_id=conn,
        rent_time="{{ params.rent_time }}", max_cost_trx="{{ params.max_cost_trx }}",
    ).expand_kwargs(count_orders(plan))
    newcomers = BuyEnergyOperator.partial(
        task_id="buy_for_new_recipients", tronenergy_conn_id=conn,
        rent_time="{{ params.rent_time }}", max_cost_trx="{{ params.max_cost_trx }}",
    ).expand_kwargs(buy_orders(plan))
    ids = order_ids(holders.output, newcomers.output)
    waited = EnergyOrderSensor.partial(
        task_id="wait_for_orders", tronenergy_conn_id=conn, deferrable=True,
        poke_interval=2, timeout=3600,
    ).expand(order_id=ids)
    ready = publish_batch_ready(plan, waited.output, activated.output)
