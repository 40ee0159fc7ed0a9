"""A distributed Airflow 3 deployment for the drills of issue 13, started by the test itself.

What a payout team runs across hosts, on one machine: the metadata database on the
PostgreSQL server at 127.0.0.1:5432, ``CeleryExecutor`` with the Redis at
127.0.0.1:6379 as broker (a database number of its own) and PostgreSQL as result
backend, **two Celery workers**, the scheduler, the dag-processor, **two triggerers**
and **two API servers**, each serving the receiver plugin, both writing to **one
PostgreSQL callback store**. The purchase journal is one PostgreSQL table for every
worker (docs/money-safety.md). The store lives on a PostgreSQL server of its own
(initdb in a temporary directory) when the machine has the server binaries, so that a
drill can restart the store's database without touching the metadata database or
anybody else's; otherwise on the shared server (and that drill skips, saying why).

Every component is a :class:`~test_real_deployment.Component`: its own process
group, its own log, everything removed at the end, also on failure. Each process
reports its own name as its hostname (``[core] hostname_callable``), so the metadata
says which worker ran a task and which triggerer holds the deposits watcher.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import psycopg2
import pytest
import requests
from test_real_deployment import (
    AIRFLOW,
    CREDIT_DAG,
    EXAMPLE_DAGS,
    PAYOUT_DAG,
    PG,
    Api,
    Component,
    Metadata,
    _killpg,
    _pg,
    _task_log_tails,
    airflow_env,
    wait_for,
)

from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.client.sync import TronEnergyClient
from support.metadata_template import create_migrated_database
from support.ports import release_port, reserve_port
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.process import SandboxProcess, start_sandbox

REDIS = ("127.0.0.1", 6379)
WORKERS = ("worker-1", "worker-2")
TRIGGERERS = ("triggerer-1", "triggerer-2")
WATCH_CONSUMER = "deposit_credit"
HOSTNAME_MODULE = '''"""The hostname each component reports: its name in the e2e deployment."""
import os
import socket


def hostname() -> str:
    return os.environ.get("TRONENERGY_E2E_HOSTNAME") or socket.getfqdn()
'''


def process_tree(pid: int) -> list[psutil.Process]:
    """The process and all its descendants (those alive now)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


# -- Redis ----------------------------------------------------------------------------------


