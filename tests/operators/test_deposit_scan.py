"""TronNodeDepositScanOperator with dag.test() against the sandbox's chain and a SQLite ledger:
one pass credits what solid blocks hold; following the chain (in the worker, or deferred to
the triggerer between passes) credits deposits that arrive meanwhile, each once; bad
addresses fail the task before anything is read, without a retry; an address registered
through the add-monitor operator after the checkpoint is read back to its registration
once; a TRC-20 named by its contract is credited in its own decimals beside USDT, and one
without ``decimals()`` fails the task before anything is credited, without a retry."""

from __future__ import annotations

import threading

import operators_batch as dags_batch
import pytest
from dags.deposit_scan import DAGS

from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.scan.checkpoint import Checkpoints
from support.waiting import wait_until
from tronenergy_protocol.address import random_address

SCOPE = "USDT:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


@pytest.fixture
def ledger_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", url)  # the workers' configuration
    return url


def place(control, transfers):
    return control.post("/chain/blocks/transfers", {"transfers": transfers})["transactions"]


def head(control):
    return int(control.call("GET", "/chain")["head"])


def test_one_pass_credits_what_solid_blocks_hold(control, node_conn, ledger_url, run_dag):
    to = [random_address(), random_address()]
    now = control.post("/chain/pause")["head"]  # the chain waits for the task (a slow start)
    placed = place(control, [{"block": now - 30, "to": to[0], "units": 5_000_000},
                             {"block": now - 25, "to": to[1], "units": [1, 2]},
                             {"block": now - 25, "to": to[1], "units": 9, "token": "TRX"}])
    try:
        out = run_dag(DAGS["te_deposit_scan_worker"], addresses=to, start=now - 40,
                      tokens=["USDT", "TRX"])
    finally:
        control.post("/chain/resume")
    state, _, result = out["scan"]
    assert state == "success"
    assert (result["USDT"]["credited_count"], result["TRX"]["credited_count"]) == (3, 1)
    assert result["USDT"]["credited_units"] == "5000003" and result["USDT"]["passes"] == 1
    with DepositLedger(ledger_url) as ledger:
        rows = {(c.tx_hash, c.log_index, c.token) for c in ledger.credits()}
    assert rows == {(placed[0]["txid"], 0, "USDT"), (placed[1]["txid"], 0, "USDT"),
                    (placed[1]["txid"], 1, "USDT"), (placed[2]["txid"], 0, "TRX")}


@pytest.mark.parametrize("dag_id", ["te_deposit_scan_worker", "te_deposit_scan_deferrable"])
def test_following_the_chain_credits_deposits_that_arrive_meanwhile(
        dag_id, control, node_conn, ledger_url, run_dag):
    to = random_address()
    placed: list[dict] = []

    def arrive() -> None:
        """Once the first pass has fixed its start, deposits arrive in the next blocks."""
        with DepositLedger(ledger_url) as ledger:
            wait_until(lambda: Checkpoints(ledger.db).read(SCOPE) is not None, timeout=120,
                       message="the first pass")
        now = head(control)
        placed.extend(place(control, [{"block": now + 5 + 5 * i, "to": to, "units": 100 + i}
                                      for i in range(5)]))

    arrival = threading.Thread(target=arrive)
    arrival.start()
    try:
        out = run_dag(DAGS[dag_id], addresses=[to], start="solid", follow_for_seconds=15)
    finally:
        arrival.join()
    state, _, result = out["scan"]
    assert state == "success", out
    assert result["USDT"]["passes"] > 1 and result["USDT"]["credited_total"] == 5
    with DepositLedger(ledger_url) as ledger:
        assert sorted(c.tx_hash for c in ledger.credits()) == sorted(p["txid"] for p in placed)


def test_bad_addresses_fail_before_anything_is_read_without_a_retry(
        control, node_conn, ledger_url, run_dag):
    out = run_dag(DAGS["te_deposit_scan_worker"], addresses=[random_address(), "0xdeadbeef"],
                  start=head(control) - 10)
    state, tries, _ = out["scan"]
    assert (state, tries) == ("failed", 1)
    with DepositLedger(ledger_url) as ledger:
        assert ledger.credits() == []


