"""The deposit-watch example DAGs: import, registration, exactly-once crediting from the
callback store of what the chain (the sandbox, as ``tron_node_default``) proves, and from
nothing handed to a run."""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
import threading
from collections.abc import Iterator

import deposit_watch as example
import pytest

from airflow_provider_tronenergy.callbacks.access import forget_stores
from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from airflow_provider_tronenergy.callbacks.store import ENV_STORE_URL, CallbackStore
from airflow_provider_tronenergy.callbacks.verify import parse_transfer
from airflow_provider_tronenergy.deposits import DepositLedger
from airflow_provider_tronenergy.deposits.claims import OPEN
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from support.callbacks import callback_body, transfer_data, verified_transfer
from support.waiting import wait_until
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback


def on_chain(control, to: str, amount: str = "12.5", token: str = "USDT", *,
             solid: bool = True) -> VerifiedTransfer:
    """A transfer on the sandbox's chain, solidified (unless not ``solid``), and its callback
    as the receiver stores it (the callback's fields are the chain's)."""
    done = control.post("/transfers", {"from": random_address(), "to": to, "amount": amount,
                                       "token": token})
    if solid:
        wait_until(lambda: control.call("GET", "/chain")["solidified"] >= done["block_number"],
                   timeout=30, message="the transfer's block solidified")
    body = callback_body(transfer_data(tx_hash=done["tx_hash"], to=to, amount=amount,
                                       token=token, block_number=done["block_number"]))
    return parse_transfer(body, signature=sign_callback("whsec_test", body), verified_by="key")


@pytest.fixture
def stored(tmp_path, monkeypatch) -> Iterator[CallbackStore]:
    """The callback store the credit task reads (``TRONENERGY_CALLBACK_STORE``) and its
    ledger (``TRONENERGY_DEPOSITS_DB``), both SQLite files of this test."""
    url = f"sqlite:///{tmp_path / 'callbacks.db'}"
    monkeypatch.setenv(ENV_STORE_URL, url)
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", f"sqlite:///{tmp_path / 'ledger.db'}")
    forget_stores()
    store = CallbackStore(url)
    yield store
    store.close()
    forget_stores()


def _addresses(monkeypatch, *addresses: str) -> None:
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES", json.dumps(list(addresses)))


def test_example_dags_import_cleanly(airflow_db):
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow < 3.2
        from airflow.models.dagbag import DagBag

    bag = DagBag(dag_folder=str(example.__file__).rsplit("/", 1)[0])
    assert bag.import_errors == {}
    assert {"batch_payout_preparation", "deposit_addresses_register",
            "deposit_credit", "deposit_scan"} <= set(bag.dag_ids)
    watcher = bag.get_dag("deposit_credit").timetable
    assert watcher is not None


def test_register_then_credit_in_dag_test(run_dag, control, sandbox, stored, node_conn,
                                          monkeypatch):
    address = random_address()
    _addresses(monkeypatch, address)
    dag = next(d for d in [example.dag_register, example.dag_credit]
               if d.dag_id == "deposit_credit")
    deposit = on_chain(control, address, "25.5")
    stored.record(deposit)
    out = run_dag(dag)
    assert out["credit_deposits"][0] == "success"
    [credited] = out["credit_deposits"][2]
    assert (credited["tx_hash"], credited["index"], credited["to"], credited["units"],
            credited["block_number"]) == (deposit.tx_hash, 0, address, "25500000",
                                          deposit.block_number)
    again = run_dag(dag)
    assert again["credit_deposits"][2] == []


def test_a_run_waits_for_the_block_of_a_callback_it_has_seen(run_dag, control, stored,
                                                              node_conn, tmp_path,
                                                              monkeypatch):
    """The callback came as its block was made, and the chain stalls until the run has seen
    the callback wait for its block: the run waits for the block to be solid and credits it
    then, rather than leaving it to a run no later deposit may wake. Before the wait (and
    with ``tronenergy_deposit_settle_seconds`` 0) this run credited nothing."""
    address = random_address()
    _addresses(monkeypatch, address)
    control.post("/chain/pause")

    def waiting() -> bool:
        try:
            with sqlite3.connect(tmp_path / "ledger.db") as db:
                return db.execute("SELECT count(*) FROM deposit_claims WHERE "
                                  "reason = 'not_solid'").fetchone() == (1,)
        except sqlite3.Error:  # the ledger not made yet
            return False

    def resume_once_seen() -> None:
        wait_until(waiting, timeout=120, message="the run saw the callback wait")
        control.post("/chain/resume")

    resume = threading.Thread(target=resume_once_seen)
    try:
        early = on_chain(control, address, "3", solid=False)
        stored.record(early)
        resume.start()
        out = run_dag(example.dag_credit)
    finally:
        resume.join()
        control.post("/chain/resume")
    assert [t["tx_hash"] for t in out["credit_deposits"][2]] == [early.tx_hash]


