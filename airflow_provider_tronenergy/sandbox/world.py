"""The sandbox's world: account, chain state, orders, monitoring and deliveries.

Everything lives in one SQLite database (a file with ``--state``, else memory),
so a restarted sandbox continues where it stopped. All calls run on the event
loop's thread, one at a time, which makes each operation atomic without locks.
Amounts are integer sun; the HTTP layer converts them to TRX decimals.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.protocol.address import random_address
from airflow_provider_tronenergy.protocol.codes import ErrorCode
from airflow_provider_tronenergy.sandbox import pricing

# Order progression at time-scale 1.0, in seconds after creation.
PROCESSING_AFTER = 1.0
SUCCESS_AFTER = 3.0
# Callback retries after the first attempt fails (spec section 6).
RETRY_DELAYS = (10.0, 60.0, 300.0)
IN_FLIGHT = ("pending", "processing")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chain_accounts (address TEXT PRIMARY KEY, activated INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS holdings (
    address TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY (address, token));
CREATE TABLE IF NOT EXISTS orders (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    target_address TEXT NOT NULL,
    to_address TEXT,
    energy_amount INTEGER NOT NULL,
    rent_time TEXT NOT NULL,
    cost_sun INTEGER NOT NULL,
    energy_cost_sun INTEGER NOT NULL,
    activation_sun INTEGER NOT NULL,
    status TEXT NOT NULL,
    tx_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    processing_at REAL NOT NULL,
    complete_at REAL NOT NULL,
    outcome TEXT NOT NULL DEFAULT 'success');
CREATE INDEX IF NOT EXISTS orders_status ON orders (status);
CREATE TABLE IF NOT EXISTS monitored (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    tokens TEXT NOT NULL,
    webhook_url TEXT NOT NULL,
    webhook_secret TEXT,
    is_active INTEGER NOT NULL,
    created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS transfers (
    tx_hash TEXT PRIMARY KEY, from_address TEXT NOT NULL, to_address TEXT NOT NULL,
    amount TEXT NOT NULL, token TEXT NOT NULL, block_number INTEGER NOT NULL,
    block_timestamp INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL,
    tx_hash TEXT NOT NULL,
    data TEXT NOT NULL,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL,
    created_at REAL NOT NULL,
    last_attempt_at REAL,
    last_status_code INTEGER);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, next_attempt_at);
CREATE TABLE IF NOT EXISTS delivery_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    manual INTEGER NOT NULL,
    at REAL NOT NULL,
    status_code INTEGER,
    response_body TEXT,
    error TEXT,
    duration_ms INTEGER NOT NULL);
"""


