"""What a TRON full node says about an address or a transaction, in exact units.

TRX in integer sun (1 TRX = 1,000,000 sun), USDT in integer micro-units (6 decimals),
energy and bandwidth in their own integer units. Java-tron leaves zero-valued fields
out of its answers; every reader here takes a missing field as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tronenergy_protocol.energy import penalized
from tronenergy_protocol.ids import TX_HASH

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


def bounded(payload: dict[str, Any], key: str, low: int, high: int, what: str) -> int:
    """An integer field within ``[low, high]`` (missing = 0), or the answer is refused.

    For figures money depends on (a price, a fee, a factor): a node that answers one
    outside what the chain could hold is broken or lying, and no plan is made from it.
    """
    value = whole(payload, key)
    if not low <= value <= high:
        raise ValueError(f"node answer field {key!r} ({what}) must be between {low:,} and "
                         f"{high:,}, got {value:,}")
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
    def staked_bandwidth_available(self) -> int:
        """Staked (and delegated) bandwidth still unused."""
        return max(0, self.net_limit - self.net_used)

    @property
    def free_bandwidth_available(self) -> int:
        """The free daily bandwidth still unused."""
        return max(0, self.free_net_limit - self.free_net_used)

    @property
    def bandwidth_available(self) -> int:
        """Free daily bandwidth plus staked bandwidth still unused (a total for people:
        the chain never adds them up, see :func:`transactions_covered`)."""
        return self.free_bandwidth_available + self.staked_bandwidth_available

    def transactions_covered(self, size: int) -> int:
        """How many transactions of ``size`` bytes the bandwidth pays for, at most."""
        return transactions_covered(size, staked=self.staked_bandwidth_available,
                                    free=self.free_bandwidth_available)


def transactions_covered(size: int, *, staked: int, free: int) -> int:
    """Transactions of ``size`` bytes that ``staked`` and ``free`` bandwidth pay for.

    java-tron (``BandwidthProcessor.consume``) takes a transaction's bytes whole from
    the staked bandwidth if it covers them, else whole from the free bandwidth if it
    covers them, else burns ``getTransactionFee`` per byte for all of them: the pools
    are never added up, so each covers ``available // size`` transactions.
    """
    if size < 1:
        raise ValueError("a transaction has at least one byte")
    return max(0, staked) // size + max(0, free) // size


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
    fee: int = 0
    """Sun burned in all (energy, bandwidth and any other fee)."""
    energy_usage: int = 0
    """Energy from the sender's own stake and delegations (a rental is a delegation)."""
    energy_fee: int = 0
    """Sun burned for energy the sender did not have."""
    origin_energy_usage: int = 0
    """Energy the contract's deployer paid (its ``consume_user_resource_percent``)."""
    energy_usage_total: int = 0
    net_usage: int = 0
    """Bandwidth from stake or the free daily allowance."""
    net_fee: int = 0
    """Sun burned for bandwidth."""

    @classmethod
    def from_node(cls, tx_hash: str, payload: dict[str, Any], *,
                  solidified: bool) -> TransactionInfo:
        """Read one answer; the caller has already treated ``{}`` as "not known".

        The resource figures must add up as the chain adds them (energy used from stake
        plus the deployer's share never above the total; the fee at least the energy and
        bandwidth burned): a receipt that does not is not believed.
        """
        answered = payload.get("id")
        if answered not in (None, "") and str(answered).lower() != tx_hash.lower():
            raise ValueError(f"receipt names transaction {_shown(answered)}, not {tx_hash}")
        receipt = payload.get("receipt") or {}
        if not isinstance(receipt, dict):
            raise ValueError(f"node answer field 'receipt' is not an object: {_shown(receipt)}")
        result = receipt.get("result")
        failed = payload.get("result") == "FAILED" or (result not in (None, "SUCCESS"))
        info = cls(tx_hash=tx_hash, block_number=whole(payload, "blockNumber"),
                   block_timestamp_ms=whole(payload, "blockTimeStamp"),
                   receipt_result=result if isinstance(result, str) else None,
                   failed=failed, solidified=solidified, fee=whole(payload, "fee"),
                   energy_usage=whole(receipt, "energy_usage"),
                   energy_fee=whole(receipt, "energy_fee"),
                   origin_energy_usage=whole(receipt, "origin_energy_usage"),
                   energy_usage_total=whole(receipt, "energy_usage_total"),
                   net_usage=whole(receipt, "net_usage"), net_fee=whole(receipt, "net_fee"))
        if info.energy_usage + info.origin_energy_usage > info.energy_usage_total:
            raise ValueError(f"receipt of {tx_hash}: energy from stake ({info.energy_usage:,}) "
                             f"and the deployer's ({info.origin_energy_usage:,}) exceed its "
                             f"total ({info.energy_usage_total:,})")
        if info.fee < info.energy_fee + info.net_fee:
            raise ValueError(f"receipt of {tx_hash}: fee {info.fee:,} sun is less than the "
                             f"energy and bandwidth burned ({info.energy_fee + info.net_fee:,})")
        return info

    @property
    def energy_burned(self) -> int:
        """Energy the chain burned TRX for: the total less what stake and the deployer paid."""
        return self.energy_usage_total - self.energy_usage - self.origin_energy_usage

    @property
    def succeeded(self) -> bool:
        """In a block and not failed."""
        return self.block_number > 0 and not self.failed


