"""Two payout batches from one hot wallet at once, through the operator (dag.test()).

A busy public node answers balance, resource and estimate reads seconds late (a
``latency`` fault on those node paths). Two batches started two seconds apart from one
wallet whose funds cover one batch: before the wallet's lease, both pre-flights read
the same balance and energy and both signed; the second batch's transfers REVERTed on
chain (or burned TRX for the energy the first used, with ``max_burn_trx="0"``). Now the
second waits for the first's lease and its pre-flight counts the first's transfers.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest
from tronpy.keys import PrivateKey

from support.dag_process import finish_all, spawn_dag_test
from support.dagrun import run_outcome

pytestmark = pytest.mark.usefixtures("node_conn")

SLOW_READS = ("/wallet/getaccount", "/wallet/getaccountresource",
              "/wallet/triggerconstantcontract")
"""The pre-flight's balance, resource and estimate reads (USDT's balanceOf is a constant
call): a busy public node answers them 6-8 s late."""


@pytest.fixture
def journal(payout_journal):
    """The payout journal (the purchase journal's database) the operators open."""
    return payout_journal


def hot_wallet(control, monkeypatch, *, usdt: str, staked: int) -> str:
    """A hot wallet with ``usdt`` and ``staked`` energy; its key is the signer."""
    key = PrivateKey.random()
    address = key.public_key.to_base58check_address()
    control.wallet(address, trx="50", usdt=usdt, staked=staked)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    return address


def sent_from(control, address: str) -> list[dict[str, Any]]:
    return list(control.call("GET", f"/chain/transactions?owner={address}"))


def two_runs_two_seconds_apart(control, sender: str) -> tuple[dict[str, list[dict[str, Any]]],
                                                              dict[str, dict[str, Any]]]:
    """``te_payouts`` and, 2 s later, ``te_payouts_other``: two 3 USDT payouts each to
    holders, from ``sender``, each DAG run in a process of its own, the node's balance,
    resource and estimate answers 5 s late. ``(rows by DAG, {DAG: outcome and log})``."""
    batches = {name: [{"recipient": control.wallet(trx="1", usdt="1"), "amount": "3",
                       "payout_id": f"{name}-{i}"} for i in range(2)]
               for name in ("te_payouts", "te_payouts_other")}
    children = {name: spawn_dag_test(name, {
        "payouts": rows, "sender": sender, "batch_id": f"{name}-1", "max_burn_trx": "0"})
        for name, rows in batches.items()}
    for child in children.values():  # both import Airflow at once, then wait for "go"
        child.ready()
    for path in SLOW_READS:
        control.fault(kind="latency", path=path, latency_ms=5000)
    try:
        children["te_payouts"].go()
        time.sleep(2)
        children["te_payouts_other"].go()
        ended = finish_all(children)
    finally:
        control.clear_faults()
        for child in children.values():
            if child.process.poll() is None:
                child.process.kill()
    return batches, {name: {**run_outcome(name, run["run_id"], run["state"]),
                            "log": run["log"]} for name, run in ended.items()}


def receipts(control, sender: str) -> list[dict[str, Any]]:
    return [(t.get("receipt") or {}).get("receipt") or {} for t in sent_from(control, sender)]


@pytest.mark.slow  # two DAG processes against a node 5 s slow: ~50 s
def test_two_dag_runs_on_a_wallet_worth_one_batch_pay_one_and_never_revert(
        airflow_db, control, journal, monkeypatch):
    """10 USDT and 200,000 staked energy: one batch of 6 USDT (2 x 64,285 energy), not two.
    Before: 3 SUCCESS and 1 REVERT on chain. Now the second batch waited for the first's
    lease, counted its transfers and signed nothing (a retryable wait or a refusal)."""
    sender = hot_wallet(control, monkeypatch, usdt="10", staked=200_000)
    batches, out = two_runs_two_seconds_apart(control, sender)
    got = receipts(control, sender)
    assert Counter(r.get("result") for r in got) == Counter({"SUCCESS": 2}), got
    assert [r.get("energy_fee", 0) for r in got] == [0, 0], got  # no TRX burned for energy
    paid = {t["to"] for t in sent_from(control, sender)}
    [winner] = [n for n, rows in batches.items() if {p["recipient"] for p in rows} == paid]
    loser = next(n for n in batches if n != winner)
    assert out[winner]["send"][0] == "success", out
    assert out[winner]["send"][2]["states"] == {"confirmed": 2}
    assert out[loser]["send"][0] == "failed", out
    assert f"is held by {winner}/" in out[loser]["log"]  # it waited for the winner's lease
    assert {a.batch_id for a in journal.recent()} == {f"{winner}-1"}


@pytest.mark.slow  # two DAG processes against a node 5 s slow: ~50 s
def test_two_dag_runs_on_a_wallet_worth_both_pay_both_once(airflow_db, control, journal,
                                                           monkeypatch):
    """Enough for both: the second waits for the first's lease, then fits in what is left."""
    sender = hot_wallet(control, monkeypatch, usdt="20", staked=2_000_000)
    batches, out = two_runs_two_seconds_apart(control, sender)
    got = receipts(control, sender)
    assert Counter(r.get("result") for r in got) == Counter({"SUCCESS": 4}), got
    assert all(r.get("energy_fee", 0) == 0 for r in got), got
    assert Counter(t["to"] for t in sent_from(control, sender)) == Counter(
        p["recipient"] for rows in batches.values() for p in rows)
    assert {name: run["send"][0] for name, run in out.items()} == {
        "te_payouts": "success", "te_payouts_other": "success"}, out
    assert any("is held by" in run["log"] for run in out.values())


def test_a_wallet_held_past_the_wait_fails_the_try_retryably_and_signs_nothing(
        run_dag, control, journal, monkeypatch, capfd):
    """Another task holds the wallet (its lease, as a worker mid-pre-flight leaves it): the
    run waits ``wallet_wait_seconds``, fails the try with a retry, and signs nothing; once
    the wallet is free the batch is paid once."""
    from payouts import DAGS

    sender = hot_wallet(control, monkeypatch, usdt="10", staked=200_000)
    row = {"recipient": control.wallet(trx="1", usdt="1"), "amount": "2", "payout_id": "busy"}
    lease = journal.leases.acquire(sender, "te_other/run/send/-1/try1@host:1", 600)
    conf = {"payouts": [row], "sender": sender, "batch_id": "busy-1",
            "wallet_wait_seconds": 1}
    out = run_dag(DAGS["te_payouts"], **conf)
    assert out["send"][:2] == ("failed", 2), out  # retried: a wait, not a refusal
    assert (f"the sender {sender} is busy: te_other/run/send/-1/try1@host:1 holds its "
            "pre-flight and signing") in capfd.readouterr().out
    assert journal.recent() == [] and sent_from(control, sender) == []
    assert journal.leases.release(lease)
    paid = run_dag(DAGS["te_payouts"], **conf)
    assert paid["send"][0] == "success" and paid["send"][2]["states"] == {"confirmed": 1}
    assert Counter(t["to"] for t in sent_from(control, sender)) == Counter([row["recipient"]])
    assert journal.leases.holder(sender) is None  # released after signing
