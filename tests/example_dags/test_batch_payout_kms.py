"""The payout example DAGs run for real (dag.test()) with the hot wallet's key in KMS, then
everything they left is searched for a secret: none may appear.

The sender is a key in moto's KMS (tests/support/kms.py), reached through a
``tron_signer`` connection stored in the metadata database (its extra names the key,
the region and the address; nothing secret); the AWS credentials (access key, secret
key, session token) reach boto3 only through the process's environment, the standard
credential chain. After the preparation and the send DAG paid the batch, the search
reads: every table of the Airflow metadata database row by row (XCom, task
instances, rendered template fields, the connection's extra as stored, Asset events,
logs) and its files' raw bytes, every file under ``AIRFLOW_HOME`` (task logs), the
payout journal, the purchase journal, the deposit and callback stores (every file the
run wrote under its temporary directory), the process's stdout and stderr (the file
descriptors, so child processes too) and the provider's log records. No AWS secret
key, session token or private key (hex, decimal, WIF and compressed WIF) may appear.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import base58
import batch_payout_preparation as preparation
import batch_payout_send as example
import pytest

from support import kms as aws

ACCESS_KEY = "AKIAKMSDAGLEAKTEST01"
SECRET_KEY = "kmsDagLeakSecretKey0123456789abcdefGHIJKL"
SESSION_TOKEN = "kmsDagLeakSessionToken0123456789abcdefXYZ"
CONN_ID = "tron_signer_default"  # the DAG's default: no conf (see the send below)


def key_forms(private: int) -> list[str]:
    """A private key as it could leak: hex (padded, bare), decimal, WIF and compressed WIF
    (base58check of 0x80, the key, and 0x01 for compressed)."""
    raw = private.to_bytes(32, "big")
    return [raw.hex(), f"{private:x}", str(private), raw.hex().upper(),
            base58.b58encode_check(b"\x80" + raw).decode(),
            base58.b58encode_check(b"\x80" + raw + b"\x01").decode()]


def database_text(path: Path) -> str:
    """Every row of every table of a SQLite database, as text."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        parts = []
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                parts.append(f"{table}: " + " | ".join(
                    v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in row))
        return "\n".join(parts)
    finally:
        db.close()


def everything_under(root: Path) -> tuple[str, int]:
    """The raw bytes of every file under ``root`` (databases with their WAL and free
    pages: deleted rows too), and how many files there were."""
    files = [p for p in root.rglob("*") if p.is_file()]
    return "\n".join(_raw(p).decode("latin-1") for p in files), len(files)


def _raw(path: Path) -> bytes:
    """A file's bytes, read by another process: closing a descriptor of a SQLite database
    in this process would drop the locks this process's own connections hold on it (POSIX
    locks are per process; sqlite.org/howtocorrupt.html, 2.2), and the later tests of this
    worker then met "disk I/O error" on the purchase journal."""
    return subprocess.run(["cat", str(path)], capture_output=True, check=True).stdout


