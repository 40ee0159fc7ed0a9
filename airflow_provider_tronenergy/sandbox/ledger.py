"""The chain as a node sees it: balances, energy and bandwidth, delegations, blocks.

What the sandbox's node API (``sandbox/node.py``) answers from. TRX in sun, USDT
in micro-units, energy and bandwidth as integers. An address's USDT is *tracked*
once set through the control API; an untracked sender of a transfer stands for
the outside world (it is not debited). Rented energy is a delegation: it is
written when an order succeeds (``OrderBook.advance``) and counts towards the
target's ``EnergyLimit`` until its rent time (time-scaled) ends.
"""

from __future__ import annotations

import secrets
from typing import Any

from airflow_provider_tronenergy.protocol.codes import ErrorCode
from airflow_provider_tronenergy.protocol.energy import BANDWIDTH_PER_TRANSFER
from airflow_provider_tronenergy.sandbox.chain.accounts import ChainState
from airflow_provider_tronenergy.sandbox.errors import WorldError

USDT_UNITS = 1_000_000
"""USDT's 6 decimals."""
FREE_NET_LIMIT = 600
"""Free bandwidth per address per day."""
SOLIDIFY_AFTER = 57.0
"""Seconds (at time-scale 1.0) until a block is solidified: 19 blocks of 3 s."""

LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS wallets (
    address TEXT PRIMARY KEY, trx_sun INTEGER NOT NULL DEFAULT 0, usdt_units INTEGER,
    energy_staked INTEGER NOT NULL DEFAULT 0, energy_used INTEGER NOT NULL DEFAULT 0,
    free_net_used INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS delegations (
    tx_hash TEXT PRIMARY KEY, order_id TEXT NOT NULL, address TEXT NOT NULL,
    energy INTEGER NOT NULL, block_number INTEGER NOT NULL, at REAL NOT NULL,
    until REAL NOT NULL);
"""


class ChainLedger(ChainState):
    def advance(self) -> None:
        """Bring orders up to now (``OrderBook`` does); reads call it first."""

    def _wallet_row(self, address: str) -> Any:
        return self.db.execute("SELECT * FROM wallets WHERE address = ?", (address,)).fetchone()

    def _ensure_wallet(self, address: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO wallets (address, created_at) VALUES (?, ?)",
                        (address, self.clock()))

    def set_balances(self, address: str, *, trx_sun: int | None,
                     usdt_units: int | None) -> dict[str, Any]:
        """Set TRX and/or USDT; TRX > 0 activates, USDT > 0 makes a holder."""
        with self._tx() as db:
            self._ensure_wallet(address)
            if trx_sun is not None:
                db.execute("UPDATE wallets SET trx_sun = ? WHERE address = ?", (trx_sun, address))
                if trx_sun > 0:
                    self.set_activated(address)
            if usdt_units is not None:
                db.execute("UPDATE wallets SET usdt_units = ? WHERE address = ?",
                           (usdt_units, address))
                if usdt_units > 0:
                    self.set_holder(address, "USDT")
        return self.wallet(address)

    def set_energy(self, address: str, *, staked: int | None, used: int | None) -> dict[str, Any]:
        """Set the staked baseline and/or the energy used."""
        with self._tx() as db:
            self._ensure_wallet(address)
            if staked is not None:
                db.execute("UPDATE wallets SET energy_staked = ? WHERE address = ?",
                           (staked, address))
            if used is not None:
                db.execute("UPDATE wallets SET energy_used = ? WHERE address = ?",
                           (used, address))
        return self.wallet(address)

    def wallet(self, address: str) -> dict[str, Any]:
        """The control API's view of an address (balances as integers)."""
        row = self._wallet_row(address)
        resources = self.resources(address)
        return {"address": address, "activated": self.is_activated(address),
                "trx_sun": row["trx_sun"] if row else 0,
                "usdt_units": row["usdt_units"] if row and row["usdt_units"] is not None else 0,
                "energy_limit": resources["EnergyLimit"],
                "energy_used": resources["EnergyUsed"],
                "free_net_used": resources["freeNetUsed"]}

    def usdt_units(self, address: str) -> int:
        row = self._wallet_row(address)
        return int(row["usdt_units"] or 0) if row else 0

    def resources(self, address: str) -> dict[str, int]:
        """``getaccountresource``'s figures, rented energy counted while it runs."""
        self.advance()
        row = self._wallet_row(address)
        now = self.clock()
        rented = self.db.execute(
            "SELECT COALESCE(SUM(energy), 0) FROM delegations "
            "WHERE address = ? AND at <= ? AND until > ?", (address, now, now)).fetchone()[0]
        return {"freeNetLimit": FREE_NET_LIMIT,
                "freeNetUsed": row["free_net_used"] if row else 0,
                "NetLimit": 0, "NetUsed": 0,
                "EnergyLimit": (row["energy_staked"] if row else 0) + int(rented),
                "EnergyUsed": row["energy_used"] if row else 0}

    def _move_usdt(self, from_address: str, to_address: str, units: int) -> None:
        """Inside the transfer's transaction: debit a tracked sender, credit the recipient."""
        sender = self._wallet_row(from_address)
        if sender is not None and sender["usdt_units"] is not None:
            if sender["usdt_units"] < units:
                raise WorldError(ErrorCode.INVALID_PARAMETER,
                                 f"{from_address} holds {sender['usdt_units']} USDT units, "
                                 f"cannot send {units}")
            self.db.execute(
                "UPDATE wallets SET usdt_units = usdt_units - ?, "
                "free_net_used = MIN(?, free_net_used + ?) WHERE address = ?",
                (units, FREE_NET_LIMIT, BANDWIDTH_PER_TRANSFER, from_address))
        self._ensure_wallet(to_address)
        self.db.execute("UPDATE wallets SET usdt_units = COALESCE(usdt_units, 0) + ? "
                        "WHERE address = ?", (units, to_address))

    def _delegate(self, order_id: str, address: str, energy: int, rent_hours: float,
                  now: float) -> str:
        """Inside ``advance``'s transaction: the delegation of a successful order."""
        tx_hash = secrets.token_hex(32)
        block = self._next_block()
        until = now + rent_hours * 3600 * self.time_scale
        self.db.execute("INSERT INTO delegations VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (tx_hash, order_id, address, energy, block, now, until))
        return tx_hash

    def _next_block(self) -> int:
        block = int(self._meta("block_number") or 0) + 1
        self._set_meta("block_number", str(block))
        return block

    def transaction_info(self, tx_hash: str, *, solidified: bool) -> dict[str, Any]:
        """``gettransactioninfobyid``: a delegation's or a transfer's receipt, else ``{}``."""
        self.advance()
        now = self.clock()
        row = self.db.execute("SELECT block_number, at FROM delegations WHERE tx_hash = ?",
                              (tx_hash,)).fetchone()
        if row is None:
            row = self.db.execute(
                "SELECT block_number, block_timestamp / 1000.0 AS at FROM transfers "
                "WHERE tx_hash = ?", (tx_hash,)).fetchone()
        if row is None or (solidified and now < row["at"] + SOLIDIFY_AFTER * self.time_scale):
            return {}
        return {"id": tx_hash, "blockNumber": row["block_number"],
                "blockTimeStamp": int(row["at"] * 1000), "contractResult": [""],
                "receipt": {"net_usage": 280, "result": "SUCCESS"}}

    def now_block(self, *, solidified: bool = False) -> dict[str, int]:
        """The head block (or, solidified, the one about 19 blocks back)."""
        number = int(self._meta("block_number") or 0) - (19 if solidified else 0)
        return {"number": number, "timestamp": int(self.clock() * 1000)}
