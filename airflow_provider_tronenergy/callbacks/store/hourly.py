"""Transfers stored and redeliveries, counted per hour: the Energy page's deposits per hour.

``<prefix>hourly`` holds one row per hour (``hour_ms``: its start, UTC, in ms since the
epoch). ``stored`` is kept by a trigger on the transfers table, inside each insert's own
transaction (:func:`.schema.count_stored`), so it is exact and reading a year costs
8,760 rows rather than a million. ``duplicates`` counts redeliveries: the service retries
a callback it got no 2xx for in time, the store keeps the first and answers the next 200
``duplicate`` (a contradicting one is a conflict, :mod:`.conflicts`); they are counted
here, only when a batch held any, so the receiver's usual path does not pay for it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks.store.schema import HOUR_MS


class HourlyCounts:
    """``<prefix>hourly`` of one store: per hour, transfers stored and redeliveries."""

    def __init__(self, db: sqlstore.Database, table: sa.Table) -> None:
        self.db = db
        self.table = table

    def add_duplicates(self, received_at_ms: Iterable[int | None]) -> None:
        """Count one redelivery per time given (None: now)."""
        now = int(time.time() * 1000)
        hours = Counter((at or now) // HOUR_MS * HOUR_MS for at in received_at_ms)
        if not hours:
            return
        h = self.table
        with self.db.write() as conn:  # nobody follows these rows: no advisory lock
            for hour, count in sorted(hours.items()):
                insert = self.db.insert(h).values(hour_ms=hour, stored=0, duplicates=count)
                conn.execute(insert.on_conflict_do_update(
                    index_elements=["hour_ms"],
                    set_={"duplicates": h.c.duplicates + insert.excluded.duplicates}))

    def per_hour(self, start_ms: int, end_ms: int) -> dict[int, tuple[int, int]]:
        """``{hour_ms: (stored, redeliveries)}`` for the hours starting in [start, end)."""
        h = self.table
        with self.db.engine.connect() as conn:
            rows = conn.execute(sa.select(h.c.hour_ms, h.c.stored, h.c.duplicates).where(
                h.c.hour_ms >= start_ms, h.c.hour_ms < end_ms)).all()
        return {int(hour): (int(stored), int(dup)) for hour, stored, dup in rows}
