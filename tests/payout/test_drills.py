"""Payout drills on the sandbox chain (issue 25's proof): 500 payouts each, real processes.

Each drill has its own funded sender and batch of 500 distinct recipients on one shared
sandbox, whose manual clock a ticker thread moves one block at a time (support.drills).
Workers are OS processes (support.payout_worker) that SIGKILL themselves at a named point;
a clean worker is then started until the batch is settled. Every drill ends with the same
count (``check_exactly_once``): on chain (``GET /sandbox/chain/transactions``) exactly one
successful transfer per payout and nothing that was not journaled first; in the journal
every payout confirmed with the chain's txID and receipt, and every earlier attempt
expired (never executed, and a solidified block past its expiration before the next
signature) or abandoned unsigned.
"""

from __future__ import annotations

import json
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

import pendulum
import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.payout.journal import Attempt, PayoutJournal, PayoutState
from airflow_provider_tronenergy.payout.rows import payouts
from airflow_provider_tronenergy.payout.send import PayoutSender, SendSettings
from airflow_provider_tronenergy.signer import LocalKeySigner
from support.chain import USDT, Chain, manual_chain
from support.drills import (
    Ticker,
    check_exactly_once,
    finish,
    funded_batch,
    run_worker,
    start_worker,
)
from support.sandbox import node_connection_json
from support.waiting import wait_until
from tronenergy_sandbox import SandboxServer

N = 500
LOGICAL = pendulum.datetime(2026, 3, 1, tz="UTC")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


@pytest.fixture(scope="module")
def sandbox(chain: Chain) -> SandboxServer:
    """The drills' sandbox, also the one support.dagrun's Airflow connections point at."""
    return chain.sandbox


@pytest.fixture
def ticker(chain: Chain, request: pytest.FixtureRequest) -> Iterator[Ticker]:
    """Blocks every 0.1 s of real time (3 s of the chain's): the chain runs 30 times faster
    (``@pytest.mark.parametrize("ticker", [period], indirect=True)`` for another pace)."""
    ticker = Ticker(chain, period=getattr(request, "param", 0.1))
    ticker.start()
    yield ticker
    ticker.stop()
    chain.control.clear_faults()


def states(batch) -> Counter[str]:
    journal = batch.journal()
    try:
        return Counter(a.state.value for a in journal.batch(batch.batch_id))
    finally:
        journal.close()


def offered(chain: Chain, batch) -> set[str]:
    """Every txid the chain took from the sender (packed or waiting for its block)."""
    return {t["txid"] for status in ("pending", "executed")  # pending first: none is missed
            for t in chain.transactions(owner=batch.sender, status=status)}  # while packed


def journaled(batch, state: PayoutState) -> set[str]:
    journal = batch.journal()
    try:
        return {a.txid for a in journal.batch(batch.batch_id) if a.state is state and a.txid}
    finally:
        journal.close()