def test_an_address_registered_after_the_checkpoint_is_backfilled_once(
        control, node_conn, ledger_url, run_dag):
    """Issue 45: the scan follows A; B is registered through the add-monitor operator and
    paid, its callbacks lost, while the scan, not given B yet, passes the payment's block.
    Given B, the scan reads back to B's registration once and credits it; the next run
    credits nothing again."""
    a, b = random_address(), random_address()
    scan = DAGS["te_deposit_scan_worker"]
    assert run_dag(scan, addresses=[a], start="solid")["scan"][0] == "success"
    registered = run_dag(dags_batch.te_monitor_recorded, addresses=[b],
                         node="tron_node_default")
    assert registered["add"][0] == "success"
    [paid] = place(control, [{"block": head(control) + 3, "to": b, "units": 6_500_000}])
    wait_until(lambda: control.call("GET", "/chain")["solidified"] > paid["block_number"] + 2,
               timeout=30, message="the payment's block solidified")
    passed = run_dag(scan, addresses=[a], start="solid")["scan"]
    assert passed[2]["USDT"]["last_block"] > paid["block_number"]  # passed without B
    given = run_dag(scan, addresses=[a, b], start="solid")["scan"]
    assert given[0] == "success", given
    assert given[2]["USDT"]["credited_count"] == 1 and given[2]["USDT"]["backfill_blocks"] > 0
    again = run_dag(scan, addresses=[a, b], start="solid")["scan"]
    assert again[2]["USDT"]["credited_count"] == 0
    assert again[2]["USDT"].get("backfill_blocks") == 0
    with DepositLedger(ledger_url) as ledger:
        assert [(c.tx_hash, c.to_address, c.units, c.source) for c in ledger.credits()] == [
            (paid["txid"], b, 6_500_000, "scan")]


def test_a_node_on_another_chain_than_its_connection_says_credits_nothing(
        control, sandbox, ledger_url, run_dag, monkeypatch):
    """No ``network`` extra is mainnet; the sandbox is a custom chain: refused at block 0."""
    import json

    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps(
        {"conn_type": "tron_node", "host": sandbox.root_url}))
    to = random_address()
    now = control.post("/chain/pause")["head"]
    place(control, [{"block": now - 30, "to": to, "units": 5_000_000}])
    try:
        out = run_dag(DAGS["te_deposit_scan_worker"], addresses=[to], start=now - 40)
    finally:
        control.post("/chain/resume")
    assert out["scan"][:2] == ("failed", 1)  # not retried
    with DepositLedger(ledger_url) as ledger:
        assert ledger.credits() == []


def test_a_trc20_named_by_its_contract_is_credited_in_its_decimals_beside_usdt(
        control, node_conn, ledger_url, run_dag):
    token = control.post("/chain/tokens", {"symbol": "WETH", "decimals": 18})["contract"]
    to = random_address()
    now = control.post("/chain/pause")["head"]
    placed = place(control, [{"block": now - 30, "to": to, "units": 10**20 + 1,
                              "contract": token},
                             {"block": now - 29, "to": to, "units": 7}])
    try:
        out = run_dag(DAGS["te_deposit_scan_worker"], addresses=[to], start=now - 40,
                      tokens=["USDT", token])
    finally:
        control.post("/chain/resume")
    state, _, result = out["scan"]
    assert state == "success", out
    assert (result[token]["token"], result[token]["decimals"]) == ("WETH", 18)
    assert result[token]["credited_amount"] == "100.000000000000000001"
    assert result["USDT"]["credited_units"] == "7"
    with DepositLedger(ledger_url) as ledger:
        assert ledger.totals(token) == {to: 10**20 + 1}
        assert {c.tx_hash: c.token for c in ledger.credits()} == {
            placed[0]["txid"]: "WETH", placed[1]["txid"]: "USDT"}


def test_a_contract_without_decimals_fails_the_task_without_a_retry(
        control, node_conn, ledger_url, run_dag):
    token = control.post("/chain/tokens", {"symbol": "NODEC", "decimals": None})["contract"]
    out = run_dag(DAGS["te_deposit_scan_worker"], addresses=[random_address()],
                  start=head(control) - 10, tokens=["USDT", token])
    state, tries, _ = out["scan"]
    assert (state, tries) == ("failed", 1)
    with DepositLedger(ledger_url) as ledger:
        assert ledger.credits() == []
        assert Checkpoints(ledger.db).read(SCOPE) is None  # not even USDT's first run
