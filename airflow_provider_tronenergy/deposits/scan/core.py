"""The deposit scan: every transfer of the token into the deposit addresses, callback or not.

Callbacks get lost (a receiver down longer than the service's three retries, a proxy
misrouting, a service that skips one). The scan follows the chain itself from a
checkpoint (:mod:`.checkpoint`) up to the block it may trust (the solidified head, or the
head less ``confirmations``), reads each block whole (one ``gettransactioninfobyblocknum``
per block for a TRC-20 token, one ``getblockbylimitnext`` per ``blocks_per_range`` blocks
for TRX: docs/decisions.md, "The deposit scan reads blocks"), in parallel within a request
budget, and credits what it finds through the ledger (``source="scan"``), keyed by
``(tx_hash, log index)``: a deposit the callback path credited first is not credited again,
and the other way round.

Pages of ``page_blocks`` blocks are credited in block order, each page's credits and the
checkpoint's advance in one transaction: a scan killed mid-page leaves the page unread,
and the next run reads it again. A run reads at most ``max_blocks_per_run`` blocks (the
rest waits for the next run); a first run starts at ``start`` (a block number, or
``"solid"``: the head it may trust now; never the chain's genesis by default).

A node behind a load balancer may answer from a backend that lags: java-tron answers
``gettransactioninfobyblocknum`` with ``[]`` for a block it has not got, exactly as for a
block without transactions (``Wallet.getTransactionInfoByBlockNum``: no receipts stored,
``getBlockByNum`` throws ``ItemNotFoundException``, caught and logged, and the empty list is
printed; ``framework/src/main/java/org/tron/core/Wallet.java`` and
``services/http/GetTransactionInfoByBlockNumServlet.java``, java-tron at
``1e35f79a165424bbae319799d9aca92948b8f5c2``). So a page's ``[]`` blocks are checked with
one ``getblockbylimitnext`` over their span (at most 100 blocks a request): each must be
there and hold no transaction. A block missing, or one with transactions, means the
backend lagged: the page is not credited, the checkpoint stays before it, and the next
round reads it again (logged). Blocks with transactions, the normal case on mainnet, cost
nothing more; a page with empty blocks one request more.

The checkpoint is per token, not per address: a block is judged once, against the
addresses the run was given. Where an address was registered through the provider
(:mod:`..registrations`), a first run starts at the earliest registration block of the
addresses it watches when that is before ``start``, and an address given to the scan
after the checkpoint passed its registration block is read back to that block once: a
backfill of that address alone, paged and checkpointed like the scan
(:mod:`.checkpoint`), within the same request budget and at most ``max_blocks_per_run``
blocks a run. An address registered elsewhere is not looked for in blocks already passed;
:meth:`DepositScan.rescan` reads a given range again on purpose, leaving the checkpoint
where it is.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from airflow_provider_tronenergy.deposits.scan import backfill
from airflow_provider_tronenergy.deposits.scan.budget import ScanBudget
from airflow_provider_tronenergy.deposits.scan.checkpoint import Checkpoints
from airflow_provider_tronenergy.deposits.scan.settings import (
    SOLID,
    ScanSettings,
    ScanSettingsError,
    checked_addresses,
    checked_token,
)
from airflow_provider_tronenergy.deposits.scan.tokens import (
    USDT,
    ScanToken,
    resolve,
)
from airflow_provider_tronenergy.node.blocks import MAX_BLOCK_RANGE
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.transfers import TRX, ChainTransfer
from tronenergy_protocol.numbers import units_text

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from airflow_provider_tronenergy.deposits.ledger import DepositLedger
    from airflow_provider_tronenergy.node.client import TronNodeClient

log = logging.getLogger(__name__)
TOKENS: Final = (USDT, TRX)
"""The tokens a scan names by name; any other by its contract's address (:mod:`.tokens`)."""
REPORTED: Final = 100
"""Credited transfers a report lists (its counts and sums cover them all)."""


class LaggingNode(NodeError):
    """A block read answered ``[]`` for a block the chain holds transactions in, or that
    the node has not got: the scan holds its checkpoint and reads it again next round."""


