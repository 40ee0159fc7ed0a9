"""The energy plan of a payout batch (airflow_provider_tronenergy.payout.energy_plan): orders
within the service's limits, and the quote and guards against the sandbox over HTTP."""

from __future__ import annotations

from decimal import Decimal

import pytest

from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.payout import energy_plan
from airflow_provider_tronenergy.payout.energy_plan import PlanRefused
from airflow_provider_tronenergy.payout.identity import batch_key
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from support.plans import batch_of, sandbox_client, small_batch
from tronenergy_protocol.address import random_address

LIVE_LIMITS = {"energy_per_transfer": 65_000, "min_energy": 32_000, "max_energy": 5_000_000}


def test_plan_orders_buys_exactly_what_transfers_need():
    energies = [65_000] * 80 + [131_000] * 40
    plan = energy_plan.plan_orders(energies, **LIVE_LIMITS)
    assert [o["count"] for o in plan["count_orders"]] == [76, 4]
    assert [o["energy_amount"] for o in plan["buy_orders"]] == [38 * 131_000, 2 * 131_000]
    energy = sum(o["count"] * 65_000 for o in plan["count_orders"]) + sum(
        o["energy_amount"] for o in plan["buy_orders"])
    assert energy == 80 * 65_000 + 40 * 131_000
    assert all(o["energy_amount"] <= 5_000_000 for o in plan["buy_orders"])


def test_plan_orders_follows_the_price_endpoints_limits_not_constants():
    plan = energy_plan.plan_orders([65_000] * 10 + [131_000] * 5, energy_per_transfer=65_000,
                               min_energy=32_000, max_energy=300_000)
    assert [o["count"] for o in plan["count_orders"]] == [4, 4, 2]
    assert [o["energy_amount"] for o in plan["buy_orders"]] == [262_000, 262_000, 131_000]


@pytest.mark.parametrize("limits, words", [
    ({"min_energy": 200_000, "max_energy": 5_000_000}, "min_energy"),
    ({"min_energy": 32_000, "max_energy": 100_000}, "max_energy"),
])
def test_orders_the_service_would_refuse_fail_before_buying(limits, words):
    with pytest.raises(PlanRefused, match=words):
        energy_plan.plan_orders([65_000, 131_000], energy_per_transfer=65_000, **limits)


def test_an_empty_plan_has_no_orders():
    assert energy_plan.plan_orders([], **LIVE_LIMITS) == {"count_orders": [], "buy_orders": []}


def test_plan_energy_quotes_at_the_services_price_and_keys_each_order(sandbox, control):
    rows, checks, params = small_batch(control)
    with sandbox_client(sandbox) as client:
        plan = energy_plan.plan_energy(client, rows, checks, batch_of(params))
        price = client.get_price(Decimal(1))
    assert plan["total_energy"] == 2 * 65_000 + 131_000
    assert plan["activations"] == 1 and Decimal(plan["activation_cost"]) == Decimal("1.1")
    assert Decimal(plan["price_per_10k"]) == price.price_per_10k
    assert Decimal(plan["energy_cost_quote"]) == (
        Decimal(261_000) * price.price_per_10k / 10_000).quantize(Decimal("0.000001"),
                                                                  rounding="ROUND_CEILING")
    key = batch_key(params["sender_address"], "2026-01", rows)
    assert plan["batch_id"] == "2026-01"
    assert plan["count_orders"] == [{"count": 2, "target_address": params["sender_address"],
                                     "purchase_key": f"{key}:count0"}]
    assert plan["buy_orders"] == [{"energy_amount": 131_000,
                                   "target_address": params["sender_address"],
                                   "purchase_key": f"{key}:buy0"}]
    assert control.orders(params["sender_address"]) == []  # planning buys nothing