def test_a_callback_the_chain_does_not_hold_is_not_credited(run_dag, control, stored,
                                                           node_conn, tmp_path, monkeypatch):
    """Correctly signed, stored, and for a transaction the chain does not know: the run
    credits nothing and the ledger keeps the claim, waiting for the deadline."""
    address = random_address()
    _addresses(monkeypatch, address)
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_SETTLE_SECONDS", "0")
    forged = verified_transfer(address, "5000", "USDT")
    stored.record(forged)
    out = run_dag(example.dag_credit)
    assert (out["credit_deposits"][0], out["credit_deposits"][2]) == ("success", [])
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        assert db.execute("SELECT count(*) FROM credited_deposits").fetchone() == (0,)
        assert db.execute("SELECT tx_hash, state, reason FROM deposit_claims").fetchall() == [
            (forged.tx_hash, "waiting", "not_found_yet")]


def test_without_its_node_connection_the_credit_task_fails_crediting_nothing(
        run_dag, control, stored, tmp_path, monkeypatch, capfd):
    """Deposits are credited only once proven on chain: a missing ``tron_node_default``
    fails the task at once (not retried), naming it, before the ledger is read."""
    monkeypatch.delenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", raising=False)
    address = random_address()
    _addresses(monkeypatch, address)
    stored.record(verified_transfer(address, "5000", "USDT"))
    out = run_dag(example.dag_credit)
    assert out["credit_deposits"][:2] == ("failed", 1)
    assert ("tron_node_conn_id 'tron_node_default' names no connection; deposit proofs need "
            "a TRON node to check each callback against the chain before it is credited: "
            "create it") in capfd.readouterr().out
    with DepositLedger(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        assert ledger.credits() == [] and ledger.claims(OPEN) == []


def test_a_ledger_on_one_hosts_file_under_celery_fails_the_credit_task_once(
        run_dag, stored, node_conn, tmp_path, monkeypatch, capfd):
    """A ledger (or callback store) on SQLite while the executor runs tasks on several
    hosts (``StoreNotShared``): the task fails once, not retried, naming the setting."""
    from airflow_provider_tronenergy import sqlstore

    monkeypatch.setattr(sqlstore, "configured_executors", lambda: [
        "airflow.providers.celery.executors.celery_executor.CeleryExecutor"])
    _addresses(monkeypatch, random_address())
    out = run_dag(example.dag_credit)
    assert out["credit_deposits"][:2] == ("failed", 1)
    assert "TRONENERGY_DEPOSITS_DB_SINGLE_HOST=true" in capfd.readouterr().out
    assert not (tmp_path / "ledger.db").exists()


def test_a_stopped_watchers_event_fails_the_credit_task_once(stored, monkeypatch):
    """The watcher's one event for a callback store the triggerer may not open: the woken
    run fails on it, not retried, saying why, before anything is read or credited."""
    from types import SimpleNamespace

    from airflow.providers.common.compat.sdk import AirflowFailException

    from airflow_provider_tronenergy.triggers.stops import stopped

    stop = stopped("the callback store is a SQLite file on this host", consumer="deposit_credit")
    # keyed by URI: an Asset is no dict key on Airflow 3.1 (its extra dict in its hash)
    events = {example.DEPOSITS.uri: [SimpleNamespace(extra={"payload": stop})]}
    credit = example.dag_credit.get_task("credit_deposits").python_callable
    with pytest.raises(AirflowFailException, match=r"^the deposits watcher stopped: the "
                                                   "callback store is a SQLite file"):
        credit(triggering_asset_events=events)


def test_only_deposit_addresses_are_credited(run_dag, control, stored, node_conn,
                                             monkeypatch):
    deposit_address = random_address()
    _addresses(monkeypatch, deposit_address)
    deposit, elsewhere = on_chain(control, deposit_address), on_chain(control, random_address())
    stored.record_many([elsewhere, deposit])
    out = run_dag(example.dag_credit)
    assert [t["tx_hash"] for t in out["credit_deposits"][2]] == [deposit.tx_hash]


def test_a_transfer_handed_to_a_run_is_not_credited(run_dag, control, stored, tmp_path,
                                                    node_conn, monkeypatch, caplog):
    """Whoever can trigger the DAG cannot credit a transfer the store never verified: only
    the store is read, ``dag_run.conf`` is not."""
    address = random_address()
    _addresses(monkeypatch, address)
    forged = {"tx_hash": secrets.token_hex(32), "to": address, "from": random_address(),
              "amount": "1000000", "token": "USDT", "block_number": 7}
    with caplog.at_level(logging.INFO, logger=example.log.name):
        out = run_dag(example.dag_credit, transfers=[forged])
    assert out["credit_deposits"][0] == "success"
    assert out["credit_deposits"][2] == []
    logged = [r.getMessage() for r in caplog.records if r.name == example.log.name]
    assert "woken by 0 deposit event(s): crediting from the callback store" in logged
    assert any(m.startswith("dag_run.conf transfers are not credited") for m in logged)
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        assert db.execute("SELECT count(*) FROM credited_deposits").fetchone() == (0,)


def test_registration_reads_its_addresses_when_it_runs(run_dag, control, sandbox, stored,
                                                       node_conn, tmp_path, monkeypatch):
    """Set after the file was parsed, the Variables still reach the task; each address's
    registration block is recorded (the node's solid head)."""
    addresses = [control.activated(), control.activated()]
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES", json.dumps(addresses))
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_CALLBACK_URL", "https://example.com/cb")
    solid = control.call("GET", "/chain")["solidified"]
    out = run_dag(example.dag_register)
    assert out["watch_deposit_addresses"][0] == "success", out
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        rows = dict(db.execute("SELECT address, block FROM deposit_registrations").fetchall())
    assert set(rows) == set(addresses) and min(rows.values()) >= solid
    hook = TronEnergyHook()
    try:
        monitored = {m.address: m for m in hook.get_conn().iter_monitored_addresses()}
    finally:
        hook.close()
    assert set(addresses) <= set(monitored)
    assert {monitored[a].label for a in addresses} == {"deposits"}


def test_a_run_credits_a_stored_deposit_its_events_do_not_carry(run_dag, control, stored,
                                                                  tmp_path, node_conn,
                                                                  monkeypatch):
    """The scheduler race (docs/deployment.md): a deposit whose Asset event reached no run is
    in the callback store; the next credit run credits it from there, once, naming itself,
    and a run its event wakes later credits nothing."""
    address = random_address()
    _addresses(monkeypatch, address)
    stranded = on_chain(control, address, "70.25")
    stored.record(stranded)

    out = run_dag(example.dag_credit)  # triggered by no event carrying it
    assert out["credit_deposits"][0] == "success"
    assert [(t["tx_hash"], t["units"]) for t in out["credit_deposits"][2]] == [
        (stranded.tx_hash, "70250000")]
    again = run_dag(example.dag_credit)  # the run its event wakes, late
    assert again["credit_deposits"][2] == []
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        assert db.execute("SELECT tx_hash, credited_by FROM credited_deposits").fetchall() == [
            (stranded.tx_hash, out["__run_id__"])]


def test_the_scan_credits_a_deposit_whose_callback_never_came(run_dag, control, stored,
                                                              node_conn, tmp_path,
                                                              monkeypatch):
    """The service never called back (nothing stored): the scan DAG finds the transfer in its
    block and credits it, once however often it runs; the credit DAG then finds it
    credited."""
    address = random_address()
    _addresses(monkeypatch, address)
    missed = on_chain(control, address, "7.25")
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_SCAN_START", str(missed.block_number))
    first = run_dag(example.dag_scan)
    assert first["scan_deposits"][0] == "success"
    run_dag(example.dag_scan)
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        assert db.execute("SELECT tx_hash, amount, source FROM credited_deposits").fetchall() \
            == [(missed.tx_hash, "7.25", "scan")]
    stored.record(missed)  # the callback arrives late: credited already, nothing twice
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_SETTLE_SECONDS", "0")
    assert run_dag(example.dag_credit)["credit_deposits"][2] == []


def test_an_address_registered_paid_and_its_callbacks_lost_before_the_first_scan(
        run_dag, control, stored, node_conn, tmp_path, monkeypatch):
    """Issue 45: the register DAG runs, the deposit comes, every callback is lost (the
    callback URL answers nothing), and the scan DAG is enabled only after the deposit's
    block solidified: its first run, no start Variable set, credits it, once."""
    address = random_address()
    _addresses(monkeypatch, address)
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_CALLBACK_URL", "http://127.0.0.1:9/lost")
    monkeypatch.delenv("AIRFLOW_VAR_TRONENERGY_DEPOSIT_SCAN_START", raising=False)
    assert run_dag(example.dag_register)["watch_deposit_addresses"][0] == "success"
    paid = on_chain(control, address, "9.75")
    wait_until(lambda: control.call("GET", "/chain")["solidified"] > paid.block_number + 5,
               timeout=30, message="the scan enabled well after the deposit's block")
    first = run_dag(example.dag_scan)
    assert first["scan_deposits"][0] == "success", first
    assert first["scan_deposits"][2]["USDT"]["first_block"] <= paid.block_number
    run_dag(example.dag_scan)
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        assert db.execute("SELECT tx_hash, amount, source FROM credited_deposits").fetchall() \
            == [(paid.tx_hash, "9.75", "scan")]
    assert stored.list_transfers(address=address) == []  # no callback ever stored


def test_the_scan_waits_for_deposit_addresses(run_dag, stored, node_conn, monkeypatch):
    _addresses(monkeypatch)
    out = run_dag(example.dag_scan)
    assert out["has_deposit_addresses"][0] == "success"
    assert out["scan_deposits"][0] == "skipped"
