"""TronEnergyOrderSensor in real Airflow: dag.test() on the SQLite metadata DB, against the sandbox.

The DAGs live in tests/dags/sensors_order.py (dag.test() runs only DAGs its
bundle can parse). A Director thread ends the order while the DAG runs, only
after the sensor (poke mode) or the trigger (deferrable mode) has polled it,
so every run really waits; in deferrable mode dag.test() runs the trigger
in-process, and a spy on TronEnergyOrderTrigger.run records the event it fired.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from sensors_order import DAGS

from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger
from support import orders
from support.control import Control
from support.orders import Director

# Orders here move only when a test says so: the manual-clock sandbox of support.orders.
sandbox, conn = orders.sandbox, orders.conn

# Deferrable: one read by the sensor before deferring, so a second one is the trigger's.
POLLS_BEFORE_ACTING = {"te_order_sensor_poke": 1, "te_order_sensor_deferrable": 2}


@pytest.fixture
def trigger_events(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Events fired by TronEnergyOrderTrigger.run (dag.test() imports the class by its path)."""
    fired: list[dict[str, Any]] = []
    original = TronEnergyOrderTrigger.run

    async def spy(self: TronEnergyOrderTrigger) -> AsyncIterator[Any]:
        async for event in original(self):
            fired.append(event.payload)
            yield event

    monkeypatch.setattr(TronEnergyOrderTrigger, "run", spy)
    return fired


@pytest.fixture
def run_sensor_dag(run_dag: Callable[..., dict[str, Any]]
                   ) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    """dag.test() one of the sensor DAGs; {task_id: (state, try_number, XCom)} and the run."""

    def run(dag_id: str, conf: dict[str, Any]) -> dict[str, Any]:
        out = run_dag(DAGS[dag_id], **conf)
        result: dict[str, Any] = {"run": str(out.pop("__run__"))}
        out.pop("__run_id__")
        for task_id, (state, try_number, value) in out.items():
            result[task_id] = (str(state), try_number, value)
        return result

    return run


def start_director(control: Control, dag_id: str, action: Callable[[str], None]
                   ) -> tuple[str, Director]:
    order_id = control.buy()
    control.count_polls(order_id)
    director = Director(control, order_id, POLLS_BEFORE_ACTING[dag_id], action)
    director.start()
    return order_id, director


@pytest.mark.parametrize("dag_id", ["te_order_sensor_poke", "te_order_sensor_deferrable"])
def test_sensor_returns_the_order_when_it_succeeds(dag_id, control: Control, run_sensor_dag,
                                                   trigger_events):
    order_id, director = start_director(control, dag_id, control.succeed)
    out = run_sensor_dag(dag_id, {"order_id": order_id})
    director.check()

    assert out["run"] == "success"
    state, tries, order = out["wait"]
    assert (state, tries) == ("success", 1)
    assert order["order_id"] == order_id
    assert order["status"] == "success"
    assert order["tx_hash"]
    assert out["spend"][0] == "success"
    assert out["spend"][2] == f"spent energy of order {order_id} (tx {order['tx_hash']})"
    assert control.polls(order_id) > director.polls_before_action  # it saw it end
    if dag_id == "te_order_sensor_deferrable":
        assert [e["status"] for e in trigger_events] == ["success"]
        assert trigger_events[0]["order"] == order
    else:
        assert trigger_events == []


@pytest.mark.parametrize("outcome", ["failed", "cancelled"])
@pytest.mark.parametrize("dag_id", ["te_order_sensor_poke", "te_order_sensor_deferrable"])
def test_sensor_fails_the_run_without_retry(dag_id, outcome, control: Control, run_sensor_dag,
                                            trigger_events):
    action = control.fail if outcome == "failed" else control.cancel
    order_id, director = start_director(control, dag_id, action)
    out = run_sensor_dag(dag_id, {"order_id": order_id})
    director.check()

    assert out["run"] == "failed"
    # retries=1 in the DAG, yet one try: AirflowFailException, no pointless retry.
    assert out["wait"][:2] == ("failed", 1)
    assert out["wait"][2] is None
    assert out["spend"][0] == "upstream_failed"
    if dag_id == "te_order_sensor_deferrable":
        assert [e["status"] for e in trigger_events] == [outcome]
        assert trigger_events[0]["order_id"] == order_id
    else:
        assert trigger_events == []


def test_deferred_sensor_times_out_without_retry(control: Control, run_sensor_dag, trigger_events):
    order_id = control.buy()
    out = run_sensor_dag("te_order_sensor_deferrable_timeout", {"order_id": order_id})

    assert out["run"] == "failed"
    assert out["wait"][:2] == ("failed", 1)
    assert out["spend"][0] == "upstream_failed"
    assert [e["status"] for e in trigger_events] == ["timeout"]
    assert control.status(order_id) == "pending"
