"""From a prepared batch to its payouts, and from their receipts to what renting saved.

:func:`rows_of` turns a ``payout batch ready`` event into the rows
:class:`~airflow_provider_tronenergy.operators.payout.TronPayoutOperator` sends (each
with the node's energy estimate the plan used, which sizes its ``fee_limit``).
:func:`payouts_sent` is the ``payouts sent`` event: per payout what the chain
charged, and for the batch the **measured** figures, read from the receipts rather
than predicted: energy rented against energy the chain drew from stake and rentals,
TRX burned anyway, and the saving renting made against burning the rented energy
the transfers actually used (the energy the wallet already had is not counted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from airflow_provider_tronenergy.money.burn import BurnPrices
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.node.models import trx_text
from airflow_provider_tronenergy.payout.by_token import FIGURES as BY_TOKEN

FIGURES: Final[Mapping[str, str]] = {
    "payouts[].energy_total": "energy the chain charged this transfer (its receipt)",
    "payouts[].energy_from_stake": "of it, energy drawn from the wallet's stake and rentals",
    "payouts[].energy_burned": "of it, energy the chain burned TRX for",
    "payouts[].trx_burned": "TRX the transfer burned (energy, bandwidth, and the multi-sign "
                            "fee of a transfer with several signatures): its receipt's fee",
    "energy_rented": "energy the preparation's orders rented (energy_bought)",
    "energy_charged": "energy the chain charged all transfers (sum of energy_total)",
    "charged_per_rented": "energy_charged / energy_rented",
    "energy_from_rental": "energy the transfers drew that renting provided: energy drawn from "
                          "stake and rentals beyond the energy the wallet already had, at most "
                          "energy_rented",
    "trx_burned": "TRX the transfers burned anyway (energy not covered, bandwidth, "
                  "multi-sign fees)",
    "bandwidth_burned": "TRX the transfers burned for bandwidth: each transfer's bytes come "
                        "whole from staked bandwidth, else whole from the free allowance, "
                        "else all of them are burned",
    "rental_cost": "TRX paid for the rented energy (the preparation's energy_cost)",
    "burn_cost_of_rental_used": "TRX: burning energy_from_rental instead, at the chain's price",
    "saving_measured": "TRX: burn_cost_of_rental_used - rental_cost, what renting saved, "
                       "measured on chain",
    "confirmation": "the blocks the receipts were confirmed on: solidified (final) or head "
                    "(a fork may still leave them); both when some were each",
    "payouts[].confirmed_on": "the block this transfer's receipt was confirmed on",
    "payouts[].amount": "what this payout pays, in its token's units (payouts[].token)",
    **BY_TOKEN,
}


def rows_of(ready: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The payout rows of a prepared batch: recipient, amount, its token (when the row named
    one) and the planned energy."""
    recipients = ready.get("recipients")
    if not isinstance(recipients, list):
        raise ValueError("the batch-ready event has no recipients list")
    return [{"recipient": r["recipient"], "amount": r["amount"],
             **({"token": r["token"]} if r.get("token") else {}),
             **({"energy": r["energy"]} if r.get("energy") else {}),
             **({"payout_id": r["payout_id"]} if r.get("payout_id") else {})}
            for r in recipients]


def payouts_sent(ready: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """The ``payouts sent`` event: the operator's ``result`` with the batch's measured
    figures against what the preparation rented (``ready``), and its lines per token
    (``tokens``: amounts in each token's units, never summed across tokens)."""
    totals = result["totals"]
    prices = BurnPrices.of(ready.get("prices"))
    rented = int(ready.get("energy_bought") or 0)
    on_hand = int(ready.get("energy_on_hand_used") or 0)
    from_stake = int(totals["energy_from_stake"])
    from_rental = max(0, min(rented, from_stake - on_hand))
    rental_cost = Decimal(str(ready.get("energy_cost") or "0"))
    burn_of_rental = prices.burn_cost(from_rental)
    return {
        "batch_id": result["batch_id"], "sender": ready.get("sender"),
        "payouts": _payouts(result["payouts"], ready.get("recipients") or []),
        "tokens": result.get("tokens") or [],
        "states": result["states"], "confirmation": result.get("confirmation"),
        "energy_rented": rented, "energy_charged": int(totals["energy_total"]),
        "charged_per_rented": (text((Decimal(totals["energy_total"]) / rented)
                                    .quantize(Decimal("0.0001"))) if rented else None),
        "energy_from_stake": from_stake, "energy_from_rental": from_rental,
        "energy_burned": int(totals["energy_burned"]), "trx_burned": totals["trx_burned"],
        "bandwidth_burned": trx_text(int(totals.get("bandwidth_burned_sun") or 0)),
        "rental_cost": text(rental_cost),
        "burn_cost_of_rental_used": text(burn_of_rental),
        "saving_measured": text(burn_of_rental - rental_cost),
        "prices": prices.to_dict(), "figures": dict(FIGURES),
    }


def _payouts(results: Sequence[Mapping[str, Any]],
             recipients: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each payout's line, with its amount in its token's units; as the preparation wrote
    it when the result has none (a contract whose decimals were not read)."""
    amounts = [r.get("amount") for r in recipients]
    return [{**row, "amount": row.get("amount") or (
        amounts[row["row"]] if row["row"] < len(amounts) else None)} for row in results]
