"""Incoming transfers as the chain records them: a TRC-20 `Transfer` log, a TRX transfer.

What a deposit is credited from (``deposits``): never a callback's fields, always one of
these, read from a node. One rule, written here, reads both shapes:

- **a token transfer** is a log of a receipt whose transaction succeeded, emitted by the
  token's contract, with ``Transfer(address,address,uint256)``'s topic, the sender and the
  recipient as its two indexed topics and the amount as its 32-byte data. Logs are read
  from ``gettransactioninfobyid`` / ``gettransactioninfobyblocknum``; java-tron prints a
  log's ``address`` as the contract's 20 bytes in hex, or, with ``visible``, as a
  T-address (``GetTransactionInfoByIdServlet`` and ``GetTransactionInfoByBlockNumServlet``
  pass the logs through ``Util.convertLogAddressToTronAddress``, which puts ``0x41`` before
  the 20 bytes, and ``JsonFormat`` prints ``protocol.TransactionInfo.Log.address`` with
  ``encode58Check``); releases before that printed the 20 bytes' base58check, which is
  read too. A log from any other contract (a look-alike ``USDT``) is not a transfer of
  the token, whatever it is called. A ``Transfer`` of 0 moves nothing (zero-value
  transfers are how address-poisoning spam reaches deposit addresses): not a deposit.
- **a TRX transfer** is a transaction whose one contract is ``TransferContract`` and whose
  ``ret[0].contractRet`` is ``SUCCESS``, printed (``getblockbynum``, ``gettransactionbyid``;
  ``contractResult`` is ``DEFAULT = 0; SUCCESS = 1`` in Tron.proto, and only the default
  is left out).

Each transfer is keyed by ``(tx_hash, index)``: the log's position in its receipt (a
contract that pays an address several times in one transaction makes several deposits),
0 for a TRX transfer (a ``TransferContract`` transaction has no logs).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Final

from airflow_provider_tronenergy.node.models import TransactionInfo
from tronenergy_protocol.address import (
    AddressError,
    b58decode,
    decode_address,
    encode_address,
)
from tronenergy_protocol.ids import TX_HASH

TRANSFER_TOPIC: Final = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
"""keccak256(``Transfer(address,address,uint256)``): a TRC-20 transfer log's first topic."""
TRX: Final = "TRX"
"""The token of a TRX transfer (it has no contract)."""
_MAX_UINT256: Final = 2**256 - 1
_WORD: Final = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class ChainTransfer:
    """One incoming transfer as the chain holds it: what a deposit is credited from.

    ``units`` are the token's smallest units (sun for TRX, micro-units for USDT);
    ``contract`` is the token's contract (base58), None for TRX.
    """

    tx_hash: str
    index: int
    contract: str | None
    from_address: str
    to_address: str
    units: int
    block_number: int
    block_timestamp_ms: int

    @property
    def key(self) -> tuple[str, int]:
        """What a deposit is credited once by."""
        return self.tx_hash, self.index

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (units as text: exact whatever reads it)."""
        return {"tx_hash": self.tx_hash, "index": self.index, "contract": self.contract,
                "from": self.from_address, "to": self.to_address, "units": str(self.units),
                "block_number": self.block_number,
                "block_timestamp_ms": self.block_timestamp_ms}


def _log_contract(value: Any) -> str:
    """A log's ``address`` (20 bytes: hex, or base58check with ``visible``) as a T-address."""
    if not isinstance(value, str):
        raise ValueError(f"a log's address is not text: {type(value).__name__}")
    if len(value) == 40:
        if not re.fullmatch(r"[0-9a-fA-F]{40}", value):
            raise ValueError(f"a log's address is not 20 bytes of hex: {value[:44]!r}")
        try:
            return encode_address(bytes.fromhex(value))
        except ValueError as exc:
            raise ValueError(f"a log's address is not 20 bytes of hex: {value[:44]!r}") from exc
    if len(value) == 42 and value[:2].lower() == "41":
        try:
            return encode_address(bytes.fromhex(value))
        except ValueError as exc:
            raise ValueError(f"a log's address is not 21 bytes of hex: {value[:44]!r}") from exc
    if value.startswith("T"):
        try:
            decode_address(value)
        except AddressError as exc:
            raise ValueError(f"a log's address is not a TRON address: {value[:44]!r}") from exc
        return value
    try:
        raw = b58decode(value)
    except AddressError as exc:
        raise ValueError(f"a log's address is neither hex nor base58: {value[:44]!r}") from exc
    if len(raw) != 24 or hashlib.sha256(hashlib.sha256(raw[:20]).digest()).digest()[:4] != raw[20:]:
        raise ValueError(f"a log's address is not 20 bytes with a checksum: {value[:44]!r}")
    return encode_address(raw[:20])


