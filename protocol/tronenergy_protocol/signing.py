"""Request and callback signatures (decisions.md section 1 and spec section 6).

One module for the client that signs and the sandbox that verifies, so the two
cannot drift apart.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Final, Literal

SignatureScheme = Literal["v1", "ts.body"]
SCHEMES: Final[tuple[str, ...]] = ("v1", "ts.body")
TIMESTAMP_TOLERANCE_SECONDS: Final = 300
_TIMESTAMP = re.compile(r"-?[0-9]{1,12}")


def string_to_sign(
    scheme: str, timestamp: str, method: str, path_and_query: str, body: bytes
) -> bytes:
    """Bytes that the request signature covers.

    ``v1``: ``ts\\nMETHOD\\n/path?query\\nbody``; ``ts.body``: ``ts.body``.
    ``path_and_query`` starts at the server root (``/v1/...``), exactly as sent.
    """
    if scheme == "v1":
        head = f"{timestamp}\n{method.upper()}\n{path_and_query}\n".encode()
        return head + body
    if scheme == "ts.body":
        return f"{timestamp}.".encode() + body
    raise ValueError(f"unknown signature scheme {scheme!r}; expected one of {SCHEMES}")


def hmac_hex(secret: str | bytes, message: bytes) -> str:
    key = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def sign_request(
    secret: str,
    scheme: str,
    timestamp: str,
    method: str,
    path_and_query: str,
    body: bytes = b"",
) -> str:
    return hmac_hex(secret, string_to_sign(scheme, timestamp, method, path_and_query, body))


def verify_request(
    secret: str,
    signature: str,
    scheme: str,
    timestamp: str,
    method: str,
    path_and_query: str,
    body: bytes = b"",
) -> bool:
    expected = sign_request(secret, scheme, timestamp, method, path_and_query, body)
    return _same_hex(expected, signature)


def timestamp_in_window(
    timestamp: str, now: float, tolerance: int = TIMESTAMP_TOLERANCE_SECONDS
) -> bool:
    """True when ``timestamp`` is integer Unix seconds within ``tolerance`` of ``now``."""
    if _TIMESTAMP.fullmatch(timestamp) is None:
        return False
    return abs(int(timestamp) - now) <= tolerance


def sign_callback(secret: str, body: bytes) -> str:
    """Callback signature: lowercase hex HMAC-SHA256 of the exact body bytes."""
    return hmac_hex(secret, body)


def verify_callback(secret: str, body: bytes, signature: str) -> bool:
    return _same_hex(sign_callback(secret, body), signature)


def _same_hex(expected: str, given: str) -> bool:
    """Constant-time compare that also copes with non-ASCII garbage in a header."""
    candidate = given.strip().lower().encode("utf-8", "replace")
    return hmac.compare_digest(expected.encode(), candidate)
