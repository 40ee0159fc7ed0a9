"""One exception hierarchy for every way a call to the service can fail.

Callers decide by class alone: whether money may have moved
(:class:`AmbiguousPurchaseError`), whether resending is safe
(:class:`ServiceUnreachableError`), or what exactly the service refused::

    TronEnergyError
    ├── InvalidRequestError            40010, other 4xx
    │   ├── ValidationError (ValueError)   caught client-side, nothing was sent
    │   ├── InvalidAddressError        40011
    │   ├── AddressNotActivatedError   40012
    │   └── AddressAlreadyActivatedError 40013
    ├── AuthenticationError            40001-40003, 401, 403
    ├── InsufficientBalanceError       40020, 402
    ├── NotFoundError                  40040, 404
    ├── ConflictError                  40090, 409
    ├── RateLimitedError               40290, 429 (retry_after)
    ├── ServerError                    50000, 50300, 5xx
    ├── UnexpectedResponseError        an answer that cannot be read
    ├── TransportError                 no HTTP answer at all
    │   ├── ServiceUnreachableError    provably never reached the server
    │   └── NoResponseError            sent, maybe processed, no answer
    └── AmbiguousPurchaseError         a money-moving call whose outcome is unknown

Messages carry code, HTTP status, method and path; never a secret. ``TronEnergyError``
is the service's room under the provider's root, ``TronEnergyProviderError``
(:mod:`airflow_provider_tronenergy.errors`); a TRON node's failures are not in it
(``NodeError``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from airflow_provider_tronenergy.errors import TronEnergyProviderError
from tronenergy_protocol.codes import DESCRIPTION, ErrorCode, lookup


class TronEnergyError(TronEnergyProviderError):
    """Base of the service client's errors; context fields are None where they do not apply."""

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        status: int | None = None,
        method: str | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.method = method
        self.path = path

    def context(self) -> str:
        parts = []
        if self.code is not None:
            parts.append(f"code {self.code}")
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.method and self.path:
            parts.append(f"{self.method} {self.path}")
        return ", ".join(parts)

    def __str__(self) -> str:
        context = self.context()
        return f"{self.message} ({context})" if context else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only context would be lost by Exception's default pickling.
        return (_rebuild, (type(self), self.__dict__.copy()))


def _rebuild(cls: type[TronEnergyError], state: dict[str, Any]) -> TronEnergyError:
    error = cls.__new__(cls)
    Exception.__init__(error, state.get("message", ""))
    error.__dict__.update(state)
    return error


class InvalidRequestError(TronEnergyError):
    """The request was refused as invalid (40010 or an unmapped 4xx)."""


class ValidationError(InvalidRequestError, ValueError):
    """Caught before anything was sent; ``field`` names the offending argument."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class InvalidAddressError(InvalidRequestError):
    """The service rejected a TRON address (40011)."""


class AddressNotActivatedError(InvalidRequestError):
    """Energy cannot be delegated to an address that is not activated (40012)."""


class AddressAlreadyActivatedError(InvalidRequestError):
    """Activation of an address that is already active (40013)."""


class AuthenticationError(TronEnergyError):
    """Missing or unknown key, bad signature, or clock outside the window (40001-40003)."""


class InsufficientBalanceError(TronEnergyError):
    """The account's available balance does not cover the order (40020)."""


class NotFoundError(TronEnergyError):
    """Unknown order or monitored address (40040)."""


class ConflictError(TronEnergyError):
    """The address is already monitored (40090)."""


