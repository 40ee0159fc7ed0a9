"""Check, activate and monitor operators on batches, in real Airflow against the sandbox."""

from __future__ import annotations

import json
import sqlite3
import time
from decimal import Decimal

import operators_batch as dags

from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from tronenergy_protocol.address import random_address


def test_check_batch_reports_the_address_it_could_not_check(run_dag, control, sandbox,
                                                          monkeypatch, caplog, capfd):
    # Invalid input fails before any request (test_batch_input.py); this is a failure at
    # run time: one check gets a 503 and, with max_retries 0, is not resent.
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", json.dumps({
        "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
        "password": sandbox.api_secret,
        "extra": {"webhook_secret": sandbox.webhook_secret, "max_retries": "0"}}))
    addresses = [control.activated(holder=True), random_address(), control.activated()]
    control.fault(kind="error", status=503, path="/energy/check-address", count=1)
    caplog.set_level("INFO")
    out = run_dag(dags.te_check, addresses=addresses)
    assert out["check"][:2] == ("failed", 1)
    # The other two addresses were still checked.
    answered = [r for r in caplog.records if r.name == "tronenergy.sandbox.access"
                and "/v1/energy/check-address 200" in r.getMessage()]
    assert len(answered) == 2
    task_log = capfd.readouterr().out  # the task's own log, as Airflow writes it
    report = task_log[task_log.index("1 of 3 addresses could not be checked"):]
    assert sum(f"{address}: ServerError" in report for address in addresses) == 1


def test_check_batch_results(run_dag, control):
    holder = control.activated(holder=True)
    fresh = random_address()
    active = control.activated()
    out = run_dag(dags.te_check, addresses=[holder, fresh, active])
    state, _, results = out["check"]
    assert state == "success"
    assert [r["address"] for r in results] == [holder, fresh, active]
    assert [r["is_activated"] for r in results] == [True, False, True]
    assert [r["transfer_energy"] for r in results] == [65000, 131000, 131000]


def test_check_single_address_and_mapping(run_dag, control):
    out = run_dag(dags.te_check, addresses=control.activated())
    assert out["check"][2]["is_activated"] is True  # one address in, one dict out
    mapped = run_dag(dags.te_check_mapped)
    assert mapped["check[0]"][0] == mapped["check[1]"][0] == "success"
    assert mapped["check[0]"][2]["address"] == "TAPSuYQbz8CA3jrTucrXFsQSs1FNXGwRH1"


def test_activate_batch_skips_active_and_survives_failures(run_dag, control):
    active = control.activated()
    fresh = [random_address() for _ in range(4)]
    # Two activations get a 503: ambiguous for a money call, so they fail this try;
    # the retry checks first, finds them inactive, and activates them.
    control.fault(kind="error", status=503, path="/energy/activate", count=2)
    out = run_dag(dags.te_activate, addresses=[active, *fresh])
    state, tries, _ = out["activate"]
    assert (state, tries) == ("success", 2)
    activations = [o for o in control.orders() if o["kind"] == "activate"
                   and o["target_address"] in fresh]
    assert sorted(o["target_address"] for o in activations) == sorted(fresh)
    assert all(o["target_address"] != active for o in control.orders() if o["kind"] == "activate")


def test_activate_batch_results_and_costs(run_dag, control):
    active = control.activated()
    fresh = [random_address() for _ in range(3)]
    out = run_dag(dags.te_activate, addresses=[fresh[0], active, fresh[1], fresh[2]])
    state, _, results = out["activate"]
    assert state == "success"
    assert [r["address"] for r in results] == [fresh[0], active, fresh[1], fresh[2]]
    assert [r["activated"] for r in results] == [True, False, True, True]
    assert sum(Decimal(r["cost"]) for r in results) == Decimal("3.3")


def test_activate_guards(run_dag, control):
    fresh = [random_address() for _ in range(3)]
    before = len(control.orders())
    out = run_dag(dags.te_activate, addresses=fresh, max_order="1")  # one costs 1.1
    assert out["activate"][:2] == ("failed", 1)
    out = run_dag(dags.te_activate, addresses=fresh, dry_run=True)
    assert out["activate"][2] == {"dry_run": True, "to_activate": fresh, "cost": "3.3"}
    control.balance("3")
    out = run_dag(dags.te_activate, addresses=fresh)
    assert out["activate"][:2] == ("failed", 1)
    assert len(control.orders()) == before


def test_activate_max_order_is_per_activation(run_dag, control):
    """max_order_trx is what one activation may cost: three at 1.1 TRX each pass a 1.1
    limit (3.3 TRX in all), as one order of a batch buy passes its max_order_trx."""
    fresh = [random_address() for _ in range(3)]
    out = run_dag(dags.te_activate, addresses=fresh, max_order="1.1")
    assert out["activate"][:2] == ("success", 1)
    assert [r["activated"] for r in out["activate"][2]] == [True, True, True]


def registrations(path) -> dict[str, tuple]:
    with sqlite3.connect(path) as db:
        return {a: (block, at_ms) for a, block, at_ms in db.execute(
            "SELECT address, block, at_ms FROM deposit_registrations")}


def test_monitor_operators_are_idempotent(run_dag, control, sandbox, tmp_path, monkeypatch):
    """Adding records each registration's time first (no node: the worker's clock), the
    earliest kept when added again; removing leaves it."""
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", f"sqlite:///{tmp_path / 'ledger.db'}")
    addresses = [random_address(), random_address()]
    before_ms = time.time_ns() // 1_000_000
    out = run_dag(dags.te_monitor, addresses=addresses)
    recorded = registrations(tmp_path / "ledger.db")
    assert set(recorded) == set(addresses)
    assert all(block is None and before_ms <= at_ms <= time.time_ns() // 1_000_000
               for block, at_ms in recorded.values())
    assert len({at_ms for _, at_ms in recorded.values()}) == 1  # the first add's, kept
    assert [r["added"] for r in out["add"][2]] == [True, True]
    assert out["add"][2][0]["address"] == addresses[0]
    assert [r["added"] for r in out["add_again"][2]] == [False, False]
    assert out["add_strict"][0] == "failed"
    assert [r["removed"] for r in out["remove"][2]] == [True, True]
    assert [r["removed"] for r in out["remove_again"][2]] == [False, False]


def test_a_registration_reads_the_node_or_fails_before_the_service_is_asked(
        run_dag, control, sandbox, node_conn, tmp_path, monkeypatch):
    """With a node: its solidified head is the registration's block. A node connection
    that names nothing fails the task before the service watches anything; without a
    record, the ledger is not opened."""
    ledger = tmp_path / "ledger.db"
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", f"sqlite:///{ledger}")
    read, missing, unrecorded = random_address(), random_address(), random_address()
    solid = control.call("GET", "/chain")["solidified"]
    assert run_dag(dags.te_monitor_recorded, addresses=[read],
                   node="tron_node_default")["add"][0] == "success"
    [(block, at_ms)] = registrations(ledger).values()
    assert at_ms is None and solid <= block <= control.call("GET", "/chain")["solidified"]
    assert run_dag(dags.te_monitor_recorded, addresses=[missing],
                   node="no_such_node")["add"][0] == "failed"
    assert run_dag(dags.te_monitor_recorded, addresses=[unrecorded],
                   record=False)["add"][0] == "success"
    assert set(registrations(ledger)) == {read}
    hook = TronEnergyHook()
    try:
        monitored = {m.address for m in hook.get_conn().iter_monitored_addresses()}
    finally:
        hook.close()
    assert {read, unrecorded} <= monitored and missing not in monitored
