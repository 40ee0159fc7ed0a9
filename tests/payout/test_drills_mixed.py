"""Payout drills on batches mixing tokens (issue 47's proof): killed at each step, each
payout paid once.

A mixed batch pays USDT, a TRC-20 token of the sandbox's own with 18 decimals (its own
energy figures and dynamic-energy factor) and TRX (a ``TransferContract`` creating the
recipient's account), 60 payouts each, rows interleaved so every chunk a worker signs
mixes them, and one recipient per row number receiving each token. The workers clear each
round with the operator's pre-flight and, in the kill drills, confirm on solidified blocks
as the operator does by default.
As in tests/payout/test_drills.py (the 500-payout USDT drills, whose harness this shares:
support.drills, support.payout_worker), a worker process SIGKILLs itself at a named point,
a clean worker settles the batch, and ``check_exactly_once`` counts on chain
(``GET /sandbox/chain/transactions``, a token of the sandbox's own named by its contract,
amounts in its decimals) exactly one successful transfer per row: its recipient, token and
amount. One module-scoped sandbox serves every drill; each has its own sender and batch.
"""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal

import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.payout.journal import PayoutState
from support.chain import USDT, Chain, manual_chain
from support.drills import (
    Batch,
    Leg,
    Ticker,
    check_exactly_once,
    finish,
    mixed_batch,
    run_worker,
    start_worker,
)
from support.sandbox import create_token, set_token_units
from support.waiting import wait_until
from tronenergy_protocol.address import random_address

N = 60
"""Payouts per token."""
CHUNK = 60
"""Rows a worker signs per chunk: three chunks of 180, each 20 rows of each token."""
OPERATOR = {"chunk": CHUNK, "preflight": True, "solidified": True}
"""A worker as the operator runs by default: its pre-flight clears each round, and a
receipt counts once a solidified block holds it."""
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


@pytest.fixture(scope="module")
def legs(chain: Chain) -> tuple[Leg, ...]:
    """USDT, an 18-decimal token whose transfers cost other energy than USDT's, and TRX."""
    e18 = create_token(chain.sandbox, symbol="E18", decimals=18, holder_energy=20_000,
                       new_holder_energy=45_000, energy_factor=5_000)
    return Leg("USDT", 6, N), Leg(e18, 18, N), Leg("TRX", 6, N)


@pytest.fixture
def ticker(chain: Chain, request: pytest.FixtureRequest) -> Iterator[Ticker]:
    """A block every 0.1 s of real time (``indirect`` parametrization: another period)."""
    ticker = Ticker(chain, period=getattr(request, "param", 0.1))
    ticker.start()
    yield ticker
    ticker.stop()
    chain.control.clear_faults()


def states(batch: Batch) -> Counter[str]:
    journal = batch.journal()
    try:
        return Counter(a.state.value for a in journal.batch(batch.batch_id))
    finally:
        journal.close()


def journaled(batch: Batch, state: PayoutState) -> set[str]:
    journal = batch.journal()
    try:
        return {a.txid for a in journal.batch(batch.batch_id) if a.state is state and a.txid}
    finally:
        journal.close()


def offered(chain: Chain, batch: Batch) -> set[str]:
    """Every txid the chain took from the sender (pending first: none missed while packed)."""
    return {t["txid"] for status in ("pending", "executed")
            for t in chain.transactions(owner=batch.sender, status=status)}


@dataclass(frozen=True)
class KillPoint:
    """Where the first worker dies, what the journal holds then, what the clean worker's
    first pass does, and how many attempts each payout took."""

    point: str
    at: int
    left: Counter[str] | None
    """The journal's states once killed (None: only their total is known)."""
    first_pass: dict[str, int]
    attempts: Counter[int]


ALL = 3 * N
KILLS = [
    # The second chunk's claims committed, nothing signed: once their lease is past, the
    # clean worker abandons them (never signed) and signs a second attempt for each.
    KillPoint("after_claim", 2, Counter({"sent": CHUNK, "signing": CHUNK}), {},
              Counter({1: ALL - CHUNK, 2: CHUNK})),
    # The second chunk journaled, none of it broadcast: the same bytes are sent.
    KillPoint("after_journal", 2, Counter({"sent": CHUNK, "signed": CHUNK}),
              {"rebroadcast": CHUNK, "wait": CHUNK, "signed": ALL - 2 * CHUNK},
              Counter({1: ALL})),
    # Killed at the 70th acceptance (10 into the second chunk) before the journal heard.
    KillPoint("after_broadcast", CHUNK + 10, Counter({"sent": CHUNK, "signed": CHUNK}),
              {"rebroadcast": CHUNK, "signed": ALL - 2 * CHUNK}, Counter({1: ALL})),
    # Half of a watch step's receipts recorded: the clean worker only reads receipts.
    KillPoint("during_confirm", 1, None, {"signed": 0, "broadcast": 0}, Counter({1: ALL})),
]


