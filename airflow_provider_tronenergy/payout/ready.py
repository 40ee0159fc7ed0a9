"""The "payout batch ready" event: what a prepared batch bought, what it cost, what it saved.

:func:`batch_ready` is the payload of the Asset event the preparation publishes once
the energy is on the wallet: the plan, the orders as delivered, what they cost, the
on-chain confirmation of their delegations (when a node was asked) and who approved
the spend, when. The saving is against burning only the energy renting provided (the
energy the wallet already had is not counted); ``figures`` (:data:`FIGURES`) says, one
line each, what every figure compares. Amounts are exact decimal text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from airflow_provider_tronenergy.money.burn import BurnPrices
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.payout.energy_plan import costed

FIGURES: Mapping[str, str] = {
    "recipients[].amount": "what this row pays to the recipient, in its token",
    "recipients[].token": "the row's token (TRX, USDT or a contract); absent: USDT",
    "recipients[].energy": "energy this row's transfer needs (the node's estimate for its "
                           "token's contract, else the check-address rule; TRX: none)",
    "by_token": "per token: transfers, the amount they pay and the energy they need",
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
        **{k: v for k, v in plan.items()
           if k not in ("count_orders", "buy_orders", "purchase_key")},
        "recipients": costed(plan["recipients"], spent, prices),
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
