"""The send example: a prepared batch (the preparation example, dag.test()) is sent once,
and its ``payouts sent`` event carries what the chain measured. Counted on the chain."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal

import batch_payout_preparation as preparation
import batch_payout_send as example
from tronpy.keys import PrivateKey


def test_both_examples_confirm_on_solidified_blocks_unless_told():
    assert example.dag.params["confirm_solidified"] is True
    assert preparation.dag.params["confirm_solidified"] is True


def test_a_prepared_batch_is_sent_once_with_the_saving_measured_on_chain(
        run_dag, control, node_conn, tmp_path, monkeypatch):
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'j.db'}")
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="100", usdt="1000", staked=64_285)  # one transfer's worth
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    holders = [control.wallet(trx="1", usdt="1") for _ in range(3)]
    newcomer = control.wallet(trx="1")
    recipients = [*holders, newcomer]
    payouts = tmp_path / "payouts.csv"
    payouts.write_text("recipient,amount\n" + "".join(f"{a},2{i}.5\n"
                                                      for i, a in enumerate(recipients)))
    prepared = run_dag(preparation.dag, payouts_file=str(payouts), sender_address=sender,
                       tron_node_conn_id=node_conn, rent_time="1", max_spend_trx="100",
                       batch_id="send-example-1")
    assert prepared["__run__"] == "success", prepared
    ready = prepared["publish_batch_ready"][2]

    out = run_dag(example.dag)
    assert out["__run__"] == "success", out
    sent = out["publish_payouts_sent"][2]
    assert sent["states"] == {"confirmed": 4} and sent["confirmation"] == "solidified"
    assert {p["confirmed_on"] for p in sent["payouts"]} == {"solidified"}
    assert [p["recipient"] for p in sent["payouts"]] == recipients
    assert [p["amount"] for p in sent["payouts"]] == ["20.5", "21.5", "22.5", "23.5"]
    on_chain = control.call("GET", f"/chain/transactions?owner={sender}")
    assert Counter(t["to"] for t in on_chain) == Counter(recipients)
    charged = sum(t["receipt"]["receipt"]["energy_usage_total"] for t in on_chain)
    assert sent["energy_charged"] == charged == ready["total_energy"]
    [usdt] = sent["tokens"]  # one token: its own line, in its own units
    assert (usdt["token"], usdt["amount"], usdt["energy_charged"]) == ("USDT", "88", charged)
    assert sent["energy_rented"] == ready["energy_bought"] > 0
    # No energy burned; TRX burned only for bandwidth beyond the free 600 bytes a day.
    net_fees = sum(t["receipt"]["receipt"].get("net_fee", 0) for t in on_chain)
    assert sent["energy_burned"] == 0 and net_fees > 0
    assert Decimal(sent["trx_burned"]) == Decimal(net_fees) / 1_000_000
    # Renting provided what the 64,285 on hand did not: that part, burned at the chain's
    # 100 sun, against what the orders cost.
    used = min(sent["energy_rented"], charged - 64_285)
    assert sent["energy_from_rental"] == used
    assert Decimal(sent["saving_measured"]) == Decimal(used) / 10_000 - Decimal(
        ready["energy_cost"])
    assert set(sent["figures"]) >= {"saving_measured", "energy_from_rental"}

    again = run_dag(example.dag)  # the same event again: nothing is sent twice
    assert again["publish_payouts_sent"][2]["states"] == {"confirmed": 4}
    assert len(control.call("GET", f"/chain/transactions?owner={sender}")) == 4
