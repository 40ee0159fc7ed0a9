"""The one request-building and answer-reading core that the sync and async clients share.

Transports only move bytes: this module decides the exact method, path, query
and body, signs them (``protocol.signing``), reads the envelope, and turns every
failure into the error hierarchy, so both clients behave identically.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Generic, NoReturn, TypeVar
from urllib.parse import quote, urlencode, urlsplit

from airflow_provider_tronenergy import __version__
from airflow_provider_tronenergy.client.errors import (
    AmbiguousPurchaseError,
    NoResponseError,
    NotFoundError,
    ServerError,
    TransportError,
    TronEnergyError,
    UnexpectedResponseError,
    ValidationError,
    error_from_answer,
)
from airflow_provider_tronenergy.client.retry import Safety, provably_not_processed
from airflow_provider_tronenergy.client.wire import (
    encode_json,
    load_json,
    parse_retry_after,
    redirect_message,
)
from tronenergy_protocol.codes import SUCCESS_ENERGY, SUCCESS_MONITOR
from tronenergy_protocol.signing import SCHEMES, sign_request

log = logging.getLogger(__name__)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)  # a Call[Purchase] is a Call[Purchase | SmartPurchase]

SUCCESS_CODES = (SUCCESS_ENERGY, SUCCESS_MONITOR)
DEFAULT_POOL_SIZE = 32
USER_AGENT = f"airflow-provider-tronenergy/{__version__}"
RentTime = int | float | Decimal | str
_ENVELOPE_KEYS = ("success", "code")
_MAX_MESSAGE = 300


class Secret:
    """Holds a credential so that no repr, log line or traceback local shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


@dataclass(frozen=True)
class Timeout:
    """Seconds to connect, to wait for each read, and for the whole exchange.

    ``total`` (default ``connect + read``) bounds one attempt from the first byte sent
    to the last byte read: per-read timeouts alone let a server that drips its
    answer hold a call forever. Only ``connect`` failing is safe to resend.
    """

    connect: float = 5.0
    read: float = 30.0
    total: float | None = None

    @classmethod
    def of(cls, value: float | tuple[float, ...] | Timeout) -> Timeout:
        """From seconds, ``(connect, read)``, ``(connect, read, total)`` or a Timeout."""
        if isinstance(value, Timeout):
            return value
        if isinstance(value, tuple) and len(value) in (2, 3):
            return cls(*(float(part) for part in value))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError(
                "timeout", "must be seconds, (connect, read), (connect, read, total) or a Timeout")
        return cls(float(value), float(value))

    def __post_init__(self) -> None:
        if not (self.connect > 0 and self.read > 0 and (self.total is None or self.total > 0)):
            raise ValidationError("timeout", "must be positive")

    @property
    def overall(self) -> float:
        """The deadline of one attempt, in seconds."""
        return self.total if self.total is not None else self.connect + self.read


DEFAULT_TIMEOUT = Timeout()


@dataclass(frozen=True)
class Call(Generic[T_co]):
    """One endpoint call, fully validated: what to send and how to read the answer.

    ``flat``: False for the usual envelope with ``data``; True for the flat
    activation answer; None when either may come (generic requests).
    ``gone_means_done``: a 404 on a resend after an unclear attempt means the
    first attempt already did the job (deleting a monitored address).
    """

    method: str
    path: str
    parse: Callable[[Any], T_co]
    safety: Safety = Safety.IDEMPOTENT
    query: tuple[tuple[str, str], ...] = ()
    body: Any = None
    target: str | None = None
    flat: bool | None = False
    gone_means_done: bool = False


@dataclass(frozen=True)
class Prepared:
    """The exact bytes of a call: ``target`` is the path and query as sent and signed."""

    method: str
    path: str
    target: str
    url: str
    body: bytes