@dataclass(frozen=True)
class BroadcastAnswer:
    """What a node said to ``broadcasthex``: accepted, or java-tron's refusal code.

    ``DUP_TRANSACTION_ERROR`` counts as accepted: the node already has this very
    transaction (an earlier broadcast whose answer was lost), which is what was wanted.
    """

    txid: str
    result: bool
    code: str
    message: str

    @property
    def accepted(self) -> bool:
        """The chain has the transaction (now, or from an earlier broadcast)."""
        return self.result or self.code == "DUP_TRANSACTION_ERROR"

    def describe(self) -> str:
        """``accepted`` or ``CODE: message``, for the journal and the log."""
        return "accepted" if self.accepted else f"{self.code}: {self.message}"[:500]

    @classmethod
    def from_node(cls, txid: str, payload: dict[str, Any]) -> BroadcastAnswer:
        """Read ``{"result", "code", "message", "txid"}``; a txid not the one sent is refused."""
        result = payload.get("result") is True
        code = payload.get("code") or ("SUCCESS" if result else "")
        message = payload.get("message") or ""
        if not isinstance(code, str) or not isinstance(message, str):
            raise ValueError("broadcast answer's code and message must be text")
        if not result and not code:
            raise ValueError("broadcast answer has neither a result nor a code")
        answered = payload.get("txid")
        if answered not in (None, "") and str(answered).lower() != txid:
            raise ValueError(f"broadcast answer names transaction {_shown(answered)}, not {txid}")
        return cls(txid=txid, result=result, code=code, message=message[:500])


@dataclass(frozen=True)
class Block:
    """A block's header as ``wallet/getnowblock`` and ``walletsolidity/getnowblock`` print it.

    ``block_id`` is java-tron's ``BlockId``: 32 bytes in hex whose first 8 are the number,
    so a header whose id names another block is not believed.
    """

    number: int
    timestamp_ms: int
    block_id: str

    @classmethod
    def from_node(cls, payload: dict[str, Any]) -> Block:
        """Read ``blockID`` and ``block_header.raw_data``; an id not of this number is refused."""
        header = payload.get("block_header")
        raw = header.get("raw_data") if isinstance(header, dict) else None
        if not isinstance(raw, dict):
            raise ValueError("node answer has no block_header.raw_data")
        number = whole(raw, "number")
        block_id = payload.get("blockID")
        if not isinstance(block_id, str) or not TX_HASH.fullmatch(block_id):
            raise ValueError(f"node answer's blockID is not 64 hex characters: {_shown(block_id)}")
        if int(block_id[:16], 16) != number:
            raise ValueError(f"node answer's blockID {block_id} is not block {number}'s")
        return cls(number=number, timestamp_ms=whole(raw, "timestamp"),
                   block_id=block_id.lower())


