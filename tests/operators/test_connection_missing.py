"""A service or signer connection id that names no connection (a typo) fails the task once,
not retried (``AirflowFailException``), naming the setting and what needs it, before
anything is bought or signed: never Airflow's not-found, which a task retries (issue 45).
The node's own are in test_node_connection.py. Fast: ``execute`` in this process.
"""

from __future__ import annotations

import asyncio

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.errors import ConnectionMissing
from airflow_provider_tronenergy.hooks.tron_signer import TronSignerHook
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.operators.energy import TronEnergyBuyByCountOperator
from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.signer import LocalKeySigner
from tronenergy_protocol.address import random_address

TYPO = "tronenergy_defualt"
SIGNER_TYPO = "tron_signr_default"


@pytest.fixture(autouse=True)
def no_such_connection(monkeypatch):
    for name in (TYPO, SIGNER_TYPO):
        monkeypatch.delenv(f"AIRFLOW_CONN_{name.upper()}", raising=False)


def test_the_hooks_name_the_setting_and_what_needs_it():
    with pytest.raises(ConnectionMissing, match=f"^tronenergy_conn_id '{TYPO}' names no "
                                                "connection; energy purchases"):
        TronEnergyHook(TYPO).get_conn()
    with pytest.raises(ConnectionMissing, match=f"^tronenergy_conn_id '{TYPO}'"):
        asyncio.run(TronEnergyHook(TYPO).aget_client())
    with pytest.raises(ConnectionMissing, match=f"^tron_signer_conn_id '{SIGNER_TYPO}' names "
                                                "no connection; payouts are signed"):
        TronSignerHook(SIGNER_TYPO).get_conn()


def test_a_purchase_with_a_misspelled_service_fails_once_and_journals_nothing(journal):
    buy = TronEnergyBuyByCountOperator(task_id="buy", target_address=random_address(),
                                          count=1, tronenergy_conn_id=TYPO)
    with pytest.raises(AirflowFailException,
                       match=f"tronenergy_conn_id '{TYPO}' names no connection"):
        buy.execute({})  # type: ignore[arg-type]
    assert journal.list() == []


@pytest.mark.parametrize(("signer", "cosigners", "says"), [
    (SIGNER_TYPO, [], f"tron_signer_conn_id '{SIGNER_TYPO}' names no connection; payouts"),
    ("tron_signer_default", [SIGNER_TYPO],
     f"cosigner_conn_ids '{SIGNER_TYPO}' names no connection; the permission's threshold"),
])
def test_a_payout_with_a_misspelled_signer_fails_before_signing(
        tmp_path, monkeypatch, node_conn, signer, cosigners, says):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT",
                       f'{{"conn_type": "tron_signer", "password": "{"11" * 32}"}}')
    signed: list[object] = []
    monkeypatch.setattr(LocalKeySigner, "sign", lambda *a, **k: signed.append(a))
    send = TronPayoutOperator(task_id="send", sender_address=random_address(),
                              payouts=[{"recipient": random_address(), "amount": "1"}],
                              batch_id="typo-signer", tron_signer_conn_id=signer,
                              cosigner_conn_ids=cosigners, permission_id=2 if cosigners else 0)
    with pytest.raises(AirflowFailException, match=says) as failed:
        send.execute({})  # type: ignore[arg-type]
    assert "nothing was signed" in str(failed.value)
    assert signed == []
    journal = PayoutJournal(url)
    try:
        assert journal.recent() == []
    finally:
        journal.close()


def test_the_order_sensors_fail_once_in_the_worker():
    from airflow_provider_tronenergy.sensors.order import TronEnergyOrderSensor
    from airflow_provider_tronenergy.sensors.orders import TronEnergyOrdersSensor

    one = TronEnergyOrderSensor(task_id="wait", order_id="ord_1", tronenergy_conn_id=TYPO,
                                deferrable=False)
    many = TronEnergyOrdersSensor(task_id="waits", order_ids=["ord_1"],
                                  tronenergy_conn_id=TYPO, deferrable=False)
    for sensor in (one, many):
        with pytest.raises(AirflowFailException, match=f"tronenergy_conn_id '{TYPO}'"):
            sensor.execute({})  # type: ignore[arg-type]
