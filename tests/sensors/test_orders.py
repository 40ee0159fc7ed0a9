"""TronEnergyOrdersSensor outside a DAG (its DAG runs: test_orders_dag.py)."""

from __future__ import annotations

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.sensors.orders import TronEnergyOrdersSensor
from support import orders
from support.control import Control
from support.orders import CONN_OPTIONS
from support.sandbox import connection_json

# Orders here move only when a test says so: the manual-clock sandbox of support.orders.
sandbox, conn = orders.sandbox, orders.conn


def test_orders_sensor_poke_with_bad_credentials_fails_once(control: Control, sandbox,
                                                            monkeypatch):
    ids = [control.buy() for _ in range(2)]
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_BAD", connection_json(
        sandbox, secret="wrong-secret-" + "x" * 20, **CONN_OPTIONS))
    waiting = TronEnergyOrdersSensor(task_id="wait", order_ids=ids,
                                     tronenergy_conn_id="tronenergy_bad", poke_interval=0.01,
                                     timeout=5)
    with pytest.raises(AirflowFailException, match=r"connection 'tronenergy_bad'.*fix the API"):
        waiting.execute({})  # type: ignore[arg-type]
