"""Strict request parsing for the sandbox: wrong types and values become 40010/40011.

The service ignores unknown fields but never coerces types: a string where a
number belongs is an error, and so is ``true`` where an integer belongs.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from decimal import Decimal
from typing import Any

from tronenergy_protocol.address import AddressError, decode_address
from tronenergy_protocol.codes import ErrorCode
from tronenergy_protocol.numbers import NumberError, is_ascii_digits, parse_decimal
from tronenergy_sandbox.errors import WorldError

MISSING: Any = object()
# No integer parameter means anything near this; checked before any conversion, so
# that a JSON number like 1e999999999 never becomes a billion-digit int.
INTEGER_LIMIT = 10**15


def invalid(message: str) -> WorldError:
    return WorldError(ErrorCode.INVALID_PARAMETER, message)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def json_object(body: bytes) -> dict[str, Any]:
    if not body.strip():
        raise invalid("request body must be a JSON object")
    try:
        value = json.loads(body, parse_float=Decimal, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise invalid(f"request body is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise invalid("request body must be a JSON object")
    return value


def address(value: Any, field: str) -> str:
    if value is MISSING or value is None:
        raise invalid(f"{field} is required")
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string")
    try:
        decode_address(value)
    except AddressError as exc:
        raise WorldError(ErrorCode.INVALID_ADDRESS, f"{field}: {exc}") from None
    return value


def optional_address(value: Any, field: str) -> str | None:
    if value is MISSING or value is None:
        return None
    return address(value, field)


def integer(value: Any, field: str, default: int | None = None) -> int:
    if value is MISSING or value is None:
        if default is None:
            raise invalid(f"{field} is required")
        return default
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise invalid(f"{field} must be an integer")
    magnitude = value.copy_abs() if isinstance(value, Decimal) else abs(value)
    if magnitude >= INTEGER_LIMIT:
        raise invalid(f"{field} is out of range")
    if isinstance(value, Decimal) and value != value.to_integral_value():
        raise invalid(f"{field} must be an integer")
    return int(value)


def rent_time(value: Any, allowed: Collection[Decimal], field: str = "rent_time") -> Decimal:
    if value is MISSING or value is None:
        return Decimal("1")
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise invalid(f"{field} must be a number")
    return _allowed_rent_time(Decimal(value), allowed, field)


def rent_time_query(value: str | None, allowed: Collection[Decimal]) -> Decimal:
    if value is None or value == "":
        return Decimal("1")
    try:  # an Arabic-Indic "1" is not 1: ASCII digits only
        number = parse_decimal(value, "rent_time")
    except NumberError:
        raise invalid("rent_time must be a number in ASCII digits") from None
    return _allowed_rent_time(number, allowed, "rent_time")


def _allowed_rent_time(number: Decimal, allowed: Collection[Decimal], field: str) -> Decimal:
    if not number.is_finite() or number not in allowed:
        choices = ", ".join(str(v) for v in sorted(allowed))
        raise invalid(f"{field} must be one of {choices}")
    return next(v for v in allowed if v == number)


def int_query(value: str | None, field: str, default: int, low: int, high: int | None) -> int:
    if value is None or value == "":
        return default
    if not is_ascii_digits(value) or len(value) > 9:
        raise invalid(f"{field} must be a whole number")
    number = int(value)
    if number < low or (high is not None and number > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise invalid(f"{field} must be {bounds}")
    return number


def string(value: Any, field: str, *, default: str | None = None, max_length: int = 256) -> str:
    if value is MISSING or value is None:
        if default is None:
            raise invalid(f"{field} is required")
        return default
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string")
    if len(value) > max_length:
        raise invalid(f"{field} must be at most {max_length} characters")
    if not _is_unicode(value):
        raise invalid(f"{field} must be valid Unicode text")
    return value


def _is_unicode(text: str) -> bool:
    """False for a lone surrogate (JSON allows "\\ud800"; UTF-8 and SQLite do not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def url(value: Any, field: str) -> str:
    text = string(value, field, max_length=2048)
    if not (text.startswith("http://") or text.startswith("https://")) or len(text) < 10:
        raise invalid(f"{field} must be an http(s) URL")
    return text


def tokens(value: Any) -> list[str]:
    if value is MISSING or value is None:
        return ["TRX"]
    if not isinstance(value, list) or not value:
        raise invalid("tokens must be a non-empty array of strings")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip() or len(item) > 20:
            raise invalid("tokens must be a non-empty array of strings")
        if not _is_unicode(item):
            raise invalid("tokens must be valid Unicode text")
        out.append(item.strip().upper())
    return out


def amount(value: Any, field: str = "amount") -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal, str)):
        raise invalid(f"{field} must be a decimal number or decimal string")
    try:  # text: plain decimal in ASCII digits, no exponent (other digits and "1e3" are refused)
        number = parse_decimal(value, field)
    except NumberError:
        raise invalid(f"{field} must be a decimal number in ASCII digits") from None
    limit = Decimal("1e15")
    if not number.is_finite() or not 0 < number < limit or number != round(number, 6):
        raise invalid(f"{field} must be positive, below 1e15, with at most 6 decimal places")
    return number


def field(body: dict[str, Any], name: str) -> Any:
    return body.get(name, MISSING)
