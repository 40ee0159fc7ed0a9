"""Bytes and numbers in a transaction's JSON, as java-tron's ``JsonFormat.merge`` reads them.

Addresses hex by default and base58check with ``visible``; the exception java-tron
throws for each bad value, printed before its message in an ``Error``. Shared by the
transaction codec (``codec``) and the contracts it reads (``update_contract``).
"""

from __future__ import annotations

from typing import Any

from tronenergy_protocol.address import (
    ADDRESS_PREFIX,
    ALPHABET,
    AddressError,
    decode_address,
    encode_address,
)
from tronenergy_sandbox.errors import SandboxError


class CodecError(SandboxError, ValueError):
    """The transaction cannot be read (bad JSON shape, hex or protobuf); ``java_class`` is
    the exception java-tron throws there, printed before the message in its ``Error``."""

    def __init__(self, message: str, *,
                 java_class: str = "class java.lang.IllegalArgumentException") -> None:
        super().__init__(message)
        self.java_class = java_class


PARSE_EXCEPTION = "class org.tron.core.services.http.JsonFormat$ParseException"
NULL_POINTER = "class java.lang.NullPointerException"
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def address_key(raw: bytes) -> str | None:
    """The base58 form of a 21-byte ``0x41`` address; None for bytes no account can have."""
    if len(raw) != 21 or raw[0] != ADDRESS_PREFIX:
        return None
    return encode_address(raw)


def shown_address(address: str, visible: bool) -> str:
    """An address as java-tron prints it: base58 with ``visible``, else hex ``41...``."""
    return address if visible else decode_address(address).hex()


def from_hex_string(value: str) -> bytes:
    """java-tron's ``ByteArray.fromHexString``: ``0x`` dropped, an odd length padded with 0."""
    text = value[2:] if value.startswith("0x") else value
    if len(text) % 2:
        text = "0" + text
    if not _HEX_DIGITS.issuperset(text):
        raise CodecError("INVALID hex String", java_class=PARSE_EXCEPTION)
    return bytes.fromhex(text)


def from_base58_check(value: str) -> bytes:
    """``Commons.decodeFromBase58Check`` as ``JsonFormat`` calls it: an illegal character is
    ``Base58``'s ``IllegalArgumentException``; a bad checksum or a decoded payload that is no
    21-byte ``0x41`` address is ``null``, which java-tron then dereferences."""
    for index, char in enumerate(value):
        if char not in ALPHABET:
            raise CodecError(f"Illegal character {char} at {index}",
                             java_class="class java.lang.IllegalArgumentException")
    try:
        return decode_address(value)
    except AddressError:
        raise CodecError("null", java_class=NULL_POINTER) from None


def json_address(value: Any, visible: bool) -> bytes:
    """An address field as java-tron's ``JsonFormat.merge`` reads it (``consumeByteString``):
    hex (``ByteArray.fromHexString``) by default, base58check with ``visible``. Absent is
    empty bytes (proto3's default). Rules from java-tron's
    ``framework/.../services/http/JsonFormat.java`` (``unescapeBytes``,
    ``unescapeBytesSelfType``) and ``chainbase/.../common/utils/Commons.java``."""
    if value is None:
        return b""
    if not isinstance(value, str):
        raise CodecError("Expected string.", java_class=PARSE_EXCEPTION)
    if not visible:
        return from_hex_string(value)
    try:
        return from_base58_check(value)
    except CodecError as exc:
        if exc.java_class == NULL_POINTER:
            raise
        raise CodecError(f"INVALID base58 String, {exc}", java_class=PARSE_EXCEPTION) from None


def raw_address(value: Any, visible: bool = False) -> bytes:
    """A 21-byte address in the form ``visible`` names (:func:`json_address`), or refused
    (bytes of another length: the sandbox refuses what java-tron's actuators refuse later)."""
    raw = json_address(value, visible)
    if address_key(raw) is None:
        raise CodecError(f"{value!r} is not a TRON address")
    return raw


def hex_field(value: Any, name: str) -> bytes:
    if not isinstance(value, str):
        raise CodecError(f"{name} must be a hex string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise CodecError(f"{name} is not hex") from None


def integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodecError(f"{name} must be an integer")
    if not -(2**63) <= value < 2**63:
        raise CodecError(f"{name} is out of range")
    return value
