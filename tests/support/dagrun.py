"""Fixtures for tests that run DAGs with dag.test() against an in-process sandbox.

Registered for the whole suite through ``pytest_plugins`` in tests/conftest.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from support.control import Control
from support.sandbox import default_connection, node_connection_json, sandbox_fixture
from tronenergy_sandbox import SandboxServer

sandbox = sandbox_fixture(scope="module")


@pytest.fixture
def conn(sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> str:
    return default_connection(monkeypatch, sandbox)


@pytest.fixture
def node_conn(sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """``tron_node_default``: the sandbox, which is also a TRON node."""
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT",
                       node_connection_json(sandbox))
    return "tron_node_default"


@pytest.fixture
def control(sandbox: SandboxServer) -> Iterator[Control]:
    control = Control(sandbox)
    control.balance("1000")
    yield control
    control.clear_faults()


@pytest.fixture
def run_dag(airflow_db, conn) -> Callable[..., dict[str, Any]]:
    """Run a DAG with dag.test() and return {task_id: (state, xcom return value)}.

    ``logical_date`` (keyword only, not conf) picks the run's data interval; a second
    run at the same logical date replaces the first, as a clear of that run does.
    """

    def run(dag: Any, *, logical_date: Any = None, **conf: Any) -> dict[str, Any]:
        from airflow.models.xcom import XComModel  # noqa: F401 - ensure models load

        when = {} if logical_date is None else {"logical_date": logical_date}
        dagrun = dag.test(run_conf=conf, **when)
        return run_outcome(dag.dag_id, dagrun.run_id, dagrun.state)

    return run


def run_outcome(dag_id: str, run_id: str, state: Any) -> dict[str, Any]:
    """``{task_id: (state, try_number, xcom return value)}`` of one DAG run (also of a run
    made in another process, :mod:`support.dag_process`)."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    out: dict[str, Any] = {"__run__": state, "__run_id__": run_id}
    with create_session() as session:
        tis = session.query(TaskInstance).filter(
            TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id).all()
        for ti in tis:
            out[ti.task_id if ti.map_index < 0 else f"{ti.task_id}[{ti.map_index}]"] = (
                ti.state, ti.try_number, _xcom(session, ti))
    return out


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

