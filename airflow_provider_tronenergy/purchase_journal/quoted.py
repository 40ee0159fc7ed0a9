"""The energy a purchase was quoted for, in a column of its own.

A person resolving an unknown purchase with an order id has the order compared with
what the journal says was bought (:mod:`.verify`). For a mode whose request does not
state the energy (auto-buy, smart-buy, buy-count), that is the energy the price
endpoint quoted just before sending. It is written at the claim (``quoted_energy``);
journals of earlier releases kept it only in the description's text, so migration
step 3 reads it from there once, and nothing reads that text again.
"""

from __future__ import annotations

import re
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore

COLUMN: Final = "quoted_energy"
BACKFILL_CHUNK: Final = 1_000
_LEGACY: Final = re.compile(
    r"(?P<mode>\S+) (?P<energy>\d{1,3}(?:,\d{3})*) energy for (?P<target>\S+)")
"""What earlier releases journaled as a quoted purchase's description:
``"<mode> 130,000 energy for <target> (1 h) at ... TRX"``."""


def column() -> sa.Column[int]:
    """Nullable: a purchase sent without a quote has none."""
    return sa.Column(COLUMN, sa.BigInteger(), nullable=True)


def legacy_quoted_energy(mode: str, target: str, description: str) -> int | None:
    """The quoted energy an earlier release's description states, if it is this
    purchase's (its mode and target); else None."""
    match = _LEGACY.match(description)
    if match is None or match["mode"] != mode or match["target"] != target:
        return None
    energy = int(match["energy"].replace(",", ""))
    return energy if energy > 0 else None


def add_quoted_energy(entries: sa.Table) -> sqlstore.Step:
    """Migration step: the column, filled from each quoted purchase's description."""

    def step(conn: Connection) -> None:
        sqlstore.add_missing_columns(conn, entries, [COLUMN])
        e = entries.c
        update = entries.update().where(e.id == sa.bindparam("row_id")).values(
            {COLUMN: sa.bindparam("quoted")})
        last = 0
        while rows := conn.execute(sa.select(e.id, e.mode, e.target_address, e.description)
                                   .where(e.id > last).order_by(e.id)
                                   .limit(BACKFILL_CHUNK)).all():
            found = [{"row_id": row_id, "quoted": energy}
                     for row_id, mode, target, text in rows
                     if (energy := legacy_quoted_energy(mode, target, text)) is not None]
            if found:
                conn.execute(update, found)
            last = rows[-1][0]

    return step
