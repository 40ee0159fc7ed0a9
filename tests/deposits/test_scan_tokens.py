"""Any TRC-20 scanned and credited by its contract (issue 47's deposit side), on the sandbox's
chain over real HTTP, into real ledgers (SQLite; PostgreSQL for the units' column).

An 18-decimal token's deposits credited exactly at its smallest unit and at 10^20 units (past
2^63: units are integer text in both databases); a look-alike contract (the same symbol, another
address) never credited as the configured one; a contract that answers no ``decimals()``, more
than 36, no ``symbol()``, or one that calls itself USDT, refused before anything is read or
credited; a rerun and a scan
killed mid-run credit each deposit once, the checkpoint per contract.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.scan.checkpoint import Checkpoints
from airflow_provider_tronenergy.deposits.scan.core import DepositScan, ScanSettings
from airflow_provider_tronenergy.deposits.scan.tokens import TokenRefused
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.transfers import ChainTransfer
from support.control import Control
from support.sandbox import create_token as sandbox_token
from support.waiting import wait_until
from tronenergy_protocol.address import random_address

WORKER = Path(__file__).parents[1] / "support" / "scan_worker.py"
BIG = 10**20
"""100 tokens of 18 decimals: past 2^63 (9.2 * 10^18)."""
FAST = {"max_requests_per_second": 1000}


@pytest.fixture
def ledger(tmp_path):
    with DepositLedger(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        yield ledger


def create_token(chain, symbol: str | None, decimals: int | None) -> str:
    """A TRC-20 contract of the sandbox's own; its address."""
    return sandbox_token(chain.sandbox, symbol=symbol, decimals=decimals)


def place(chain, transfers):
    return Control(chain.sandbox).post("/chain/blocks/transfers",
                                       {"transfers": transfers})["transactions"]


def test_an_18_decimal_token_is_credited_exactly_at_its_smallest_unit_and_past_2_63(
        chain, node, ledger):
    token = create_token(chain, "WETH", 18)
    to, other = random_address(), random_address()
    head = chain.head()
    placed = place(chain, [{"block": head - 40, "to": to, "units": 1, "contract": token},
                           {"block": head - 39, "to": to, "units": BIG + 1, "contract": token},
                           {"block": head - 38, "to": other, "units": 5, "contract": token},
                           {"block": head - 37, "to": to, "units": 7}])  # USDT: not this
    scan = DepositScan(ledger, node, [to], token=token,
                       settings=ScanSettings(start=head - 45, **FAST))
    assert (scan.token, scan.contract, scan.kind.decimals) == ("WETH", token, 18)
    assert scan.scope == f"TRC20:{token}"
    report = scan.run()
    assert [(t.tx_hash, t.units) for t in report.credited] == [
        (placed[0]["txid"], 1), (placed[1]["txid"], BIG + 1)]
    rows = {c.tx_hash: c for c in ledger.credits()}
    assert set(rows) == {placed[0]["txid"], placed[1]["txid"]}
    assert (rows[placed[0]["txid"]].amount, rows[placed[0]["txid"]].units) == (
        "0.000000000000000001", 1)
    assert (rows[placed[1]["txid"]].amount, rows[placed[1]["txid"]].units) == (
        "100.000000000000000001", BIG + 1)
    assert {(c.token, c.contract) for c in rows.values()} == {("WETH", token)}
    assert ledger.totals(token) == {to: BIG + 2}
    assert ledger.totals("USDT") == {}
    assert report.to_dict()["credited_amount"] == "100.000000000000000002"
    assert scan.run().credited == ()  # a rerun credits nothing again
    assert Checkpoints(ledger.db).read(f"TRC20:{token}") == report.tip