class WorldError(Exception):
    """A request the service refuses; carries the envelope code and message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, repr=False)
class Credentials:
    api_key: str
    api_secret: str
    webhook_secret: str
    signature_scheme: str
    webhook_url: str | None

    def __repr__(self) -> str:  # the three secrets never reach a log line
        return f"Credentials(signature_scheme={self.signature_scheme!r}, ***)"


@dataclass(frozen=True)
class DueDelivery:
    id: int
    address: str
    url: str
    data: dict[str, Any]
    attempts: int


class World:
    def __init__(
        self,
        path: str | None = None,
        *,
        balance_sun: int = 1000 * pricing.SUN_PER_TRX,
        time_scale: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.time_scale = time_scale
        self.clock = clock
        self.db = sqlite3.connect(
            path or ":memory:", isolation_level=None, check_same_thread=False
        )
        self.db.row_factory = sqlite3.Row
        if path:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self._meta_default("balance_sun", str(balance_sun))
        self._meta_default("user_id", "10001")
        self._meta_default("username", "sandbox@example.com")
        self._meta_default("recharge_address", random_address())
        self._meta_default("block_number", "68000000")

    # -- plumbing -----------------------------------------------------------------

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _meta_default(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def close(self) -> None:
        self.db.close()

    # -- credentials ----------------------------------------------------------------

    def credentials(
        self,
        *,
        api_key: str | None,
        api_secret: str | None,
        webhook_secret: str | None,
        signature_scheme: str | None,
        webhook_url: str | None,
    ) -> Credentials:
        """Flags win; otherwise what the state file holds; otherwise fresh random values."""
        given = {
            "api_key": api_key,
            "api_secret": api_secret,
            "webhook_secret": webhook_secret,
            "signature_scheme": signature_scheme,
            "webhook_url": webhook_url,
        }
        defaults = {
            "api_key": "sbx_" + secrets.token_hex(12),
            "api_secret": secrets.token_hex(24),
            "webhook_secret": "whsec_" + secrets.token_hex(20),
            "signature_scheme": "v1",
            "webhook_url": "",
        }
        for key, value in given.items():
            if value is not None:
                self._set_meta(key, value)
            else:
                self._meta_default(key, defaults[key])
        return Credentials(
            api_key=self._meta("api_key") or "",
            api_secret=self._meta("api_secret") or "",
            webhook_secret=self._meta("webhook_secret") or "",
            signature_scheme=self._meta("signature_scheme") or "v1",
            webhook_url=self._meta("webhook_url") or None,
        )

    # -- chain state ----------------------------------------------------------------

    def is_activated(self, address: str) -> bool:
        row = self.db.execute(
            "SELECT activated FROM chain_accounts WHERE address = ?", (address,)
        ).fetchone()
        return bool(row and row[0])

    def holds(self, address: str, token: str = pricing.TOKEN_FOR_ESTIMATES) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM holdings WHERE address = ? AND token = ?", (address, token.upper())
        ).fetchone()
        return row is not None

    def set_activated(self, address: str) -> None:
        self.db.execute(
            "INSERT INTO chain_accounts (address, activated) VALUES (?, 1) "
            "ON CONFLICT (address) DO UPDATE SET activated = 1",
            (address,),
        )

    def set_holder(self, address: str, token: str = pricing.TOKEN_FOR_ESTIMATES) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO holdings (address, token) VALUES (?, ?)",
            (address, token.upper()),
        )

    def transfer_energy(self, to_address: str) -> int:
        """Energy one token transfer to ``to_address`` costs: first transfers write a new slot."""
        if self.holds(to_address):
            return pricing.ENERGY_PER_TRANSFER
        return pricing.ENERGY_FIRST_TRANSFER

    # -- account --------------------------------------------------------------------

    def _balance_sun(self) -> int:
        return int(self._meta("balance_sun") or 0)

    def _frozen_sun(self) -> int:
        row = self.db.execute(
            "SELECT COALESCE(SUM(energy_cost_sun), 0) FROM orders WHERE status IN (?, ?)",
            IN_FLIGHT,
        ).fetchone()
        return int(row[0])

    def available_sun(self) -> int:
        return self._balance_sun() - self._frozen_sun()

    def account(self) -> dict[str, Any]:
        self.advance()
        balance = self._balance_sun()
        frozen = self._frozen_sun()
        pending = self.db.execute(
            "SELECT COUNT(*) FROM orders WHERE status IN (?, ?)", IN_FLIGHT
        ).fetchone()[0]
        return {
            "user_id": int(self._meta("user_id") or 0),
            "username": self._meta("username"),
            "balance": pricing.sun_to_trx(balance),
            "available_balance": pricing.sun_to_trx(balance - frozen),
            "frozen_amount": pricing.sun_to_trx(frozen),
            "pending_orders_count": int(pending),
            "recharge_address": self._meta("recharge_address"),
        }

    def set_balance(self, balance_sun: int) -> None:
        self._set_meta("balance_sun", str(balance_sun))

    # -- prices ---------------------------------------------------------------------

    @staticmethod
    def price(rent_time: Decimal) -> dict[str, Any]:
        per_10k = pricing.PRICE_PER_10K_SUN[rent_time]
        return {
            "price_65k_1hour": pricing.sun_to_trx(
                pricing.energy_cost_sun(pricing.ENERGY_PER_TRANSFER, Decimal("1"))
            ),
            "price_per_10k": pricing.sun_to_trx(per_10k),
            "energy_per_transfer": pricing.ENERGY_PER_TRANSFER,
            "min_energy": pricing.MIN_ENERGY,
            "max_energy": pricing.MAX_ENERGY,
            "rent_time": rent_time,
        }

    # -- orders ---------------------------------------------------------------------

    def advance(self) -> None:
        """Move every order whose time has come; success spends its frozen amount."""
        now = self.clock()
        due = self.db.execute(
            "SELECT order_id, energy_cost_sun, outcome FROM orders "
            "WHERE status IN (?, ?) AND complete_at <= ?",
            (*IN_FLIGHT, now),
        ).fetchall()
        pending_due = self.db.execute(
            "SELECT 1 FROM orders WHERE status = 'pending' AND processing_at <= ? LIMIT 1",
            (now,),
        ).fetchone()
        if not due and pending_due is None:
            return
        with self._tx() as db:
            for row in due:
                if row["outcome"] == "failed":  # planned through /sandbox/orders/outcome
                    db.execute("UPDATE orders SET status = 'failed', updated_at = ? "
                               "WHERE order_id = ?", (now, row["order_id"]))
                    continue
                db.execute(
                    "UPDATE orders SET status = 'success', tx_hash = ?, updated_at = ? "
                    "WHERE order_id = ?",
                    (secrets.token_hex(32), now, row["order_id"]),
                )
                self._set_meta("balance_sun", str(self._balance_sun() - row["energy_cost_sun"]))
            db.execute(
                "UPDATE orders SET status = 'processing', updated_at = ? "
                "WHERE status = 'pending' AND processing_at <= ?",
                (now, now),
            )

    def _place_order(
        self,
        *,
        kind: str,
        target: str,
        energy: int,
        rent_time: Decimal,
        to_address: str | None = None,
        activate_to: bool = False,
    ) -> dict[str, Any]:
        """Create an energy order: validate chain state and balance, then freeze the cost."""
        self.advance()
        if not pricing.MIN_ENERGY <= energy <= pricing.MAX_ENERGY:
            raise WorldError(
                ErrorCode.INVALID_PARAMETER,
                f"energy_amount must be between {pricing.MIN_ENERGY} and "
                f"{pricing.MAX_ENERGY}, got {energy}",
            )
        if not self.is_activated(target):
            raise WorldError(
                ErrorCode.ADDRESS_NOT_ACTIVATED,
                f"address {target} is not activated; energy cannot be delegated to it",
            )
        energy_cost = pricing.energy_cost_sun(energy, rent_time)
        activation = pricing.ACTIVATION_COST_SUN if activate_to else 0
        total = energy_cost + activation
        available = self.available_sun()
        if total > available:
            raise WorldError(
                ErrorCode.INSUFFICIENT_BALANCE,
                f"insufficient available balance: need {pricing.sun_to_trx(total)} TRX, "
                f"available {pricing.sun_to_trx(available)} TRX",
            )
        now = self.clock()
        order_id = uuid.uuid4().hex
        with self._tx() as db:
            outcome = "success"
            failing = int(self._meta("fail_next_orders") or 0)
            if failing > 0:
                outcome = "failed"
                self._set_meta("fail_next_orders", str(failing - 1))
            if activate_to and to_address is not None:
                self.set_activated(to_address)
                self._set_meta("balance_sun", str(self._balance_sun() - activation))
            db.execute(
                "INSERT INTO orders (order_id, kind, target_address, to_address, energy_amount,"
                " rent_time, cost_sun, energy_cost_sun, activation_sun, status, tx_hash,"
                " created_at, updated_at, processing_at, complete_at, outcome)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', '', ?, ?, ?, ?, ?)",
                (
                    order_id, kind, target, to_address, energy, str(rent_time), total,
                    energy_cost, activation, now, now,
                    now + PROCESSING_AFTER * self.time_scale,
                    now + SUCCESS_AFTER * self.time_scale, outcome,
                ),
            )
        return self.order(order_id)

    def buy(
        self, target: str, energy: int, rent_time: Decimal, kind: str = "buy"
    ) -> dict[str, Any]:
        return self._place_order(kind=kind, target=target, energy=energy, rent_time=rent_time)

    def buy_count(self, target: str, count: int, rent_time: Decimal) -> dict[str, Any]:
        energy = count * pricing.ENERGY_PER_TRANSFER
        if energy > pricing.MAX_ENERGY:
            raise WorldError(
                ErrorCode.INVALID_PARAMETER,
                f"count {count} needs {energy} energy, over max_energy {pricing.MAX_ENERGY}",
            )
        return self._place_order(
            kind="buy_count", target=target, energy=energy, rent_time=rent_time
        )

    def auto_buy(self, from_address: str, to_address: str, rent_time: Decimal) -> dict[str, Any]:
        return self._place_order(
            kind="auto_buy",
            target=from_address,
            to_address=to_address,
            energy=self.transfer_energy(to_address),
            rent_time=rent_time,
        )

    def smart_buy(
        self, receiver: str, to_address: str, from_address: str, rent_time: Decimal
    ) -> dict[str, Any]:
        del from_address  # the simulated transfer's sender changes nothing in this model
        return self._place_order(
            kind="smart_buy",
            target=receiver,
            to_address=to_address,
            energy=self.transfer_energy(to_address),
            rent_time=rent_time,
            activate_to=not self.is_activated(to_address),
        )

    def check_address(self, address: str) -> dict[str, Any]:
        activated = self.is_activated(address)
        return {
            "address": address,
            "is_activated": activated,
            "need_activate": not activated,
            "transfer_count": 1 if self.holds(address) else 2,
        }

    def activate(self, address: str) -> dict[str, Any]:
        """Activation completes at once: its order is born successful."""
        self.advance()
        if self.is_activated(address):
            raise WorldError(
                ErrorCode.ADDRESS_ALREADY_ACTIVATED, f"address {address} is already activated"
            )
        cost = pricing.ACTIVATION_COST_SUN
        available = self.available_sun()
        if cost > available:
            raise WorldError(
                ErrorCode.INSUFFICIENT_BALANCE,
                f"insufficient available balance: need {pricing.sun_to_trx(cost)} TRX, "
                f"available {pricing.sun_to_trx(available)} TRX",
            )
        now = self.clock()
        order_id = uuid.uuid4().hex
        with self._tx() as db:
            self.set_activated(address)
            self._set_meta("balance_sun", str(self._balance_sun() - cost))
            db.execute(
                "INSERT INTO orders (order_id, kind, target_address, to_address, energy_amount,"
                " rent_time, cost_sun, energy_cost_sun, activation_sun, status, tx_hash,"
                " created_at, updated_at, processing_at, complete_at)"
                " VALUES (?, 'activate', ?, NULL, 0, '0', ?, 0, ?, 'success', ?, ?, ?, ?, ?)",
                (order_id, address, cost, cost, secrets.token_hex(32), now, now, now, now),
            )
        return self.order(order_id)

    def order(self, order_id: str) -> dict[str, Any]:
        self.advance()
        row = self.db.execute("SELECT * FROM orders WHERE order_id = ?", (order_id,)).fetchone()
        if row is None:
            raise WorldError(ErrorCode.NOT_FOUND, f"order {order_id} not found")
        return self._order_dict(row)

    @staticmethod
    def _order_dict(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "order_id": row["order_id"],
            "kind": row["kind"],
            "status": row["status"],
            "tx_hash": row["tx_hash"],
            "cost": pricing.sun_to_trx(row["cost_sun"]),
            "activation_cost": pricing.sun_to_trx(row["activation_sun"]),
            "energy_amount": row["energy_amount"],
            "rent_time": Decimal(row["rent_time"]),
            "target_address": row["target_address"],
            "to_address": row["to_address"],
            "created_at": iso(row["created_at"]),
            "updated_at": iso(row["updated_at"]),
        }

    def all_orders(self) -> list[dict[str, Any]]:
        self.advance()
        rows = self.db.execute("SELECT * FROM orders ORDER BY seq").fetchall()
        return [self._order_dict(row) for row in rows]

    def fail_next_orders(self, count: int) -> None:
        """The next ``count`` energy orders will end ``failed`` instead of ``success``."""
        self._set_meta("fail_next_orders", str(count))

    def end_order(self, order_id: str, status: str) -> dict[str, Any]:
        """Fail (pending or processing) or cancel (pending only); frozen cost is released."""
        self.advance()
        order = self.order(order_id)
        allowed = IN_FLIGHT if status == "failed" else ("pending",)
        if order["status"] not in allowed:
            raise WorldError(
                ErrorCode.INVALID_PARAMETER,
                f"order {order_id} is {order['status']}; cannot become {status}",
            )
        self.db.execute(
            "UPDATE orders SET status = ?, updated_at = ? WHERE order_id = ?",
            (status, self.clock(), order_id),
        )
        return self.order(order_id)

    # -- monitoring -----------------------------------------------------------------

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

    # -- on-chain transfers and deliveries --------------------------------------------

    def transfer(
        self, from_address: str, to_address: str, amount: Decimal, token: str
    ) -> dict[str, Any]:
        """Simulate a confirmed transfer; queue one callback per watching subscription."""
        token = token.upper()
        now = self.clock()
        tx_hash = secrets.token_hex(32)
        with self._tx() as db:
            block = int(self._meta("block_number") or 0) + 1
            self._set_meta("block_number", str(block))
            self.set_holder(to_address, token)
            if token == "TRX":
                self.set_activated(to_address)  # receiving TRX creates the account on chain
            data = {
                "tx_hash": tx_hash,
                "from": from_address,
                "to": to_address,
                "amount": format(amount.normalize(), "f"),
                "token": token,
                "block_number": block,
                "block_timestamp": int(now * 1000),
            }
            db.execute(
                "INSERT INTO transfers VALUES (?, ?, ?, ?, ?, ?, ?)",
                (tx_hash, from_address, to_address, data["amount"], token, block,
                 data["block_timestamp"]),
            )
            watch = db.execute(
                "SELECT tokens, webhook_url FROM monitored WHERE address = ? AND is_active = 1",
                (to_address,),
            ).fetchone()
            delivery_id = None
            if watch is not None and token in {t.upper() for t in json.loads(watch["tokens"])}:
                cursor = db.execute(
                    "INSERT INTO deliveries (address, tx_hash, data, url, status,"
                    " next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
                    (to_address, tx_hash, json.dumps(data), watch["webhook_url"], now, now),
                )
                delivery_id = cursor.lastrowid
        return {"tx_hash": tx_hash, "block_number": block, "delivery_id": delivery_id}

    def due_deliveries(self, exclude: set[int], limit: int = 500) -> list[DueDelivery]:
        rows = self.db.execute(
            "SELECT id, address, url, data, attempts FROM deliveries"
            " WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id"
            " LIMIT ?",
            (self.clock(), limit + len(exclude)),
        ).fetchall()
        due = [
            DueDelivery(row["id"], row["address"], row["url"], json.loads(row["data"]),
                        row["attempts"])
            for row in rows
            if row["id"] not in exclude
        ]
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
        return DueDelivery(row["id"], row["address"], row["url"], json.loads(row["data"]),
                           row["attempts"])

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
