"""``tronenergy-doctor`` against the real sandbox (service and node over sockets), a real
receiver under uvicorn, and SQLite stores: a good set-up passes every line (exit 0); each
broken one fails the line that names it, with its fix, and exits 1; no secret is printed."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks import CallbackStore, create_app
from airflow_provider_tronenergy.doctor import connections, stores
from airflow_provider_tronenergy.doctor.cli import main
from airflow_provider_tronenergy.doctor.report import Status
from airflow_provider_tronenergy.doctor.stores import STORES
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from support.callbacks import ServedApp
from support.control import Control
from support.doctor import failing, node_connection, signer_connection, store_env
from support.ports import closed_port
from support.sandbox import connection_json, sandbox_fixture
from tronenergy_sandbox import SandboxServer

sandbox = sandbox_fixture(scope="module")
DOCTOR = str(Path(sys.executable).with_name("tronenergy-doctor"))


@dataclass
class Deployment:
    """One set-up: its environment (set for the test), the doctor's flags, its secrets."""

    env: dict[str, str]
    args: list[str]
    secrets: list[str]
    run: Callable[..., tuple[int, dict[str, Any], str]]


@pytest.fixture
def deployment(sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> Iterator[Deployment]:
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    Control(sandbox).wallet(sender, trx="100", usdt="10")
    env = {"AIRFLOW_CONN_TRONENERGY_DEFAULT": connection_json(sandbox),
           "AIRFLOW_CONN_TRON_NODE_DEFAULT": node_connection(sandbox.root_url),
           "AIRFLOW_CONN_TRON_SIGNER_DEFAULT": signer_connection(key.hex()),
           **store_env(tmp_path)}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    store = CallbackStore(env["TRONENERGY_CALLBACK_STORE"])
    with ServedApp(create_app(store, sandbox.webhook_secret)) as receiver:

        def run(*extra: str) -> tuple[int, dict[str, Any], str]:
            code = main([*args, "--json", *extra])
            out, err = capsys.readouterr()
            return code, json.loads(out), out + err

        args = ["--sender", sender, "--callback-url", receiver.callback_url]
        secrets = [sandbox.api_key, sandbox.api_secret, sandbox.webhook_secret, key.hex()]
        yield Deployment(env, args, secrets, run)
    store.close()


def assert_no_secret(output: str, secrets: list[str]) -> None:
    for secret in secrets:
        assert secret not in output
        assert secret.upper() not in output


def test_a_good_set_up_passes_every_line(deployment: Deployment):
    code, report, output = deployment.run()  # nothing created yet: the stores fail
    assert {"purchase journal", "payout journal", "callback store", "deposit ledger"} <= \
        failing(report)
    assert code == 1

    code, report, output = deployment.run("--migrate")
    assert failing(report) == set(), report
    assert code == 0
    lines = {c["name"]: c for c in report["checks"]}
    assert "balance 1000" in lines["service balance and prices"]["detail"]
    assert "schema version" in lines["deposit ledger"]["detail"]
    assert lines["signer and sender"]["detail"].endswith("is the sender under permission 0")
    assert lines["callback route"]["status"] == "PASS"
    assert_no_secret(output, deployment.secrets)


@pytest.fixture
def stored_service_connection(airflow_db: Path, sandbox: SandboxServer) -> Iterator[str]:
    """The service's connection as a person saves it in the UI (the metadata database)."""
    from airflow.models.connection import Connection
    from airflow.utils.session import create_session

    conn_id = "tronenergy_in_the_database"
    with create_session() as session:
        session.query(Connection).filter(Connection.conn_id == conn_id).delete()
        session.add(Connection(conn_id=conn_id, conn_type="tronenergy", host=sandbox.url,
                               login=sandbox.api_key, password=sandbox.api_secret,
                               extra=json.dumps({"webhook_secret": sandbox.webhook_secret})))
    yield conn_id
    with create_session() as session:
        session.query(Connection).filter(Connection.conn_id == conn_id).delete()


def test_the_console_script_prints_the_report_without_secrets(
        deployment: Deployment, stored_service_connection: str):
    """What CI and the e2e deployment run: the installed command, plain text, creating the
    stores; the service's connection saved in the metadata database, as the UI saves it,
    read there. One start of the command (Airflow's start-up is most of its cost): the JSON
    report and each failing line are the in-process tests' (``main``, the same code)."""
    done = subprocess.run([DOCTOR, *deployment.args, "--migrate", "--tronenergy-conn-id",
                           stored_service_connection], env={**os.environ, **deployment.env},
                          capture_output=True, text=True, timeout=120, check=False)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    failed = {line.split("  ")[1].strip() for line in lines if line.startswith("FAIL  ")}
    assert failed == set(), done.stdout
    assert lines[0].startswith(
        f"PASS  service                     {stored_service_connection}: authenticated")
    assert [line for line in lines if line.startswith("PASS  migrate ")], done.stdout
    # the stores' "created the tables" lines go to stderr: stdout is the report alone
    assert all(line.startswith(("PASS  ", "SKIP  ", " ")) for line in lines[:-1]), done.stdout
    assert lines[-1].startswith("all ") and lines[-1].endswith(" checks passed"), lines[-1]
    assert_no_secret(done.stdout + done.stderr, deployment.secrets)


def test_a_wrong_api_secret_fails_the_service(deployment: Deployment,
                                              monkeypatch: pytest.MonkeyPatch,
                                              sandbox: SandboxServer):
    deployment.run("--migrate")
    wrong = "wrong-api-secret-0123456789"
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", connection_json(sandbox, secret=wrong))
    code, report, output = deployment.run()
    assert failing(report) == {"service", "service balance and prices"}
    assert code == 1
    service = next(c for c in report["checks"] if c["name"] == "service")
    assert "AuthenticationError" in service["detail"] and "API secret" in service["fix"]
    assert_no_secret(output, [*deployment.secrets, wrong])


def test_a_signer_that_is_not_the_sender_fails(deployment: Deployment,
                                               monkeypatch: pytest.MonkeyPatch):
    deployment.run("--migrate")
    other = PrivateKey.random()
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", signer_connection(other.hex()))
    code, report, output = deployment.run()
    assert failing(report) == {"signer and sender"}
    assert code == 1
    line = next(c for c in report["checks"] if c["name"] == "signer and sender")
    assert "is not a key of permission 0 (owner)" in line["detail"]
    assert "--permission-id" in line["fix"]
    assert_no_secret(output, [*deployment.secrets, other.hex()])


def test_a_store_newer_or_older_than_the_release_fails(deployment: Deployment,
                                                        monkeypatch: pytest.MonkeyPatch):
    """Newer: a later release migrated it (upgrade this host). Older: this host runs a
    later release than the one that made it (stand-in: the ledger's newest said to be 2,
    one migration step past the first release's 1); ``--migrate`` is the fix."""
    deployment.run("--migrate")
    journal = next(s for s in STORES if s.name == "purchase journal")
    ledger = next(s for s in STORES if s.name == "deposit ledger")
    assert journal.newest() == ledger.newest() == 1  # the first release's stores
    engine = sa.create_engine(deployment.env[journal.location.env])
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE tronenergy_schema_version SET version = :v "
                             "WHERE store = :s"), {"v": 2, "s": journal.schema})
    engine.dispose()
    code, report, _ = deployment.run()
    assert failing(report) == {"purchase journal"}
    assert code == 1
    lines = {c["name"]: c for c in report["checks"]}
    assert "newer than this release's" in lines["purchase journal"]["detail"]
    assert "upgrade airflow-provider-tronenergy" in lines["purchase journal"]["fix"]
    monkeypatch.setenv(ledger.location.env, deployment.env[ledger.location.env])
    older = stores.schema_check(replace(ledger, newest=lambda: 2))
    assert older.failing and "schema version 1, this release's is 2" in older.detail
    assert "--migrate" in older.fix


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[str]:
    """A fresh PostgreSQL database's URL, with a password (trust auth ignores it; the
    report must not show it), dropped after the test."""
    name = f"tronenergy_doctor_{secrets.token_hex(6)}"
    admin = sa.create_engine(sqlstore.parse_url(postgres_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    user = sa.engine.make_url(postgres_url).username
    try:
        yield f"postgresql://{user}:pg-password-not-shown@127.0.0.1:5432/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.mark.postgres
def test_the_stores_on_postgresql(deployment: Deployment, pg_database: str,
                                  monkeypatch: pytest.MonkeyPatch):
    """The four stores in one PostgreSQL database, under a Celery executor (where they must
    be): created by --migrate, then each at this release's version; one newer fails; the
    database's password is never printed."""
    for store in STORES:
        monkeypatch.setenv(store.location.env, pg_database)
    celery = "airflow.providers.celery.executors.celery_executor.CeleryExecutor"
    monkeypatch.setattr(sqlstore, "configured_executors", lambda: [celery])
    code, report, output = deployment.run("--migrate")
    assert failing(report) == set(), report
    payouts = next(s for s in STORES if s.name == "payout journal")
    engine = sa.create_engine(sqlstore.parse_url(pg_database))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE tronenergy_schema_version SET version = :v "
                             "WHERE store = :s"), {"v": payouts.newest() + 1, "s": payouts.schema})
    engine.dispose()
    code, report, more = deployment.run()
    assert failing(report) == {"payout journal"}
    assert code == 1
    line = next(c for c in report["checks"] if c["name"] == "payout journal")
    assert line["detail"].startswith("postgresql+psycopg2://") and ":***@" in line["detail"]
    assert_no_secret(output + more, [*deployment.secrets, "pg-password-not-shown"])