def _topic_address(topic: Any) -> str | None:
    """An indexed ``address`` topic (32 bytes, the top 12 zero) as a T-address; None if not one."""
    if not isinstance(topic, str) or not _WORD.fullmatch(topic):
        return None
    raw = bytes.fromhex(topic)
    if any(raw[:12]):
        return None
    return encode_address(raw[12:])


def _hex_address(value: Any, what: str) -> str:
    """An address field of a transaction: base58 (``visible``) or 21-byte hex."""
    if isinstance(value, str) and len(value) == 42:
        try:
            return encode_address(bytes.fromhex(value))
        except (ValueError, AddressError) as exc:
            raise ValueError(f"{what} is not a TRON address: {value[:44]!r}") from exc
    try:
        decode_address(value)
    except AddressError as exc:
        raise ValueError(f"{what} is not a TRON address: {str(value)[:44]!r}") from exc
    return str(value)


def _failed(receipt: dict[str, Any]) -> bool:
    result = (receipt.get("receipt") or {}).get("result")
    return receipt.get("result") == "FAILED" or result not in (None, "SUCCESS")


def _transfer_logs(tx_hash: str, receipt: dict[str, Any], *, block_number: int,
                   block_timestamp_ms: int) -> list[tuple[str, ChainTransfer | None]]:
    """``(contract, transfer)`` for each log with ``Transfer``'s topic, in log order; the
    transfer is None when the log does not read as ``Transfer(address,address,uint256)``."""
    if _failed(receipt):
        return []
    logs = receipt.get("log") or []
    if not isinstance(logs, list):
        raise ValueError(f"receipt of {tx_hash}: 'log' is not a list")
    found: list[tuple[str, ChainTransfer | None]] = []
    for index, item in enumerate(logs):
        if not isinstance(item, dict):
            raise ValueError(f"receipt of {tx_hash}: log {index} is not an object")
        topics = item.get("topics") or []
        if (not isinstance(topics, list) or not topics
                or str(topics[0]).lower() != TRANSFER_TOPIC):
            continue
        contract = _log_contract(item.get("address"))
        sender, recipient = (_topic_address(t) for t in [*topics[1:3], None, None][:2])
        data = item.get("data")
        if (len(topics) != 3 or sender is None or recipient is None
                or not isinstance(data, str) or not _WORD.fullmatch(data)):
            found.append((contract, None))
            continue
        found.append((contract, ChainTransfer(
            tx_hash=tx_hash.lower(), index=index, contract=contract, from_address=sender,
            to_address=recipient, units=int(data, 16), block_number=block_number,
            block_timestamp_ms=block_timestamp_ms)))
    return found


def token_transfers(tx_hash: str, receipt: dict[str, Any], *, contract: str, block_number: int,
                    block_timestamp_ms: int) -> list[ChainTransfer]:
    """The transfers of ``contract``'s token a receipt's logs record (none if it failed).

    ``receipt`` is one ``gettransactioninfoby*`` answer already checked as a receipt
    (``TransactionInfo.from_node``: its id, block and figures); a log of the token that
    does not read as a transfer (topics or data of another shape) is refused, not skipped:
    the token's own contract emitting it means the node's answer is not what it seems.
    Transfers of 0 are left out (they move nothing).
    """
    found = []
    for log_contract, transfer in _transfer_logs(tx_hash, receipt, block_number=block_number,
                                                 block_timestamp_ms=block_timestamp_ms):
        if log_contract != contract:
            continue
        if transfer is None:
            raise ValueError(f"receipt of {tx_hash}: a log of the token's contract is not a "
                             "Transfer(address,address,uint256)")
        if transfer.units:
            found.append(transfer)
    return found


