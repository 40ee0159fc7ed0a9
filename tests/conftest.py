"""Session-wide test set-up: a private AIRFLOW_HOME, set before anything imports Airflow.

Airflow reads its configuration once, at import; so the environment is fixed
here, at conftest import time, and never points at a user's real Airflow.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["support.dagrun", "support.postgres"]

_HOME = Path(tempfile.mkdtemp(prefix="tronenergy-airflow-home-"))
os.environ["AIRFLOW_HOME"] = str(_HOME)
os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = f"sqlite:///{_HOME / 'airflow.db'}"
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
# dag.test() runs only DAGs its bundle can parse: test DAGs live in tests/dags.
DAGS_FOLDER = Path(__file__).parent / "dags"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(DAGS_FOLDER)
EXAMPLE_DAGS = Path(__file__).parent.parent / "example_dags"
os.environ["AIRFLOW__DAG_PROCESSOR__DAG_BUNDLE_CONFIG_LIST"] = json.dumps([
    {"name": "test-dags", "classpath": "airflow.dag_processing.bundles.local.LocalDagBundle",
     "kwargs": {"path": str(DAGS_FOLDER), "refresh_interval": 0}},
    {"name": "example-dags", "classpath": "airflow.dag_processing.bundles.local.LocalDagBundle",
     "kwargs": {"path": str(EXAMPLE_DAGS), "refresh_interval": 0}},
])
os.environ.setdefault("AIRFLOW__LOGGING__LOGGING_LEVEL", "INFO")
for _name in [n for n in os.environ if n.startswith("AIRFLOW_CONN_")]:
    del os.environ[_name]


@pytest.fixture(scope="session")
def airflow_home() -> Path:
    return _HOME


@pytest.fixture(scope="session")
def airflow_db(airflow_home: Path) -> Iterator[Path]:
    """A migrated SQLite metadata DB (made once per session, in a child process)."""
    subprocess.run(
        [sys.executable, "-m", "airflow", "db", "migrate"],
        check=True, capture_output=True, env=os.environ.copy(), timeout=300,
    )
    with _one_execution_api():
        yield airflow_home / "airflow.db"


@contextlib.contextmanager
def _one_execution_api() -> Iterator[None]:
    """One in-process Execution API for every ``dag.test()`` task of the session.

    Airflow 3.1's ``dag.test()`` builds a new one (a FastAPI app, an event-loop thread
    and its database connections) for every task: some 2.5 s per task on a 2-core
    machine, most of the 3.1.8 part of CI. Later releases cache it (apache/airflow
    #65235: ``functools.lru_cache`` on ``supervisor.in_process_api_server``), so 3.3
    runs the suite that way already; this gives 3.1 the same cache, and the same speed.
    """
    from airflow.sdk.execution_time import supervisor

    build = supervisor.in_process_api_server
    if hasattr(build, "cache_info"):  # cached by Airflow itself
        yield
        return
    supervisor.in_process_api_server = functools.lru_cache(maxsize=1)(build)
    try:
        yield
    finally:
        supervisor.in_process_api_server = build
