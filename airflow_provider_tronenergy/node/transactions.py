"""A TRC20 or TRX transfer built offline, in the node's own encoding (tronpy's protobuf).

A TRC20 transfer is a ``TriggerSmartContract`` calling ``transfer(address,uint256)``; a TRX
transfer a ``TransferContract`` (owner, recipient, amount in sun), encoded as tronpy's
``tronpy.proto.transaction`` encodes one (the same fields, the same ``Any`` type URL). Built
from a reference block the caller read (TAPOS), an expiration on the chain's
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
TRANSFER: Final = "TransferContract"
TRANSFER_SELECTOR: Final = "a9059cbb"
"""``transfer(address,uint256)``'s selector: the first 4 bytes of its Keccak-256."""
RESULT_BYTES: Final = 64
"""java-tron charges bandwidth for a transaction's bytes plus this much for its result
(``Constant.MAX_RESULT_SIZE_IN_TX``)."""
MAX_FEE_LIMIT_SUN: Final = 15_000 * 1_000_000
"""The chain's ``getMaxFeeLimit`` today: 15,000 TRX."""
SIGNATURE_BYTES: Final = 65
"""A signature's length: ``r || s || v`` (it encodes in 67 bytes of the transaction)."""
MAX_TRX_SUN: Final = 2**63 - 1
"""``TransferContract.amount`` is an ``int64``; java-tron refuses 0 and below."""


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

    def bandwidth(self, signatures: int = 1) -> int:
        """The bandwidth the chain charges for this transaction once signed by ``signatures``
        keys (:func:`bandwidth_bytes` of the signed bytes: a signature is always
        :data:`SIGNATURE_BYTES`), known before any key signs."""
        if isinstance(signatures, bool) or not isinstance(signatures, int) or signatures < 1:
            raise ValueError("a transaction carries at least one signature")
        return bandwidth_bytes(self.signed(*[bytes(SIGNATURE_BYTES)] * signatures))

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
    data = bytes.fromhex(TRANSFER_SELECTOR) + trx_abi.encode(["address", "uint256"],
                                                             [to, units])
    call = tron_pb2.TriggerSmartContract(owner_address=_raw_address(owner),
                                         contract_address=_raw_address(contract), data=data)
    return _transaction(call, tron_pb2.Transaction.Contract.TriggerSmartContract,
                        fee_limit_sun=fee_limit_sun, ref=ref, expiration_ms=expiration_ms,
                        timestamp_ms=timestamp_ms, permission_id=permission_id)


def trx_transfer_contract(*, owner: str, to: str, amount_sun: int, ref: RefBlock,
                          expiration_ms: int, timestamp_ms: int,
                          permission_id: int = 0) -> UnsignedTransfer:
    """A ``TransferContract`` of ``amount_sun`` from ``owner`` to ``to``, expiring at
    ``expiration_ms``, signed under the owner's permission ``permission_id`` (as
    :func:`token_transfer`). No ``fee_limit``: it bounds a contract call's energy, and a TRX
    transfer uses none (tronpy's ``trx.transfer`` sets none either). java-tron refuses an
    amount of 0, a transfer to oneself (``TransferActuator.validate``): so is it here.
    """
    from tronpy.proto import tron_pb2

    if isinstance(amount_sun, bool) or not isinstance(amount_sun, int) or not (
            0 < amount_sun <= MAX_TRX_SUN):
        raise ValueError("amount_sun must be a positive integer of sun (an int64)")
    if owner == to:
        raise ValueError("a TRX transfer cannot go to its own sender")
    message = tron_pb2.TransferContract(owner_address=_raw_address(owner),
                                        to_address=_raw_address(to), amount=amount_sun)
    return _transaction(message, tron_pb2.Transaction.Contract.TransferContract,
                        fee_limit_sun=0, ref=ref, expiration_ms=expiration_ms,
                        timestamp_ms=timestamp_ms, permission_id=permission_id)


def trx_transfer_bandwidth(*, owner: str, to: str, amount_sun: int, permission_id: int = 0,
                           signatures: int = 1) -> int:
    """The bandwidth a :func:`trx_transfer_contract` of these fields costs, before its
    reference block is read: what a pre-flight counts per transfer. Exact: a transfer's
    bytes vary only with these (the amount's varint, a permission id other than 0, the
    signatures); the reference block's fields have fixed lengths, and every time in ms
    from 1971 to 2109 (2**35 to 2**42) encodes in the same 6 bytes as the one used here."""
    now_ms = 1_700_000_000_000
    ref = RefBlock(1, "00" * 32, now_ms)
    return trx_transfer_contract(owner=owner, to=to, amount_sun=amount_sun, ref=ref,
                                 expiration_ms=now_ms + 60_000, timestamp_ms=now_ms,
                                 permission_id=permission_id).bandwidth(signatures)


def _transaction(message: Any, contract_type: Any, *, fee_limit_sun: int, ref: RefBlock,
                 expiration_ms: int, timestamp_ms: int, permission_id: int) -> UnsignedTransfer:
    """One contract in a ``raw_data`` referring to ``ref`` (TAPOS), and its txID."""
    from tronpy.proto import tron_pb2

    if len(ref.block_id) != 64 or not expiration_ms > ref.timestamp_ms:
        raise ValueError("a transaction needs a 32-byte reference block and an expiration "
                         "after it")
    if isinstance(permission_id, bool) or not isinstance(permission_id, int) or not (
            0 <= permission_id <= 9 and permission_id != 1):
        raise ValueError("permission_id must be 0 (owner) or 2 to 9 (an active permission)")
    contract_message = tron_pb2.Transaction.Contract(type=contract_type,
                                                     Permission_id=permission_id)
    contract_message.parameter.Pack(message, "type.googleapis.com")
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
