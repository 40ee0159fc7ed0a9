"""A TRX payout row whose recipient is its own sender: bad input (java-tron's
``TransferActuator`` refuses "Cannot transfer TRX to yourself"), so the task fails at once,
naming the row, before anything is signed, and is not retried."""

from __future__ import annotations

import json

import pytest
from payouts import DAGS
from tronpy.keys import PrivateKey

from tronenergy_protocol.address import random_address

pytestmark = pytest.mark.usefixtures("node_conn")


def test_a_trx_row_to_its_own_sender_fails_the_task_once_naming_the_row(
        run_dag, control, monkeypatch, tmp_path, capfd):
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'journal.db'}")
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="20")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    rows = [{"recipient": random_address(), "amount": "1", "token": "TRX"},
            {"recipient": sender, "amount": "1", "token": "TRX"}]
    out = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="trx-self")
    assert list(control.call("GET", f"/chain/transactions?owner={sender}")) == []
    assert out["send"][:2] == ("failed", 1), out
    assert "row 1" in capfd.readouterr().out
