"""A paced node client against the sandbox's TronGrid-like limit (issue 45).

What the node saw is read at the sandbox (``GET /sandbox/rate-limit``: its requests and
429s per second), never assumed from what the clients meant to send.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.transactions import RefBlock, token_transfer
from airflow_provider_tronenergy.pace.store import PaceStore, SqlPace, pace_key
from support.chain import USDT, Chain
from support.control import Control
from support.sandbox import running_sandbox
from tronenergy_sandbox import SandboxServer

TESTS = Path(__file__).resolve().parents[1]
API_KEY = "node-key-9e8d7c6b-4444-4bd1-9a3e-feedfacecafe"
RATE = 15


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with running_sandbox() as server:
        yield server


@pytest.fixture
def control(sandbox: SandboxServer) -> Iterator[Control]:
    control = Control(sandbox)
    yield control
    control.clear_faults()
    control.call("DELETE", "/rate-limit")


def worker(sandbox: SandboxServer, store_url: str, prefix: str,
           reads: int) -> subprocess.Popen[str]:
    """A process reading the node through the shared pace (support.pace_worker)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(TESTS), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-m", "support.pace_worker", sandbox.root_url, API_KEY, store_url,
         prefix, str(RATE), str(reads), "6"], stdout=subprocess.PIPE, text=True, env=env)


def test_two_processes_keep_one_connections_rate_together(
        sandbox: SandboxServer, control: Control, pace_db: tuple[str, str],
        tmp_path: Path) -> None:
    """Two workers sharing one key and its pace: the sandbox, limiting the key to 15 a
    second as TronGrid does, answers no 429, and saw every read once. The same reads
    unpaced (one process, before) met its limit."""
    url, prefix = pace_db
    control.rate_limit(RATE)
    unpaced = TronNodeClient(sandbox.root_url, api_key=API_KEY, max_retries=0)
    from concurrent.futures import ThreadPoolExecutor

    def read(_: int) -> bool:
        try:
            unpaced.get_now_block()
            return True
        except NodeError:
            return False

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(read, range(40)))
    unpaced.close()
    assert control.node_counts()["limited"] > 0  # what a connection without a pace meets

    control.rate_limit(RATE)  # the counts start again
    processes = [worker(sandbox, url, prefix, 30) for _ in range(2)]
    outputs = [json.loads(p.communicate(timeout=120)[0]) for p in processes]
    assert [p.returncode for p in processes] == [0, 0]
    assert outputs == [{"errors": []}, {"errors": []}]
    counts = control.node_counts()
    assert counts["limited"] == 0 and counts["requests"] == 60, counts
    seconds = [s["second"] for s in counts["per_second"]]
    # bounded: no more than the rate in each second the requests spanned, one burst aside
    assert counts["requests"] <= RATE * (seconds[-1] - seconds[0] + 1) + RATE
    row = PaceStore(url, table_prefix=prefix).row(pace_key(sandbox.root_url, API_KEY))
    assert row is not None and row["taken"] == 60 and row["slowed"] == 0


