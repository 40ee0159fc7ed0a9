"""Transactions as java-tron reads them: JSON or protobuf in, one decoded form, JSON out.

The protobuf messages are tronpy's (``tronpy.proto.tron_pb2``), so the txID the
sandbox computes (SHA-256 of the encoded ``raw_data``) is the one tronpy computes
offline, and signatures are recovered with tronpy's ``keys`` (secp256k1 through
coincurve): no hand-written crypto (docs/decisions.md). As java-tron does, the
node re-encodes the JSON it is sent and ignores the ``txID`` field in it.
Three contracts are understood: the two a payout needs, ``TransferContract`` (TRX)
and ``TriggerSmartContract`` (a call such as USDT's ``transfer``), and
``AccountPermissionUpdateContract`` (``update_contract``), which bounds a payout key;
a contract of another type is dropped, as java-tron drops one it cannot parse.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from tronpy.exceptions import BadSignature
from tronpy.keys import Signature
from tronpy.proto import tron_pb2

from tronenergy_protocol.address import ADDRESS_PREFIX, encode_address
from tronenergy_sandbox.chain import update_contract

# The JSON readers the routes know as codec's (jsonbytes), re-exported (__all__ below).
from tronenergy_sandbox.chain.jsonbytes import (
    NULL_POINTER,
    PARSE_EXCEPTION,
    CodecError,
    address_key,
    from_base58_check,
    from_hex_string,
    json_address,
    raw_address,
    shown_address,
)
from tronenergy_sandbox.chain.jsonbytes import hex_field as _hex
from tronenergy_sandbox.chain.jsonbytes import integer as _integer
from tronenergy_sandbox.chain.update_contract import UPDATE

TRANSFER = "TransferContract"
TRIGGER = "TriggerSmartContract"
TYPE_URL = "type.googleapis.com/protocol."
TRANSFER_SELECTOR = bytes.fromhex("a9059cbb")
"""``transfer(address,uint256)``."""
MAX_RESULT_SIZE_IN_TX = 64
"""Bytes java-tron adds per contract for its result when it counts bandwidth."""

_Raw = Any  # tron_pb2.Transaction.raw: protobuf's generated classes carry no static types
_CONTRACT_TYPES = tron_pb2.Transaction.Contract.ContractType


@dataclass(frozen=True)
class Decoded:
    """One transaction: its protobuf, txID, signatures and what its contract asks."""

    raw: _Raw
    signatures: tuple[bytes, ...]
    txid: str
    contract_type: str | None
    owner: str | None = None
    to: str | None = None
    amount: int = 0
    contract_address: str | None = None
    data: bytes = b""
    call_value: int = 0
    permission_id: int = 0
    update: Any = None
    """An ``AccountPermissionUpdateContract``'s protobuf (``update_contract``)."""

    @property
    def expiration(self) -> int:
        return int(self.raw.expiration)

    @property
    def fee_limit(self) -> int:
        return int(self.raw.fee_limit)

    @property
    def ref_block_bytes(self) -> bytes:
        return bytes(self.raw.ref_block_bytes)

    @property
    def ref_block_hash(self) -> bytes:
        return bytes(self.raw.ref_block_hash)

    def bandwidth(self) -> int:
        """Bytes java-tron charges: the transaction (no result) plus 64 per contract."""
        message = tron_pb2.Transaction(raw_data=self.raw, signature=list(self.signatures))
        return int(message.ByteSize()) + MAX_RESULT_SIZE_IN_TX * len(self.raw.contract)

    def raw_hex(self) -> str:
        return bytes(self.raw.SerializeToString()).hex()

    def transfer_call(self) -> tuple[str, int] | None:
        """``(to, units)`` of a ``transfer(address,uint256)`` call, else None."""
        data = self.data
        if len(data) != 68 or data[:4] != TRANSFER_SELECTOR or any(data[4:16]):
            return None
        to = encode_address(bytes([ADDRESS_PREFIX]) + data[16:36])
        return to, int.from_bytes(data[36:68], "big")