def test_a_look_alike_contract_with_the_same_symbol_is_never_credited_as_the_configured_one(
        chain, node, ledger):
    token, look_alike = create_token(chain, "GOLD", 8), create_token(chain, "GOLD", 8)
    to = random_address()
    head = chain.head()
    placed = place(chain, [{"block": head - 30, "to": to, "units": 300, "contract": look_alike},
                           {"block": head - 29, "to": to, "units": 200, "contract": token}])
    report = DepositScan(ledger, node, [to], token=token,
                         settings=ScanSettings(start=head - 35, **FAST)).run()
    assert [t.tx_hash for t in report.credited] == [placed[1]["txid"]]
    assert [(c.contract, c.units, c.amount) for c in ledger.credits()] == [
        (token, 200, "0.000002")]
    assert ledger.totals(look_alike) == {}
    assert Checkpoints(ledger.db).read(f"TRC20:{look_alike}") is None


@pytest.mark.parametrize(("symbol", "decimals", "said"), [
    ("NODEC", None, "answers no decimals()"),
    ("HUGE", 37, "decimals() = 37, outside 0 to 36"),
    (None, 6, "answers no symbol()"),
    ("USDT", 6, "calls itself USDT but is not the network's USDT"),
], ids=["no-decimals", "37-decimals", "no-symbol", "calls-itself-usdt"])
def test_a_contract_the_ledger_cannot_credit_is_refused_before_any_read(
        chain, node, ledger, symbol, decimals, said):
    contract = create_token(chain, symbol, decimals)
    to = random_address()
    head = chain.head()
    place(chain, [{"block": head - 25, "to": to, "units": 9, "contract": contract}])
    with pytest.raises(TokenRefused, match=re.escape(said)) as refused:
        DepositScan(ledger, node, [to], token=contract,
                    settings=ScanSettings(start=head - 30, **FAST))
    assert isinstance(refused.value, NotRetryable) and contract in str(refused.value)
    assert ledger.credits() == []
    assert Checkpoints(ledger.db).read(f"TRC20:{contract}") is None


def test_an_address_that_is_no_contract_is_refused_naming_it(node, ledger):
    nothing = random_address()
    with pytest.raises(TokenRefused, match=f"contract {nothing} answers no decimals"):
        DepositScan(ledger, node, [random_address()], token=nothing)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql",
                                                            marks=pytest.mark.postgres)])
def test_units_past_2_63_are_kept_exact_on_both_databases(request, tmp_path, backend):
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        url = sa.engine.make_url(request.getfixturevalue("postgres_url")).update_query_dict(
            {"options": f"-csearch_path={request.getfixturevalue('pg_schema')}"}
        ).render_as_string(hide_password=False)
    contract, to = random_address(), random_address()
    most = 2**256 - 1
    transfers = [ChainTransfer(tx_hash=f"{i:064x}", index=0, contract=contract,
                               from_address=random_address(), to_address=to, units=units,
                               block_number=9, block_timestamp_ms=1) for i, units in
                 enumerate([BIG, most])]
    with DepositLedger(url) as ledger:
        assert len(ledger.credit(transfers, token="BIG", source="scan", decimals=18)) == 2
        assert ledger.credit(transfers, token="BIG", source="scan", decimals=18) == []
        rows = {c.units: c.amount for c in ledger.credits()}
        assert rows[BIG] == "100"
        assert rows[most] == f"{str(most)[:-18]}.{str(most)[-18:]}"
        assert ledger.totals(contract) == {to: BIG + most}
        with pytest.raises(ValueError, match="decimals must be 0 to 36"):
            ledger.credit(transfers, token="BIG", source="scan", decimals=37)


