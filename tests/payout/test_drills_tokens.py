"""A batch mixing USDT, an 18-decimal token of the sandbox's own and TRX, its worker killed
at each step (after journaling a chunk, after a broadcast the journal did not record, while
recording receipts): a clean worker then settles it, and each payout is paid exactly once,
counted on chain in each token's own units."""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Iterator

import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.protocol.address import random_address
from support.chain import USDT, Chain, manual_chain
from support.drills import Batch, Ticker, histories, run_worker
from support.sandbox import create_token, set_token_units, token_units
from support.waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


@pytest.fixture
def ticker(chain: Chain) -> Iterator[Ticker]:
    ticker = Ticker(chain, period=0.1)
    ticker.start()
    yield ticker
    ticker.stop()


def mixed_batch(chain: Chain, workdir, batch_id: str) -> tuple[Batch, str]:
    """A sender with USDT, an 18-decimal token, TRX, energy and bandwidth, and 6 rows: two
    of each kind, each to a fresh address."""
    key, sender = chain.account(trx="1000", usdt="10")
    chain.control.post(f"/addresses/{sender}/energy", {"staked": 6 * 200_000})
    chain.control.post(f"/addresses/{sender}/bandwidth", {"staked": 6 * 1_000})
    e18 = create_token(chain.sandbox, symbol="E18", decimals=18)
    set_token_units(chain.sandbox, e18, sender, 10 ** 20)
    rows = []
    for n, token in enumerate(("USDT", e18, "TRX") * 2):
        amount = "1.000000000000000001" if token == e18 else "1.25"
        rows.append({"recipient": random_address(), "amount": amount, "token": token,
                     "payout_id": f"{batch_id}-{n}"})
    workdir.mkdir(parents=True, exist_ok=True)
    return Batch(key.hex(), sender, batch_id, rows, f"sqlite:///{workdir / 'payouts.db'}",
                 None, workdir), e18


@pytest.mark.parametrize("kill, kill_at", [("after_journal", 2), ("after_broadcast", 3),
                                           ("during_confirm", 1)])
def test_a_mixed_batch_killed_at_each_step_pays_each_payout_once(chain, ticker, tmp_path,
                                                                  kill, kill_at):
    batch, e18 = mixed_batch(chain, tmp_path, f"mixed-{kill}")
    killed = run_worker(chain, batch, "worker-1", kill=kill, kill_at=kill_at, chunk=2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    clean = run_worker(chain, batch, "worker-2", chunk=2)
    assert clean.returncode == 0, clean.stderr
    journal = batch.journal()
    try:
        attempts = histories(journal, batch.batch_id)
    finally:
        journal.close()
    assert {identity: [a.state.value for a in history][-1]
            for identity, history in attempts.items()} == {
        f"id:{row['payout_id']}": "confirmed" for row in batch.rows}
    assert Counter(len(history) for history in attempts.values()) == Counter({1: 6})
    with TronNodeClient(chain.sandbox.root_url) as node:
        def paid() -> list[int]:
            return [node.get_account(r["recipient"]).trx_sun if r["token"] == "TRX" else
                    token_units(chain.sandbox, USDT if r["token"] == "USDT" else e18,
                                r["recipient"]) for r in batch.rows]

        wait_until(lambda: paid() == [1_250_000, 10 ** 18 + 1, 1_250_000] * 2, timeout=30)
    executed = chain.transactions(owner=batch.sender, status="executed")
    assert len(executed) == 6, executed
