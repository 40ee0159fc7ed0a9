"""When each deposit address was registered through the provider: where the scan starts.

The add-monitor operator records, before it asks the service to watch an address, the
block the chain was at: the solidified head its node reads then (``block``), or, with no
node, the worker's clock (``at_ms``). Callbacks can only have been lost after that, so the
deposit scan reads from there (docs/deposit-scan.md, "Where the scan starts"): a first run
from the earliest registration of the addresses it watches, an address added later back
to its own registration once (``scan.checkpoint.Backfills``).

A time becomes a block when the scan first needs it (:func:`first_block_at`): the first
block whose timestamp is at or after the time less :data:`MARGIN_MS`, found by a binary
search over blocks read by number (block timestamps only grow: java-tron refuses a block
whose slot is not after its parent's). The margin covers a worker's clock ahead of the
chain's; reading earlier costs a few hundred blocks, reading later would lose deposits.

A row only moves earlier: registering an address again keeps the earliest block and the
earliest time. Removing the monitor leaves the row as it is (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Final

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.deposits.schema import REGISTRATIONS

MARGIN_MS: Final = 600_000
"""How far before a registration's time the scan starts (10 minutes: 200 mainnet blocks)."""
_CHUNK = 500
"""Addresses per ``IN (...)`` when rows are read."""


@dataclass(frozen=True)
class Registration:
    """One address's earliest registration, as a block, a time, or both."""

    address: str
    block: int | None
    """The earliest solidified head read when it was registered with a node."""
    at_ms: int | None
    """The earliest time (epoch ms, the worker's clock) it was registered without a node."""
    at_block: int | None
    """``at_ms`` as the scan resolved it (None until then)."""
    registered_by: str | None

    @property
    def unresolved(self) -> bool:
        """A time the scan has not turned into a block yet."""
        return self.at_ms is not None and self.at_block is None

    def first_block(self) -> int | None:
        """The block the scan reads this address from, once its time (if any) was tried:
        None when only a time ahead of the tip is known."""
        known = [b for b in (self.block, self.at_block) if b is not None]
        return min(known) if known else None


def record(db: sqlstore.Database, addresses: Iterable[str], *, block: int | None = None,
           at_ms: int | None = None, registered_by: str | None = None) -> None:
    """One transaction: each address registered at ``block`` or ``at_ms`` (one of them),
    the earliest of every registration kept."""
    if (block is None) == (at_ms is None):
        raise ValueError("a registration is a block or a time, exactly one of them")
    for name, value in (("block", block), ("at_ms", at_ms)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    now = datetime.now(timezone.utc).isoformat()
    table = REGISTRATIONS
    with db.write() as conn:
        for address in sorted(set(addresses)):
            upsert = db.insert(table).values(
                address=address, block=block, at_ms=at_ms, at_block=None,
                first_registered_at=now, last_registered_at=now, registered_by=registered_by)
            new = upsert.excluded
            conn.execute(upsert.on_conflict_do_update(index_elements=["address"], set_={
                "block": _earliest(new.block, table.c.block),
                "at_ms": _earliest(new.at_ms, table.c.at_ms),
                # an earlier time than the one resolved: resolved again
                "at_block": sa.case((sa.and_(new.at_ms.is_not(None), sa.or_(
                    table.c.at_ms.is_(None), new.at_ms < table.c.at_ms)), sa.null()),
                    else_=table.c.at_block),
                "last_registered_at": new.last_registered_at}))


def _earliest(new: sa.ColumnElement[int], old: sa.ColumnElement[int]
              ) -> sa.ColumnElement[int]:
    """The smaller of two nullable numbers (NULL only when both are)."""
    return sa.case((old.is_(None), new), (new.is_(None), old), (new < old, new), else_=old)


def read(db: sqlstore.Database, addresses: Iterable[str]) -> dict[str, Registration]:
    """The registrations of those of ``addresses`` that have one."""
    wanted = sorted(set(addresses))
    found: dict[str, Registration] = {}
    table = REGISTRATIONS
    with db.engine.connect() as conn:
        for i in range(0, len(wanted), _CHUNK):
            for row in conn.execute(sa.select(table).where(
                    table.c.address.in_(wanted[i:i + _CHUNK]))).mappings():
                found[row["address"]] = Registration(
                    address=row["address"], block=_int(row["block"]),
                    at_ms=_int(row["at_ms"]), at_block=_int(row["at_block"]),
                    registered_by=row["registered_by"])
    return found


def resolved(db: sqlstore.Database, blocks: Mapping[int, int]) -> None:
    """Store what the scan resolved: ``{at_ms: block}``, for every row of that time still
    unresolved (a row whose time moved meanwhile keeps waiting)."""
    table = REGISTRATIONS
    with db.write() as conn:
        for at_ms, block in blocks.items():
            conn.execute(table.update().where(table.c.at_ms == at_ms,
                                              table.c.at_block.is_(None)).values(at_block=block))


def first_block_at(timestamp_of: Callable[[int], int], at_ms: int, tip: int,
                   tip_ms: int) -> int | None:
    """The first block of ``1..tip`` whose timestamp is at or after ``at_ms - MARGIN_MS``;
    None when even the tip's (``tip_ms``) is before it (the registration lies ahead of the
    tip). ``timestamp_of(n)`` reads block ``n``'s; about log2(tip) reads."""
    target = at_ms - MARGIN_MS
    if tip_ms < target:
        return None
    low, high = 1, tip  # the answer lies in [low, high]: the tip's timestamp qualifies
    while low < high:
        middle = (low + high) // 2
        if timestamp_of(middle) >= target:
            high = middle
        else:
            low = middle + 1
    return low


def _int(value: object) -> int | None:
    return None if value is None else int(str(value))