@dataclass(frozen=True)
class BlockBody:
    """A block read by number (``getblockbynum``): its header and the txIDs it holds."""

    block: Block
    txids: frozenset[str]

    @classmethod
    def from_node(cls, number: int, payload: dict[str, Any]) -> BlockBody:
        """Read one block; it must be block ``number`` and name each transaction once."""
        block = Block.from_node(payload)
        if block.number != number:
            raise ValueError(f"node answered block {block.number} for block {number}")
        items = payload.get("transactions") or []
        if not isinstance(items, list):
            raise ValueError("node answer's transactions is not a list")
        txids: set[str] = set()
        for index, item in enumerate(items):
            txid = item.get("txID") if isinstance(item, dict) else None
            if not isinstance(txid, str) or not TX_HASH.fullmatch(txid):
                raise ValueError(f"transaction {index} of block {number} has no 64-hex txID")
            if txid.lower() in txids:
                raise ValueError(f"block {number} holds transaction {txid} twice")
            txids.add(txid.lower())
        return cls(block=block, txids=frozenset(txids))


def block_receipts(number: int, payload: Any, *, solidified: bool) -> list[TransactionInfo]:
    """``gettransactioninfobyblocknum``'s array: every receipt of block ``number``, in order.

    Each must name its transaction (64 hex) and this block, once, and all carry the block's
    one timestamp: a node answering otherwise is broken or lying, and a payout confirmed
    from it could be one that never happened.
    """
    if not isinstance(payload, list):
        raise ValueError(f"node answer is not a list of receipts: {type(payload).__name__}")
    receipts: list[TransactionInfo] = []
    seen: set[str] = set()
    for index, item in enumerate(payload):
        if not isinstance(item, dict):
            raise ValueError(f"receipt {index} is not an object: {type(item).__name__}")
        tx_hash = item.get("id")
        if not isinstance(tx_hash, str) or not TX_HASH.fullmatch(tx_hash):
            raise ValueError(f"receipt {index}'s id is not 64 hex characters: {_shown(tx_hash)}")
        info = TransactionInfo.from_node(tx_hash.lower(), item, solidified=solidified)
        if info.block_number != number:
            raise ValueError(f"receipt {index} ({info.tx_hash}) is in block {info.block_number},"
                             f" not {number}")
        if info.tx_hash in seen:
            raise ValueError(f"receipt {index} ({info.tx_hash}) appears twice in block {number}")
        if receipts and info.block_timestamp_ms != receipts[0].block_timestamp_ms:
            raise ValueError(f"receipt {index} ({info.tx_hash}) has another block timestamp "
                             f"({info.block_timestamp_ms}) than block {number}'s "
                             f"({receipts[0].block_timestamp_ms})")
        seen.add(info.tx_hash)
        receipts.append(info)
    return receipts


def _shown(value: Any) -> str:
    """A value from an answer, short enough for an error message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


MAX_ENERGY_FACTOR = 100_000
"""java-tron's ``DYNAMIC_ENERGY_MAX_FACTOR_RANGE``: no contract's factor can exceed it."""


@dataclass(frozen=True)
class ContractInfo:
    """A contract's dynamic-energy state (``wallet/getcontractinfo`` -> ``contract_state``).

    ``energy_factor`` is java-tron's penalty in 1/10,000: each instruction costs
    ``cost + cost * energy_factor / 10_000`` (TIP-491).
    """

    contract_address: str
    energy_factor: int
    energy_usage: int = 0
    update_cycle: int = 0

    @classmethod
    def from_node(cls, contract_address: str, payload: dict[str, Any]) -> ContractInfo:
        """Read one answer; the caller has already treated ``{}`` as "no such contract"."""
        state = payload.get("contract_state")
        if not isinstance(state, dict):
            state = {}  # java-tron before dynamic energy: no state, no penalty
        return cls(contract_address=contract_address,
                   energy_factor=bounded(state, "energy_factor", 0, MAX_ENERGY_FACTOR,
                                         "dynamic energy factor"),
                   energy_usage=whole(state, "energy_usage"),
                   update_cycle=whole(state, "update_cycle"))

    def penalized(self, energy: int) -> int:
        """``energy`` of instructions with this contract's penalty, as java-tron adds it."""
        return penalized(energy, self.energy_factor)
