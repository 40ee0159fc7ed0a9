"""Fixtures for tests that run DAGs with dag.test() against an in-process sandbox.

Registered for the whole suite through ``pytest_plugins`` in tests/conftest.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import requests

from airflow_provider_tronenergy.protocol.address import random_address
from airflow_provider_tronenergy.sandbox import SandboxConfig, SandboxServer


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(SandboxConfig(port=0, time_scale=0.01)) as server:
        yield server


@pytest.fixture
def conn(sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", json.dumps({
        "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
        "password": sandbox.api_secret, "extra": {"webhook_secret": sandbox.webhook_secret}}))
    return "tronenergy_default"


class Control:
    """The sandbox's control API, for seeding chain state and counting orders."""

    def __init__(self, sandbox: SandboxServer) -> None:
        self.root = f"{sandbox.root_url}/sandbox"
        self.session = requests.Session()

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        response = self.session.request(method, self.root + path, json=body, timeout=10)
        assert response.status_code == 200, response.text
        return json.loads(response.text, parse_float=Decimal)["data"]

    def activated(self, holder: bool = False) -> str:
        address = random_address()
        self._call("POST", f"/addresses/{address}/activate")
        if holder:
            self._call("POST", f"/addresses/{address}/holder", {"token": "USDT"})
        return address

    def orders(self, target: str | None = None) -> list[dict[str, Any]]:
        orders = self._call("GET", "/orders")
        return [o for o in orders if target is None or target in (o["target_address"],)]

    def balance(self, trx: str) -> None:
        self._call("POST", "/balance", {"balance": trx})

    def fault(self, **spec: Any) -> None:
        self._call("POST", "/faults", spec)

    def clear_faults(self) -> None:
        self._call("DELETE", "/faults")

    def fail_next_orders(self, count: int) -> None:
        self._call("POST", "/orders/outcome", {"status": "failed", "count": count})

    def fail(self, order_id: str) -> None:
        self._call("POST", f"/orders/{order_id}/fail")


@pytest.fixture
def control(sandbox: SandboxServer) -> Iterator[Control]:
    control = Control(sandbox)
    control.balance("1000")
    yield control
    control.clear_faults()


@pytest.fixture
def run_dag(airflow_db, conn, monkeypatch) -> Callable[..., dict[str, Any]]:
    """Run a DAG with dag.test() and return {task_id: (state, xcom return value)}."""

    from airflow import __version__ as airflow_version

    if airflow_version.startswith("3.0."):
        from support.airflow_compat import json_bodies_for_airflow_3_0

        json_bodies_for_airflow_3_0(monkeypatch)

    def run(dag: Any, **conf: Any) -> dict[str, Any]:
        from airflow.models.xcom import XComModel  # noqa: F401 - ensure models load
        from airflow.utils.session import create_session

        dagrun = dag.test(run_conf=conf)
        out: dict[str, Any] = {"__run__": dagrun.state}
        with create_session() as session:
            from airflow.models.taskinstance import TaskInstance

            tis = session.query(TaskInstance).filter(
                TaskInstance.dag_id == dag.dag_id, TaskInstance.run_id == dagrun.run_id).all()
            for ti in tis:
                out[ti.task_id if ti.map_index < 0 else f"{ti.task_id}[{ti.map_index}]"] = (
                    ti.state, ti.try_number, _xcom(session, ti))
        return out

    return run


def _xcom(session: Any, ti: Any) -> Any:
    from airflow.models.xcom import XComModel

    row = session.query(XComModel).filter(
        XComModel.dag_id == ti.dag_id, XComModel.run_id == ti.run_id,
        XComModel.task_id == ti.task_id, XComModel.map_index == ti.map_index,
        XComModel.key == "return_value").one_or_none()
    if row is None:
        return None
    value = row.value
    if isinstance(value, str):  # older releases store JSON text; newer ones decoded values
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value

