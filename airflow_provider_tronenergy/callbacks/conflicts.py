"""Callbacks that contradict a stored transfer: kept apart, answered 409, never stored over it.

A ``tx_hash`` names one on-chain transfer. A validly signed callback that
repeats a stored ``tx_hash`` with another sender, recipient, amount or token
is not a retry: it is a bug at the service, or someone holding a webhook
secret. Answering it as a duplicate hid it (with the unstored amount in an INFO
line); overwriting the first would let it rewrite a credit. So the first row
stays exactly as it is, the contradicting body and its signature go to
``<prefix>conflicts`` for inspection (each distinct body once, however often
it is redelivered), and the receiver answers 409 and logs a warning.

The comparison is decided here, right after the insert that found the
``tx_hash`` taken, against the row the store holds: so it is exact across
receiver processes and hosts, and costs nothing when a batch has no duplicate.
Amounts compare as numbers (``"12.5"`` and ``"12.50"`` agree).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks.events import RecordResult, VerifiedTransfer

COMPARED: Final = ("from", "to", "amount", "token")
"""The facts a redelivery must repeat; block number and timestamps may be re-reported."""
_LOOKUP_CHUNK: Final = 500


@dataclass(frozen=True)
class Conflict:
    """A callback refused because its ``tx_hash`` is stored with other facts."""

    id: int
    tx_hash: str
    fields: tuple[str, ...]
    """Which of :data:`COMPARED` differ from the stored transfer."""
    stored_id: int
    """The stored transfer's id: ``store.get_transfer(tx_hash)`` shows the first."""
    from_address: str
    to_address: str
    amount: str
    token: str
    received_at_ms: int
    verified_by: str
    raw_body: bytes

    def to_payload(self) -> dict[str, Any]:
        """JSON-safe, the raw body as text (it parsed as JSON, so it is UTF-8)."""
        return {
            "id": self.id, "tx_hash": self.tx_hash, "fields": list(self.fields),
            "stored_id": self.stored_id, "from": self.from_address, "to": self.to_address,
            "amount": self.amount, "token": self.token, "received_at_ms": self.received_at_ms,
            "verified_by": self.verified_by,
            "raw_body": self.raw_body.decode("utf-8", errors="replace"),
        }


def _differences(event: VerifiedTransfer, row: Any) -> tuple[str, ...]:
    differ = []
    if event.from_address != row.from_address:
        differ.append("from")
    if event.to_address != row.to_address:
        differ.append("to")
    if Decimal(event.amount) != Decimal(row.amount):
        differ.append("amount")
    if event.token != row.token:
        differ.append("token")
    return tuple(differ)


class Conflicts:
    """One store's ``<prefix>conflicts``: compare a batch's duplicates, keep, list.

    Given the store's database and its two tables; the caller has brought the
    schema up to date.
    """

    def __init__(self, db: sqlstore.Database, transfers: sa.Table, conflicts: sa.Table) -> None:
        self.db = db
        self.transfers = transfers
        self.table = conflicts

    def check(self, events: Sequence[VerifiedTransfer],
              results: list[RecordResult]) -> list[RecordResult]:
        """Mark the duplicates that contradict their stored transfer, and keep their bodies.

        Called after the batch committed, only when it held duplicates. The stored
        row is the first delivery's, also when the other was earlier in the same batch.
        """
        duplicates = [i for i, result in enumerate(results) if result.duplicate]
        if not duplicates:
            return results
        t = self.transfers
        hashes = sorted({events[i].tx_hash for i in duplicates})
        stored: dict[str, Any] = {}
        with self.db.engine.connect() as conn:
            for start in range(0, len(hashes), _LOOKUP_CHUNK):
                query = sa.select(t.c.id, t.c.tx_hash, t.c.from_address, t.c.to_address,
                                  t.c.amount, t.c.token).where(
                    t.c.tx_hash.in_(hashes[start:start + _LOOKUP_CHUNK]))
                stored.update((row.tx_hash, row) for row in conn.execute(query))
        found: list[tuple[VerifiedTransfer, tuple[str, ...], int]] = []
        checked = list(results)
        for i in duplicates:
            event = events[i]
            row = stored.get(event.tx_hash)
            if row is None:
                continue
            fields = _differences(event, row)
            if fields:
                checked[i] = RecordResult(event.tx_hash, duplicate=True, conflict=fields)
                found.append((event, fields, int(row.id)))
        if found:
            self._keep(found)
        return checked

    def _keep(self, found: list[tuple[VerifiedTransfer, tuple[str, ...], int]]) -> None:
        """Insert each contradicting body once (a redelivery of the same bytes adds nothing)."""
        now = int(time.time() * 1000)
        rows = [{
            "tx_hash": event.tx_hash, "fields": ",".join(fields), "stored_id": stored_id,
            "from_address": event.from_address, "to_address": event.to_address,
            "amount": event.amount, "token": event.token,
            "received_at_ms": event.received_at_ms or now, "verified_by": event.verified_by,
            "signature": event.signature, "raw_body": event.raw_body,
            "body_sha256": hashlib.sha256(event.raw_body).hexdigest(),
        } for event, fields, stored_id in found]
        statement = self.db.insert(self.table).on_conflict_do_nothing(
            index_elements=["tx_hash", "body_sha256"])
        with self.db.write() as conn:  # no id ordering needed: nobody follows these ids
            conn.execute(statement, rows)

    def find(self, *, tx_hash: str | None = None, after_id: int = 0,
             limit: int = 100) -> list[Conflict]:
        """Kept conflicting callbacks in id order, optionally for one ``tx_hash``."""
        c = self.table
        query = sa.select(c).where(c.c.id > after_id)
        if tx_hash is not None:
            query = query.where(c.c.tx_hash == tx_hash.lower())
        with self.db.engine.connect() as conn:
            rows = conn.execute(query.order_by(c.c.id).limit(limit)).mappings().all()
        return [Conflict(
            id=int(row["id"]), tx_hash=row["tx_hash"],
            fields=tuple(f for f in row["fields"].split(",") if f),
            stored_id=int(row["stored_id"]), from_address=row["from_address"],
            to_address=row["to_address"], amount=row["amount"], token=row["token"],
            received_at_ms=int(row["received_at_ms"]), verified_by=row["verified_by"],
            raw_body=bytes(row["raw_body"]),
        ) for row in rows]
