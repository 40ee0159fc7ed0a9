"""TronEnergyOrderTrigger: serialization, the event builder, and run() against the sandbox."""

from __future__ import annotations

import asyncio
import importlib
import json
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from airflow_provider_tronenergy.client import Order, OrderStatus
from airflow_provider_tronenergy.orders.wait import EVENT_STATUSES, order_event
from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger
from support import orders
from support.airflow_compat import malformed_says
from support.control import Control
from support.sandbox import connection_json
from support.waiting import wait_until

# Orders here move only when a test says so: the manual-clock sandbox of support.orders.
sandbox, conn = orders.sandbox, orders.conn

CLASSPATH = "airflow_provider_tronenergy.triggers.order.TronEnergyOrderTrigger"


def an_order(status: OrderStatus, **fields: Any) -> Order:
    values: dict[str, Any] = {
        "order_id": "ord-1", "status": status, "cost": Decimal("2.925"),
        "energy_amount": 65000, "rent_time": Decimal("1"),
        "target_address": "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8",
        "tx_hash": "ab" * 32 if status is OrderStatus.SUCCESS else "",
    }
    values.update(fields)
    return Order(**values)


def run_trigger(trigger: TronEnergyOrderTrigger,
                meanwhile: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """Every event the trigger fires, to the end of its run(); ``meanwhile`` runs beside it."""

    async def main() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []

        async def consume() -> None:
            async for event in trigger.run():
                events.append(event.payload)

        task = asyncio.create_task(consume())
        if meanwhile is not None:
            await asyncio.to_thread(meanwhile)
        await asyncio.wait_for(task, 30)
        return events

    return asyncio.run(main())


def trigger_for(order_id: str, *, end_in: float = 30.0, poll: float = 0.02,
                conn_id: str = "tronenergy_default") -> TronEnergyOrderTrigger:
    return TronEnergyOrderTrigger(order_id, conn_id, poll, end_time=time.time() + end_in)


# -- serialization ----------------------------------------------------------------------


def test_serialize_round_trips_identifiers_only():
    trigger = TronEnergyOrderTrigger("ord-1", "tron_prod", 2.5, end_time=1_800_000_000.5)
    path, kwargs = trigger.serialize()
    assert path == CLASSPATH
    assert kwargs == {"order_id": "ord-1", "tronenergy_conn_id": "tron_prod",
                      "poll_interval_seconds": 2.5, "end_time": 1_800_000_000.5}

    module, _, name = path.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    rebuilt = cls(**json.loads(json.dumps(kwargs)))
    assert type(rebuilt) is TronEnergyOrderTrigger
    assert rebuilt.serialize() == (path, kwargs)


def test_serialize_survives_airflow_serde():
    """The path dag.test() and the triggerer take: serde-encoded kwargs, then the class."""
    try:
        from airflow.sdk.serde import deserialize, serialize
    except ImportError:  # Airflow < 3.1
        from airflow.serialization.serde import deserialize, serialize

    path, kwargs = TronEnergyOrderTrigger("ord-2", poll_interval_seconds=1,
                                          end_time=1.0e9).serialize()
    rebuilt = TronEnergyOrderTrigger(**deserialize(serialize(kwargs)))
    assert rebuilt.serialize() == (path, kwargs)
    assert rebuilt.tronenergy_conn_id == "tronenergy_default"


@pytest.mark.parametrize("kwargs", [
    {"order_id": ""}, {"order_id": "  "}, {"poll_interval_seconds": 0},
    {"poll_interval_seconds": -1},
    {"poll_interval_seconds": float("nan")}, {"end_time": float("inf")},
])
def test_constructor_rejects_bad_arguments(kwargs):
    args: dict[str, Any] = {"order_id": "ord-1", "poll_interval_seconds": 1.0, "end_time": 1.0e9}
    with pytest.raises(ValueError, match="TronEnergyOrderTrigger"):
        TronEnergyOrderTrigger(**{**args, **kwargs})


# -- the event builder ------------------------------------------------------------------


@pytest.mark.parametrize("status", ["success", "failed", "cancelled"])
def test_event_of_a_terminal_order(status):
    order = an_order(OrderStatus(status))
    event = order_event("ord-1", order=order)
    assert event["status"] == status
    assert event["order_id"] == "ord-1"
    assert event["order"] == order.to_dict()
    assert event["order"]["cost"] == "2.925"  # money stays a decimal string
    assert "ord-1" in event["message"]
    assert json.loads(json.dumps(event)) == event


def test_success_message_says_what_was_bought():
    message = order_event("ord-1", order=an_order(OrderStatus.SUCCESS))["message"]
    assert message == ("energy order ord-1 succeeded: 65,000 energy for "
                       f"TJRabPrwbZy45sbavfcjinPJC18kjpRTv8 (1 h), 2.925 TRX, tx {'ab' * 32}")


@pytest.mark.parametrize(("status", "words"), [("failed", "failed"),
                                                ("cancelled", "was cancelled")])
def test_failure_message_names_order_and_status(status, words):
    message = order_event("ord-1", order=an_order(OrderStatus(status)))["message"]
    assert message == (f"energy order ord-1 {words} (65,000 energy for "
                       "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8 (1 h), 2.925 TRX)")


def test_message_of_an_order_with_only_id_and_status():
    bare = Order(order_id="ord-9", status=OrderStatus.SUCCESS)
    assert order_event("ord-9", order=bare)["message"] == "energy order ord-9 succeeded"


def test_timeout_and_error_events_carry_the_last_order_seen():
    pending = an_order(OrderStatus.PENDING)
    timeout = order_event("ord-1", order=pending, status="timeout")
    assert timeout["status"] == "timeout"
    assert timeout["order"]["status"] == "pending"
    assert "pending" in timeout["message"]
    error = order_event("ord-1", status="error", message="could not read it")
    assert error == {"status": "error", "order_id": "ord-1", "order": None,
                     "message": "could not read it"}


@pytest.mark.parametrize(("order", "status"), [
    (None, None),                                   # nothing to say what happened
    (an_order(OrderStatus.PENDING), None),          # not ended: needs timeout / error
    (an_order(OrderStatus.PENDING), "success"),     # status contradicts the order
    (an_order(OrderStatus.FAILED), "success"),
    (None, "failed"),
    (an_order(OrderStatus.SUCCESS), "finished"),    # unknown status
    (an_order(OrderStatus.SUCCESS, order_id="ord-2"), None),  # another order
])
def test_event_builder_refuses_inconsistent_events(order, status):
    with pytest.raises(ValueError, match="order_event"):
        order_event("ord-1", order=order, status=status)


def test_event_statuses_are_the_documented_five():
    assert EVENT_STATUSES == ("success", "failed", "cancelled", "timeout", "error")


# -- run() against the sandbox ------------------------------------------------------------


def test_run_follows_a_pending_order_to_success(control: Control, conn):
    order_id = control.buy()
    control.count_polls(order_id)

    def meanwhile() -> None:
        wait_until(lambda: control.polls(order_id) >= 1, 30, "a first poll")
        control.clock.advance(1.5)  # processing
        seen = control.polls(order_id)
        wait_until(lambda: control.polls(order_id) > seen, 30,
                   "a poll of the processing order")
        control.succeed(order_id)

    events = run_trigger(trigger_for(order_id), meanwhile)
    assert len(events) == 1
    (event,) = events
    assert event["status"] == "success"
    assert event["order_id"] == order_id
    assert event["order"]["status"] == "success"
    assert event["order"]["tx_hash"]
    assert event["message"].startswith(f"energy order {order_id} succeeded")
    assert control.polls(order_id) >= 3  # pending, processing, success


@pytest.mark.parametrize("outcome", ["failed", "cancelled"])
def test_run_reports_failed_and_cancelled(control: Control, conn, outcome):
    order_id = control.buy()
    control.count_polls(order_id)
    act = control.fail if outcome == "failed" else control.cancel

    def meanwhile() -> None:
        wait_until(lambda: control.polls(order_id) >= 1, 30, "a first poll")
        act(order_id)

    (event,) = run_trigger(trigger_for(order_id), meanwhile)
    assert event["status"] == outcome
    assert event["order"]["status"] == outcome
    assert event["order_id"] == order_id
    assert order_id in event["message"]


def test_transient_errors_do_not_end_the_wait(control: Control, conn):
    """503s and a 429 (the connection has max_retries 0, so the trigger sees each)."""
    order_id = control.buy()
    control.succeed(order_id)
    control.fault(kind="error", path="/energy/order/*", status=503, count=3)
    control.fault(kind="rate_limit", path="/energy/order/*", retry_after=1, count=1)

    (event,) = run_trigger(trigger_for(order_id))
    assert event["status"] == "success"
    assert control.faults() == []  # all four failures were served to the trigger


def test_unknown_order_is_an_error_event(control: Control, conn):
    (event,) = run_trigger(trigger_for("no-such-order"))
    assert event["status"] == "error"
    assert event["order"] is None
    assert "no-such-order" in event["message"]
    assert "not found" in event["message"].lower()


def test_bad_credentials_are_an_error_event_without_the_secret(control: Control, sandbox,
                                                               monkeypatch):
    order_id = control.buy()
    wrong = "wrong-secret-" + "x" * 20
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_BAD", connection_json(
        sandbox, secret=wrong, **orders.CONN_OPTIONS))
    (event,) = run_trigger(trigger_for(order_id, conn_id="tronenergy_bad"))
    assert event["status"] == "error"
    assert "signature" in event["message"].lower()
    assert wrong not in json.dumps(event)


