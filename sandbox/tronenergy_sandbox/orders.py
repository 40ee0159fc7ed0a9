"""Energy orders: placement, their timed progression, activation, reads and ending.

An order freezes its energy cost when placed (``pending``), turns ``processing``
after 1 s and ``success`` after 3 s (times the time-scale); success spends the
frozen cost. Progression is lazy: every read first calls :meth:`advance`.
"""

from __future__ import annotations

import secrets
import sqlite3
import uuid
from decimal import Decimal
from typing import Any

from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox import pricing
from tronenergy_sandbox.account import IN_FLIGHT, AccountLedger
from tronenergy_sandbox.chain.ledger import ChainLedger
from tronenergy_sandbox.database import iso
from tronenergy_sandbox.errors import WorldError

# Order progression at time-scale 1.0, in seconds after creation.
PROCESSING_AFTER = 1.0
SUCCESS_AFTER = 3.0

_INSERT_ORDER = (
    "INSERT INTO orders (order_id, kind, target_address, to_address, energy_amount,"
    " rent_time, cost_sun, energy_cost_sun, activation_sun, status, tx_hash,"
    " created_at, updated_at, processing_at, complete_at, outcome)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class OrderBook(ChainLedger, AccountLedger):
    def advance(self) -> None:
        """Move every order whose time has come; success spends its frozen amount."""
        now = self.clock()
        due = self.db.execute(
            "SELECT order_id, energy_cost_sun, outcome, target_address, energy_amount,"
            " rent_time, complete_at FROM orders "
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
                # A withheld delegation: success at the service, nothing on chain.
                tx_hash = secrets.token_hex(32) if row["outcome"] == "withheld" else \
                    self._delegate(row["order_id"], row["target_address"],
                                   row["energy_amount"], float(row["rent_time"]),
                                   row["complete_at"])
                db.execute(
                    "UPDATE orders SET status = 'success', tx_hash = ?, updated_at = ? "
                    "WHERE order_id = ?",
                    (tx_hash, now, row["order_id"]),
                )
                self._spend(row["energy_cost_sun"])
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
        self._require_available(total)
        now = self.clock()
        order_id = uuid.uuid4().hex
        with self._tx() as db:
            outcome = "success"
            failing = int(self._meta("fail_next_orders") or 0)
            withholding = int(self._meta("withhold_next_orders") or 0)
            if failing > 0:
                outcome = "failed"
                self._set_meta("fail_next_orders", str(failing - 1))
            elif withholding > 0:
                outcome = "withheld"
                self._set_meta("withhold_next_orders", str(withholding - 1))
            if activate_to and to_address is not None:
                self.set_activated(to_address)
                self._spend(activation)
            db.execute(
                _INSERT_ORDER,
                (
                    order_id, kind, target, to_address, energy, str(rent_time), total,
                    energy_cost, activation, "pending", "", now, now,
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
        return self._transfer_order("auto_buy", from_address, to_address, rent_time)

    def smart_buy(
        self, receiver: str, to_address: str, from_address: str, rent_time: Decimal
    ) -> dict[str, Any]:
        del from_address  # the simulated transfer's sender changes nothing in this model
        return self._transfer_order("smart_buy", receiver, to_address, rent_time,
                                    activate_to=not self.is_activated(to_address))

    def _transfer_order(
        self, kind: str, target: str, to_address: str, rent_time: Decimal,
        *, activate_to: bool = False,
    ) -> dict[str, Any]:
        """An order sized for one token transfer to ``to_address`` by the service's own rule
        (65,000 or 131,000, its price list: decisions.md section 5), not the chain's figure."""
        first = not self.holds(to_address)
        return self._place_order(
            kind=kind,
            target=target,
            to_address=to_address,
            energy=pricing.ENERGY_FIRST_TRANSFER if first else pricing.ENERGY_PER_TRANSFER,
            rent_time=rent_time,
            activate_to=activate_to,
        )

    def activate(self, address: str) -> dict[str, Any]:
        """Activation completes at once: its order is born successful."""
        self.advance()
        if self.is_activated(address):
            raise WorldError(
                ErrorCode.ADDRESS_ALREADY_ACTIVATED, f"address {address} is already activated"
            )
        cost = pricing.ACTIVATION_COST_SUN
        self._require_available(cost)
        now = self.clock()
        order_id = uuid.uuid4().hex
        with self._tx() as db:
            self.set_activated(address)
            self._spend(cost)
            db.execute(
                _INSERT_ORDER,
                (order_id, "activate", address, None, 0, "0", cost, 0, cost, "success",
                 secrets.token_hex(32), now, now, now, now, "success"),
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

    def withhold_next_delegations(self, count: int) -> None:
        """The next ``count`` orders succeed at the service but never reach the chain."""
        self._set_meta("withhold_next_orders", str(count))

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
