"""Drills with the scan in other processes, on the sandbox's chain over real HTTP.

- The scan killed (SIGKILL) mid-run, pages credited and a page in flight, then run again:
  every deposit credited exactly once, none skipped, the checkpoint at the end.
- A backfill (an address added after the checkpoint passed its registration) killed
  mid-run, then run again: it goes on from its last page, every deposit once.
- Callbacks and the scan racing on the same deposits, two worker processes on a PostgreSQL
  ledger (each crediting through both paths, in opposite orders): every deposit credited
  exactly once, the ledger's total the chain's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.scan.checkpoint import Checkpoints
from airflow_provider_tronenergy.deposits.scan.core import DepositScan, ScanSettings
from airflow_provider_tronenergy.node.client import TronNodeClient
from support.control import Control
from support.waiting import wait_until
from tronenergy_protocol.address import random_address

WORKER = Path(__file__).parents[1] / "support" / "scan_worker.py"
USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
SCOPE = f"USDT:{USDT}"


def deposits(chain, addresses, count, first, last):
    """``count`` deposits spread over blocks ``first`` to ``last``; their keys."""
    step = max(1, (last - first) // count)
    placed = Control(chain.sandbox).post("/chain/blocks/transfers", {"transfers": [
        {"block": first + i * step, "to": addresses[i % len(addresses)],
         "units": 1_000_000 + i} for i in range(count)]})["transactions"]
    return {(p["txid"], 0) for p in placed}


def worker(args: dict) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, str(WORKER), json.dumps(args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def keys(ledger):
    return [(c.tx_hash, c.log_index) for c in ledger.credits(limit=100_000)]


def test_the_scan_killed_mid_run_and_restarted_credits_each_once_and_skips_none(chain,
                                                                                tmp_path):
    addresses = [random_address() for _ in range(5)]
    head = chain.head()
    first, last = head - 330, head - 30
    placed = deposits(chain, addresses, 60, first, last)
    # Each block read takes 60 ms, one at a time: the run would last 18 s; killed in it.
    Control(chain.sandbox).post("/faults", {"kind": "latency", "latency_ms": 60,
                                            "path": "/walletsolidity/gettransactioninfobyblocknum"})
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    settings = {"start": first, "page_blocks": 20, "max_concurrency": 1,
                "max_requests_per_second": 1000}
    process = worker({"node": chain.sandbox.root_url, "ledger": url, "addresses": addresses,
                      "settings": settings, "mode": "scan"})
    try:
        with DepositLedger(url) as ledger:
            checkpoints = Checkpoints(ledger.db)
            wait_until(lambda: (checkpoints.read(SCOPE) or 0) >= first + 40, timeout=120,
                       message="two pages credited")
            process.kill()
            process.wait(10)
            killed_at = checkpoints.read(SCOPE)
            before = keys(ledger)
    finally:
        if process.poll() is None:
            process.kill()
    assert killed_at is not None and first + 40 <= killed_at < head - 19  # mid-run
    assert len(before) == len(set(before)) and set(before) < placed
    Control(chain.sandbox).call("DELETE", "/faults")
    with TronNodeClient(chain.sandbox.root_url) as node, DepositLedger(url) as ledger:
        report = DepositScan(ledger, node, addresses,
                             settings=ScanSettings(**settings)).run()
        assert report.first_block == killed_at + 1
        after = keys(ledger)
        assert len(after) == len(set(after)) == 60 and set(after) == placed
        assert len(report.credited) == 60 - len(before)
        assert Checkpoints(ledger.db).read(SCOPE) == report.tip


def test_a_backfill_killed_mid_run_goes_on_from_its_last_page(chain, tmp_path):
    watched, added = random_address(), random_address()
    head = chain.head()
    solid = head - 19
    registered = solid - 300
    placed = deposits(chain, [added], 30, registered, solid - 1)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    settings = {"page_blocks": 20, "max_concurrency": 1, "max_requests_per_second": 1000}
    with TronNodeClient(chain.sandbox.root_url) as node, DepositLedger(url) as ledger:
        DepositScan(ledger, node, [watched], settings=ScanSettings(**settings)).run()
        ledger.register([added], block=registered)
    Control(chain.sandbox).post("/faults", {"kind": "latency", "latency_ms": 60,
                                            "path": "/walletsolidity/gettransactioninfobyblocknum"})
    process = worker({"node": chain.sandbox.root_url, "ledger": url,
                      "addresses": [watched, added], "settings": settings, "mode": "scan"})
    try:
        with DepositLedger(url) as ledger:
            checkpoints = Checkpoints(ledger.db)

            def next_block() -> int:
                jobs = checkpoints.backfills(SCOPE, [added])
                return jobs[0].next_block if jobs else registered

            wait_until(lambda: next_block() >= registered + 40, timeout=120,
                       message="two pages of the backfill credited")
            process.kill()
            process.wait(10)
            killed_at = next_block()
            before = keys(ledger)
    finally:
        if process.poll() is None:
            process.kill()
    assert registered + 40 <= killed_at <= solid  # mid-backfill
    assert len(before) == len(set(before)) and set(before) < placed
    Control(chain.sandbox).call("DELETE", "/faults")
    with TronNodeClient(chain.sandbox.root_url) as node, DepositLedger(url) as ledger:
        report = DepositScan(ledger, node, [watched, added],
                             settings=ScanSettings(**settings)).run()
        assert report.backfill_blocks == solid - killed_at + 1
        assert report.backfill_pending == 0
        after = keys(ledger)
        assert len(after) == len(set(after)) == 30 and set(after) == placed
        assert len(report.credited) == 30 - len(before)


@pytest.mark.postgres
def test_callbacks_and_the_scan_racing_in_two_workers_credit_each_once(chain, postgres_url,
                                                                       pg_schema):
    url = sa.engine.make_url(postgres_url).update_query_dict(
        {"options": f"-csearch_path={pg_schema}"}).render_as_string(hide_password=False)
    addresses = [random_address() for _ in range(10)]
    head = chain.head()
    first, last = head - 120, head - 20
    placed = deposits(chain, addresses, 100, first, last)
    with DepositLedger(url) as ledger:
        ledger.totals("USDT")  # the tables made once, before the race
    common = {"node": chain.sandbox.root_url, "ledger": url, "addresses": addresses,
              "blocks": list(range(first, last + 1)),
              "settings": {"start": first, "page_blocks": 5, "max_concurrency": 2,
                           "max_requests_per_second": 1000}}
    workers = [worker({**common, "mode": "both", "order": order, "seed": seed, "name": order})
               for order, seed in (("scan", 1), ("callbacks", 2))]
    outputs = []
    deadline = time.monotonic() + 60
    for process in workers:
        out, err = process.communicate(timeout=max(1, deadline - time.monotonic()))
        assert process.returncode == 0, err[-2000:]
        outputs.append(json.loads(out.strip().splitlines()[-1])["credited"])
    claimed = [tuple(pair) for output in outputs for pair in output]
    assert len(claimed) == len(set(claimed)) == 100  # each credited by exactly one insert
    assert set(claimed) == placed
    with DepositLedger(url) as ledger, TronNodeClient(chain.sandbox.root_url) as node:
        rows = keys(ledger)
        assert len(rows) == 100 and set(rows) == placed
        sources = {c.source for c in ledger.credits(limit=1000)}
        assert sources <= {"scan", "callback"}
        assert sum(ledger.totals("USDT").values()) == sum(
            node.get_usdt_balance(a) for a in addresses)
