"""The send example: a prepared batch (the preparation example, dag.test()) is sent once,
and its ``payouts sent`` event carries what the chain measured. Counted on the chain."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal

import batch_payout_preparation as preparation
import batch_payout_send as example
from tronpy.keys import PrivateKey

from support.sandbox import create_token, node_connection_json, set_token_units, token_units
from tronenergy_protocol.address import random_address


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


def test_a_sheet_of_three_tokens_is_prepared_and_sent_as_planned(
        run_dag, sandbox, control, node_conn, tmp_path, monkeypatch):
    """USDT, an 18-decimal token named in the node connection's tokens extra and TRX to an
    address without an account, in one sheet: prepared per contract, sent from the event's
    rows, each paid once, the energy charged what the plan said."""
    e18 = create_token(sandbox, symbol="E18", decimals=18, energy_factor=10_000)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT",
                       node_connection_json(sandbox, tokens={"E18": e18}))
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'j.db'}")
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="100", usdt="1000", staked=64_285)
    set_token_units(sandbox, e18, sender, 10 ** 20)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    usdt_to, e18_to, trx_to = control.wallet(trx="1", usdt="1"), control.wallet(trx="1"), \
        random_address()
    payouts = tmp_path / "payouts.csv"
    payouts.write_text(f"recipient,amount,token\n{usdt_to},20.5,\n"
                       f"{e18_to},1.000000000000000001,E18\n{trx_to},3,TRX\n")
    prepared = run_dag(preparation.dag, payouts_file=str(payouts), sender_address=sender,
                       tron_node_conn_id=node_conn, rent_time="1", max_spend_trx="100",
                       batch_id="send-tokens-1")
    assert prepared["__run__"] == "success", prepared
    ready = prepared["publish_batch_ready"][2]
    assert [r.get("token") for r in ready["recipients"]] == [None, e18, "TRX"]
    assert ready["onchain"]["trx"]["accounts_created"] == 1

    out = run_dag(example.dag)
    assert out["__run__"] == "success", out
    sent = out["publish_payouts_sent"][2]
    assert sent["states"] == {"confirmed": 3}
    assert token_units(sandbox, e18, e18_to) == 10 ** 18 + 1
    on_chain = control.call("GET", f"/chain/transactions?owner={sender}")
    assert Counter(t["to"] for t in on_chain) == Counter([usdt_to, e18_to, trx_to])
    charged = sum(t["receipt"]["receipt"].get("energy_usage_total", 0) for t in on_chain)
    assert sent["energy_charged"] == charged == ready["total_energy"]
    assert run_dag(example.dag)["publish_payouts_sent"][2]["states"] == {"confirmed": 3}
    assert len(control.call("GET", f"/chain/transactions?owner={sender}")) == 3
