"""Session-wide test set-up: a private AIRFLOW_HOME, set before anything imports Airflow.

Airflow reads its configuration once, at import; so the environment is fixed
here, at conftest import time, and never points at a user's real Airflow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.execution_api import one_execution_api
from support.framework_free import is_framework_free

pytest_plugins = ["support.dagrun", "support.postgres"]

_HOME = Path(tempfile.mkdtemp(prefix="tronenergy-airflow-home-"))
os.environ["AIRFLOW_HOME"] = str(_HOME)
os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = f"sqlite:///{_HOME / 'airflow.db'}"
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
# One host: the suite's stores are SQLite files, which a distributed executor in the
# shell's environment would have refused (sqlstore.shared_problem).
os.environ["AIRFLOW__CORE__EXECUTOR"] = "LocalExecutor"
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
    with one_execution_api():
        yield airflow_home / "airflow.db"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--serial", choices=("all", "skip", "only"), default="all",
                     help="the end-to-end deployments (marked serial): run them with the "
                          "rest (all), leave them out (skip) or run only them (only); "
                          "scripts/test.sh runs the rest on xdist workers, then them alone")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``--serial=only`` never imports the other test modules, ``skip`` the serial ones."""
    from support.serial import left_out

    try:
        relpath = collection_path.relative_to(config.rootpath).as_posix()
    except ValueError:  # outside the project: not ours to judge
        return None
    return True if left_out(relpath, config.getoption("serial")) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The serial tests (tests/support/serial.py) and the tests of rooms that never import
    Airflow (tests/support/framework_free.py) get their marks; ``--serial`` selects."""
    from support.serial import is_serial

    keep, drop = [], []
    choice = config.getoption("serial")
    for item in items:
        serial = is_serial(item.nodeid)
        if serial:
            item.add_marker(pytest.mark.serial)
        if is_framework_free(Path(item.path)):
            item.add_marker(pytest.mark.framework_free)
        (drop if (choice == "skip" and serial) or (choice == "only" and not serial)
         else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(optionalhook=True)  # without pytest-xdist, never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadgroup``: one worker runs the serial tests, one after another."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from support.serial import SerialGroupScheduling

    return SerialGroupScheduling(config, log)
