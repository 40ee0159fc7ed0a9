"""The service's envelope codes (decisions.md section 2).

Both sides read this table: the sandbox to answer, the client to map answers to
exceptions. Codes a client does not know are handled by HTTP status instead.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

SUCCESS_ENERGY: Final = 10000
SUCCESS_MONITOR: Final = 0


class ErrorCode(IntEnum):
    MISSING_API_KEY = 40001
    BAD_SIGNATURE = 40002
    BAD_TIMESTAMP = 40003
    INVALID_PARAMETER = 40010
    INVALID_ADDRESS = 40011
    ADDRESS_NOT_ACTIVATED = 40012
    ADDRESS_ALREADY_ACTIVATED = 40013
    INSUFFICIENT_BALANCE = 40020
    NOT_FOUND = 40040
    ALREADY_MONITORED = 40090
    RATE_LIMITED = 40290
    INTERNAL_ERROR = 50000
    UPSTREAM_UNAVAILABLE = 50300

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[self]

    @property
    def description(self) -> str:
        return DESCRIPTION[self]


HTTP_STATUS: Final[dict[ErrorCode, int]] = {
    ErrorCode.MISSING_API_KEY: 401,
    ErrorCode.BAD_SIGNATURE: 401,
    ErrorCode.BAD_TIMESTAMP: 401,
    ErrorCode.INVALID_PARAMETER: 400,
    ErrorCode.INVALID_ADDRESS: 400,
    ErrorCode.ADDRESS_NOT_ACTIVATED: 400,
    ErrorCode.ADDRESS_ALREADY_ACTIVATED: 400,
    ErrorCode.INSUFFICIENT_BALANCE: 402,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.ALREADY_MONITORED: 409,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.UPSTREAM_UNAVAILABLE: 503,
}

DESCRIPTION: Final[dict[ErrorCode, str]] = {
    ErrorCode.MISSING_API_KEY: "missing or unknown API key",
    ErrorCode.BAD_SIGNATURE: "bad signature",
    ErrorCode.BAD_TIMESTAMP: "timestamp missing or outside the 300 s window",
    ErrorCode.INVALID_PARAMETER: "invalid parameter",
    ErrorCode.INVALID_ADDRESS: "invalid TRON address",
    ErrorCode.ADDRESS_NOT_ACTIVATED: "address not activated",
    ErrorCode.ADDRESS_ALREADY_ACTIVATED: "address already activated",
    ErrorCode.INSUFFICIENT_BALANCE: "insufficient available balance",
    ErrorCode.NOT_FOUND: "not found",
    ErrorCode.ALREADY_MONITORED: "address already monitored",
    ErrorCode.RATE_LIMITED: "rate limited",
    ErrorCode.INTERNAL_ERROR: "internal error",
    ErrorCode.UPSTREAM_UNAVAILABLE: "chain or upstream temporarily unavailable",
}


def lookup(code: object) -> ErrorCode | None:
    """The known ErrorCode for ``code``, or None for a code this table lacks."""
    if isinstance(code, bool) or not isinstance(code, int):
        return None
    try:
        return ErrorCode(code)
    except ValueError:
        return None
