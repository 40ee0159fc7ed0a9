"""``AccountPermissionUpdateContract`` as protobuf, read from and printed as java-tron's JSON.

tronpy's ``tron_pb2`` has no ``Permission`` messages, so the three messages are declared
here from java-tron's own definitions (``protocol/src/main/protos/core/Tron.proto``:
``Key``, ``Permission``; ``core/contract/account_contract.proto``:
``AccountPermissionUpdateContract``, java-tron commit
029e709e537363e24f574e5dc92b6ec3392b6c8a) in a descriptor pool of their own, and
protobuf encodes them: the txID of an update is the one java-tron computes.

JSON as ``JsonFormat.merge`` reads it: a key's ``address`` hex, or base58check with
``visible``; ``operations`` hex; ``type`` the enum's name or number; ``null`` for a
field leaves it unset (tronpy sends ``"witness": null``); fields it does not know are
skipped. Printing leaves out every field at its default, as ``JsonFormat`` does.
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tronenergy_protocol.address import encode_address
from tronenergy_sandbox.chain.jsonbytes import (
    PARSE_EXCEPTION,
    CodecError,
    from_hex_string,
    integer,
    json_address,
)

UPDATE: Final = "AccountPermissionUpdateContract"
PERMISSION_TYPES: Final = ("Owner", "Witness", "Active")
"""``Permission.PermissionType``: Owner 0, Witness 1, Active 2."""

_F = descriptor_pb2.FieldDescriptorProto


def _messages() -> tuple[Any, Any]:
    """The ``Permission`` and ``AccountPermissionUpdateContract`` classes."""
    proto = descriptor_pb2.FileDescriptorProto(name="tronenergy_permission.proto",
                                               package="protocol", syntax="proto3")
    key = proto.message_type.add(name="Key")
    key.field.add(name="address", number=1, type=_F.TYPE_BYTES, label=_F.LABEL_OPTIONAL)
    key.field.add(name="weight", number=2, type=_F.TYPE_INT64, label=_F.LABEL_OPTIONAL)
    permission = proto.message_type.add(name="Permission")
    kind = permission.enum_type.add(name="PermissionType")
    for number, name in enumerate(PERMISSION_TYPES):
        kind.value.add(name=name, number=number)
    for number, name, type_ in ((2, "id", _F.TYPE_INT32), (3, "permission_name", _F.TYPE_STRING),
                                (4, "threshold", _F.TYPE_INT64), (5, "parent_id", _F.TYPE_INT32),
                                (6, "operations", _F.TYPE_BYTES)):
        permission.field.add(name=name, number=number, type=type_, label=_F.LABEL_OPTIONAL)
    permission.field.add(name="type", number=1, type=_F.TYPE_ENUM, label=_F.LABEL_OPTIONAL,
                         type_name=".protocol.Permission.PermissionType")
    permission.field.add(name="keys", number=7, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                         type_name=".protocol.Key")
    update = proto.message_type.add(name=UPDATE)
    update.field.add(name="owner_address", number=1, type=_F.TYPE_BYTES,
                     label=_F.LABEL_OPTIONAL)
    for number, name, label in ((2, "owner", _F.LABEL_OPTIONAL),
                                (3, "witness", _F.LABEL_OPTIONAL),
                                (4, "actives", _F.LABEL_REPEATED)):
        update.field.add(name=name, number=number, type=_F.TYPE_MESSAGE, label=label,
                         type_name=".protocol.Permission")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("protocol.Permission")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName(f"protocol.{UPDATE}")))


Permission, AccountPermissionUpdateContract = _messages()


def _parse_error(message: str) -> CodecError:
    return CodecError(message, java_class=PARSE_EXCEPTION)


def _permission_type(value: Any) -> int:
    if isinstance(value, str) and value in PERMISSION_TYPES:
        return PERMISSION_TYPES.index(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 3:
        return value
    raise _parse_error(f'Enum type "protocol.Permission.PermissionType" has no value named '
                       f'"{value}".')


def _permission(value: Any, visible: bool) -> Any:
    """One ``Permission`` from its JSON."""
    if not isinstance(value, dict):
        raise _parse_error("Expected \"{\".")
    message = Permission()
    if value.get("type") is not None:
        message.type = _permission_type(value["type"])
    for name in ("id", "threshold", "parent_id"):
        if value.get(name) is not None:
            setattr(message, name, integer(value[name], name))
    if value.get("permission_name") is not None:
        message.permission_name = str(value["permission_name"])
    if value.get("operations") is not None:
        if not isinstance(value["operations"], str):
            raise _parse_error("Expected string.")
        message.operations = from_hex_string(value["operations"])
    for entry in value.get("keys") or []:
        if not isinstance(entry, dict):
            raise _parse_error("Expected \"{\".")
        message.keys.add(address=json_address(entry.get("address"), visible),
                         weight=integer(entry.get("weight") or 0, "weight"))
    return message


def from_json(value: dict[str, Any], visible: bool) -> Any:
    """The contract's ``parameter.value`` (or the building route's body) as protobuf."""
    message = AccountPermissionUpdateContract(
        owner_address=json_address(value.get("owner_address"), visible))
    for name in ("owner", "witness"):
        if value.get(name) is not None:
            getattr(message, name).CopyFrom(_permission(value[name], visible))
    actives = value.get("actives")
    if actives is not None:
        if not isinstance(actives, list):
            raise _parse_error("Expected \"[\".")
        for active in actives:
            message.actives.append(_permission(active, visible))
    return message


def from_bytes(data: bytes) -> Any:
    return AccountPermissionUpdateContract.FromString(data)


def _address(raw: bytes, visible: bool) -> str:
    if visible and len(raw) == 21:
        return encode_address(raw)
    return raw.hex()


def permission_json(message: Any, visible: bool) -> dict[str, Any]:
    """A ``Permission`` as ``JsonFormat`` prints it (fields at their default left out)."""
    shown: dict[str, Any] = {}
    if message.type:
        shown["type"] = PERMISSION_TYPES[message.type]
    for name in ("id", "permission_name", "threshold", "parent_id"):
        if getattr(message, name):
            shown[name] = getattr(message, name)
    if message.operations:
        shown["operations"] = bytes(message.operations).hex()
    if message.keys:
        shown["keys"] = [{k: v for k, v in (("address", _address(bytes(key.address), visible)),
                                            ("weight", key.weight)) if v}
                         for key in message.keys]
    return shown


def to_json(message: Any, visible: bool) -> dict[str, Any]:
    """The contract's ``parameter.value`` as java-tron prints it."""
    shown: dict[str, Any] = {}
    if message.owner_address:
        shown["owner_address"] = _address(bytes(message.owner_address), visible)
    for name in ("owner", "witness"):
        if message.HasField(name):
            shown[name] = permission_json(getattr(message, name), visible)
    if message.actives:
        shown["actives"] = [permission_json(a, visible) for a in message.actives]
    return shown
