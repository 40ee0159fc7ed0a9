"""TronEnergyOrderSensor outside a DAG: poke, the deferral decision and the event mapping."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    AirflowSensorTimeout,
    AirflowSkipException,
    TaskDeferred,
)

from airflow_provider_tronenergy.sensors.order import TronEnergyOrderSensor, order_event_result
from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger
from support import orders
from support.control import Control
from support.waiting import wait_until

# Orders here move only when a test says so: the manual-clock sandbox of support.orders.
sandbox, conn = orders.sandbox, orders.conn


class Recorder:
    """Stands in for a task logger (Airflow 3.0 logs via logging, 3.3 via structlog)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def _add(self, level: str, message: str, *args: Any, **_: Any) -> None:
        self.lines.append((level, message % args if args else message))

    def debug(self, *a: Any, **k: Any) -> None:
        self._add("debug", *a, **k)

    def info(self, *a: Any, **k: Any) -> None:
        self._add("info", *a, **k)

    def warning(self, *a: Any, **k: Any) -> None:
        self._add("warning", *a, **k)

    def error(self, *a: Any, **k: Any) -> None:
        self._add("error", *a, **k)

    def exception(self, *a: Any, **k: Any) -> None:
        self._add("exception", *a, **k)

    def at(self, level: str) -> list[str]:
        return [text for lvl, text in self.lines if lvl == level]


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(TronEnergyOrderSensor, "log", property(lambda self: recorder))
    return recorder


def sensor(order_id: str, **kwargs: Any) -> TronEnergyOrderSensor:
    return TronEnergyOrderSensor(task_id="wait_for_order", order_id=order_id, **kwargs)


# -- construction ---------------------------------------------------------------------


def test_defaults_and_templated_fields():
    s = sensor("ord-1")
    assert tuple(s.template_fields) == ("order_id", "tronenergy_conn_id")
    assert s.tronenergy_conn_id == "tronenergy_default"
    assert s.poke_interval == 5.0
    assert s.timeout == 3600.0
    assert s.deferrable is False  # [operators] default_deferrable is unset in tests


def test_zero_poke_interval_is_refused():
    with pytest.raises(ValueError, match="poke_interval"):
        sensor("ord-1", poke_interval=0)


@pytest.mark.parametrize("order_id", ["", "  ", "None"])
def test_an_order_id_that_did_not_render_fails_at_once(order_id, conn):
    with pytest.raises(AirflowFailException, match="order_id"):
        sensor(order_id).execute({})


# -- poke -----------------------------------------------------------------------------


def test_poke_waits_then_returns_the_order(control: Control, conn, log: Recorder):
    order_id = control.buy()
    s = sensor(order_id)
    assert s.poke({}).is_done is False
    assert s.poke({}).is_done is False
    control.clock.advance(1.5)
    assert s.poke({}).is_done is False
    control.succeed(order_id)
    done = s.poke({})
    assert done.is_done is True
    assert done.xcom_value["order_id"] == order_id
    assert done.xcom_value["status"] == "success"
    assert done.xcom_value["tx_hash"]
    # One line per state change, not per poke.
    assert [line.split(" ")[3] for line in log.at("info")] == ["is", "is", "succeeded:"]
    assert "pending" in log.at("info")[0]
    assert "processing" in log.at("info")[1]


@pytest.mark.parametrize("outcome", ["failed", "cancelled"])
def test_poke_fails_without_retry_on_failed_or_cancelled(control: Control, conn, outcome):
    order_id = control.buy()
    (control.fail if outcome == "failed" else control.cancel)(order_id)
    with pytest.raises(AirflowFailException) as caught:
        sensor(order_id).poke({})
    assert order_id in str(caught.value)
    assert ("failed" if outcome == "failed" else "cancelled") in str(caught.value)


def test_poke_survives_transient_errors(control: Control, conn, log: Recorder):
    order_id = control.buy()
    control.succeed(order_id)
    control.fault(kind="error", path=f"/energy/order/{order_id}", status=503, count=2)
    control.fault(kind="rate_limit", path=f"/energy/order/{order_id}", count=1)
    s = sensor(order_id)
    assert [s.poke({}).is_done for _ in range(4)] == [False, False, False, True]
    assert len(log.at("warning")) == 1  # one line when the trouble starts
    assert "503" in log.at("warning")[0]
    assert any("answers again" in line for line in log.at("info"))


def test_poke_unknown_order_fails_the_try(control: Control, conn):
    with pytest.raises(AirflowException, match="no-such-order") as caught:
        sensor("no-such-order").poke({})
    assert not isinstance(caught.value, AirflowFailException)  # a retry may help


