"""What a TRON full node says about an address or a transaction, in exact units.

TRX in integer sun (1 TRX = 1,000,000 sun), USDT in integer micro-units (6 decimals),
energy and bandwidth in their own integer units. Java-tron leaves zero-valued fields
out of its answers; every reader here takes a missing field as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

SUN_PER_TRX = 1_000_000
USDT_UNITS = 1_000_000  # USDT (TRC20) has 6 decimals
USDT_MAINNET = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
"""USDT's TRC20 contract on mainnet; a ``tron_node`` connection may name another (Nile)."""


def whole(payload: dict[str, Any], key: str) -> int:
    """A non-negative integer field of a node answer (missing = 0); anything else is refused.

    JSON floats or strings where the node sends integers mean the answer is not what
    the code was written for: no amount is guessed from it.
    """
    value = payload.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"node answer field {key!r} is not a non-negative integer: {value!r}")
    return value


def trx_text(sun: int) -> str:
    """Sun as a TRX decimal string (``"2.5"``), for events and messages."""
    return format((Decimal(sun) / SUN_PER_TRX).normalize(), "f")


def usdt_text(units: int) -> str:
    """USDT micro-units as a decimal string (``"250.75"``)."""
    return format((Decimal(units) / USDT_UNITS).normalize(), "f")


@dataclass(frozen=True)
class ChainAccount:
    """An address on chain: activated or not, and its TRX."""

    address: str
    activated: bool
    trx_sun: int

    @classmethod
    def from_node(cls, address: str, payload: dict[str, Any]) -> ChainAccount:
        """``wallet/getaccount``'s answer; ``{}`` is an address never activated."""
        return cls(address=address, activated=bool(payload), trx_sun=whole(payload, "balance"))


@dataclass(frozen=True)
class Resources:
    """Energy and bandwidth of an address (``wallet/getaccountresource``)."""

    address: str
    energy_limit: int = 0
    energy_used: int = 0
    net_limit: int = 0
    net_used: int = 0
    free_net_limit: int = 0
    free_net_used: int = 0

    @classmethod
    def from_node(cls, address: str, payload: dict[str, Any]) -> Resources:
        """Read the fields java-tron names in CamelCase; absent means 0."""
        return cls(
            address=address,
            energy_limit=whole(payload, "EnergyLimit"),
            energy_used=whole(payload, "EnergyUsed"),
            net_limit=whole(payload, "NetLimit"),
            net_used=whole(payload, "NetUsed"),
            free_net_limit=whole(payload, "freeNetLimit"),
            free_net_used=whole(payload, "freeNetUsed"),
        )

    @property
    def energy_available(self) -> int:
        """Energy a transaction could use now (staked and delegated, less what is used)."""
        return max(0, self.energy_limit - self.energy_used)

    @property
    def bandwidth_available(self) -> int:
        """Free daily bandwidth plus staked bandwidth still unused."""
        return (max(0, self.free_net_limit - self.free_net_used)
                + max(0, self.net_limit - self.net_used))


@dataclass(frozen=True)
class TransactionInfo:
    """A transaction's receipt as the node reports it (``gettransactioninfobyid``).

    ``receipt_result`` is ``"SUCCESS"`` for a contract call that succeeded; java-tron
    leaves it out for system transactions (a delegation among them), so success is
    "in a block and not marked failed".
    """

    tx_hash: str
    block_number: int
    block_timestamp_ms: int
    receipt_result: str | None
    failed: bool
    solidified: bool

    @classmethod
    def from_node(cls, tx_hash: str, payload: dict[str, Any], *,
                  solidified: bool) -> TransactionInfo:
        """Read one answer; the caller has already treated ``{}`` as "not known"."""
        receipt = payload.get("receipt") or {}
        result = receipt.get("result")
        failed = payload.get("result") == "FAILED" or (result not in (None, "SUCCESS"))
        return cls(tx_hash=tx_hash, block_number=whole(payload, "blockNumber"),
                   block_timestamp_ms=whole(payload, "blockTimeStamp"),
                   receipt_result=result if isinstance(result, str) else None,
                   failed=failed, solidified=solidified)

    @property
    def succeeded(self) -> bool:
        """In a block and not failed."""
        return self.block_number > 0 and not self.failed


@dataclass(frozen=True)
class Block:
    """The chain's head (``wallet/getnowblock``)."""

    number: int
    timestamp_ms: int

    @classmethod
    def from_node(cls, payload: dict[str, Any]) -> Block:
        """Read ``block_header.raw_data``."""
        raw = (payload.get("block_header") or {}).get("raw_data") or {}
        return cls(number=whole(raw, "number"), timestamp_ms=whole(raw, "timestamp"))
