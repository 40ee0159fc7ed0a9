"""The "payout batch ready" event (airflow_provider_tronenergy.payout.ready): what a prepared
batch bought, what it cost, what renting saved, and what each figure compares."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.payout.energy_plan import plan_energy
from airflow_provider_tronenergy.payout.ready import FIGURES, batch_ready
from support.plans import batch_of, on_hand_batch, sandbox_client
from tronenergy_protocol.address import random_address


def _rows(*energies: int) -> list[dict[str, object]]:
    return [{"recipient": random_address(), "amount": "1", "energy": energy, "activated": False,
             "energy_cost": "0", "burn_cost": "0"} for energy in energies]


def test_batch_ready_reports_what_was_spent_and_saved():
    plan = {"transfers": 3, "count_orders": [{}], "buy_orders": [{}],
            "recipients": _rows(65_000, 65_000, 131_000), "total_energy": 261_000,
            "energy_on_hand_used": 0, "burn_cost": "26.1", "whole_batch_rental_cost": "11.745"}
    orders = [{"order_id": "o1", "kind": "buy_count", "energy_amount": 130_000, "cost": "5.85",
               "status": "success", "tx_hash": "ab"},
              {"order_id": "o2", "kind": "buy", "energy_amount": 131_000, "cost": "5.895",
               "status": "success", "tx_hash": "cd"}]
    ready = batch_ready(plan, orders, [{"cost": "1.1"}, {"cost": "0"}])
    assert ready["energy_cost"] == "11.745" and ready["activation_cost"] == "1.1"
    assert ready["total_cost"] == "12.845" and ready["saving"] == "14.355"
    assert ready["burn_cost_bought"] == "26.1"
    assert ready["saving_factor"] == "2.22"  # 2.2222...: rounded down, never claims more
    assert "count_orders" not in ready and "buy_orders" not in ready
    assert [o["mode"] for o in ready["orders"]] == ["buy_count", "buy"]
    # Without a node: nothing confirmed on chain, and the whole batch was rented.
    assert ready["energy_bought"] == 261_000 and ready["saving_vs_whole_rental"] == "0"
    assert ready["confirmation"] == {"onchain": False}


def test_the_saving_counts_only_the_energy_renting_provided(sandbox, control):
    """Issue 25: the 200,000 energy the wallet already had was counted as saved by renting
    (71.9 - 23.355 = 48.545 TRX); renting saved 51.9 - 23.355 = 28.545 TRX."""
    rows, checks, params, chain = on_hand_batch(control)
    with sandbox_client(sandbox) as client:
        plan = plan_energy(client, rows, checks, batch_of(params), chain)
        price = client.get_price(Decimal(1))
    assert (plan["total_energy"], plan["energy_on_hand_used"], plan["energy_to_buy"]) \
        == (719_000, 200_000, 519_000)
    cost = (Decimal(519_000) * price.price_per_10k / 10_000).quantize(Decimal("0.000001"),
                                                                     "ROUND_CEILING")
    assert Decimal(plan["energy_cost_quote"]) == cost
    assert (plan["burn_cost"], plan["burn_cost_to_buy"]) == ("71.9", "51.9")  # 100 sun each
    assert Decimal(plan["saving_quote"]) == Decimal("51.9") - cost
    orders = [{"order_id": "o1", "kind": "buy", "energy_amount": 519_000, "cost": "23.355",
               "status": "success", "tx_hash": "ab"}]
    ready = batch_ready(plan, orders, [])
    assert ready["burn_cost"] == "71.9" and ready["burn_cost_bought"] == "51.9"
    assert ready["saving"] == "28.545" and ready["saving_factor"] == "2.22"
    assert ready["energy_cost"] == ready["total_cost"] == "23.355"
    assert ready["saving_vs_whole_rental"] == text(
        Decimal(ready["whole_batch_rental_cost"]) - Decimal("23.355"))
    # An order over what the wallet lacked (the service's min_energy) saves no more.
    bigger = batch_ready(plan, [{**orders[0], "energy_amount": 600_000}], [])
    assert bigger["burn_cost_bought"] == "51.9"


def test_each_recipients_cost_is_its_share_of_what_was_paid(sandbox, control):
    """Issue 25: the per-recipient cost summed to renting it all (32.355), not to what was
    paid (23.355): each row is now its share, by energy, summing to the sun."""
    rows, checks, params, chain = on_hand_batch(control)
    with sandbox_client(sandbox) as client:
        plan = plan_energy(client, rows, checks, batch_of(params), chain)
    assert sum(Decimal(r["energy_cost"]) for r in plan["recipients"]) \
        == Decimal(plan["energy_cost_quote"])
    orders = [{"order_id": "o1", "kind": "buy", "energy_amount": 519_000, "cost": "23.355",
               "status": "success", "tx_hash": "ab"}]
    ready = batch_ready(plan, orders, [])
    shares = [Decimal(r["energy_cost"]) for r in ready["recipients"]]
    assert sum(shares) == Decimal("23.355")
    # 23.355 x 65,000 / 719,000 = 2.1113699..., x 131,000 / 719,000 = 4.2552225...: each
    # rounded down to the sun, the 5 sun left to the largest remainders, earlier rows first.
    assert shares == [Decimal("2.11137")] * 3 + [Decimal("4.255223")] * 2 \
        + [Decimal("4.255222")] * 2, shares
    assert [r["burn_cost"] for r in ready["recipients"]] == ["6.5"] * 3 + ["13.1"] * 4


def test_the_event_says_what_each_figure_compares(sandbox, control):
    rows, checks, params, chain = on_hand_batch(control)
    with sandbox_client(sandbox) as client:
        plan = plan_energy(client, rows, checks, batch_of(params), chain)
    ready = batch_ready(plan, [{"order_id": "o1", "kind": "buy", "cost": "23.355",
                                        "energy_amount": 519_000, "status": "success"}], [])
    figures = ready["figures"]
    money = {k for k, v in ready.items() if isinstance(v, str) and k not in (
        "sender", "batch_id", "rent_time")} | {"total_energy", "energy_on_hand_used",
                                               "energy_to_buy", "energy_bought", "prices"}
    assert money <= set(figures), money - set(figures)
    assert {f"recipients[].{k}" for k in ("amount", "energy", "energy_cost", "burn_cost")} \
        <= set(figures)
    assert all(len(line.splitlines()) == 1 for line in figures.values())


def test_every_figure_of_the_event_is_in_the_docs_table():
    """The docs' table (money-safety.md) and the event's ``figures`` name the same figures."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "money-safety.md").read_text()
    table = set(re.findall(r"^\| `([\w.\[\]]+)` \|", docs, flags=re.MULTILINE))
    assert table == set(FIGURES)
