"""The callback store's consumer offsets: how far each consumer (a watcher) has read.

Offsets move forward only unless set on purpose, so a late or repeated commit can
never make a consumer fire events it already handled. Used by
:class:`~airflow_provider_tronenergy.callbacks.store.CallbackStore`, which brings
the schema up to date first.
"""

from __future__ import annotations

import time

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore


class ConsumerOffsets:
    """``<prefix>consumer_offsets`` of one store: one row per consumer, its last id."""

    def __init__(self, db: sqlstore.Database, table: sa.Table) -> None:
        self.db = db
        self.table = table

    def committed(self, consumer: str) -> int | None:
        """``consumer``'s committed offset, or None when it never committed one."""
        o = self.table
        with self.db.engine.connect() as conn:
            value = conn.execute(sa.select(o.c.last_id).where(o.c.consumer == consumer)).scalar()
        return None if value is None else int(value)

    def commit(self, consumer: str, last_id: int, *, forward_only: bool) -> int:
        """Write ``consumer``'s offset (``forward_only``: never back); return the stored one,
        read in the same transaction."""
        if last_id < 0:
            raise ValueError("last_id must be >= 0")
        o = self.table
        insert = self.db.insert(o).values(
            consumer=consumer, last_id=last_id, updated_at_ms=int(time.time() * 1000)
        )
        new = insert.excluded.last_id
        upsert = insert.on_conflict_do_update(
            index_elements=["consumer"],
            set_={"last_id": sa.case((new > o.c.last_id, new), else_=o.c.last_id)
                  if forward_only else new,
                  "updated_at_ms": insert.excluded.updated_at_ms},
        )
        with self.db.write() as conn:  # offsets need no id ordering: no advisory lock
            conn.execute(upsert)
            value = conn.execute(sa.select(o.c.last_id).where(o.c.consumer == consumer)).scalar()
        return int(value or 0)
