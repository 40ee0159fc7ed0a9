"""Which batch a payout run is (issue 22): dag.test() against the sandbox.

A batch's purchase keys name its ``batch_id`` (by default the run's data interval),
so a retry, a clear or a rerun of the same batch reuses its orders and the next
period's identical payroll buys its own. With a node, an order is reused only
while its energy is still on the wallet. Orders are counted at the sandbox.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import batch_payout_preparation as example
import pendulum
import pytest

from support.control import Control
from support.sandbox import sandbox_fixture

# Rentals here outlive a rerun on a loaded machine (1 h is 180 s at this time scale): at
# the shared sandbox's 36 s, an order could end during the second run, and the chain then
# takes the rental's share of the energy used back with it.
sandbox = sandbox_fixture(scope="module", time_scale=0.05)

# A manual run's data interval is its logical date (a scheduled run's is its hour).
LOGICAL = pendulum.datetime(2026, 3, 2, 9, 30, tz="UTC")


def _conf(control: Control, tmp_path: Path, **extra: Any) -> dict[str, Any]:
    """Two USDT holders and one active address that never held USDT: a buy-count of 2
    and a buy of 131,000."""
    recipients = [control.activated(holder=True), control.activated(holder=True),
                  control.activated()]
    payouts = tmp_path / "payouts.csv"
    payouts.write_text("".join(f"{a},12.5\n" for a in recipients))
    # batch_id given even when empty: dag.test() in one process carries an earlier run's
    # conf into the DAG's params.
    return {"payouts_file": str(payouts), "sender_address": control.activated(),
            "rent_time": "1", "max_spend_trx": "100", "batch_id": "",
            "tron_node_conn_id": None, **extra}  # no node, written out


def _bought(control: Control, conf: dict[str, Any]) -> list[tuple[str, int]]:
    return [(o["kind"], o["energy_amount"]) for o in control.orders(conf["sender_address"])]


ONE_BATCH = [("buy_count", 130_000), ("buy", 131_000)]


def test_a_rerun_of_the_same_run_reuses_its_orders(run_dag, control, tmp_path):
    conf = _conf(control, tmp_path)
    first = run_dag(example.dag, logical_date=LOGICAL, **conf)
    assert first["__run__"] == "success", first
    assert first["plan_energy"][2]["batch_id"] == "2026-03-02T09:30:00Z"
    # The same logical date: the same run again, as a clear of the whole run is.
    again = run_dag(example.dag, logical_date=LOGICAL, **conf)
    assert again["__run__"] == "success", again
    assert _bought(control, conf) == ONE_BATCH
    assert [r["reused"] for r in again["buy_energy"][2]] == [True, True]


def test_the_next_periods_identical_payroll_buys_its_own_energy(run_dag, control, tmp_path):
    conf = _conf(control, tmp_path)
    assert run_dag(example.dag, logical_date=LOGICAL, **conf)["__run__"] == "success"
    # The next hourly run, the same rows: the first batch's energy is not this one's.
    second = run_dag(example.dag, logical_date=LOGICAL + timedelta(hours=1), **conf)
    assert second["__run__"] == "success", second
    assert second["plan_energy"][2]["batch_id"] == "2026-03-02T10:30:00Z"
    assert _bought(control, conf) == ONE_BATCH + ONE_BATCH
    assert [r["reused"] for r in second["buy_energy"][2]] == [False, False]


def test_a_run_with_the_same_batch_id_reuses_whatever_its_interval(run_dag, control, tmp_path):
    conf = _conf(control, tmp_path, batch_id="payroll-2026-03")
    assert run_dag(example.dag, logical_date=LOGICAL, **conf)["__run__"] == "success"
    later = run_dag(example.dag, logical_date=LOGICAL + timedelta(hours=1), **conf)
    assert later["__run__"] == "success", later
    assert later["plan_energy"][2]["batch_id"] == "payroll-2026-03"
    assert _bought(control, conf) == ONE_BATCH
    assert [r["reused"] for r in later["buy_energy"][2]] == [True, True]


def test_a_retry_reuses_what_the_first_try_bought(run_dag, control, tmp_path, monkeypatch):
    monkeypatch.setattr(example.dag.get_task("buy_energy"), "retry_delay", timedelta(0))
    conf = _conf(control, tmp_path)
    # The buy-count goes through; the buy is refused with a 429 (provably not placed):
    # the try fails, retryable, with one order placed.
    control.fault(kind="rate_limit", path="/energy/buy", count=1)
    out = run_dag(example.dag, logical_date=LOGICAL, **conf)
    assert out["__run__"] == "success", out
    assert out["buy_energy"][:2] == ("success", 2)
    assert _bought(control, conf) == ONE_BATCH
    assert [r["reused"] for r in out["buy_energy"][2]] == [True, False]


@pytest.mark.parametrize("gone", ["spent", "taken back"])
def test_an_order_whose_energy_is_gone_on_chain_is_not_reused(run_dag, control, node_conn,
                                                              tmp_path, monkeypatch, gone):
    sender = control.wallet(trx="50", usdt="1000")
    holders = [control.wallet(trx="1", usdt="1") for _ in range(2)]
    payouts = tmp_path / "payouts.csv"
    payouts.write_text("".join(f"{a},10\n" for a in holders))
    conf = {"payouts_file": str(payouts), "sender_address": sender, "rent_time": "1",
            "max_spend_trx": "100", "confirm_timeout_seconds": "1", "batch_id": "payroll-2026-03",
            "tron_node_conn_id": node_conn}
    first = run_dag(example.dag, **conf)
    assert first["__run__"] == "success", first
    [order] = first["buy_energy"][2]
    # 2 x 64,285: the node's estimates of a transfer to a holder.
    assert control.orders(sender)[0]["energy_amount"] == 128_570
    if gone == "spent":  # the payouts were sent: the energy is used
        control.post(f"/addresses/{sender}/energy", {"used": 128_570})
    else:  # the chain's clock passes the rental (180 s here); the journal's
        world = control.sandbox.state.world  # sent + 1 h has not passed
        monkeypatch.setattr(world, "clock", lambda: time.time() + 200)
    # The same batch again: the journal holds a placed, unexpired order for it. Spent
    # energy recovers on chain (java-tron's 24 h window), so the rerun's plan counts what
    # recovered as on hand and sizes buy0 smaller: the journaled purchase of its key
    # stands (docs/decisions.md "A resized plan meets its journaled purchase"), and what
    # of its energy is gone is bought once, as its refill.
    second = run_dag(example.dag, **conf)
    assert second["__run__"] == "success", second
    placed = control.orders(sender)
    [(kind, energy, status)] = [(o["kind"], o["energy_amount"], o["status"])
                                for o in placed[1:]]
    assert (kind, status) == ("buy", "success")
    if gone == "spent":  # what recovered meanwhile is on the wallet: the rest is bought
        assert 128_570 - 2_000 < energy < 128_570
    else:
        assert energy == 128_570
    [refill] = second["buy_energy"][2]
    assert refill["reused"] is False and refill["order_id"] == placed[1]["order_id"]
    assert refill["refill_of"] == order["purchase_key"]
    assert refill["purchase_key"] == order["purchase_key"] + ":refill"
    assert second["publish_batch_ready"][2]["confirmation"]["energy_available"] >= 128_570
    # And once more: the refill is on the wallet, no key buys twice.
    third = run_dag(example.dag, **conf)
    assert third["__run__"] == "success", third
    assert len(control.orders(sender)) == 2


def test_max_spend_stops_a_refill_run(run_dag, control, node_conn, tmp_path, capfd):
    """The batch's max_spend_trx holds over its runs: the first run's order (5.78565 TRX)
    and a refill of its energy, gone on chain, would pass 10 TRX; the rerun buys nothing."""
    sender = control.wallet(trx="50", usdt="1000")
    holders = [control.wallet(trx="1", usdt="1") for _ in range(2)]
    payouts = tmp_path / "payouts.csv"
    payouts.write_text("".join(f"{a},10\n" for a in holders))
    conf = {"payouts_file": str(payouts), "sender_address": sender, "rent_time": "1",
            "max_spend_trx": "10", "confirm_timeout_seconds": "1", "batch_id": "payroll-2026-04",
            "tron_node_conn_id": node_conn}
    first = run_dag(example.dag, **conf)
    assert first["__run__"] == "success", first
    control.post(f"/addresses/{sender}/energy", {"used": 128_570})
    second = run_dag(example.dag, **conf)
    assert second["plan_energy"][0] == "success"  # this run's quote is within 10 TRX
    assert second["buy_energy"][:2] == ("failed", 1)
    assert [o["energy_amount"] for o in control.orders(sender)] == [128_570]
    key = first["plan_energy"][2]["purchase_key"]
    assert (f"max_spend_trx 10 TRX: 5.78565 TRX already spent under purchase key {key} "
            "(1 order)") in capfd.readouterr().out
