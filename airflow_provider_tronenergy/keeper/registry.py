"""Which wallets a keeper looks after, and when it wants to be woken: for its watcher.

Each keeper run writes, per wallet, the floor it keeps and the chain time at which the
keeper wants to look again (the earliest end of its rentals, less ``renew_before_seconds``). The
keeper's trigger (``triggers.keeper``) carries only the keeper's name and reads this
table, so the wallets and the floor live in one place, the DAG's params, and a change
reaches the watcher with the next run. It lives in the purchase journal's database
(SQLite by default, one PostgreSQL for several workers and triggerers), in a table and
a schema version of its own; it holds addresses and figures, nothing secret.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import URL

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.purchase_journal.store import LOCATION

SCHEMA: Final = "keeper_registry"


@dataclass(frozen=True)
class Watched:
    """One wallet a keeper looks after."""

    keeper: str
    wallet: str
    floor: int
    wake_at: float | None
    """Chain time (seconds) at which a rental of the keeper's needs a look; None: none."""


class KeeperRegistry:
    """The keepers' wallets, floors and wake times (``<prefix>keeper_wallets``)."""

    def __init__(self, url: str | URL | None = None, *, table_prefix: str = "tronenergy_",
                 schema: str | None = None) -> None:
        self.db = sqlstore.Database(url, LOCATION, schema=schema, table_prefix=table_prefix,
                                    lock_name=f"{table_prefix}keeper_wallets", pool_size=2)
        self.table = sa.Table(
            f"{table_prefix}keeper_wallets", self.db.metadata,
            sa.Column("keeper", sa.String(80), primary_key=True),
            sa.Column("wallet", sa.String(64), primary_key=True),
            sa.Column("floor", sa.BigInteger(), nullable=False),
            sa.Column("wake_at_ms", sa.BigInteger(), nullable=True),
            sa.Column("updated_at_ms", sa.BigInteger(), nullable=False),
        )

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden."""
        return self.db.safe_url

    def close(self) -> None:
        """Release the connection pool."""
        self.db.close()

    def _ready(self) -> None:
        self.db.migrate(SCHEMA, [self.table], {})

    def register(self, keeper: str, watched: Sequence[tuple[str, int, float | None]]) -> None:
        """The keeper's wallets now, as ``(wallet, floor, wake_at)``: others are dropped."""
        self._ready()
        now = int(time.time() * 1000)
        t = self.table
        with self.db.write() as conn:
            conn.execute(t.delete().where(t.c.keeper == keeper))
            if watched:
                conn.execute(t.insert(), [
                    {"keeper": keeper, "wallet": wallet, "floor": floor,
                     "wake_at_ms": None if wake_at is None else int(wake_at * 1000),
                     "updated_at_ms": now} for wallet, floor, wake_at in watched])

    def watched(self, keeper: str) -> list[Watched]:
        """The wallets ``keeper`` looks after, in address order."""
        self._ready()
        t = self.table
        with self.db.engine.connect() as conn:
            rows = conn.execute(sa.select(t).where(t.c.keeper == keeper)
                                .order_by(t.c.wallet)).mappings().all()
        return [Watched(r["keeper"], r["wallet"], int(r["floor"]),
                        None if r["wake_at_ms"] is None else r["wake_at_ms"] / 1000)
                for r in rows]