def test_a_token_scan_killed_mid_run_and_restarted_credits_each_once(chain, tmp_path):
    """As the USDT drill (test_scan_drills.py), for an 18-decimal token: a kill mid-page
    leaves that page unread; the rerun reads it again and credits nothing twice."""
    token = create_token(chain, "WETH", 18)
    addresses = [random_address() for _ in range(3)]
    head = chain.head()
    first = head - 139
    placed = {(p["txid"], 0) for p in place(chain, [
        {"block": first + i * 4, "to": addresses[i % 3], "units": BIG + i, "contract": token}
        for i in range(30)])}
    Control(chain.sandbox).post("/faults", {"kind": "latency", "latency_ms": 60,
                                            "path": "/walletsolidity/gettransactioninfobyblocknum"})
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    scope = f"TRC20:{token}"
    settings = {"start": first, "page_blocks": 20, "max_concurrency": 1, **FAST}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen([sys.executable, str(WORKER), json.dumps({
        "node": chain.sandbox.root_url, "ledger": url, "addresses": addresses, "token": token,
        "settings": settings, "mode": "scan"})], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env)
    try:
        with DepositLedger(url) as ledger:
            checkpoints = Checkpoints(ledger.db)
            wait_until(lambda: (checkpoints.read(scope) or 0) >= first + 40, timeout=120,
                       message="two pages credited")
            process.kill()
            process.wait(10)
            killed_at = checkpoints.read(scope)
            before = [(c.tx_hash, c.log_index) for c in ledger.credits()]
    finally:
        if process.poll() is None:
            process.kill()
    assert killed_at is not None and first + 40 <= killed_at < head - 19  # mid-run
    assert set(before) < placed
    Control(chain.sandbox).call("DELETE", "/faults")
    with TronNodeClient(chain.sandbox.root_url) as node, DepositLedger(url) as ledger:
        report = DepositScan(ledger, node, addresses, token=token,
                             settings=ScanSettings(**settings)).run()
        assert report.first_block == killed_at + 1
        after = [(c.tx_hash, c.log_index) for c in ledger.credits()]
        assert len(after) == len(set(after)) == 30 and set(after) == placed
        assert sum(ledger.totals(token).values()) == sum(BIG + i for i in range(30))


def test_a_proven_callback_is_never_handed_on_as_another_tokens_credit_in_its_transaction(
        tmp_path, monkeypatch):
    """A callback says USDT into an address; the scan credited a TRC-20 of 18 decimals into
    that address in the same transaction. Before the handover kept to the callback's token,
    a proven sensor with ``min_amount`` 1000 handed that credit on (10^15 units passed the
    1000-USDT threshold in micro-units)."""
    from airflow_provider_tronenergy.callbacks.store import CallbackStore
    from airflow_provider_tronenergy.deposits import handover
    from support.callbacks import verified_transfer

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("TRONENERGY_DEPOSITS_DB", url)
    handover.forget_ledgers()
    store = CallbackStore(f"sqlite:///{tmp_path / 'callbacks.db'}")
    store.ensure_schema()
    to = random_address()
    said = verified_transfer(to, "2000", "USDT")
    store.record(said)
    stored = store.get_transfer(said.tx_hash)
    assert stored is not None
    with DepositLedger(url) as ledger:
        ledger.credit([ChainTransfer(tx_hash=said.tx_hash, index=1, contract=random_address(),
                                     from_address=random_address(), to_address=to,
                                     units=10**15, block_number=9, block_timestamp_ms=1)],
                      token="WETH", source="scan", decimals=18)
    try:
        judged = handover.Handover(handover.TransferFilter.of(to, None, "1000", None),
                                   proven=True).judge([stored])
        assert [(decision, payload) for _, decision, payload in judged] == [
            (handover.WAIT, None)]
    finally:
        handover.forget_ledgers()
        store.close()


def test_a_callback_proof_by_another_contract_than_the_networks_usdt_is_refused():
    """A ``USDT`` callback proven by another contract would credit that token as USDT, in 6
    decimals: refused when the prover is made, before anything is read."""
    from airflow_provider_tronenergy.deposits.proof import ProofSettings, Prover

    with TronNodeClient("http://127.0.0.1:9") as node:
        assert Prover(node, ProofSettings(contract=node.usdt_contract)).contract == \
            node.usdt_contract
        other = random_address()
        with pytest.raises(ValueError, match=f"ProofSettings.contract {other} is not"):
            Prover(node, ProofSettings(contract=other))
