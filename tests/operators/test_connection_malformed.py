"""A malformed connection (its Extra not JSON) fails each task that reads it once, not
retried (``AirflowFailException``), naming the connection, before anything is bought, signed
or credited: bad input a retry meets again. Fast: ``execute`` in this process, the service
and the node refused before any request.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.operators.batch_buy import TronEnergyBatchBuyOperator
from airflow_provider_tronenergy.operators.deposit_scan import TronNodeDepositScanOperator
from airflow_provider_tronenergy.operators.energy import TronEnergyBuyByCountOperator
from airflow_provider_tronenergy.operators.keeper import TronEnergyKeeperOperator
from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.sensors.order import TronEnergyOrderSensor
from airflow_provider_tronenergy.sensors.orders import TronEnergyOrdersSensor
from airflow_provider_tronenergy.signer import LocalKeySigner
from support.airflow_compat import malformed_says
from tronenergy_protocol.address import random_address

BROKEN = '{"network": "nile",, }'
SAYS = "its Extra is not valid JSON"


def _broken(monkeypatch: pytest.MonkeyPatch, conn_id: str, conn_type: str,
            **fields: Any) -> str:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(
        {"conn_type": conn_type, "extra": BROKEN, **fields}))
    return conn_id


@pytest.fixture
def service(monkeypatch) -> str:
    return _broken(monkeypatch, "service_broken", "tronenergy", host="http://127.0.0.1:9/v1",
                   login="key", password="secret")


@pytest.fixture
def node(monkeypatch) -> str:
    return _broken(monkeypatch, "node_broken", "tron_node", host="http://127.0.0.1:9")


def _fails_once(task: Any, context: dict[str, Any], conn_id: str) -> None:
    with pytest.raises(AirflowFailException) as failed:
        task.execute(context)
    said = malformed_says(f"connection '{conn_id}': {SAYS}")
    assert said in str(failed.value) and conn_id in str(failed.value), failed.value


def test_a_purchase_and_a_batch_purchase(journal, service):
    _fails_once(TronEnergyBuyByCountOperator(
        task_id="buy", target_address=random_address(), count=1, tronenergy_conn_id=service),
        {}, service)
    _fails_once(TronEnergyBatchBuyOperator(
        task_id="buys", orders=[{"target_address": random_address(), "count": 1,
                                 "purchase_key": "broken:b0"}],
        tronenergy_conn_id=service, tron_node_conn_id=None, max_spend_trx="10"), {}, service)
    assert journal.list() == []


def test_the_order_sensors_in_the_worker(service):
    for sensor in (TronEnergyOrderSensor(task_id="wait", order_id="ord_1",
                                         tronenergy_conn_id=service, deferrable=False),
                   TronEnergyOrdersSensor(task_id="waits", order_ids=["ord_1"],
                                          tronenergy_conn_id=service, deferrable=False)):
        _fails_once(sensor, {}, service)


def test_a_keeper_with_a_broken_service_or_node(journal, node_conn, service, node):
    def keeper(**conns: str) -> TronEnergyKeeperOperator:
        return TronEnergyKeeperOperator(
            task_id="keep", wallets=[random_address()], floor=100_000, target=200_000,
            max_price_per_10k_trx="1", max_daily_spend_trx="100", keeper_name="broken", **conns)

    _fails_once(keeper(tronenergy_conn_id=service), {}, service)
    _fails_once(keeper(tron_node_conn_id=node), {}, node)
    assert journal.list() == []


def test_a_deposit_scan_with_a_broken_node(tmp_path, monkeypatch, node):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", url)
    _fails_once(TronNodeDepositScanOperator(task_id="scan", addresses=[random_address()],
                                            start=1, tron_node_conn_id=node),
                {"run_id": "broken"}, node)
    with DepositLedger(url) as ledger:
        assert ledger.credits() == []


def test_a_payout_with_a_broken_node_or_signer(tmp_path, monkeypatch, node_conn, node):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    signer = _broken(monkeypatch, "signer_broken", "tron_signer", password="11" * 32)
    signed: list[object] = []
    monkeypatch.setattr(LocalKeySigner, "sign", lambda *a, **k: signed.append(a))

    def send(batch_id: str, **conns: str) -> TronPayoutOperator:
        return TronPayoutOperator(task_id="send", sender_address=random_address(),
                                  payouts=[{"recipient": random_address(), "amount": "1"}],
                                  batch_id=batch_id, **conns)

    _fails_once(send("broken-node", tron_node_conn_id=node), {}, node)
    _fails_once(send("broken-signer", tron_signer_conn_id=signer), {}, signer)
    assert signed == []
    journal = PayoutJournal(url)
    try:
        assert journal.recent() == []
    finally:
        journal.close()
