"""The deposit ledger (airflow_provider_tronenergy.deposits): exactly-once crediting on
SQLite and PostgreSQL, the ledger's URL resolved when it is opened, and event unwrapping."""

from __future__ import annotations

import secrets
import sqlite3
import threading

import sqlalchemy as sa

from airflow_provider_tronenergy import deposits
from airflow_provider_tronenergy.protocol.address import random_address


def _transfer(to: str, amount: str = "25.5") -> dict:
    return {"tx_hash": secrets.token_hex(32), "to": to,
            "from": random_address(), "amount": amount, "token": "USDT", "block_number": 7}


def test_credit_is_exactly_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    first, second = _transfer(random_address()), _transfer(random_address(), "0.000001")
    assert deposits.credit([first, second], url) == [first, second]
    assert deposits.credit([second, first], url) == []  # redelivered: nothing twice
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        rows = db.execute(
            "SELECT tx_hash, amount FROM credited_deposits ORDER BY amount").fetchall()
    assert rows == [(second["tx_hash"], "0.000001"), (first["tx_hash"], "25.5")]


def test_event_transfer_unwraps_a_watcher_event():
    deposit = _transfer(random_address())
    # What Airflow stores for an AssetWatcher's trigger event (Trigger.submit_event).
    assert deposits.event_transfer({"from_trigger": True, "payload": deposit}) == deposit
    assert deposits.event_transfer(deposit) == deposit  # a transfer posted as the extra
    assert deposits.event_transfer({"from_trigger": True, "payload": {}}) is None
    assert deposits.event_transfer({}) is None
    assert deposits.event_transfer(None) is None


def test_the_url_is_resolved_when_the_ledger_opens(tmp_path, monkeypatch):
    monkeypatch.delenv(deposits.ENV_LEDGER_URL, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    assert deposits.DepositLedger().url.database == str(tmp_path / "home" /
                                                        deposits.DEFAULT_FILENAME)
    monkeypatch.setenv("AIRFLOW__TRONENERGY__DEPOSITS_LEDGER", f"sqlite:///{tmp_path}/c.db")
    assert deposits.DepositLedger().url.database == f"{tmp_path}/c.db"
    monkeypatch.setenv(deposits.ENV_LEDGER_URL, f"sqlite:///{tmp_path}/e.db")
    assert deposits.DepositLedger().url.database == f"{tmp_path}/e.db"


def test_the_ledger_repr_hides_a_password():
    ledger = deposits.DepositLedger("postgresql://u:s3cret-pw@127.0.0.1:1/x")
    assert "s3cret-pw" not in repr(ledger)


def test_two_workers_crediting_the_same_deposits_on_postgres(postgres_url, pg_schema):
    """Two ledgers (two workers) race over the same transfers: each is credited once."""
    url = sa.engine.make_url(postgres_url).update_query_dict(
        {"options": f"-csearch_path={pg_schema}"}).render_as_string(hide_password=False)
    transfers = [_transfer(random_address(), f"{i}.5") for i in range(40)]
    deposits.credit(transfers[:1], url)  # the table exists before the race
    results: list[list[dict]] = []

    def worker() -> None:
        results.append(deposits.credit(transfers, url))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    credited = [t["tx_hash"] for batch in results for t in batch]
    assert sorted(credited) == sorted(t["tx_hash"] for t in transfers[1:])
