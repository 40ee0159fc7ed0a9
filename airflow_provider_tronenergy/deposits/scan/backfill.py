"""Where a deposit scan reads each address from: its registration, and a backfill once.

:func:`registered_blocks` reads the registrations of the addresses a scan watches
(:mod:`..registrations`) and turns the times not read as blocks yet into blocks, once
(stored). The scan's first run starts at the earliest of them when that is before its
``start``; an address whose registration block the checkpoint had already passed when
the scan was first given it is read back to that block by :func:`backfill`: its blocks,
for those addresses alone, page by page as the scan reads, each page's credits and the
backfill's advance in one transaction (:mod:`.checkpoint`), through the ledger's one
credit (a deposit credited by a callback or an earlier read is not credited again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from airflow_provider_tronenergy.deposits import registrations

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from airflow_provider_tronenergy.deposits.ledger import DepositLedger
    from airflow_provider_tronenergy.deposits.scan.budget import ScanBudget
    from airflow_provider_tronenergy.deposits.scan.checkpoint import Backfill, Checkpoints
    from airflow_provider_tronenergy.node.transfers import ChainTransfer


class Part(Protocol):
    """What one read of a range reports (``scan.ScanReport``)."""

    @property
    def found(self) -> int: ...

    @property
    def credited(self) -> tuple[ChainTransfer, ...]: ...

    @property
    def blocks(self) -> int: ...


class Scanning(Protocol):
    """What this module reads of a ``scan.DepositScan``."""

    ledger: DepositLedger
    addresses: frozenset[str]
    scope: str
    log: Any
    settings: Any
    budget: ScanBudget

    @property
    def checkpoints(self) -> Checkpoints: ...

    def timestamp(self, number: int) -> int: ...

    def scan(self, first: int, end: int, tip: int, credited_by: str | None,
             mark: Callable[[Connection, int], None] | None, addresses: frozenset[str],
             what: str = "") -> Part: ...


@dataclass(frozen=True)
class Backfilled:
    """What one run's backfills read and credited."""

    blocks: int
    found: int
    credited: tuple[ChainTransfer, ...]
    pending: int
    """Addresses whose backfill the next run goes on with."""


def registered_blocks(scan: Scanning, tip: int) -> dict[str, int | None]:
    """The watched addresses registered through the provider, each with the block the
    scan reads it from (None: registered at a time after the tip's). Times not read as
    blocks yet are read now, within the scan's budget, and stored."""
    found = registrations.read(scan.ledger.db, scan.addresses)
    times = sorted({r.at_ms for r in found.values() if r.unresolved and r.at_ms is not None})
    if times:
        seen: dict[int, int] = {}

        def timestamp_of(number: int) -> int:
            if number not in seen:
                seen[number] = scan.timestamp(number)
            return seen[number]

        tip_ms = timestamp_of(tip)
        blocks: dict[int, int] = {}
        for at_ms in times:
            block = registrations.first_block_at(timestamp_of, at_ms, tip, tip_ms)
            if block is not None:
                blocks[at_ms] = block
        if blocks:
            registrations.resolved(scan.ledger.db, blocks)
            scan.log.info("deposit scan %s: %d registration time(s) read as blocks (%d "
                          "blocks read)", scan.scope, len(blocks), len(seen))
        found = {a: replace(r, at_block=blocks[r.at_ms])
                 if r.unresolved and r.at_ms in blocks else r for a, r in found.items()}
    return {a: r.first_block() for a, r in found.items()}


def backfill(scan: Scanning, tip: int, credited_by: str | None) -> Backfilled | None:
    """The unfinished backfills of the watched addresses, earliest first, at most
    ``max_blocks_per_run`` blocks in all; None when there is none."""
    jobs = scan.checkpoints.backfills(scan.scope, scan.addresses)
    if not jobs:
        return None
    left = scan.settings.max_blocks_per_run
    credited: list[ChainTransfer] = []
    found = blocks = 0
    for job in jobs:
        if left <= 0:
            break
        end = min(job.to_block, job.next_block + left - 1)
        part = scan.scan(job.next_block, end, tip, credited_by, _advance(scan, job),
                         job.addresses, f"backfill of {len(job.addresses)} address(es)")
        credited += part.credited
        found += part.found
        blocks += part.blocks
        left -= part.blocks
        if part.blocks < end - job.next_block + 1:
            break  # a lagging node: the next round goes on from there
    pending = sum(len(j.addresses) for j in scan.checkpoints.backfills(scan.scope,
                                                                      scan.addresses))
    return Backfilled(blocks, found, tuple(credited), pending)


def _advance(scan: Scanning, job: Backfill) -> Callable[[Connection, int], None]:
    def advance(conn: Connection, last_block: int) -> None:
        scan.checkpoints.advance_backfill(conn, scan.scope, job.addresses, last_block)

    return advance