@pytest.mark.parametrize("kill", KILLS, ids=[k.point for k in KILLS])
def test_a_mixed_batch_killed_at_each_step_pays_each_payout_once(chain, legs, ticker,
                                                                 tmp_path, kill):
    batch = mixed_batch(chain, tmp_path, f"mixed-{kill.point}", legs)
    killed = run_worker(chain, batch, "worker-1", kill=kill.point, kill_at=kill.at,
                        **OPERATOR)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = states(batch)
    if kill.left is not None:
        assert left == kill.left, left
    else:
        assert set(left) == {"confirmed", "sent"} and sum(left.values()) == ALL, left
    unrecorded = offered(chain, batch) - journaled(batch, PayoutState.SENT)
    if kill.point == "after_broadcast":  # the chain took some the journal calls only signed
        assert unrecorded and unrecorded <= journaled(batch, PayoutState.SIGNED)
    else:
        assert unrecorded <= journaled(batch, PayoutState.CONFIRMED)
    clean = run_worker(chain, batch, "worker-2", lease_s=1, **OPERATOR)
    assert clean.returncode == 0, clean.stderr
    first = clean.summary["passes"][0]
    assert {k: first.get(k, 0) for k in kill.first_pass} == kill.first_pass, clean.summary
    assert clean.summary["in_flight_waits"] == []  # every round cleared by the pre-flight
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == kill.attempts and count.dropped == []
    assert count.per_token == Counter({leg.token: leg.count for leg in legs})


def test_a_mixed_batch_whose_node_answers_are_lost(chain, legs, ticker, tmp_path):
    """30 % of broadcasts processed and their answer dropped: each token's lost answers
    are followed up with the same bytes, never a new signature."""
    batch = mixed_batch(chain, tmp_path, "mixed-lost", legs)
    chain.control.fault(kind="drop", path="/wallet/broadcasthex", probability="0.3")
    worker = run_worker(chain, batch, "worker-1", max_retries=0, **OPERATOR)
    assert worker.returncode == 0, worker.stderr
    signed = sum(p["signed"] for p in worker.summary["passes"])
    lost = sum(p["answers"] for p in worker.summary["passes"])
    assert signed == ALL and lost > 0
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({1: ALL}) and count.dropped == []


@pytest.mark.parametrize("ticker", [0.3], indirect=True)  # 30 s to expire: 3 s of real time
def test_a_mixed_batch_on_a_chain_paused_past_its_expiration_killed_once_judged(
        chain, legs, ticker, tmp_path):
    """Paused while every transfer waits for the next block, past their 30 s expiration:
    the chain drops them all. The worker dies right after writing its first verdict
    (expired), before signing anything anew; a clean worker signs each payout, of either
    token, anew once, after a solidified block passed the first attempt's expiration."""
    batch = mixed_batch(chain, tmp_path, "mixed-pause", legs)
    chain.control.post("/chain/pause")
    try:
        worker = start_worker(chain, batch, "worker-1", expiration_s=30, chunk=CHUNK,
                              preflight=True, kill="after_expire")
        wait_until(lambda: states(batch) == Counter({"sent": ALL}), 60, "every payout sent")
        ticker.jump(60)  # no block while paused: the chain's clock passes every expiration
    finally:
        chain.control.post("/chain/resume")
    killed = finish(worker)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = states(batch)
    assert left["expired"] > 0 and set(left) <= {"expired", "sent"}, left
    clean = run_worker(chain, batch, "worker-2", expiration_s=30, chunk=CHUNK,
                       preflight=True)
    assert clean.returncode == 0, clean.stderr
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({2: ALL}), count.attempts
    assert Counter(t["token"] for t in count.dropped) == count.per_token
    assert {t["refusal"]["code"] for t in count.dropped} == {"TRANSACTION_EXPIRATION_ERROR"}


@pytest.mark.postgres
def test_two_workers_on_a_mixed_batch_and_one_postgresql_journal(chain, legs, ticker,
                                                                 tmp_path, postgres_url,
                                                                 pg_schema):
    """Two workers started together on one mixed batch: each payout claimed, signed and
    sent by exactly one of them."""
    batch = mixed_batch(chain, tmp_path, "mixed-two", legs, journal_url=postgres_url,
                        schema=pg_schema, ids=True)
    go = tmp_path / "go"
    workers = [start_worker(chain, batch, f"worker-{n}", chunk=20, go_file=str(go),
                            preflight=True,
                            ready_file=str(tmp_path / f"ready-{n}")) for n in (1, 2)]
    wait_until(lambda: all((tmp_path / f"ready-{n}").exists() for n in (1, 2)), 60,
               "both workers ready")
    go.touch()
    done = [finish(w) for w in workers]
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    count = check_exactly_once(chain, batch, ticker)
    assert count.attempts == Counter({1: ALL}) and count.dropped == []
    signed = [sum(p["signed"] for p in d.summary["passes"]) for d in done]
    assert sum(signed) == ALL, signed