class RequestCore:
    """Builds, signs and reads requests for one account; holds its credentials."""

    def __init__(
        self, base_url: str, api_key: str, api_secret: str, signature_scheme: str = "v1"
    ) -> None:
        if not isinstance(base_url, str):
            raise ValidationError("base_url", "must be a string")
        parts = urlsplit(base_url.strip())
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or "@" in parts.netloc
            or parts.query
            or parts.fragment
        ):
            raise ValidationError(
                "base_url", "must be an http(s) URL with no credentials, e.g. https://host/v1"
            )
        if signature_scheme not in SCHEMES:
            raise ValidationError("signature_scheme", f"must be one of {', '.join(SCHEMES)}")
        for name, value in (("api_key", api_key), ("api_secret", api_secret)):
            if not isinstance(value, str) or not value:
                raise ValidationError(name, "must be a non-empty string")
        self.root = f"{parts.scheme}://{parts.netloc}"
        self.prefix = parts.path.rstrip("/")
        self.base_url = self.root + self.prefix
        self.signature_scheme = signature_scheme
        self._api_key = Secret(api_key)
        self._api_secret = Secret(api_secret)
        self.clock: Callable[[], float] = time.time

    def __repr__(self) -> str:
        return (f"RequestCore(base_url={self.base_url!r}, "
                f"signature_scheme={self.signature_scheme!r})")

    # -- building -------------------------------------------------------------------

    def prepare(self, call: Call[Any]) -> Prepared:
        path = self.prefix + call.path
        target = path
        if call.query:
            target = f"{path}?{urlencode(call.query, quote_via=quote, safe='')}"
        body = b"" if call.body is None else encode_json(call.body)
        return Prepared(call.method, path, target, self.root + target, body)

    def headers(self, prepared: Prepared) -> dict[str, str]:
        """Fresh signed headers; made per attempt, so a resend carries a current timestamp."""
        timestamp = str(int(self.clock()))
        signature = sign_request(
            self._api_secret.reveal(), self.signature_scheme, timestamp, prepared.method,
            prepared.target, prepared.body,
        )
        headers = {
            "Accept": "application/json",
            "X-API-Key": self._api_key.reveal(),
            "X-Timestamp": timestamp,
            "X-Signature": signature,
        }
        if prepared.body:
            headers["Content-Type"] = "application/json"
        return headers

    def start(self, call: Call[T]) -> CallRun[T]:
        return CallRun(self, call)

    # -- reading --------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """Cut a service-supplied text down and blank any credential it might echo."""
        text = text[:_MAX_MESSAGE]
        for secret in (self._api_key.reveal(), self._api_secret.reveal()):
            if len(secret) >= 3:
                text = text.replace(secret, "***")
        return text

    def decode(
        self, call: Call[T], prepared: Prepared, status: int, headers: Mapping[str, str],
        body: bytes,
    ) -> T:
        """The call's result from one HTTP answer, or the matching TronEnergyError."""
        context: dict[str, Any] = {
            "status": status, "method": prepared.method, "path": prepared.path,
        }
        if 300 <= status < 400:
            raise UnexpectedResponseError(redirect_message(status, headers), **context)
        try:
            payload: Any = load_json(body)
        except ValueError as exc:
            if not 200 <= status < 300:
                raise self._failure(None, status, headers, prepared) from None
            reason = self.redact(str(exc))[:120]
            raise UnexpectedResponseError(f"answer is not JSON: {reason}", **context) from None
        success = payload.get("success") if isinstance(payload, dict) else None
        if not 200 <= status < 300:
            if success is True:  # says both things: nobody knows what the service did
                raise UnexpectedResponseError("error status with a success envelope", **context)
            raise self._failure(payload, status, headers, prepared)
        if not isinstance(payload, dict):
            raise UnexpectedResponseError(
                f"answer is a JSON {type(payload).__name__}, not an object", **context
            )
        code = payload.get("code")
        if success is False:
            raise self._failure(payload, status, headers, prepared)
        if success is not True:
            raise UnexpectedResponseError("answer has no boolean 'success'", **context)
        if code is not None and (isinstance(code, bool) or code not in SUCCESS_CODES):
            raise UnexpectedResponseError(
                f"success answer with unexpected code {self.redact(str(code))[:40]!r}", **context
            )
        try:
            return call.parse(self._data(payload, call.flat))
        except UnexpectedResponseError as exc:
            exc.status, exc.method, exc.path = status, prepared.method, prepared.path
            exc.message = self.redact(exc.message)
            raise
        except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
            # A shape the readers did not foresee must still end as a clear error.
            raise UnexpectedResponseError(
                f"answer could not be read: {type(exc).__name__}", **context
            ) from None

    @staticmethod
    def _data(payload: dict[str, Any], flat: bool | None) -> Any:
        if "data" in payload and (flat is not True or isinstance(payload["data"], dict)):
            data = payload["data"]
            if flat and "message" in payload and "message" not in data:
                data = {**data, "message": payload["message"]}
            return data
        if flat is False:
            raise UnexpectedResponseError("answer has no 'data'")
        return {key: value for key, value in payload.items() if key not in _ENVELOPE_KEYS}

    def _failure(
        self, payload: Any, status: int, headers: Mapping[str, str], prepared: Prepared
    ) -> TronEnergyError:
        code: Any = None
        message = ""
        if isinstance(payload, dict):
            code = payload.get("code")
            if isinstance(payload.get("message"), str):
                message = self.redact(payload["message"])
        return error_from_answer(
            code=code, status=status, message=message, method=prepared.method,
            path=prepared.path,
            retry_after=parse_retry_after(headers.get("Retry-After"), self.clock()),
        )


