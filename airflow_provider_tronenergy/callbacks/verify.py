"""Callback verification: the signature over the raw bytes first, then a strict body check.

Order matters. The HMAC is checked on the exact bytes received, before any JSON
parsing, against every key-level secret (several at once while one rotates).
Only when none matches and address-level secrets are configured does the body
get a *minimal* parse, to read ``data.to`` and try that address's secrets —
the service signs with the address-level secret where one is set, so the lookup
key must come from the body itself. That parse runs on unauthenticated bytes
already bounded by the size limit; anything it cannot read is a 403, never a
400, so an unauthenticated sender learns nothing about body validation.

Only an authenticated body is validated in full (400 on any defect) and its
``timestamp`` checked against the tolerance (403 when stale: a replay).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Final, Protocol

from airflow_provider_tronenergy.callbacks.events import AMOUNT_TEXT, VerifiedTransfer, to_micro
from airflow_provider_tronenergy.errors import CallbackError, ConnectionMissing
from tronenergy_protocol.address import AddressError, decode_address
from tronenergy_protocol.signing import verify_callback

log = logging.getLogger(__name__)

EVENT_TYPE: Final = "tron.transfer"
PROBE_EVENT: Final = "tronenergy.probe"
"""A signed body that proves the route and the secret and stores nothing (the doctor's)."""
_PROBE_MARK: Final = PROBE_EVENT.encode()
DEFAULT_TOLERANCE: Final = 15 * 60
"""Seconds the body ``timestamp`` may differ from our clock; 0 disables the check."""
DEFAULT_MAX_BODY: Final = 64 * 1024
TX_HASH = re.compile(r"[0-9a-fA-F]{64}")
MAX_TOKEN_LENGTH: Final = 64


class Rejection(CallbackError):
    """A callback we refuse: the HTTP status and a JSON error for the sender's console."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message

    def to_json(self) -> dict[str, Any]:
        return {"success": False, "error": self.error, "message": self.message}


def split_secrets(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"a,b"`` or ``["a", "b"]`` -> ``("a", "b")``: rotation lists, blanks dropped."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise TypeError("webhook secrets must be strings")
        if item.strip() and item.strip() not in out:
            out.append(item.strip())
    return tuple(out)


@dataclass(frozen=True)
class WebhookSecrets:
    """Every secret a callback may be signed with. ``repr`` never shows them."""

    key_level: tuple[str, ...] = ()
    by_address: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @classmethod
    def build(
        cls,
        key_level: str | Iterable[str] | None,
        by_address: Mapping[str, str | Iterable[str]] | None = None,
    ) -> WebhookSecrets:
        addresses: dict[str, tuple[str, ...]] = {}
        for address, secrets in (by_address or {}).items():
            decode_address(address)  # a typo here would silently never match
            if split_secrets(secrets):
                addresses[address] = split_secrets(secrets)
        return cls(split_secrets(key_level), MappingProxyType(addresses))

    def __bool__(self) -> bool:
        return bool(self.key_level or self.by_address)

    def __repr__(self) -> str:
        return (f"WebhookSecrets(key_level=<{len(self.key_level)} secret(s)>, "
                f"by_address=<{len(self.by_address)} address(es)>)")


def check_signature(secrets: WebhookSecrets, body: bytes, signature: str | None) -> str:
    """Return which kind of secret signed ``body`` (``key``/``address``) or raise a 403."""
    if not signature:
        raise Rejection(403, "missing_signature", "X-Signature header is missing")
    # Every key-level secret is tried even after a match, so timing does not tell
    # which one is current.
    matched = False
    for secret in secrets.key_level:
        matched |= verify_callback(secret, body, signature)
    if matched:
        return "key"
    if secrets.by_address:
        address = _recipient_for_lookup(body)
        for secret in secrets.by_address.get(address or "", ()):
            matched |= verify_callback(secret, body, signature)
        if matched:
            return "address"
    raise Rejection(403, "invalid_signature", "X-Signature does not match the body")


def _recipient_for_lookup(body: bytes) -> str | None:
    """``data.to`` of an unauthenticated body, only to pick address-level secrets."""
    try:
        event = _loads(body)
    except (ValueError, RecursionError):
        return None
    data = event.get("data") if isinstance(event, dict) else None
    to = data.get("to") if isinstance(data, dict) else None
    return to if isinstance(to, str) else None


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Duplicate keys are ambiguous (parsers disagree on which wins): refuse them."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _loads(body: bytes) -> Any:
    return json.loads(body, parse_float=Decimal, parse_constant=_no_constants,
                      object_pairs_hook=_reject_duplicates)


def _bad(message: str) -> Rejection:
    return Rejection(400, "invalid_body", message)


def _string(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if value is None:
        raise _bad(f"data.{name} is missing")
    if not isinstance(value, str):
        raise _bad(f"data.{name} must be a string")
    return value


def _integer(data: Mapping[str, Any], name: str, prefix: str = "data.") -> int:
    value = data.get(name)
    if value is None:
        raise _bad(f"{prefix}{name} is missing")
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"{prefix}{name} must be an integer")
    if not 0 <= value < 2**63:
        raise _bad(f"{prefix}{name} is out of range")
    return value


def _address(data: Mapping[str, Any], name: str) -> str:
    value = _string(data, name)
    try:
        decode_address(value)
    except AddressError as exc:
        raise _bad(f"data.{name} is not a valid TRON address: {exc}") from None
    return value


def _timestamp(event: Mapping[str, Any]) -> int:
    value = event.get("timestamp")
    if value is None:
        raise _bad("timestamp is missing")
    if isinstance(value, Decimal) and value.is_finite():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**11:
        raise _bad("timestamp must be Unix seconds")
    return value


def parse_transfer(
    body: bytes,
    *,
    signature: str,
    verified_by: str,
    now: float | None = None,
    tolerance: int = DEFAULT_TOLERANCE,
) -> VerifiedTransfer:
    """Validate an authenticated body in full; raise :class:`Rejection` (400 or 403)."""
    try:
        event = _loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise _bad(f"body is not valid JSON: {exc}") from None
    if not isinstance(event, dict):
        raise _bad("body must be a JSON object")
    kind = event.get("event")
    if kind != EVENT_TYPE:
        raise _bad(f"event must be {EVENT_TYPE!r}, got {kind!r}"[:200])
    sent_at = _timestamp(event)
    data = event.get("data")
    if not isinstance(data, dict):
        raise _bad("data must be an object")
    tx_hash = _string(data, "tx_hash")
    if not TX_HASH.fullmatch(tx_hash):
        raise _bad("data.tx_hash must be 64 hex characters")
    amount = _string(data, "amount")
    if not AMOUNT_TEXT.fullmatch(amount) or not any(c in "123456789" for c in amount):
        raise _bad("data.amount must be a positive decimal string such as \"12.5\"")
    token = _string(data, "token")
    if not 0 < len(token) <= MAX_TOKEN_LENGTH or not token.isprintable() or token != token.strip():
        raise _bad("data.token must be a symbol such as \"TRX\"")
    parsed = VerifiedTransfer(
        tx_hash=tx_hash.lower(),
        from_address=_address(data, "from"),
        to_address=_address(data, "to"),
        amount=amount,
        amount_micro=to_micro(amount),
        token=token.upper(),
        block_number=_integer(data, "block_number"),
        block_timestamp_ms=_integer(data, "block_timestamp"),
        sent_at=sent_at,
        received_at_ms=int(time.time() * 1000),
        raw_body=body,
        signature=signature.strip().lower(),
        verified_by=verified_by,
    )
    clock = time.time() if now is None else now
    if tolerance and abs(clock - sent_at) > tolerance:
        raise Rejection(403, "stale_timestamp",
                        f"timestamp is more than {tolerance} s away from the receiver's clock")
    return parsed


def verify(
    secrets: WebhookSecrets,
    body: bytes,
    signature: str | None,
    *,
    now: float | None = None,
    tolerance: int = DEFAULT_TOLERANCE,
) -> VerifiedTransfer:
    """Signature, then body, then freshness: the whole gate in one call."""
    verified_by = check_signature(secrets, body, signature)
    assert signature is not None
    return parse_transfer(body, signature=signature, verified_by=verified_by, now=now,
                          tolerance=tolerance)


@dataclass(frozen=True)
class Probe:
    """A verified probe: the sender holds a secret the receiver accepts; nothing to store."""

    sent_at: int


def probe_body(now: float | None = None) -> bytes:
    """The body of a probe sent now; sign it with
    :func:`tronenergy_protocol.signing.sign_callback`."""
    sent_at = int(time.time() if now is None else now)
    return json.dumps({"event": PROBE_EVENT, "timestamp": sent_at},
                      separators=(",", ":")).encode()


def verify_any(
    secrets: WebhookSecrets,
    body: bytes,
    signature: str | None,
    *,
    now: float | None = None,
    tolerance: int = DEFAULT_TOLERANCE,
) -> VerifiedTransfer | Probe:
    """:func:`verify`, and a signed fresh probe answered as a :class:`Probe`: the signature
    is checked first, so a forged or unsigned probe is refused (403) as a transfer is."""
    verified_by = check_signature(secrets, body, signature)
    assert signature is not None
    if _PROBE_MARK in body:  # only a probe names it: a transfer's body is parsed once
        try:
            event = _loads(body)
        except (ValueError, RecursionError) as exc:
            raise _bad(f"body is not valid JSON: {exc}") from None
        if isinstance(event, dict) and event.get("event") == PROBE_EVENT:
            sent_at = _timestamp(event)
            clock = time.time() if now is None else now
            if tolerance and abs(clock - sent_at) > tolerance:
                raise Rejection(403, "stale_timestamp", f"timestamp is more than {tolerance} "
                                "s away from the receiver's clock")
            return Probe(sent_at)
    return parse_transfer(body, signature=signature, verified_by=verified_by, now=now,
                          tolerance=tolerance)


class SecretsSource(Protocol):
    """Where the app gets the current secrets; ``None`` means "not configured"."""

    async def get(self) -> WebhookSecrets | None: ...


@dataclass(frozen=True)
class StaticSecrets:
    secrets: WebhookSecrets

    async def get(self) -> WebhookSecrets | None:
        return self.secrets if self.secrets else None


class RefreshingSecrets:
    """Secrets re-read by a blocking ``load`` (e.g. an Airflow connection) on a thread.

    A good value is kept ``ttl`` seconds, so rotating the secret in the connection
    needs no restart; when nothing is configured (``None``) or loading fails, the
    next request past ``retry`` seconds tries again. A failed reload keeps serving
    the last good value (a secrets backend down is an outage), except a
    ``ConnectionMissing``: the connection named names nothing, an answer, so nothing is
    served from it, as when it has no secret.
    """

    def __init__(
        self, load: Callable[[], WebhookSecrets | None], *, ttl: float = 60.0, retry: float = 2.0
    ) -> None:
        self.load = load
        self.ttl = ttl
        self.retry = retry
        self._value: WebhookSecrets | None = None
        self._next_load = 0.0
        self._lock: asyncio.Lock | None = None

    async def get(self) -> WebhookSecrets | None:
        if time.monotonic() < self._next_load:
            return self._value
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if time.monotonic() >= self._next_load:
                await self._reload()
        return self._value

    async def _reload(self) -> None:
        try:
            value = await asyncio.to_thread(self.load)
        except ConnectionMissing as exc:
            log.error("no webhook secrets: %s", exc)
            value = None
        except Exception:
            log.exception("loading the webhook secrets failed; keeping the previous ones")
            self._next_load = time.monotonic() + self.retry
            return
        self._value = value if value else None
        self._next_load = time.monotonic() + (self.ttl if self._value else self.retry)

    def invalidate(self) -> None:
        """Reload on the next request (tests, or after an operator changed the secret)."""
        self._next_load = 0.0


def secrets_source(
    secrets: WebhookSecrets | SecretsSource | str | Sequence[str] | None,
    address_secrets: Mapping[str, str | Iterable[str]] | None = None,
) -> SecretsSource:
    """Normalise what ``create_app`` accepts into a :class:`SecretsSource`."""
    if isinstance(secrets, WebhookSecrets):
        if address_secrets:
            raise ValueError("address_secrets given twice")
        return StaticSecrets(secrets)
    if secrets is None or isinstance(secrets, (str, list, tuple)):
        return StaticSecrets(WebhookSecrets.build(secrets, address_secrets))
    if address_secrets:
        raise ValueError("pass address_secrets to the secrets source, not beside it")
    return secrets  # type: ignore[return-value]
