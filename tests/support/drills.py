"""Payout drills on the sandbox chain: worker processes, a moving manual clock, the count.

A drill's chain is a sandbox with a manual clock (support.chain.manual_chain) that a
:class:`Ticker` thread moves one block at a time, so worker processes see blocks come
while the test alone decides how fast, and can pause, jump and resume it. Each drill
has its own funded sender and batch (:class:`Batch`: USDT only, :func:`funded_batch`, or
mixing tokens, :func:`mixed_batch`), runs real worker processes (support.payout_worker)
and ends with :func:`check_exactly_once`, which counts on the chain
(``GET /sandbox/chain/transactions``) per recipient and token and reads every attempt in
the journal.
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import requests

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.payout.journal import Attempt, PayoutJournal, PayoutState
from support.chain import USDT, Chain
from support.sandbox import set_token_units
from tronenergy_protocol.address import random_address

TESTS = Path(__file__).resolve().parent.parent
SOLIDIFY_BLOCKS = 19
"""The sandbox's solidification lag (sandbox.chain.blocks)."""


class Ticker(threading.Thread):
    """Moves the chain's manual clock one block every ``period`` seconds of real time.

    After each move it reads the newest solidified block through the node and logs
    ``(wall time, its timestamp)``: at any later wall time the chain's solidified block
    was at least that new, which is how a drill checks when a new signature was allowed.
    """

    def __init__(self, chain: Chain, period: float = 0.1) -> None:
        super().__init__(daemon=True, name="drill-ticker")
        self.chain, self.period = chain, period
        self.node = TronNodeClient(chain.sandbox.root_url, usdt_contract=USDT, max_retries=0)
        self._halt = threading.Event()
        self._lock = threading.Lock()
        self._walls: list[float] = []
        self._solid_ms: list[int] = []

    def run(self) -> None:
        while not self._halt.wait(self.period):
            self.jump(self.chain.block_seconds)

    def jump(self, seconds: float) -> None:
        """Move the clock now (the ticker's steps and a test's jumps), then log."""
        with self._lock:
            self.chain.clock.advance(seconds)
            try:
                solid = self.node.get_solid_block().timestamp_ms
            except NodeError:  # a drill's fault on the node's paths: log nothing this time
                return
            self._walls.append(time.time())
            self._solid_ms.append(solid)

    def solid_ms_at(self, wall: float) -> int:
        """A lower bound of the solidified block's time at ``wall`` (0: unknown)."""
        with self._lock:
            index = bisect.bisect_right(self._walls, wall)
            return self._solid_ms[index - 1] if index else 0

    def stop(self) -> None:
        self._halt.set()
        self.join(10)
        self.node.close()


@dataclass
class Batch:
    """One drill's sender, its key (hex; to a worker through its environment, never argv,
    and never in a repr) and its rows."""

    key_hex: str = field(repr=False)
    sender: str
    batch_id: str
    rows: list[dict[str, Any]]
    journal_url: str
    schema: str | None = None
    workdir: Path = field(default_factory=Path)

    @property
    def recipients(self) -> list[str]:
        return [r["recipient"] for r in self.rows]

    @property
    def payouts(self) -> Counter[tuple[str, str, Decimal]]:
        """Each row as the chain lists its transfer: recipient, token, amount."""
        return Counter((r["recipient"], token_of(r), Decimal(r["amount"])) for r in self.rows)

    def journal(self) -> PayoutJournal:
        return PayoutJournal(self.journal_url, schema=self.schema)


def funded_batch(chain: Chain, workdir: Path, batch_id: str, count: int, *,
                 journal_url: str | None = None, schema: str | None = None,
                 ids: bool = False) -> Batch:
    """A sender with the USDT, TRX, staked energy and bandwidth for ``count`` first-time
    transfers, and ``count`` distinct recipients (fresh addresses)."""
    key, address = chain.account(trx="20000", usdt=str(count * 2))
    chain.control.post(f"/addresses/{address}/energy", {"staked": count * 140_000})
    chain.control.post(f"/addresses/{address}/bandwidth", {"staked": count * 1_000})
    rows = [{"recipient": random_address(), "amount": "1.25",
             **({"payout_id": f"{batch_id}-{n}"} if ids else {})} for n in range(count)]
    workdir.mkdir(parents=True, exist_ok=True)
    return Batch(key.hex(), address, batch_id, rows,
                 journal_url or f"sqlite:///{workdir / 'payouts.db'}", schema, workdir)


def token_of(row: dict[str, Any]) -> str:
    """A drill row's token as the journal and ``/sandbox/chain/transactions`` name it: TRX,
    USDT, or the contract of a token of the sandbox's own (a drill row names it so)."""
    return str(row.get("token") or "USDT")