def test_a_429_slows_every_sharer_and_the_read_is_sent_again(
        sandbox: SandboxServer, control: Control, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """One client's 429 (Retry-After: 2) moves the shared pace: its read is sent again
    after the pause and answered; another client of the key sends nothing before it. The
    key is in no log line."""
    caplog.set_level(logging.DEBUG)
    store_url = f"sqlite:///{tmp_path / 'journal.db'}"
    key = pace_key(sandbox.root_url, API_KEY)
    one = TronNodeClient(sandbox.root_url, api_key=API_KEY, max_retries=2,
                         pace=SqlPace(PaceStore(store_url), key, Decimal(RATE)))
    other = TronNodeClient(sandbox.root_url, api_key=API_KEY, max_retries=0,
                           pace=SqlPace(PaceStore(store_url), key, Decimal(RATE)))
    control.rate_limit(1000)  # counting only
    control.fault(kind="rate_limit", path="/wallet/getnowblock", retry_after=2, count=1)
    assert one.get_now_block().number > 0
    other.get_now_block()
    row = PaceStore(store_url).row(key)
    assert row is not None and row["slowed"] == 1 and row["taken"] == 3
    per_second = control.node_counts()["per_second"]
    assert sum(s["requests"] for s in per_second) == 3
    # after the 429, nothing from either client reached the node before the pause's end
    later = [s["second"] for s in per_second if s["second"] >= row["slowed_until_us"] // 10**6]
    assert sum(s["requests"] for s in per_second if s["second"] in later) == 2, per_second
    assert "Retry" in caplog.text and API_KEY not in caplog.text  # urllib3's resend logged
    one.close()
    other.close()


def signed_transfer(sandbox: SandboxServer, reader: TronNodeClient) -> dict[str, object]:
    """A USDT transfer from a funded key, signed as the payout sender signs it."""
    key = PrivateKey.random()
    owner = key.public_key.to_base58check_address()
    Chain(sandbox).control.wallet(owner, trx="100", usdt="10")
    head = reader.get_now_block()
    unsigned = token_transfer(
        owner=owner, to=PrivateKey.random().public_key.to_base58check_address(), units=1,
        contract=USDT, fee_limit_sun=30_000_000,
        ref=RefBlock(head.number, head.block_id, head.timestamp_ms),
        expiration_ms=head.timestamp_ms + 60_000, timestamp_ms=head.timestamp_ms)
    return unsigned.signed(key.sign_msg_hash(bytes.fromhex(unsigned.txid)).to_bytes())


def test_a_broadcast_answered_429_is_offered_again_and_taken_once(
        sandbox: SandboxServer, control: Control, tmp_path: Path) -> None:
    """A 429 proves the node did not take it (chain-facts): the same bytes, after the slot."""
    store_url = f"sqlite:///{tmp_path / 'journal.db'}"
    node = TronNodeClient(sandbox.root_url, api_key=API_KEY, max_retries=2, pace=SqlPace(
        PaceStore(store_url), pace_key(sandbox.root_url, API_KEY), Decimal(RATE)))
    signed = signed_transfer(sandbox, node)
    control.rate_limit(1000)  # counting only
    control.fault(kind="rate_limit", path="/wallet/broadcasthex", retry_after=1, count=1)
    answer = node.broadcast(signed)
    assert answer.accepted and control.node_counts()["requests"] == 2
    again = node.broadcast(signed)  # the chain holds it once: a second offer is a duplicate
    assert again.accepted and again.code == "DUP_TRANSACTION_ERROR", again
    node.close()


@pytest.mark.parametrize("paced", [True, False], ids=["paced", "unpaced"])
def test_a_broadcast_answered_503_is_not_sent_again(
        sandbox: SandboxServer, control: Control, tmp_path: Path, paced: bool) -> None:
    """A 503 after the node processed it: the outcome is unknown and stays so (no answer,
    for the payout room's journal); one request reached the node, not urllib3's four."""
    store_url = f"sqlite:///{tmp_path / 'journal.db'}"
    key = pace_key(sandbox.root_url, API_KEY)
    pace = SqlPace(PaceStore(store_url), key, Decimal(RATE)) if paced else None
    node = TronNodeClient(sandbox.root_url, api_key=API_KEY, max_retries=3, pace=pace)
    signed = signed_transfer(sandbox, node)
    control.rate_limit(1000)  # counting only
    control.fault(kind="error", status=503, after_processing=True,
                  path="/wallet/broadcasthex", count=1)
    with pytest.raises(NodeError) as info:
        node.broadcast(signed)
    assert info.value.status == 503 and API_KEY not in str(info.value)
    assert control.node_counts()["requests"] == 1
    if paced:
        row = PaceStore(store_url).row(key)
        assert row is not None and row["slowed"] == 1
    node.close()
