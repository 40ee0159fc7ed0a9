"""TronPayoutOperator paying TRX (``TransferContract``) in real Airflow against the sandbox
chain: to an account that exists and to one the transfer creates, exactly one transfer each,
the pre-flight's fees (bandwidth, the new account's) equal to what the chain charged to the
sun, nothing bought or estimated for energy, nothing paid twice on a rerun; a TRX batch the
sender cannot pay with its fees refused before signing."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from payouts import DAGS
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.tokens import TRX_TOKEN
from airflow_provider_tronenergy.payout.rows import payouts
from airflow_provider_tronenergy.payout.trx import plan_trx
from tronenergy_protocol.address import random_address

pytestmark = pytest.mark.usefixtures("node_conn")


@pytest.fixture
def journal(payout_journal):
    """The payout journal (the purchase journal's database) the operators open."""
    return payout_journal


def trx_wallet(control, monkeypatch, trx: str) -> str:
    """A hot wallet holding ``trx`` and no USDT, its key the signer connection."""
    key = PrivateKey.random()
    address = key.public_key.to_base58check_address()
    control.wallet(address, trx=trx)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    return address


def sent_from(control, address: str) -> list[dict[str, Any]]:
    return list(control.call("GET", f"/chain/transactions?owner={address}"))


def test_trx_to_an_account_and_to_a_new_one_is_paid_once_at_the_planned_fees(
        run_dag, sandbox, control, monkeypatch, journal):
    sender = trx_wallet(control, monkeypatch, "20")
    existing, new = control.wallet(trx="1"), random_address()
    rows = [{"recipient": existing, "amount": "1.5", "token": "TRX", "payout_id": "trx-a"},
            {"recipient": new, "amount": "2", "token": "trx", "payout_id": "trx-b"}]
    with TronNodeClient(sandbox.root_url) as node:
        checked = payouts(rows, batch_id="trx-1", tokens=lambda _: TRX_TOKEN)
        plan = plan_trx(node, sender, checked, signatures=1, permission_id=0, shared=False,
                        concurrency=2)
        before = node.get_account(sender).trx_sun
        assert plan.accounts_created == 1 and plan.amount_sun == 3_500_000
        out = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="trx-1")
        state, tries, result = out["send"]
        assert (state, tries) == ("success", 1), out
        assert result["states"] == {"confirmed": 2}
        assert [p["token"] for p in result["payouts"]] == ["TRX", "TRX"]
        charged = sum(int(Decimal(p["trx_burned"]) * 1_000_000) for p in result["payouts"])
        assert charged == plan.fee_sun > 1_000_000  # the new account's fee, to the sun
        assert all(p["energy_total"] == 0 for p in result["payouts"])
        assert before - node.get_account(sender).trx_sun == plan.trx_needed_sun
        assert node.get_account(new).trx_sun == 2_000_000
        assert node.get_account(existing).trx_sun == 2_500_000
    [a, b] = sorted(journal.batch("trx-1"), key=lambda x: x.row)
    assert (a.token, a.units, a.fee_limit_sun, b.units) == ("TRX", 1_500_000, 0, 2_000_000)
    again = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="trx-1")
    assert again["send"][0] == "success"
    assert len(sent_from(control, sender)) == 2
    assert control.orders() == []  # no energy bought for TRX


def test_trx_the_sender_cannot_pay_with_its_fees_is_refused_before_signing(
        run_dag, control, monkeypatch, journal, capfd):
    sender = trx_wallet(control, monkeypatch, "3")  # 3 TRX: 2 TRX + a new account's 1.1 is more
    rows = [{"recipient": random_address(), "amount": "2", "token": "TRX"}]
    out = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="trx-short")
    assert out["send"][:2] == ("failed", 1), out
    assert "TRX: the TRX payouts take" in capfd.readouterr().out
    assert sent_from(control, sender) == [] and journal.recent() == []