def test_a_wrong_callback_secret_fails_the_route(deployment: Deployment, tmp_path: Path):
    deployment.run("--migrate")
    store = CallbackStore(f"sqlite:///{tmp_path / 'other.db'}")
    try:
        with ServedApp(create_app(store, "another-webhook-secret")) as other:
            code, report, output = deployment.run("--callback-url", other.callback_url)
    finally:
        store.close()
    assert failing(report) == {"callback route"}
    assert code == 1
    line = next(c for c in report["checks"] if c["name"] == "callback route")
    assert "refused the probe's signature (invalid_signature)" in line["detail"]
    assert "webhook_secret" in line["fix"]
    assert_no_secret(output, [*deployment.secrets, "another-webhook-secret"])


def test_a_rotating_webhook_secret_probes_with_the_first_and_prints_neither(
        deployment: Deployment, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer):
    deployment.run("--migrate")
    rotating = f"{sandbox.webhook_secret},old-rotating-secret"
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT",
                       connection_json(sandbox, webhook=False, webhook_secret=rotating))
    code, report, output = deployment.run()
    assert failing(report) == set()
    assert code == 0
    assert_no_secret(output, [*deployment.secrets, "old-rotating-secret"])


def test_an_unreachable_node_fails_the_node_lines(deployment: Deployment,
                                                  monkeypatch: pytest.MonkeyPatch):
    deployment.run("--migrate")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps({
        "conn_type": "tron_node", "host": f"http://127.0.0.1:{closed_port()}",
        "extra": {"network": "custom", "genesis_block_id": "00" * 32, "max_retries": 0}}))
    code, report, _ = deployment.run()
    assert failing(report) == {"node", "node chain", "signer and sender"}
    assert code == 1
    line = next(c for c in report["checks"] if c["name"] == "node")
    assert "tron_node_default" in line["detail"] and "host" in line["fix"]