def test_poke_with_bad_credentials_fails_once_naming_the_connection(control: Control, sandbox,
                                                                    monkeypatch):
    """A refused key or secret is not a try's failure: no retry is answered otherwise."""
    from support.orders import CONN_OPTIONS
    from support.sandbox import connection_json

    order_id = control.buy()
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_BAD", connection_json(
        sandbox, secret="wrong-secret-" + "x" * 20, **CONN_OPTIONS))
    with pytest.raises(AirflowFailException, match=r"connection 'tronenergy_bad'.*fix the API"):
        sensor(order_id, tronenergy_conn_id="tronenergy_bad").poke({})


def test_execute_in_poke_mode_returns_the_order(control: Control, conn):
    order_id = control.buy()
    control.count_polls(order_id)

    def later() -> None:
        wait_until(lambda: control.polls(order_id) >= 2, 30, "two pokes")
        control.succeed(order_id)

    helper = threading.Thread(target=later, daemon=True)
    helper.start()
    result = sensor(order_id, poke_interval=0.02, timeout=30).execute({})
    helper.join(5)
    assert result["order_id"] == order_id
    assert result["status"] == "success"


def test_execute_in_poke_mode_times_out(control: Control, conn):
    order_id = control.buy()
    with pytest.raises(AirflowSensorTimeout):
        sensor(order_id, poke_interval=0.02, timeout=0.1).execute({})


# -- deferrable -------------------------------------------------------------------------


def test_deferrable_defers_a_pending_order(control: Control, conn):
    order_id = control.buy()
    s = sensor(order_id, deferrable=True, poke_interval=2.5, timeout=600,
               tronenergy_conn_id="tronenergy_default")
    before = time.time()
    with pytest.raises(TaskDeferred) as deferred:
        s.execute({})
    after = time.time()
    assert deferred.value.method_name == "execute_complete"
    trigger = deferred.value.trigger
    assert isinstance(trigger, TronEnergyOrderTrigger)
    _, kwargs = trigger.serialize()
    assert kwargs["order_id"] == order_id
    assert kwargs["tronenergy_conn_id"] == "tronenergy_default"
    assert kwargs["poll_interval_seconds"] == 2.5
    assert before + 600 <= kwargs["end_time"] <= after + 600


def test_deferrable_defers_when_the_first_check_gets_no_answer(control: Control, conn):
    order_id = control.buy()
    control.succeed(order_id)
    control.fault(kind="error", path=f"/energy/order/{order_id}", status=503, count=1)
    with pytest.raises(TaskDeferred):
        sensor(order_id, deferrable=True).execute({})


def test_deferrable_does_not_defer_an_order_that_already_ended(control: Control, conn):
    order_id = control.buy()
    control.succeed(order_id)
    result = sensor(order_id, deferrable=True).execute({})
    assert result["order_id"] == order_id
    assert result["status"] == "success"

    failed = control.buy()
    control.fail(failed)
    with pytest.raises(AirflowFailException, match=failed):
        sensor(failed, deferrable=True).execute({})


def test_soft_fail_skips_an_order_that_already_failed(control: Control, conn):
    order_id = control.buy()
    control.cancel(order_id)
    with pytest.raises(AirflowSkipException, match=order_id):
        sensor(order_id, deferrable=True, soft_fail=True).execute({})


# -- mapping the trigger's event --------------------------------------------------------


def event(status: str, **extra: Any) -> dict[str, Any]:
    return {"status": status, "order_id": "ord-1", "order": None,
            "message": f"energy order ord-1: {status}", **extra}


def test_execute_complete_returns_the_order_on_success():
    order = {"order_id": "ord-1", "status": "success", "tx_hash": "ab"}
    assert sensor("ord-1").execute_complete({}, event("success", order=order)) == order


@pytest.mark.parametrize(("status", "error"), [
    ("failed", AirflowFailException),
    ("cancelled", AirflowFailException),
    ("timeout", AirflowSensorTimeout),
])
def test_execute_complete_raises_the_matching_failure(status, error):
    with pytest.raises(error, match=f"energy order ord-1: {status}"):
        sensor("ord-1").execute_complete({}, event(status))


@pytest.mark.parametrize("payload", [
    event("error"),                 # e.g. bad credentials: a retry may help
    event("success"),               # success without the order: malformed
    event("finished"),              # unknown status
    None,                           # resumed without an event
    event("success", order_id="ord-2", order={"order_id": "ord-2"}),  # someone else's
])
def test_execute_complete_errors_are_retryable(payload):
    with pytest.raises(AirflowException) as caught:
        sensor("ord-1").execute_complete({}, payload)
    assert not isinstance(caught.value, (AirflowFailException, AirflowSensorTimeout))


def test_order_event_result_is_usable_without_a_sensor():
    order = {"order_id": "ord-1", "status": "success"}
    assert order_event_result(event("success", order=order)) is order
    with pytest.raises(AirflowFailException):
        order_event_result(event("failed"))