@dataclass(frozen=True)
class ScanReport:
    """What one run read and credited (JSON-safe through :meth:`to_dict`)."""

    token: str
    first_block: int | None
    last_block: int | None
    tip: int
    requests: int
    found: int
    credited: tuple[ChainTransfer, ...] = field(default=())
    backfill_blocks: int = 0
    """Blocks read again for addresses added after the checkpoint (their backfills)."""
    backfill_pending: int = 0
    """Addresses whose backfill the next run goes on with."""
    contract: str | None = None
    """The token's contract (None: TRX): a credit's identity, whatever its symbol."""
    decimals: int = 6

    @property
    def key(self) -> str:
        """What the task's result lists it under: ``TRX``, ``USDT``, else the contract."""
        return self.token if self.contract is None or self.token == USDT else self.contract

    @property
    def blocks(self) -> int:
        if self.first_block is None or self.last_block is None:
            return 0
        return self.last_block - self.first_block + 1

    @property
    def behind(self) -> int:
        """Blocks it may trust but left for the next run."""
        return max(0, self.tip - (self.last_block or self.tip))

    def to_dict(self) -> dict[str, Any]:
        return {"token": self.token, "contract": self.contract, "decimals": self.decimals,
                "first_block": self.first_block,
                "last_block": self.last_block, "tip": self.tip, "blocks": self.blocks,
                "behind": self.behind, "requests": self.requests, "found": self.found,
                "credited_count": len(self.credited),
                "credited_units": str(sum(t.units for t in self.credited)),
                "credited_amount": units_text(sum(t.units for t in self.credited),
                                               self.decimals),
                "backfill_blocks": self.backfill_blocks,
                "backfill_pending": self.backfill_pending,
                "credited": [t.to_dict() for t in self.credited[:REPORTED]]}


