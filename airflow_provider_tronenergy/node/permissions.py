"""An account's permissions as ``wallet/getaccount`` shows them, and what they let signers do.

java-tron's rules (``TransactionCapsule.validateSignature`` and ``checkWeight``,
``TransactionUtil.checkPermissionOperations``): a transaction names a permission of
its owner (``Permission_id``: 0 the owner, 2 and up the actives); an active one must
allow the contract's type in its 32-byte ``operations`` (bit ``type`` of byte
``type / 8``); its signatures must come from distinct keys of the permission whose
weights reach its threshold. :meth:`AccountPermissions.refusal` says, before anything
is signed, why a set of signers could not sign a contract under a permission.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from airflow_provider_tronenergy.node.errors import NodeError
from tronenergy_protocol.address import encode_address, is_valid_address

CONTRACT_TYPES: Final = {"TransferContract": 1, "TriggerSmartContract": 31}
"""The contract types (``Transaction.Contract.ContractType``) a payout sends."""


@dataclass(frozen=True)
class Permission:
    """One permission: id, type, name, threshold, keys by address, and for an active one
    its operations."""

    id: int
    type: str
    name: str
    threshold: int
    keys: tuple[tuple[str, int], ...]
    operations: bytes = b""

    def weight_of(self, address: str) -> int:
        return next((w for a, w in self.keys if a == address), 0)

    def allows(self, contract_type: str) -> bool:
        number = CONTRACT_TYPES[contract_type]
        return len(self.operations) == 32 and bool(
            self.operations[number // 8] & (1 << (number % 8)))

    @classmethod
    def from_node(cls, payload: Any, default_id: int, default_type: str) -> Permission:
        if not isinstance(payload, dict):
            raise NodeError("wallet/getaccount gave a permission that is not an object")
        try:
            keys = tuple((_address(k["address"]), int(k["weight"])) for k in payload["keys"])
            return cls(id=int(payload.get("id", default_id)),
                       type=str(payload.get("type", default_type)),
                       name=str(payload.get("permission_name", "")),
                       threshold=int(payload.get("threshold", 0)), keys=keys,
                       operations=bytes.fromhex(str(payload.get("operations", ""))))
        except (KeyError, TypeError, ValueError):
            raise NodeError("wallet/getaccount gave a permission that cannot be read") from None


def _address(value: Any) -> str:
    text = str(value)
    if is_valid_address(text):
        return text
    return encode_address(bytes.fromhex(text))


@dataclass(frozen=True)
class AccountPermissions:
    """The owner permission and the actives of an account."""

    address: str
    owner: Permission
    actives: tuple[Permission, ...]

    @classmethod
    def from_node(cls, address: str, payload: dict[str, Any]) -> AccountPermissions:
        """``wallet/getaccount``'s answer; an account never updated shows java-tron's
        defaults (its address, weight 1, threshold 1; tronpy fills them in the same way)."""
        if not payload:
            raise NodeError(f"wallet/getaccount: {address} is not an activated account")
        owner = payload.get("owner_permission") or {
            "permission_name": "owner", "threshold": 1,
            "keys": [{"address": address, "weight": 1}]}
        actives = payload.get("active_permission") or []
        return cls(address=address, owner=Permission.from_node(owner, 0, "Owner"),
                   actives=tuple(Permission.from_node(a, 2, "Active") for a in actives))

    def get(self, permission_id: int) -> Permission | None:
        if permission_id == 0:
            return self.owner
        return next((p for p in self.actives if p.id == permission_id), None)

    def refusal(self, permission_id: int, signers: Sequence[str],
                contract_type: str = "TriggerSmartContract") -> str | None:
        """Why ``signers`` cannot sign ``contract_type`` from this account under
        ``permission_id`` (the chain would refuse the transaction), or None."""
        permission = self.get(permission_id)
        if permission is None:
            return f"{self.address} has no permission {permission_id}"
        name = permission.name or permission.type
        what = f"permission {permission_id} ({name}) of {self.address}"
        if permission_id != 0 and not permission.allows(contract_type):
            return f"{what} does not allow {contract_type}"
        outside = [s for s in signers if permission.weight_of(s) == 0]
        if outside:
            verb = "is" if len(outside) == 1 else "are"
            return f"{', '.join(outside)} {verb} not a key of {what}"
        if len(set(signers)) != len(signers):
            return f"the same key signs twice under {what}"
        weight = sum(permission.weight_of(s) for s in signers)
        if weight < permission.threshold:
            return (f"the signers' weight {weight} is under the threshold "
                    f"{permission.threshold} of {what}: configure more signers")
        return None

    def signing(self, permission_id: int, signers: Sequence[str]) -> int:
        """How many of ``signers``, taken in order, sign under ``permission_id``: the fewest
        whose weights reach the threshold (a transaction carries no more signatures than
        it needs); all of them when they do not (:meth:`refusal` says so)."""
        permission = self.get(permission_id)
        if permission is None:
            return len(signers)
        weight = 0
        for count, signer in enumerate(signers, 1):
            weight += permission.weight_of(signer)
            if weight >= permission.threshold:
                return count
        return len(signers)
