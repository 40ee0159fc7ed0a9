"""A node connection id that names no connection (a typo) fails each task that needs a node,
before anything is bought, signed or credited, naming the setting and the id, and is not
retried (``AirflowFailException``); never Airflow's not-found, which a task retries, and
never "no node" (issue 45). Fast: each operator's ``execute`` in this process, no DAG run.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.hooks.tron_signer import TronSignerHook
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.operators.batch_buy import TronEnergyBatchBuyOperator
from airflow_provider_tronenergy.operators.deposit_scan import TronNodeDepositScanOperator
from airflow_provider_tronenergy.operators.keeper import TronEnergyKeeperOperator
from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.triggers.deposit_scan import TronNodeDepositScanTrigger
from airflow_provider_tronenergy.triggers.keeper import TronEnergyKeeperTrigger
from airflow_provider_tronenergy.triggers.payout import TronPayoutBatchTrigger
from tronenergy_protocol.address import random_address

TYPO = "tron_nod_default"


@pytest.fixture(autouse=True)
def no_such_connection(monkeypatch):
    monkeypatch.delenv(f"AIRFLOW_CONN_{TYPO.upper()}", raising=False)


@pytest.fixture
def untouched(monkeypatch) -> list[str]:
    """The service's and the signer's clients: asked for, the test records it (nothing may
    be bought or signed)."""
    asked: list[str] = []

    def refuse(name: str) -> Any:
        def get_conn(self: Any) -> Any:
            asked.append(name)
            raise AssertionError(f"the {name} was asked for")
        return get_conn

    monkeypatch.setattr(TronEnergyHook, "get_conn", refuse("service"))
    monkeypatch.setattr(TronSignerHook, "get_conn", refuse("signer"))
    return asked


def _names_the_typo(failed: pytest.ExceptionInfo[AirflowFailException], needs: str) -> None:
    assert f"tron_node_conn_id '{TYPO}' names no connection; {needs}" in str(failed.value)


def test_a_payout_task_fails_before_anything_is_signed(tmp_path, monkeypatch, untouched):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    send = TronPayoutOperator(task_id="send", sender_address=random_address(),
                              payouts=[{"recipient": random_address(), "amount": "1"}],
                              batch_id="typo-1", tron_node_conn_id=TYPO)
    with pytest.raises(AirflowFailException) as failed:
        send.execute({})  # type: ignore[arg-type]
    _names_the_typo(failed, "payouts need a TRON node")
    assert untouched == []
    journal = PayoutJournal(url)
    try:
        assert journal.recent() == []
    finally:
        journal.close()


def test_a_payout_tasks_confirming_node_that_names_nothing_is_refused(node_conn, untouched):
    send = TronPayoutOperator(task_id="send", sender_address=random_address(),
                              payouts=[{"recipient": random_address(), "amount": "1"}],
                              batch_id="typo-2", confirm_node_conn_id=TYPO)
    with pytest.raises(AirflowFailException,
                       match=f"confirm_node_conn_id '{TYPO}' names no connection"):
        send.execute({})  # type: ignore[arg-type]
    assert untouched == []


def test_a_keeper_task_fails_before_anything_is_bought(journal, untouched):
    keeper = TronEnergyKeeperOperator(
        task_id="keep", wallets=[random_address()], floor=100_000, target=200_000,
        max_price_per_10k_trx="1", max_daily_spend_trx="100", keeper_name="typo",
        tron_node_conn_id=TYPO)
    with pytest.raises(AirflowFailException) as failed:
        keeper.execute({})  # type: ignore[arg-type]
    _names_the_typo(failed, "the keeper needs a TRON node")
    assert untouched == [] and journal.list() == []


def test_a_deposit_scan_fails_before_anything_is_credited(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", url)
    scan = TronNodeDepositScanOperator(task_id="scan", addresses=[random_address()],
                                       start=1, tron_node_conn_id=TYPO)
    with pytest.raises(AirflowFailException) as failed:
        scan.execute({"run_id": "typo"})  # type: ignore[arg-type]
    _names_the_typo(failed, "the deposit scan needs a TRON node")
    with DepositLedger(url) as ledger:
        assert ledger.credits() == []


@pytest.mark.parametrize(("given", "says"), [
    (TYPO, f"tron_node_conn_id '{TYPO}' names no connection"),
    ("", "tron_node_conn_id is empty")])
def test_a_batch_purchase_with_a_node_that_names_nothing_buys_nothing(journal, untouched,
                                                                      given, says):
    """Its reuse check is the preparation's: None skips it on purpose, a typo or an empty
    value (a template that rendered nothing) is refused, saying how to skip it."""
    buy = TronEnergyBatchBuyOperator(
        task_id="buy", orders=[{"target_address": random_address(), "count": 1,
                                "purchase_key": "typo:b0"}], tron_node_conn_id=given,
        max_spend_trx="10")
    with pytest.raises(AirflowFailException, match=says) as failed:
        buy.execute({})  # type: ignore[arg-type]
    assert "or pass tron_node_conn_id=None to plan without on-chain checks" \
        in str(failed.value)
    assert untouched == [] and journal.list() == []


def _first_event(trigger: Any) -> Any:
    async def first() -> Any:
        async for event in trigger.run():
            return event
        return None

    return asyncio.run(asyncio.wait_for(first(), 30))


def test_the_triggers_refuse_a_node_that_names_nothing(tmp_path, monkeypatch, untouched):
    """The keeper's watcher wakes its keeper once with an error instead of polling nothing
    for ever (it logged each poll and woke nobody), and the run fails on it; the scan's and
    the payouts' waits read no node but the one named, and fire an event their task fails
    on, not retried (a trigger that raised is retried)."""
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'journal.db'}")
    stop = _first_event(TronEnergyKeeperTrigger(keeper="hot", tron_node_conn_id=TYPO,
                                                poll_interval_seconds=0.05)).payload
    assert (stop["status"], stop["retryable"]) == ("error", False), stop
    keeper = TronEnergyKeeperOperator(
        task_id="keep", wallets=[random_address()], floor=100_000, target=200_000,
        max_price_per_10k_trx="1", max_daily_spend_trx="100", keeper_name="hot")
    woken = {"triggering_asset_events": {"tronenergy://keeper/hot": [
        SimpleNamespace(extra={"payload": stop})]}}
    with pytest.raises(AirflowFailException, match=r"^the keeper's watcher stopped: "
                                                   f"tron_node_conn_id '{TYPO}' names no"):
        keeper.execute(woken)  # type: ignore[arg-type]
    assert untouched == []
    scanned = _first_event(TronNodeDepositScanTrigger(
        tron_node_conn_id=TYPO, after_block=1, poll_interval_seconds=0.05, end_time=2e9)).payload
    assert (scanned["status"], scanned["retryable"]) == ("error", False), scanned
    scan = TronNodeDepositScanOperator(task_id="scan", addresses=[random_address()],
                                       start=1, tron_node_conn_id=TYPO)
    with pytest.raises(AirflowFailException) as failed:
        scan.execute_complete({}, scanned)  # type: ignore[arg-type]
    _names_the_typo(failed, "the deposit scan needs a TRON node")
    followed = _first_event(TronPayoutBatchTrigger("b1", TYPO, end_time=0.0)).payload
    assert (followed["status"], followed["retryable"]) == ("error", False), followed
    send = TronPayoutOperator(task_id="send", sender_address=random_address(),
                              payouts=[{"recipient": random_address(), "amount": "1"}],
                              batch_id="b1", tron_node_conn_id=TYPO)
    with pytest.raises(AirflowFailException) as failed:
        send.execute_complete({}, followed)  # type: ignore[arg-type]
    _names_the_typo(failed, "payouts need a TRON node")


def test_a_keeper_without_a_node_is_refused_naming_the_setting(untouched):
    """None is the preparation's choice only: a keeper cannot run without a node."""
    keeper = TronEnergyKeeperOperator(
        task_id="keep", wallets=[random_address()], floor=100_000, target=200_000,
        max_price_per_10k_trx="1", max_daily_spend_trx="100", tron_node_conn_id=None)
    ti = SimpleNamespace(dag_id="keeper_dag")
    with pytest.raises(AirflowFailException, match=r"^tron_node_conn_id is None; the keeper"):
        keeper.execute({"ti": ti})  # type: ignore[arg-type]