def _contract(entry: Any, visible: bool) -> Any | None:
    """One ``raw_data.contract`` entry as protobuf; None for a type this node does not know
    or a value it cannot read in the form ``visible`` names (``Util.packTransaction`` drops
    such a contract and goes on: java-tron's ``services/http/Util.java``)."""
    if not isinstance(entry, dict):
        raise CodecError("a contract must be an object")
    kind = entry.get("type")
    value = (entry.get("parameter") or {}).get("value")
    if kind not in (TRANSFER, TRIGGER, UPDATE):
        return None
    if not isinstance(value, dict):
        raise CodecError("contract parameter value must be an object")
    try:
        message = _contract_message(kind, value, visible)
    except CodecError as exc:
        if exc.java_class in (PARSE_EXCEPTION, NULL_POINTER):
            return None  # packTransaction catches every exception of the merge, logs, goes on
        raise
    type_url = (entry.get("parameter") or {}).get("type_url") or TYPE_URL + kind
    return tron_pb2.Transaction.Contract(
        type=_CONTRACT_TYPES.Value(kind),
        parameter=any_pb2.Any(type_url=str(type_url), value=message.SerializeToString()),
        Permission_id=_integer(entry.get("Permission_id", 0), "Permission_id"))


def _contract_message(kind: str, value: dict[str, Any], visible: bool) -> Any:
    message: Any
    if kind == UPDATE:
        message = update_contract.from_json(value, visible)
    elif kind == TRANSFER:
        message = tron_pb2.TransferContract(
            owner_address=raw_address(value.get("owner_address"), visible),
            to_address=raw_address(value.get("to_address"), visible),
            amount=_integer(value.get("amount", 0), "amount"))
    else:
        message = tron_pb2.TriggerSmartContract(
            owner_address=raw_address(value.get("owner_address"), visible),
            contract_address=raw_address(value.get("contract_address"), visible),
            data=_hex(value.get("data", ""), "data"),
            call_value=_integer(value.get("call_value", 0), "call_value"),
            call_token_value=_integer(value.get("call_token_value", 0), "call_token_value"),
            token_id=_integer(value.get("token_id", 0), "token_id"))
    return message


def pack_raw(raw_data: Any, visible: bool = False) -> _Raw:
    """``raw_data`` JSON (hex addresses, base58 with ``visible``) as protobuf, as java-tron
    packs it."""
    if not isinstance(raw_data, dict) or not isinstance(raw_data.get("contract", []), list):
        raise CodecError("raw_data must be an object with a contract list")
    contracts = [c for c in (_contract(e, visible) for e in raw_data.get("contract", []))
                 if c]
    raw = tron_pb2.Transaction.raw(
        ref_block_bytes=_hex(raw_data.get("ref_block_bytes", ""), "ref_block_bytes"),
        ref_block_hash=_hex(raw_data.get("ref_block_hash", ""), "ref_block_hash"),
        expiration=_integer(raw_data.get("expiration", 0), "expiration"),
        timestamp=_integer(raw_data.get("timestamp", 0), "timestamp"),
        fee_limit=_integer(raw_data.get("fee_limit", 0), "fee_limit"),
        data=_hex(raw_data.get("data", ""), "data"),
        contract=contracts)
    return raw


def txid_of(raw: _Raw) -> str:
    """SHA-256 of the encoded ``raw_data``: the transaction's id."""
    return hashlib.sha256(raw.SerializeToString()).hexdigest()


def decode(raw: _Raw, signatures: list[bytes]) -> Decoded:
    """The decoded form of a protobuf ``raw_data`` and its signatures."""
    base = {"raw": raw, "signatures": tuple(signatures), "txid": txid_of(raw)}
    if not raw.contract:
        return Decoded(contract_type=None, **base)
    contract = raw.contract[0]
    kind = _CONTRACT_TYPES.Name(contract.type)
    if kind == TRANSFER:
        transfer = tron_pb2.TransferContract.FromString(contract.parameter.value)
        return Decoded(contract_type=kind, owner=encode_address(transfer.owner_address),
                       to=encode_address(transfer.to_address), amount=transfer.amount,
                       permission_id=contract.Permission_id, **base)
    if kind == TRIGGER:
        call = tron_pb2.TriggerSmartContract.FromString(contract.parameter.value)
        return Decoded(contract_type=kind, owner=encode_address(call.owner_address),
                       contract_address=encode_address(call.contract_address),
                       data=bytes(call.data), call_value=call.call_value,
                       permission_id=contract.Permission_id, **base)
    if kind == UPDATE:
        update = update_contract.from_bytes(contract.parameter.value)
        return Decoded(contract_type=kind, owner=address_key(bytes(update.owner_address)),
                       update=update, permission_id=contract.Permission_id, **base)
    return Decoded(contract_type=None, **base)


