"""How far a deposit scan has read the chain: one row per token, in the ledger's database.

``deposit_scan_checkpoint`` holds, per scope (``USDT:<contract>``, ``TRX``), the last block
whose transfers are credited. A scan moves it in the very transaction that credits the
page of blocks it covers (:meth:`advance` takes that transaction's connection), so a kill
mid-page leaves both undone: the next run reads the page again and credits nothing twice
(the ledger's key decides), and no block is passed without its credits. The row only moves
forward: a slower, older run never rewinds it.

``deposit_scan_backfill`` holds, per scope and address, the one backfill of an address
the scan was given after its checkpoint had passed the address's registration block
(``deposits.registrations``): blocks ``from_block`` to ``to_block`` (the checkpoint when
the address was first seen), read for that address alone, ``next_block`` the first not
read yet. It moves as the checkpoint does, in each page's credit transaction, so a killed
worker's backfill goes on where its last page ended; a row, once made, is never made
again, so a backfill is read once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore

STORE: Final = "deposit_scan"
"""The checkpoint's own version row (the ledger's tables keep theirs)."""
_META = sa.MetaData()
CHECKPOINTS: Final = sa.Table(
    "deposit_scan_checkpoint", _META,
    sa.Column("scope", sa.String(80), primary_key=True),
    sa.Column("last_block", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
)

BACKFILLS: Final = sa.Table(
    "deposit_scan_backfill", _META,
    sa.Column("scope", sa.String(80), primary_key=True),
    sa.Column("address", sa.String(34), primary_key=True),
    sa.Column("from_block", sa.BigInteger, nullable=False),
    sa.Column("to_block", sa.BigInteger, nullable=False),
    sa.Column("next_block", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
)
_CHUNK = 500


TABLES: Final = (CHECKPOINTS, BACKFILLS)
MIGRATIONS: Final[dict[int, sqlstore.Step]] = {}
"""``{n: step}`` moving the scan's tables from version ``n - 1`` to ``n``: none yet, the
first release is version 1 (a later release adds its steps here, from 2)."""


@dataclass(frozen=True)
class Backfill:
    """Addresses whose backfills stand at the same place: ``next_block`` to ``to_block``
    still to read."""

    next_block: int
    to_block: int
    addresses: frozenset[str]


class Checkpoints:
    """The checkpoint and backfill tables, on a ledger's ``sqlstore.Database``."""

    def __init__(self, db: sqlstore.Database) -> None:
        self.db = db
        db.migrate(STORE, TABLES, MIGRATIONS)

    def read(self, scope: str) -> int | None:
        """The last block scanned for ``scope``; None before its first run."""
        with self.db.engine.connect() as conn:
            value = conn.execute(sa.select(CHECKPOINTS.c.last_block).where(
                CHECKPOINTS.c.scope == scope)).scalar()
        return None if value is None else int(value)

    def advance(self, conn: Connection, scope: str, last_block: int) -> None:
        """Inside the caller's transaction: ``scope`` has read up to ``last_block``."""
        now = datetime.now(timezone.utc).isoformat()
        upsert = self.db.insert(CHECKPOINTS).values(scope=scope, last_block=last_block,
                                                    updated_at=now)
        new = upsert.excluded.last_block
        conn.execute(upsert.on_conflict_do_update(
            index_elements=["scope"],
            set_={"last_block": sa.case((new > CHECKPOINTS.c.last_block, new),
                                        else_=CHECKPOINTS.c.last_block),
                  "updated_at": upsert.excluded.updated_at}))

    def start_at(self, scope: str, first_block: int) -> int:
        """Fix a first run's start (``first_block - 1`` as read), unless a run already did;
        the checkpoint that holds."""
        with self.db.write() as conn:
            conn.execute(self.db.insert(CHECKPOINTS).values(
                scope=scope, last_block=first_block - 1,
                updated_at=datetime.now(timezone.utc).isoformat(),
            ).on_conflict_do_nothing(index_elements=["scope"]))
            return int(conn.execute(sa.select(CHECKPOINTS.c.last_block).where(
                CHECKPOINTS.c.scope == scope)).scalar_one())

    # -- backfills --------------------------------------------------------------------------

    def plan_backfills(self, scope: str, registered: Mapping[str, int | None],
                       last_block: int) -> int:
        """Give each address of ``registered`` without a backfill row one: from its
        registration block to ``last_block``, the checkpoint now; already done when it
        starts after it. An address whose block is None (a time not read as a block yet)
        waits for a later run. The number of rows made."""
        now = datetime.now(timezone.utc).isoformat()
        wanted = sorted(a for a, block in registered.items() if block is not None)
        made = 0
        with self.db.write() as conn:
            have: set[str] = set()
            for i in range(0, len(wanted), _CHUNK):
                have.update(conn.execute(sa.select(BACKFILLS.c.address).where(
                    BACKFILLS.c.scope == scope,
                    BACKFILLS.c.address.in_(wanted[i:i + _CHUNK]))).scalars())
            for address in wanted:
                if address in have:
                    continue
                first = max(1, registered[address] or 1)
                made += conn.execute(self.db.insert(BACKFILLS).values(
                    scope=scope, address=address, from_block=first, to_block=last_block,
                    next_block=first, created_at=now, updated_at=now,
                ).on_conflict_do_nothing(index_elements=["scope", "address"])).rowcount
        return made

    def backfills(self, scope: str, addresses: Iterable[str]) -> list[Backfill]:
        """The unfinished backfills of ``addresses``, grouped by where they stand, the
        earliest first."""
        wanted = sorted(set(addresses))
        groups: dict[tuple[int, int], set[str]] = {}
        with self.db.engine.connect() as conn:
            for i in range(0, len(wanted), _CHUNK):
                for address, start, stop in conn.execute(sa.select(
                        BACKFILLS.c.address, BACKFILLS.c.next_block, BACKFILLS.c.to_block,
                ).where(BACKFILLS.c.scope == scope,
                        BACKFILLS.c.next_block <= BACKFILLS.c.to_block,
                        BACKFILLS.c.address.in_(wanted[i:i + _CHUNK]))):
                    groups.setdefault((int(start), int(stop)), set()).add(address)
        return [Backfill(start, stop, frozenset(found))
                for (start, stop), found in sorted(groups.items())]

    def advance_backfill(self, conn: Connection, scope: str, addresses: Iterable[str],
                         last_block: int) -> None:
        """Inside the caller's transaction: these addresses' backfills read up to
        ``last_block`` (never back)."""
        now = datetime.now(timezone.utc).isoformat()
        wanted = sorted(set(addresses))
        for i in range(0, len(wanted), _CHUNK):
            conn.execute(BACKFILLS.update().where(
                BACKFILLS.c.scope == scope, BACKFILLS.c.address.in_(wanted[i:i + _CHUNK]),
                BACKFILLS.c.next_block <= last_block,
            ).values(next_block=last_block + 1, updated_at=now))
