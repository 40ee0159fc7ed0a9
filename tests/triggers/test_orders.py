"""TronEnergyOrdersTrigger: one trigger for a batch's orders, run() against the sandbox
(manual clock: orders move only when a test says so)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from airflow_provider_tronenergy.orders import poll as order_poll
from airflow_provider_tronenergy.sensors.orders import orders_event_result
from airflow_provider_tronenergy.triggers.orders import TronEnergyOrdersTrigger
from support import orders
from support.control import Control

sandbox, conn = orders.sandbox, orders.conn
CLASSPATH = "airflow_provider_tronenergy.triggers.orders.TronEnergyOrdersTrigger"


def run(trigger: TronEnergyOrdersTrigger) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        return [event.payload async for event in trigger.run()]

    events = asyncio.run(asyncio.wait_for(main(), 60))
    assert order_poll._POLLERS == {}  # every wait left; the shared client is closed
    return events


def trigger_for(ids: list[str], *, end_in: float = 30.0) -> TronEnergyOrdersTrigger:
    return TronEnergyOrdersTrigger(ids, "tronenergy_default", 0.02, end_time=time.time() + end_in)


def test_serialize_round_trips_identifiers_only():
    trigger = TronEnergyOrdersTrigger(["o-1", "o-2", "o-1"], "tron_prod", 2.5,
                                      end_time=1_800_000_000.5)
    path, kwargs = trigger.serialize()
    assert path == CLASSPATH
    assert kwargs == {"order_ids": ["o-1", "o-2"], "tronenergy_conn_id": "tron_prod",
                      "poll_interval_seconds": 2.5, "end_time": 1_800_000_000.5}
    assert TronEnergyOrdersTrigger(**json.loads(json.dumps(kwargs))).serialize() == (path, kwargs)


@pytest.mark.parametrize("kwargs", [
    {"order_ids": "o-1"}, {"order_ids": ["o-1", ""]}, {"order_ids": [1]},
    {"order_ids": ["o-1"], "poll_interval_seconds": 0}, {"order_ids": ["o-1"],
                                                         "end_time": float("inf")},
])
def test_constructor_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError, match="TronEnergyOrdersTrigger"):
        TronEnergyOrdersTrigger(**{"end_time": 1.0, **kwargs})


def test_all_succeed_one_event_with_every_order(control: Control, conn):
    ids = [control.buy() for _ in range(4)]
    control.succeed(ids[0])
    [event] = run(trigger_for(ids))
    assert event["status"] == "success" and event["order_ids"] == ids
    assert [o["order_id"] for o in orders_event_result(event)] == ids
    assert event["message"] == "all 4 energy orders succeeded"


def test_the_first_order_that_fails_ends_the_wait_at_once(control: Control, conn):
    ids = [control.buy() for _ in range(3)]
    control.fail(ids[2])  # the other two stay pending until end_time, 30 s away
    started = time.monotonic()
    [event] = run(trigger_for(ids))
    assert time.monotonic() - started < 25  # it did not wait out the others' deadline
    assert event["status"] == "failed"
    assert list(event["orders"]) == [ids[2]]
    assert ids[2] in event["message"] and "0 of 3 orders had succeeded" in event["message"]


def test_a_deadline_and_an_unknown_order(control: Control, conn):
    pending = control.buy()
    [event] = run(trigger_for([pending], end_in=0.2))
    assert event["status"] == "timeout"
    [event] = run(trigger_for([pending, "no-such-order"]))
    assert event["status"] == "error" and "no-such-order" in event["message"]


def test_a_connection_missing_in_the_triggerer_fails_the_task_once(monkeypatch):
    from airflow.providers.common.compat.sdk import AirflowFailException

    monkeypatch.delenv("AIRFLOW_CONN_TRONENERGY_NOWHERE", raising=False)
    [event] = run(TronEnergyOrdersTrigger(["ord-1", "ord-2"], "tronenergy_nowhere", 0.02,
                                          end_time=time.time() + 30))
    assert event["status"] == "error", event
    with pytest.raises(AirflowFailException,
                       match="tronenergy_conn_id 'tronenergy_nowhere' names no connection"):
        orders_event_result(event)


def test_bad_credentials_fail_the_task_once(control: Control, sandbox, monkeypatch):
    """The service's refusal of the key or secret: every retry is refused alike."""
    from airflow.providers.common.compat.sdk import AirflowFailException

    from support.sandbox import connection_json

    ids = [control.buy() for _ in range(2)]
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_BAD", connection_json(
        sandbox, secret="wrong-secret-" + "x" * 20, **orders.CONN_OPTIONS))
    [event] = run(TronEnergyOrdersTrigger(ids, "tronenergy_bad", 0.02,
                                          end_time=time.time() + 30))
    assert event["status"] == "error", event
    with pytest.raises(AirflowFailException, match=r"connection 'tronenergy_bad'.*fix the API"):
        orders_event_result(event)


def test_no_orders_is_success():
    [event] = run(TronEnergyOrdersTrigger([], end_time=time.time() + 5))
    assert event["status"] == "success" and orders_event_result(event) == []
