"""Chain state: which addresses are activated, which hold a token, confirmed transfers.

What the chain knows decides a transfer's energy (a first transfer to an address
writes a new slot; USDT's base energy and factor are the chain's parameters) and
whether energy can be delegated at all.
"""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from tronenergy_sandbox import pricing
from tronenergy_sandbox.chain.parameters import ParameterBook
from tronenergy_sandbox.chain.solid import SolidState


class ChainState(SolidState):
    parameters: ParameterBook
    """The chain's fees and USDT's energy per block (the world sets it)."""

    def is_activated(self, address: str) -> bool:
        row = self._row_as_read("chain_accounts", address, lambda: self.db.execute(
            "SELECT activated FROM chain_accounts WHERE address = ?", (address,)).fetchone())
        return bool(row and row["activated"])

    def holds(self, address: str, token: str = pricing.TOKEN_FOR_ESTIMATES) -> bool:
        row = self._row_as_read("holdings", f"{address}/{token.upper()}", lambda: self.db.execute(
            "SELECT 1 FROM holdings WHERE address = ? AND token = ?", (address, token.upper())
        ).fetchone())
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

    def release_if_emptied(self, address: str) -> None:
        """A tracked wallet whose USDT balance is now zero holds no slot any more: the next
        transfer to it writes a new one (the contract zeroes the slot; an exchange's swept
        deposit address costs a first transfer again)."""
        self.db.execute(
            "DELETE FROM holdings WHERE address = ? AND token = 'USDT' AND EXISTS "
            "(SELECT 1 FROM wallets WHERE address = ? AND usdt_units = 0)", (address, address))

    def transfer_energy(self, to_address: str) -> int:
        """Energy a USDT transfer to ``to_address`` costs now, by the read block's parameters
        (the node's estimates; the solidified block's on ``/walletsolidity``): a first
        transfer writes a new slot."""
        usdt = self.parameters.usdt(self.read_block())
        return usdt.transfer_energy(new_slot=not self.holds(to_address))

    def check_address(self, address: str) -> dict[str, Any]:
        activated = self.is_activated(address)
        return {
            "address": address,
            "is_activated": activated,
            "need_activate": not activated,
            "transfer_count": 1 if self.holds(address) else 2,
        }

    def _confirm_transfer(
        self, from_address: str, to_address: str, amount: Decimal, token: str, now: float
    ) -> dict[str, Any]:
        """Write one confirmed transfer in the head block; return its callback data.

        Runs inside the caller's transaction. ``token`` is already upper-case.
        """
        tx_hash = secrets.token_hex(32)
        block = self.head_number(now)
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
            "block_timestamp": int(self.block_time(block) * 1000),
        }
        self.db.execute(
            "INSERT INTO transfers VALUES (?, ?, ?, ?, ?, ?, ?)",
            (tx_hash, from_address, to_address, data["amount"], token, block,
             data["block_timestamp"]),
        )
        return data
