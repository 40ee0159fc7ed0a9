"""What a person sees and answers before money moves: the approval of a payout plan.

Pure functions over a :func:`~airflow_provider_tronenergy.payout.energy_plan.plan_energy`
plan, so the operator that asks
(:class:`~airflow_provider_tronenergy.operators.approval.TronEnergyBatchApprovalOperator`)
only wires them to Airflow's human-in-the-loop request:

* :func:`threshold` reads ``approval_above_trx`` (empty: never ask);
* :func:`needs_approval` says whether the quoted batch (activations + energy) is above it;
* :func:`plan_markdown` is the request's body: recipients, energy on hand and to buy,
  cost, saving and balances, readable in the Required Actions page;
* :func:`record` is the JSON-safe answer (who, when, approved or not) that the
  ``payout batch ready`` event carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.templated import is_unset
from tronenergy_protocol.numbers import parse_decimal


def threshold(value: Any) -> Decimal | None:
    """``approval_above_trx`` as exact TRX; None (never ask) when it is empty or unset."""
    if is_unset(value) or (isinstance(value, str) and not value.strip()):
        return None
    amount = parse_decimal(value.strip() if isinstance(value, str) else value,
                           "approval_above_trx")
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"approval_above_trx must be a TRX amount >= 0, not {value!r}")
    return amount


def needs_approval(plan: Mapping[str, Any], above: Decimal | None) -> bool:
    """Whether the batch's whole quote (activations + energy) is above the threshold."""
    return above is not None and Decimal(plan["total_cost_quote"]) > above


def subject(plan: Mapping[str, Any]) -> str:
    """The request's headline: what is asked, in one line."""
    return (f"Approve payout batch: {plan['transfers']} transfers from {plan['sender']}, "
            f"{plan['total_cost_quote']} TRX")


def plan_markdown(plan: Mapping[str, Any], above: Decimal | None) -> str:
    """The request's body (Markdown): the plan a person approves or rejects."""
    tokens = any(row.get("token") for row in plan["recipients"])
    lines = [
        f"The batch's quote, **{plan['total_cost_quote']} TRX**, is above "
        f"`approval_above_trx` ({above} TRX). Nothing has been activated or bought yet: "
        "**Approve** activates and buys as planned; **Reject** (or no answer in time) "
        "buys nothing and skips the rest of the run.",
        "",
        f"| Recipient | {'Amount' if tokens else 'USDT'} | Energy | Rental | Burn instead | "
        "New (activation) |",
        "|---|---:|---:|---:|---:|:---:|",
    ]
    for row in plan["recipients"]:
        amount = f"{row['amount']} {_shown(plan, row.get('token'))}" if tokens else row["amount"]
        lines.append(f"| `{row['recipient']}` | {amount} | {int(row['energy']):,} | "
                     f"{row['energy_cost']} | {row['burn_cost']} | "
                     f"{'yes' if row['activated'] else ''} |")
    lines += [
        "",
        "| | |",
        "|---|---:|",
        f"| Sender (hot wallet) | `{plan['sender']}` |",
        f"| Transfers | {plan['transfers']} |",
        f"| Energy needed | {int(plan['total_energy']):,} |",
        f"| Energy on hand, used | {int(plan['energy_on_hand_used']):,} |",
        f"| Energy to buy | {int(plan['energy_to_buy']):,} ({plan['rent_time']} h) |",
        f"| Energy cost | {plan['energy_cost_quote']} TRX |",
        f"| Activations | {plan['activations']}: {plan['activation_cost']} TRX |",
        f"| **Total quote** | **{plan['total_cost_quote']} TRX** |",
        f"| Burning the energy to buy instead | {plan['burn_cost_to_buy']} TRX{_at(plan)} |",
        f"| Saving by renting (vs burning the same energy) | {plan['saving_quote']} TRX |",
        f"| Burning the whole batch, none on hand | {plan['burn_cost']} TRX |",
    ]
    if plan.get("service_balance") is not None:
        lines.append(f"| Service balance available | {plan['service_balance']} TRX |")
    chain = plan.get("onchain") or {}
    wallet = chain.get("wallet") if chain.get("onchain") else None
    if wallet and "tokens" in chain:  # rows naming tokens: each token's balance
        lines.append(f"| Hot wallet TRX | {wallet['trx']} (batch needs {chain['trx_needed']}, "
                     f"TRX payouts {chain['trx']['amount']}) |")
        lines += [f"| Hot wallet {_shown(plan, name)} | {figures['held']} (batch pays "
                  f"{figures['needed']}) |" for name, figures in chain["tokens"].items()]
        lines.append(f"| Hot wallet energy available | {int(wallet['energy_available']):,} |")
    elif wallet:
        lines += [
            f"| Hot wallet TRX | {wallet['trx']} |",
            f"| Hot wallet USDT | {wallet['usdt']} (batch pays {chain['usdt_needed']}) |",
            f"| Hot wallet energy available | {int(wallet['energy_available']):,} |",
        ]
    else:
        lines.append("| On-chain balances | not read (no `tron_node` connection) |")
    return "\n".join(lines)


def _shown(plan: Mapping[str, Any], name: str | None) -> str:
    """A token as a person reads it: its symbol and contract, else its name (USDT: none)."""
    figures = ((plan.get("onchain") or {}).get("tokens") or {}).get(name or "USDT") or {}
    if figures.get("contract") and name != "USDT":
        return f"{figures.get('symbol') or 'token'} (`{figures['contract']}`)"
    return name or "USDT"


def _at(plan: Mapping[str, Any]) -> str:
    """The energy price burning was priced at, and its source (a plan from before: none)."""
    prices = plan.get("prices")
    if not prices:
        return ""
    return f" (at {prices['energy_sun']} sun per energy, {prices['source']['energy_price']})"


def record(*, required: bool, approved: bool, event: Mapping[str, Any] | None = None,
           above: Decimal | None = None) -> dict[str, Any]:
    """The answer as the ``payout batch ready`` event shows it: JSON-safe, no secrets."""
    out: dict[str, Any] = {"required": required, "approved": approved,
                           "threshold_trx": format(above, "f") if above is not None else None}
    if event is None:
        return out
    user: Mapping[str, Any] = event.get("responded_by_user") or {}
    at = event.get("responded_at")
    out.update(
        by=user.get("name"),
        by_id=user.get("id"),
        at=at.isoformat() if isinstance(at, datetime) else (str(at) if at else None),
        timed_out=bool(event.get("timedout")) or not user,
        chosen=list(event.get("chosen_options") or []),
    )
    return out
