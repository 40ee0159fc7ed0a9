"""Monitored addresses: subscriptions, their webhook URL and secret, and their stats.

A subscription decides whether a confirmed transfer to its address owes a
callback (:meth:`Monitoring._watching_url`); the deliveries themselves live in
:mod:`~tronenergy_sandbox.deliveries`.
"""

from __future__ import annotations

import json
from typing import Any

from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox.database import Database, iso
from tronenergy_sandbox.errors import WorldError


class Monitoring(Database):
    def monitor_add(
        self,
        address: str,
        webhook_url: str,
        label: str,
        tokens: list[str],
        webhook_secret: str | None,
    ) -> dict[str, Any]:
        row = self.db.execute(
            "SELECT is_active FROM monitored WHERE address = ?", (address,)
        ).fetchone()
        if row is not None and row["is_active"]:
            raise WorldError(ErrorCode.ALREADY_MONITORED, f"address {address} is already monitored")
        self.db.execute(
            "INSERT INTO monitored (address, label, tokens, webhook_url, webhook_secret,"
            " is_active, created_at) VALUES (?, ?, ?, ?, ?, 1, ?)"
            " ON CONFLICT (address) DO UPDATE SET label = excluded.label,"
            " tokens = excluded.tokens, webhook_url = excluded.webhook_url,"
            " webhook_secret = excluded.webhook_secret, is_active = 1",
            (address, label, json.dumps(tokens), webhook_url, webhook_secret, self.clock()),
        )
        return {"address": address, "status": "active", "webhook_url": webhook_url}

    def monitor_delete(self, address: str) -> None:
        cursor = self.db.execute(
            "UPDATE monitored SET is_active = 0 WHERE address = ? AND is_active = 1", (address,)
        )
        if cursor.rowcount == 0:
            raise WorldError(ErrorCode.NOT_FOUND, f"address {address} is not monitored")
        self.db.execute(
            "UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL"
            " WHERE address = ? AND status = 'pending'",
            (address,),
        )

    def monitor_list(self, page: int, page_size: int, status: str | None) -> dict[str, Any]:
        where = ""
        args: tuple[int, ...] = ()
        if status is not None:
            where, args = "WHERE m.is_active = ?", (1 if status == "active" else 0,)
        total = self.db.execute(f"SELECT COUNT(*) FROM monitored m {where}", args).fetchone()[0]
        rows = self.db.execute(
            "SELECT m.*, (SELECT COUNT(*) FROM deliveries d WHERE d.address = m.address)"
            " AS total_callbacks, (SELECT MAX(d.last_attempt_at) FROM deliveries d"
            f" WHERE d.address = m.address) AS last_callback_at FROM monitored m {where}"
            " ORDER BY m.seq LIMIT ? OFFSET ?",
            (*args, page_size, (page - 1) * page_size),
        ).fetchall()
        return {
            "total": int(total),
            "addresses": [
                {
                    "address": row["address"],
                    "label": row["label"],
                    "tokens": json.loads(row["tokens"]),
                    "is_active": bool(row["is_active"]),
                    "total_callbacks": int(row["total_callbacks"]),
                    "last_callback_at": iso(row["last_callback_at"]),
                    "created_at": iso(row["created_at"]),
                }
                for row in rows
            ],
        }

    def monitor_stats(self) -> dict[str, Any]:
        counts = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(is_active), 0) FROM monitored"
        ).fetchone()
        callbacks = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(status = 'delivered'), 0),"
            " COALESCE(SUM(status = 'failed'), 0) FROM deliveries"
        ).fetchone()
        return {
            "total_addresses": int(counts[0]),
            "active_addresses": int(counts[1]),
            "total_callbacks": int(callbacks[0]),
            "success_callbacks": int(callbacks[1]),
            "failed_callbacks": int(callbacks[2]),
        }

    def webhook_secret_for(self, address: str) -> str | None:
        row = self.db.execute(
            "SELECT webhook_secret FROM monitored WHERE address = ?", (address,)
        ).fetchone()
        return None if row is None else row["webhook_secret"]

    def _watching_url(self, address: str, token: str) -> str | None:
        """The webhook URL of an active subscription on ``address`` that watches ``token``."""
        watch = self.db.execute(
            "SELECT tokens, webhook_url FROM monitored WHERE address = ? AND is_active = 1",
            (address,),
        ).fetchone()
        if watch is not None and token in {t.upper() for t in json.loads(watch["tokens"])}:
            return str(watch["webhook_url"])
        return None
