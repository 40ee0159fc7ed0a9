"""Preparing a USDT payout batch: read and check the rows, plan the cheapest energy, report.

The library half of the ``batch_payout_preparation`` example DAG, so a DAG that
prepares payouts is a few task definitions around these functions:

* :func:`load_payouts` / :func:`parse_payouts` turn a CSV file or a list of rows
  into validated payouts (full base58check address, positive amount with at most
  6 decimals); every bad row is reported by line and the task fails without retry;
* :func:`plan_energy` quotes the whole batch (energy and activations) at the
  service's price before anything is activated or bought, refuses when it is over
  ``max_cost_trx`` or the balance, and
  splits the energy into orders (:func:`plan_orders`) within the price
  endpoint's ``min_energy`` / ``max_energy``; only the first transfer to a new
  recipient is a first transfer; each order carries a ``purchase_key`` naming the
  batch (:func:`batch_key`: the sender, the ``batch_id``, the rows), so a retry, a
  clear or a rerun of the same batch reuses its still-valid orders, and the next
  period's identical payroll (another ``batch_id``) buys its own;
* :func:`batch_ready` is the payload of the "batch ready" Asset event: what was
  bought, what it cost, and what renting saved against burning the same energy;
  its ``figures`` say, one line each, what every figure compares (:data:`FIGURES`).

Savings count only what renting replaced: the energy the wallet already had is not
saved by renting, so it is in ``burn_cost`` (the whole batch) but never in
``saving``. A recipient's ``energy_cost`` is its share of what the orders cost, so
the column sums to what was paid.

Burning is priced at the chain's figures when the pre-flight read them from a node
(``prices``, each figure naming its source: ``chain``), else at the documented
defaults (``default``); see :mod:`~airflow_provider_tronenergy.money.burn`.

Amounts are exact decimal text throughout (JSON-safe for XCom), never floats.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any

from airflow.providers.common.compat.sdk import AirflowFailException, AirflowSkipException

from airflow_provider_tronenergy.client import Price, TronEnergyClient
from airflow_provider_tronenergy.client.validation import address as valid_address
from airflow_provider_tronenergy.money.burn import BurnPrices
from airflow_provider_tronenergy.money.guard import guard_cost, trusted_answers
from airflow_provider_tronenergy.money.quote import (
    ACTIVATION_COST,
    allocate,
    rental_cost,
    text,
)
from airflow_provider_tronenergy.payout.batch import run_batch_id
from airflow_provider_tronenergy.payout.onchain import shortfall_orders
from airflow_provider_tronenergy.payout.params import NOTHING_BOUGHT, BatchParams, ChainParams
from airflow_provider_tronenergy.payout.rows import DEFAULT_TOKEN, TOKENS, amount_problem
from airflow_provider_tronenergy.protocol.energy import ENERGY_FIRST_TRANSFER
from airflow_provider_tronenergy.protocol.numbers import parse_decimal

log = logging.getLogger(__name__)
def parse_payouts(rows: Iterable[Sequence[str]], first_line: int = 1) -> list[dict[str, str]]:
    """Validated ``{"recipient", "amount"}`` payouts; every bad row is reported by line, and
    every recipient that appears more than once is logged."""
    payouts: list[dict[str, str]] = []
    errors: list[str] = []
    lines: dict[str, list[int]] = {}
    for line, row in enumerate(rows, start=first_line):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            errors.append(f"line {line}: expected 'recipient,amount', got {len(row)} fields")
            continue
        recipient, raw_amount = (cell.strip() for cell in row)
        try:
            valid_address(recipient, "recipient")
            amount = parse_decimal(raw_amount, "amount")
        except ValueError as exc:
            errors.append(f"line {line}: {exc}")
            continue
        problem = amount_problem(amount, TOKENS[DEFAULT_TOKEN])
        if problem is not None:
            errors.append(f"line {line}: amount {raw_amount!r} {problem}")
            continue
        payouts.append({"recipient": recipient, "amount": text(amount)})
        lines.setdefault(recipient, []).append(line)
    if errors:
        raise AirflowFailException(f"bad payout rows ({NOTHING_BOUGHT}):\n" + "\n".join(errors))
    if not payouts:
        raise AirflowFailException("the payout batch is empty")
    for recipient, where in lines.items():
        if len(where) > 1:  # legitimate or a pasted row twice: a person should see it
            log.warning("recipient %s appears %d times (lines %s): %d payouts to it, planned "
                        "as one first transfer at most", recipient, len(where),
                        ", ".join(map(str, where)), len(where))
    return payouts


def load_payouts(params: Mapping[str, Any]) -> list[dict[str, str]]:
    """The batch of a run: ``payouts_file`` (CSV, header optional) or the ``payouts`` rows.

    Its parameters are checked first, so a bad sender or ceiling fails here, before
    any address is activated. A run with neither (a scheduled run nobody handed a
    batch) is skipped: there is nothing to prepare.
    """
    path, given = params.get("payouts_file") or "", params.get("payouts") or []
    if not path and not given:
        raise AirflowSkipException("no payouts_file and no payouts: nothing to prepare")
    BatchParams.of(params)
    if not path:
        return parse_payouts([[str(r.get("recipient", "")), str(r.get("amount", ""))]
                              for r in given])
    rows = list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8"))))
    if rows and rows[0] and rows[0][0].strip().lower() == "recipient":
        return parse_payouts(rows[1:], first_line=2)
    return parse_payouts(rows)


def recipients(payouts: Sequence[Mapping[str, str]]) -> list[str]:
    """Each recipient once, in first-occurrence order (what is checked and activated)."""
    return list(dict.fromkeys(p["recipient"] for p in payouts))


def batch_key(sender: str, batch_id: str, payouts: Sequence[Mapping[str, str]]) -> str:
    """Names this batch's purchases: the same batch (sender, ``batch_id``, rows) reuses its
    still-valid orders; another period's identical rows are another batch."""
    rows = json.dumps([[p["recipient"], p["amount"]] for p in payouts], separators=(",", ":"))
    return f"payout:{sender}:{batch_id}:{hashlib.sha256(rows.encode()).hexdigest()[:16]}"


