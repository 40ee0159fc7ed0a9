"""A TRC20 transfer built offline, in the node's own encoding (tronpy's protobuf).

Built from a reference block the caller read (TAPOS), an expiration on the chain's
clock and a ``fee_limit``; the txID is the SHA-256 of the encoded ``raw_data``, so
the bytes journaled, signed and broadcast (``wallet/broadcasthex``) are one and the
same. Nothing here holds or sees a key: a signature is passed in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final

from tronenergy_protocol.address import is_valid_address

TRIGGER: Final = "TriggerSmartContract"
TRANSFER_SELECTOR: Final = "a9059cbb"
"""``transfer(address,uint256)``'s selector: the first 4 bytes of its Keccak-256."""
RESULT_BYTES: Final = 64
"""java-tron charges bandwidth for a transaction's bytes plus this much for its result
(``Constant.MAX_RESULT_SIZE_IN_TX``)."""
MAX_FEE_LIMIT_SUN: Final = 15_000 * 1_000_000
"""The chain's ``getMaxFeeLimit`` today: 15,000 TRX."""


@dataclass(frozen=True)
class RefBlock:
    """The block a transaction refers to (TAPOS): its number, id and time (the chain's clock)."""

    number: int
    block_id: str
    timestamp_ms: int


@dataclass(frozen=True)
class UnsignedTransfer:
    """A token transfer ready to sign: its encoded ``raw_data`` and its txID."""

    txid: str
    raw: bytes
    expiration_ms: int
    ref_block: int
    fee_limit_sun: int

    def signed(self, *signatures: bytes) -> dict[str, Any]:
        """What the journal keeps and :meth:`TronNodeClient.broadcast` sends: not secret
        (several signatures where the permission's threshold needs several keys)."""
        return {"txID": self.txid, "raw_data_hex": self.raw.hex(),
                "signature": [s.hex() for s in signatures]}


def _raw_address(address: str) -> bytes:
    from tronpy.keys import to_raw_address

    if not is_valid_address(address):
        raise ValueError(f"not a valid TRON address (base58check): {address!r}")
    return bytes(b"\x41" + to_raw_address(address)[-20:])


def token_transfer(*, owner: str, to: str, units: int, contract: str, fee_limit_sun: int,
                   ref: RefBlock, expiration_ms: int, timestamp_ms: int,
                   permission_id: int = 0) -> UnsignedTransfer:
    """``contract.transfer(to, units)`` from ``owner``, expiring at ``expiration_ms``, signed
    under the owner's permission ``permission_id`` (0: the owner; 2 and up: an active one);
    it is part of the hashed ``raw_data``."""
    from tronpy.abi import trx_abi
    from tronpy.proto import tron_pb2

    if isinstance(units, bool) or not isinstance(units, int) or not 0 < units < 2 ** 256:
        raise ValueError("units must be a positive integer")
    if not 0 < fee_limit_sun <= MAX_FEE_LIMIT_SUN:
        raise ValueError(f"fee_limit must be 1 to {MAX_FEE_LIMIT_SUN:,} sun")
    if len(ref.block_id) != 64 or not expiration_ms > ref.timestamp_ms:
        raise ValueError("a transaction needs a 32-byte reference block and an expiration "
                         "after it")
    data = bytes.fromhex(TRANSFER_SELECTOR) + trx_abi.encode(["address", "uint256"],
                                                             [to, units])
    call = tron_pb2.TriggerSmartContract(owner_address=_raw_address(owner),
                                         contract_address=_raw_address(contract), data=data)
    if isinstance(permission_id, bool) or not isinstance(permission_id, int) or not (
            0 <= permission_id <= 9 and permission_id != 1):
        raise ValueError("permission_id must be 0 (owner) or 2 to 9 (an active permission)")
    contract_message = tron_pb2.Transaction.Contract(type=tron_pb2.Transaction.Contract
                                                     .TriggerSmartContract,
                                                     Permission_id=permission_id)
    contract_message.parameter.Pack(call, "type.googleapis.com")
    raw = tron_pb2.Transaction.raw(
        ref_block_bytes=bytes.fromhex(ref.block_id[12:16]),
        ref_block_hash=bytes.fromhex(ref.block_id[16:32]),
        expiration=expiration_ms, timestamp=timestamp_ms, fee_limit=fee_limit_sun,
        contract=[contract_message]).SerializeToString()
    return UnsignedTransfer(txid=hashlib.sha256(raw).hexdigest(), raw=raw,
                            expiration_ms=expiration_ms, ref_block=ref.number,
                            fee_limit_sun=fee_limit_sun)


def encoded(signed: dict[str, Any]) -> bytes:
    """The protobuf ``Transaction`` of a journaled transaction: what ``broadcasthex`` takes."""
    from tronpy.proto import tron_pb2

    raw = tron_pb2.Transaction.raw.FromString(bytes.fromhex(signed["raw_data_hex"]))
    message = tron_pb2.Transaction(raw_data=raw, signature=[bytes.fromhex(s) for s in
                                                             signed["signature"]])
    return bytes(message.SerializeToString())


def bandwidth_bytes(signed: dict[str, Any]) -> int:
    """The bandwidth the chain charges for this transaction (its bytes plus its result)."""
    return len(encoded(signed)) + RESULT_BYTES
