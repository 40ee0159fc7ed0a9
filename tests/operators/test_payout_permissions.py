"""TronPayoutOperator with its key in KMS, under the hot wallet's active permission.

Real Airflow (``dag.test()``), the sandbox as service and TRON node, moto's KMS in this
process (tests/support/kms.py): the ``tron_signer`` connection names only a KMS key.
The wallet's owner key is offline; its active permission 2 allows TriggerSmartContract
only and holds the KMS key. A batch is paid once; a KMS key outside the permission is
refused before anything is signed, without retry, the reason in the task's log. Under a
2-of-3 permission each transfer also pays the chain's multi-sign fee, which the
pre-flight counts: a wallet a sun short of it signs nothing.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from payouts import DAGS
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.signer.kms import KmsSigner
from support import kms as aws
from support.permissions import active, permit

pytestmark = pytest.mark.usefixtures("node_conn")


@pytest.fixture
def journal(payout_journal):
    """The payout journal (the purchase journal's database) the operators open."""
    return payout_journal


@pytest.fixture
def kms_wallet(control, monkeypatch):
    """A funded hot wallet, its owner key offline, and a KMS key as the signer connection."""
    with aws.aws_kms():
        client = aws.client()
        key_id = aws.new_key(client, alias="alias/airflow-payouts")
        signer = KmsSigner(client, key_id)
        cold = PrivateKey.random()
        sender = cold.public_key.to_base58check_address()
        control.wallet(sender, trx="200", usdt="1000", staked=2_000_000)
        monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
            {"conn_type": "tron_signer", "extra": {"kms_key_id": "alias/airflow-payouts",
                                                   "region_name": aws.REGION}}))
        yield control, cold, sender, signer


def successes(control, address: str) -> Counter[str]:
    return Counter(t["to"] for t in control.call("GET", f"/chain/transactions?owner={address}")
                   if t["receipt"]["receipt"].get("result") == "SUCCESS")


def test_a_kms_key_under_the_active_permission_pays_the_batch_once(run_dag, kms_wallet,
                                                                    journal):
    control, cold, sender, signer = kms_wallet
    assert permit(control, sender, [cold], [active([(signer.address, 1)])]).status_code == 200
    recipients = [control.wallet(trx="1", usdt="1") for _ in range(3)]
    rows = [{"recipient": r, "amount": "2.5"} for r in recipients]
    out = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="kms-1",
                  permission_id=2)
    state, tries, result = out["send"]
    assert (state, tries) == ("success", 1), out
    assert result["states"] == {"confirmed": 3}
    assert successes(control, sender) == Counter(recipients)


def test_a_kms_key_outside_the_permission_signs_nothing(run_dag, kms_wallet, journal, capfd):
    control, cold, sender, signer = kms_wallet
    other = PrivateKey.random().public_key.to_base58check_address()
    assert permit(control, sender, [cold], [active([(other, 1)])]).status_code == 200
    recipient = control.wallet(trx="1", usdt="1")
    out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": recipient, "amount": "1"}],
                  sender=sender, batch_id="kms-2", permission_id=2)
    assert out["send"][:2] == ("failed", 1), out  # not retried
    assert f"{signer.address} is not a key of permission 2" in capfd.readouterr().out
    assert successes(control, sender) == Counter() and journal.recent() == []


def test_a_kms_key_of_another_account_signs_nothing(run_dag, kms_wallet, journal, capfd):
    """Owner permission (0), the wallet's own key offline: the KMS key is another account's,
    so the pre-flight refuses it before KMS is asked for a signature."""
    control, _, sender, signer = kms_wallet
    recipient = control.wallet(trx="1", usdt="1")
    out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": recipient, "amount": "1"}],
                  sender=sender, batch_id="kms-other")
    assert out["send"][:2] == ("failed", 1), out  # not retried
    assert f"signs for {signer.address}, not the sender {sender}" in capfd.readouterr().out
    assert successes(control, sender) == Counter() and journal.recent() == []


def test_a_two_of_three_batch_short_of_the_multi_sign_fee_signs_nothing(
        run_dag, control, journal, capfd, monkeypatch):
    """Energy and bandwidth staked; TRX a sun short of two transfers' 1 TRX multi-sign fee.
    Failed before: signed, and the chain refused the second transfer at broadcast
    (``Account resource insufficient error.``). With the two fees the batch is paid once,
    and the wallet's TRX goes exactly to them."""
    cold, a, b, c = (PrivateKey.random() for _ in range(4))
    sender = cold.public_key.to_base58check_address()
    control.wallet(sender, trx="1.999999", usdt="1000", staked=2_000_000)
    control.post(f"/addresses/{sender}/bandwidth", {"staked": 10_000})
    assert permit(control, sender, [cold], [active([(a, 1), (b, 1), (c, 1)], 2)]
                  ).status_code == 200
    for name, key in (("DEFAULT", a), ("B", b)):
        monkeypatch.setenv(f"AIRFLOW_CONN_TRON_SIGNER_{name}", json.dumps(
            {"conn_type": "tron_signer", "password": key.hex()}))
    recipients = [control.wallet(trx="1", usdt="1") for _ in range(2)]
    rows = [{"recipient": r, "amount": "2.5"} for r in recipients]
    conf = {"payouts": rows, "sender": sender, "permission_id": 2,
            "cosigners": ["tron_signer_b"]}
    out = run_dag(DAGS["te_payouts"], batch_id="multi-1", **conf)
    assert out["send"][:2] == ("failed", 1), out  # not retried
    log = capfd.readouterr().out
    assert "multi-sign fee: 2 transfer(s) with several signatures at 1 TRX: 2 TRX" in log
    assert successes(control, sender) == Counter() and journal.recent() == []
    control.wallet(sender, trx="2")
    out = run_dag(DAGS["te_payouts"], batch_id="multi-2", **conf)
    state, tries, result = out["send"]
    assert (state, tries) == ("success", 1), out
    assert result["states"] == {"confirmed": 2} and result["totals"]["trx_burned"] == "2"
    assert successes(control, sender) == Counter(recipients)
    assert control.call("GET", f"/addresses/{sender}/wallet")["trx_sun"] == 0
