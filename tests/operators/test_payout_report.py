"""TronPayoutOperator's result per token, in real Airflow against the sandbox chain: each
payout's amount in its own token's units, one line per token (the symbol as the contract
answers it, however hostile; its decimals; the energy the chain charged that contract),
the token's explorer page on the connection's explorer."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from payouts import DAGS
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.node.models import trx_text
from support.links import ui_extra_links
from support.sandbox import create_token, node_connection_json, set_token_units
from tronenergy_protocol.address import random_address

HOSTILE = "<script>alert(1)</script>"
NILE = "https://nile.tronscan.org"


@pytest.fixture
def journal(payout_journal):
    """The payout journal (the purchase journal's database) the operators open."""
    return payout_journal


def test_a_mixed_batchs_result_has_each_tokens_amounts_energy_and_page(
        run_dag, sandbox, control, monkeypatch, journal):
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT",
                       node_connection_json(sandbox, explorer_url=NILE))
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="200", usdt="100", staked=2_000_000)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    e18 = create_token(sandbox, symbol=HOSTILE, decimals=18, holder_energy=20_000,
                       new_holder_energy=40_000)
    set_token_units(sandbox, e18, sender, 10 ** 21)
    holder = random_address()
    set_token_units(sandbox, e18, holder, 1)
    rows = [{"recipient": random_address(), "amount": "1.5", "payout_id": "r-usdt-0"},
            {"recipient": holder, "amount": "0.000000000000000001", "token": e18,
             "payout_id": "r-e18-0"},
            {"recipient": random_address(), "amount": "2.25", "payout_id": "r-usdt-1"},
            {"recipient": random_address(), "amount": "100.000000000000000001", "token": e18,
             "payout_id": "r-e18-1"},
            {"recipient": random_address(), "amount": "2.5", "token": "TRX",
             "payout_id": "r-trx-0"}]
    out = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="report-1")
    state, _, result = out["send"]
    assert state == "success" and result["states"] == {"confirmed": 5}, out
    payouts = sorted(result["payouts"], key=lambda p: p["row"])
    assert [(p["token"], p["amount"]) for p in payouts] == [
        ("USDT", "1.5"), (e18, "0.000000000000000001"), ("USDT", "2.25"),
        (e18, "100.000000000000000001"), ("TRX", "2.5")]
    lines = {line["token"]: line for line in result["tokens"]}
    assert set(lines) == {"USDT", e18, "TRX"}
    usdt, token, trx = lines["USDT"], lines[e18], lines["TRX"]
    # A TRX payout creating its recipient: the chain's getCreateNewAccountFeeInSystemContract
    # (1 TRX) as account creation, no energy, no token page.
    assert (trx["amount"], trx["energy_charged"], trx["explorer"]) == ("2.5", 0, "")
    assert (trx["trx_spent"]["account_creation"], trx["trx_spent"]["energy"]) == ("1", "0")
    assert (token["symbol"], token["decimals"], token["contract"]) == (HOSTILE, 18, e18)
    assert (token["amount"], token["units"]) == ("100.000000000000000002", str(10 ** 20 + 2))
    assert (usdt["amount"], usdt["decimals"], usdt["symbol"]) == ("3.75", 6, "USDT")
    assert token["energy_charged"] == 20_000 + 40_000  # its contract's, as created
    assert usdt["energy_charged"] == sum(p["energy_total"] for p in payouts
                                         if p["token"] == "USDT") > 0
    for line in (usdt, token, trx):  # TRX by kind adds up to what the receipts burned
        spent = line["trx_spent"]
        burned = sum(a.receipt["trx_burned_sun"] for a in journal.batch("report-1")
                     if a.token == line["token"])
        assert spent["total"] == trx_text(burned)
        assert sum(Decimal(v) for k, v in spent.items() if k != "total") == Decimal(
            spent["total"])
    assert token["explorer"] == f"{NILE}/#/token20/{e18}"
    assert usdt["explorer"] == f"{NILE}/#/token20/{usdt['contract']}" and usdt["contract"]
    # Several tokens: the task's token link shows none (each line has its page).
    links = ui_extra_links("te_payouts", out["__run_id__"], "send")
    assert links["TronScan: payouts"] == f"{NILE}/#/address/{sender}"
    assert not links.get("TronScan: token")
