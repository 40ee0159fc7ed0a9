"""No double purchase across runs: the journal's invariants through real Airflow and the sandbox.

The drills kill ``airflow dags test`` while the service holds the answer to a
purchase it has already taken, or let the client's read timeout expire, and
then do what a person does next: trigger a new run of the same DAG.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import operators_purchase as dags
import pytest

from airflow_provider_tronenergy.purchase_journal import EntryState, PurchaseJournal, journal_url

BUY = {"energy": "65000", "rent_time": "1"}


@pytest.fixture
def journal(airflow_db) -> Iterator[PurchaseJournal]:
    """The journal the workers use with no configuration: SQLite in $AIRFLOW_HOME."""
    journal = PurchaseJournal(journal_url())
    yield journal
    journal.close()


def _unknown_for(journal: PurchaseJournal, target: str) -> str:
    entries = [e for e in journal.list(state=EntryState.SENDING) if e.target_address == target]
    assert len(entries) == 1, entries
    return entries[0].identity


def _resolve(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "airflow_provider_tronenergy.purchase_journal.cli",
                           "resolve", *args], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done


def _expire(journal: PurchaseJournal, identity: str) -> None:
    """Let the rental of the newest attempt run out (as an hour passing would)."""
    latest = journal.latest(identity)
    assert latest is not None and latest.state is EntryState.PLACED
    with journal.engine.begin() as conn:
        conn.execute(journal.entries.update().where(journal.entries.c.id == latest.id)
                     .values(valid_until_ms=int((time.time() - 1) * 1000)))


def _blocked_new_run(run_dag: Any, capfd: Any, target: str) -> str:
    """A new run of the same DAG for the same purchase: refused, with the resolve command."""
    capfd.readouterr()
    out = run_dag(dags.te_buy, target=target, **BUY)
    # The exception may be drawn in a wrapped box: read it as flat text.
    output = re.sub(r"(\\n|[│\s])+", " ", capfd.readouterr().out)
    assert out["buy"][:2] == ("failed", 1), out  # AirflowFailException: no retry
    assert "its outcome is unknown" in output, output[-3000:]
    assert "tronenergy-purchases resolve" in output and "--order-id" in output
    assert "It is not placed again, in this run or any later run, until resolved" in output
    return output


def test_worker_killed_mid_purchase_then_new_runs(run_dag, control, journal, capfd):
    target = control.activated()
    control.fault(kind="latency", path="/energy/buy", latency_ms=60_000, count=1)
    worker = subprocess.Popen(
        [sys.executable, "-m", "airflow", "dags", "test", "te_buy", "-c",
         json.dumps({"target": target, **BUY})],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env=os.environ.copy())
    try:
        deadline = time.monotonic() + 120
        while not control.orders(target):  # the service took it; its answer is held
            assert worker.poll() is None, "the worker ended before the purchase was sent"
            assert time.monotonic() < deadline, "the purchase never reached the sandbox"
            time.sleep(0.2)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(30)
    control.clear_faults()
    [order] = control.orders(target)

    output = _blocked_new_run(run_dag, capfd, target)
    assert len(control.orders(target)) == 1
    identity = _unknown_for(journal, target)
    assert identity in output

    _resolve(identity, "--order-id", order["order_id"], "--by", "ops")
    out = run_dag(dags.te_buy, target=target, **BUY)
    state, _, result = out["buy"]
    assert state == "success"
    assert result["reused"] is True and result["order_id"] == order["order_id"]
    assert result["status"] == "success"
    assert [o["order_id"] for o in control.orders(target)] == [order["order_id"]]


def test_read_timeout_then_new_runs(run_dag, control, journal, conn, sandbox, monkeypatch,
                                   capfd):
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", json.dumps({
        "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
        "password": sandbox.api_secret, "extra": {"timeout": [5, 1]}}))
    target = control.activated()
    control.fault(kind="latency", path="/energy/buy", latency_ms=3_000, count=1)
    out = run_dag(dags.te_buy, target=target, **BUY)
    assert out["buy"][:2] == ("failed", 1)  # ambiguous: no retry
    [order] = control.orders(target)

    _blocked_new_run(run_dag, capfd, target)
    assert len(control.orders(target)) == 1
    identity = _unknown_for(journal, target)

    _resolve(identity, "--order-id", order["order_id"])
    third = run_dag(dags.te_buy, target=target, **BUY)
    assert third["buy"][0] == "success" and third["buy"][2]["order_id"] == order["order_id"]
    assert len(control.orders(target)) == 1


def test_resolved_not_placed_buys_once(run_dag, control, journal):
    target = control.activated()
    control.fault(kind="error", path="/energy/buy", status=500, count=1)
    out = run_dag(dags.te_buy, target=target, **BUY)
    assert out["buy"][:2] == ("failed", 1)  # a 500 may hide a purchase: unknown
    assert control.orders(target) == []
    assert run_dag(dags.te_buy, target=target, **BUY)["buy"][0] == "failed"
    assert control.orders(target) == []
    identity = _unknown_for(journal, target)

    _resolve(identity, "--not-placed")
    again = run_dag(dags.te_buy, target=target, **BUY)
    assert again["buy"][0] == "success" and again["buy"][2]["reused"] is False
    assert len(control.orders(target)) == 1


def test_resolved_order_once_expired_is_bought_anew(run_dag, control, journal):
    target = control.activated()
    control.fault(kind="drop", path="/energy/buy", count=1)  # bought, answer lost
    assert run_dag(dags.te_buy, target=target, **BUY)["buy"][0] == "failed"
    [order] = control.orders(target)
    identity = _unknown_for(journal, target)
    _resolve(identity, "--order-id", order["order_id"])
    _expire(journal, identity)
    out = run_dag(dags.te_buy, target=target, **BUY)
    assert out["buy"][0] == "success" and out["buy"][2]["reused"] is False
    assert len(control.orders(target)) == 2


def test_explicit_key_reuses_a_valid_order_in_later_runs(run_dag, control, journal):
    target = control.activated()
    key = f"batch-{target}:0"
    first = run_dag(dags.te_buy_keyed, target=target, key=key)["buy"]
    assert first[0] == "success" and first[2]["purchase_key"] == key
    second = run_dag(dags.te_buy_keyed, target=target, key=key)["buy"]
    assert second[0] == "success" and second[2]["reused"] is True
    assert second[2]["order_id"] == first[2]["order_id"]
    assert len(control.orders(target)) == 1

    _expire(journal, key)
    third = run_dag(dags.te_buy_keyed, target=target, key=key)["buy"]
    assert third[0] == "success" and third[2]["reused"] is False
    assert len(control.orders(target)) == 2


def test_explicit_key_does_not_reuse_a_failed_order(run_dag, control):
    target = control.activated()
    key = f"batch-{target}:failed"
    control.fail_next_orders(1)
    assert run_dag(dags.te_buy_keyed, target=target, key=key)["buy"][0] == "failed"
    out = run_dag(dags.te_buy_keyed, target=target, key=key)["buy"]
    assert out[0] == "success" and out[2]["reused"] is False
    assert [o["status"] for o in control.orders(target)] == ["failed", "success"]


def test_without_a_key_every_run_buys(run_dag, control):
    """A scheduled top-up: a completed earlier purchase does not stop the next run."""
    target = control.activated()
    for _ in range(2):
        out = run_dag(dags.te_buy, target=target, **BUY)
        assert out["buy"][0] == "success" and out["buy"][2]["reused"] is False
    assert len(control.orders(target)) == 2


@pytest.mark.parametrize("bad", ["has space", "auto:reserved", "x" * 201, "ключ"])
def test_bad_purchase_key_fails_before_any_request(run_dag, control, bad: Any):
    target = control.activated()
    out = run_dag(dags.te_buy_keyed, target=target, key=bad)
    assert out["buy"][:2] == ("failed", 1)
    assert control.orders(target) == []


def test_journal_unreachable_buys_nothing(run_dag, control, monkeypatch):
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", "postgresql://nobody@127.0.0.1:9/none")
    target = control.activated()
    out = run_dag(dags.te_buy, target=target, **BUY)
    assert out["buy"][0] in ("failed", "up_for_retry")
    assert control.orders(target) == []



def test_explicit_key_with_other_parameters_is_refused(run_dag, control):
    target, other = control.activated(), control.activated()
    key = f"batch-{target}:conflict"
    assert run_dag(dags.te_buy_keyed, target=target, key=key)["buy"][0] == "success"
    out = run_dag(dags.te_buy_keyed, target=other, key=key)
    assert out["buy"][:2] == ("failed", 1)
    assert control.orders(other) == [] and len(control.orders(target)) == 1