def claim_redis_db() -> tuple[Any, int]:
    """An empty Redis database number, claimed with a marker key (flushed at the end)."""
    import redis

    marker = f"tronenergy-e2e:{uuid.uuid4().hex}"
    try:
        redis.Redis(*REDIS, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis is unreachable at {REDIS[0]}:{REDIS[1]}: {exc}")
    for number in range(15, 0, -1):
        client = redis.Redis(*REDIS, db=number, socket_connect_timeout=3)
        if client.dbsize() == 0 and client.set("tronenergy-e2e", marker, nx=True):
            return client, number
        client.close()
    pytest.skip("no empty Redis database number (1-15) at 127.0.0.1:6379")


# -- the callback store's own PostgreSQL server ---------------------------------------------


@dataclass
class StoreServer:
    """A throw-away PostgreSQL server (initdb) on a free port, so a drill may restart it."""

    directory: Path
    port: int
    bin: Path
    user: str | None  # run the server as this user (initdb refuses root)

    @classmethod
    def create(cls) -> StoreServer | None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        on_path = shutil.which("initdb")
        if not found and on_path is None:
            return None
        initdb = Path(found[-1] if found else str(on_path))
        user = "postgres" if os.geteuid() == 0 else None
        directory = Path(tempfile.mkdtemp(prefix="tronenergy-store-pg-"))
        if user is not None:
            shutil.chown(directory, user)
        # Reserved until the deployment removes it: drill 4 restarts the server on it.
        server = cls(directory, reserve_port(), initdb.parent, user)
        server._run("initdb", "-D", str(directory / "data"), "-A", "trust", "-U", "postgres",
                    "--no-sync", "-E", "UTF8")
        server.start()
        return server

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bin / tool), *args]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              cwd=self.directory)
        assert done.returncode == 0, f"{tool}: {done.stdout}{done.stderr}"

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c max_connections=100")
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-o", options,
                  "-l", str(self.directory / "server.log"), "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """``immediate``: every backend killed at once, as when the server crashes."""
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        with contextlib.suppress(AssertionError, subprocess.SubprocessError):
            self.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.directory / "server.log").read_text(errors="replace")[-3000:]
        return "(no log)"


class LoadedApi(Api):
    """:class:`Api` with timeouts for a loaded 2-core machine running ten Airflow processes:
    the first trigger of a DAG can take the API server more than 10 s to answer."""

    TIMEOUT = 60

    def get(self, path: str) -> requests.Response:
        return self.http.get(self.base + path, timeout=self.TIMEOUT)

    def unpause(self, dag_id: str, timeout: float = TIMEOUT) -> None:
        super().unpause(dag_id, timeout)

    def trigger(self, dag_id: str, conf: dict[str, Any] | None = None) -> str:
        run_id = f"e2e__{uuid.uuid4().hex[:10]}"
        r = self.http.post(f"{self.base}/api/v2/dags/{dag_id}/dagRuns", timeout=self.TIMEOUT,
                           json={"dag_run_id": run_id, "logical_date": None,
                                 "conf": conf or {}})
        assert r.status_code == 200, r.text
        return run_id


# -- the deployment -------------------------------------------------------------------------


@dataclass
class Deployment:
    """The running deployment and the handles the drills drive it through."""

    home: Path
    dbname: str
    sandbox: SandboxProcess
    apis: list[Api]
    ports: list[int]
    components: dict[str, Component]
    store_url: str
    store_server: StoreServer | None
    deposit_addresses: list[str]
    db: Metadata
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def api(self) -> Api:
        """API server 1: the REST API the test uses and the workers' execution API."""
        return self.apis[0]

    def callback_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.ports[index]}/tronenergy/callbacks"

    def alive(self) -> list[Component]:
        return [c for c in self.components.values() if c.alive()]

    def wait(self, what: str, predicate: Any, timeout: float, interval: float = 0.5) -> Any:
        """:func:`wait_for`, failing early when a component that should run has died."""
        return wait_for(what, predicate, timeout, self.alive_expected(), interval)

    def alive_expected(self) -> list[Component]:
        return [c for c in self.components.values() if c.process is not None]

    def kill(self, name: str) -> None:
        """SIGKILL a component and every process under it, as when its host dies.

        Its process group is not enough: Celery's pool processes and the task processes
        under them leave it, and would go on running the task."""
        component = self.components[name]
        assert component.process is not None, f"{name} is not running"
        tree = process_tree(component.process.pid)
        _killpg(component.process.pid, signal.SIGKILL)
        for process in tree:
            with contextlib.suppress(psutil.Error):
                process.kill()
        component.process.wait(10)
        psutil.wait_procs(tree, timeout=10)
        component.process = None

    def store(self) -> CallbackStore:
        return CallbackStore(self.store_url)

    def journal_env(self) -> dict[str, str]:
        return self.components["scheduler"].env

    def finished(self, dag_id: str, run_id: str) -> str | None:
        state = self.db.run_state(dag_id, run_id)
        return state if state in ("success", "failed") else None

    def watcher_holder(self) -> str | None:
        """The name of the triggerer (alive per the metadata) holding the deposits watcher."""
        job = self.db.watcher_triggerer()
        if job is None:
            return None
        rows = self.db.rows("SELECT hostname FROM job WHERE id = %s", job)
        return str(rows[0][0]) if rows else None

    def wait_watching(self, timeout: float = 120) -> str:
        """Wait until a live triggerer runs the deposits watcher and it has an offset."""
        store = self.store()
        try:
            return str(self.wait(
                "the deposits watcher to run",
                lambda: store.committed_offset(WATCH_CONSUMER) is not None
                and self.watcher_holder() in {n for n in TRIGGERERS
                                              if self.components[n].alive()}
                and self.watcher_holder(), timeout))
        finally:
            store.close()

    def dump(self) -> None:
        """Everything a failure needs explained, on stdout (pytest shows it on failure)."""
        print("deployment timings (s):", json.dumps(self.timings))
        for component in self.components.values():
            print(f"\n===== {component.name} (tail of {component.log}) =====")
            print(component.tail(80))
        print(f"\n===== sandbox =====\n{(self.home.parent / 'sandbox.log').read_text()[-3000:]}")
        if self.store_server is not None:
            print(f"\n===== store server =====\n{self.store_server.log()}")
        print(f"\n===== task logs =====\n{_task_log_tails(self.home, count=6)}")
        print(f"\n===== metadata =====\n{self.db.snapshot()}")


