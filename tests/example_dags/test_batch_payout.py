"""The batch-payout example DAG, end to end in dag.test() against the sandbox."""

from __future__ import annotations

from decimal import Decimal

import batch_payout_preparation as example
import pytest

from tronenergy_protocol.address import random_address

NO_NODE = {"tron_node_conn_id": None}
"""Prepared without on-chain checks, written out: these runs have no ``tron_node``
connection (a run that names one that does not exist fails: test_batch_payout_onchain)."""


def _batch(control, tmp_path):
    sender = control.activated()
    holders = [control.activated(holder=True) for _ in range(3)]
    active_new = [control.activated() for _ in range(2)]
    inactive = [random_address() for _ in range(2)]
    payouts = tmp_path / "payouts.csv"
    lines = ["recipient,amount"] + [f"{a},{10 + i}.5" for i, a in
                                    enumerate(holders + active_new + inactive)]
    payouts.write_text("\n".join(lines) + "\n")
    return sender, holders, active_new, inactive, payouts


def test_batch_payout_end_to_end(run_dag, control, tmp_path):
    sender, holders, active_new, inactive, payouts = _batch(control, tmp_path)
    out = run_dag(example.dag, **NO_NODE, payouts_file=str(payouts), sender_address=sender,
                  rent_time="1", max_spend_trx="100", approval_above_trx="1000")
    assert out["__run__"] == "success", out
    ready = out["publish_batch_ready"][2]
    # The quote is under approval_above_trx: nobody was asked.
    assert out["approve_batch"][0] == "success"
    assert ready["approval"] == {"required": False, "approved": True, "threshold_trx": "1000"}
    assert ready["transfers"] == 7 and ready["activations"] == 2
    assert ready["total_energy"] == 3 * 65_000 + 4 * 131_000
    orders = control.orders(sender)
    assert sorted((o["kind"], o["energy_amount"]) for o in orders) == [
        ("buy", 4 * 131_000), ("buy_count", 3 * 65_000)]
    assert all(o["status"] == "success" for o in orders)
    # Both orders placed by one purchase task and awaited by one sensor task: no task
    # instance per order (issue 15), whatever the size of the batch.
    assert not [key for key in out if "[" in key], sorted(out)
    bought = [r["order_id"] for r in out["buy_energy"][2]]
    assert sorted(bought) == sorted(o["order_id"] for o in orders)
    assert [o["order_id"] for o in out["wait_for_orders"][2]] == bought
    assert Decimal(ready["energy_cost"]) == sum(Decimal(str(o["cost"])) for o in orders)
    assert sum(Decimal(r["energy_cost"]) for r in ready["recipients"]) \
        == Decimal(ready["energy_cost"])  # each recipient's share of what was paid
    assert Decimal(ready["activation_cost"]) == Decimal("2.2")
    assert Decimal(ready["saving"]) > 0
    activations = {o["target_address"] for o in control.orders() if o["kind"] == "activate"}
    assert set(inactive) <= activations and not activations & set(holders + active_new)


def test_batch_payout_over_ceiling_buys_nothing(run_dag, control, tmp_path):
    sender, *_, payouts = _batch(control, tmp_path)
    out = run_dag(example.dag, **NO_NODE, payouts_file=str(payouts), sender_address=sender,
                  rent_time="1", max_spend_trx="5")
    assert out["__run__"] == "failed"
    assert out["plan_energy"][0] == "failed"
    assert control.orders(sender) == []