def test_plan_energy_refuses_over_the_ceiling_or_the_balance(sandbox, control):
    rows, checks, params = small_batch(control)
    with sandbox_client(sandbox) as client:
        with pytest.raises(NotRetryable, match="max_spend_trx 1 TRX: the batch"):
            energy_plan.plan_energy(client, rows, checks,
                                       batch_of({**params, "max_spend_trx": "1"}))
        control.balance("2")
        with pytest.raises(NotRetryable, match="available balance 2"):
            energy_plan.plan_energy(client, rows, checks, batch_of(params))


def test_plan_energy_refuses_a_rent_time_it_cannot_quote(sandbox, control):
    rows, checks, params = small_batch(control)
    with sandbox_client(sandbox) as client, pytest.raises(PayoutInputError,
                                                   match="cannot be quoted"):
        energy_plan.plan_energy(client, rows, checks, batch_of({**params, "rent_time": "24"}))


@pytest.mark.parametrize("patch", [{"data.price_per_10k": "-5"}, {"data.price_per_10k": "1e400"},
                                   {"data.energy_per_transfer": "-1"}])
def test_plan_energy_refuses_a_quote_it_cannot_trust(sandbox, control, patch):
    """Issue 22: a negative price would pass the ceiling and the balance; 1e400 raised
    a bare InvalidOperation (retried). Either fails for good, nothing bought."""
    rows, checks, params = small_batch(control)
    control.fault(kind="tamper", path="/energy/price", method="GET", patch=patch)
    try:
        with sandbox_client(sandbox) as client, pytest.raises(NotRetryable,
                                                       match="cannot be trusted"):
            energy_plan.plan_energy(client, rows, checks, batch_of(params))
    finally:
        control.clear_faults()


def test_only_the_first_transfer_to_a_new_recipient_is_a_first_transfer(sandbox, control):
    """Issue 22: 3 rows to a new address were planned as 3 x 131,000 = 393,000 energy."""
    newcomer = random_address()
    rows = [{"recipient": newcomer, "amount": amount} for amount in ("1", "2", "3")]
    checks = [{"address": newcomer, "transfer_energy": 131_000, "need_activate": True}]
    params = {"sender_address": control.activated(), "rent_time": "1", "max_spend_trx": "100",
              "batch_id": "b1"}
    with sandbox_client(sandbox) as client:
        plan = energy_plan.plan_energy(client, rows, checks, batch_of(params))
        # The node's estimates (on chain): the same rule, only the missing energy bought.
        chain = {"onchain": True, "energies": {newcomer: 131_000},
                 "wallet": {"energy_available": 0}}
        onchain_plan = energy_plan.plan_energy(client, rows, checks, batch_of(params), chain)
    assert [r["energy"] for r in plan["recipients"]] == [131_000, 65_000, 65_000]
    assert plan["total_energy"] == 131_000 + 2 * 65_000
    assert [o["energy_amount"] for o in plan["buy_orders"]] == [131_000]
    assert [o["count"] for o in plan["count_orders"]] == [2]
    assert plan["energy_to_buy"] == 261_000 and plan["activations"] == 1
    assert onchain_plan["total_energy"] == 261_000
    assert [o["energy_amount"] for o in onchain_plan["buy_orders"]] == [261_000]


def test_without_a_node_trx_rows_need_no_energy_and_other_tokens_are_refused(sandbox, control):
    client = sandbox_client(sandbox)
    rows, checks, params = small_batch(control)
    trx = [*rows, {"recipient": random_address(), "amount": "5", "token": "TRX"}]
    plan = energy_plan.plan_energy(client, trx, checks, batch_of(params))
    assert plan["recipients"][-1]["energy"] == 0 and plan["transfers"] == 4
    assert plan["total_energy"] == energy_plan.plan_energy(
        client, rows, checks, batch_of(params))["total_energy"]
    assert plan["by_token"]["TRX"] == {"transfers": 1, "amount": "5", "energy": 0}
    other = [*rows, {"recipient": random_address(), "amount": "5", "token": "DEMO"}]
    with pytest.raises(PayoutInputError, match="payouts of token DEMO need the node's "
                                               "pre-flight"):
        energy_plan.plan_energy(client, other, checks, batch_of(params))