class DepositScan:
    """``DepositScan(ledger, node, addresses, token="USDT").run()``: credit what the chain holds.

    ``node`` is a :class:`~airflow_provider_tronenergy.node.client.TronNodeClient` (its
    ``usdt_contract`` is the token scanned for ``USDT``). ``token`` is ``TRX``, ``USDT``, a
    name of the connection's ``tokens`` extra, a TRC-20 contract's address, or a
    :class:`~.tokens.ScanToken` resolved already (once per task try); a name or address is
    resolved here, its decimals and symbol read from the contract (:mod:`.tokens`).
    Addresses, token and settings are checked here, before any block is read.
    """

    def __init__(self, ledger: DepositLedger, node: TronNodeClient,
                 addresses: Iterable[str] | str, *, token: str | ScanToken = USDT,
                 settings: ScanSettings | None = None, log: Any = log) -> None:
        self.addresses = checked_addresses(addresses)
        self.settings = settings or ScanSettings()
        self.ledger, self.node, self.log = ledger, node, log
        self.kind = token if isinstance(token, ScanToken) else resolve(node,
                                                                       checked_token(token))
        self.token, self.contract = self.kind.symbol, self.kind.contract
        self.scope = self.kind.scope
        self.budget = ScanBudget(self.settings.max_requests_per_second)
        self._checkpoints: Checkpoints | None = None

    @property
    def checkpoints(self) -> Checkpoints:
        if self._checkpoints is None:
            self._checkpoints = Checkpoints(self.ledger.db)
        return self._checkpoints

    def checkpoint(self) -> int | None:
        """The last block credited for this token; None before the first run."""
        return self.checkpoints.read(self.scope)

    def tip(self) -> int:
        """The newest block it may scan: the solidified head, or the head less N."""
        self.budget.slot()
        if self.settings.confirmations is None:
            return self.node.get_solid_block().number
        return self.node.get_now_block().number - self.settings.confirmations

    def run(self, *, credited_by: str | None = None, tip: int | None = None) -> ScanReport:
        """Read from the checkpoint up to the tip (``max_blocks_per_run`` at most), credit;
        then the backfills of addresses added late (as many blocks again, at most)."""
        tip = self.tip() if tip is None else tip
        registered = backfill.registered_blocks(self, tip)
        last = self.checkpoint()
        if last is None:
            first = tip if self.settings.start == SOLID else int(self.settings.start)
            earliest = min((b for b in registered.values() if b is not None), default=None)
            if earliest is not None and earliest < first:
                self.log.info("deposit scan %s: the earliest registration of its addresses, "
                              "block %d, is before block %d (start %r)", self.scope,
                              earliest, first, self.settings.start)
                first = earliest
            last = self.checkpoints.start_at(self.scope, first)
            self.log.info("deposit scan %s: first run, starting at block %d", self.scope,
                          last + 1)
        if registered and self.checkpoints.plan_backfills(self.scope, registered, last):
            self.log.info("deposit scan %s: addresses registered before block %d planned "
                          "for a backfill", self.scope, last + 1)
        end = min(tip, last + self.settings.max_blocks_per_run)
        report = self.scan(last + 1, end, tip, credited_by, self._advance, self.addresses)
        back = backfill.backfill(self, tip, credited_by)
        if back is None:
            return report
        return replace(report, requests=self.budget.used, found=report.found + back.found,
                       credited=report.credited + back.credited,
                       backfill_blocks=back.blocks, backfill_pending=back.pending)

    def _advance(self, conn: Connection, last_block: int) -> None:
        self.checkpoints.advance(conn, self.scope, last_block)

    def timestamp(self, number: int) -> int:
        """Block ``number``'s timestamp (ms), read by number."""
        self.budget.slot()
        body = self.node.get_block(number, solidified=self.settings.confirmations is None)
        if body is None:
            raise LaggingNode(f"the node has not got block {number}, at or below the tip it "
                              "reported", path="getblockbynum")
        return body.block.timestamp_ms

    def rescan(self, first: int, last: int, *, credited_by: str | None = None) -> ScanReport:
        """Read ``first`` to ``last`` again (an address added late), the checkpoint unmoved."""
        tip = self.tip()
        if not 1 <= first <= last <= tip:
            raise ScanSettingsError(f"a rescan reads blocks 1 to {tip} (the tip), "
                                    f"got {first} to {last}")
        return self.scan(first, last, tip, credited_by, None, self.addresses, "rescan")

    def scan(self, first: int, end: int, tip: int, credited_by: str | None,
             mark: Callable[[Connection, int], None] | None, addresses: frozenset[str],
             what: str = "") -> ScanReport:
        """Read ``first`` to ``end`` for ``addresses``, page by page; each page's credits
        and ``mark`` (the checkpoint's or a backfill's advance; None: nothing moves) in one
        transaction."""
        if first > end:
            return self._report(None, None, tip, 0, [])
        credited: list[ChainTransfer] = []
        found = done = 0
        pages = [(s, min(end, s + self.settings.page_blocks - 1))
                 for s in range(first, end + 1, self.settings.page_blocks)]
        done = first - 1
        with ThreadPoolExecutor(self.settings.max_concurrency,
                                thread_name_prefix="deposit-scan") as pool:
            try:
                for (_, stop), transfers in zip(pages, self._read(pool, pages, addresses),
                                                strict=True):
                    found += len(transfers)
                    credited += self._credit(transfers, stop, mark, credited_by)
                    done = stop
            except LaggingNode as exc:
                self.log.warning("deposit scan %s%s: %s; checkpoint held at block %d, read "
                                 "again next round", self.scope, f" ({what})" if what else "",
                                 exc, done)
        if done < first:
            return self._report(None, None, tip, found, credited)
        self.log.info("deposit scan %s%s: blocks %d to %d read (%d requests), %d transfers "
                      "into deposit addresses found, %d credited now; %d blocks behind the "
                      "tip %d", self.scope, f" ({what})" if what else "", first, done,
                      self.budget.used, found, len(credited), tip - done, tip)
        return self._report(first, done, tip, found, credited)

    def _report(self, first: int | None, last: int | None, tip: int, found: int,
                credited: list[ChainTransfer]) -> ScanReport:
        return ScanReport(self.token, first, last, tip, self.budget.used, found,
                          tuple(credited), contract=self.contract, decimals=self.kind.decimals)

    def _read(self, pool: ThreadPoolExecutor, pages: list[tuple[int, int]],
              addresses: frozenset[str]) -> Iterator[list[ChainTransfer]]:
        """Each page's transfers into the addresses, in page order; reads run ahead of the
        credits by a few pages (enough to keep every thread busy)."""
        ahead: deque[list[Future[tuple[int, list[ChainTransfer] | None]]]] = deque()
        todo = iter(pages)
        per_page = -(-self.settings.page_blocks // self.settings.blocks_per_range) \
            if self.contract is None else self.settings.page_blocks
        window = max(2, -(-2 * self.settings.max_concurrency // per_page) + 1)
        try:
            while True:
                while len(ahead) < window:
                    page = next(todo, None)
                    if page is None:
                        break
                    ahead.append([pool.submit(read)
                                  for read in self._reads(*page, addresses)])
                if not ahead:
                    return
                reads = [future.result() for future in ahead.popleft()]
                if self.contract is not None:
                    self._check_empty([n for n, found in reads if found is None])
                yield [t for _, found in reads for t in found or ()]
        finally:
            for futures in ahead:
                for future in futures:
                    future.cancel()

    def _reads(self, start: int, stop: int, addresses: frozenset[str]
               ) -> list[Callable[[], tuple[int, list[ChainTransfer] | None]]]:
        """The reads one page needs: a block each (a token), a range each (TRX)."""
        if self.contract is None:
            step = self.settings.blocks_per_range
            return [partial(self._trx_range, s, min(stop + 1, s + step), addresses)
                    for s in range(start, stop + 1, step)]
        return [partial(self._token_block, n, addresses) for n in range(start, stop + 1)]

    def _token_block(self, number: int, addresses: frozenset[str]
                     ) -> tuple[int, list[ChainTransfer] | None]:
        """The block's transfers into the addresses; None when it answered ``[]``."""
        self.budget.slot()
        read = self.node.get_block_token_transfers(
            number, contract=self.contract, solidified=self.settings.confirmations is None)
        if not read.txids:
            return number, None
        return number, [t for t in read.transfers if t.to_address in addresses]

    def _check_empty(self, numbers: list[int]) -> None:
        """The blocks that answered ``[]`` exist and hold no transaction: one range read per
        100 blocks of their span (module docstring); else :class:`LaggingNode`."""
        solid = self.settings.confirmations is None
        while numbers:
            low = numbers[0]
            span = [n for n in numbers if n < low + MAX_BLOCK_RANGE]
            numbers = numbers[len(span):]
            self.budget.slot()
            blocks = {b.block.number: b for b in self.node.get_blocks(low, span[-1] + 1,
                                                                      solidified=solid)}
            missing = [n for n in span if n not in blocks]
            if missing:
                raise LaggingNode(f"the node has not got block {missing[0]} (it answered "
                                  "no receipts for it)", path="getblockbylimitnext")
            full = [n for n in span if blocks[n].txids]
            if full:
                raise LaggingNode(f"block {full[0]} holds {len(blocks[full[0]].txids)} "
                                  "transactions, yet its receipts were answered as none",
                                  path="gettransactioninfobyblocknum")

    def _trx_range(self, start: int, end: int, addresses: frozenset[str]
                   ) -> tuple[int, list[ChainTransfer] | None]:
        self.budget.slot()
        blocks = self.node.get_blocks(start, end,
                                      solidified=self.settings.confirmations is None)
        if len(blocks) != end - start:  # the node has not these blocks yet: never skip them
            raise LaggingNode(f"node answered {len(blocks)} of blocks {start} to {end - 1}, "
                              "all at or below the tip it reported", path="getblockbylimitnext")
        return start, [t for b in blocks for t in b.trx if t.to_address in addresses]

    def _credit(self, transfers: list[ChainTransfer], stop: int,
                mark: Callable[[Connection, int], None] | None,
                credited_by: str | None) -> list[ChainTransfer]:
        """One transaction: the page's credits and, when one moves, its checkpoint."""
        with self.ledger.db.write() as conn:
            credited = self.ledger.insert_credits(conn, transfers, token=self.token,
                                                  source="scan", credited_by=credited_by,
                                                  decimals=self.kind.decimals) \
                if transfers else []
            if mark is not None:
                mark(conn, stop)
        for t in credited:
            self.log.info("credited %s units of %s into %s: tx %s log %d, block %d (scan)",
                          f"{t.units:,}", self.token, t.to_address, t.tx_hash, t.index,
                          t.block_number)
        return list(credited)
