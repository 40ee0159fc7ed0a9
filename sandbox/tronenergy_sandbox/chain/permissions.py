"""Account permissions as java-tron keeps and checks them: owner, actives, keys, weights.

An account has an ``owner`` permission (id 0: every contract) and up to eight
``active`` ones (ids 2, 3, ...: only the contract types its 32-byte ``operations``
bitmask allows), each a threshold and keys with weights; one never changed has
java-tron's defaults (the account's own address, weight 1, threshold 1; the default
active's operations). A transaction names its permission (``Permission_id`` of its
contract); its signatures must recover to distinct keys of that permission whose
weights reach the threshold. Each rule and message is java-tron's:
``TransactionCapsule.validateSignature`` and ``checkWeight`` (chainbase, capsule),
``TransactionUtil.getTransactionSignWeight`` and ``checkPermissionOperations``
(actuator, utils), ``AccountPermissionUpdateActuator.validate`` and
``checkPermission`` for an update.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from tronpy.proto import tron_pb2

from tronenergy_protocol.address import decode_address
from tronenergy_sandbox.chain import codec, update_contract
from tronenergy_sandbox.chain.accounts import ChainState
from tronenergy_sandbox.chain.charging import Refusal
from tronenergy_sandbox.chain.codec import Decoded
from tronenergy_sandbox.errors import SandboxError

OWNER: Final = "Owner"
ACTIVE: Final = "Active"
DEFAULT_OPERATIONS: Final = "7fff1fc0033e0300000000000000000000000000000000000000000000000000"
"""The operations java-tron gives a default active permission: every contract type the
chain has (``DynamicPropertiesStore.getAvailableContractType``); TransferContract is bit
1, TriggerSmartContract bit 31."""
TOTAL_SIGN_NUM: Final = 5
"""The chain's ``TOTAL_SIGN_NUM``: at most 5 keys in a permission, 5 signatures."""
MAX_ACTIVES: Final = 8
_TYPES = tron_pb2.Transaction.Contract.ContractType

PERMISSIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS chain_permissions (
    address TEXT PRIMARY KEY, owner TEXT NOT NULL, actives TEXT NOT NULL);
"""


class PermissionUpdateError(SandboxError, ValueError):
    """An update java-tron's ``AccountPermissionUpdateActuator`` refuses (its message)."""


