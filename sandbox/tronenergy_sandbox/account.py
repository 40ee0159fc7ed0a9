"""The account's ledger: balance, the cost frozen by orders in flight, what is available.

The balance is one meta value; the frozen amount is derived from the orders table
(the energy cost of every pending or processing order), so it can never drift
from the orders that froze it.
"""

from __future__ import annotations

from typing import Any

from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox import pricing
from tronenergy_sandbox.database import Database
from tronenergy_sandbox.errors import WorldError

IN_FLIGHT = ("pending", "processing")
"""Order statuses whose energy cost is frozen: not yet spent, not yet available."""


class AccountLedger(Database):
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

    def _require_available(self, need_sun: int) -> None:
        """Refuse an order the available balance (balance minus frozen) cannot pay."""
        available = self.available_sun()
        if need_sun > available:
            raise WorldError(
                ErrorCode.INSUFFICIENT_BALANCE,
                f"insufficient available balance: need {pricing.sun_to_trx(need_sun)} TRX, "
                f"available {pricing.sun_to_trx(available)} TRX",
            )

    def _spend(self, sun: int) -> None:
        """Take ``sun`` off the balance (inside the caller's transaction)."""
        self._set_meta("balance_sun", str(self._balance_sun() - sun))

    def set_balance(self, balance_sun: int) -> None:
        self._set_meta("balance_sun", str(balance_sun))

    def account_summary(self) -> dict[str, Any]:
        """The account as the ledger stands now; the world settles due orders first."""
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