@dataclass(frozen=True)
class Leg:
    """One token of a mixed batch: its name (``USDT``, ``TRX`` or a contract), its decimals
    and how many payouts pay it."""

    token: str
    decimals: int
    count: int

    def units(self, n: int) -> int:
        """Row ``n``'s amount in units: 123 tokens and ``n + 1`` of its smallest units, so
        every row's amount is its own and a wrong row or a lost digit shows on chain (with
        18 decimals, past 2^64 units)."""
        return 123 * int(10 ** self.decimals) + n + 1


def mixed_batch(chain: Chain, workdir: Path, batch_id: str, legs: Sequence[Leg], *,
                journal_url: str | None = None, schema: str | None = None,
                ids: bool = False) -> Batch:
    """A sender holding each leg's tokens (twice what its rows send: a pre-flight counts a
    transfer both spent and in flight while the journal catches up, and refuses a round
    short only for that, see ``still_in_flight``) and the TRX, staked energy and bandwidth
    for first-time transfers; rows interleaved by token
    (every chunk a worker signs mixes them). Row ``n`` of each leg goes to the ``n``-th
    recipient: one address receives one payout of every token, so the chain's count is per
    recipient *and* token."""
    count = max(leg.count for leg in legs)
    trx_sun = 2 * sum(sum(leg.units(n) for n in range(leg.count)) for leg in legs
                      if leg.token == "TRX")
    key, address = chain.account(trx=str(20000 + count * 2 + trx_sun // 10 ** 6 + 1))
    for leg in legs:
        if leg.token != "TRX":
            contract = USDT if leg.token == "USDT" else leg.token
            set_token_units(chain.sandbox, contract, address,
                            2 * sum(leg.units(n) for n in range(leg.count)))
    total = sum(leg.count for leg in legs)
    chain.control.post(f"/addresses/{address}/energy", {"staked": total * 140_000})
    chain.control.post(f"/addresses/{address}/bandwidth", {"staked": total * 1_000})
    recipients = [random_address() for _ in range(count)]
    rows = [{"recipient": recipients[n], "token": leg.token,
             "amount": format(Decimal(leg.units(n)).scaleb(-leg.decimals), "f"),
             **({"payout_id": f"{batch_id}-{leg.token[:8]}-{n}"} if ids else {})}
            for n in range(count) for leg in legs if n < leg.count]
    workdir.mkdir(parents=True, exist_ok=True)
    return Batch(key.hex(), address, batch_id, rows,
                 journal_url or f"sqlite:///{workdir / 'payouts.db'}", schema, workdir)


@dataclass
class Finished:
    """A worker process's end: its exit status, its summary (None if killed) and stderr."""

    returncode: int
    summary: dict[str, Any] | None
    stderr: str


def start_worker(chain: Chain, batch: Batch, scope: str, *, kill: str | None = None,
                 kill_at: int = 1, **spec: Any) -> subprocess.Popen[str]:
    """A worker process on ``batch`` (support.payout_worker); the key in its environment."""
    path = batch.workdir / f"{scope}.json"
    path.write_text(json.dumps({
        "journal": batch.journal_url, "schema": batch.schema, "node": chain.sandbox.root_url,
        "contract": USDT, "sender": batch.sender, "batch_id": batch.batch_id,
        "rows": batch.rows, "scope": scope, "expiration_s": 3600, **spec}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRONENERGY_DRILL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["TRONENERGY_DRILL_KEY"] = batch.key_hex
    if kill is not None:
        env["TRONENERGY_DRILL_KILL"], env["TRONENERGY_DRILL_KILL_AT"] = kill, str(kill_at)
    return subprocess.Popen([sys.executable, "-m", "support.payout_worker", str(path)],
                            env=env, cwd=str(TESTS), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str], timeout: float = 120) -> Finished:
    """Wait for a worker; its summary from the last line of its output."""
    out, err = process.communicate(timeout=timeout)
    lines = out.strip().splitlines()
    summary = json.loads(lines[-1]) if process.returncode == 0 and lines else None
    return Finished(process.returncode, summary, err[-4000:])


def run_worker(chain: Chain, batch: Batch, scope: str, **options: Any) -> Finished:
    return finish(start_worker(chain, batch, scope, **options))


def block_time_ms(chain: Chain, number: int) -> int:
    """A produced block's timestamp, from the node's ``getblockbynum``."""
    answer = requests.post(f"{chain.sandbox.root_url}/wallet/getblockbynum",
                           json={"num": number}, timeout=10).json()
    return int(answer["block_header"]["raw_data"]["timestamp"])


def histories(journal: PayoutJournal, batch_id: str) -> dict[str, list[Attempt]]:
    """Every attempt of the batch, per payout identity, oldest first."""
    grouped: dict[str, list[Attempt]] = defaultdict(list)
    for attempt in journal.recent(batch_id=batch_id, limit=1_000_000):
        grouped[attempt.identity].append(attempt)
    return {k: sorted(v, key=lambda a: a.attempt) for k, v in grouped.items()}


@dataclass(frozen=True)
class Count:
    """What a drill ended with: attempts per payout, and what the chain holds."""

    attempts: Counter[int]
    """How many payouts needed 1, 2, ... attempts."""
    executed: int
    dropped: list[dict[str, Any]]
    """The sender's transactions the chain accepted and then dropped (expired unpacked)."""
    per_token: Counter[str] = field(default_factory=Counter)
    """Successful transfers on chain per token (TRX, USDT or a contract)."""


def receipt_result(tx: dict[str, Any]) -> str | None:
    """A listed transaction's outcome: a contract call's ``receipt.result``; a TRX transfer
    has none (java-tron's receipt of a ``TransferContract``) and executed means SUCCESS."""
    result = tx["receipt"].get("receipt", {}).get("result")
    return "SUCCESS" if result is None and tx["token"] == "TRX" else result


def paid_twice(batch: Batch, executed: Sequence[dict[str, Any]]) -> str:
    """What the chain holds beyond the batch's rows, or short of them, per token: the
    message a failing count shows (the recipient, token, amount and txIDs)."""
    wanted = batch.payouts
    got = Counter((t["to"], t["token"], Decimal(t["amount"])) for t in executed)
    extra, missing = got - wanted, wanted - got
    txids = defaultdict(list)
    for t in executed:
        txids[(t["to"], t["token"], Decimal(t["amount"]))].append(t["txid"])
    lines = [f"paid {got[k]}x (wanted {wanted[k]}): {k[2]} {k[1]} to {k[0]} {txids[k]}"
             for k in extra] + [f"not paid: {k[2]} {k[1]} to {k[0]}" for k in missing]
    return "\n".join(lines[:20])


def check_exactly_once(chain: Chain, batch: Batch, ticker: Ticker) -> Count:
    """The drill's verdict: exactly one successful transfer per payout, none lost, and
    never a second signature while an earlier one could still execute."""
    executed = chain.transactions(owner=batch.sender)
    dropped = chain.transactions(owner=batch.sender, status="dropped")
    pending = chain.transactions(owner=batch.sender, status="pending")
    assert pending == [], f"{len(pending)} transactions still pending on chain"
    results = Counter(receipt_result(t) for t in executed)
    assert results == Counter({"SUCCESS": len(executed)}), results
    # Exactly one transfer per row: its recipient, its token, its amount in its decimals.
    assert Counter((t["to"], t["token"], Decimal(t["amount"])) for t in executed) \
        == batch.payouts, paid_twice(batch, executed)
    on_chain = {(t["to"], t["token"]): t for t in executed}
    with_index = {(r["recipient"], token_of(r)): n for n, r in enumerate(batch.rows)}
    journal = batch.journal()
    try:
        every = histories(journal, batch.batch_id)
    finally:
        journal.close()
    assert len(every) == len(batch.rows), f"{len(batch.rows) - len(every)} payouts lost"
    journaled = {a.txid for h in every.values() for a in h if a.txid}
    assert {t["txid"] for t in executed} <= journaled, "a transaction reached the chain unjournaled"
    assert {t["txid"] for t in dropped} <= journaled
    block_times: dict[int, int] = {}
    for identity, history in every.items():
        newest = history[-1]
        assert newest.state is PayoutState.CONFIRMED, (identity, newest.to_dict())
        assert with_index[(newest.recipient, newest.token)] == newest.row
        tx = on_chain[(newest.recipient, newest.token)]
        assert (newest.txid, newest.block_number) == (tx["txid"], tx["block_number"])
        assert newest.receipt is not None and newest.receipt["result"] == "SUCCESS"
        for earlier, later in itertools.pairwise(history):
            assert earlier.state in (PayoutState.EXPIRED, PayoutState.ABANDONED), (
                identity, [a.to_dict() for a in history])
            if earlier.state is PayoutState.ABANDONED:
                assert earlier.txid is None  # a claim that never journaled never left
                continue
            assert earlier.txid not in {t["txid"] for t in executed}
            assert earlier.expiration_ms is not None and later.ref_block is not None
            # The chain's solidified block when ``later`` was claimed: at least the one the
            # ticker had logged by then, and at least 19 blocks below ``later``'s own head.
            ref = later.ref_block - SOLIDIFY_BLOCKS
            if ref not in block_times:
                block_times[ref] = block_time_ms(chain, ref)
            solid_ms = max(ticker.solid_ms_at(later.created_at), block_times[ref])
            assert solid_ms > earlier.expiration_ms, (
                f"{identity}: attempt {later.attempt} signed while attempt {earlier.attempt} "
                f"could still execute (solid {solid_ms} <= expiration {earlier.expiration_ms})")
    return Count(Counter(len(h) for h in every.values()), len(executed), dropped,
                 Counter(t["token"] for t in executed))
