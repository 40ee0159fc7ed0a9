"""The deposit-watch example DAGs: import, registration, exactly-once crediting."""

from __future__ import annotations

import secrets
import sqlite3

import deposit_watch as example

from airflow_provider_tronenergy.protocol.address import random_address


def _transfer(to: str, amount: str = "25.5") -> dict:
    return {"tx_hash": secrets.token_hex(32), "to": to,
            "from": random_address(), "amount": amount, "token": "USDT", "block_number": 7}


def test_example_dags_import_cleanly(airflow_db):
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow < 3.2
        from airflow.models.dagbag import DagBag

    bag = DagBag(dag_folder=str(example.__file__).rsplit("/", 1)[0])
    assert bag.import_errors == {}
    assert {"batch_payout_preparation", "deposit_addresses_register",
            "deposit_credit"} <= set(bag.dag_ids)
    watcher = bag.get_dag("deposit_credit").timetable
    assert watcher is not None


def test_credit_is_exactly_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    first, second = _transfer(random_address()), _transfer(random_address(), "0.000001")
    assert example.credit([first, second], url) == [first, second]
    assert example.credit([second, first], url) == []  # redelivered: nothing twice
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        rows = db.execute(
            "SELECT tx_hash, amount FROM credited_deposits ORDER BY amount").fetchall()
    assert rows == [(second["tx_hash"], "0.000001"), (first["tx_hash"], "25.5")]


def test_event_transfer_unwraps_a_watcher_event():
    deposit = _transfer(random_address())
    # What Airflow stores for an AssetWatcher's trigger event (Trigger.submit_event).
    assert example.event_transfer({"from_trigger": True, "payload": deposit}) == deposit
    assert example.event_transfer(deposit) == deposit  # a transfer posted as the extra
    assert example.event_transfer({"from_trigger": True, "payload": {}}) is None
    assert example.event_transfer({}) is None
    assert example.event_transfer(None) is None


def test_register_then_credit_in_dag_test(run_dag, control, sandbox, tmp_path, monkeypatch):
    address = random_address()
    monkeypatch.setattr(example, "ADDRESSES", [address])
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", f"sqlite:///{tmp_path / 'ledger.db'}")
    dag = next(d for d in [example.dag_register, example.dag_credit]
               if d.dag_id == "deposit_credit")
    deposit = _transfer(address)
    out = run_dag(dag, transfers=[deposit])
    assert out["credit_deposits"][0] == "success"
    assert [t["tx_hash"] for t in out["credit_deposits"][2]] == [deposit["tx_hash"]]
    again = run_dag(dag, transfers=[deposit])
    assert again["credit_deposits"][2] == []
