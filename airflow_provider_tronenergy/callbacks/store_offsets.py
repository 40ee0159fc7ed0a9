"""The callback store's consumer offsets: how far each consumer (a watcher) has read.

Part of :class:`~airflow_provider_tronenergy.callbacks.store.CallbackStore`.
Offsets move forward only unless set on purpose, so a late or repeated commit can
never make a consumer fire events it already handled.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy.callbacks.store_parts import StoreParts


class StoreOffsets(StoreParts):
    """Consumer offsets of the callback store (mixed into ``CallbackStore``)."""

    _dialect_insert: Callable[..., Any]

    def get_offset(self, consumer: str) -> int:
        """The last id ``consumer`` has finished with (0 when it never committed)."""
        o = self.offsets
        with self._read() as conn:
            value = conn.execute(sa.select(o.c.last_id).where(o.c.consumer == consumer)).scalar()
        return int(value or 0)

    def commit_offset(self, consumer: str, last_id: int) -> int:
        """Move ``consumer``'s offset forward to ``last_id`` (never back); return it.

        Forward-only, so a late or repeated commit cannot make a consumer re-fire
        events it already handled. Use :meth:`set_offset` to rewind on purpose.
        """
        o = self.offsets
        with self._upsert_offset(consumer, last_id, forward_only=True) as conn:
            value = conn.execute(sa.select(o.c.last_id).where(o.c.consumer == consumer)).scalar()
        return int(value or 0)

    def set_offset(self, consumer: str, last_id: int) -> None:
        """Set ``consumer``'s offset exactly, backwards too (an operator's replay)."""
        with self._upsert_offset(consumer, last_id, forward_only=False):
            pass

    @contextmanager
    def _upsert_offset(self, consumer: str, last_id: int, *,
                       forward_only: bool) -> Iterator[Connection]:
        """Write the offset in a transaction the caller may read in before it commits."""
        if last_id < 0:
            raise ValueError("last_id must be >= 0")
        self.ensure_schema()
        o = self.offsets
        insert = self._dialect_insert(o).values(
            consumer=consumer, last_id=last_id, updated_at_ms=int(time.time() * 1000)
        )
        new = insert.excluded.last_id
        upsert = insert.on_conflict_do_update(
            index_elements=["consumer"],
            set_={"last_id": sa.case((new > o.c.last_id, new), else_=o.c.last_id)
                  if forward_only else new,
                  "updated_at_ms": insert.excluded.updated_at_ms},
        )
        with self._write(ordered=False) as conn:  # offsets need no id ordering
            conn.execute(upsert)
            yield conn

    def committed_offset(self, consumer: str) -> int | None:
        """``consumer``'s committed offset, or None when it never committed one."""
        o = self.offsets
        with self._read() as conn:
            value = conn.execute(sa.select(o.c.last_id).where(o.c.consumer == consumer)).scalar()
        return None if value is None else int(value)

    def start_offset(self, consumer: str) -> int:
        """Where a consumer starts: its committed offset, or (new) the present.

        "New" means no offset row at all, not an offset of 0: a consumer that started
        on an empty store has committed 0, and the transfers stored while its
        triggerer was down must still fire it.
        """
        committed = self.committed_offset(consumer)
        if committed is None:
            committed = self.commit_offset(consumer, self.max_id())
        return committed