@pytest.fixture
def kms_sender(monkeypatch):
    """A KMS key whose address is the sender; AWS credentials only in the environment."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    with aws.aws_kms() as faults:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)  # moto's mock sets its own
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
        client = aws.client()
        key_id = aws.new_key(client, alias="alias/leak-payouts")
        signer = aws.signer(client, key_id)
        yield faults, key_id, signer.address


@pytest.fixture
def stored_signer_connection(airflow_db, kms_sender, monkeypatch):
    """The tron_signer connection as a person saves it in the metadata database (no
    environment connection of that id in front of it)."""
    monkeypatch.delenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", raising=False)
    from airflow.models.connection import Connection
    from airflow.utils.session import create_session

    extra = {"kms_key_id": "alias/leak-payouts", "region_name": aws.REGION,
             "address": kms_sender[2]}
    with create_session() as session:
        session.query(Connection).filter(Connection.conn_id == CONN_ID).delete()
        session.add(Connection(conn_id=CONN_ID, conn_type="tron_signer",
                               extra=json.dumps(extra)))
    yield CONN_ID
    with create_session() as session:
        session.query(Connection).filter(Connection.conn_id == CONN_ID).delete()


def test_a_kms_signed_payout_run_leaves_no_secret_anywhere(
        run_dag, control, node_conn, tmp_path, monkeypatch, capfd, caplog, airflow_home,
        kms_sender, stored_signer_connection):
    faults, key_id, sender = kms_sender
    caplog.set_level(logging.DEBUG, logger="airflow_provider_tronenergy")
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'journal.db'}")
    monkeypatch.setenv("TRONENERGY_CALLBACK_STORE", f"sqlite:///{tmp_path / 'callbacks.db'}")
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", f"sqlite:///{tmp_path / 'deposits.db'}")
    control.wallet(sender, trx="100", usdt="1000", staked=64_285)
    holders = [control.wallet(trx="1", usdt="1") for _ in range(2)]
    recipients = [*holders, control.wallet(trx="1")]
    payouts = tmp_path / "payouts.csv"
    payouts.write_text("recipient,amount\n" + "".join(f"{a},3{i}.25\n"
                                                      for i, a in enumerate(recipients)))
    prepared = run_dag(preparation.dag, payouts_file=str(payouts), sender_address=sender,
                       tron_node_conn_id=node_conn, rent_time="1", max_spend_trx="100",
                       batch_id="kms-leak-1")
    assert prepared["__run__"] == "success", prepared
    # The default connection id, no run conf: on Airflow 3.1 a conf given to dag.test() is
    # what the same DAG's next run in this worker rendered (the next test then looked for a
    # connection this test had removed).
    out = run_dag(example.dag)
    assert out["__run__"] == "success", out
    assert out["publish_payouts_sent"][2]["states"] == {"confirmed": 3}
    on_chain = control.call("GET", f"/chain/transactions?owner={sender}")
    assert Counter(t["to"] for t in on_chain) == Counter(recipients)
    assert faults.seen == ["DIGEST"] * 3  # every payout signed in KMS, once

    captured = capfd.readouterr()
    database = airflow_home / "airflow.db"
    files, count = everything_under(airflow_home)
    written, written_count = everything_under(tmp_path)
    places = {"metadata rows": database_text(database), "AIRFLOW_HOME files": files,
              "journals and stores": written, "stdout": captured.out,
              "stderr": captured.err, "log records": caplog.text}
    assert count > 1 and written_count >= 2  # the database and the task logs; the journals
    # The search read what it meant to: the run's own traces are there.
    assert stored_signer_connection in places["metadata rows"]
    assert '"kms_key_id": "alias/leak-payouts"' in places["metadata rows"]  # extra as stored
    assert "rendered_task_instance_fields" in places["metadata rows"]
    assert sender in places["metadata rows"] and sender in places["journals and stores"]
    assert on_chain[0]["txid"] in places["journals and stores"]
    assert "payout batch kms-leak-1" in places["AIRFLOW_HOME files"] + places["stdout"] \
        + places["stderr"] + places["log records"]
    secrets = {"AWS secret key": SECRET_KEY, "AWS session token": SESSION_TOKEN}
    secrets.update({f"KMS private key ({i})": form
                    for i, form in enumerate(key_forms(aws.private_number(key_id)))})
    leaks = [f"{name} in {where}" for name, secret in secrets.items()
             for where, text in places.items() if secret in text]
    assert leaks == []


def test_the_search_finds_a_secret_that_is_there(tmp_path):
    """The search is not blind: a key in a database row and in a file is found in each
    of its forms."""
    private = int.from_bytes(hashlib.sha256(b"planted").digest(), "big")
    db = tmp_path / "planted.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE xcom (value BLOB)")
        for form in key_forms(private):
            conn.execute("INSERT INTO xcom VALUES (?)", (json.dumps({"k": form}).encode(),))
    text = database_text(db)
    files, _ = everything_under(tmp_path)
    assert all(form in text and form in files for form in key_forms(private))
    assert key_forms(private)[4].startswith("5")  # WIF of an uncompressed key