def test_killed_after_journaling_before_broadcasting(chain, ticker, tmp_path):
    """SIGKILL once the second chunk is journaled, before any of it is broadcast: the next
    worker sends those same bytes and signs only the unclaimed rest."""
    batch = funded_batch(chain, tmp_path, "drill-journal", N)
    killed = run_worker(chain, batch, "worker-1", kill="after_journal", kill_at=2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # The first chunk (200) was journaled, broadcast and recorded; the second journaled only.
    assert states(batch) == Counter({"sent": 200, "signed": 200})
    assert offered(chain, batch) == journaled(batch, PayoutState.SENT)
    clean = run_worker(chain, batch, "worker-2")
    assert clean.returncode == 0, clean.stderr
    first = clean.summary["passes"][0]
    assert (first["rebroadcast"], first["wait"], first["signed"]) == (200, 200, 100)
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({1: N}) and count.dropped == []


def test_killed_after_broadcasting_before_recording(chain, ticker, tmp_path):
    """SIGKILL at the 250th acceptance, before the journal records it: the chain holds
    transactions the journal calls only signed; the next worker offers the same bytes again
    (the node answers DUP_TRANSACTION_ERROR, accepted) and signs nothing twice."""
    batch = funded_batch(chain, tmp_path, "drill-broadcast", N)
    killed = run_worker(chain, batch, "worker-1", kill="after_broadcast", kill_at=250)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert states(batch) == Counter({"sent": 200, "signed": 200})
    unrecorded = offered(chain, batch) - journaled(batch, PayoutState.SENT)
    # The chain took at least 50 of the second chunk that the journal never heard of.
    assert len(unrecorded) >= 50 and unrecorded <= journaled(batch, PayoutState.SIGNED)
    clean = run_worker(chain, batch, "worker-2")
    assert clean.returncode == 0, clean.stderr
    first = clean.summary["passes"][0]
    assert (first["rebroadcast"], first["accepted"], first["signed"]) == (200, 300, 100)
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({1: N}) and count.dropped == []


def test_killed_during_confirmation(chain, ticker, tmp_path):
    """SIGKILL after half the receipts of a watch step are recorded: the next worker only
    reads receipts (no signature, no broadcast)."""
    batch = funded_batch(chain, tmp_path, "drill-confirm", N)
    killed = run_worker(chain, batch, "worker-1", kill="during_confirm", kill_at=1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = states(batch)
    assert set(left) == {"confirmed", "sent"} and sum(left.values()) == N, left
    clean = run_worker(chain, batch, "worker-2")
    assert clean.returncode == 0, clean.stderr
    passes = clean.summary["passes"]
    assert sum(p["signed"] + p["broadcast"] for p in passes) == 0  # only receipts were read
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({1: N}) and count.dropped == []


def test_the_nodes_answer_lost_after_it_accepted(chain, ticker, tmp_path):
    """30 % of broadcasts are processed and their connection dropped (no retry in the
    client): every lost answer is followed up by the same bytes, never a new signature."""
    batch = funded_batch(chain, tmp_path, "drill-lost", N)
    chain.control.fault(kind="drop", path="/wallet/broadcasthex", probability="0.3")
    worker = run_worker(chain, batch, "worker-1", max_retries=0)
    assert worker.returncode == 0, worker.stderr
    dropped = sum(f["fired"] for f in chain.control.faults() if f["kind"] == "drop")
    first = worker.summary["passes"][0]
    assert first["signed"] == N and first["answers"] == N - first["accepted"] > 0
    assert dropped >= first["answers"]
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({1: N}) and count.dropped == []  # never signed again


@pytest.mark.parametrize("ticker", [0.3], indirect=True)  # 30 s to expire: 3 s of real time
def test_the_chain_paused_past_the_expiration_then_resumed(chain, ticker, tmp_path):
    """Paused while all 500 are accepted for the next block, past their 30 s expiration:
    the chain drops them all; each is signed anew once, after a solidified block passed
    its expiration (checked per payout against the ticker's log and the new reference)."""
    batch = funded_batch(chain, tmp_path, "drill-pause", N)
    chain.control.post("/chain/pause")
    try:
        worker = start_worker(chain, batch, "worker-1", expiration_s=30, chunk=50)
        wait_until(lambda: states(batch) == Counter({"sent": N}), 60, "every payout sent")
        ticker.jump(60)  # no block while paused: the chain's clock passes every expiration
    finally:
        chain.control.post("/chain/resume")
    done = finish(worker)
    assert done.returncode == 0, done.stderr
    count = check_exactly_once(chain, batch, ticker)
    # Every first attempt expired unpacked; its successor, signed once a solidified block
    # was past that expiration, went through (a fresh head per chunk: not expired on arrival).
    assert count.attempts == Counter({2: N}), count.attempts
    first_tries = set()
    journal = batch.journal()
    try:
        for attempt in journal.recent(batch_id=batch.batch_id, limit=10 * N):
            if attempt.attempt == 1:
                assert attempt.state is PayoutState.EXPIRED
                first_tries.add(attempt.txid)
    finally:
        journal.close()
    dropped = {t["txid"] for t in count.dropped}
    assert first_tries <= dropped
    assert {t["refusal"]["code"] for t in count.dropped} == {"TRANSACTION_EXPIRATION_ERROR"}


@pytest.mark.postgres
def test_two_workers_on_one_postgresql_journal(chain, ticker, tmp_path, postgres_url,
                                               pg_schema):
    """Two worker processes started together on one batch and one PostgreSQL journal:
    each payout claimed, signed and sent by exactly one of them; the other follows it."""
    batch = funded_batch(chain, tmp_path, "drill-two", N, journal_url=postgres_url,
                         schema=pg_schema, ids=True)
    go = tmp_path / "go"
    workers = [start_worker(chain, batch, f"worker-{n}", chunk=50, go_file=str(go),
                            ready_file=str(tmp_path / f"ready-{n}")) for n in (1, 2)]
    wait_until(lambda: all((tmp_path / f"ready-{n}").exists() for n in (1, 2)), 60,
               "both workers ready")
    go.touch()
    done = [finish(w) for w in workers]
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({1: N}) and count.dropped == []
    signed = [sum(p["signed"] for p in d.summary["passes"]) for d in done]
    assert sum(signed) == N and min(signed) > 0, signed  # both sent, each payout once


def test_a_failed_task_cleared_then_a_new_run_of_the_same_batch_in_airflow(
        chain, ticker, tmp_path, run_dag, monkeypatch):
    """Real Airflow (dag.test()): the node stops answering in the middle of the first run
    (the chain still takes what it is sent; every answer is lost), the task and its retry
    fail; the task cleared (dag.test() at the same logical date replaces the run, as a
    clear does) finishes the batch; a new run of the same batch sends nothing."""
    from payouts import DAGS

    batch = funded_batch(chain, tmp_path, "drill-dag", N, ids=True)
    # The ticker moves the chain 30 times faster than real time: the chain's clock is the
    # worker's here, so its blocks are not a node ahead of the worker.
    monkeypatch.setattr("airflow_provider_tronenergy.operators.payout._worker_clock",
                        chain.clock)
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", batch.journal_url)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": batch.key_hex}))
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", node_connection_json(
        chain.sandbox, max_retries=0))
    conf = {"payouts": batch.rows, "sender": batch.sender, "batch_id": batch.batch_id}

    def cut_the_node_once_sending_began() -> None:
        wait_until(lambda: sum(states(batch).values()) > 0, 300, "the first run journaling")
        chain.control.clear_faults()  # the sandbox fires the first matching fault only
        chain.control.fault(kind="drop", path="/wallet*")

    # Broadcasts slowed so that the cut lands in the middle of the batch, however loaded
    # the machine (500 at 16 side by side: some 6 s of sending after the first journaling).
    chain.control.fault(kind="latency", path="/wallet/broadcasthex", latency_ms=200)

    director = threading.Thread(target=cut_the_node_once_sending_began, daemon=True)
    director.start()
    first = run_dag(DAGS["te_payouts"], logical_date=LOGICAL, **conf)
    director.join(10)
    chain.control.clear_faults()
    assert (first["__run__"], *first["send"][:2]) == ("failed", "failed", 2), first
    left = states(batch)
    assert sum(left.values()) > 0 and left["confirmed"] < N, left
    cleared = run_dag(DAGS["te_payouts"], logical_date=LOGICAL, **conf)
    assert (cleared["__run__"], *cleared["send"][:2]) == ("success", "success", 1), cleared
    assert cleared["send"][2]["states"] == {"confirmed": N}
    sent = len(chain.transactions(owner=batch.sender))
    new_run = run_dag(DAGS["te_payouts"], **conf)
    assert new_run["__run_id__"] != cleared["__run_id__"]
    assert new_run["send"][2]["states"] == {"confirmed": N}
    assert len(chain.transactions(owner=batch.sender)) == sent == N
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({1: N}) and count.dropped == []


