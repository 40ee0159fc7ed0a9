"""The chain's parameters: fees (a proposal changes them) and USDT's dynamic energy.

Both are kept per block in the world's database: a change is recorded with the
block it applies from, so a fee proposal passing or USDT's energy factor moving
changes what the next block charges, never a block already produced.

USDT's energy follows java-tron's dynamic-energy rule (TIP-491): every
instruction of the contract costs its base energy plus a penalty of
``cost * energy_factor / 10_000``, truncated per instruction. See
:meth:`ContractEnergy.transfer_energy` and docs/decisions.md for how the
defaults give the chain's figures (64,285 energy to a holder, 130,285 to a
first-time recipient).
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, replace
from typing import Any, Final, Protocol

from tronenergy_sandbox.errors import SandboxError

FACTOR_DECIMAL: Final = 10_000
"""java-tron's ``DYNAMIC_ENERGY_FACTOR_DECIMAL``: an energy_factor of 10,000 adds 100 %."""

MAX_ENERGY_FACTOR: Final = 100_000
"""java-tron's ``DYNAMIC_ENERGY_MAX_FACTOR_RANGE``: the highest factor a proposal can allow."""

NEW_SLOT_ENERGY: Final = 15_000
"""What a new storage slot adds: SSTORE of a fresh slot (20,000) instead of a reset (5,000)."""

TRUNCATED_AT_MAX: Final = 91
"""Penalty energy java-tron's per-instruction truncation drops from USDT's holder transfer at
factor 34,000: 14,631 + 49,745 (14,631 x 3.4 truncated once) - 64,285 charged = 91. Scaled with
the factor (nothing at factor 0). The sandbox does not execute USDT's bytecode, so this one
measured figure stands for the truncation of its few hundred small instructions."""

REFERENCE_FACTOR: Final = 34_000
"""USDT's energy factor when :data:`TRUNCATED_AT_MAX` was measured (mainnet's maximum)."""

LONG_VALUE: Final = 100_000_000_000_000_000
"""java-tron's ``ProposalUtil.LONG_VALUE``: the largest fee a proposal may set."""


class ParameterError(SandboxError, ValueError):
    """A parameter change the chain would refuse (unknown name, wrong type, out of range)."""


@dataclass(frozen=True)
class ChainParameters:
    """The fees java-tron answers in ``wallet/getchainparameters`` (mainnet's values, 2025-26)."""

    energy_fee: int = 100
    """Sun burned per energy (``getEnergyFee``; 210 before proposal 104, August 2025)."""
    transaction_fee: int = 1_000
    """Sun burned per bandwidth byte (``getTransactionFee``)."""
    create_account_fee: int = 100_000
    """Sun burned to create an account when the sender lacks bandwidth (``getCreateAccountFee``)."""
    create_new_account_fee_in_system_contract: int = 1_000_000
    """Sun a transfer creating its recipient pays (``getCreateNewAccountFeeInSystemContract``)."""
    free_net_limit: int = 600
    """Free bandwidth per account per day (``getFreeNetLimit``)."""
    update_account_permission_fee: int = 100_000_000
    """Sun an ``AccountPermissionUpdateContract`` pays (``getUpdateAccountPermissionFee``)."""
    multi_sign_fee: int = 1_000_000
    """Sun a transaction with more than one signature pays (``getMultiSignFee``)."""
    create_new_account_bandwidth_rate: int = 1
    """Staked bandwidth per byte a transfer creating its recipient takes
    (``getCreateNewAccountBandwidthRate``; java-tron's ``BandwidthProcessor
    .consumeBandwidthForCreateNewAccount``)."""

    def to_wallet(self) -> dict[str, Any]:
        """java-tron's ``wallet/getchainparameters`` answer (proto3 JSON omits a zero value)."""
        rows: list[dict[str, Any]] = []
        for name, value in asdict(self).items():
            row: dict[str, Any] = {"key": WALLET_KEYS[name]}
            if value:
                row["value"] = value
            rows.append(row)
        return {"chainParameter": rows}

    def changed(self, changes: dict[str, Any]) -> ChainParameters:
        """These parameters with ``changes`` (field or java-tron names) applied, each checked."""
        checked: dict[str, int] = {}
        for key, value in changes.items():
            name = FIELD_BY_KEY.get(key, key)
            if name not in WALLET_KEYS:
                raise ParameterError(f"unknown chain parameter {key!r}")
            high = 100_000 if name == "free_net_limit" else LONG_VALUE
            checked[name] = _integer(key, value, 0, high)
        return replace(self, **checked)


WALLET_KEYS: Final[dict[str, str]] = {
    "energy_fee": "getEnergyFee",
    "transaction_fee": "getTransactionFee",
    "create_account_fee": "getCreateAccountFee",
    "create_new_account_fee_in_system_contract": "getCreateNewAccountFeeInSystemContract",
    "free_net_limit": "getFreeNetLimit",
    "update_account_permission_fee": "getUpdateAccountPermissionFee",
    "multi_sign_fee": "getMultiSignFee",
    "create_new_account_bandwidth_rate": "getCreateNewAccountBandwidthRate",
}
FIELD_BY_KEY: Final[dict[str, str]] = {key: name for name, key in WALLET_KEYS.items()}


