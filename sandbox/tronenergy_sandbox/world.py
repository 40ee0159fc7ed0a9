"""The sandbox's world: account, chain state, orders, monitoring and deliveries.

Everything lives in one SQLite database (a file with ``--state``, else memory),
so a restarted sandbox continues where it stopped. All calls run on the event
loop's thread, one at a time, which makes each operation atomic without locks.
Amounts are integer sun; the HTTP layer converts them to TRX decimals.

:class:`World` is the one entry point: it opens the database and joins the parts,
each a mixin in its own module over :class:`~.database.Database` (one connection,
one transaction discipline). Operations that span parts live here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from tronenergy_protocol.address import random_address
from tronenergy_sandbox import pricing
from tronenergy_sandbox.account import IN_FLIGHT
from tronenergy_sandbox.chain.ledger import USDT_UNITS
from tronenergy_sandbox.chain.parameters import ParameterBook
from tronenergy_sandbox.chain.transactions import ChainTransactions
from tronenergy_sandbox.credentials import Credentials, CredentialStore
from tronenergy_sandbox.database import SCHEMA, iso
from tronenergy_sandbox.deliveries import RETRY_DELAYS, DeliveryQueue, DueDelivery
from tronenergy_sandbox.errors import WorldError
from tronenergy_sandbox.monitoring import Monitoring
from tronenergy_sandbox.orders import PROCESSING_AFTER, SUCCESS_AFTER, OrderBook

__all__ = [
    "IN_FLIGHT",
    "PROCESSING_AFTER",
    "RETRY_DELAYS",
    "SCHEMA",
    "SUCCESS_AFTER",
    "Credentials",
    "DueDelivery",
    "World",
    "WorldError",
    "iso",
]


class World(CredentialStore, ChainTransactions, OrderBook, Monitoring, DeliveryQueue):
    def __init__(
        self,
        path: str | None = None,
        *,
        balance_sun: int = 1000 * pricing.SUN_PER_TRX,
        time_scale: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(path, time_scale=time_scale, clock=clock)
        self.parameters = ParameterBook(self.db)
        """The chain's fees and USDT's energy, per block (a proposal changes them)."""
        self._init_ledger()
        self._init_blocks()
        self._init_transactions()
        self._init_tokens()
        self._init_undo()  # after every account table: its triggers name their columns
        self._meta_default("balance_sun", str(balance_sun))
        self._meta_default("user_id", "10001")
        self._meta_default("username", "sandbox@example.com")
        self._meta_default("recharge_address", random_address())

    price = staticmethod(pricing.quote)

    def account(self) -> dict[str, Any]:
        """The account after every due order has settled (success spends its frozen cost)."""
        self.advance()
        return self.account_summary()

    def transfer(
        self, from_address: str, to_address: str, amount: Decimal, token: str
    ) -> dict[str, Any]:
        """Simulate a confirmed transfer; queue one callback per watching subscription."""
        token = token.upper()
        now = self.clock()
        with self._tx():
            if token == "USDT":  # moves balances: the node API reads them
                self._move_usdt(from_address, to_address, int(amount * USDT_UNITS))
            data = self._confirm_transfer(from_address, to_address, amount, token, now)
            url = self._watching_url(to_address, token)
            delivery_id = None if url is None else self._enqueue(to_address, data, url, now)
        return {"tx_hash": data["tx_hash"], "block_number": data["block_number"],
                "delivery_id": delivery_id}