class RivalAfterSnapshot(PayoutJournal):
    """A worker's journal: right after its pass read the batch, ``rival`` runs a whole pass."""

    def __init__(self, url: str, rival: Callable[[], object]) -> None:
        super().__init__(url)
        self.rival, self.reads = rival, 0

    def latest(self, identities: Iterable[str]) -> dict[str, Attempt]:
        found = super().latest(identities)
        self.reads += 1
        if self.reads == 1:
            self.rival()
        return found


def test_a_worker_whose_snapshot_predates_another_workers_claims_signs_nothing(chain,
                                                                                tmp_path):
    """The race the two-worker drill found, made deterministic: worker B read the batch
    (nothing journaled), then worker A claimed, signed and sent every payout; B's claims
    must all lose. B used to read the journal again before claiming and claim the attempt
    after A's, signing a second transaction while A's could still execute."""
    batch = funded_batch(chain, tmp_path, "race", 20)
    rows = payouts(batch.rows, batch_id=batch.batch_id)
    node = TronNodeClient(chain.sandbox.root_url, usdt_contract=USDT, max_retries=0)
    signer = LocalKeySigner(batch.key_hex)
    settings = SendSettings(contract=USDT)
    journal_a = batch.journal()

    def worker_a() -> None:
        sent = PayoutSender(journal_a, node, signer, settings, scope="worker-a",
                            energy_fee_sun=100, clock=chain.clock).send(
            rows, sender=batch.sender, token="USDT", batch_id=batch.batch_id)
        assert sent.accepted == 20

    journal_b = RivalAfterSnapshot(batch.journal_url, worker_a)
    try:
        late = PayoutSender(journal_b, node, signer, settings, scope="worker-b",
                            energy_fee_sun=100, clock=chain.clock).send(
            rows, sender=batch.sender, token="USDT", batch_id=batch.batch_id)
        assert (late.signed, late.broadcast) == (0, 0)
        attempts = journal_a.recent(batch_id=batch.batch_id)
        assert sorted((a.attempt, a.claimed_by) for a in attempts) == [(1, "worker-a")] * 20
        assert offered(chain, batch) == {a.txid for a in attempts}
    finally:
        node.close()
        journal_a.close()
        journal_b.close()
