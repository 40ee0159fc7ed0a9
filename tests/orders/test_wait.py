"""The one "wait for an order" (orders.wait): the task's blocking wait, the trigger's
async wait and the sensor's pokes read each answer the same way."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest

from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.sensors.order import TronEnergyOrderSensor
from support import orders
from support.control import Control
from support.sandbox import connection_json

# Orders here move only when a test says so: the manual-clock sandbox of support.orders.
sandbox, conn = orders.sandbox, orders.conn

log = logging.getLogger("test.order_wait")


def both_waits(order_id: str, conn_id: str = "tronenergy_default", *, timeout: float = 30.0,
               poll: float = 0.02) -> tuple[dict[str, Any], dict[str, Any]]:
    """The blocking wait's event and the async wait's event for the same order."""
    hook = TronEnergyHook(conn_id)
    try:
        blocking = hook.wait_for_order(order_id, poll_interval=poll, timeout=timeout, log=log)
    finally:
        hook.close()
    deferred = asyncio.run(TronEnergyHook(conn_id).await_order(
        order_id, poll_interval=poll, end_time=time.time() + timeout, log=log))
    return blocking, deferred


def test_both_waits_follow_an_order_to_success(control: Control, conn):
    order_id = control.buy()
    control.succeed(order_id)
    blocking, deferred = both_waits(order_id)
    assert blocking == deferred
    assert blocking["status"] == "success"
    assert blocking["order"]["tx_hash"]


def test_bad_credentials_end_both_waits_at_once(control: Control, sandbox, monkeypatch):
    """The purchase operator used to poll on through a 401 until wait_timeout_seconds."""
    order_id = control.buy()
    wrong = "wrong-secret-" + "y" * 20
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_BAD", connection_json(
        sandbox, secret=wrong, **orders.CONN_OPTIONS))
    started = time.monotonic()
    blocking, deferred = both_waits(order_id, "tronenergy_bad", timeout=20.0)
    assert time.monotonic() - started < 10.0  # not the 20 s timeout: the first answer ended it
    assert blocking["status"] == deferred["status"] == "error"
    assert blocking["message"] == deferred["message"]
    assert "signature" in blocking["message"].lower()
    assert wrong not in json.dumps([blocking, deferred])


def test_both_waits_time_out_alike(control: Control, conn):
    order_id = control.buy()
    blocking, deferred = both_waits(order_id, timeout=0.1)
    assert blocking["status"] == deferred["status"] == "timeout"
    assert "still pending" in blocking["message"] and "still pending" in deferred["message"]


def test_transient_failures_keep_the_blocking_wait_going(control: Control, conn):
    order_id = control.buy()
    control.succeed(order_id)
    control.fault(kind="error", path=f"/energy/order/{order_id}", status=503, count=2)
    control.fault(kind="rate_limit", path=f"/energy/order/{order_id}", retry_after=1, count=1)
    hook = TronEnergyHook("tronenergy_default")
    event = hook.wait_for_order(order_id, poll_interval=0.02, timeout=30, log=log)
    assert event["status"] == "success"
    assert control.faults() == []


def test_sensor_and_waits_agree_on_an_error(control: Control, sandbox, monkeypatch):
    """A poke fails the try with the very message the waits put in their error event."""
    from airflow.providers.common.compat.sdk import AirflowException

    order_id = control.buy()
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_BAD",
                       connection_json(sandbox, secret="wrong-secret-" + "z" * 20,
                                       **orders.CONN_OPTIONS))
    blocking, _ = both_waits(order_id, "tronenergy_bad")
    sensor = TronEnergyOrderSensor(task_id="wait", order_id=order_id,
                                   tronenergy_conn_id="tronenergy_bad")
    with pytest.raises(AirflowException) as caught:
        sensor.poke({})
    assert str(caught.value) == blocking["message"]


def test_hook_calls_reach_the_hook_client(control: Control, conn):
    hook = TronEnergyHook("tronenergy_default")
    try:
        assert hook.get_conn().get_account().username
        assert hook.get_conn().get_order(control.buy()).status.value == "pending"
    finally:
        hook.close()