def transfer_energies(payouts: Sequence[Mapping[str, str]], energy_of: Mapping[str, int],
                      energy_per_transfer: int) -> list[int]:
    """Each payout's energy: a recipient's first transfer as ``energy_of`` says, every later
    one to it at most ``energy_per_transfer`` (the first transfer made it a holder)."""
    seen: set[str] = set()
    energies = []
    for payout in payouts:
        energy = energy_of[payout["recipient"]]
        energies.append(min(energy, energy_per_transfer) if payout["recipient"] in seen
                        else energy)
        seen.add(payout["recipient"])
    return energies


def plan_orders(transfer_energies: Sequence[int], *, energy_per_transfer: int, min_energy: int,
                max_energy: int) -> dict[str, list[dict[str, Any]]]:
    """Orders that buy exactly the transfers' energy, each within the service's limits.

    Transfers to holders (``energy_per_transfer`` each) go into buy-count orders of
    up to ``max_energy // energy_per_transfer`` transfers; first transfers
    (131,000 each) into buy orders of whole transfers up to ``max_energy``. An order
    the service would refuse (under ``min_energy``, or no transfer fits
    ``max_energy``) fails here, before anything is bought.
    """
    holders = sum(1 for energy in transfer_energies if energy <= energy_per_transfer)
    newcomers = len(transfer_energies) - holders
    count_orders = [{"count": n} for n in _chunks(holders, max_energy // energy_per_transfer)]
    buy_orders = [{"energy_amount": n * ENERGY_FIRST_TRANSFER}
                  for n in _chunks(newcomers, max_energy // ENERGY_FIRST_TRANSFER)]
    smallest = min([o["count"] * energy_per_transfer for o in count_orders]
                   + [o["energy_amount"] for o in buy_orders], default=min_energy)
    if smallest < min_energy:
        raise AirflowFailException(
            f"an order of {smallest:,} energy is under the service's min_energy {min_energy:,}; "
            f"{NOTHING_BOUGHT}")
    return {"count_orders": count_orders, "buy_orders": buy_orders}


def _chunks(total: int, size: int) -> list[int]:
    if total and size < 1:
        raise AirflowFailException(f"no transfer fits the service's max_energy; {NOTHING_BOUGHT}")
    return [min(size, total - start) for start in range(0, total, size or 1)]


def plan_energy(client: TronEnergyClient, payouts: Sequence[Mapping[str, str]],
                checks: Sequence[Mapping[str, Any]], params: Mapping[str, Any],
                chain: Mapping[str, Any] | None = None, *,
                context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Quote the batch, refuse when it is too dear, and plan its orders (see module doc).

    ``checks`` are
    :class:`~airflow_provider_tronenergy.operators.address.TronEnergyCheckAddressOperator`
    results (``address``, ``transfer_energy``, ``need_activate``). It runs before any
    activation (the quote is what a person approves), so the ceiling and the service
    balance both cover energy and activations. ``chain`` is :func:`~.onchain.preflight`'s answer:
    with it, each transfer's energy is the node's estimate and only the energy the
    wallet does not already have is bought. ``context`` is the run's (for the default
    ``batch_id``, :func:`run_batch_id`).
    """
    batch = BatchParams.of(params)
    batch_id = batch.batch_id or run_batch_id(context or {})
    if batch.rent_time not in client.rules.price_rent_times:
        raise AirflowFailException(
            f"rent_time {batch.rent_time} h cannot be quoted by the price endpoint, so the "
            f"cost ceiling cannot be checked; {NOTHING_BOUGHT}")
    with trusted_answers("the batch's quote", NOTHING_BOUGHT):
        price = client.get_price(batch.rent_time)
    onchain = bool(chain and chain.get("onchain"))
    estimates: Mapping[str, int] = chain["energies"] if chain and onchain else {}
    prices = _prices(chain if chain and onchain else None)
    by_address = {c["address"]: c for c in checks}
    energies = transfer_energies(
        payouts, {a: estimates.get(a, c["transfer_energy"]) for a, c in by_address.items()},
        int(chain.get("holder_energy") or price.energy_per_transfer) if chain and onchain
        else price.energy_per_transfer)
    rows = [{**p, "energy": energy, "activated": by_address[p["recipient"]]["need_activate"]}
            for p, energy in zip(payouts, energies, strict=True)]
    total_energy = sum(row["energy"] for row in rows)
    key = batch_key(batch.sender, batch_id, payouts)
    log.info("batch %s: its orders are journaled under %s:...", batch_id, key)
    margin = 0
    if chain and onchain:
        margin = ChainParams.of(params).energy_margin
        on_hand = max(0, int(chain["wallet"]["energy_available"]) - margin)
        orders: dict[str, Any] = {"count_orders": [], "buy_orders": _keyed(
            batch.sender, key, "buy", shortfall_orders(
                total_energy, on_hand, min_energy=price.min_energy,
                max_energy=price.max_energy))}
    else:
        on_hand = 0
        orders = _keyed_orders(batch.sender, key, rows, price)
    to_buy = (sum(o["count"] for o in orders["count_orders"]) * price.energy_per_transfer
              + sum(o["energy_amount"] for o in orders["buy_orders"]))
    energy_cost = rental_cost(to_buy, price.price_per_10k)
    on_hand_used = min(total_energy, on_hand)
    burn_to_buy = prices.burn_cost(min(to_buy, total_energy - on_hand_used))
    whole_rental = rental_cost(total_energy, price.price_per_10k)
    activations = sum(bool(c["need_activate"]) for c in by_address.values())
    activation_cost = ACTIVATION_COST * activations
    what = (f"the batch ({total_energy:,} energy: {energy_cost} TRX, {activations} "
            f"activations: {activation_cost} TRX)")
    # Planned before any activation (a person may have to approve the whole spend), so
    # the balance must cover both.
    balance = guard_cost(client, energy_cost + activation_cost, what=what,
                         ceiling=batch.max_cost, check_balance=True, nothing=NOTHING_BOUGHT)
    return {
        "sender": batch.sender,
        "batch_id": batch_id,
        "rent_time": text(batch.rent_time),
        "recipients": _costed(rows, energy_cost, prices),
        "transfers": len(rows),
        "activations": activations,
        "total_energy": total_energy,
        "energy_cost_quote": text(energy_cost),
        "activation_cost": text(activation_cost),
        "total_cost_quote": text(energy_cost + activation_cost),
        "burn_cost": text(prices.burn_cost(total_energy)),
        "burn_cost_to_buy": text(burn_to_buy),
        "saving_quote": text(burn_to_buy - energy_cost),
        "prices": prices.to_dict(),
        "price_per_10k": text(price.price_per_10k),
        "energy_on_hand_used": on_hand_used,
        "energy_margin": margin,
        "energy_to_buy": to_buy,
        "whole_batch_rental_cost": text(whole_rental),
        "service_balance": text(balance) if balance is not None else None,
        "onchain": dict(chain) if chain else {"onchain": False},
        **orders,
    }


def _costed(rows: Sequence[Mapping[str, Any]], energy_cost: Decimal,
            prices: BurnPrices) -> list[dict[str, Any]]:
    """Each row with its share of ``energy_cost`` (by energy: the shares sum to it exactly)
    and what burning its transfer's energy would cost."""
    shares = allocate(energy_cost, [int(row["energy"]) for row in rows])
    return [{**row, "energy_cost": text(share),
             "burn_cost": text(prices.burn_cost(int(row["energy"])))}
            for row, share in zip(rows, shares, strict=True)]


def _prices(chain: Mapping[str, Any] | None) -> BurnPrices:
    """The chain's prices the pre-flight read, else the documented defaults."""
    try:
        return BurnPrices.of(chain.get("prices") if chain else None)
    except ValueError as exc:
        raise AirflowFailException(f"the pre-flight's prices cannot be read ({exc}); "
                                   f"{NOTHING_BOUGHT}") from None


def _keyed_orders(sender: str, key: str, rows: Sequence[Mapping[str, Any]],
                  price: Price) -> dict[str, Any]:
    orders = plan_orders([row["energy"] for row in rows],
                         energy_per_transfer=price.energy_per_transfer,
                         min_energy=price.min_energy, max_energy=price.max_energy)
    return {kind: _keyed(sender, key, tag, orders[kind])
            for kind, tag in (("count_orders", "count"), ("buy_orders", "buy"))}


def _keyed(sender: str, key: str, tag: str,
           orders: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{**order, "target_address": sender, "purchase_key": f"{key}:{tag}{i}"}
            for i, order in enumerate(orders)]


FIGURES: Mapping[str, str] = {
    "recipients[].amount": "USDT this row pays to the recipient",
    "recipients[].energy": "energy this row's transfer needs (the node's estimate, else the "
                           "check-address rule)",
    "recipients[].energy_cost": "TRX: this row's share of energy_cost, by energy; the shares "
                                "sum exactly to energy_cost (what was paid)",
    "recipients[].burn_cost": "TRX: burning this row's energy with none on hand, at prices",
    "total_energy": "energy the batch's transfers need in all",
    "energy_on_hand_used": "energy the wallet already had and the batch uses: not rented, so "
                           "never counted as saved by renting",
    "energy_to_buy": "energy the plan rents: what the wallet lacks (at least the service's "
                     "min_energy per order)",
    "energy_bought": "energy the delivered orders rented",
    "price_per_10k": "TRX per 10,000 energy for rent_time: the service's price when planned",
    "energy_cost_quote": "TRX: the quote for renting energy_to_buy at price_per_10k",
    "energy_cost": "TRX paid for the energy orders (the sum of orders[].cost)",
    "activation_cost": "TRX paid to activate the recipients that needed it",
    "total_cost_quote": "TRX: energy_cost_quote + the activations' quote",
    "total_cost": "TRX paid in all: energy_cost + activation_cost",
    "burn_cost": "TRX: burning the whole batch's energy (total_energy, the energy on hand "
                 "included) at prices; what the batch would burn with no energy at all",
    "burn_cost_to_buy": "TRX: burning instead the energy the plan rents (energy_to_buy, at "
                        "most what the wallet lacks), at prices",
    "burn_cost_bought": "TRX: burning instead the energy renting provided (energy_bought, at "
                        "most what the wallet lacked), at prices",
    "saving_quote": "TRX: burn_cost_to_buy - energy_cost_quote, what renting is quoted to "
                    "save against burning the same energy",
    "saving": "TRX: burn_cost_bought - energy_cost, what renting saved against burning the "
              "energy it provided (the energy on hand is not counted)",
    "saving_factor": "burn_cost_bought / energy_cost, rounded down to 0.01: times cheaper "
                     "renting was than burning the same energy",
    "whole_batch_rental_cost": "TRX: renting all of total_energy at price_per_10k, as if "
                               "nothing were on hand",
    "saving_vs_whole_rental": "TRX: whole_batch_rental_cost - energy_cost, what the energy on "
                              "hand saved against renting it all",
    "service_balance": "TRX available at the service when planned",
    "prices": "sun burned per energy, per bandwidth byte and per account created, each "
              "naming its source (chain, or default: the documented constants)",
}
"""What each figure of the ``payout batch ready`` event compares, one line each; the event
carries it as ``figures``."""


def batch_ready(plan: Mapping[str, Any], orders: Sequence[Mapping[str, Any]],
                activations: Sequence[Mapping[str, Any]],
                confirmation: Mapping[str, Any] | None = None,
                approval: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The "batch ready" payload: the plan, the orders as delivered, what they cost, the
    on-chain confirmation of their delegations (when a node was asked) and who approved
    the spend, when (:mod:`~airflow_provider_tronenergy.payout.approvals`).

    Each recipient's ``energy_cost`` becomes its share of what the orders cost; the
    saving is against burning only the energy renting provided; ``figures``
    (:data:`FIGURES`) says what each figure compares."""
    orders, activations = orders or [], activations or []
    spent = sum((Decimal(o["cost"]) for o in orders), Decimal(0))
    activation_spent = sum((Decimal(a.get("cost", "0")) for a in activations), Decimal(0))
    prices = BurnPrices.of(plan.get("prices"))  # a plan's own: read when it was made
    bought = sum(int(o["energy_amount"]) for o in orders)
    lacking = int(plan["total_energy"]) - int(plan["energy_on_hand_used"])
    burn = prices.burn_cost(min(bought, lacking))  # what renting replaced, and only that
    return {
        **{k: v for k, v in plan.items() if k not in ("count_orders", "buy_orders")},
        "recipients": _costed(plan["recipients"], spent, prices),
        "orders": [{"order_id": o["order_id"], "mode": o.get("kind"),
                    "energy": o["energy_amount"], "cost": o["cost"],
                    "status": o["status"], "tx_hash": o.get("tx_hash")} for o in orders],
        "energy_cost": text(spent),
        "activation_cost": text(activation_spent),
        "total_cost": text(spent + activation_spent),
        "energy_bought": bought,
        "confirmation": dict(confirmation) if confirmation else {"onchain": False},
        "approval": dict(approval) if approval else {"required": False},
        "burn_cost_bought": text(burn),
        "saving": text(burn - spent),
        "saving_vs_whole_rental": text(Decimal(plan["whole_batch_rental_cost"]) - spent),
        # Rounded down: a ratio a person reads never claims more than was saved.
        "saving_factor": (text((burn / spent).quantize(Decimal("0.01"), ROUND_FLOOR))
                          if spent else None),
        "figures": dict(FIGURES),
    }
