"""Callback deliveries: the queue the dispatcher drains, attempts and the retry schedule.

A delivery is queued with the transfer that owes it, in the same transaction;
each attempt is logged, and a failed automatic attempt is retried after 10, 60
and 300 s (times the time-scale) before the delivery is ``failed``.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox.database import Database, iso
from tronenergy_sandbox.errors import WorldError

# Callback retries after the first attempt fails (spec section 6).
RETRY_DELAYS = (10.0, 60.0, 300.0)


@dataclass(frozen=True)
class DueDelivery:
    id: int
    address: str
    url: str
    data: dict[str, Any]
    attempts: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> DueDelivery:
        return cls(row["id"], row["address"], row["url"], json.loads(row["data"]),
                   row["attempts"])


class DeliveryQueue(Database):
    def _enqueue(self, address: str, data: dict[str, Any], url: str, now: float) -> int | None:
        """Queue one callback, due now (inside the caller's transaction)."""
        cursor = self.db.execute(
            "INSERT INTO deliveries (address, tx_hash, data, url, status,"
            " next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
            (address, data["tx_hash"], json.dumps(data), url, now, now),
        )
        return cursor.lastrowid

    def due_deliveries(self, exclude: set[int], limit: int = 500) -> list[DueDelivery]:
        rows = self.db.execute(
            "SELECT id, address, url, data, attempts FROM deliveries"
            " WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id"
            " LIMIT ?",
            (self.clock(), limit + len(exclude)),
        ).fetchall()
        due = [DueDelivery.from_row(row) for row in rows if row["id"] not in exclude]
        return due[:limit]

    def next_due_at(self) -> float | None:
        row = self.db.execute(
            "SELECT MIN(next_attempt_at) FROM deliveries WHERE status = 'pending'"
        ).fetchone()
        return None if row[0] is None else float(row[0])

    def record_attempt(
        self,
        delivery_id: int,
        *,
        manual: bool,
        status_code: int | None,
        response_body: str | None,
        error: str | None,
        started: float,
    ) -> dict[str, Any]:
        """Log one attempt and move the delivery on: delivered, retry later, or failed."""
        now = self.clock()
        ok = status_code is not None and 200 <= status_code < 300
        with self._tx() as db:
            row = db.execute("SELECT * FROM deliveries WHERE id = ?", (delivery_id,)).fetchone()
            attempt = row["attempts"] + 1
            db.execute(
                "INSERT INTO delivery_attempts (delivery_id, attempt, manual, at, status_code,"
                " response_body, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (delivery_id, attempt, int(manual), started, status_code,
                 (response_body or "")[:2000], error, int((now - started) * 1000)),
            )
            if ok:
                status, next_at = "delivered", None
            elif manual:  # a failed resend leaves the delivery where it was
                status, next_at = row["status"], row["next_attempt_at"]
            else:
                automatic = db.execute(
                    "SELECT COUNT(*) FROM delivery_attempts WHERE delivery_id = ? AND manual = 0",
                    (delivery_id,),
                ).fetchone()[0]
                if automatic > len(RETRY_DELAYS):
                    status, next_at = "failed", None
                else:
                    status = "pending"
                    next_at = now + RETRY_DELAYS[automatic - 1] * self.time_scale
            db.execute(
                "UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?,"
                " last_attempt_at = ?, last_status_code = ? WHERE id = ?",
                (status, attempt, next_at, started, status_code, delivery_id),
            )
        return self.delivery(delivery_id)

    def delivery_for_resend(self, delivery_id: int) -> DueDelivery:
        row = self.db.execute(
            "SELECT id, address, url, data, attempts FROM deliveries WHERE id = ?", (delivery_id,)
        ).fetchone()
        if row is None:
            raise WorldError(ErrorCode.NOT_FOUND, f"delivery {delivery_id} not found")
        return DueDelivery.from_row(row)

    def delivery(self, delivery_id: int) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM deliveries WHERE id = ?", (delivery_id,)).fetchone()
        if row is None:
            raise WorldError(ErrorCode.NOT_FOUND, f"delivery {delivery_id} not found")
        return self._delivery_dict(row)

    def _delivery_dict(self, row: sqlite3.Row) -> dict[str, Any]:
        attempts = self.db.execute(
            "SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY id", (row["id"],)
        ).fetchall()
        return {
            "id": row["id"],
            "address": row["address"],
            "tx_hash": row["tx_hash"],
            "url": row["url"],
            "status": row["status"],
            "attempts": row["attempts"],
            "next_attempt_at": iso(row["next_attempt_at"]),
            "created_at": iso(row["created_at"]),
            "data": json.loads(row["data"]),
            "history": [
                {
                    "attempt": a["attempt"],
                    "manual": bool(a["manual"]),
                    "at": iso(a["at"]),
                    "status_code": a["status_code"],
                    "response_body": a["response_body"],
                    "error": a["error"],
                    "duration_ms": a["duration_ms"],
                }
                for a in attempts
            ],
        }

    def all_deliveries(self, status: str | None = None) -> list[dict[str, Any]]:
        if status is None:
            rows = self.db.execute("SELECT * FROM deliveries ORDER BY id").fetchall()
        else:
            rows = self.db.execute(
                "SELECT * FROM deliveries WHERE status = ? ORDER BY id", (status,)
            ).fetchall()
        return [self._delivery_dict(row) for row in rows]