class RateLimitedError(TronEnergyError):
    """Too many requests; ``retry_after`` is the server's hint in seconds, if it gave one."""

    def __init__(self, message: str, *, retry_after: float | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.retry_after = retry_after


class ServerError(TronEnergyError):
    """The service failed (5xx); whether it acted first is unknown."""


class UnexpectedResponseError(TronEnergyError):
    """An answer arrived but is not the JSON the service is specified to send."""


class TransportError(TronEnergyError):
    """No HTTP answer was received."""


class ServiceUnreachableError(TransportError):
    """The request provably never reached the server (refused, DNS, connect timeout).

    The only failure after which resending a money-moving call is safe.
    """


class NoResponseError(TransportError):
    """The request was (or may have been) sent, but no answer came: it may have been processed."""


class AmbiguousPurchaseError(TronEnergyError):
    """A money-moving call may or may not have taken effect; it was not resent.

    Look the order up (or ask a human) before buying again: a blind retry may pay twice.
    """

    def __init__(
        self, *, endpoint: str, target: str | None, time: datetime, cause: TronEnergyError
    ) -> None:
        for_target = f" for {target}" if target else ""
        message = (
            f"outcome of {endpoint}{for_target} sent at {time.isoformat()} is unknown "
            f"({type(cause).__name__}: {cause}); it was not resent, "
            "check the account's orders before buying again"
        )
        super().__init__(message, status=cause.status, code=cause.code)
        self.endpoint = endpoint
        self.target = target
        self.time = time
        self.cause = cause

    def context(self) -> str:
        return ""  # the cause's context is already in the message


_BY_CODE: dict[ErrorCode, type[TronEnergyError]] = {
    ErrorCode.MISSING_API_KEY: AuthenticationError,
    ErrorCode.BAD_SIGNATURE: AuthenticationError,
    ErrorCode.BAD_TIMESTAMP: AuthenticationError,
    ErrorCode.INVALID_PARAMETER: InvalidRequestError,
    ErrorCode.INVALID_ADDRESS: InvalidAddressError,
    ErrorCode.ADDRESS_NOT_ACTIVATED: AddressNotActivatedError,
    ErrorCode.ADDRESS_ALREADY_ACTIVATED: AddressAlreadyActivatedError,
    ErrorCode.INSUFFICIENT_BALANCE: InsufficientBalanceError,
    ErrorCode.NOT_FOUND: NotFoundError,
    ErrorCode.ALREADY_MONITORED: ConflictError,
    ErrorCode.RATE_LIMITED: RateLimitedError,
    ErrorCode.INTERNAL_ERROR: ServerError,
    ErrorCode.UPSTREAM_UNAVAILABLE: ServerError,
}

_BY_STATUS: dict[int, type[TronEnergyError]] = {
    401: AuthenticationError,
    403: AuthenticationError,
    402: InsufficientBalanceError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitedError,
}


def error_class(code: object, status: int) -> type[TronEnergyError]:
    """The class for an error answer: by known ``code``, else by HTTP ``status``."""
    known = lookup(code)
    if known is not None:
        return _BY_CODE[known]
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if 400 <= status < 500:
        return InvalidRequestError
    if status >= 500:
        return ServerError
    return TronEnergyError


def error_from_answer(
    *,
    code: object,
    status: int,
    message: str,
    method: str,
    path: str,
    retry_after: float | None = None,
) -> TronEnergyError:
    """Build the exception for a failure answer (``message`` already free of secrets)."""
    cls = error_class(code, status)
    known = lookup(code)
    if known is not None:
        description = DESCRIPTION[known]
        text = f"{description}: {message}" if message and message != description else description
    else:
        text = message or f"request failed with HTTP {status}"
    shown_code = code if isinstance(code, int) and not isinstance(code, bool) else None
    context: dict[str, Any] = {"code": shown_code, "status": status, "method": method,
                               "path": path}
    if cls is RateLimitedError:
        return RateLimitedError(text, retry_after=retry_after, **context)
    return cls(text, **context)


def no_answer_error(detail: str, *, unsent: bool, timed_out: bool) -> TransportError:
    """The error for a call with no HTTP answer, told by whether it can have reached the server.

    Each transport sorts its own exceptions into ``unsent`` (nothing left this
    process) and ``timed_out``; the wording is the same for both.
    """
    if unsent:
        return ServiceUnreachableError(f"could not connect to the service ({detail})")
    if timed_out:
        return NoResponseError(f"timed out waiting on the service ({detail}); the request "
                               "may have been processed")
    return NoResponseError(f"connection failed after sending; the request may have been "
                           f"processed ({detail})")