class TransferEnergy(Protocol):
    """A token contract's energy rules (USDT's :class:`ContractEnergy`, or ``tokens.Token``)."""

    @property
    def energy_factor(self) -> int: ...

    def transfer_energy(self, new_slot: bool) -> int: ...


@dataclass(frozen=True)
class ContractEnergy:
    """USDT's energy: its transfer's base energy and its dynamic energy factor."""

    base_energy: int = 14_631
    """Energy of a transfer to a holder with no penalty (factor 0): the chain's own figure before
    dynamic energy (java-tron issue 3556: 14,631 to a holder, 29,631 to a new address)."""
    energy_factor: int = REFERENCE_FACTOR
    """``contract_state.energy_factor``: penalty in 1/10,000 (34,000: each instruction x 4.4)."""

    def transfer_energy(self, new_slot: bool) -> int:
        """Energy of one ``transfer(address,uint256)``; ``new_slot``: the recipient never held USDT.

        java-tron adds ``cost * factor / 10_000`` (truncated) to each instruction. The storage
        write a new slot adds (15,000) is a multiple of 5, so its penalty is exact; the rest of
        the transfer loses :data:`TRUNCATED_AT_MAX` (scaled with the factor) to truncation.
        """
        truncated = TRUNCATED_AT_MAX * self.energy_factor // REFERENCE_FACTOR
        penalty = max(0, self.base_energy * self.energy_factor // FACTOR_DECIMAL - truncated)
        energy = self.base_energy + penalty
        if new_slot:
            energy += NEW_SLOT_ENERGY + NEW_SLOT_ENERGY * self.energy_factor // FACTOR_DECIMAL
        return energy

    def changed(self, changes: dict[str, Any]) -> ContractEnergy:
        """This contract's energy with ``changes`` (``base_energy``, ``energy_factor``) checked."""
        checked: dict[str, int] = {}
        for key, value in changes.items():
            if key == "energy_factor":
                checked[key] = _integer(key, value, 0, MAX_ENERGY_FACTOR)
            elif key == "base_energy":
                checked[key] = _integer(key, value, 1, 10_000_000)
            else:
                raise ParameterError(f"unknown contract parameter {key!r}")
        return replace(self, **checked)


def _integer(key: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(f"{key} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise ParameterError(f"{key} must be in [{low}, {high}], got {value}")
    return value


PARAMETERS_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS chain_parameters (
    name TEXT NOT NULL, from_block INTEGER NOT NULL, value INTEGER NOT NULL,
    PRIMARY KEY (name, from_block));
"""
_USDT = "usdt."


class ParameterBook:
    """The parameters' history in the world's SQLite database, one row per change and block.

    ``current(n)``/``usdt(n)`` answer what block ``n`` charges (None: the newest change,
    what the next block will charge); ``set``/``set_usdt`` record a change from a block on.
    Calls run on the event loop's thread like every other part of the world.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.db.executescript(PARAMETERS_SCHEMA)

    def current(self, block_number: int | None = None) -> ChainParameters:
        """The fees in force in ``block_number`` (None: from the next block on)."""
        values = self._values(block_number, "")
        return ChainParameters(**{k: v for k, v in values.items() if k in WALLET_KEYS})

    def usdt(self, block_number: int | None = None) -> ContractEnergy:
        """USDT's energy in force in ``block_number`` (None: from the next block on)."""
        values = self._values(block_number, _USDT)
        return ContractEnergy(**values)

    def set(self, from_block: int, changes: dict[str, Any]) -> ChainParameters:
        """Change fees from ``from_block`` on (a proposal passing); return the new fees.

        Raises :class:`ParameterError` (nothing recorded) if any change is refused.
        """
        new = self.current().changed(changes)
        self._check_order(from_block)
        self._record(from_block, "", asdict(new))
        return new

    def set_usdt(self, from_block: int, changes: dict[str, Any]) -> ContractEnergy:
        """Change USDT's base energy or energy factor from ``from_block`` on."""
        new = self.usdt().changed(changes)
        self._check_order(from_block)
        self._record(from_block, _USDT, asdict(new))
        return new

    def _check_order(self, from_block: int) -> None:
        last = self.db.execute("SELECT MAX(from_block) FROM chain_parameters").fetchone()[0]
        if last is not None and from_block < last:
            raise ParameterError(f"a change from block {from_block} would rewrite the history "
                                 f"(the last change applies from block {last})")

    def _values(self, block_number: int | None, prefix: str) -> dict[str, int]:
        limit = (1 << 62) if block_number is None else block_number
        rows = self.db.execute(
            "SELECT name, value FROM chain_parameters WHERE from_block <= ? "
            "ORDER BY from_block", (limit,)).fetchall()
        values: dict[str, int] = {}
        for name, value in rows:
            if name.startswith(prefix) and (prefix or not name.startswith(_USDT)):
                values[name[len(prefix):]] = int(value)
        return values

    def _record(self, from_block: int, prefix: str, values: dict[str, int]) -> None:
        self.db.executemany(
            "INSERT INTO chain_parameters (name, from_block, value) VALUES (?, ?, ?) "
            "ON CONFLICT (name, from_block) DO UPDATE SET value = excluded.value",
            [(prefix + name, from_block, value) for name, value in values.items()],
        )