def other_transfers(tx_hash: str, receipt: dict[str, Any], *, contract: str, block_number: int,
                    block_timestamp_ms: int) -> list[ChainTransfer]:
    """``Transfer`` logs of any contract but ``contract`` (a look-alike token among them),
    read leniently: what a person is shown when a callback names a token the chain did
    not move. Never credited."""
    return [t for c, t in _transfer_logs(tx_hash, receipt, block_number=block_number,
                                         block_timestamp_ms=block_timestamp_ms)
            if c != contract and t is not None and t.units]


def trx_transfer(transaction: dict[str, Any], *, block_number: int,
                 block_timestamp_ms: int) -> ChainTransfer | None:
    """The TRX transfer a transaction is, if it is one that succeeded; else None."""
    txid = transaction.get("txID")
    if not isinstance(txid, str) or not TX_HASH.fullmatch(txid):
        raise ValueError("a transaction without a 64-hex txID")
    raw = transaction.get("raw_data")
    contracts = raw.get("contract") if isinstance(raw, dict) else None
    if not isinstance(contracts, list) or len(contracts) != 1:
        return None
    contract = contracts[0]
    if not isinstance(contract, dict) or contract.get("type") != "TransferContract":
        return None
    ret = transaction.get("ret") or [{}]
    if not isinstance(ret, list) or not ret or not isinstance(ret[0], dict):
        raise ValueError(f"transaction {txid}: 'ret' is not a list of results")
    # Tron.proto's contractResult: DEFAULT = 0 (which JsonFormat leaves out), SUCCESS = 1, so
    # a transfer that happened prints SUCCESS; anything else proves nothing.
    if ret[0].get("contractRet") != "SUCCESS":
        return None
    parameter = contract.get("parameter")
    value = parameter.get("value") if isinstance(parameter, dict) else None
    if not isinstance(value, dict):
        raise ValueError(f"transaction {txid}: TransferContract without a value")
    amount = value.get("amount", 0)
    if isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount <= _MAX_UINT256:
        raise ValueError(f"transaction {txid}: amount {amount!r} is not a positive integer")
    return ChainTransfer(
        tx_hash=txid.lower(), index=0, contract=None,
        from_address=_hex_address(value.get("owner_address"), f"transaction {txid}'s sender"),
        to_address=_hex_address(value.get("to_address"), f"transaction {txid}'s recipient"),
        units=amount, block_number=block_number, block_timestamp_ms=block_timestamp_ms)


@dataclass(frozen=True)
class TransferReceipt:
    """What one transaction moved, read from its receipt: the token's transfers and the
    ``Transfer`` logs of other contracts (``TronNodeClient.get_transfer_receipt``)."""

    info: TransactionInfo
    transfers: tuple[ChainTransfer, ...]
    """Of the token asked about (empty when the transaction failed)."""
    others: tuple[ChainTransfer, ...]
    """``Transfer`` logs of other contracts: a look-alike token among them. Never credited."""

    @classmethod
    def from_node(cls, tx_hash: str, payload: dict[str, Any], *, contract: str,
                  solidified: bool) -> TransferReceipt:
        """One ``gettransactioninfobyid`` answer, checked as a receipt first."""
        info = TransactionInfo.from_node(tx_hash, payload, solidified=solidified)
        where = {"block_number": info.block_number, "block_timestamp_ms": info.block_timestamp_ms}
        return cls(info=info,
                   transfers=tuple(token_transfers(tx_hash, payload, contract=contract, **where)),
                   others=tuple(other_transfers(tx_hash, payload, contract=contract, **where)))