def test_a_connection_that_does_not_exist_and_written_out_skips(deployment: Deployment):
    code, report, _ = deployment.run("--migrate", "--tronenergy-conn-id", "tronenergy_typo",
                                     "--tron-signer-conn-id", "", "--callback-url", "")
    lines = {c["name"]: c for c in report["checks"]}
    assert "'tronenergy_typo' does not exist" in lines["service"]["detail"]
    assert "AIRFLOW_CONN_TRONENERGY_TYPO" in lines["service"]["fix"]
    assert lines["signer"]["status"] == lines["callback route"]["status"] == "SKIP"
    assert code == 1


def test_a_signer_connection_that_does_not_exist_is_a_failing_line(deployment: Deployment):
    """The hooks answer a missing id (hooks.lookup's ConnectionMissing); the doctor says
    which and how to define it, as for the service's."""
    code, report, _ = deployment.run("--migrate", "--tron-signer-conn-id", "signer_typo",
                                     "--callback-url", "")
    line = next(c for c in report["checks"] if c["name"] == "signer")
    assert line["status"] == "FAIL" and "'signer_typo' does not exist" in line["detail"]
    assert "AIRFLOW_CONN_SIGNER_TYPO" in line["fix"] and code == 1


def test_the_flags_default_to_the_hooks_default_connections():
    from airflow_provider_tronenergy.doctor import flags
    from airflow_provider_tronenergy.hooks import tron_node, tron_signer, tronenergy

    assert tronenergy.TronEnergyHook.default_conn_name == flags.TRONENERGY_CONN_ID
    assert tron_node.TronNodeHook.default_conn_name == flags.TRON_NODE_CONN_ID
    assert tron_signer.TronSignerHook.default_conn_name == flags.TRON_SIGNER_CONN_ID


