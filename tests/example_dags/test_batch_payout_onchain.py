"""The batch-payout example reading the chain (issue 12): dag.test() against the sandbox,
which is also the TRON node the ``tron_node`` connection points at (``node_conn``, from
support.dagrun). Orders and activations are counted at the sandbox, never taken from
the run's own report."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from itertools import count

import batch_payout_preparation as example
import pytest

from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.payout import onchain
from tronenergy_protocol.address import random_address


def _run(run_dag, control, tmp_path, sender, recipients, **extra):
    payouts = tmp_path / "payouts.csv"
    payouts.write_text("recipient,amount\n" + "".join(f"{a},10.5\n" for a in recipients))
    before = len(control.orders())
    # Every run names its node: dag.test() in one process carries a run's conf into the
    # next run's params.
    out = run_dag(example.dag, **{
        "payouts_file": str(payouts), "sender_address": sender, "rent_time": "1",
        "max_spend_trx": "100", "confirm_timeout_seconds": "1",
        "tron_node_conn_id": "tron_node_default",
        **extra})
    return out, control.orders()[before:]


def test_energy_on_hand_covers_the_batch_no_order(run_dag, control, node_conn, tmp_path):
    sender = control.wallet(trx="50", usdt="1000", staked=300_000)
    holders = [control.wallet(trx="1", usdt="1") for _ in range(4)]
    out, placed = _run(run_dag, control, tmp_path, sender, holders)
    assert out["__run__"] == "success", out
    assert placed == []  # 4 x 64,285 (the node's estimates) = 257,140 of the 300,000 on hand
    ready = out["publish_batch_ready"][2]
    assert ready["energy_on_hand_used"] == 257_140 and ready["energy_bought"] == 0
    assert ready["onchain"]["wallet"]["usdt"] == "1000"
    assert ready["onchain"]["estimated_by_node"] == 4
    assert ready["confirmation"]["confirmed"] == []
    assert ready["confirmation"]["energy_available"] == 300_000
    assert Decimal(ready["saving_vs_whole_rental"]) == Decimal(ready["whole_batch_rental_cost"])


def test_only_the_shortfall_is_bought_and_confirmed_on_chain(run_dag, control, node_conn,
                                                             tmp_path):
    sender = control.wallet(trx="50", usdt="1000", staked=300_000)
    holders = [control.wallet(trx="1", usdt="1") for _ in range(5)]
    out, placed = _run(run_dag, control, tmp_path, sender, holders)
    assert out["__run__"] == "success", out
    # 321,425 needed (5 x 64,285), 300,000 on hand: 21,425 missing, bought as the 32,000
    # minimum.
    assert [(o["kind"], o["energy_amount"], o["status"]) for o in placed] == [
        ("buy", 32_000, "success")]
    ready = out["publish_batch_ready"][2]
    assert ready["energy_bought"] == 32_000 and ready["energy_on_hand_used"] == 300_000
    [confirmed] = ready["confirmation"]["confirmed"]
    assert confirmed["tx_hash"] == placed[0]["tx_hash"] and confirmed["block_number"] > 0
    assert ready["confirmation"]["energy_available"] == 332_000
    assert Decimal(ready["saving_vs_whole_rental"]) > 0 and Decimal(ready["saving"]) > 0
    # Issue 25: renting replaced only the 21,425 missing (burned at 100 sun: 2.1425 TRX),
    # neither the 300,000 on hand nor the 10,575 the service's minimum added.
    assert ready["burn_cost_bought"] == "2.1425" and ready["burn_cost"] == "32.1425"
    assert Decimal(ready["saving"]) == Decimal("2.1425") - Decimal(placed[0]["cost"])
    assert sum(Decimal(r["energy_cost"]) for r in ready["recipients"]) \
        == Decimal(placed[0]["cost"]) == Decimal(ready["energy_cost"])


@pytest.mark.parametrize(("wallet", "recipients", "shortfall"), [
    ({"trx": "50", "usdt": "30"}, "holders", "USDT short by 22.5"),
    # Two activations (2.2), one of two transfers beyond the free 600 bandwidth (0.345),
    # the default 10 TRX reserve.
    ({"trx": "10.5", "usdt": "1000"}, "inactive",
     "TRX short by 2.045: the wallet holds 10.5, needs 12.545 (2 activations 2.2, "
     "bandwidth burn 0.345, reserve 10)"),
], ids=["usdt-short", "trx-short-for-activations"])
def test_a_wallet_that_cannot_pay_fails_before_any_order_or_activation(
        run_dag, control, node_conn, tmp_path, monkeypatch, wallet, recipients, shortfall):
    raised: list[BaseException] = []
    real = onchain.preflight

    def spy(*args, **kwargs):  # dag.test() runs the task in this process
        try:
            return real(*args, **kwargs)
        except BaseException as exc:
            raised.append(exc)
            raise

    monkeypatch.setattr(onchain, "preflight", spy)
    sender = control.wallet(**wallet)
    to = ([control.wallet(trx="1", usdt="1") for _ in range(5)] if recipients == "holders"
          else [random_address(), random_address()])
    out, placed = _run(run_dag, control, tmp_path, sender, to)
    assert out["__run__"] == "failed"
    state, tries, _ = out["preflight_on_chain"]
    assert (state, tries) == ("failed", 1)  # refused, not retried
    assert placed == []  # no energy order and no activation at the sandbox
    assert out["activate_recipients"][0] != "success"
    [refusal] = raised
    assert shortfall in str(refusal) and "nothing was bought or activated" in str(refusal)


def test_a_withheld_delegation_is_not_published(run_dag, control, node_conn, tmp_path):
    sender = control.wallet(trx="50", usdt="1000")
    control.withhold_delegations(1)
    out, placed = _run(run_dag, control, tmp_path, sender, [control.wallet(trx="1", usdt="1")])
    assert [o["status"] for o in placed] == ["success"]  # the service says success
    assert out["__run__"] == "failed"
    assert out["confirm_on_chain"][:2] == ("failed", 1)  # refused, not retried
    assert out["publish_batch_ready"][0] != "success"


def test_without_a_node_by_choice_the_plan_is_the_services(run_dag, control, tmp_path):
    """``tron_node_conn_id=None`` (JSON null in a run's conf), written out: no checks."""
    sender = control.activated()
    holders = [control.activated(holder=True) for _ in range(2)]
    out, placed = _run(run_dag, control, tmp_path, sender, holders, tron_node_conn_id=None)
    assert out["__run__"] == "success", out
    assert [(o["kind"], o["energy_amount"]) for o in placed] == [("buy_count", 130_000)]
    chain = out["preflight_on_chain"][2]
    assert chain == {"onchain": False, "reason": "no on-chain checks were made: "
                                                 "tron_node_conn_id is None"}
    assert out["publish_batch_ready"][2]["confirmation"]["onchain"] is False


def test_a_misspelled_node_connection_fails_the_run_before_anything_is_bought(
        run_dag, control, tmp_path, capfd):
    """A typo is not "no node" (issue 45): the pre-flight fails once, not retried, naming
    the id and the way to go without a node on purpose; nothing is activated or bought."""
    sender = control.activated()
    newcomer = random_address()  # not activated: the plan would activate it
    out, placed = _run(run_dag, control, tmp_path, sender, [newcomer],
                       tron_node_conn_id="tron_nod_default")
    assert out["__run__"] == "failed"
    assert out["preflight_on_chain"][:2] == ("failed", 1)
    assert "plan_energy" not in out or out["plan_energy"][0] == "upstream_failed"
    for later in ("activate_recipients", "buy_energy", "publish_batch_ready"):
        assert later not in out or out[later][0] == "upstream_failed", out[later]
    assert placed == []  # and activate_recipients never ran (above)
    assert ("tron_node_conn_id 'tron_nod_default' names no connection; payout preparation "
            "needs a TRON node to check balances and delegations: create it, or pass "
            "tron_node_conn_id=None to plan without on-chain checks") in capfd.readouterr().out


def test_a_node_that_fails_the_estimates_fails_the_try_and_the_retry_reads_again(
        run_dag, control, node_conn, tmp_path, monkeypatch):
    """``ChainUnread`` (nothing bought or activated): the pre-flight's try fails and is
    retried, never planned on the check-address rule instead."""
    monkeypatch.setattr(example.dag.get_task("preflight_on_chain"), "retry_delay",
                        timedelta(0))
    recipients = [control.wallet(trx="1", usdt="1") for _ in range(2)]
    real, calls = TronNodeHook.estimate_transfer_energy, count()

    def down_for_the_first_try(self, owner, to, units):  # the task runs in this process
        if next(calls) < len(recipients):  # the first try's estimates, one per recipient
            raise NodeError("node unreachable")
        return real(self, owner, to, units)

    monkeypatch.setattr(TronNodeHook, "estimate_transfer_energy", down_for_the_first_try)
    out, placed = _run(run_dag, control, tmp_path, control.wallet(trx="50", usdt="1000"),
                       recipients)
    assert out["__run__"] == "success", out
    assert out["preflight_on_chain"][:2] == ("success", 2)
    assert out["publish_batch_ready"][2]["onchain"]["estimated_by_node"] == 2
    assert len(placed) == 1  # one order for the batch, bought once


@pytest.mark.parametrize(("extra", "says"), [({}, "mainnet"), ({"network": "nile"}, "nile")])
def test_a_node_on_another_chain_than_its_connection_says_buys_and_activates_nothing(
        run_dag, control, sandbox, tmp_path, monkeypatch, capfd, extra, says):
    """A connection without ``network`` (mainnet) or saying Nile, pointing at the sandbox (a
    custom chain): the pre-flight's first read is block 0, so the run fails there, not
    retried, before any order or activation."""
    import json

    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps(
        {"conn_type": "tron_node", "host": sandbox.root_url, "extra": extra}))
    sender = control.wallet(trx="50", usdt="1000", staked=300_000)
    out, placed = _run(run_dag, control, tmp_path, sender, [random_address()])
    assert out["__run__"] == "failed"
    assert out["preflight_on_chain"][:2] == ("failed", 1)  # refused, not retried
    assert placed == [] and out["activate_recipients"][0] != "success"
    assert f"'tron_node_default' says network {says}" in capfd.readouterr().out
