"""TRON address codec: base58check over a 21-byte payload that starts with 0x41.

Shared by the client (validation before any money moves) and the sandbox
(validation as the service does it), so both reject exactly the same strings.
"""

from __future__ import annotations

import hashlib
import secrets

from tronenergy_protocol.errors import ProtocolError

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_INDEX = {char: value for value, char in enumerate(ALPHABET)}
ADDRESS_PREFIX = 0x41
ADDRESS_LENGTH = 34
PAYLOAD_LENGTH = 21


class AddressError(ProtocolError):
    """The string is not a valid TRON address; the message says why."""


def _checksum(payload: bytes) -> bytes:
    return hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]


def b58encode(raw: bytes) -> str:
    number = int.from_bytes(raw, "big")
    out = []
    while number:
        number, remainder = divmod(number, 58)
        out.append(ALPHABET[remainder])
    leading_zeros = len(raw) - len(raw.lstrip(b"\0"))
    return "1" * leading_zeros + "".join(reversed(out))


def b58decode(text: str) -> bytes:
    number = 0
    for char in text:
        value = _INDEX.get(char)
        if value is None:
            raise AddressError(f"character {char!r} is not base58")
        number = number * 58 + value
    leading_ones = len(text) - len(text.lstrip("1"))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return b"\0" * leading_ones + body


def decode_address(address: str) -> bytes:
    """Return the 21-byte payload (0x41 + 20-byte account id) or raise AddressError."""
    if not isinstance(address, str):
        raise AddressError(f"address must be a string, not {type(address).__name__}")
    if len(address) != ADDRESS_LENGTH:
        raise AddressError(f"address must be {ADDRESS_LENGTH} characters, got {len(address)}")
    if not address.startswith("T"):
        raise AddressError("address must start with 'T'")
    raw = b58decode(address)
    if len(raw) != PAYLOAD_LENGTH + 4:
        raise AddressError("address does not decode to 25 bytes")
    payload, checksum = raw[:PAYLOAD_LENGTH], raw[PAYLOAD_LENGTH:]
    if payload[0] != ADDRESS_PREFIX:
        raise AddressError("address payload does not start with 0x41")
    if _checksum(payload) != checksum:
        raise AddressError("address checksum does not match")
    return payload


def encode_address(payload: bytes) -> str:
    """Encode a 21-byte payload (or a bare 20-byte account id) as a T-address."""
    if len(payload) == PAYLOAD_LENGTH - 1:
        payload = bytes([ADDRESS_PREFIX]) + payload
    if len(payload) != PAYLOAD_LENGTH or payload[0] != ADDRESS_PREFIX:
        raise AddressError("payload must be 20 bytes, or 21 bytes starting with 0x41")
    return b58encode(payload + _checksum(payload))


def is_valid_address(address: object) -> bool:
    try:
        decode_address(address)  # type: ignore[arg-type]
    except AddressError:
        return False
    return True


def random_address() -> str:
    """A fresh, valid address (for the sandbox's own wallets, tests and demos)."""
    return encode_address(secrets.token_bytes(PAYLOAD_LENGTH - 1))