def test_the_whole_spend_is_quoted_before_any_activation(run_dag, control, tmp_path):
    sender, _, _, inactive, payouts = _batch(control, tmp_path)
    # Enough for the two activations (2.2 TRX), not for them and the energy: the plan
    # refuses before anything is activated (it used to run after the activations).
    control.balance("5")
    out = run_dag(example.dag, **NO_NODE, payouts_file=str(payouts), sender_address=sender,
                  rent_time="1", max_spend_trx="100", approval_above_trx="")
    assert out["__run__"] == "failed"
    assert out["plan_energy"][0] == "failed"
    assert out["approve_batch"][0] == "upstream_failed"
    assert out["activate_recipients"][0] == "upstream_failed"
    activated = {o["target_address"] for o in control.orders() if o["kind"] == "activate"}
    assert not activated & set(inactive)
    assert control.orders(sender) == []


def test_failed_order_fails_the_run(run_dag, control, tmp_path):
    sender, *_, payouts = _batch(control, tmp_path)
    control.fail_next_orders(1)
    out = run_dag(example.dag, **NO_NODE, payouts_file=str(payouts), sender_address=sender,
                  rent_time="1", max_spend_trx="100")
    assert out["__run__"] == "failed"
    assert out["publish_batch_ready"][0] != "success"


def test_scheduled_run_without_a_batch_is_skipped_not_failed(run_dag, control):
    before = len(control.orders())
    # A scheduled run: the params keep their empty defaults (given explicitly, because
    # dag.test() in one process carries an earlier run's conf into the DAG's params).
    out = run_dag(example.dag, **NO_NODE, payouts_file="", payouts=[])
    assert out["load_payouts"][0] == "skipped"
    assert out["__run__"] == "success"
    assert len(control.orders()) == before


def test_new_run_of_the_same_batch_buys_nothing_twice(run_dag, control, tmp_path):
    sender, *_, payouts = _batch(control, tmp_path)
    conf = {"payouts_file": str(payouts), "sender_address": sender, "rent_time": "1",
            "max_spend_trx": "100", "batch_id": "payroll-2026-01"}
    first = run_dag(example.dag, **NO_NODE, **conf)
    assert first["__run__"] == "success", first
    bought = sorted(o["order_id"] for o in control.orders(sender))
    assert len(bought) == 2
    second = run_dag(example.dag, **NO_NODE, **conf)
    assert second["__run__"] == "success", second
    assert sorted(o["order_id"] for o in control.orders(sender)) == bought
    ready = second["publish_batch_ready"][2]
    assert sorted(o["order_id"] for o in ready["orders"]) == bought
    # A different batch from the same wallet is a different purchase.
    payouts.write_text(payouts.read_text().replace(",10.5", ",11.5"))
    third = run_dag(example.dag, **NO_NODE, **conf)
    assert third["__run__"] == "success", third
    assert len(control.orders(sender)) == 4


@pytest.mark.parametrize("bad", [{"max_spend_trx": "١٠٠"}, {"sender_address": "T" + "1" * 33}])
def test_bad_batch_parameters_fail_before_any_activation(run_dag, control, tmp_path, bad):
    sender, *_, payouts = _batch(control, tmp_path)
    before = len(control.orders())
    conf = {"payouts_file": str(payouts), "sender_address": sender, "rent_time": "1",
            "max_spend_trx": "100", **bad}
    out = run_dag(example.dag, **NO_NODE, **conf)
    assert out["__run__"] == "failed"
    assert out["load_payouts"][:2] == ("failed", 1)
    assert len(control.orders()) == before  # no activation, no energy


def test_a_bad_row_fails_the_run_without_retry_naming_its_line(run_dag, control, tmp_path):
    """``PayoutInputError`` from the rows is the task's failure for good, before anything."""
    sender, *_, payouts = _batch(control, tmp_path)
    payouts.write_text(payouts.read_text() + "T" + "1" * 33 + ",1\n")
    before = len(control.orders())
    out = run_dag(example.dag, **NO_NODE, payouts_file=str(payouts), sender_address=sender,
                  rent_time="1", max_spend_trx="100")
    assert out["__run__"] == "failed"
    assert out["load_payouts"][:2] == ("failed", 1)
    assert out["plan_energy"][0] == "upstream_failed"
    assert len(control.orders()) == before