def _dags_folder(root: Path) -> Path:
    """The example DAGs, with the payout DAG allowing two runs at once (drill 5), run only
    when triggered (an hourly run with no batch would take a slot and count as a run) and
    retried 3 s after a failed try, not 30 (drill 1 waits for the retry on the other
    worker)."""
    folder = root / "dags"
    folder.mkdir()
    for source in EXAMPLE_DAGS.glob("*.py"):
        text = source.read_text()
        if source.stem == PAYOUT_DAG:
            for old, new in (("max_active_runs=1,", "max_active_runs=2,"),
                             ('schedule="@hourly",', "schedule=None,"),
                             ('"retry_delay": timedelta(seconds=30)',
                              '"retry_delay": timedelta(seconds=3)')):
                assert text.count(old) == 1, f"the payout DAG changed ({old}): adapt"
                text = text.replace(old, new)
        (folder / source.name).write_text(text)
    return folder


def celery_env(base: dict[str, str], dbname: str, redis_db: int, root: Path,
               addresses: list[str], dags: Path) -> dict[str, str]:
    """The settings every component shares, on top of the LocalExecutor e2e's."""
    pg = f"postgresql+psycopg2://postgres@127.0.0.1:5432/{dbname}"
    env = dict(base)
    env.update({
        "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CELERY__BROKER_URL": f"redis://{REDIS[0]}:{REDIS[1]}/{redis_db}",
        "AIRFLOW__CELERY__RESULT_BACKEND": f"db+{pg}",
        "AIRFLOW__CELERY__WORKER_CONCURRENCY": "2",
        "AIRFLOW__CELERY__SYNC_PARALLELISM": "1",
        # A killed worker's task is noticed within ~20 s, not the default 5 minutes (looked
        # for every 2 s, not 10).
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "20",
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "2",
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_SEC": "2",
        "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": "90",
        "AIRFLOW__CORE__HOSTNAME_CALLABLE": "tronenergy_e2e_hostname.hostname",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root), base.get("PYTHONPATH")])),
        "AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES": json.dumps(addresses),
        "TRONENERGY_PURCHASE_JOURNAL": pg,
    })
    return env