def test_bad_credentials_fail_the_task_once_naming_the_connection_and_the_fix(
        control: Control, sandbox, monkeypatch):
    """A refusal of the key or secret was an ``error`` a retry met again, try after try:
    only a person fixes the connection, so the task fails once, told where and what."""
    from airflow.providers.common.compat.sdk import AirflowFailException

    from airflow_provider_tronenergy.sensors.order import order_event_result

    order_id = control.buy()
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_BAD", connection_json(
        sandbox, secret="wrong-secret-" + "x" * 20, **orders.CONN_OPTIONS))
    (event,) = run_trigger(trigger_for(order_id, conn_id="tronenergy_bad"))
    assert (event["status"], event.get("retryable")) == ("error", False), event
    assert "connection 'tronenergy_bad'" in event["message"]
    assert "fix the API key and API secret" in event["message"]
    with pytest.raises(AirflowFailException, match="tronenergy_bad"):
        order_event_result(event)


@pytest.mark.parametrize(("extra", "says"), [
    (None, "tronenergy_conn_id 'tronenergy_wrong' names no connection"),
    ("[1, 24]", malformed_says("connection 'tronenergy_wrong': its Extra is a JSON list")),
], ids=["missing", "malformed"])
def test_a_missing_or_malformed_connection_fails_the_task_once(sandbox, monkeypatch, extra,
                                                               says):
    """Only in the triggerer (the worker read it before deferring): bad input a person fixes,
    never retried."""
    from airflow.providers.common.compat.sdk import AirflowFailException

    from airflow_provider_tronenergy.sensors.order import order_event_result

    if extra is None:
        monkeypatch.delenv("AIRFLOW_CONN_TRONENERGY_WRONG", raising=False)
    else:
        conn = json.loads(connection_json(sandbox, **orders.CONN_OPTIONS))
        monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_WRONG", json.dumps({**conn, "extra": extra}))
    (event,) = run_trigger(trigger_for("ord-1", conn_id="tronenergy_wrong"))
    assert (event["status"], event.get("retryable")) == ("error", False), event
    assert says in event["message"]
    with pytest.raises(AirflowFailException, match=says):
        order_event_result(event)


def test_past_end_time_gives_timeout_after_one_poll(control: Control, conn):
    order_id = control.buy()
    control.count_polls(order_id)
    (event,) = run_trigger(trigger_for(order_id, end_in=-1))
    assert event["status"] == "timeout"
    assert event["order"]["status"] == "pending"
    assert "still pending" in event["message"]
    assert control.polls(order_id) == 1


def test_an_ended_order_is_never_reported_as_timeout(control: Control, conn):
    order_id = control.buy()
    control.succeed(order_id)
    (event,) = run_trigger(trigger_for(order_id, end_in=-1))
    assert event["status"] == "success"


def test_timeout_while_the_service_keeps_failing_says_why(control: Control, conn):
    order_id = control.buy()
    control.fault(kind="error", path=f"/energy/order/{order_id}", status=503)
    (event,) = run_trigger(trigger_for(order_id, end_in=0.2))
    assert event["status"] == "timeout"
    assert event["order"] is None
    assert "never read" in event["message"]
    assert "503" in event["message"]