def test_the_count_names_a_payout_paid_twice_per_token(chain, legs, ticker, tmp_path):
    """The count can fail: a second worker on an empty journal pays a small mixed batch
    again, and the verdict names each row paid twice, with its token and amount."""
    small = tuple(Leg(leg.token, leg.decimals, 3) for leg in legs)
    batch = mixed_batch(chain, tmp_path, "mixed-twice", small)
    for leg in small:  # the sender holds enough to pay every row twice
        if leg.token != "TRX":
            set_token_units(chain.sandbox, USDT if leg.token == "USDT" else leg.token,
                            batch.sender, 10_000 * 10 ** leg.decimals)
    assert run_worker(chain, batch, "worker-1").returncode == 0
    amnesiac = replace(batch, journal_url=f"sqlite:///{tmp_path / 'empty.db'}")
    assert run_worker(chain, amnesiac, "worker-2").returncode == 0
    with pytest.raises(AssertionError) as failed:
        check_exactly_once(chain, batch, ticker)
    message = str(failed.value)
    for leg in small:
        amount = Decimal(leg.units(0)).scaleb(-leg.decimals)
        assert f"paid 2x (wanted 1): {amount} {leg.token} to {batch.rows[0]['recipient']}" \
            in message, message


def test_a_trx_batch_to_accounts_and_new_ones_pays_each_once_at_the_preflights_fees(
        chain, ticker, tmp_path):
    """TRX to 20 existing accounts and 20 new ones (interleaved), from a sender with no
    staked bandwidth: exactly one transfer each, and the pre-flight's figures (the plan
    of the round that signed them) are the chain's charges to the sun: each new account's
    ``getCreateNewAccountFeeInSystemContract`` and ``getCreateAccountFee``, the bytes its
    free bandwidth covered and those burned, and what left the sender's balance."""
    existing = [chain.control.wallet(trx="1") for _ in range(20)]
    new = [random_address() for _ in range(20)]
    key, sender = chain.account(trx="100")
    recipients = [r for pair in zip(existing, new, strict=True) for r in pair]
    rows = [{"recipient": r, "token": "TRX", "payout_id": f"trx-batch-{n}",
             "amount": format(Decimal(10 ** 6 + n + 1).scaleb(-6), "f")}  # equal byte sizes
            for n, r in enumerate(recipients)]
    batch = Batch(key.hex(), sender, "trx-batch", rows,
                  f"sqlite:///{tmp_path / 'payouts.db'}", None, tmp_path)
    with TronNodeClient(chain.sandbox.root_url) as node:
        fees = node.get_trx_fees()
        before = node.get_account(sender).trx_sun
        worker = run_worker(chain, batch, "worker-1", preflight=True)
        assert worker.returncode == 0, worker.stderr
        count = check_exactly_once(chain, batch, ticker)
        spent = before - node.get_account(sender).trx_sun
        assert [node.get_account(r).trx_sun for r in recipients] == [
            int(Decimal(row["amount"]) * 10 ** 6) + (10 ** 6 if r in existing else 0)
            for r, row in zip(recipients, rows, strict=True)]
    assert count.attempts == Counter({1: 40}) and count.per_token == Counter({"TRX": 40})
    [plan] = [c["trx_payouts"] for c in worker.summary["cleared"] if c["to_sign"]]
    executed = chain.transactions(owner=sender)
    fee = {t["to"]: int(t["receipt"].get("fee", 0)) for t in executed}
    net_fee = {t["to"]: int(t["receipt"]["receipt"].get("net_fee", 0)) for t in executed}
    net_usage = {t["to"]: int(t["receipt"]["receipt"].get("net_usage", 0)) for t in executed}
    creation = fees.create_new_account_fee_in_system_contract + fees.create_account_fee
    assert [fee[r] for r in new] == [creation] * 20  # no stake: the creation burned, each
    assert (plan["accounts_created"], plan["account_fee_sun"]) == (
        20, sum(fee[r] - net_fee[r] for r in recipients))
    assert plan["bandwidth_fee_sun"] == sum(net_fee.values())
    assert plan["free_bandwidth"] + plan["staked_bandwidth"] == sum(net_usage.values())
    assert plan["staked_bandwidth"] == 0 and plan["free_bandwidth"] > 0
    assert plan["fee_sun"] == sum(fee.values()) and spent == plan["trx_needed_sun"]