@dataclass(frozen=True)
class Permission:
    """One permission: its id, type, name, threshold, ``(address, weight)`` keys and, for an
    active one, the 32-byte operations bitmask."""

    id: int
    type: str
    name: str
    threshold: int
    keys: tuple[tuple[str, int], ...]
    operations: bytes = b""

    def weight_of(self, address: str) -> int:
        return next((w for a, w in self.keys if a == address), 0)

    def allows(self, contract_type: str) -> bool:
        """``checkPermissionOperations``: the contract type's bit in the operations."""
        number = _TYPES.Value(contract_type)
        return len(self.operations) == 32 and bool(
            self.operations[number // 8] & (1 << (number % 8)))

    def to_json(self, visible: bool) -> dict[str, Any]:
        """As java-tron prints it (the Owner type is the enum's zero: left out)."""
        shown: dict[str, Any] = {}
        if self.type != OWNER:
            shown["type"] = self.type
        if self.id:
            shown["id"] = self.id
        shown.update({"permission_name": self.name, "threshold": self.threshold})
        if self.operations:
            shown["operations"] = self.operations.hex()
        shown["keys"] = [{"address": a if visible else decode_address(a).hex(), "weight": w}
                         for a, w in self.keys]
        return shown


def defaults(address: str) -> tuple[Permission, ...]:
    """``AccountCapsule.getDefaultPermission`` and ``createDefaultActivePermission``."""
    keys = ((address, 1),)
    return (Permission(0, OWNER, "owner", 1, keys),
            Permission(2, ACTIVE, "active", 1, keys, bytes.fromhex(DEFAULT_OPERATIONS)))


# -- an update, checked as AccountPermissionUpdateActuator checks it ----------------------
# java-tron's actuator/src/main/java/org/tron/core/actuator/AccountPermissionUpdateActuator.java
# (validate, checkPermission, calcFee) and AccountCapsule.updatePermissions, at commit
# 029e709e537363e24f574e5dc92b6ec3392b6c8a: the rules in its order, its messages.

def _checked_permission(message: Any, permission_id: int) -> Permission:
    """``checkPermission``: 1..5 distinct valid keys with positive weights summing to at
    least a positive threshold; a name of at most 32; no parent; operations (32 bytes, only
    contract types the chain has) for an active permission and none for another."""
    kind = update_contract.PERMISSION_TYPES[message.type]
    if len(message.keys) > TOTAL_SIGN_NUM:
        raise PermissionUpdateError("number of keys in permission should not be greater than "
                                    f"{TOTAL_SIGN_NUM}")
    if not message.keys:
        raise PermissionUpdateError("key's count should be greater than 0")
    if kind == "Witness" and len(message.keys) != 1:
        raise PermissionUpdateError("Witness permission's key count should be 1")
    if message.threshold <= 0:
        raise PermissionUpdateError("permission's threshold should be greater than 0")
    if len(message.permission_name) > 32:
        raise PermissionUpdateError("permission's name is too long")
    if message.parent_id != 0:
        raise PermissionUpdateError("permission's parent should be owner")
    if len({bytes(k.address) for k in message.keys}) != len(message.keys):
        raise PermissionUpdateError(f"address should be distinct in permission {kind}")
    keys = []
    for key in message.keys:
        address = codec.address_key(bytes(key.address))
        if address is None:
            raise PermissionUpdateError("key is not a validate address")
        if key.weight <= 0:
            raise PermissionUpdateError("key's weight should be greater than 0")
        keys.append((address, int(key.weight)))
    total = sum(w for _, w in keys)
    if total >= 2**63:
        raise PermissionUpdateError("long overflow")  # Math.addExact's message
    if total < message.threshold:
        raise PermissionUpdateError("sum of all key's weight should not be less than threshold "
                                    f"in permission {kind}")
    operations = bytes(message.operations)
    if kind != ACTIVE:
        if operations:
            raise PermissionUpdateError(f"{kind} permission needn't operations")
    else:
        _check_operations(operations)
    return Permission(permission_id, kind, message.permission_name, int(message.threshold),
                      tuple(keys), operations)


def _check_operations(operations: bytes) -> None:
    if len(operations) != 32:
        raise PermissionUpdateError("operations size must 32")
    available = bytes.fromhex(DEFAULT_OPERATIONS)
    for bit in range(256):
        if operations[bit // 8] & (1 << (bit % 8)) and not available[bit // 8] & (1 << (bit % 8)):
            raise PermissionUpdateError(f"{bit} isn't a validate ContractType")


def checked_update(update: Any, *, exists: bool, is_witness: bool) -> tuple[Permission, ...]:
    """An ``AccountPermissionUpdateContract`` (protobuf) as ``validate`` checks it: the
    account's new permissions (owner id 0, actives 2, 3, ... in order; a witness's own
    permission, id 1, is checked, not kept), or :class:`PermissionUpdateError`."""
    if codec.address_key(bytes(update.owner_address)) is None:
        raise PermissionUpdateError("invalidate ownerAddress")
    if not exists:
        raise PermissionUpdateError("ownerAddress account does not exist")
    if not update.HasField("owner"):
        raise PermissionUpdateError("owner permission is missed")
    if is_witness and not update.HasField("witness"):
        raise PermissionUpdateError("witness permission is missed")
    if not is_witness and update.HasField("witness"):
        raise PermissionUpdateError("account isn't witness can't set witness permission")
    if not update.actives:
        raise PermissionUpdateError("active permission is missed")
    if len(update.actives) > MAX_ACTIVES:
        raise PermissionUpdateError("active permission is too many")
    if update.owner.type != 0:
        raise PermissionUpdateError("owner permission type is error")
    checked = [_checked_permission(update.owner, 0)]
    if is_witness:
        if update.witness.type != 1:
            raise PermissionUpdateError("witness permission type is error")
        _checked_permission(update.witness, 1)
    for index, active in enumerate(update.actives):
        if active.type != 2:
            raise PermissionUpdateError("active permission type is error")
        checked.append(_checked_permission(active, 2 + index))
    return tuple(checked)


def update_message(address: str, owner: Any, actives: Any) -> Any:
    """The control API's ``{"owner": ..., "actives": [...]}`` as the contract's protobuf
    (each key's address in either form; an owner without ``type`` is the owner's)."""
    def hex_keys(permission: Any) -> Any:
        if not isinstance(permission, dict):
            return permission
        keys = []
        for entry in permission.get("keys") or []:
            value = entry.get("address") if isinstance(entry, dict) else None
            try:
                raw = codec.raw_address(value, isinstance(value, str) and value.startswith("T"))
            except codec.CodecError:
                raw = b""
            keys.append({**(entry if isinstance(entry, dict) else {}), "address": raw.hex()})
        return {**permission, "keys": keys}

    body = {"owner_address": decode_address(address).hex(), "owner": hex_keys(owner) or None,
            "actives": [hex_keys(a) for a in actives] if isinstance(actives, list) else actives}
    try:
        return update_contract.from_json(body, False)
    except codec.CodecError as exc:
        raise PermissionUpdateError(str(exc)) from None


# -- signatures against a permission ------------------------------------------------------

def _permission_of(tx: Decoded, permissions: Sequence[Permission]) -> Permission | str:
    """The permission ``tx`` names, or why it cannot be used (validateSignature's words)."""
    permission = next((p for p in permissions if p.id == tx.permission_id), None)
    if permission is None:
        return "permission isn't exit"
    if tx.permission_id != 0:
        if permission.type != ACTIVE:
            return "Permission type is error"
        assert tx.contract_type is not None
        if not permission.allows(tx.contract_type):
            return "Permission denied"
    return permission


def weigh(tx: Decoded, permission: Permission) -> tuple[int, list[str]] | Refusal:
    """``checkWeight``: the weight of ``tx``'s signatures and their signers, or the refusal
    (``code`` as ``getsignweight`` names it, the message as both print it)."""
    if len(tx.signatures) > len(permission.keys):
        return Refusal("PERMISSION_ERROR", f"Signature count is {len(tx.signatures)} more "
                       f"than key counts of permission : {len(permission.keys)}")
    weight, approved, seen = 0, [], set()
    for signature in tx.signatures:
        if len(signature) < 65:
            return Refusal("SIGNATURE_FORMAT_ERROR", f"Signature size is {len(signature)}")
        signer = codec.signer(tx.txid, signature)
        if signer is None:
            return Refusal("COMPUTE_ADDRESS_ERROR", "Signature verification failed")
        signer_weight = permission.weight_of(signer)
        if signer_weight == 0:
            return Refusal("PERMISSION_ERROR", f"{signature.hex()} is signed by {signer} but "
                           "it is not contained of permission.")
        if bytes(signature[:65]) in seen:
            return Refusal("PERMISSION_ERROR", f"{signer} has signed twice!")
        seen.add(bytes(signature[:65]))
        approved.append(signer)
        weight += signer_weight
    return weight, approved


def _sig_error(message: str) -> Refusal:
    return Refusal("SIGERROR", "Validate signature error: " + message)


def check(tx: Decoded, permissions: Sequence[Permission]) -> Refusal | None:
    """``validatePubSignature``: the broadcast's refusal of ``tx``'s signatures, if any."""
    if not tx.signatures or tx.contract_type is None:
        return _sig_error("miss sig or contract")
    if len(tx.signatures) > TOTAL_SIGN_NUM:
        return _sig_error("too many signatures")
    permission = _permission_of(tx, permissions)
    if isinstance(permission, str):
        return _sig_error(permission)
    weighed = weigh(tx, permission)
    if isinstance(weighed, Refusal):
        return _sig_error(weighed.message)
    if weighed[0] < permission.threshold:
        return _sig_error("sig error")
    return None


def sign_weight(tx: Decoded, permissions: Sequence[Permission] | None,
                visible: bool) -> dict[str, Any]:
    """``getsignweight`` as ``TransactionUtil.getTransactionSignWeight`` answers it."""
    shown_tx = codec.transaction_json(tx, visible)
    shown_tx.pop("visible")
    answer: dict[str, Any] = {"transaction": {"result": {"result": True}, "txid": tx.txid,
                                              "transaction": shown_tx}}
    if len(tx.signatures) > TOTAL_SIGN_NUM:
        return {"result": {"code": "OTHER_ERROR", "message": "too many signatures"}}
    if tx.contract_type is None or tx.owner is None:
        answer["result"] = {"code": "OTHER_ERROR",
                            "message": "Invalid transaction: no valid contract"}
        return answer
    if permissions is None:
        answer["result"] = {"code": "PERMISSION_ERROR", "message": "Account does not exist!"}
        return answer
    permission = next((p for p in permissions if p.id == tx.permission_id), None)
    problem = ("Permission for this, does not exist!" if permission is None
               else "Permission type is wrong!" if tx.permission_id and permission.type != ACTIVE
               else "Permission denied!" if tx.permission_id
               and not permission.allows(tx.contract_type) else None)
    if problem or permission is None:
        answer["result"] = {"code": "PERMISSION_ERROR", "message": problem}
        return answer
    answer["permission"] = permission.to_json(visible)
    weight = 0
    if tx.signatures:
        weighed = weigh(tx, permission)
        if isinstance(weighed, Refusal):
            answer["result"] = {"code": weighed.code, "message": weighed.message}
            return answer
        weight, approved = weighed
        answer["approved_list"] = [a if visible else decode_address(a).hex() for a in approved]
        answer["current_weight"] = weight
    # ENOUGH_PERMISSION is the enum's zero: java-tron prints nothing for it.
    answer["result"] = {} if weight >= permission.threshold else {
        "code": "NOT_ENOUGH_PERMISSION"}
    return answer


def approved_list(tx: Decoded, visible: bool) -> dict[str, Any]:
    """``getapprovedlist``: who signed, whatever the permission."""
    shown_tx = codec.transaction_json(tx, visible)
    shown_tx.pop("visible")
    answer: dict[str, Any] = {"transaction": {"result": {"result": True}, "txid": tx.txid,
                                              "transaction": shown_tx}}
    approved = []
    for signature in tx.signatures:
        if len(signature) < 65:
            answer["result"] = {"code": "SIGNATURE_FORMAT_ERROR",
                                "message": f"Signature size is {len(signature)}"}
            return answer
        signer = codec.signer(tx.txid, signature)
        if signer is None:
            answer["result"] = {"code": "COMPUTE_ADDRESS_ERROR",
                                "message": "Signature verification failed"}
            return answer
        approved.append(signer if visible else decode_address(signer).hex())
    if approved:
        answer["approved_list"] = approved
    answer["result"] = {}
    return answer


def _stored(text: str) -> Permission:
    data = json.loads(text)
    return Permission(data["id"], data["type"], data["name"], data["threshold"],
                      tuple((a, w) for a, w in data["keys"]), bytes.fromhex(data["operations"]))


def _stored_text(p: Permission) -> str:
    return json.dumps({"id": p.id, "type": p.type, "name": p.name, "threshold": p.threshold,
                       "keys": [list(k) for k in p.keys], "operations": p.operations.hex()})


class AccountPermissions(ChainState):
    """Each account's permissions in the world's database (java-tron's defaults until an
    update); the broadcast's signature check and ``getsignweight`` read them."""

    def _init_permissions(self) -> None:
        self.db.executescript(PERMISSIONS_SCHEMA)

    def permissions(self, address: str) -> tuple[Permission, ...]:
        """The account's permissions: owner first, then its actives."""
        row = self._row_as_read("chain_permissions", address, lambda: self.db.execute(
            "SELECT owner, actives FROM chain_permissions WHERE address = ?",
            (address,)).fetchone())
        if row is None:
            return defaults(address)
        return (_stored(row["owner"]),
                *(_stored(json.dumps(a)) for a in json.loads(row["actives"])))

    def update_permissions(self, address: str, update: Any) -> tuple[Permission, ...]:
        """``AccountPermissionUpdateContract`` checked and executed (``updatePermissions``):
        the owner and actives replaced; :class:`PermissionUpdateError` when refused."""
        checked = self.new_permissions(update)
        # One statement: atomic by itself, and part of a block's transaction when packed.
        self.db.execute(
            "INSERT INTO chain_permissions (address, owner, actives) VALUES (?, ?, ?) "
            "ON CONFLICT (address) DO UPDATE SET owner = excluded.owner, "
            "actives = excluded.actives",
            (address, _stored_text(checked[0]),
             json.dumps([json.loads(_stored_text(p)) for p in checked[1:]])))
        return checked

    def new_permissions(self, update: Any) -> tuple[Permission, ...]:
        """The permissions ``update`` sets, checked against the account as it stands."""
        owner = codec.address_key(bytes(update.owner_address))
        return checked_update(update, exists=owner is not None and self.is_activated(owner),
                              is_witness=owner == self.witness())

    def permission_refusal(self, tx: Decoded) -> Refusal | None:
        """The broadcast's refusal of ``tx``'s signatures under its owner's permission."""
        if tx.owner is None:
            return check(tx, ())
        return check(tx, self.permissions(tx.owner))

    def account_permissions_json(self, address: str, visible: bool) -> dict[str, Any]:
        """``owner_permission`` and ``active_permission`` as ``getaccount`` shows them."""
        found = self.permissions(address)
        return {"owner_permission": found[0].to_json(visible),
                "active_permission": [p.to_json(visible) for p in found[1:]]}
