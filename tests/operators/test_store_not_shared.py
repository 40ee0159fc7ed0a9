"""A store on one host's SQLite file while the executor runs tasks on several hosts
(``sqlstore.StoreNotShared``) fails each task that opens it once, not retried
(``AirflowFailException``), naming the setting: never an error Airflow retries, and from a
trigger an event the task fails on (a trigger that raised would be retried). Fast: each
task's entry point in this process, the executor as ``sqlstore`` reads it, no network.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks.access import forget_stores
from airflow_provider_tronenergy.deposits.handover import forget_ledgers
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.operators.batch_buy import TronEnergyBatchBuyOperator
from airflow_provider_tronenergy.operators.deposit_scan import TronNodeDepositScanOperator
from airflow_provider_tronenergy.operators.energy import TronEnergyBuyByCountOperator
from airflow_provider_tronenergy.operators.keeper import TronEnergyKeeperOperator
from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.payout import journal as payouts
from airflow_provider_tronenergy.purchase_journal import store as purchases
from airflow_provider_tronenergy.sensors.transfer import TronEnergyTransferSensor
from airflow_provider_tronenergy.triggers.keeper import TronEnergyKeeperTrigger
from airflow_provider_tronenergy.triggers.payout import TronPayoutBatchTrigger
from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferTrigger
from tronenergy_protocol.address import random_address

CELERY = "airflow.providers.celery.executors.celery_executor.CeleryExecutor"
JOURNAL, CALLBACKS, LEDGER = ("TRONENERGY_PURCHASE_JOURNAL", "TRONENERGY_CALLBACK_STORE",
                              "TRONENERGY_DEPOSITS_DB")


@pytest.fixture(autouse=True)
def celery(monkeypatch, tmp_path):
    """Celery's executor, every store at its default (SQLite in ``$AIRFLOW_HOME``), and
    connections that name something (no request is made: each task stops before; the
    node's chain is taken as checked)."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    for name in (JOURNAL, CALLBACKS, LEDGER):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(f"{name}_SINGLE_HOST", raising=False)
    monkeypatch.setattr(sqlstore, "configured_executors", lambda: [CELERY])
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps(
        {"conn_type": "tron_node", "host": "http://127.0.0.1:9"}))
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", json.dumps(
        {"conn_type": "tronenergy", "host": "http://127.0.0.1:9/v1", "login": "k",
         "password": "s"}))
    monkeypatch.setattr(TronNodeHook, "check_chain", lambda self: None)  # no node here

    async def same_chain(self: TronNodeHook) -> None:
        return None

    monkeypatch.setattr(TronNodeHook, "acheck_chain", same_chain)
    forget()
    yield
    forget()
    assert not list(tmp_path.glob("*.db"))  # nothing was opened


def forget() -> None:
    purchases._OPEN.clear()
    payouts._OPEN.clear()
    forget_stores()
    forget_ledgers()


def _names(failed: pytest.ExceptionInfo[BaseException], env: str) -> None:
    message = str(failed.value)
    assert "CeleryExecutor" in message and f"{env}_SINGLE_HOST=true" in message, message


def _first_event(trigger: Any) -> Any:
    async def first() -> Any:
        async for event in trigger.run():
            return event.payload
        return None

    return asyncio.run(asyncio.wait_for(first(), 30))


def test_the_deposit_scan_fails_once(monkeypatch):
    scan = TronNodeDepositScanOperator(task_id="scan", addresses=[random_address()], start=1)
    with pytest.raises(AirflowFailException) as failed:
        scan.execute({"run_id": "r"})  # type: ignore[arg-type]
    _names(failed, LEDGER)


def test_the_keeper_fails_once():
    keeper = TronEnergyKeeperOperator(
        task_id="keep", wallets=[random_address()], floor=100_000, target=200_000,
        max_price_per_10k_trx="1", max_daily_spend_trx="100", keeper_name="shared")
    with pytest.raises(AirflowFailException) as failed:
        keeper.execute({})  # type: ignore[arg-type]
    _names(failed, JOURNAL)


def test_a_purchase_fails_once_nothing_bought():
    buy = TronEnergyBuyByCountOperator(task_id="buy", target_address=random_address(),
                                       count=1, purchase_key="shared-1")
    with pytest.raises(AirflowFailException) as failed:
        buy.execute({"ti": None})  # type: ignore[arg-type]
    _names(failed, JOURNAL)