def test_the_chain_line_reads_block_0_and_the_node_line_leaves_a_wrong_chain_to_it(
        sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch):
    """Each connection's own network through ``check_chain()``: the sandbox as the custom
    chain it is passes; called Nile, the chain line fails naming the extra to set, the node
    line passes (it answered), and the two connections are not one chain."""
    monkeypatch.setenv("AIRFLOW_CONN_GOOD_NODE", node_connection(sandbox.root_url))
    monkeypatch.setenv("AIRFLOW_CONN_NILE_NODE", json.dumps({
        "conn_type": "tron_node", "host": sandbox.root_url, "extra": {"network": "nile"}}))
    good = connections.chain("node chain", TronNodeHook("good_node"), "--tron-node-conn-id")
    wrong = connections.chain("node chain", TronNodeHook("nile_node"), "--tron-node-conn-id")
    assert (good.status, good.detail) == (Status.PASS, "good_node: block 0 is custom's")
    assert wrong.failing and "says network nile" in wrong.detail
    assert "extra network" in wrong.fix
    answered = connections.node("node", TronNodeHook("nile_node"), "--tron-node-conn-id")
    assert answered.status is Status.PASS and "another chain" in answered.detail
    two = connections.same_chain(TronNodeHook("good_node"), TronNodeHook("nile_node"))
    assert two.failing and "good_node names custom 0000" in two.detail
    assert "nile_node names nile 0000" in two.detail


def test_a_store_whose_place_is_refused_fails_and_is_not_created(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """``sqlstore.shared_problem`` (the agreed name; standing in here where this release
    lacks it) says why a store's place is refused: the executor line names it, and
    ``--migrate`` creates no file there."""
    for name, value in store_env(tmp_path).items():
        monkeypatch.setenv(name, value)

    def shared_problem(location: sqlstore.Location, url: str) -> str | None:
        if location.env == "TRONENERGY_CALLBACK_STORE":
            return f"{url} is a file on this host: set TRONENERGY_CALLBACK_STORE"
        return None

    monkeypatch.setattr(sqlstore, "shared_problem", shared_problem)
    line = stores.executor_check("CeleryExecutor")
    assert line.failing and line.detail.startswith("executor CeleryExecutor: callback store: ")
    assert "set TRONENERGY_CALLBACK_STORE" in line.detail
    migrated = {c.name: c for c in stores.migrate()}
    assert migrated["migrate callback store"].failing
    assert not (tmp_path / "callbacks.db").exists()
    assert not migrated["migrate deposit ledger"].failing
    assert (tmp_path / "deposits.db").exists()
