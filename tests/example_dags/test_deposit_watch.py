"""The deposit-watch example DAGs: import, registration, exactly-once crediting."""

from __future__ import annotations

import json
import secrets
import sqlite3

import deposit_watch as example

from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
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


def test_register_then_credit_in_dag_test(run_dag, control, sandbox, tmp_path, monkeypatch):
    address = random_address()
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES", json.dumps([address]))
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", f"sqlite:///{tmp_path / 'ledger.db'}")
    dag = next(d for d in [example.dag_register, example.dag_credit]
               if d.dag_id == "deposit_credit")
    deposit = _transfer(address)
    out = run_dag(dag, transfers=[deposit])
    assert out["credit_deposits"][0] == "success"
    assert [t["tx_hash"] for t in out["credit_deposits"][2]] == [deposit["tx_hash"]]
    again = run_dag(dag, transfers=[deposit])
    assert again["credit_deposits"][2] == []


def test_only_deposit_addresses_are_credited(run_dag, control, tmp_path, monkeypatch):
    deposit_address = random_address()
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES", json.dumps([deposit_address]))
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", f"sqlite:///{tmp_path / 'ledger.db'}")
    deposit, elsewhere = _transfer(deposit_address), _transfer(random_address())
    out = run_dag(example.dag_credit, transfers=[elsewhere, deposit])
    assert [t["tx_hash"] for t in out["credit_deposits"][2]] == [deposit["tx_hash"]]


def test_registration_reads_its_addresses_when_it_runs(run_dag, control, sandbox,
                                                       monkeypatch):
    """Set after the file was parsed, the Variables still reach the task."""
    addresses = [control.activated(), control.activated()]
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES", json.dumps(addresses))
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_CALLBACK_URL", "https://example.com/cb")
    out = run_dag(example.dag_register)
    assert out["watch_deposit_addresses"][0] == "success", out
    hook = TronEnergyHook()
    try:
        monitored = {m.address: m for m in hook.get_conn().iter_monitored_addresses()}
    finally:
        hook.close()
    assert set(addresses) <= set(monitored)
    assert {monitored[a].label for a in addresses} == {"deposits"}


def test_a_run_credits_a_stored_deposit_its_events_do_not_carry(run_dag, control, tmp_path,
                                                                  monkeypatch):
    """The scheduler race (docs/deployment.md): a deposit whose Asset event reached no run is
    in the callback store; the next credit run credits it from there, once, naming itself."""
    from airflow_provider_tronenergy.callbacks.store import ENV_STORE_URL, CallbackStore
    from support.callbacks import verified_transfer

    address = random_address()
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES", json.dumps([address]))
    ledger = tmp_path / "ledger.db"
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", f"sqlite:///{ledger}")
    monkeypatch.setenv(ENV_STORE_URL, f"sqlite:///{tmp_path / 'callbacks.db'}")
    store = CallbackStore(f"sqlite:///{tmp_path / 'callbacks.db'}")
    stranded = verified_transfer(address, "70.25", "USDT")
    store.record(stranded)
    late_event = store.get_transfer(stranded.tx_hash).to_payload()
    store.close()

    out = run_dag(example.dag_credit)  # triggered by no event carrying it
    assert out["credit_deposits"][0] == "success"
    assert [(t["tx_hash"], t["amount"]) for t in out["credit_deposits"][2]] == [
        (stranded.tx_hash, "70.25")]
    again = run_dag(example.dag_credit, transfers=[late_event])  # its event, late
    assert again["credit_deposits"][2] == []
    with sqlite3.connect(ledger) as db:
        assert db.execute("SELECT tx_hash, credited_by FROM credited_deposits").fetchall() == [
            (stranded.tx_hash, out["__run_id__"])]
