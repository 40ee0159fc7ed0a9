"""The pending state: what transactions accepted and not yet in a block will move.

java-tron checks a new transaction in a session that holds every pending
transaction's effects (``Manager.pushTransaction`` runs ``processTransaction`` in a
``revokingStore`` session merged into the pending one:
``framework/src/main/java/org/tron/core/db/Manager.java``), so a spend still waiting
for its block counts at broadcast, and so does money on its way in. Here each
accepted transaction's effects on its owner and recipient (TRX, energy and
bandwidth used, activation; token units and holding per contract, as text: an
18-decimal amount passes SQLite's 64-bit INTEGER) are kept per address until its
block packs it, and a broadcast check reads the accounts with them added: one
indexed read per party, whatever the pool's size.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tronenergy_sandbox.chain.charging import AccountState, Outcome
from tronenergy_sandbox.chain.codec import TRANSFER, TRIGGER, Decoded
from tronenergy_sandbox.database import Database

PENDING_SCHEMA = """
CREATE TABLE IF NOT EXISTS chain_pending_effects (
    txid TEXT NOT NULL, address TEXT NOT NULL, trx_sun INTEGER NOT NULL,
    usdt_units INTEGER NOT NULL, energy INTEGER NOT NULL, net INTEGER NOT NULL,
    free_net INTEGER NOT NULL, activates INTEGER NOT NULL, holds INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chain_pending_effects_address ON chain_pending_effects (address);
CREATE INDEX IF NOT EXISTS chain_pending_effects_txid ON chain_pending_effects (txid);
CREATE TABLE IF NOT EXISTS chain_pending_units (
    txid TEXT NOT NULL, contract TEXT NOT NULL, address TEXT NOT NULL, units TEXT NOT NULL,
    holds INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chain_pending_units_address ON chain_pending_units (address);
CREATE INDEX IF NOT EXISTS chain_pending_units_txid ON chain_pending_units (txid);
"""


@dataclass(frozen=True)
class Effect:
    """What one transaction moves for one address (spends negative, usage positive)."""

    address: str
    trx_sun: int = 0
    units: int = 0
    """Units of the token the transaction calls (``contract``)."""
    energy: int = 0
    net: int = 0
    free_net: int = 0
    activates: bool = False
    holds: bool = False
    contract: str | None = None


def effects(tx: Decoded, outcome: Outcome) -> list[Effect]:
    """The owner's and the recipient's effects of ``tx`` executed as ``outcome``; the same
    moves ``ChainTransactions._apply`` writes when the block comes."""
    assert tx.owner is not None
    staked = outcome.net_usage if outcome.staked_net else 0
    contract = tx.contract_address if tx.contract_type == TRIGGER else None
    moved = [Effect(tx.owner, trx_sun=-outcome.owner_trx_spent, units=-outcome.units_moved,
                    energy=outcome.energy_usage, net=staked,
                    free_net=outcome.net_usage - staked, contract=contract)]
    if outcome.recipient is not None and not outcome.failed:
        moved.append(Effect(outcome.recipient, trx_sun=outcome.trx_moved,
                            units=outcome.units_moved,
                            activates=tx.contract_type == TRANSFER,
                            holds=contract is not None and outcome.units_moved > 0,
                            contract=contract))
    return moved


class PendingEffects(Database):
    """The pending transactions' effects, as a part of the world's database."""

    def _init_pending(self) -> None:
        self.db.executescript(PENDING_SCHEMA)

    def _hold_pending(self, txid: str, moved: list[Effect]) -> None:
        """Keep an accepted transaction's effects until its block packs (or drops) it."""
        self._release_pending(txid)
        self.db.executemany(
            "INSERT INTO chain_pending_effects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(txid, e.address, e.trx_sun, 0, e.energy, e.net, e.free_net,
              int(e.activates), 0) for e in moved])
        self.db.executemany(
            "INSERT INTO chain_pending_units VALUES (?, ?, ?, ?, ?)",
            [(txid, e.contract, e.address, str(e.units), int(e.holds)) for e in moved
             if e.contract is not None and (e.units or e.holds)])

    def _release_pending(self, txid: str) -> None:
        self.db.execute("DELETE FROM chain_pending_effects WHERE txid = ?", (txid,))
        self.db.execute("DELETE FROM chain_pending_units WHERE txid = ?", (txid,))

    def _with_pending(self, state: AccountState, contract: str | None = None) -> AccountState:
        """``state`` with what the pending transactions move for it added (its units and
        holding of ``contract``, the token the transaction calls)."""
        row = self.db.execute(
            "SELECT COUNT(*), SUM(trx_sun), SUM(energy), SUM(net), "
            "SUM(free_net), MAX(activates) FROM chain_pending_effects "
            "WHERE address = ?", (state.address,)).fetchone()
        if not row[0]:
            return state
        units = self.db.execute(
            "SELECT units, holds FROM chain_pending_units WHERE address = ? AND contract = ?",
            (state.address, contract)).fetchall() if contract is not None else []
        return replace(
            state, exists=state.exists or bool(row[5]), trx_sun=state.trx_sun + int(row[1]),
            token_units=state.token_units + sum(int(u["units"]) for u in units),
            energy_left=max(0, state.energy_left - int(row[2])),
            net_left=max(0, state.net_left - int(row[3])),
            free_net_left=max(0, state.free_net_left - int(row[4])),
            holds_token=state.holds_token or any(u["holds"] for u in units))
