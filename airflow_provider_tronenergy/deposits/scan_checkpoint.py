"""How far a deposit scan has read the chain: one row per token, in the ledger's database.

``deposit_scan_checkpoint`` holds, per scope (``USDT:<contract>``, ``TRX``), the last block
whose transfers are credited. A scan moves it in the very transaction that credits the
page of blocks it covers (:meth:`advance` takes that transaction's connection), so a kill
mid-page leaves both undone: the next run reads the page again and credits nothing twice
(the ledger's key decides), and no block is passed without its credits. The row only moves
forward: a slower, older run never rewinds it.
"""

from __future__ import annotations

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


class Checkpoints:
    """The checkpoint table, on a ledger's ``sqlstore.Database``."""

    def __init__(self, db: sqlstore.Database) -> None:
        self.db = db
        db.migrate(STORE, (CHECKPOINTS,), {})

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
