"""The chain as a node sees it: balances, energy and bandwidth, delegations.

What the sandbox's node API (``sandbox/node.py``, ``chain/routes.py``) answers
from. TRX in sun, USDT in micro-units, energy and bandwidth as integers. An
address's USDT is *tracked* once set through the control API; an untracked sender
of a simulated transfer (``POST /sandbox/transfers``) stands for the outside world
(it is not debited). Rented energy is a delegation: it is
written when an order succeeds (``OrderBook.advance``) and counts towards the
target's ``EnergyLimit`` until its rent time (time-scaled) ends.
"""

from __future__ import annotations

import secrets
from typing import Any, NamedTuple

from tronenergy_protocol.codes import ErrorCode
from tronenergy_protocol.energy import BANDWIDTH_PER_TRANSFER
from tronenergy_sandbox import pricing
from tronenergy_sandbox.chain.accounts import ChainState
from tronenergy_sandbox.chain.recovery import consumed, recovered
from tronenergy_sandbox.errors import WorldError

USDT_UNITS = 1_000_000
"""USDT's 6 decimals."""
SEEDED_HOLDING = USDT_UNITS
"""What a USDT holder seeded without a balance holds (``seed_holder``)."""
FREE_NET_LIMIT = 600
"""Free bandwidth per address per day."""

LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS wallets (
    address TEXT PRIMARY KEY, trx_sun INTEGER NOT NULL DEFAULT 0, usdt_units INTEGER,
    energy_staked INTEGER NOT NULL DEFAULT 0, energy_used INTEGER NOT NULL DEFAULT 0,
    free_net_used INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL,
    net_staked INTEGER NOT NULL DEFAULT 0, net_used INTEGER NOT NULL DEFAULT 0,
    energy_time INTEGER NOT NULL DEFAULT 0, net_time INTEGER NOT NULL DEFAULT 0,
    free_net_time INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS delegations (
    tx_hash TEXT PRIMARY KEY, order_id TEXT NOT NULL, address TEXT NOT NULL,
    energy INTEGER NOT NULL, block_number INTEGER NOT NULL, at REAL NOT NULL,
    until REAL NOT NULL, returned INTEGER NOT NULL DEFAULT 0);
"""


class Usage(NamedTuple):
    """Energy, staked bandwidth and free bandwidth used, as of one block."""

    energy: int
    net: int
    free_net: int


class ChainLedger(ChainState):
    recovers: bool = True
    """Whether usage recovers (``recovery``); False: it only grows (``--no-resource-recovery``)."""

    def _init_ledger(self) -> None:
        """Create the tables; a state from before staked bandwidth (or recovering usage) gains
        its columns (a usage without its slot, 0, is taken as it stands until next used)."""
        self.db.executescript(LEDGER_SCHEMA)
        for table, column in (("wallets", "net_staked"), ("wallets", "net_used"),
                              ("wallets", "energy_time"), ("wallets", "net_time"),
                              ("wallets", "free_net_time"), ("delegations", "returned")):
            columns = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            if column not in columns:
                self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} "
                                "INTEGER NOT NULL DEFAULT 0")
        self.db.execute("CREATE INDEX IF NOT EXISTS delegations_open "
                        "ON delegations (returned, until)")

    def advance(self) -> None:
        """Bring orders up to now (``OrderBook`` does); reads call it first."""

    def _wallet_row(self, address: str) -> Any:
        return self._row_as_read("wallets", address, lambda: self.db.execute(
            "SELECT * FROM wallets WHERE address = ?", (address,)).fetchone())

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
                else:
                    self.release_if_emptied(address)
        return self.wallet(address)

    def seed_holder(self, address: str, token: str = pricing.TOKEN_FOR_ESTIMATES) -> None:
        """Make ``address`` a holder of ``token``; a USDT holder holding none gets
        :data:`SEEDED_HOLDING` (1 USDT), so its balance (``balanceOf``, a multicall) and
        what a transfer to it is charged (a holder's slot) agree."""
        with self._tx() as db:
            self.set_holder(address, token)
            if token.upper() == "USDT" and self.usdt_units(address) == 0:
                self._ensure_wallet(address)
                db.execute("UPDATE wallets SET usdt_units = ? WHERE address = ?",
                           (SEEDED_HOLDING, address))

    def set_energy(self, address: str, *, staked: int | None, used: int | None) -> dict[str, Any]:
        """Set the staked baseline and/or the energy used."""
        with self._tx() as db:
            self._ensure_wallet(address)
            if staked is not None:
                db.execute("UPDATE wallets SET energy_staked = ? WHERE address = ?",
                           (staked, address))
            if used is not None:
                db.execute("UPDATE wallets SET energy_used = ?, energy_time = ? "
                           "WHERE address = ?", (used, self.head_number(), address))
        return self.wallet(address)

    def set_bandwidth(self, address: str, *, staked: int | None,
                      used: int | None) -> dict[str, Any]:
        """Set the staked bandwidth and/or the staked bandwidth used."""
        with self._tx() as db:
            self._ensure_wallet(address)
            if staked is not None:
                db.execute("UPDATE wallets SET net_staked = ? WHERE address = ?",
                           (staked, address))
            if used is not None:
                db.execute("UPDATE wallets SET net_used = ?, net_time = ? WHERE address = ?",
                           (used, self.head_number(), address))
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
                "free_net_used": resources["freeNetUsed"],
                "net_limit": resources["NetLimit"], "net_used": resources["NetUsed"]}

    def usdt_units(self, address: str) -> int:
        row = self._wallet_row(address)
        return int(row["usdt_units"] or 0) if row else 0

    def resources(self, address: str) -> dict[str, int]:
        """``getaccountresource``'s figures, rented energy counted while it runs, usage
        recovered to the head block (``recovery``; the solidified one inside ``solidified``)."""
        self.advance()
        row = self._wallet_row(address)
        used = self._usage(row, self.read_block())
        # java-tron's Wallet.getAccountResource: freeNetLimit is getFreeNetLimit, as in force
        free = self.parameters.current(self.read_block()).free_net_limit
        return {"freeNetLimit": free, "freeNetUsed": used.free_net,
                "NetLimit": row["net_staked"] if row else 0, "NetUsed": used.net,
                "EnergyLimit": self._energy_limit(address, self.read_time()),
                "EnergyUsed": used.energy}

    def _usage(self, row: Any, slot: int) -> Usage:
        """A wallet row's usage as read at block ``slot``: each decayed from its last slot."""
        if row is None:
            return Usage(0, 0, 0)
        if not self.recovers:
            return Usage(int(row["energy_used"]), int(row["net_used"]), int(row["free_net_used"]))
        return Usage(recovered(int(row["energy_used"]), int(row["energy_time"]), slot),
                     recovered(int(row["net_used"]), int(row["net_time"]), slot),
                     recovered(int(row["free_net_used"]), int(row["free_net_time"]), slot))

    def _consume(self, address: str, slot: int, *, energy: int, net: int,
                 staked_net: bool) -> None:
        """Charge energy and bandwidth used in block ``slot``: each usage decayed, then added,
        and its slot moved (java-tron moves ``latest_consume_time*`` only when it charges)."""
        row = self._wallet_row(address)
        charges = [("energy", energy), ("net" if staked_net else "free_net", net)]
        for name, cost in charges:
            if cost:
                before = int(row[f"{name}_used"])
                usage = consumed(before, int(row[f"{name}_time"]), slot, cost) \
                    if self.recovers else before + cost
                self.db.execute(f"UPDATE wallets SET {name}_used = ?, {name}_time = ? "
                                "WHERE address = ?", (usage, slot, address))

    def consume_times(self, address: str) -> dict[str, int]:
        """The block timestamps (ms) of each resource's last use; 0 for never."""
        row = self._wallet_row(address)
        if row is None:
            return {"energy": 0, "net": 0, "free_net": 0}
        return {name: int(self.block_time(int(row[f"{name}_time"])) * 1000)
                if int(row[f"{name}_time"]) > 0 else 0 for name in ("energy", "net", "free_net")}

    def _energy_limit(self, address: str, at: float) -> int:
        """Staked energy plus the delegations running at ``at``."""
        row = self.db.execute(
            "SELECT COALESCE(SUM(energy), 0) FROM delegations "
            "WHERE address = ? AND at <= ? AND until > ?", (address, at, at)).fetchone()
        wallet = self._wallet_row(address)
        return int(row[0]) + (int(wallet["energy_staked"]) if wallet else 0)

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
            self.release_if_emptied(from_address)
        self._ensure_wallet(to_address)
        self.db.execute("UPDATE wallets SET usdt_units = COALESCE(usdt_units, 0) + ? "
                        "WHERE address = ?", (units, to_address))

    def _delegate(self, order_id: str, address: str, energy: int, rent_hours: float,
                  at: float) -> str:
        """Inside ``advance``'s transaction: the delegation of an order that succeeded at ``at``.

        It lands in the block produced by then, and its energy counts from ``at``.
        """
        tx_hash = secrets.token_hex(32)
        until = at + rent_hours * 3600 * self.time_scale
        self.db.execute("INSERT INTO delegations (tx_hash, order_id, address, energy, "
                        "block_number, at, until) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (tx_hash, order_id, address, energy, self.head_number(at), at, until))
        return tx_hash

    def _return_delegations(self, by: float) -> None:
        """Inside a transaction: end the delegations whose rent time ran out by ``by``.

        java-tron (``UnDelegateResourceActuator``) moves the receiver's energy usage back
        with the energy withdrawn, in proportion to its share of the receiver's energy:
        energy rented and used does not stay "used" on the receiver after the rental.
        """
        ended = self.db.execute(
            "SELECT tx_hash, address, energy, until FROM delegations "
            "WHERE returned = 0 AND until <= ? ORDER BY until", (by,)).fetchall()
        for row in ended:
            limit = self._energy_limit(row["address"], row["until"] - 1e-6)
            wallet = self._wallet_row(row["address"])
            if wallet is not None and limit > 0:
                slot = self.head_number(row["until"])
                used = self._usage(wallet, slot).energy
                moved = min(int(row["energy"]), used * int(row["energy"]) // limit)
                with self._writing_in(slot):
                    self.db.execute("UPDATE wallets SET energy_used = ?, energy_time = ? "
                                    "WHERE address = ?", (used - moved, slot, row["address"]))
            self.db.execute("UPDATE delegations SET returned = 1 WHERE tx_hash = ?",
                            (row["tx_hash"],))

    def simulated_receipt(self, tx_hash: str, *, solidified: bool) -> dict[str, Any]:
        """A delegation's or a simulated transfer's receipt, else ``{}``.

        Both are system transactions: no energy, a fixed bandwidth, no ``fee``.
        """
        self.advance()
        row = self.db.execute("SELECT block_number FROM delegations WHERE tx_hash = ?",
                              (tx_hash,)).fetchone()
        if row is None:
            row = self.db.execute("SELECT block_number FROM transfers WHERE tx_hash = ?",
                                  (tx_hash,)).fetchone()
        last = self.solid_number() if solidified else self.head_number()
        if row is None or row["block_number"] > last:
            return {}
        block = int(row["block_number"])
        return {"id": tx_hash, "blockNumber": block,
                "blockTimeStamp": int(self.block_time(block) * 1000), "contractResult": [""],
                "receipt": {"net_usage": 280, "result": "SUCCESS"}}
