"""TRC-20 contracts of the sandbox's own beside USDT: decimals, energy and holdings per contract.

A token is created through the control API (``chain/token_routes.py``) with its
contract address, name and symbol (either absent: that call reverts), decimals (0 to
255, a uint8: the provider accepts 0 to 36 and refuses the rest; absent: ``decimals()``
reverts, as a contract without the function does), the base energy of a ``transfer`` to a
holder and to a new holder, and its dynamic-energy factor. Holdings are kept per
(contract, address) as decimal text: an 18-decimal balance passes SQLite's 64-bit
INTEGER, so amounts stay Python ints end to end (uint256 in the ABI).

USDT is a token too, created at start at the sandbox's fixed contract: its balances
stay in ``wallets.usdt_units`` (``ledger``), its energy in the ``ParameterBook``
(``parameters``: per block, with the per-instruction truncation measured on mainnet).
The methods here answer for both, so every node route treats USDT and the others alike.

Energy (java-tron's dynamic energy, TIP-491): ``VM.play`` adds to every instruction's
energy ``penalty = energy * factor / DYNAMIC_ENERGY_FACTOR_DECIMAL - energy`` with
``factor = contract_state.energy_factor + 10_000`` (``Program.updateContextContractFactor``),
i.e. ``energy * energy_factor / 10_000`` truncated (tronprotocol/java-tron at
1e35f79a165424bbae319799d9aca92948b8f5c2: ``actuator/.../vm/VM.java``,
``vm/program/Program.java``, ``common/.../core/Constant.java``). The sandbox runs no
bytecode, so a token's transfer is one "instruction" of its base energy:
``base + base * energy_factor // 10_000``, the base a holder's or a new holder's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox.chain.ledger import ChainLedger
from tronenergy_sandbox.chain.parameters import (
    FACTOR_DECIMAL,
    MAX_ENERGY_FACTOR,
    TransferEnergy,
)
from tronenergy_sandbox.errors import WorldError

MAX_DECIMALS: Final = 255
"""The most decimals a token may have: ``decimals()`` returns a uint8 (the provider accepts
0 to 36; a token beyond is for its refusal)."""
UINT256_MAX: Final = 2**256 - 1
DEFAULT_HOLDER_ENERGY: Final = 14_631
"""A transfer to a holder at factor 0 by default: USDT's base figure (``parameters``)."""
DEFAULT_NEW_HOLDER_ENERGY: Final = 29_631
"""A transfer to a new holder at factor 0 by default: USDT's (a fresh slot adds 15,000)."""
MAX_BASE_ENERGY: Final = 10_000_000
USDT_NAME: Final = "Tether USD"
USDT_SYMBOL: Final = "USDT"
USDT_DECIMALS: Final = 6

