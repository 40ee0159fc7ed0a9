"""Payout planning (airflow_provider_tronenergy.payout.plan): rows, orders within the service's
limits, and the quote and guards against the sandbox over HTTP."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException, AirflowSkipException

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.payout import plan as payouts
from airflow_provider_tronenergy.payout.params import BatchParams
from airflow_provider_tronenergy.payout.rows import MAX_DIGITS, PayoutInputError
from airflow_provider_tronenergy.protocol.address import random_address

LIVE_LIMITS = {"energy_per_transfer": 65_000, "min_energy": 32_000, "max_energy": 5_000_000}


def test_parse_payouts_reports_every_bad_row_by_line():
    good = random_address()
    rows = [[good, "10.5"], ["T" + "1" * 33, "1"], [good, "-1"], [good], [good, "1.0000001"],
            [], [good, "abc"]]
    with pytest.raises(AirflowFailException) as info:
        payouts.parse_payouts(rows, first_line=2)
    message = str(info.value)
    for line in (3, 4, 5, 6, 8):
        assert f"line {line}:" in message
    assert "line 2:" not in message and "line 7:" not in message


def test_amounts_in_other_digits_are_bad_rows():
    good = random_address()
    with pytest.raises(AirflowFailException) as info:
        payouts.parse_payouts([[good, "١٠.٥"], [good, "1e3"], [good, "10.5"]])
    assert "line 1:" in str(info.value) and "line 2:" in str(info.value)
    assert "line 3:" not in str(info.value)


@pytest.mark.parametrize("amount", ["1" * 28, "1" * 27, "1" * 16, "9" * 60 + ".5",
                                    "0." + "0" * 30 + "1", "1" * 22 + ".1234567"])
def test_an_amount_of_too_many_digits_is_a_bad_row_named_by_line(amount):
    """Issue 22: 28 digits and more raised a bare decimal.InvalidOperation (retried, no line)."""
    good = random_address()
    with pytest.raises(AirflowFailException) as info:
        payouts.parse_payouts([[good, "10"], [good, amount]])
    assert "line 2: amount" in str(info.value) and "line 1:" not in str(info.value)


def test_the_largest_amounts_with_six_decimals_are_exact():
    good = random_address()
    big = "9" * MAX_DIGITS + ".000001"
    assert payouts.parse_payouts([[good, big], [good, "10.5000000"]]) == [
        {"recipient": good, "amount": big}, {"recipient": good, "amount": "10.5"}]


def test_a_recipient_on_several_rows_is_logged_once_with_its_lines(tmp_path, caplog):
    twice, once = random_address(), random_address()
    path = tmp_path / "payouts.csv"
    path.write_text(f"recipient,amount\n{twice},1\n{once},2\n{twice},3\n{twice},4\n")
    params = {"sender_address": random_address(), "rent_time": "1", "max_cost_trx": "10",
              "payouts_file": str(path)}
    with caplog.at_level("WARNING", logger=payouts.__name__):
        assert len(payouts.load_payouts(params)) == 4
    [record] = [r for r in caplog.records if r.name == payouts.__name__]
    assert f"recipient {twice} appears 3 times (lines 2, 4, 5)" in record.getMessage()
    assert once not in record.getMessage()


def test_plan_orders_buys_exactly_what_transfers_need():
    energies = [65_000] * 80 + [131_000] * 40
    plan = payouts.plan_orders(energies, **LIVE_LIMITS)
    assert [o["count"] for o in plan["count_orders"]] == [76, 4]
    assert [o["energy_amount"] for o in plan["buy_orders"]] == [38 * 131_000, 2 * 131_000]
    energy = sum(o["count"] * 65_000 for o in plan["count_orders"]) + sum(
        o["energy_amount"] for o in plan["buy_orders"])
    assert energy == 80 * 65_000 + 40 * 131_000
    assert all(o["energy_amount"] <= 5_000_000 for o in plan["buy_orders"])


def test_plan_orders_follows_the_price_endpoints_limits_not_constants():
    plan = payouts.plan_orders([65_000] * 10 + [131_000] * 5, energy_per_transfer=65_000,
                               min_energy=32_000, max_energy=300_000)
    assert [o["count"] for o in plan["count_orders"]] == [4, 4, 2]
    assert [o["energy_amount"] for o in plan["buy_orders"]] == [262_000, 262_000, 131_000]


@pytest.mark.parametrize("limits, words", [
    ({"min_energy": 200_000, "max_energy": 5_000_000}, "min_energy"),
    ({"min_energy": 32_000, "max_energy": 100_000}, "max_energy"),
])
def test_orders_the_service_would_refuse_fail_before_buying(limits, words):
    with pytest.raises(AirflowFailException, match=words):
        payouts.plan_orders([65_000, 131_000], energy_per_transfer=65_000, **limits)


def test_an_empty_plan_has_no_orders():
    assert payouts.plan_orders([], **LIVE_LIMITS) == {"count_orders": [], "buy_orders": []}


def test_batch_key_names_the_batch_and_its_rows():
    sender, a, b = random_address(), random_address(), random_address()
    rows = [{"recipient": a, "amount": "1"}, {"recipient": b, "amount": "2"}]
    key = payouts.batch_key(sender, "2026-01", rows)
    assert key == payouts.batch_key(sender, "2026-01", list(rows))
    assert key != payouts.batch_key(sender, "2026-01", rows[::-1])
    # The next period's identical payroll is another batch (issue 22).
    assert key != payouts.batch_key(sender, "2026-02", rows)
    assert key.startswith(f"payout:{sender}:2026-01:")


def test_a_runs_batch_id_is_its_data_interval_kept_by_retries_and_clears():
    start = datetime(2026, 3, 1, 10, tzinfo=timezone.utc)
    run = {"data_interval_start": start, "data_interval_end": start + timedelta(hours=1),
           "run_id": "scheduled__2026-03-01T10:00:00+00:00", "try_number": 1}
    batch_id = payouts.run_batch_id(run)
    assert batch_id == "2026-03-01T10:00:00Z/2026-03-01T11:00:00Z"
    assert payouts.run_batch_id({**run, "try_number": 3}) == batch_id  # a retry, a clear
    later = {**run, "data_interval_start": start + timedelta(hours=1),
             "data_interval_end": start + timedelta(hours=2), "run_id": "scheduled__later"}
    assert payouts.run_batch_id(later) != batch_id  # the next scheduled run
    # A manual run's interval is its logical date.
    point = {**run, "data_interval_end": start}
    assert payouts.run_batch_id(point) == "2026-03-01T10:00:00Z"
    # Triggered without a logical date: no interval, the run itself is the batch.
    manual = {"data_interval_start": None, "data_interval_end": None, "run_id": "manual__x"}
    assert payouts.run_batch_id(manual) == payouts.run_batch_id(dict(manual))
    assert payouts.run_batch_id(manual) != payouts.run_batch_id({**manual, "run_id": "y"})
    assert payouts.run_batch_id(manual).startswith("run:")
    with pytest.raises(PayoutInputError, match="batch_id is empty"):
        payouts.run_batch_id({})


@pytest.mark.parametrize("bad", ["has space", "x" * 65, "période"])
def test_a_bad_batch_id_fails_before_anything(bad):
    params = {"sender_address": random_address(), "rent_time": "1", "max_cost_trx": "10",
              "batch_id": bad}
    with pytest.raises(AirflowFailException, match="batch_id"):
        BatchParams.of(params)


def test_load_payouts_reads_a_csv_with_or_without_header(tmp_path):
    sender, a = random_address(), random_address()
    params = {"sender_address": sender, "rent_time": "1", "max_cost_trx": "10"}
    with_header = tmp_path / "a.csv"
    with_header.write_text(f"recipient,amount\n{a},1.5\n")
    bare = tmp_path / "b.csv"
    bare.write_text(f"{a},1.5\n{a},x\n")
    expected = [{"recipient": a, "amount": "1.5"}]
    assert payouts.load_payouts({**params, "payouts_file": str(with_header)}) == expected
    with pytest.raises(AirflowFailException, match="line 2:"):
        payouts.load_payouts({**params, "payouts_file": str(bare)})
    assert payouts.load_payouts({**params, "payouts": [{"recipient": a, "amount": "1.5"}]}) \
        == expected
    with pytest.raises(AirflowSkipException):
        payouts.load_payouts({**params, "payouts_file": "", "payouts": []})
    with pytest.raises(AirflowFailException, match="sender_address"):
        payouts.load_payouts({**params, "sender_address": "T" + "1" * 33, "payouts": expected})


def _client(sandbox) -> TronEnergyClient:
    return TronEnergyClient(base_url=sandbox.url, api_key=sandbox.api_key,
                            api_secret=sandbox.api_secret)


def _batch(control) -> tuple[list[dict[str, str]], list[dict[str, object]], dict[str, str]]:
    holder, newcomer = control.activated(holder=True), random_address()
    rows = [{"recipient": holder, "amount": "10"}, {"recipient": newcomer, "amount": "20"},
            {"recipient": holder, "amount": "5"}]
    checks = [{"address": holder, "transfer_energy": 65_000, "need_activate": False},
              {"address": newcomer, "transfer_energy": 131_000, "need_activate": True}]
    params = {"sender_address": control.activated(), "rent_time": "1", "max_cost_trx": "100",
              "batch_id": "2026-01"}
    return rows, checks, params


def test_plan_energy_quotes_at_the_services_price_and_keys_each_order(sandbox, control):
    rows, checks, params = _batch(control)
    with _client(sandbox) as client:
        plan = payouts.plan_energy(client, rows, checks, params)
        price = client.get_price(Decimal(1))
    assert plan["total_energy"] == 2 * 65_000 + 131_000
    assert plan["activations"] == 1 and Decimal(plan["activation_cost"]) == Decimal("1.1")
    assert Decimal(plan["price_per_10k"]) == price.price_per_10k
    assert Decimal(plan["energy_cost_quote"]) == (
        Decimal(261_000) * price.price_per_10k / 10_000).quantize(Decimal("0.000001"),
                                                                  rounding="ROUND_CEILING")
    key = payouts.batch_key(params["sender_address"], "2026-01", rows)
    assert plan["batch_id"] == "2026-01"
    assert plan["count_orders"] == [{"count": 2, "target_address": params["sender_address"],
                                     "purchase_key": f"{key}:count0"}]
    assert plan["buy_orders"] == [{"energy_amount": 131_000,
                                   "target_address": params["sender_address"],
                                   "purchase_key": f"{key}:buy0"}]
    assert control.orders(params["sender_address"]) == []  # planning buys nothing


def test_plan_energy_refuses_over_the_ceiling_or_the_balance(sandbox, control):
    rows, checks, params = _batch(control)
    with _client(sandbox) as client:
        with pytest.raises(NotRetryable, match="over max_cost_trx 1 TRX"):
            payouts.plan_energy(client, rows, checks, {**params, "max_cost_trx": "1"})
        control.balance("2")
        with pytest.raises(NotRetryable, match="available balance 2"):
            payouts.plan_energy(client, rows, checks, params)


def test_plan_energy_refuses_a_rent_time_it_cannot_quote(sandbox, control):
    rows, checks, params = _batch(control)
    with _client(sandbox) as client, pytest.raises(AirflowFailException,
                                                   match="cannot be quoted"):
        payouts.plan_energy(client, rows, checks, {**params, "rent_time": "24"})


@pytest.mark.parametrize("patch", [{"data.price_per_10k": "-5"}, {"data.price_per_10k": "1e400"},
                                   {"data.energy_per_transfer": "-1"}])
def test_plan_energy_refuses_a_quote_it_cannot_trust(sandbox, control, patch):
    """Issue 22: a negative price would pass the ceiling and the balance; 1e400 raised
    a bare InvalidOperation (retried). Either fails for good, nothing bought."""
    rows, checks, params = _batch(control)
    control.fault(kind="tamper", path="/energy/price", method="GET", patch=patch)
    try:
        with _client(sandbox) as client, pytest.raises(NotRetryable,
                                                       match="cannot be trusted"):
            payouts.plan_energy(client, rows, checks, params)
    finally:
        control.clear_faults()


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
    ready = payouts.batch_ready(plan, orders, [{"cost": "1.1"}, {"cost": "0"}])
    assert ready["energy_cost"] == "11.745" and ready["activation_cost"] == "1.1"
    assert ready["total_cost"] == "12.845" and ready["saving"] == "14.355"
    assert ready["burn_cost_bought"] == "26.1"
    assert ready["saving_factor"] == "2.22"  # 2.2222...: rounded down, never claims more
    assert "count_orders" not in ready and "buy_orders" not in ready
    assert [o["mode"] for o in ready["orders"]] == ["buy_count", "buy"]
    # Without a node: nothing confirmed on chain, and the whole batch was rented.
    assert ready["energy_bought"] == 261_000 and ready["saving_vs_whole_rental"] == "0"
    assert ready["confirmation"] == {"onchain": False}


def _on_hand_batch(control) -> tuple[list[dict[str, str]], list[dict[str, object]],
                                     dict[str, str], dict[str, object]]:
    """Issue 25's batch: 3 holders (65,000) and 4 first-time recipients (131,000), 719,000
    energy in all, 200,000 of it already on the hot wallet."""
    holders = [control.activated(holder=True) for _ in range(3)]
    newcomers = [random_address() for _ in range(4)]
    rows = [{"recipient": a, "amount": "10"} for a in holders + newcomers]
    checks = ([{"address": a, "transfer_energy": 65_000, "need_activate": False}
               for a in holders]
              + [{"address": a, "transfer_energy": 131_000, "need_activate": False}
                 for a in newcomers])
    params = {"sender_address": control.activated(), "rent_time": "1", "max_cost_trx": "100",
              "batch_id": "issue-25"}
    chain = {"onchain": True, "wallet": {"energy_available": 200_000},
             "energies": {c["address"]: c["transfer_energy"] for c in checks},
             "holder_energy": 65_000}
    return rows, checks, params, chain


def test_the_saving_counts_only_the_energy_renting_provided(sandbox, control):
    """Issue 25: the 200,000 energy the wallet already had was counted as saved by renting
    (71.9 - 23.355 = 48.545 TRX); renting saved 51.9 - 23.355 = 28.545 TRX."""
    rows, checks, params, chain = _on_hand_batch(control)
    with _client(sandbox) as client:
        plan = payouts.plan_energy(client, rows, checks, params, chain)
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
    ready = payouts.batch_ready(plan, orders, [])
    assert ready["burn_cost"] == "71.9" and ready["burn_cost_bought"] == "51.9"
    assert ready["saving"] == "28.545" and ready["saving_factor"] == "2.22"
    assert ready["energy_cost"] == ready["total_cost"] == "23.355"
    assert ready["saving_vs_whole_rental"] == text(
        Decimal(ready["whole_batch_rental_cost"]) - Decimal("23.355"))
    # An order over what the wallet lacked (the service's min_energy) saves no more.
    bigger = payouts.batch_ready(plan, [{**orders[0], "energy_amount": 600_000}], [])
    assert bigger["burn_cost_bought"] == "51.9"


def test_each_recipients_cost_is_its_share_of_what_was_paid(sandbox, control):
    """Issue 25: the per-recipient cost summed to renting it all (32.355), not to what was
    paid (23.355): each row is now its share, by energy, summing to the sun."""
    rows, checks, params, chain = _on_hand_batch(control)
    with _client(sandbox) as client:
        plan = payouts.plan_energy(client, rows, checks, params, chain)
    assert sum(Decimal(r["energy_cost"]) for r in plan["recipients"]) \
        == Decimal(plan["energy_cost_quote"])
    orders = [{"order_id": "o1", "kind": "buy", "energy_amount": 519_000, "cost": "23.355",
               "status": "success", "tx_hash": "ab"}]
    ready = payouts.batch_ready(plan, orders, [])
    shares = [Decimal(r["energy_cost"]) for r in ready["recipients"]]
    assert sum(shares) == Decimal("23.355")
    # 23.355 x 65,000 / 719,000 = 2.1113699..., x 131,000 / 719,000 = 4.2552225...: each
    # rounded down to the sun, the 5 sun left to the largest remainders, earlier rows first.
    assert shares == [Decimal("2.11137")] * 3 + [Decimal("4.255223")] * 2 \
        + [Decimal("4.255222")] * 2, shares
    assert [r["burn_cost"] for r in ready["recipients"]] == ["6.5"] * 3 + ["13.1"] * 4


def test_the_event_says_what_each_figure_compares(sandbox, control):
    rows, checks, params, chain = _on_hand_batch(control)
    with _client(sandbox) as client:
        plan = payouts.plan_energy(client, rows, checks, params, chain)
    ready = payouts.batch_ready(plan, [{"order_id": "o1", "kind": "buy", "cost": "23.355",
                                        "energy_amount": 519_000, "status": "success"}], [])
    figures = ready["figures"]
    money = {k for k, v in ready.items() if isinstance(v, str) and k not in (
        "sender", "batch_id", "rent_time")} | {"total_energy", "energy_on_hand_used",
                                               "energy_to_buy", "energy_bought", "prices"}
    assert money <= set(figures), money - set(figures)
    assert {f"recipients[].{k}" for k in ("amount", "energy", "energy_cost", "burn_cost")} \
        <= set(figures)
    assert all(len(line.splitlines()) == 1 for line in figures.values())


def test_only_the_first_transfer_to_a_new_recipient_is_a_first_transfer(sandbox, control):
    """Issue 22: 3 rows to a new address were planned as 3 x 131,000 = 393,000 energy."""
    newcomer = random_address()
    rows = [{"recipient": newcomer, "amount": amount} for amount in ("1", "2", "3")]
    checks = [{"address": newcomer, "transfer_energy": 131_000, "need_activate": True}]
    params = {"sender_address": control.activated(), "rent_time": "1", "max_cost_trx": "100",
              "batch_id": "b1"}
    with _client(sandbox) as client:
        plan = payouts.plan_energy(client, rows, checks, params)
        # The node's estimates (on chain): the same rule, only the missing energy bought.
        chain = {"onchain": True, "energies": {newcomer: 131_000},
                 "wallet": {"energy_available": 0}}
        onchain_plan = payouts.plan_energy(client, rows, checks, params, chain)
    assert [r["energy"] for r in plan["recipients"]] == [131_000, 65_000, 65_000]
    assert plan["total_energy"] == 131_000 + 2 * 65_000
    assert [o["energy_amount"] for o in plan["buy_orders"]] == [131_000]
    assert [o["count"] for o in plan["count_orders"]] == [2]
    assert plan["energy_to_buy"] == 261_000 and plan["activations"] == 1
    assert onchain_plan["total_energy"] == 261_000
    assert [o["energy_amount"] for o in onchain_plan["buy_orders"]] == [261_000]


def test_every_figure_of_the_event_is_in_the_docs_table():
    """The docs' table (money-safety.md) and the event's ``figures`` name the same figures."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "money-safety.md").read_text()
    table = set(re.findall(r"^\| `([\w.\[\]]+)` \|", docs, flags=re.MULTILINE))
    assert table == set(payouts.FIGURES)
