"""What a purchase reports: its result, placed or reused, and the lines people read.

A result is JSON-safe (the task's XCom, the journal's record, the ``payout batch ready``
event's figures): exact amounts as text, the saving against burning the same energy at
the purchase's prices, naming their source (the chain's, or the documented defaults).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client import Order, OrderStatus, SmartPurchase
from airflow_provider_tronenergy.client import Purchase as Placed
from airflow_provider_tronenergy.money.burn import BurnPrices
from airflow_provider_tronenergy.money.quote import Quote, hours, text, trx_exact
from airflow_provider_tronenergy.purchase.modes import Mode
from airflow_provider_tronenergy.purchase_journal import Entry


def burn_figures(prices: BurnPrices, energy: int | None, cost: Decimal) -> dict[str, Any]:
    """The saving against burning, at ``prices``, naming their source."""
    if not energy:
        return {"burn_cost": None, "saving": None}
    burn = prices.burn_cost(energy)
    return {"burn_cost": text(burn), "saving": text(burn - cost),
            "burn_price": {"energy_sun": prices.energy_sun, "source": prices.source}}


def placed_result(mode: Mode, placed: Placed | SmartPurchase, quote: Quote | None,
                  request: dict[str, Any], prices: BurnPrices) -> dict[str, Any]:
    """The result of an order just placed (pending: the wait follows)."""
    energy = placed.energy_amount or (quote.energy if quote else None)
    result: dict[str, Any] = {
        "mode": mode.name,
        "order_id": placed.order_id,
        "status": OrderStatus.PENDING.value,
        "tx_hash": getattr(placed, "tx_hash", "") or "",
        "target_address": mode.target,
        "energy_amount": energy,
        "rent_time": request["rent_time"],
        "cost": text(placed.cost),
        **burn_figures(prices, energy, placed.cost),
        "quote": quote.to_dict() if quote else None,
        "reused": False,
        "dry_run": False,
    }
    if isinstance(placed, SmartPurchase):
        result["activated"] = placed.activated
    return result


def order_result(mode: Mode, order: Order, entry: Entry, prices: BurnPrices
                 ) -> dict[str, Any]:
    """The result of a journaled order that recorded none (a person's ``--order-id``), from
    the service's order."""
    energy = order.energy_amount
    cost = order.cost if order.cost is not None else Decimal(0)
    return {"mode": mode.name, "order_id": order.order_id,
            "target_address": order.target_address or entry.target_address,
            "energy_amount": energy, "rent_time": entry.request.get("rent_time"),
            "cost": text(cost), **burn_figures(prices, energy, cost), "quote": None,
            "dry_run": False}


def amount(request: dict[str, Any]) -> str:
    """A request's size, for people: transfers or energy."""
    if "count" in request:
        return f"{request['count']} transfers"
    return f"{int(request.get('energy_amount') or 0):,} energy"


def describe(mode: Mode, quote: Quote | None) -> str:
    """The journal's description of a purchase, for people (the CLI, the logs)."""
    if quote is None:
        return f"{mode.name} for {mode.target} (cost unknown)"
    extra = f" + activation {quote.activation_cost} TRX" if quote.activation_cost else ""
    return (f"{mode.name} {quote.energy:,} energy for {mode.target} "
            f"({hours(quote.rent_time)}) at {quote.energy_cost} TRX{extra}")


def human_line(result: dict[str, Any]) -> str:
    """What a placed order bought, for the task log: exact amounts, as the results, the
    ``payout batch ready`` event and the main job's report show them (never rounded)."""
    energy = result["energy_amount"]
    price = result.get("burn_price") or {}
    at = (f" at {price['energy_sun']} sun per energy, the chain's"
          if price.get("source") == "chain" else "")
    burn = f" (burning would cost {trx_exact(Decimal(result['burn_cost']))}{at})" \
        if result.get("burn_cost") else ""
    activated = ", activated the recipient" if result.get("activated") else ""
    return (f"bought {energy:,} energy for {result['target_address']} "
            f"({hours(Decimal(result['rent_time']))}): order {result['order_id']}, "
            f"{trx_exact(Decimal(result['cost']))}{burn}{activated}")
