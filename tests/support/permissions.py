"""TRON account permissions on the sandbox chain, set as an AccountPermissionUpdateContract
would set them (``POST /sandbox/chain/permissions/<address>``)."""

from __future__ import annotations

from typing import Any

import requests
from tronpy.keys import PrivateKey
from tronpy.tron import Transaction

from support.chain import Chain
from support.control import Control

TRIGGER_ONLY = (1 << 31).to_bytes(32, "little").hex()
"""Operations allowing TriggerSmartContract (contract type 31) only: bit 31, little-endian
bytes as ``checkPermissionOperations`` reads them (``operations[type / 8] & 1 << type % 8``)."""
TRANSFER_ONLY = (1 << 1).to_bytes(32, "little").hex()
"""Operations allowing TransferContract (TRX, type 1) only."""


def addr(key: PrivateKey | str) -> str:
    return key if isinstance(key, str) else str(key.public_key.to_base58check_address())


def active(keys: list[tuple[PrivateKey | str, int]], threshold: int = 1,
           operations: str = TRIGGER_ONLY) -> dict[str, Any]:
    """An active permission: ``(key or address, weight)`` pairs."""
    return {"type": "Active", "permission_name": "payouts", "threshold": threshold,
            "operations": operations,
            "keys": [{"address": addr(k), "weight": w} for k, w in keys]}


def permit(control: Control, owner: str, owner_keys: list[PrivateKey],
           actives: list[dict[str, Any]]) -> requests.Response:
    """Replace ``owner``'s permissions: ``owner_keys`` (weight 1, threshold 1) and ``actives``."""
    body = {"owner": {"permission_name": "owner", "threshold": 1,
                      "keys": [{"address": addr(k), "weight": 1} for k in owner_keys]},
            "actives": actives}
    return requests.post(f"{control.root}/chain/permissions/{owner}", json=body, timeout=10)


def signed(chain: Chain, builder: Any, keys: list[PrivateKey], permission_id: int
           ) -> Transaction:
    """A transaction built under ``permission_id`` and signed by ``keys``."""
    txn = chain.expiring(builder.permission_id(permission_id)).build()
    txn.set_signature([k.sign_msg_hash(bytes.fromhex(txn.txid)).hex() for k in keys])
    return txn


def answer(chain: Chain, txn: Transaction) -> tuple[str, str]:
    """The node's code and message for a broadcast (``SUCCESS`` when it has none)."""
    got = chain.raw_broadcast(txn)
    return got.get("code", "SUCCESS"), got.get("message", "")