@contextlib.contextmanager
def distributed_deployment(root: Path, addresses_per_server: int = 10) -> Iterator[Deployment]:
    """Start the whole deployment under ``root``; remove it all on exit."""
    started = time.monotonic()
    timings: dict[str, float] = {}

    def mark(step: str) -> None:
        timings[step] = round(time.monotonic() - started, 1)

    try:
        admin = _pg("postgres")
    except psycopg2.OperationalError as exc:
        pytest.skip(f"PostgreSQL is unreachable at {PG['host']}:{PG['port']}: {exc}")
    admin.autocommit = True
    redis_client, redis_db = claim_redis_db()
    dbname = f"tronenergy_e2e_{uuid.uuid4().hex[:12]}"
    (root / "tronenergy_e2e_hostname.py").write_text(HOSTNAME_MODULE)
    home = root / "airflow-home"
    home.mkdir()
    ports = [reserve_port(), reserve_port()]  # held until the deployment is gone
    store_server: StoreServer | None = None
    sandbox: SandboxProcess | None = None
    components: dict[str, Component] = {}
    deployment: Deployment | None = None
    try:
        store_server = StoreServer.create()
        if store_server is not None:
            store_url = store_server.url
        else:
            store_db = f"{dbname}_store"
            with admin.cursor() as cur:
                cur.execute(f'CREATE DATABASE "{store_db}"')
            store_url = f"postgresql+psycopg2://postgres@127.0.0.1:5432/{store_db}"
        mark("store server")
        # Callback retries time-scaled by 0.1: 1 s, 6 s, 30 s (drill 3 relies on them).
        sandbox = start_sandbox("--time-scale", "0.1", log_level="info",
                                log_file=str(root / "sandbox.log"))
        addresses = [random_address() for _ in range(2 * addresses_per_server)]
        base = airflow_env(home, dbname, ports[0], sandbox, store_url, addresses[0])
        env = celery_env(base, dbname, redis_db, root, addresses, _dags_folder(root))
        create_migrated_database(admin, _pg, dbname, AIRFLOW, env, timeout=300)
        mark("metadata database (migrated, or a copy of the session's)")

        def add(name: str, args: list[str], **extra: str) -> None:
            own = {**env, "TRONENERGY_E2E_HOSTNAME": name, **extra}
            components[name] = Component(name, args, own, root / f"{name}.log")
            components[name].start()

        for index, port in enumerate(ports):
            base_url = f"http://127.0.0.1:{port}"
            add(f"api-server-{index + 1}",
                ["api-server", "--host", "127.0.0.1", "--port", str(port)],
                AIRFLOW__API__PORT=str(port), AIRFLOW__API__BASE_URL=base_url)
        add("scheduler", ["scheduler", "--skip-serve-logs"])
        add("dag-processor", ["dag-processor"])
        for name in TRIGGERERS:
            add(name, ["triggerer", "--skip-serve-logs"])
        for name in WORKERS:
            add(name, ["celery", "worker", "--celery-hostname", f"{name}@e2e",
                       "--concurrency", "2", "--skip-serve-logs", "--without-mingle",
                       "--without-gossip"])
        apis = [LoadedApi(f"http://127.0.0.1:{port}", sandbox, env) for port in ports]
        deployment = Deployment(home, dbname, sandbox, apis, ports, components, store_url,
                                store_server, addresses, Metadata(dbname), timings)
        for index, api in enumerate(apis):
            api.wait_up(components[f"api-server-{index + 1}"], deployment.alive_expected(),
                        120)
            deployment.wait(f"the receiver plugin in API server {index + 1}",
                            lambda a=api: a.status("/tronenergy/health") == 200, 30)
        for dag_id in (PAYOUT_DAG, CREDIT_DAG):
            deployment.wait(f"{dag_id} to be parsed",
                            lambda d=dag_id: deployment.api.status(f"/api/v2/dags/{d}") == 200,
                            120)
        mark("components up, DAGs parsed")
        # Half the deposit addresses call API server 1 back, half API server 2.
        with TronEnergyClient(sandbox.url, sandbox.api_key, sandbox.api_secret) as client:
            for index, address in enumerate(addresses):
                client.add_monitored_address(address, webhook_url=deployment.callback_url(
                    index % 2), label="deposits", tokens=["USDT"])
        for dag_id in (PAYOUT_DAG, CREDIT_DAG):
            deployment.api.unpause(dag_id)
        deployment.wait_watching()
        mark("deposits watcher running")
        yield deployment
    except BaseException:
        if deployment is not None:
            deployment.dump()
        else:
            for component in components.values():
                print(f"\n===== {component.name} =====\n{component.tail()}")
        raise
    finally:
        leftovers = [p for c in components.values() if c.process is not None
                     for p in process_tree(c.process.pid)]
        for component in components.values():
            component.terminate()
        for component in components.values():
            component.stop(grace=20, signalled=True)
            for process in component.history:
                _killpg(process.pid, signal.SIGKILL)
        for leftover in leftovers:  # children that left their component's process group
            with contextlib.suppress(psutil.Error):
                leftover.kill()
        if sandbox is not None:
            sandbox.stop()
        if store_server is not None:
            store_server.remove()
            release_port(store_server.port)
        for port in ports:
            release_port(port)
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
            cur.execute(f'DROP DATABASE IF EXISTS "{dbname}_store" WITH (FORCE)')
        admin.close()
        redis_client.flushdb()
        redis_client.close()