class CallRun(Generic[T]):
    """One logical call across its attempts; the transports call into it.

    It remembers whether an earlier attempt may have been processed, and turns
    the final failure of a money-moving call into AmbiguousPurchaseError when
    the service may have acted on it.
    """

    def __init__(self, core: RequestCore, call: Call[T]) -> None:
        self.core = core
        self.call = call
        self.prepared = core.prepare(call)
        self.attempts = 0
        self.sent_at = datetime.now(timezone.utc)
        self.maybe_processed = False

    def headers(self) -> dict[str, str]:
        self.attempts += 1
        self.sent_at = datetime.now(timezone.utc)
        return self.core.headers(self.prepared)

    def answer(self, status: int, headers: Mapping[str, str], body: bytes, started: float) -> T:
        self._log(str(status), started)
        try:
            return self.core.decode(self.call, self.prepared, status, headers, body)
        except NotFoundError:
            if self.call.gone_means_done and self.maybe_processed:
                return self.call.parse(None)
            raise
        except (ServerError, UnexpectedResponseError):
            self.maybe_processed = True
            raise

    def no_answer(self, error: TransportError, started: float) -> TransportError:
        """Record a call with no HTTP answer; a sent one may have been processed."""
        error.method, error.path = self.prepared.method, self.prepared.path
        error.message = self.core.redact(error.message)
        self._log(type(error).__name__, started)
        if isinstance(error, NoResponseError):
            self.maybe_processed = True
        return error

    def unreadable(self, status: int | None, reason: str,
                   started: float) -> UnexpectedResponseError:
        """An answer the transport would not read whole (over the cap, bad encoding)."""
        self._log(f"{status} unreadable", started)
        self.maybe_processed = True
        return UnexpectedResponseError(self.core.redact(reason), status=status,
                                       method=self.prepared.method, path=self.prepared.path)

    def timed_out(self, seconds: float, started: float) -> TransportError:
        """No complete answer within the attempt's overall deadline: maybe processed."""
        return self.no_answer(NoResponseError(
            f"no complete answer within the overall deadline of {seconds:g} s; the request "
            "may have been processed"), started)

    def fail(self, error: TronEnergyError) -> NoReturn:
        """Raise the final error; an unclear money-moving call ends as AmbiguousPurchaseError."""
        if self.call.safety is Safety.MONEY and not provably_not_processed(error):
            raise AmbiguousPurchaseError(
                endpoint=f"{self.prepared.method} {self.prepared.path}",
                target=self.call.target,
                time=self.sent_at,
                cause=error,
            ) from error
        raise error

    def _log(self, outcome: str, started: float) -> None:
        log.debug(
            "%s %s -> %s in %.1f ms (attempt %d)", self.prepared.method, self.prepared.path,
            outcome, (time.perf_counter() - started) * 1000, self.attempts,
        )
