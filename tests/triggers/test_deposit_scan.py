"""TronNodeDepositScanTrigger against the sandbox's chain: it fires once the head it may trust is
past the checkpoint (solidified, or the head less N), says so at its deadline, goes on
through a node that does not answer, and serializes identifiers and figures only."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.operators.deposit_scan import TronNodeDepositScanOperator
from airflow_provider_tronenergy.triggers.deposit_scan import TronNodeDepositScanTrigger
from support.airflow_compat import malformed_says
from tronenergy_protocol.address import random_address


def fired(trigger: TronNodeDepositScanTrigger) -> dict:
    async def first() -> dict:
        async for event in trigger.run():
            return dict(event.payload)
        raise AssertionError("no event")

    return asyncio.run(asyncio.wait_for(first(), 30))


def solid(control) -> int:
    return int(control.call("GET", "/chain")["solidified"])


def test_it_fires_once_the_solid_head_is_past_the_checkpoint(control, node_conn):
    after = solid(control) + 5  # blocks come every 30 ms here
    event = fired(TronNodeDepositScanTrigger(tron_node_conn_id=node_conn, after_block=after,
                                         poll_interval_seconds=0.05, end_time=time.time() + 20,
                                         carried={"USDT": [2, 7]}))
    assert event["status"] == "moved" and event["head"] > after
    assert event["carried"] == {"USDT": [2, 7]} and event["after_block"] == after


def test_n_confirmations_read_the_head_less_n(control, node_conn):
    after = solid(control) + 10  # past the solid head, not past the head less 5
    event = fired(TronNodeDepositScanTrigger(tron_node_conn_id=node_conn, after_block=after,
                                         confirmations=5, poll_interval_seconds=0.05,
                                         end_time=time.time() + 20))
    assert event["status"] == "moved"


def test_at_its_deadline_it_says_so(control, node_conn):
    event = fired(TronNodeDepositScanTrigger(tron_node_conn_id=node_conn,
                                         after_block=solid(control) + 100_000,
                                         poll_interval_seconds=0.05, end_time=time.time() + 0.3))
    assert event["status"] == "timeout" and event["head"] is not None


def test_a_node_that_does_not_answer_is_read_again_until_the_deadline(monkeypatch, capfd):
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DOWN", json.dumps(
        {"conn_type": "tron_node", "host": "http://127.0.0.1:9", "extra": {"max_retries": 0}}))
    event = fired(TronNodeDepositScanTrigger(tron_node_conn_id="tron_node_down", after_block=1,
                                         poll_interval_seconds=0.05, end_time=time.time() + 0.5))
    assert event["status"] == "timeout" and event["head"] is None
    assert "the node did not answer" in capfd.readouterr().out


@pytest.mark.parametrize(("extra", "says"), [
    (None, "says network mainnet"),  # no network extra: mainnet; the sandbox is not
    ('{"network": "custom",', malformed_says("its Extra is not valid JSON")),
], ids=["another-chain", "malformed"])
def test_a_node_on_another_chain_or_a_malformed_connection_fails_the_task_once(
        sandbox, monkeypatch, extra, says):
    """A person fixes the connection: the task fails at once, not retried (it was retried
    once, and the retry failed in the worker)."""
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_WRONG", json.dumps(
        {"conn_type": "tron_node", "host": sandbox.root_url, "extra": extra}))
    event = fired(TronNodeDepositScanTrigger(tron_node_conn_id="tron_node_wrong", after_block=1,
                                             poll_interval_seconds=0.05, end_time=time.time() + 20))
    assert (event["status"], event.get("retryable")) == ("error", False), event
    assert says in event["message"] and "tron_node_wrong" in event["message"]
    scan = TronNodeDepositScanOperator(task_id="scan", addresses=[random_address()], start=1,
                                       tron_node_conn_id="tron_node_wrong")
    with pytest.raises(AirflowFailException, match=says):
        scan.execute_complete({}, event)  # type: ignore[arg-type]


def test_its_kwargs_are_identifiers_and_figures_only():
    trigger = TronNodeDepositScanTrigger(tron_node_conn_id="tron_node_default", after_block=7,
                                     end_time=1e10, carried={"TRX": [1, 0]})
    path, kwargs = trigger.serialize()
    assert path == "airflow_provider_tronenergy.triggers.deposit_scan.TronNodeDepositScanTrigger"
    assert kwargs == {"tron_node_conn_id": "tron_node_default", "after_block": 7,
                      "confirmations": None, "poll_interval_seconds": 30.0, "end_time": 1e10,
                      "carried": {"TRX": [1, 0]}}
    assert TronNodeDepositScanTrigger(**kwargs).serialize() == (path, kwargs)