TOKENS_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS chain_tokens (
    contract TEXT PRIMARY KEY, name TEXT, symbol TEXT, decimals INTEGER,
    holder_energy INTEGER NOT NULL, new_holder_energy INTEGER NOT NULL,
    energy_factor INTEGER NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS token_balances (
    contract TEXT NOT NULL, address TEXT NOT NULL, units TEXT NOT NULL,
    PRIMARY KEY (contract, address));
"""


@dataclass(frozen=True)
class Token:
    """A TRC-20 contract of the sandbox's own (not USDT)."""

    contract: str
    name: str | None
    """None: ``name()`` reverts."""
    symbol: str | None
    """None: ``symbol()`` reverts."""
    decimals: int | None
    """None: the contract has no ``decimals()`` (the call reverts)."""
    holder_energy: int
    new_holder_energy: int
    energy_factor: int

    def transfer_energy(self, new_slot: bool) -> int:
        """A ``transfer``'s energy: its base (new holder's or holder's) with the penalty."""
        base = self.new_holder_energy if new_slot else self.holder_energy
        return base + base * self.energy_factor // FACTOR_DECIMAL


def _row_token(row: Any) -> Token:
    return Token(contract=row["contract"], name=row["name"], symbol=row["symbol"],
                 decimals=None if row["decimals"] is None else int(row["decimals"]),
                 holder_energy=int(row["holder_energy"]),
                 new_holder_energy=int(row["new_holder_energy"]),
                 energy_factor=int(row["energy_factor"]))


def check_figures(*, decimals: int | None, holder_energy: int, new_holder_energy: int,
                  energy_factor: int) -> None:
    """Refuse figures the chain could not have (400, nothing written)."""
    if decimals is not None and not 0 <= decimals <= MAX_DECIMALS:
        raise WorldError(ErrorCode.INVALID_PARAMETER,
                         f"decimals must be between 0 and {MAX_DECIMALS}, or absent")
    for name, value in (("holder_energy", holder_energy),
                        ("new_holder_energy", new_holder_energy)):
        if not 1 <= value <= MAX_BASE_ENERGY:
            raise WorldError(ErrorCode.INVALID_PARAMETER,
                             f"{name} must be between 1 and {MAX_BASE_ENERGY}")
    if not 0 <= energy_factor <= MAX_ENERGY_FACTOR:
        raise WorldError(ErrorCode.INVALID_PARAMETER,
                         f"energy_factor must be between 0 and {MAX_ENERGY_FACTOR}")


class TokenLedger(ChainLedger):
    """Tokens and their holdings, as a part of the world's database."""

    usdt_contract: str

    def _init_tokens(self) -> None:
        self.db.executescript(TOKENS_SCHEMA)

    # -- the token table -------------------------------------------------------------------

    def create_token(self, *, contract: str, name: str | None, symbol: str | None,
                     decimals: int | None,
                     holder_energy: int = DEFAULT_HOLDER_ENERGY,
                     new_holder_energy: int = DEFAULT_NEW_HOLDER_ENERGY,
                     energy_factor: int = 0) -> dict[str, Any]:
        """Deploy a token at ``contract`` (refused if a token or USDT is there)."""
        check_figures(decimals=decimals, holder_energy=holder_energy,
                      new_holder_energy=new_holder_energy, energy_factor=energy_factor)
        if self.is_token(contract):
            raise WorldError(ErrorCode.INVALID_PARAMETER, f"a token exists at {contract}")
        with self._tx() as db:
            db.execute("INSERT INTO chain_tokens VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (contract, name, symbol, decimals, holder_energy, new_holder_energy,
                        energy_factor, self.clock()))
        return self.token_json(contract)

    def change_token(self, contract: str, changes: dict[str, int]) -> dict[str, Any]:
        """Change a token's energy figures at once (USDT's: ``POST /sandbox/chain/contract``)."""
        token = self.token(contract)
        if token is None:
            raise WorldError(ErrorCode.NOT_FOUND, f"no token of the sandbox's own at {contract}")
        figures = {"holder_energy": token.holder_energy,
                   "new_holder_energy": token.new_holder_energy,
                   "energy_factor": token.energy_factor, **changes}
        check_figures(decimals=token.decimals, **figures)
        with self._tx() as db:
            db.execute("UPDATE chain_tokens SET holder_energy = ?, new_holder_energy = ?, "
                       "energy_factor = ? WHERE contract = ?",
                       (figures["holder_energy"], figures["new_holder_energy"],
                        figures["energy_factor"], contract))
        return self.token_json(contract)

    def token(self, contract: str) -> Token | None:
        """A token of the sandbox's own at ``contract`` (None for USDT or no token)."""
        row = self.db.execute("SELECT * FROM chain_tokens WHERE contract = ?",
                              (contract,)).fetchone()
        return None if row is None else _row_token(row)

    def is_token(self, contract: str | None) -> bool:
        """Whether a TRC-20 contract (USDT or one of the sandbox's own) sits at ``contract``."""
        return contract is not None and (contract == self.usdt_contract
                                         or self.token(contract) is not None)

    def token_energy(self, contract: str, block: int | None = None) -> TransferEnergy | None:
        """The energy rules of the token at ``contract`` in ``block`` (None: no token)."""
        if contract == self.usdt_contract:
            return self.parameters.usdt(block)
        return self.token(contract)

    def token_decimals(self, contract: str) -> int | None:
        """``decimals()``; None when the contract has none (or is no token)."""
        if contract == self.usdt_contract:
            return USDT_DECIMALS
        token = self.token(contract)
        return None if token is None else token.decimals

    def token_names(self, contract: str) -> tuple[str | None, str | None]:
        """``(name(), symbol())`` of a token (None: that call reverts)."""
        if contract == self.usdt_contract:
            return USDT_NAME, USDT_SYMBOL
        token = self.token(contract)
        return (None, None) if token is None else (token.name, token.symbol)

    def token_json(self, contract: str) -> dict[str, Any]:
        """The control API's view of a token: its figures and what a transfer costs now."""
        energy = self.token_energy(contract)
        if energy is None:
            raise WorldError(ErrorCode.NOT_FOUND, f"no token at {contract}")
        name, symbol = self.token_names(contract)
        token = self.token(contract)
        shown: dict[str, Any] = {
            "contract": contract, "name": name, "symbol": symbol,
            "decimals": self.token_decimals(contract), "energy_factor": energy.energy_factor,
            "transfer_energy": {"holder": energy.transfer_energy(False),
                                "new_holder": energy.transfer_energy(True)},
            "total_supply": str(self.total_supply(contract))}
        if token is not None:
            shown.update(holder_energy=token.holder_energy,
                         new_holder_energy=token.new_holder_energy)
        return shown

    def tokens_json(self) -> list[dict[str, Any]]:
        """USDT first, then the sandbox's own tokens in the order they were created."""
        rows = self.db.execute("SELECT contract FROM chain_tokens ORDER BY created_at, contract")
        return [self.token_json(self.usdt_contract)] + [self.token_json(r[0]) for r in rows]

    # -- holdings --------------------------------------------------------------------------

    def units_of(self, contract: str, address: str) -> int:
        """``balanceOf(address)`` of the token at ``contract``, as read (head or solidified)."""
        if contract == self.usdt_contract:
            return self.usdt_units(address)
        row = self._row_as_read("token_balances", f"{contract}/{address}", lambda: self.db.execute(
            "SELECT units FROM token_balances WHERE contract = ? AND address = ?",
            (contract, address)).fetchone())
        return int(row["units"]) if row else 0

    def holds_token(self, contract: str, address: str) -> bool:
        """Whether ``address``'s balance slot in ``contract`` is written (a holder's transfer
        rewrites it; a new holder's writes a fresh one). A token of the sandbox's own: a
        non-zero balance (a slot set to zero is fresh again, as in the EVM)."""
        if contract == self.usdt_contract:
            return self.holds(address, "USDT")
        return self.units_of(contract, address) > 0

    def total_supply(self, contract: str) -> int:
        """The sum of every holding: the sandbox mints by setting holdings."""
        if contract == self.usdt_contract:
            row = self.db.execute("SELECT usdt_units FROM wallets WHERE usdt_units > 0")
            return sum(int(r[0]) for r in row)
        rows = self.db.execute("SELECT units FROM token_balances WHERE contract = ?", (contract,))
        return sum(int(r[0]) for r in rows)

    def set_units(self, contract: str, address: str, units: int) -> dict[str, Any]:
        """Set ``address``'s holding of a token (minting or burning the difference)."""
        if not self.is_token(contract):
            raise WorldError(ErrorCode.NOT_FOUND, f"no token at {contract}")
        if not 0 <= units <= UINT256_MAX:
            raise WorldError(ErrorCode.INVALID_PARAMETER, "units must be a uint256")
        if contract == self.usdt_contract:
            if units >= 2**63:
                raise WorldError(ErrorCode.INVALID_PARAMETER, "USDT units must be below 2^63")
            self.set_balances(address, trx_sun=None, usdt_units=units)
        else:
            with self._tx():
                self._write_units(contract, address, units)
        return {"contract": contract, "address": address,
                "units": str(self.units_of(contract, address))}

    def _write_units(self, contract: str, address: str, units: int) -> None:
        self.db.execute("INSERT INTO token_balances (contract, address, units) VALUES (?, ?, ?) "
                        "ON CONFLICT (contract, address) DO UPDATE SET units = excluded.units",
                        (contract, address, str(units)))

    def _move_token(self, contract: str, sender: str, to: str | None, units: int) -> None:
        """Inside a transaction: debit ``sender`` and credit ``to`` (None: only the debit)."""
        if contract == self.usdt_contract:
            self.db.execute("UPDATE wallets SET usdt_units = COALESCE(usdt_units, 0) - ? "
                            "WHERE address = ?", (units, sender))
            if units:
                self.release_if_emptied(sender)
            if to is not None:
                self._ensure_wallet(to)
                self.db.execute("UPDATE wallets SET usdt_units = COALESCE(usdt_units, 0) + ? "
                                "WHERE address = ?", (units, to))
                self.set_holder(to, "USDT")
            return
        if units:
            self._write_units(contract, sender, self.units_of(contract, sender) - units)
            if to is not None:
                self._write_units(contract, to, self.units_of(contract, to) + units)