def test_a_batch_purchase_fails_once_nothing_bought():
    buy = TronEnergyBatchBuyOperator(
        task_id="buy", orders=[{"target_address": random_address(), "count": 1,
                                "purchase_key": "shared:b0"}], tron_node_conn_id=None,
        max_spend_trx=None)
    with pytest.raises(AirflowFailException) as failed:
        buy.execute({"ti": SimpleNamespace(dag_id="d", run_id="r")})  # type: ignore[arg-type]
    _names(failed, JOURNAL)


def test_a_payout_answered_by_a_person_fails_once():
    send = TronPayoutOperator(task_id="send", sender_address=random_address(),
                              payouts=[{"recipient": random_address(), "amount": "1"}],
                              batch_id="shared-1")
    with pytest.raises(AirflowFailException) as failed:
        send.execute_answer({}, {"chosen_options": []}, [])  # type: ignore[arg-type]
    _names(failed, JOURNAL)


def test_the_payout_wait_in_the_triggerer_fails_the_task_once():
    event = _first_event(TronPayoutBatchTrigger("shared-1", "tron_node_default",
                                                end_time=0.0))
    assert event["status"] == "error" and event["retryable"] is False, event
    send = TronPayoutOperator(task_id="send", sender_address=random_address(),
                              payouts=[{"recipient": random_address(), "amount": "1"}],
                              batch_id="shared-1")
    with pytest.raises(AirflowFailException) as failed:
        send.execute_complete({}, event)  # type: ignore[arg-type]
    _names(failed, JOURNAL)


@pytest.mark.parametrize("deferrable", [False, True])
def test_the_transfer_sensor_fails_once(deferrable):
    sensor = TronEnergyTransferSensor(task_id="wait", address=random_address(),
                                      deferrable=deferrable)
    with pytest.raises(AirflowFailException) as failed:
        sensor.execute({})  # type: ignore[arg-type]
    _names(failed, CALLBACKS)
    sensor._start_id = 0
    with pytest.raises(AirflowFailException) as failed:
        sensor.poke({})  # type: ignore[arg-type]
    _names(failed, CALLBACKS)


@pytest.mark.parametrize("proven", [False, True])
def test_the_transfer_trigger_fires_a_failure_the_sensor_does_not_retry(proven):
    address = random_address()
    event = _first_event(TronEnergyTransferTrigger(address=address, after_id=0,
                                                   proven=proven, end_time=2e9))
    assert event["status"] == "error" and event["retryable"] is False, event
    sensor = TronEnergyTransferSensor(task_id="wait", address=address)
    with pytest.raises(AirflowFailException) as failed:
        sensor.execute_complete({}, event)  # type: ignore[arg-type]
    _names(failed, CALLBACKS)


def test_a_proven_wait_whose_ledger_is_refused_fails_once(monkeypatch, tmp_path):
    """The callback store said to be one host's, the ledger not: a proven wait judges a
    stored callback by the ledger, which refuses; the sensor and the trigger fail once."""
    from airflow_provider_tronenergy.callbacks.store import CallbackStore
    from support.callbacks import verified_transfer

    monkeypatch.setenv(f"{CALLBACKS}_SINGLE_HOST", "true")
    address = random_address()
    store = CallbackStore(None)
    try:
        store.record(verified_transfer(address, "5", "USDT"))
    finally:
        store.close()
    sensor = TronEnergyTransferSensor(task_id="wait", address=address, after_id=0,
                                      deferrable=False, timeout=5)
    sensor._start_id = 0
    with pytest.raises(AirflowFailException) as failed:
        sensor.poke({})  # type: ignore[arg-type]
    _names(failed, LEDGER)
    event = _first_event(TronEnergyTransferTrigger(address=address, after_id=0, end_time=2e9))
    assert event["status"] == "error" and event["retryable"] is False, event
    assert f"{LEDGER}_SINGLE_HOST=true" in event["message"]
    for db in tmp_path.glob("*.db"):  # the callback store, said to be one host's
        db.unlink()


def test_the_keepers_watcher_refuses_to_poll_a_registry_of_one_host():
    """An AssetWatcher's trigger has no task to fail: it wakes the keeper once with an
    error naming the setting, which the run fails on."""
    stop = _first_event(TronEnergyKeeperTrigger(keeper="hot", poll_interval_seconds=0.05))
    assert (stop["status"], stop["retryable"]) == ("error", False), stop
    message = stop["message"]
    assert "CeleryExecutor" in message and f"{JOURNAL}_SINGLE_HOST=true" in message, message