def from_json(body: Any, visible: bool = False) -> Decoded:
    """A transaction as ``broadcasttransaction`` / ``getsignweight`` receive it."""
    if not isinstance(body, dict):
        raise CodecError("transaction must be an object")
    signatures = body.get("signature") or []
    if not isinstance(signatures, list):
        raise CodecError("signature must be a list")
    return decode(pack_raw(body.get("raw_data"), visible),
                  [_hex(s, "signature") for s in signatures])


def from_hex(text: Any) -> Decoded:
    """A transaction as ``broadcasthex`` receives it: the protobuf ``Transaction`` in hex."""
    try:
        message = tron_pb2.Transaction.FromString(_hex(text, "transaction"))
    except DecodeError as exc:
        raise CodecError(f"transaction is not a protobuf Transaction: {exc}") from None
    return decode(message.raw_data, [bytes(s) for s in message.signature])


def signer(txid: str, signature: bytes) -> str | None:
    """The base58 address whose key made ``signature`` over ``txid``; None if unreadable."""
    try:
        key = Signature(signature[:65]).recover_public_key_from_msg_hash(bytes.fromhex(txid))
    except (BadSignature, ValueError):
        return None
    return str(key.to_base58check_address())


def _address_json(raw: bytes, visible: bool) -> str:
    return encode_address(raw) if visible else raw.hex()


def contract_json(decoded: Decoded, visible: bool) -> dict[str, Any]:
    """The ``parameter.value`` of the transaction's contract, zero fields left out."""
    contract = decoded.raw.contract[0]
    if decoded.contract_type == UPDATE:
        return update_contract.to_json(decoded.update, visible)
    if decoded.contract_type == TRANSFER:
        message = tron_pb2.TransferContract.FromString(contract.parameter.value)
        value: dict[str, Any] = {
            "amount": message.amount,
            "owner_address": _address_json(message.owner_address, visible),
            "to_address": _address_json(message.to_address, visible)}
    else:
        call = tron_pb2.TriggerSmartContract.FromString(contract.parameter.value)
        value = {"data": bytes(call.data).hex(),
                 "owner_address": _address_json(call.owner_address, visible),
                 "contract_address": _address_json(call.contract_address, visible),
                 "call_value": call.call_value, "call_token_value": call.call_token_value,
                 "token_id": call.token_id}
    return {k: v for k, v in value.items() if v not in (0, "")}


def raw_json(decoded: Decoded, visible: bool) -> dict[str, Any]:
    """``raw_data`` as java-tron prints it (bytes in hex, zero fields left out)."""
    raw = decoded.raw
    contracts = []
    if decoded.contract_type is not None:
        entry: dict[str, Any] = {
            "parameter": {"value": contract_json(decoded, visible),
                          "type_url": raw.contract[0].parameter.type_url},
            "type": decoded.contract_type}
        if decoded.permission_id:
            entry["Permission_id"] = decoded.permission_id
        contracts.append(entry)
    shown: dict[str, Any] = {
        "contract": contracts, "ref_block_bytes": bytes(raw.ref_block_bytes).hex(),
        "ref_block_hash": bytes(raw.ref_block_hash).hex(), "expiration": raw.expiration,
        "fee_limit": raw.fee_limit, "timestamp": raw.timestamp, "data": bytes(raw.data).hex()}
    return {k: v for k, v in shown.items() if v not in (0, "")}


def transaction_json(decoded: Decoded, visible: bool, *,
                     extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A whole transaction as java-tron prints it (``visible``, ``txID``, ``raw_data_hex``)."""
    shown: dict[str, Any] = {"visible": visible, "txID": decoded.txid,
                             "raw_data": raw_json(decoded, visible),
                             "raw_data_hex": decoded.raw_hex()}
    if decoded.signatures:
        shown["signature"] = [s.hex() for s in decoded.signatures]
    shown.update(extra or {})
    return shown


__all__ = ["MAX_RESULT_SIZE_IN_TX", "NULL_POINTER", "PARSE_EXCEPTION", "TRANSFER",
           "TRANSFER_SELECTOR", "TRIGGER", "TYPE_URL", "UPDATE", "CodecError", "Decoded",
           "address_key", "contract_json", "decode", "from_base58_check", "from_hex",
           "from_hex_string", "from_json", "json_address", "pack_raw", "raw_address", "raw_json",
           "shown_address", "signer", "transaction_json", "txid_of"]
