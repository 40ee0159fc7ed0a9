"""The energy a payout batch needs, and the cheapest orders that buy it, quoted and guarded.

:func:`plan_energy` quotes the whole batch (energy and activations) at the service's
price before anything is activated or bought, refuses when it is over
``max_spend_trx`` or the balance, and splits the energy into orders
(:func:`plan_orders`) within the price endpoint's ``min_energy`` / ``max_energy``;
only the first transfer of a token to a new recipient is a first transfer, each row's
energy that of its token's contract, a TRX row's none (:func:`row_energies`). With the
pre-flight's answer (:mod:`.onchain`, :mod:`.token_preflight`), each transfer's energy is
the node's estimate for its contract and only the energy the wallet lacks, for all the
contracts together, is rented. Each order carries a ``purchase_key`` under the batch's (the plan's
``purchase_key``, which the batch buy's ``max_spend_trx`` counts under) (:mod:`.identity`).

Savings count only what renting replaced: the energy the wallet already had is not
saved by renting, so it is in ``burn_cost`` (the whole batch) but never in
``saving``. A recipient's ``energy_cost`` is its share of what the orders cost
(:func:`costed`), so the column sums to what was paid.

Burning is priced at the chain's figures when the pre-flight read them from a node
(``prices``, each figure naming its source: ``chain``), else at the documented
defaults (``default``); see :mod:`~airflow_provider_tronenergy.money.burn`.

A plan the service's limits cannot buy is :class:`PlanRefused`, a bad parameter a
:class:`~.rows.PayoutInputError`, a spend over the ceiling or the balance the money
guard's ``SpendRefused``: none is retried, and nothing is bought. Amounts are exact
decimal text throughout (JSON-safe for XCom), never floats.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from decimal import Decimal, localcontext
from typing import Any

from airflow_provider_tronenergy.client import Price, TronEnergyClient
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.money.burn import BurnPrices
from airflow_provider_tronenergy.money.guard import MAX_SPEND, guard_cost, trusted_answers
from airflow_provider_tronenergy.money.quote import (
    ACTIVATION_COST,
    allocate,
    rental_cost,
    text,
)
from airflow_provider_tronenergy.node.tokens import TRX, USDT
from airflow_provider_tronenergy.payout.batch import run_batch_id
from airflow_provider_tronenergy.payout.identity import batch_key, keyed
from airflow_provider_tronenergy.payout.onchain import shortfall_orders
from airflow_provider_tronenergy.payout.params import NOTHING_BOUGHT, BatchParams
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from airflow_provider_tronenergy.payout.sheet import exact_text
from tronenergy_protocol.energy import ENERGY_FIRST_TRANSFER

log = logging.getLogger(__name__)
MAX_EXACT_DIGITS = 100
"""Digits a batch's sum of amounts is worked out in: 15 before the point, 36 after, and
room for the rows' count (never rounded)."""


class PlanRefused(NotRetryable, RuntimeError):
    """The service's limits leave no order that buys the batch's energy (one under its
    ``min_energy``, or no transfer within its ``max_energy``): nothing was bought."""


def row_energies(payouts: Sequence[Mapping[str, str]], checks: Mapping[str, Mapping[str, Any]],
                 price: Price, chain: Mapping[str, Any] | None
                 ) -> list[tuple[Mapping[str, str], str, int]]:
    """Each row with its token's journal name and its transfer's energy, per contract.

    A TRX row needs none. A USDT row: the node's estimate (``chain``), else the
    check-address rule; another token's: its contract's estimate, which only the
    pre-flight reads (:mod:`.token_preflight`): without a node such a row is refused, never
    sized at USDT's figures. A later transfer of a token to the same recipient costs at
    most that contract's holder figure (the first made it a holder)."""
    names = list(chain.get("row_tokens") or []) if chain else []
    if len(names) != len(payouts):
        names = [_named(p) for p in payouts]
    figures: Mapping[str, Mapping[str, Any]] = (chain or {}).get("tokens") or {}
    usdt_estimates: Mapping[str, int] = (chain or {}).get("energies") or {}
    usdt_holder = (int(chain.get("holder_energy") or price.energy_per_transfer) if chain
                   else price.energy_per_transfer)
    seen: set[tuple[str, str]] = set()
    result = []
    for payout, name in zip(payouts, names, strict=True):
        recipient = payout["recipient"]
        if name == TRX:
            energy = 0
        elif name == USDT:
            first = int(usdt_estimates.get(recipient, checks[recipient]["transfer_energy"]))
            energy = min(first, usdt_holder) if (name, recipient) in seen else first
        elif name in figures:
            first = int(figures[name]["energies"][recipient])
            holder = int(figures[name]["holder_energy"])
            energy = min(first, holder) if (name, recipient) in seen else first
        else:
            raise PayoutInputError(
                f"payouts of token {name} need the node's pre-flight to size their energy "
                f"from its contract (tron_node_conn_id names the node); {NOTHING_BOUGHT}")
        seen.add((name, recipient))
        result.append((payout, name, energy))
    return result


