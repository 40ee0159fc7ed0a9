"""TronEnergyOrdersSensor in real Airflow (dag.test(), SQLite metadata DB) against the sandbox:
one task waits for a batch's orders, poking in the worker or deferred to
TronEnergyOrdersTrigger (run in-process by dag.test()). Orders move only when a thread
acts on them, after the sensor or trigger has read every one of them at least once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from sensors_orders import DAGS

from support import orders
from support.control import Control
from support.waiting import wait_until

sandbox, conn = orders.sandbox, orders.conn
BOTH = ["te_orders_sensor_poke", "te_orders_sensor_deferrable"]


def act_after_polls(control: Control, ids: list[str], act: Callable[[], None]
                    ) -> threading.Thread:
    def run() -> None:
        wait_until(lambda: all(control.polls(o) >= 1 for o in ids), 30, "a read of each order")
        act()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def batch(control: Control, count: int) -> list[str]:
    ids = [control.buy() for _ in range(count)]
    for order_id in ids:
        control.count_polls(order_id)
    return ids


@pytest.mark.parametrize("dag_id", BOTH)
def test_one_task_returns_every_order_when_all_succeed(dag_id, control: Control, run_dag):
    ids = batch(control, 3)
    thread = act_after_polls(control, ids, lambda: control.succeed(ids[0]))
    out = run_dag(DAGS[dag_id], order_ids=ids)
    thread.join(30)

    assert out["__run__"] == "success"
    state, tries, result = out["wait"]
    assert (state, tries) == ("success", 1)
    assert [o["order_id"] for o in result] == ids
    assert all(o["status"] == "success" and o["tx_hash"] for o in result)
    assert out["spend"][2] == [o["tx_hash"] for o in result]


@pytest.mark.parametrize("outcome", ["failed", "cancelled"])
@pytest.mark.parametrize("dag_id", BOTH)
def test_the_first_order_that_does_not_succeed_fails_the_task_without_retry(
        dag_id, outcome, control: Control, run_dag):
    ids = batch(control, 3)
    act = control.fail if outcome == "failed" else control.cancel
    thread = act_after_polls(control, ids, lambda: act(ids[1]))
    out = run_dag(DAGS[dag_id], order_ids=ids)
    thread.join(30)

    assert out["__run__"] == "failed"
    assert out["wait"][:2] == ("failed", 1)  # AirflowFailException: no pointless retry
    assert out["spend"][0] == "upstream_failed"
    # The others were still pending: the wait did not sit out the timeout for them.
    assert [control.status(o) for o in ids] == ["pending", outcome, "pending"]


@pytest.mark.parametrize("dag_id", BOTH)
def test_no_orders_succeeds_at_once(dag_id, control: Control, run_dag):
    out = run_dag(DAGS[dag_id], order_ids=[])
    assert out["__run__"] == "success"
    assert out["wait"][:3] == ("success", 1, [])


def test_a_single_id_string_is_refused_clearly(control: Control, run_dag):
    order_id = control.buy()
    out: dict[str, Any] = run_dag(DAGS["te_orders_sensor_poke"], order_ids=order_id)
    assert out["__run__"] == "failed"
    assert out["wait"][:2] == ("failed", 1)