def _named(payout: Mapping[str, str]) -> str:
    """A row's token without a node: USDT (none named), TRX, else the text it names."""
    token = payout.get("token") or USDT
    return TRX if token.upper() == TRX else (USDT if token.upper() == USDT else token)


def by_token(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Transfers, amount and energy per token (rows without one: USDT), for the report; the
    amounts summed exactly (an 18-decimal token's pass a Decimal context's 28 digits)."""
    sums: dict[str, dict[str, Any]] = {}
    with localcontext(prec=MAX_EXACT_DIGITS):
        for row in rows:
            entry = sums.setdefault(row.get("token") or USDT,
                                    {"transfers": 0, "amount": Decimal(0), "energy": 0})
            entry["transfers"] += 1
            entry["amount"] += Decimal(row["amount"])
            entry["energy"] += int(row["energy"])
    return {name: {**entry, "amount": exact_text(entry["amount"])}
            for name, entry in sums.items()}


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
        raise PlanRefused(
            f"an order of {smallest:,} energy is under the service's min_energy {min_energy:,}; "
            f"{NOTHING_BOUGHT}")
    return {"count_orders": count_orders, "buy_orders": buy_orders}


def _chunks(total: int, size: int) -> list[int]:
    if total and size < 1:
        raise PlanRefused(f"no transfer fits the service's max_energy; {NOTHING_BOUGHT}")
    return [min(size, total - start) for start in range(0, total, size or 1)]


def plan_energy(client: TronEnergyClient, payouts: Sequence[Mapping[str, str]],
                checks: Sequence[Mapping[str, Any]], batch: BatchParams,
                chain: Mapping[str, Any] | None = None, *, energy_margin: int = 0,
                context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Quote the batch, refuse when it is too dear, and plan its orders (see module doc).

    ``checks`` are
    :class:`~airflow_provider_tronenergy.operators.address.TronEnergyCheckAddressOperator`
    results (``address``, ``transfer_energy``, ``need_activate``). It runs before any
    activation (the quote is what a person approves), so the ceiling and the service
    balance both cover energy and activations. ``chain`` is
    :func:`~.onchain.preflight`'s answer: with it, each transfer's energy is the node's
    estimate and only the energy the wallet does not already have is bought, less
    ``energy_margin`` kept back. ``context`` is the run's (for the default ``batch_id``,
    :func:`~.batch.run_batch_id`).
    """
    batch_id = batch.batch_id or run_batch_id(context or {})
    if batch.rent_time not in client.rules.price_rent_times:
        raise PayoutInputError(
            f"rent_time {batch.rent_time} h cannot be quoted by the price endpoint, so the "
            f"cost ceiling cannot be checked; {NOTHING_BOUGHT}")
    with trusted_answers("the batch's quote", NOTHING_BOUGHT):
        price = client.get_price(batch.rent_time)
    onchain = bool(chain and chain.get("onchain"))
    prices = _prices(chain if chain and onchain else None)
    by_address = {c["address"]: c for c in checks}
    rows: list[dict[str, Any]] = [
        {**p, **({"token": name} if p.get("token") else {}), "energy": energy,
         "activated": bool(by_address.get(p["recipient"], {}).get("need_activate"))}
        for p, name, energy in row_energies(payouts, by_address, price,
                                            chain if chain and onchain else None)]
    total_energy = sum(row["energy"] for row in rows)
    key = batch_key(batch.sender, batch_id, payouts)
    log.info("batch %s: its orders are journaled under %s:...", batch_id, key)
    margin = 0
    if chain and onchain:
        margin = energy_margin
        on_hand = max(0, int(chain["wallet"]["energy_available"]) - margin)
        orders: dict[str, Any] = {"count_orders": [], "buy_orders": keyed(
            batch.sender, key, "buy", shortfall_orders(
                total_energy, on_hand, min_energy=price.min_energy,
                max_energy=price.max_energy))}
    else:
        on_hand = 0
        orders = _keyed_orders(batch.sender, key, [r for r in rows if r["energy"]], price)
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
                         ceiling=batch.max_spend, check_balance=True, nothing=NOTHING_BOUGHT,
                         limit_name=MAX_SPEND)
    return {
        "sender": batch.sender,
        "batch_id": batch_id,
        "purchase_key": key,
        "rent_time": text(batch.rent_time),
        "recipients": costed(rows, energy_cost, prices),
        "transfers": len(rows),
        "by_token": by_token(rows),
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


def costed(rows: Sequence[Mapping[str, Any]], energy_cost: Decimal,
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
        raise PayoutInputError(f"the pre-flight's prices cannot be read ({exc}); "
                               f"{NOTHING_BOUGHT}") from None


def _keyed_orders(sender: str, key: str, rows: Sequence[Mapping[str, Any]],
                  price: Price) -> dict[str, Any]:
    orders = plan_orders([row["energy"] for row in rows],
                         energy_per_transfer=price.energy_per_transfer,
                         min_energy=price.min_energy, max_energy=price.max_energy)
    return {kind: keyed(sender, key, tag, orders[kind])
            for kind, tag in (("count_orders", "count"), ("buy_orders", "buy"))}
